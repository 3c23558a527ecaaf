//! Merge, extract, split and page counting, on generated documents.

mod common;

use std::path::PathBuf;

use common::{TestPage, numbered_pdf, page_sizes, page_texts, write_pdf};
use drive_pdf::{PdfError, extract_pages, merge, page_count, split_every};
use lopdf::{Dictionary, Document, Object, dictionary};

fn widths(path: &std::path::Path) -> Vec<i64> {
    page_sizes(path)
        .into_iter()
        .map(|(w, _)| w.round() as i64)
        .collect()
}

#[test]
fn merge_keeps_every_page_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = vec![
        numbered_pdf(dir.path(), "a.pdf", 2, 100),
        numbered_pdf(dir.path(), "b.pdf", 3, 200),
        numbered_pdf(dir.path(), "c.pdf", 1, 300),
    ];
    let output = dir.path().join("merged.pdf");
    let mut reports = Vec::new();
    let pages = merge(&inputs, &output, &mut |p| reports.push(p)).unwrap();

    assert_eq!(pages, 6);
    assert_eq!(page_count(&output).unwrap(), 6);
    assert_eq!(widths(&output), [101, 102, 201, 202, 203, 301]);
    let texts = page_texts(&output);
    assert_eq!(texts[0], "a.pdf page 1");
    assert_eq!(texts[4], "b.pdf page 3");
    assert_eq!(texts[5], "c.pdf page 1");
    assert!(
        reports.windows(2).all(|w| w[0] <= w[1]),
        "progress goes forward: {reports:?}"
    );
    assert_eq!(reports.last(), Some(&1.0));
}

#[test]
fn merge_names_the_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let good = numbered_pdf(dir.path(), "good.pdf", 1, 100);
    let bad = dir.path().join("bad.pdf");
    std::fs::write(&bad, b"this is not a PDF at all").unwrap();
    let error = merge(&[good, bad], &dir.path().join("out.pdf"), &mut |_| {}).unwrap_err();
    assert!(error.is_client_error());
    assert!(
        error
            .to_string()
            .starts_with("file 2 of 2: the PDF could not be read"),
        "{error}"
    );
}

#[test]
fn merge_of_nothing_is_a_client_error() {
    let dir = tempfile::tempdir().unwrap();
    let error = merge(&[], &dir.path().join("out.pdf"), &mut |_| {}).unwrap_err();
    assert!(matches!(error, PdfError::BadInput(_)), "{error:?}");
}

#[test]
fn extract_takes_the_named_pages_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let input = numbered_pdf(dir.path(), "ten.pdf", 10, 100);
    let output = dir.path().join("out.pdf");

    let written = extract_pages(&input, &common::ranges("1-3,7"), &output).unwrap();
    assert_eq!(written, 4);
    assert_eq!(widths(&output), [101, 102, 103, 107]);
    assert_eq!(page_texts(&output)[3], "ten.pdf page 7");

    let written = extract_pages(&input, &common::ranges("2,1"), &output).unwrap();
    assert_eq!(written, 2);
    assert_eq!(widths(&output), [102, 101]);

    // A repeated page appears twice.
    extract_pages(&input, &common::ranges("5,5-"), &output).unwrap();
    assert_eq!(widths(&output), [105, 105, 106, 107, 108, 109, 110]);
}

#[test]
fn extract_leaves_the_other_pages_behind() {
    let dir = tempfile::tempdir().unwrap();
    // Big, distinct content on each page: the output must not carry the pages not taken.
    let path = dir.path().join("heavy.pdf");
    let pages = (0..10)
        .map(|i| {
            let mut page = TestPage::text(300, 300, &"x".repeat(1000));
            let filler = common::noise(50_000, i);
            page.operations.push(lopdf::content::Operation::new(
                "Tj",
                vec![Object::string_literal(filler)],
            ));
            page
        })
        .collect();
    write_pdf(&path, pages, |_| Dictionary::new());
    let output = dir.path().join("one.pdf");
    extract_pages(&path, &common::ranges("4"), &output).unwrap();
    let (input_size, output_size) = (
        std::fs::metadata(&path).unwrap().len(),
        std::fs::metadata(&output).unwrap().len(),
    );
    assert!(
        output_size < input_size / 5,
        "{output_size} bytes out of {input_size}"
    );
}

#[test]
fn extract_beyond_the_last_page_is_a_client_error() {
    let dir = tempfile::tempdir().unwrap();
    let input = numbered_pdf(dir.path(), "three.pdf", 3, 100);
    let error = extract_pages(&input, &common::ranges("2-4"), &dir.path().join("o.pdf")).unwrap_err();
    assert!(
        matches!(error, PdfError::NoSuchPage { page: 4, count: 3 }),
        "{error:?}"
    );
    assert!(error.is_client_error());
}

