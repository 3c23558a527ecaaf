//! Rendering pages with hayro.

mod common;

use common::{TestPage, numbered_pdf, write_pdf};
use drive_pdf::{PageRanges, PdfError, merge, render_pages, render_pages_then};
use image::RgbaImage;
use lopdf::Dictionary;
use lopdf::content::Operation;

/// A Letter page (612 × 792 pt) with a black square from (100, 100) to (200, 200).
fn square_pdf(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("square.pdf");
    let square = vec![
        Operation::new("g", vec![0.into()]),
        Operation::new("re", vec![100.into(), 100.into(), 100.into(), 100.into()]),
        Operation::new("f", vec![]),
    ];
    write_pdf(
        &path,
        vec![TestPage {
            width: 612,
            height: 792,
            operations: square,
        }],
        |_| Dictionary::new(),
    );
    path
}

fn render_all(path: &std::path::Path, dpi: u32, pages: Option<&PageRanges>) -> Vec<(u32, RgbaImage)> {
    let mut out = Vec::new();
    render_pages(path, dpi, pages, &mut |n, image| {
        out.push((n, image));
        Ok(())
    })
    .unwrap();
    out
}

fn luma(image: &RgbaImage, x: u32, y: u32) -> u32 {
    let p = image.get_pixel(x, y).0;
    (u32::from(p[0]) + u32::from(p[1]) + u32::from(p[2])) / 3
}

#[test]
fn pixel_size_follows_the_media_box_and_dpi() {
    let dir = tempfile::tempdir().unwrap();
    let path = square_pdf(dir.path());
    let at_72 = render_all(&path, 72, None);
    assert_eq!(at_72.len(), 1);
    assert_eq!(at_72[0].0, 1);
    assert_eq!(at_72[0].1.dimensions(), (612, 792));
    let at_144 = render_all(&path, 144, None);
    assert_eq!(at_144[0].1.dimensions(), (1224, 1584));
}

#[test]
fn a_filled_rectangle_renders_dark_where_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let path = square_pdf(dir.path());
    let pages = render_all(&path, 72, None);
    let image = &pages[0].1;
    // PDF's y axis points up: the square spans rows 792-200 to 792-100.
    assert!(
        luma(image, 150, 642) < 20,
        "inside the square: {:?}",
        image.get_pixel(150, 642)
    );
    assert!(
        luma(image, 400, 300) > 235,
        "outside: {:?}",
        image.get_pixel(400, 300)
    );
    assert!(
        luma(image, 150, 150) > 235,
        "mirrored place: {:?}",
        image.get_pixel(150, 150)
    );
    assert_eq!(image.get_pixel(400, 300).0[3], 255, "opaque background");
}

#[test]
fn chosen_pages_render_in_the_order_chosen() {
    let dir = tempfile::tempdir().unwrap();
    let path = numbered_pdf(dir.path(), "five.pdf", 5, 100);
    let pages = render_all(&path, 36, Some(&common::ranges("4,2")));
    let numbers: Vec<u32> = pages.iter().map(|(n, _)| *n).collect();
    assert_eq!(numbers, [4, 2]);
    // Page 4 is 104 pt wide: 52 px at 36 dpi.
    assert_eq!(pages[0].1.width(), 52);
    assert_eq!(pages[1].1.width(), 51);
}

