//! Picture and PDF jobs end to end: convert, watermark, stripMetadata, makePdf, mergePdf,
//! splitPdf, extractPages, compressPdf and pdfToImages run by a real worker on inputs made here,
//! their results read back and checked (HEIC, AVIF and camera RAW inputs too); damaged inputs;
//! and every setting's 400.

use std::io::Cursor;

use drive_core::id::FileId;
use drive_tests::media::{Page, dng, heif, pdf};
use drive_tests::*;
use image::codecs::jpeg::JpegEncoder;
use image::{DynamicImage, ImageFormat, Rgb, RgbImage};
use lopdf::content::Operation;
use lopdf::{Dictionary, Document, Object, ObjectId, Stream, dictionary};
use serde_json::{Value, json};

// ---- inputs ----

/// An RGB picture whose red grows left to right and green top to bottom.
fn gradient(width: u32, height: u32) -> RgbImage {
    RgbImage::from_fn(width, height, |x, y| {
        Rgb([(x * 255 / width) as u8, (y * 255 / height) as u8, 128])
    })
}

fn png(picture: &RgbImage) -> Vec<u8> {
    let mut out = Vec::new();
    DynamicImage::ImageRgb8(picture.clone())
        .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
        .expect("encode PNG");
    out
}

fn jpeg(picture: &RgbImage, quality: u8) -> Vec<u8> {
    let mut out = Vec::new();
    JpegEncoder::new_with_quality(&mut out, quality)
        .encode_image(picture)
        .expect("encode JPEG");
    out
}

/// A PDF of `count` pages whose page `i` (from 1) is `base + i` points wide, so each page can
/// be told by its width, and says "page i".
fn numbered_pdf(count: i64, base: i64) -> Vec<u8> {
    let pages = (1..=count)
        .map(|i| Page {
            width: base + i,
            height: 1000 - i,
            operations: vec![
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 24.into()]),
                Operation::new("Td", vec![20.into(), 20.into()]),
                Operation::new("Tj", vec![Object::string_literal(format!("page {i}"))]),
                Operation::new("ET", vec![]),
            ],
        })
        .collect();
    pdf(pages, |_| Dictionary::new())
}

/// Operations filling the rectangle (x, y, w, h) in black.
fn black_rectangle(x: i64, y: i64, w: i64, h: i64) -> Vec<Operation> {
    vec![
        Operation::new("rg", vec![0.into(), 0.into(), 0.into()]),
        Operation::new("re", vec![x.into(), y.into(), w.into(), h.into()]),
        Operation::new("f", vec![]),
    ]
}

// ---- reading results ----

fn load_pdf(bytes: &[u8]) -> Document {
    Document::load_mem(bytes).expect("the result loads as a PDF")
}

/// Each page's (width, height) in points, media boxes inherited from the page tree included.
fn page_sizes(bytes: &[u8]) -> Vec<(f32, f32)> {
    let doc = load_pdf(bytes);
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
            .expect("a media box");
        node = doc.get_dictionary(parent).expect("parent");
    }
}

fn page_widths(bytes: &[u8]) -> Vec<i64> {
    page_sizes(bytes)
        .into_iter()
        .map(|(w, _)| w.round() as i64)
        .collect()
}

fn near(actual: (f32, f32), expected: (f32, f32)) -> bool {
    (actual.0 - expected.0).abs() <= 1.0 && (actual.1 - expected.1).abs() <= 1.0
}

/// The marker codes of a JPEG's segments before its first scan.
fn jpeg_markers(bytes: &[u8]) -> Vec<u8> {
    assert_eq!(&bytes[..2], [0xFF, 0xD8], "not a JPEG");
    let mut markers = Vec::new();
    let mut at = 2;
    while at + 4 <= bytes.len() && bytes[at] == 0xFF {
        let marker = bytes[at + 1];
        markers.push(marker);
        if marker == 0xDA {
            break;
        }
        at += 2 + usize::from(u16::from_be_bytes([bytes[at + 2], bytes[at + 3]]));
    }
    markers
}

/// Where a JPEG's first scan (SOS) starts.
fn scan_start(bytes: &[u8]) -> usize {
    let mut at = 2;
    while bytes[at + 1] != 0xDA {
        at += 2 + usize::from(u16::from_be_bytes([bytes[at + 2], bytes[at + 3]]));
    }
    at
}

fn decode(bytes: &[u8], format: ImageFormat) -> RgbImage {
    assert_eq!(image::guess_format(bytes).ok(), Some(format), "not a {format:?}");
    image::load_from_memory_with_format(bytes, format)
        .expect("the result decodes")
        .into_rgb8()
}

fn is_webp(bytes: &[u8]) -> bool {
    bytes.len() > 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP"
}

/// Uploads a picture with the MIME type its name says.
async fn picture(app: &TestApp, user: &TestUser, name: &str, bytes: Vec<u8>) -> FileId {
    let mime = match name.rsplit('.').next() {
        Some("png") => "image/png",
        Some("webp") => "image/webp",
        _ => "image/jpeg",
    };
    app.upload(user, name, "Image", mime, bytes).await
}

async fn pdf_file(app: &TestApp, user: &TestUser, name: &str, bytes: Vec<u8>) -> FileId {
    app.upload(user, name, "Pdf", "application/pdf", bytes).await
}

async fn with_worker() -> (TestApp, TestUser) {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    (app, user)
}