#[test]
fn extract_carries_attributes_inherited_from_the_page_tree() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("inherited.pdf");
    let mut doc = common::build(
        vec![TestPage::text(100, 100, "one"), TestPage::text(100, 100, "two")],
        |_| Dictionary::new(),
    );
    // Move the media box and rotation up to the page tree.
    let tree = doc
        .catalog()
        .unwrap()
        .get(b"Pages")
        .unwrap()
        .as_reference()
        .unwrap();
    for page in doc.page_iter().collect::<Vec<_>>() {
        doc.get_dictionary_mut(page).unwrap().remove(b"MediaBox");
    }
    let tree_dict = doc.get_dictionary_mut(tree).unwrap();
    tree_dict.set("MediaBox", vec![0.into(), 0.into(), 333.into(), 444.into()]);
    tree_dict.set("Rotate", 90);
    doc.save(&input).unwrap();

    let output = dir.path().join("out.pdf");
    extract_pages(&input, &common::ranges("2"), &output).unwrap();
    assert_eq!(page_sizes(&output), [(333.0, 444.0)]);
    let out = Document::load(&output).unwrap();
    let page = out.get_dictionary(out.page_iter().next().unwrap()).unwrap();
    assert_eq!(page.get(b"Rotate").unwrap().as_i64().unwrap(), 90);
    assert_eq!(page_texts(&output), ["two"]);
}

#[test]
fn split_makes_parts_of_the_given_size() {
    let dir = tempfile::tempdir().unwrap();
    let input = numbered_pdf(dir.path(), "ten.pdf", 10, 100);
    let out_dir = dir.path().join("parts");
    std::fs::create_dir(&out_dir).unwrap();
    let mut reports = Vec::new();
    let parts = split_every(&input, 3, &out_dir, "report", &mut |p| reports.push(p)).unwrap();

    let names: Vec<PathBuf> = (1..=4)
        .map(|n| out_dir.join(format!("report part {n}.pdf")))
        .collect();
    assert_eq!(parts, names);
    let counts: Vec<u32> = parts.iter().map(|p| page_count(p).unwrap()).collect();
    assert_eq!(counts, [3, 3, 3, 1]);
    assert_eq!(widths(&parts[1]), [104, 105, 106]);
    assert_eq!(widths(&parts[3]), [110]);
    assert_eq!(reports.len(), 4);
    assert_eq!(reports.last(), Some(&1.0));
}

#[test]
fn split_into_parts_of_zero_pages_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let input = numbered_pdf(dir.path(), "two.pdf", 2, 100);
    let error = split_every(&input, 0, dir.path(), "x", &mut |_| {}).unwrap_err();
    assert!(matches!(error, PdfError::BadInput(_)), "{error:?}");
}

#[test]
fn garbage_is_a_client_error_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.pdf");
    let empty = dir.path().join("empty.pdf");
    std::fs::write(&empty, b"").unwrap();
    let random = dir.path().join("random.pdf");
    std::fs::write(&random, common::noise(20_000, 1)).unwrap();
    // A header and then garbage.
    let headed = dir.path().join("headed.pdf");
    let mut bytes = b"%PDF-1.7\n".to_vec();
    bytes.extend(common::noise(20_000, 2));
    std::fs::write(&headed, bytes).unwrap();

    for input in [&empty, &random, &headed] {
        let errors = [
            page_count(input).unwrap_err(),
            extract_pages(input, &common::ranges("1"), &out).unwrap_err(),
            split_every(input, 1, dir.path(), "x", &mut |_| {}).unwrap_err(),
            merge(std::slice::from_ref(input), &out, &mut |_| {}).unwrap_err(),
        ];
        for error in errors {
            assert!(error.is_client_error(), "{input:?}: {error:?}");
            assert!(
                error.to_string().contains("the PDF could not be read"),
                "{input:?}: {error}"
            );
        }
    }
}

#[test]
fn truncated_files_fail_cleanly_or_keep_what_survives() {
    let dir = tempfile::tempdir().unwrap();
    let input = numbered_pdf(dir.path(), "ten.pdf", 10, 100);
    let bytes = std::fs::read(&input).unwrap();
    let cut = dir.path().join("cut.pdf");
    for keep in [10, 100, bytes.len() / 3, bytes.len() / 2, bytes.len() - 30] {
        std::fs::write(&cut, &bytes[..keep]).unwrap();
        // lopdf rebuilds what it can of a damaged file; whatever it can't is a client error.
        match page_count(&cut) {
            Ok(pages) => assert!((1..=10).contains(&pages), "{keep} bytes: {pages} pages"),
            Err(error) => assert!(error.is_client_error(), "{keep} bytes: {error:?}"),
        }
    }
    // So little that nothing can survive.
    std::fs::write(&cut, &bytes[..100]).unwrap();
    assert!(page_count(&cut).unwrap_err().is_client_error());
}

