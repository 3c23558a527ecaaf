//! `/read-file` end to end: real uploads read back through the API and its confined reader.
//! Pictures (PNG, HEIC made by `heif-enc`, a DNG written here around an embedded preview)
//! come back as JPEGs within 1568 px; a video as its frame; a PDF as pages of text; a text
//! file in pieces that rebuild it byte for byte. Every error row of the spec, and a picture
//! bomb that must cost nothing but a 422.

use std::io::Cursor;

use base64::Engine;
use drive_core::id::FileId;
use drive_tests::media::{dng, heif, text_pdf, video_of};
use drive_tests::*;
use image::{DynamicImage, ImageFormat, Rgb, RgbImage};
use serde_json::{Value, json};

async fn read(app: &TestApp, user: &TestUser, body: Value) -> Reply {
    app.call(user, "/read-file", Some(body)).await
}

/// The answer's picture, checked to be a JPEG, decoded.
fn picture(answer: &Value) -> DynamicImage {
    assert_eq!(answer["image"]["mimeType"], "image/jpeg", "{answer}");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(answer["image"]["data"].as_str().expect("image data"))
        .expect("base64");
    assert!(bytes.starts_with(&[0xFF, 0xD8, 0xFF]), "a JPEG");
    image::load_from_memory_with_format(&bytes, ImageFormat::Jpeg).expect("the JPEG decodes")
}

fn gradient(width: u32, height: u32) -> RgbImage {
    RgbImage::from_fn(width, height, |x, y| Rgb([(x % 256) as u8, (y % 256) as u8, 90]))
}