// ---- pictures ----

#[tokio::test]
async fn convert_writes_the_format_and_size_asked_beside_the_picture() {
    let (app, user) = with_worker().await;

    // PNG to JPEG, the longer edge 100: 400x300 becomes 100x75.
    let sunset = picture(&app, &user, "sunset.png", png(&gradient(400, 300))).await;
    let job = app
        .run_job(
            &user,
            json!({ "jobType": "convert", "fileIds": [sunset], "options": { "format": "jpg", "maxEdge": 100 } }),
        )
        .await;
    assert_done(&job);
    assert_eq!(names(&job), ["sunset.jpg"]);
    let file = &job["files"][0];
    assert_eq!(
        (file["mimeType"].clone(), file["type"].clone()),
        (json!("image/jpeg"), json!("Image"))
    );
    assert_eq!(job["options"], json!({ "format": "jpg", "maxEdge": 100 }));
    assert_eq!(
        job["folder"],
        Value::Null,
        "beside the picture, at the top: {job}"
    );
    let result = &job["result"]["files"][0];
    assert_eq!(result["fileId"], file["id"], "{job}");
    assert_eq!(result["from"], json!(sunset), "{job}");
    assert_eq!(
        (result["width"].clone(), result["height"].clone()),
        (json!(100), json!(75))
    );
    let bytes = app.download(&user, file["id"].as_str().unwrap()).await;
    assert_eq!(file["fileSize"], json!(bytes.len()));
    let small = decode(&bytes, ImageFormat::Jpeg);
    assert_eq!(small.dimensions(), (100, 75));
    // Still the same picture: red grows to the right, green downwards.
    let (left, right, bottom) = (
        small.get_pixel(5, 37),
        small.get_pixel(94, 37),
        small.get_pixel(5, 70),
    );
    assert!(left[0] + 100 < right[0], "{left:?} {right:?}");
    assert!(left[1] + 100 < bottom[1], "{left:?} {bottom:?}");

    // JPEG to WebP without maxEdge keeps the size.
    let photo = picture(&app, &user, "photo.jpg", jpeg(&gradient(400, 300), 90)).await;
    let job = app
        .run_job(
            &user,
            json!({ "jobType": "convert", "fileIds": [photo], "options": { "format": "webp" } }),
        )
        .await;
    assert_done(&job);
    assert_eq!(names(&job), ["photo.webp"]);
    assert_eq!(job["files"][0]["mimeType"], "image/webp");
    let bytes = app.download(&user, &made(&job)[0].0).await;
    assert!(is_webp(&bytes), "not a WebP: {:?}", &bytes[..bytes.len().min(16)]);
    assert_eq!(decode(&bytes, ImageFormat::WebP).dimensions(), (400, 300));

    // A picture in a folder: the result lands in that folder, under a name the input does not
    // already have.
    let inside = picture(&app, &user, "inside.png", png(&gradient(64, 48))).await;
    let moved = app
        .call(
            &user,
            "/move-files",
            Some(json!({ "fileIds": [inside], "folder": "/pics" })),
        )
        .await;
    assert_eq!(moved.status, 200, "{}", moved.body);
    let queued = app
        .create_job(
            &user,
            json!({ "jobType": "convert", "fileIds": [inside], "options": { "format": "png" } }),
        )
        .await;
    assert_eq!(queued["folder"]["path"], "/pics/", "{queued}");
    let job = app.wait_job(&user, &queued["id"]).await;
    assert_done(&job);
    assert_eq!(job["folder"]["path"], "/pics/", "{job}");
    assert_eq!(names(&job), ["inside (2).png"]);
    let result: FileId = made(&job)[0].0.parse().unwrap();
    let folder: Option<String> = sqlx::query_scalar(
        "select d.path from files f left join folders d on d.id = f.folder_id where f.id = $1",
    )
    .bind(result)
    .fetch_one(&mut app.db().await)
    .await
    .unwrap();
    assert_eq!(folder.as_deref(), Some("/pics"));
    let bytes = app.download(&user, &result.to_string()).await;
    assert_eq!(
        decode(&bytes, ImageFormat::Png),
        gradient(64, 48),
        "PNG to PNG loses nothing"
    );
}

/// Whether `picture` still shows [`gradient`] turned as the arrows say: red grows towards
/// `red` and green towards `green`, each by more than 100 from one side to the other.
fn shows_gradient(picture: &RgbImage, red: (i64, i64), green: (i64, i64)) -> bool {
    let (w, h) = (i64::from(picture.width()), i64::from(picture.height()));
    let at = |x: i64, y: i64| picture.get_pixel(x as u32, y as u32).0;
    // From a tenth of the way in on one side to the other, through the middle.
    let across = |(dx, dy): (i64, i64), channel: usize| {
        let (x0, y0) = (w / 2 - dx * (w * 4 / 10), h / 2 - dy * (h * 4 / 10));
        let (x1, y1) = (w / 2 + dx * (w * 4 / 10), h / 2 + dy * (h * 4 / 10));
        i32::from(at(x1, y1)[channel]) - i32::from(at(x0, y0)[channel]) > 100
    };
    across(red, 0) && across(green, 1)
}