#[test]
fn each_page_is_finished_on_a_rendering_thread_and_handed_over_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = numbered_pdf(dir.path(), "nine.pdf", 9, 100);
    let caller = std::thread::current().id();
    let finish = |number: u32, pixels: RgbaImage| Ok((number, pixels.width(), std::thread::current().id()));
    let mut handed = Vec::new();
    let count = render_pages_then(
        &path,
        36,
        Some(&common::ranges("9,1-7")),
        &finish,
        &mut |n, made| {
            handed.push((n, made));
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(count, 8);
    let numbers: Vec<u32> = handed.iter().map(|(n, _)| *n).collect();
    assert_eq!(numbers, [9, 1, 2, 3, 4, 5, 6, 7]);
    for (n, (finished, width, _)) in &handed {
        assert_eq!(finished, n, "each page's finish is handed over with it");
        // Page n is 100 + n pt wide: half that in pixels at 36 dpi.
        assert_eq!(*width, (100 + n) / 2, "page {n}");
    }
    let threads: std::collections::HashSet<_> = handed.iter().map(|(_, (_, _, thread))| *thread).collect();
    assert_eq!(threads.len(), 2, "both renderers finish pages");
    assert!(
        !threads.contains(&caller),
        "no page is finished on the caller's thread"
    );

    // An error from the finish stops the rendering and is answered as is.
    let failing = |number: u32, _: RgbaImage| match number {
        3 => Err(PdfError::Write("encoder failed".into())),
        n => Ok(n),
    };
    let mut taken = Vec::new();
    let error = render_pages_then(&path, 36, None, &failing, &mut |n, _| {
        taken.push(n);
        Ok(())
    })
    .unwrap_err();
    assert!(
        matches!(error, PdfError::Write(ref why) if why == "encoder failed"),
        "{error:?}"
    );
    assert_eq!(taken, [1, 2]);
}

#[test]
fn pages_beyond_the_end_are_refused_before_rendering() {
    let dir = tempfile::tempdir().unwrap();
    let path = numbered_pdf(dir.path(), "two.pdf", 2, 100);
    let mut rendered = 0;
    let error = render_pages(&path, 72, Some(&common::ranges("1,3")), &mut |_, _| {
        rendered += 1;
        Ok(())
    })
    .unwrap_err();
    assert!(
        matches!(error, PdfError::NoSuchPage { page: 3, count: 2 }),
        "{error:?}"
    );
    assert_eq!(rendered, 0);
}

#[test]
fn too_many_pixels_is_a_client_error_naming_the_dpi() {
    let dir = tempfile::tempdir().unwrap();
    let path = square_pdf(dir.path());
    let error = render_pages(&path, 2000, None, &mut |_, _| Ok(())).unwrap_err();
    assert!(error.is_client_error());
    assert!(error.to_string().contains("2000 dpi"), "{error}");
    let error = render_pages(&path, 0, None, &mut |_, _| Ok(())).unwrap_err();
    assert!(matches!(error, PdfError::BadInput(_)), "{error:?}");
}

#[test]
fn an_error_from_the_callback_stops_rendering() {
    let dir = tempfile::tempdir().unwrap();
    let path = numbered_pdf(dir.path(), "three.pdf", 3, 100);
    let mut calls = 0;
    let error = render_pages(&path, 36, None, &mut |_, _| {
        calls += 1;
        Err(PdfError::Write("disk full".into()))
    })
    .unwrap_err();
    assert!(matches!(error, PdfError::Write(_)), "{error:?}");
    assert_eq!(calls, 1);
}

#[test]
fn garbage_is_a_client_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("random.pdf");
    std::fs::write(&path, common::noise(10_000, 3)).unwrap();
    let error = render_pages(&path, 72, None, &mut |_, _| Ok(())).unwrap_err();
    assert!(error.is_client_error(), "{error:?}");
}

#[test]
fn merged_output_renders() {
    // What the lopdf side writes (object streams, a cross-reference stream) must read back in
    // the renderer too.
    let dir = tempfile::tempdir().unwrap();
    let inputs = vec![
        square_pdf(dir.path()),
        numbered_pdf(dir.path(), "two.pdf", 2, 300),
    ];
    let merged = dir.path().join("merged.pdf");
    merge(&inputs, &merged, &mut |_| {}).unwrap();
    let pages = render_all(&merged, 72, None);
    let sizes: Vec<(u32, u32)> = pages.iter().map(|(_, image)| image.dimensions()).collect();
    assert_eq!(sizes, [(612, 792), (301, 999), (302, 998)]);
    assert!(luma(&pages[0].1, 150, 642) < 20);
    // The text of the other pages shows: some dark pixels near the bottom left.
    let dark = pages[1].1.pixels().filter(|p| p.0[0] < 100).count();
    assert!(dark > 50, "{dark} dark pixels");
}

#[test]
fn only_pdfs_that_need_a_password_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let locked = numbered_pdf(dir.path(), "locked.pdf", 2, 100);
    common::encrypt(&locked, "secret");
    let error = render_pages(&locked, 72, None, &mut |_, _| Ok(())).unwrap_err();
    assert!(matches!(error, PdfError::Encrypted), "{error:?}");

    let restricted = numbered_pdf(dir.path(), "restricted.pdf", 2, 100);
    common::encrypt(&restricted, "");
    let pages = render_all(&restricted, 72, None);
    assert_eq!(pages.len(), 2);
    let dark = pages[0].1.pixels().filter(|p| p.0[0] < 100).count();
    assert!(dark > 50, "the text shows once decrypted: {dark} dark pixels");
}