#[test]
fn a_looping_page_tree_is_a_client_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("loop.pdf");
    let mut doc = Document::with_version("1.5");
    let tree = doc.new_object_id();
    doc.objects.insert(
        tree,
        Object::Dictionary(
            dictionary! { "Type" => "Pages", "Kids" => vec![Object::Reference(tree)], "Count" => 1 },
        ),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => tree });
    doc.trailer.set("Root", catalog);
    doc.save(&path).unwrap();
    let error = page_count(&path).unwrap_err();
    assert!(error.is_client_error(), "{error:?}");
}

#[test]
fn a_missing_file_is_a_server_error() {
    let dir = tempfile::tempdir().unwrap();
    let error = page_count(&dir.path().join("nowhere.pdf")).unwrap_err();
    assert!(matches!(error, PdfError::Io(_)), "{error:?}");
    assert!(!error.is_client_error());
}

#[test]
fn a_password_protected_pdf_is_refused_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let input = numbered_pdf(dir.path(), "secret.pdf", 2, 100);
    common::encrypt(&input, "secret");
    let error = page_count(&input).unwrap_err();
    assert!(matches!(error, PdfError::Encrypted), "{error:?}");
    assert!(error.is_client_error());
    let error = merge(&[input], &dir.path().join("o.pdf"), &mut |_| {}).unwrap_err();
    assert!(error.to_string().contains("password"), "{error}");
}

#[test]
fn a_pdf_with_only_an_owner_password_opens() {
    let dir = tempfile::tempdir().unwrap();
    let input = numbered_pdf(dir.path(), "restricted.pdf", 3, 100);
    common::encrypt(&input, "");
    assert_eq!(page_count(&input).unwrap(), 3);
    let output = dir.path().join("out.pdf");
    extract_pages(&input, &common::ranges("3"), &output).unwrap();
    assert_eq!(widths(&output), [103]);
    assert_eq!(page_texts(&output), ["restricted.pdf page 3"]);
}

#[test]
fn extract_keeps_named_destinations_but_not_attachments() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("named.pdf");
    let mut doc = common::build(
        (1..=3)
            .map(|i| TestPage::text(100 + i, 100, &format!("p{i}")))
            .collect(),
        |_| Dictionary::new(),
    );
    let pages: Vec<_> = doc.page_iter().collect();
    let attachment = doc.add_object(lopdf::Stream::new(
        dictionary! { "Type" => "EmbeddedFile" },
        common::noise(200_000, 5),
    ));
    let spec = doc.add_object(dictionary! { "Type" => "Filespec", "F" => Object::string_literal("big.bin"), "EF" => dictionary! { "F" => attachment } });
    let names = dictionary! {
        "Dests" => dictionary! { "Names" => vec![
            Object::string_literal("first"), vec![Object::Reference(pages[0]), "Fit".into()].into(),
            Object::string_literal("third"), vec![Object::Reference(pages[2]), "Fit".into()].into(),
        ] },
        "EmbeddedFiles" => dictionary! { "Names" => vec![Object::string_literal("big.bin"), Object::Reference(spec)] },
    };
    doc.catalog_mut().unwrap().set("Names", names);
    doc.save(&input).unwrap();

    let output = dir.path().join("out.pdf");
    extract_pages(&input, &common::ranges("3"), &output).unwrap();
    assert!(
        std::fs::metadata(&output).unwrap().len() < 50_000,
        "the attachment stayed behind"
    );
    let out = Document::load(&output).unwrap();
    let page = out.page_iter().next().unwrap();
    let names = out
        .catalog()
        .unwrap()
        .get_deref(b"Names", &out)
        .unwrap()
        .as_dict()
        .unwrap();
    assert!(!names.has(b"EmbeddedFiles"));
    let tree = names.get_deref(b"Dests", &out).unwrap().as_dict().unwrap();
    let entries = tree.get(b"Names").unwrap().as_array().unwrap();
    // "first" points at a page left behind, "third" at the page taken.
    assert_eq!(entries[1].as_array().unwrap()[0], Object::Null);
    assert_eq!(entries[3].as_array().unwrap()[0], Object::Reference(page));
}