#[tokio::test]
async fn convert_reads_heic_avif_and_camera_raw_pictures_as_read_file_does() {
    let (app, user) = with_worker().await;
    let source = png(&gradient(400, 300));

    // HEIC and AVIF (libheif) to PNG, at their own size.
    for (name, mime, avif) in [
        ("phone.heic", "image/heic", false),
        ("web.avif", "image/avif", true),
    ] {
        let id = app.upload(&user, name, "Image", mime, heif(&source, avif)).await;
        let job = app
            .run_job(
                &user,
                json!({ "jobType": "convert", "fileIds": [id], "options": { "format": "png" } }),
            )
            .await;
        assert_done(&job);
        let stem = name.split('.').next().unwrap();
        assert_eq!(names(&job), [format!("{stem}.png")]);
        let result = &job["result"]["files"][0];
        assert_eq!(
            (result["width"].clone(), result["height"].clone()),
            (json!(400), json!(300)),
            "{job}"
        );
        let back = decode(&app.download(&user, &made(&job)[0].0).await, ImageFormat::Png);
        assert_eq!(back.dimensions(), (400, 300), "{name}");
        assert!(
            shows_gradient(&back, (1, 0), (0, 1)),
            "{name} is not the picture given"
        );
    }

    // A DNG (read by the preview the camera embeds, 400x300, and its orientation: a quarter
    // right) to a JPEG whose longer edge is 200: 150x200, turned.
    let shot = app
        .upload(
            &user,
            "shot.dng",
            "Image",
            "image/x-adobe-dng",
            dng(&jpeg(&gradient(400, 300), 90)),
        )
        .await;
    let job = app
        .run_job(
            &user,
            json!({ "jobType": "convert", "fileIds": [shot], "options": { "format": "jpg", "maxEdge": 200 } }),
        )
        .await;
    assert_done(&job);
    assert_eq!(names(&job), ["shot.jpg"]);
    let result = &job["result"]["files"][0];
    assert_eq!(
        (result["width"].clone(), result["height"].clone()),
        (json!(150), json!(200)),
        "{job}"
    );
    let back = decode(&app.download(&user, &made(&job)[0].0).await, ImageFormat::Jpeg);
    assert_eq!(back.dimensions(), (150, 200));
    // Turned a quarter right: the stored left edge is now the top, the stored top the right.
    assert!(
        shows_gradient(&back, (0, 1), (-1, 0)),
        "the DNG's preview is not turned"
    );
}

#[tokio::test]
async fn watermark_make_pdf_and_contact_sheet_take_heic_and_camera_raw_too() {
    let (app, user) = with_worker().await;
    let phone = app
        .upload(
            &user,
            "phone.heic",
            "Image",
            "image/heic",
            heif(&png(&gradient(400, 300)), false),
        )
        .await;
    // Stored 400x300, shown turned a quarter: 300x400.
    let shot = app
        .upload(
            &user,
            "shot.dng",
            "Image",
            "image/x-adobe-dng",
            dng(&jpeg(&gradient(400, 300), 90)),
        )
        .await;

    // A watermark writes what it cannot write back in its own format as PNG.
    let job = app
        .run_job(
            &user,
            json!({ "jobType": "watermark", "fileIds": [phone, shot], "options": { "text": "DRIVE" } }),
        )
        .await;
    assert_done(&job);
    assert_eq!(names(&job), ["phone watermarked.png", "shot watermarked.png"]);
    let sizes: Vec<_> = job["result"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["width"].clone(), f["height"].clone()))
        .collect();
    assert_eq!(
        sizes,
        [(json!(400), json!(300)), (json!(300), json!(400))],
        "{job}"
    );
    let back = decode(&app.download(&user, &made(&job)[1].0).await, ImageFormat::Png);
    assert!(
        shows_gradient(&back, (0, 1), (-1, 0)),
        "the DNG's preview is not turned"
    );

    // A page each, at the picture's size as shown (150 pixels an inch: 400 px is 192 pt).
    let job = app
        .run_job(
            &user,
            json!({ "jobType": "makePdf", "fileIds": [phone, shot], "options": { "pageSize": "fit" } }),
        )
        .await;
    assert_done(&job);
    let sizes = page_sizes(&app.download(&user, &made(&job)[0].0).await);
    assert_eq!(sizes.len(), 2, "{sizes:?}");
    assert!(near(sizes[0], (192.0, 144.0)), "{sizes:?}");
    assert!(near(sizes[1], (144.0, 192.0)), "{sizes:?}");

    // One sheet of both, each in a cell 320 pixels wide.
    let job = app
        .run_job(
            &user,
            json!({ "jobType": "contactSheet", "fileIds": [phone, shot], "options": { "columns": 2 } }),
        )
        .await;
    assert_done(&job);
    let sheet = decode(&app.download(&user, &made(&job)[0].0).await, ImageFormat::Jpeg);
    assert!(
        sheet.width() > 640 && sheet.height() > 400,
        "{:?}",
        sheet.dimensions()
    );
}

