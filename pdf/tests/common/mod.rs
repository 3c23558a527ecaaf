//! Builders for test inputs, and readers for checking outputs. Every input is made here, in code.

#![allow(dead_code)] // Each test file uses its own share of these.

use std::path::{Path, PathBuf};

use lopdf::content::{Content, Operation};
use lopdf::{Dictionary, Document, Object, ObjectId, Stream, dictionary};

/// A page of a test document: its size in points and what its content stream holds.
pub struct TestPage {
    pub width: i64,
    pub height: i64,
    pub operations: Vec<Operation>,
}

impl TestPage {
    /// A page saying `text` in Helvetica.
    pub fn text(width: i64, height: i64, text: &str) -> TestPage {
        TestPage {
            width,
            height,
            operations: vec![
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 24.into()]),
                Operation::new("Td", vec![20.into(), 20.into()]),
                Operation::new("Tj", vec![Object::string_literal(text)]),
                Operation::new("ET", vec![]),
            ],
        }
    }
}

/// Saves a document of the given pages, all sharing one resource dictionary with a Helvetica
/// font (F1) and the XObjects that `xobjects` adds to the document, written as lopdf writes by
/// default (classic cross-reference table).
pub fn write_pdf(path: &Path, pages: Vec<TestPage>, xobjects: impl FnOnce(&mut Document) -> Dictionary) {
    let mut doc = build(pages, xobjects);
    doc.save(path).expect("save test PDF");
}

pub fn build(pages: Vec<TestPage>, xobjects: impl FnOnce(&mut Document) -> Dictionary) -> Document {
    let mut doc = Document::with_version("1.5");
    let xobjects = xobjects(&mut doc);
    let tree_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
    });
    let resources_id = doc.add_object(dictionary! {
        "Font" => dictionary! { "F1" => font_id },
        "XObject" => xobjects,
    });
    let mut kids = Vec::new();
    for page in pages {
        let content = Content {
            operations: page.operations,
        }
        .encode()
        .expect("encode content");
        let content_id = doc.add_object(Stream::new(dictionary! {}, content));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => tree_id,
            "Contents" => content_id,
            "Resources" => resources_id,
            "MediaBox" => vec![0.into(), 0.into(), page.width.into(), page.height.into()],
        });
        kids.push(Object::Reference(page_id));
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        tree_id,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => count }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => tree_id });
    doc.trailer.set("Root", catalog_id);
    doc
}

/// A text PDF whose page `i` (from 1) is `base + i` points wide and `1000 - i` high, so that
/// each page can be recognised by its size, and says "<label> page i".
pub fn numbered_pdf(dir: &Path, name: &str, pages: u32, base: i64) -> PathBuf {
    let path = dir.join(name);
    let pages = (1..=pages)
        .map(|i| {
            TestPage::text(
                base + i64::from(i),
                1000 - i64::from(i),
                &format!("{name} page {i}"),
            )
        })
        .collect();
    write_pdf(&path, pages, |_| Dictionary::new());
    path
}

/// The (width, height) of each page of the PDF at `path`, inherited media boxes included.
pub fn page_sizes(path: &Path) -> Vec<(f32, f32)> {
    let doc = Document::load(path).expect("output loads with lopdf");
    doc.page_iter().map(|id| media_box(&doc, id)).collect()
}

fn media_box(doc: &Document, page: ObjectId) -> (f32, f32) {
    let mut node = doc.get_dictionary(page).expect("page dictionary");
    loop {
        if let Ok(bounds) = node.get_deref(b"MediaBox", doc).and_then(Object::as_array) {
            let v: Vec<f32> = bounds.iter().map(|o| o.as_float().expect("number")).collect();
            return (v[2] - v[0], v[3] - v[1]);
        }
        let parent = node
            .get(b"Parent")
            .and_then(Object::as_reference)
            .expect("media box somewhere");
        node = doc.get_dictionary(parent).expect("parent");
    }
}

/// The text of each page, as lopdf extracts it.
pub fn page_texts(path: &Path) -> Vec<String> {
    let doc = Document::load(path).expect("output loads with lopdf");
    (1..=doc.get_pages().len() as u32)
        .map(|n| doc.extract_text(&[n]).expect("text extracts").trim().to_string())
        .collect()
}

/// Deterministic pseudo-random bytes.
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as u8
        })
        .collect()
}

/// An RGB photo-like picture: smooth gradients with a little noise, which compresses well as
/// JPEG but not to nothing.
pub fn photo_pixels(width: u32, height: u32) -> Vec<u8> {
    let grain = noise((width * height) as usize, 7);
    let mut pixels = Vec::with_capacity((width * height * 3) as usize);
    for y in 0..height {
        for x in 0..width {
            let g = i32::from(grain[(y * width + x) as usize] % 16) - 8;
            let r = (x * 255 / width) as i32 + g;
            let gr = (y * 255 / height) as i32 + g;
            let b = ((x + y) * 255 / (width + height)) as i32 + g;
            pixels.extend([r, gr, b].map(|v| v.clamp(0, 255) as u8));
        }
    }
    pixels
}

pub fn jpeg(pixels: &[u8], width: u16, height: u16, color: jpeg_encoder::ColorType, quality: u8) -> Vec<u8> {
    let mut out = Vec::new();
    jpeg_encoder::Encoder::new(&mut out, quality)
        .encode(pixels, width, height, color)
        .expect("encode JPEG");
    out
}

/// Operations drawing XObject `name` into the box (x, y, w, h).
pub fn draw(name: &str, x: f32, y: f32, w: f32, h: f32) -> Vec<Operation> {
    vec![
        Operation::new("q", vec![]),
        Operation::new(
            "cm",
            vec![w.into(), 0.into(), 0.into(), h.into(), x.into(), y.into()],
        ),
        Operation::new("Do", vec![Object::Name(name.as_bytes().to_vec())]),
        Operation::new("Q", vec![]),
    ]
}

/// Encrypts the PDF at `path` in place (RC4, 128 bits) with the given user password; an empty
/// one makes a file that opens without a password but restricts what may be done with it.
pub fn encrypt(path: &Path, user_password: &str) {
    use lopdf::{EncryptionState, EncryptionVersion, Permissions};
    let mut doc = Document::load(path).unwrap();
    doc.trailer.set(
        "ID",
        vec![Object::string_literal(b"0123456789abcdef".to_vec()); 2],
    );
    let version = EncryptionVersion::V2 {
        document: &doc,
        owner_password: "owner",
        user_password,
        key_length: 128,
        permissions: Permissions::PRINTABLE,
    };
    let state = EncryptionState::try_from(version).unwrap();
    doc.encrypt(&state).unwrap();
    doc.save(path).unwrap();
}

/// A page list as the API hands it over: parsed by `drive_domain::job::parse_page_list`.
pub fn ranges(list: &str) -> drive_pdf::PageRanges {
    drive_pdf::PageRanges::from_spans(&drive_domain::job::parse_page_list(list).expect("valid list"))
}