fn encoded(picture: &RgbImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Vec::new();
    DynamicImage::ImageRgb8(picture.clone())
        .write_to(&mut Cursor::new(&mut out), format)
        .unwrap();
    out
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A PNG whose header claims `width` x `height` pixels and holds almost nothing.
fn bomb_png(width: u32, height: u32) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut chunk = |kind: &[u8], data: &[u8]| {
        out.extend((data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend(data);
        out.extend(&body);
        out.extend(crc32(&body).to_be_bytes());
    };
    let mut header = width.to_be_bytes().to_vec();
    header.extend(height.to_be_bytes());
    header.extend([8, 2, 0, 0, 0]);
    chunk(b"IHDR", &header);
    chunk(b"IDAT", &[0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]);
    chunk(b"IEND", &[]);
    out
}

/// A PDF whose page `i` says "page i" and then `words` words.
fn pdf(pages: usize, words: usize) -> Vec<u8> {
    let pages: Vec<Vec<String>> = (1..=pages)
        .map(|i| {
            let lines = (0..words.div_ceil(10)).map(|line| {
                (0..10)
                    .map(|w| format!("w{}", line * 10 + w))
                    .collect::<Vec<_>>()
                    .join(" ")
            });
            std::iter::once(format!("page {i}")).chain(lines).collect()
        })
        .collect();
    text_pdf(&pages)
}

#[tokio::test]
async fn every_error_row_answers_as_the_spec_says() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let other = app.user(Some("Pro")).await;
    let text = app
        .upload(&user, "a.txt", "Text", "text/plain", b"hello".to_vec())
        .await;
    let document = app
        .upload(&user, "a.pdf", "Pdf", "application/pdf", pdf(3, 5))
        .await;

    read(&app, &user, json!({}))
        .await
        .assert_bad_field("missing_field", "fileId");
    read(&app, &user, json!({ "fileId": "nope" }))
        .await
        .assert_error(400, "invalid_field");
    for (field, value) in [
        ("at", json!(-1)),
        ("fromPage", json!(0)),
        ("toPage", json!(0)),
        ("offset", json!(-1)),
        ("at", json!("soon")),
    ] {
        let reply = read(&app, &user, json!({ "fileId": text, field: value })).await;
        assert_eq!(reply.status, 400, "{field}: {}", reply.body);
        assert_eq!(reply.body["field"], field, "{}", reply.body);
    }
    // toPage before fromPage, or more than 20 pages on.
    for (from, to) in [(5, 4), (1, 21)] {
        let reply = read(
            &app,
            &user,
            json!({ "fileId": document, "fromPage": from, "toPage": to }),
        )
        .await;
        reply.assert_bad_field("invalid_field", "toPage");
    }
    read(&app, &user, json!({ "fileId": document, "fromPage": 4 }))
        .await
        .assert_bad_field("invalid_field", "fromPage");
    read(&app, &user, json!({ "fileId": text, "offset": 6 }))
        .await
        .assert_bad_field("invalid_field", "offset");

    // Another user's private file is exactly a file that does not exist.
    let missing = read(&app, &other, json!({ "fileId": FileId::random() })).await;
    let private = read(&app, &other, json!({ "fileId": text })).await;
    missing.assert_error(404, "file_not_found");
    private.assert_error(404, "file_not_found");
    assert_eq!(missing.body, private.body);

    // Not a picture at all, and a bomb whose header claims 50,000 x 50,000 pixels.
    let broken = app
        .upload(
            &user,
            "broken.png",
            "Image",
            "image/png",
            b"\x89PNG\r\n\x1a\nnot really".to_vec(),
        )
        .await;
    read(&app, &user, json!({ "fileId": broken }))
        .await
        .assert_error(422, "unreadable");
    let bomb = app
        .upload(&user, "bomb.png", "Image", "image/png", bomb_png(50_000, 50_000))
        .await;
    let started = std::time::Instant::now();
    read(&app, &user, json!({ "fileId": bomb }))
        .await
        .assert_error(422, "unreadable");
    assert!(
        started.elapsed().as_secs() < 10,
        "the bomb cost {:?}",
        started.elapsed()
    );
    // The API still answers.
    let after = read(&app, &user, json!({ "fileId": text })).await;
    assert_eq!(
        (after.status.as_u16(), after.body["text"].as_str()),
        (200, Some("hello")),
        "{}",
        after.body
    );

    // The object gone from the store: the store did not hand it over.
    let key = app.object_key(text).await;
    raw_store()
        .await
        .delete_object()
        .bucket(&app.private_bucket)
        .key(&key)
        .send()
        .await
        .unwrap();
    let gone = read(&app, &user, json!({ "fileId": text })).await;
    assert_eq!(gone.assert_error(502, "fetching_file_failed")["retryable"], true);
}

#[tokio::test]
async fn a_text_file_reads_back_in_pieces_byte_for_byte() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    // 250 KB of two-, three- and four-byte characters, so pieces of 100,000 bytes fall inside them.
    let text: String = "é€😀a".repeat(25_000);
    let id = app
        .upload(
            &user,
            "notes.txt",
            "Text",
            "text/plain; charset=utf-8",
            text.as_bytes().to_vec(),
        )
        .await;
    let mut rebuilt = String::new();
    let mut offset = 0u64;
    let mut pieces = 0;
    loop {
        let reply = read(&app, &user, json!({ "fileId": id, "offset": offset })).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let piece = reply.body["text"].as_str().unwrap();
        assert!(
            piece.len() <= 100_000 && !piece.contains('\u{FFFD}'),
            "a piece splits no character"
        );
        rebuilt.push_str(piece);
        pieces += 1;
        match reply.body["nextOffset"].as_u64() {
            Some(next) => {
                assert_eq!(next, offset + piece.len() as u64);
                offset = next;
            }
            None => break,
        }
    }
    assert_eq!(pieces, 3);
    assert_eq!(rebuilt.as_bytes(), text.as_bytes());
    let end = read(&app, &user, json!({ "fileId": id, "offset": text.len() })).await;
    assert_eq!(
        (end.status.as_u16(), end.body["text"].as_str()),
        (200, Some("")),
        "{}",
        end.body
    );
}