#[tokio::test]
async fn watermark_draws_the_text_where_asked_and_leaves_the_rest() {
    let (app, user) = with_worker().await;
    let blue = RgbImage::from_pixel(300, 200, Rgb([20, 30, 90]));
    let flag = picture(&app, &user, "flag.png", png(&blue)).await;

    let job = app
        .run_job(
            &user,
            json!({
                "jobType": "watermark", "fileIds": [flag],
                "options": { "text": "DRIVE", "position": "topLeft", "opacity": 1 },
            }),
        )
        .await;
    assert_done(&job);
    assert_eq!(names(&job), ["flag watermarked.png"]);
    let result = &job["result"]["files"][0];
    assert_eq!(
        (result["width"].clone(), result["height"].clone()),
        (json!(300), json!(200))
    );
    let marked = decode(&app.download(&user, &made(&job)[0].0).await, ImageFormat::Png);
    assert_eq!(marked.dimensions(), (300, 200));

    let differs = |p: &Rgb<u8>| {
        p.0.iter()
            .zip(blue.get_pixel(0, 0).0)
            .any(|(a, b)| a.abs_diff(b) > 40)
    };
    let changed_top_left = (0..100)
        .flat_map(|x| (0..50).map(move |y| (x, y)))
        .filter(|&(x, y)| differs(marked.get_pixel(x, y)))
        .count();
    let white_top_left = (0..100)
        .flat_map(|x| (0..50).map(move |y| (x, y)))
        .filter(|&(x, y)| marked.get_pixel(x, y).0.iter().all(|&c| c > 200))
        .count();
    assert!(
        changed_top_left > 30,
        "only {changed_top_left} pixels changed at the top left"
    );
    assert!(
        white_top_left > 5,
        "only {white_top_left} white pixels at the top left"
    );
    // Nothing drawn elsewhere: the bottom half and the right are the input's.
    for x in 0..300 {
        for y in 0..200 {
            if x >= 150 || y >= 100 {
                let (p, q) = (marked.get_pixel(x, y), blue.get_pixel(x, y));
                assert!(
                    p.0.iter().zip(q.0).all(|(a, b)| a.abs_diff(b) <= 2),
                    "({x}, {y}) changed: {p:?}"
                );
            }
        }
    }
}

#[tokio::test]
async fn strip_metadata_drops_exif_and_comments_and_keeps_the_picture() {
    let (app, user) = with_worker().await;
    let clean = jpeg(&gradient(64, 48), 90);
    // EXIF (a big-endian TIFF header and one IFD entry: orientation 1, upright) and a comment,
    // right after the start marker.
    let mut exif = b"Exif\0\0MM\0\x2a\0\0\0\x08".to_vec();
    exif.extend([0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0]);
    let comment = b"secret location 48.85N 2.35E".to_vec();
    let mut input = clean[..2].to_vec();
    for (marker, body) in [(0xE1, &exif), (0xFE, &comment)] {
        input.extend([0xFF, marker]);
        input.extend(((body.len() + 2) as u16).to_be_bytes());
        input.extend(body);
    }
    input.extend(&clean[2..]);
    assert!(jpeg_markers(&input).contains(&0xE1) && jpeg_markers(&input).contains(&0xFE));
    let original = decode(&input, ImageFormat::Jpeg);
    let photo = picture(&app, &user, "photo.jpg", input.clone()).await;

    let job = app
        .run_job(&user, json!({ "jobType": "stripMetadata", "fileIds": [photo] }))
        .await;
    assert_done(&job);
    assert_eq!(names(&job), ["photo stripped.jpg"]);
    assert_eq!(job["files"][0]["mimeType"], "image/jpeg");
    let output = app.download(&user, &made(&job)[0].0).await;
    let markers = jpeg_markers(&output);
    assert!(
        !markers.contains(&0xE1) && !markers.contains(&0xFE),
        "markers left: {markers:02X?}"
    );
    let has = |needle: &[u8]| output.windows(needle.len()).any(|w| w == needle);
    assert!(!has(b"Exif") && !has(b"secret"), "metadata bytes left");
    // The pixels were not re-encoded: the scan is copied byte for byte.
    assert_eq!(output[scan_start(&output)..], input[scan_start(&input)..]);
    assert_eq!(decode(&output, ImageFormat::Jpeg), original);
}

// ---- PDFs ----

#[tokio::test]
async fn make_pdf_puts_each_picture_on_a_page_of_the_size_asked() {
    let (app, user) = with_worker().await;
    let beach = picture(&app, &user, "beach.jpg", jpeg(&gradient(300, 200), 85)).await;
    let tower = picture(&app, &user, "tower.png", png(&gradient(200, 300))).await;

    let job = app
        .run_job(
            &user,
            json!({ "jobType": "makePdf", "fileIds": [beach, tower], "options": { "pageSize": "a4" } }),
        )
        .await;
    assert_done(&job);
    assert_eq!(names(&job), ["beach.pdf"]);
    assert_eq!(
        (
            job["files"][0]["mimeType"].clone(),
            job["files"][0]["type"].clone()
        ),
        (json!("application/pdf"), json!("Pdf"))
    );
    assert_eq!(job["result"]["pages"], 2, "{job}");
    assert_eq!(job["result"]["fileId"], job["files"][0]["id"], "{job}");
    let bytes = app.download(&user, &made(&job)[0].0).await;
    let sizes = page_sizes(&bytes);
    assert_eq!(sizes.len(), 2, "{sizes:?}");
    // A4, landscape for the wide picture, portrait for the tall one, in the order given.
    assert!(near(sizes[0], (842.0, 595.0)), "{sizes:?}");
    assert!(near(sizes[1], (595.0, 842.0)), "{sizes:?}");

    let job = app
        .run_job(
            &user,
            json!({ "jobType": "makePdf", "fileIds": [tower], "options": { "pageSize": "letter", "name": "Holiday album" } }),
        )
        .await;
    assert_done(&job);
    assert_eq!(names(&job), ["Holiday album.pdf"]);
    let sizes = page_sizes(&app.download(&user, &made(&job)[0].0).await);
    assert_eq!(sizes.len(), 1);
    assert!(near(sizes[0], (612.0, 792.0)), "{sizes:?}");
}

#[tokio::test]
async fn merge_pdf_joins_every_page_in_order_and_takes_only_several_pdfs() {
    let (app, user) = with_worker().await;
    let a = pdf_file(&app, &user, "a.pdf", numbered_pdf(2, 100)).await;
    let b = pdf_file(&app, &user, "b.pdf", numbered_pdf(3, 200)).await;
    let c = pdf_file(&app, &user, "c.pdf", numbered_pdf(1, 300)).await;

    let job = app
        .run_job(&user, json!({ "jobType": "mergePdf", "fileIds": [a, b, c] }))
        .await;
    assert_done(&job);
    assert_eq!(names(&job), ["a merged.pdf"]);
    assert_eq!(job["result"]["pages"], 6, "{job}");
    let bytes = app.download(&user, &made(&job)[0].0).await;
    assert_eq!(page_widths(&bytes), [101, 102, 201, 202, 203, 301]);
    let doc = load_pdf(&bytes);
    assert_eq!(
        doc.extract_text(&[5]).unwrap().trim(),
        "page 3",
        "page 5 is b's third"
    );

    app.call(
        &user,
        "/create-file-job",
        Some(json!({ "jobType": "mergePdf", "fileIds": [a] })),
    )
    .await
    .assert_bad_field("invalid_field", "fileIds");
    let photo = picture(&app, &user, "photo.png", png(&gradient(32, 32))).await;
    app.call(
        &user,
        "/create-file-job",
        Some(json!({ "jobType": "mergePdf", "fileIds": [a, photo, c] })),
    )
    .await
    .assert_bad_field("invalid_field", "fileIds");
}

#[tokio::test]
async fn split_and_extract_take_the_pages_asked_and_a_missing_page_fails_the_job() {
    let (app, user) = with_worker().await;
    let report = pdf_file(&app, &user, "report.pdf", numbered_pdf(5, 100)).await;
    let job = app
        .run_job(
            &user,
            json!({ "jobType": "splitPdf", "fileIds": [report], "options": { "every": 2 } }),
        )
        .await;
    assert_done(&job);
    assert_eq!(
        names(&job),
        ["report part 1.pdf", "report part 2.pdf", "report part 3.pdf"]
    );
    assert_eq!(job["result"]["parts"], 3, "{job}");
    let ids: Vec<String> = made(&job).into_iter().map(|(id, _)| id).collect();
    assert_eq!(job["result"]["fileIds"], json!(ids), "{job}");
    let mut parts = Vec::new();
    for id in &ids {
        parts.push(page_widths(&app.download(&user, id).await));
    }
    assert_eq!(parts, [vec![101, 102], vec![103, 104], vec![105]]);

    let six = pdf_file(&app, &user, "six.pdf", numbered_pdf(6, 100)).await;
    let job = app
        .run_job(
            &user,
            json!({ "jobType": "extractPages", "fileIds": [six], "options": { "pages": "1-3,5" } }),
        )
        .await;
    assert_done(&job);
    assert_eq!(names(&job), ["six pages 1-3,5.pdf"]);
    assert_eq!(job["result"]["pages"], 4, "{job}");
    assert_eq!(
        page_widths(&app.download(&user, &made(&job)[0].0).await),
        [101, 102, 103, 105]
    );

    // Page 9 of six: the request is well formed, the document decides.
    let job = app
        .run_job(
            &user,
            json!({ "jobType": "extractPages", "fileIds": [six], "options": { "pages": "9" } }),
        )
        .await;
    assert_eq!(job["state"], "failed", "{job}");
    let error = job["error"].as_str().unwrap_or_default();
    assert!(error.contains("page 9") && error.contains("6 pages"), "{error:?}");
    assert_eq!(made(&job).len(), 0, "{job}");
    assert_eq!(job["result"], Value::Null, "{job}");
}