#[tokio::test]
async fn a_pdf_reads_as_pages_of_text() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let id = app
        .upload(&user, "report.pdf", "Pdf", "application/pdf", pdf(25, 20))
        .await;
    let first = read(&app, &user, json!({ "fileId": id })).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.body["pages"], json!({ "from": 1, "to": 10, "total": 25 }));
    let text = first.body["text"].as_str().unwrap();
    assert!(
        text.contains("page 1\nw0 w1 w2") && text.contains("page 10") && !text.contains("page 11"),
        "{text}"
    );
    // A toPage past the end reads to the end.
    let last = read(&app, &user, json!({ "fileId": id, "fromPage": 20, "toPage": 39 })).await;
    assert_eq!(
        last.body["pages"],
        json!({ "from": 20, "to": 25, "total": 25 }),
        "{}",
        last.body
    );
    // Pages too long for 100 KB together: only the whole pages that fit.
    let long = app
        .upload(&user, "long.pdf", "Pdf", "application/pdf", pdf(4, 6000))
        .await;
    let reply = read(&app, &user, json!({ "fileId": long, "toPage": 4 })).await;
    let pages = &reply.body["pages"];
    assert!(pages["to"].as_u64().unwrap() < 4, "{}", reply.body["note"]);
    assert!(reply.body["text"].as_str().unwrap().len() <= 100_000);
}

#[tokio::test]
async fn pictures_heic_and_raw_come_back_as_jpegs_within_1568_pixels() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let big = gradient(3000, 1500);
    let png = app
        .upload(
            &user,
            "big.png",
            "Image",
            "image/png",
            encoded(&big, ImageFormat::Png),
        )
        .await;
    let answer = read(&app, &user, json!({ "fileId": png })).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let shown = picture(&answer.body);
    assert_eq!((shown.width(), shown.height()), (1568, 784));

    let heic = heif(&encoded(&gradient(2000, 1000), ImageFormat::Png), false);
    let id = app.upload(&user, "photo.heic", "Image", "image/heic", heic).await;
    let answer = read(&app, &user, json!({ "fileId": id })).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let shown = picture(&answer.body);
    assert_eq!((shown.width(), shown.height()), (1568, 784));

    // The DNG's preview is 2000 x 1000 and the file says to turn it a quarter.
    let preview = encoded(&gradient(2000, 1000), ImageFormat::Jpeg);
    let id = app
        .upload(&user, "shot.dng", "Image", "image/x-adobe-dng", dng(&preview))
        .await;
    let answer = read(&app, &user, json!({ "fileId": id })).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let shown = picture(&answer.body);
    assert_eq!((shown.width(), shown.height()), (784, 1568));
}

#[tokio::test]
async fn a_video_reads_as_its_frame_and_a_public_file_reads_for_anyone() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let other = app.user(Some("Pro")).await;
    let id = app
        .upload(
            &user,
            "clip.mp4",
            "Video",
            "video/mp4",
            video_of("testsrc2=size=320x240:rate=25", 4.0, &[]),
        )
        .await;
    let default = read(&app, &user, json!({ "fileId": id })).await;
    assert_eq!(default.status, 200, "{}", default.body);
    let duration = default.body["duration"].as_f64().unwrap();
    assert!((duration - 4.0).abs() < 0.1, "{duration}");
    assert!((default.body["at"].as_f64().unwrap() - duration / 10.0).abs() < 1e-6);
    let frame = picture(&default.body);
    assert_eq!((frame.width(), frame.height()), (320, 240));
    let later = read(&app, &user, json!({ "fileId": id, "at": 3 })).await;
    assert_eq!(later.body["at"], 3.0, "{}", later.body);
    assert_ne!(
        picture(&later.body).to_rgb8(),
        frame.to_rgb8(),
        "another moment, another frame"
    );
    read(&app, &user, json!({ "fileId": id, "at": 9 }))
        .await
        .assert_bad_field("invalid_field", "at");

    // Audio nobody has had read comes back with a note and nothing to read.
    let song = app
        .upload(&user, "song.mp3", "Audio", "audio/mpeg", bytes(1000, 1))
        .await;
    let reply = read(&app, &user, json!({ "fileId": song })).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(reply.body["note"].as_str().unwrap().contains("Nobody"));
    assert!(reply.body.get("text").is_none() && reply.body.get("image").is_none());

    read(&app, &other, json!({ "fileId": id }))
        .await
        .assert_error(404, "file_not_found");
    let public = app
        .call(&user, "/toggle-file-access", Some(json!({ "id": id })))
        .await;
    assert_eq!(public.status, 200, "{}", public.body);
    let theirs = read(&app, &other, json!({ "fileId": id, "at": 1 })).await;
    assert_eq!(theirs.status, 200, "{}", theirs.body);
    assert_eq!(theirs.body["id"], json!(id));
}