#[tokio::test]
async fn a_job_that_runs_out_of_room_keeps_the_results_before_and_no_bytes_after() {
    // Basic holds 1 MB here; a Pro account measures what the split makes.
    let mut app = TestApp::spawn_with(&[("DRIVE_QUOTA_BASIC_BYTES", "1000000")]).await;
    app.start_worker(&[]).await;
    let measure = app.user(Some("Pro")).await;
    let report = numbered_pdf(40, 100);
    let split = |id: FileId| json!({ "jobType": "splitPdf", "fileIds": [id], "options": { "every": 1 } });
    let id = pdf_file(&app, &measure, "report.pdf", report.clone()).await;
    let whole = app.run_job(&measure, split(id)).await;
    assert_done(&whole);
    let sizes: Vec<i64> = whole["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["fileSize"].as_i64().unwrap())
        .collect();
    assert_eq!(sizes.len(), 40, "{whole}");

    // Basic accounts with room for the first `fit` parts and half the next: the part that
    // does not fit fails the job, the parts before it are kept, and those saved ahead after it
    // are removed from the store. Three boundaries, each met with other parts in flight.
    for fit in [12, 21, 30] {
        let tight = app.user(Some("Basic")).await;
        let id = pdf_file(&app, &tight, "report.pdf", report.clone()).await;
        let room = sizes[..fit].iter().sum::<i64>() + sizes[fit] / 2;
        let padding = 1_000_000 - report.len() as i64 - room;
        app.upload(
            &tight,
            "padding.bin",
            "Other",
            "application/octet-stream",
            bytes(padding as usize, 7),
        )
        .await;
        let job = app.run_job(&tight, split(id)).await;
        assert_eq!(job["state"], "failed", "{job}");
        assert!(job["error"].as_str().unwrap().contains("storage quota"), "{job}");
        let kept: Vec<String> = (1..=fit).map(|n| format!("report part {n}.pdf")).collect();
        assert_eq!(names(&job), kept, "{job}");
        let library = app.call(&tight, "/select-user-files", None).await;
        let mut in_library: Vec<&str> = library
            .body
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["fileName"].as_str().filter(|name| name.contains(" part ")))
            .collect();
        in_library.sort();
        let mut wanted: Vec<&str> = kept.iter().map(String::as_str).collect();
        wanted.sort();
        assert_eq!(in_library, wanted);
        let listed = raw_store()
            .await
            .list_objects_v2()
            .bucket(&app.private_bucket)
            .prefix(format!(
                "users/{}/jobs/{}/",
                tight.id,
                job["id"].as_str().unwrap()
            ))
            .send()
            .await
            .unwrap();
        assert_eq!(listed.key_count(), Some(fit as i32), "{listed:?}");

        // Nothing of the failed parts is counted: the room left is half the next part's.
        let left = sizes[fit] / 2;
        let sign = |size: i64| {
            json!({ "type": "Other", "fileName": "last.bin", "fileSize": size,
                    "objectKey": tight.key("last.bin"), "mimeType": "application/octet-stream" })
        };
        app.call(&tight, "/generate-file-urls", Some(sign(left + 1)))
            .await
            .assert_bad_field("storage_limit_reached", "fileSize");
        let fits = app.call(&tight, "/generate-file-urls", Some(sign(left))).await;
        assert_eq!(fits.status, 200, "{}", fits.body);
    }
}

#[tokio::test]
async fn compress_pdf_shrinks_a_big_photo_to_what_the_screen_needs() {
    let (app, user) = with_worker().await;
    // A 2500 px square photo-like picture (a gradient with grain), JPEG at quality 95, drawn
    // 500 pt square on a Letter page.
    let side = 2500;
    let grain = noise((side * side) as usize, 11);
    let photo = RgbImage::from_fn(side, side, |x, y| {
        let g = i32::from(grain[(y * side + x) as usize] % 32) - 16;
        let channel = |v: u32| (v as i32 + g).clamp(0, 255) as u8;
        Rgb([
            channel(x * 255 / side),
            channel(y * 255 / side),
            channel((x + y) * 255 / (2 * side)),
        ])
    });
    let data = jpeg(&photo, 95);
    let input = pdf(
        vec![Page {
            width: 612,
            height: 792,
            operations: vec![
                Operation::new("q", vec![]),
                Operation::new(
                    "cm",
                    vec![500.into(), 0.into(), 0.into(), 500.into(), 56.into(), 146.into()],
                ),
                Operation::new("Do", vec![Object::Name(b"Im1".to_vec())]),
                Operation::new("Q", vec![]),
            ],
        }],
        |doc| {
            let image = doc.add_object(
                Stream::new(
                    dictionary! {
                        "Type" => "XObject", "Subtype" => "Image", "Width" => i64::from(side),
                        "Height" => i64::from(side), "ColorSpace" => "DeviceRGB",
                        "BitsPerComponent" => 8, "Filter" => "DCTDecode",
                    },
                    data,
                )
                .with_compression(false),
            );
            dictionary! { "Im1" => image }
        },
    );
    let size = input.len();
    let scan = pdf_file(&app, &user, "scan.pdf", input).await;

    let job = app
        .run_job(
            &user,
            json!({ "jobType": "compressPdf", "fileIds": [scan], "options": { "quality": "screen" } }),
        )
        .await;
    assert_done(&job);
    assert_eq!(names(&job), ["scan compressed.pdf"]);
    let bytes = app.download(&user, &made(&job)[0].0).await;
    let result = &job["result"]["files"][0];
    assert_eq!(result["from"], json!(scan), "{job}");
    assert_eq!(result["bytesBefore"], json!(size), "{job}");
    assert_eq!(result["bytes"], json!(bytes.len()), "{job}");
    assert!(bytes.len() * 4 < size, "{} bytes from {size}", bytes.len());
    let sizes = page_sizes(&bytes);
    assert_eq!(sizes.len(), 1);
    assert!(near(sizes[0], (612.0, 792.0)), "{sizes:?}");
    // The photo is still there, at the resolution a screen needs: 500 pt at 72 dpi.
    let doc = load_pdf(&bytes);
    let images: Vec<(i64, i64)> = doc
        .objects
        .values()
        .filter_map(|o| o.as_stream().ok())
        .filter(|s| {
            s.dict
                .get(b"Subtype")
                .and_then(Object::as_name)
                .is_ok_and(|n| n == b"Image")
        })
        .map(|s| {
            (
                s.dict.get(b"Width").unwrap().as_i64().unwrap(),
                s.dict.get(b"Height").unwrap().as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(images, [(500, 500)]);
}

#[tokio::test]
async fn pdf_to_images_renders_the_pages_asked_at_the_dpi_asked() {
    let (app, user) = with_worker().await;
    // Page 1 has a black square at the bottom left, page 2 one at the top right.
    let input = pdf(
        vec![
            Page {
                width: 612,
                height: 792,
                operations: black_rectangle(100, 100, 200, 200),
            },
            Page {
                width: 612,
                height: 792,
                operations: black_rectangle(400, 600, 100, 100),
            },
        ],
        |_| Dictionary::new(),
    );
    let doc = pdf_file(&app, &user, "doc.pdf", input).await;
    // At 72 dpi a point is a pixel; rows count from the top.
    let dark = |p: &Rgb<u8>| p.0.iter().all(|&c| c < 40);
    let light = |p: &Rgb<u8>| p.0.iter().all(|&c| c > 215);

    let job = app
        .run_job(
            &user,
            json!({ "jobType": "pdfToImages", "fileIds": [doc], "options": { "format": "png", "dpi": 72 } }),
        )
        .await;
    assert_done(&job);
    assert_eq!(names(&job), ["doc page 1.png", "doc page 2.png"]);
    assert_eq!(job["result"]["files"][1]["page"], 2, "{job}");
    assert_eq!(job["result"]["files"][1]["width"], 612, "{job}");
    let first = decode(&app.download(&user, &made(&job)[0].0).await, ImageFormat::Png);
    let second = decode(&app.download(&user, &made(&job)[1].0).await, ImageFormat::Png);
    assert_eq!(
        (first.dimensions(), second.dimensions()),
        ((612, 792), (612, 792))
    );
    assert!(
        dark(first.get_pixel(200, 592)) && light(first.get_pixel(450, 142)),
        "page 1"
    );
    assert!(
        light(second.get_pixel(200, 592)) && dark(second.get_pixel(450, 142)),
        "page 2"
    );
    assert!(
        light(first.get_pixel(20, 20)) && light(second.get_pixel(20, 20)),
        "white paper"
    );

    // Only page 2; its name is taken by the first job's, so it gets the next free one.
    let job = app
        .run_job(
            &user,
            json!({ "jobType": "pdfToImages", "fileIds": [doc], "options": { "dpi": 72, "pages": "2" } }),
        )
        .await;
    assert_done(&job);
    assert_eq!(names(&job), ["doc page 2 (2).png"]);
    assert_eq!(job["result"]["files"][0]["page"], 2, "{job}");
    let only = decode(&app.download(&user, &made(&job)[0].0).await, ImageFormat::Png);
    assert!(
        dark(only.get_pixel(450, 142)) && light(only.get_pixel(200, 592)),
        "page 2"
    );

    let job = app
        .run_job(&user, json!({ "jobType": "pdfToImages", "fileIds": [doc], "options": { "format": "jpg", "dpi": 72, "pages": "1" } }))
        .await;
    assert_done(&job);
    assert_eq!(names(&job), ["doc page 1.jpg"]);
    assert_eq!(job["files"][0]["mimeType"], "image/jpeg");
    let bytes = app.download(&user, &made(&job)[0].0).await;
    assert_eq!(&bytes[..3], [0xFF, 0xD8, 0xFF]);
    let page = decode(&bytes, ImageFormat::Jpeg);
    assert_eq!(page.dimensions(), (612, 792));
    assert!(dark(page.get_pixel(200, 592)), "page 1 in JPEG");
}

// ---- damaged inputs ----

#[tokio::test]
async fn damaged_inputs_fail_their_jobs_cleanly_while_others_finish() {
    let (app, user) = with_worker().await;
    let broken_picture = picture(&app, &user, "broken.jpg", noise(4000, 1)).await;
    let good = jpeg(&gradient(120, 90), 90);
    let cut = picture(&app, &user, "cut.jpg", good[..good.len() / 2].to_vec()).await;
    let broken_pdf = pdf_file(&app, &user, "broken.pdf", noise(4000, 2)).await;
    let fine = picture(&app, &user, "fine.jpg", good).await;

    let convert =
        |id: FileId| json!({ "jobType": "convert", "fileIds": [id], "options": { "format": "png" } });
    let jobs = [
        app.create_job(&user, convert(broken_picture)).await,
        app.create_job(&user, convert(cut)).await,
        app.create_job(
            &user,
            json!({ "jobType": "compressPdf", "fileIds": [broken_pdf] }),
        )
        .await,
        app.create_job(&user, convert(fine)).await,
    ];
    let mut ended = Vec::new();
    for job in &jobs {
        ended.push(app.wait_job(&user, &job["id"]).await);
    }

    for (job, names_file, says) in [
        (&ended[0], Some("broken.jpg"), None),
        (&ended[1], Some("cut.jpg"), Some("could not be read")),
        (&ended[2], None, Some("could not be read")),
    ] {
        assert_eq!(job["state"], "failed", "{job}");
        let error = job["error"].as_str().unwrap_or_default();
        assert!(!error.trim().is_empty(), "{job}");
        for panic_text in ["panicked", "RUST_BACKTRACE", "unwrap", "thread '"] {
            assert!(!error.contains(panic_text), "{error:?}");
        }
        if let Some(name) = names_file {
            assert!(error.contains(name), "{error:?} does not name {name}");
        }
        if let Some(says) = says {
            assert!(error.contains(says), "{error:?}");
        }
        assert_eq!(made(job).len(), 0, "{job}");
        assert_eq!(job["seconds"], Value::Null, "a failed job costs nothing: {job}");
    }
    assert_done(&ended[3]);
    assert_eq!(names(&ended[3]), ["fine.png"]);
    let bytes = app.download(&user, &made(&ended[3])[0].0).await;
    assert_eq!(decode(&bytes, ImageFormat::Png).dimensions(), (120, 90));
}

// ---- settings ----

#[tokio::test]
async fn every_setting_is_checked_with_a_400_naming_it() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let photo = picture(&app, &user, "photo.png", png(&gradient(32, 32))).await;
    let doc = pdf_file(&app, &user, "doc.pdf", numbered_pdf(2, 100)).await;

    let cases = [
        ("convert", photo, json!({}), "missing_field", "options.format"),
        (
            "convert",
            photo,
            json!({ "format": "gif" }),
            "invalid_field",
            "options.format",
        ),
        (
            "convert",
            photo,
            json!({ "format": "png", "maxEdge": 5 }),
            "invalid_field",
            "options.maxEdge",
        ),
        (
            "convert",
            photo,
            json!({ "format": "png", "maxEdge": 20001 }),
            "invalid_field",
            "options.maxEdge",
        ),
        (
            "convert",
            photo,
            json!({ "format": "png", "foo": 1 }),
            "invalid_field",
            "options.foo",
        ),
        (
            "watermark",
            photo,
            json!({ "text": "x", "opacity": 2 }),
            "invalid_field",
            "options.opacity",
        ),
        (
            "watermark",
            photo,
            json!({ "text": "" }),
            "invalid_field",
            "options.text",
        ),
        ("watermark", photo, json!({}), "missing_field", "options.text"),
        (
            "watermark",
            photo,
            json!({ "text": "x", "position": "middle" }),
            "invalid_field",
            "options.position",
        ),
        (
            "stripMetadata",
            photo,
            json!({ "keep": "icc" }),
            "invalid_field",
            "options.keep",
        ),
        (
            "makePdf",
            photo,
            json!({ "pageSize": "a3" }),
            "invalid_field",
            "options.pageSize",
        ),
        (
            "makePdf",
            photo,
            json!({ "name": "a/b" }),
            "invalid_field",
            "options.name",
        ),
        (
            "pdfToImages",
            doc,
            json!({ "dpi": 1000 }),
            "invalid_field",
            "options.dpi",
        ),
        (
            "pdfToImages",
            doc,
            json!({ "format": "webp2" }),
            "invalid_field",
            "options.format",
        ),
        (
            "pdfToImages",
            doc,
            json!({ "pages": "0" }),
            "invalid_field",
            "options.pages",
        ),
        (
            "extractPages",
            doc,
            json!({ "pages": "3-1" }),
            "invalid_field",
            "options.pages",
        ),
        ("extractPages", doc, json!({}), "missing_field", "options.pages"),
        (
            "splitPdf",
            doc,
            json!({ "every": 0 }),
            "invalid_field",
            "options.every",
        ),
        (
            "splitPdf",
            doc,
            json!({ "every": -1 }),
            "invalid_field",
            "options.every",
        ),
        (
            "compressPdf",
            doc,
            json!({ "quality": "best" }),
            "invalid_field",
            "options.quality",
        ),
        (
            "convert",
            doc,
            json!({ "format": "png" }),
            "invalid_field",
            "fileIds",
        ),
        ("compressPdf", photo, json!({}), "invalid_field", "fileIds"),
        ("cut", photo, json!({}), "invalid_field", "fileIds"),
        ("captions", photo, json!({}), "invalid_field", "fileIds"),
        (
            "captions",
            photo,
            json!({ "format": "ass" }),
            "invalid_field",
            "options.format",
        ),
        ("resize", photo, json!({}), "invalid_field", "jobType"),
    ];
    for (job_type, file, options, code, field) in cases {
        let reply = app
            .call(
                &user,
                "/create-file-job",
                Some(json!({ "jobType": job_type, "fileIds": [file], "options": options })),
            )
            .await;
        assert_eq!(
            (
                reply.status.as_u16(),
                reply.body["code"].clone(),
                reply.body["field"].clone()
            ),
            (400, json!(code), json!(field)),
            "{job_type} {options}: {}",
            reply.body
        );
        reply.assert_bad_field(code, field);
    }
    app.call(
        &user,
        "/create-file-job",
        Some(json!({ "jobType": "convert", "fileIds": [photo, photo], "options": { "format": "png" } })),
    )
    .await
    .assert_bad_field("invalid_field", "fileIds");
    app.call(
        &user,
        "/create-file-job",
        Some(json!({ "jobType": "convert", "options": { "format": "png" } })),
    )
    .await
    .assert_bad_field("missing_field", "fileIds");

    // Refused requests leave no job behind; a dry run of a good one is accepted.
    let listed = app.call(&user, "/select-file-jobs", None).await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert_eq!(listed.body["jobs"], json!([]));
    let dry = app
        .call(
            &user,
            "/create-file-job",
            Some(json!({ "jobType": "convert", "fileIds": [photo], "options": { "format": "webp", "maxEdge": 16 }, "dryRun": true })),
        )
        .await;
    assert_eq!(dry.status, 200, "{}", dry.body);
    assert_eq!(dry.body["dryRun"], true);
}
