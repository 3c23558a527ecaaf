//! Reading pages the tests print and scan themselves (see `common`), with the system's Tesseract.

mod common;

use std::num::NonZeroUsize;

use common::{A4, LETTER, as_text, character_error_rate, coloured, print, scan, scanned_letter};
use drive_ocr::{OcrError, Reader, Readers, TESSDATA};
use image::{GrayImage, Luma, RgbImage};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Tesseract reads clean rendered pages at 0.4–0.7 % character error; a turned, blurred and
/// speckled scan costs a little more. Twice that is a failure of ours (a wrong page mode, a
/// shrunk or mangled picture, words dropped as unsure), not of Tesseract.
const MAX_CHARACTER_ERROR: f64 = 0.02;

fn reader() -> Reader {
    Reader::new(None).expect("Tesseract and its English model (scripts/lib.sh installs them)")
}

#[test]
fn a_scanned_page_is_read_within_the_error_bound() {
    let (page, paragraphs) = scanned_letter();
    let printed = as_text(&paragraphs);
    let text = reader().read(&page).unwrap();
    let read = text.to_string();
    let error = character_error_rate(&read, &printed);
    eprintln!("character error rate {:.2} %\n{read}", error * 100.0);
    assert!(
        error < MAX_CHARACTER_ERROR,
        "character error rate {error:.4}\n{read}"
    );
    for word in [
        "Margaret",
        "2,417",
        "88-3105",
        "14.75",
        "searchable?",
        "Whitfield",
    ] {
        assert!(read.contains(word), "{word} in\n{read}");
    }
    // The letter's paragraphs, each with the lines it was set in.
    let read_lines: Vec<usize> = text.paragraphs.iter().map(|p| p.lines.len()).collect();
    let printed_lines: Vec<usize> = paragraphs.iter().map(Vec::len).collect();
    assert_eq!(read_lines, printed_lines, "{read}");
    assert!(
        text.lines().all(|line| line.confidence > 80.0),
        "{:?}",
        text.paragraphs
    );
}

#[test]
fn a_page_scanned_upside_down_is_read() {
    let (page, paragraphs) = scanned_letter();
    let text = reader().read(&image::imageops::rotate180(&page)).unwrap();
    let error = character_error_rate(&text.to_string(), &as_text(&paragraphs));
    assert!(
        error < MAX_CHARACTER_ERROR,
        "character error rate {error:.4}\n{text}"
    );
}

#[test]
fn a_page_scanned_on_its_side_is_read() {
    let (page, paragraphs) = scanned_letter();
    let text = reader().read(&image::imageops::rotate90(&page)).unwrap();
    let error = character_error_rate(&text.to_string(), &as_text(&paragraphs));
    assert!(
        error < MAX_CHARACTER_ERROR,
        "character error rate {error:.4}\n{text}"
    );
}

/// Mirrored print reads as garbage whichever way up, all of it in lines Tesseract is unsure of.
#[test]
fn a_mirrored_page_gives_little() {
    let (page, _) = scanned_letter();
    let text = reader().read(&image::imageops::flip_horizontal(&page)).unwrap();
    assert!(text.words() <= 5, "{text}");
}

#[test]
fn an_empty_page_gives_no_text() {
    let blank = GrayImage::from_pixel(A4.0, A4.1, Luma([255]));
    let text = reader().read(&scan(&blank, 0.4, 3)).unwrap();
    assert!(text.is_empty(), "{text}");
}

#[test]
fn noise_gives_little_and_no_error() {
    let mut random = StdRng::seed_from_u64(11);
    let noise = GrayImage::from_fn(1200, 900, |_, _| Luma([random.random()]));
    let blobs = RgbImage::from_fn(900, 700, |x, y| {
        let wave = ((x as f32 / 17.0).sin() * (y as f32 / 23.0).cos() * 127.0 + 128.0) as u8;
        image::Rgb([wave, random.random(), 255 - wave])
    });
    let mut reader = reader();
    let noise = reader.read(&noise).unwrap();
    let blobs = reader.read(&blobs).unwrap();
    assert!(noise.words() <= 3, "{noise}");
    assert!(blobs.words() <= 3, "{blobs}");
}

#[test]
fn pictures_of_any_shape_are_read_without_error() {
    let mut reader = reader();
    for (width, height) in [(0, 0), (1, 1), (2, 2), (3, 3), (1, 4000), (40_000, 5), (64, 64)] {
        let picture = GrayImage::from_fn(width, height, |x, y| {
            Luma([if (x + y) % 2 == 0 { 0 } else { 255 }])
        });
        let text = reader
            .read(&picture)
            .unwrap_or_else(|error| panic!("{width}x{height}: {error}"));
        assert!(text.words() <= 1, "{width}x{height}: {text}");
    }
}

#[test]
fn a_page_in_colour_is_read() {
    let (page, lines) = print(LETTER, A4);
    let text = reader().read(&coloured(&scan(&page, -0.5, 5))).unwrap();
    let error = character_error_rate(&text.to_string(), &as_text(&lines));
    assert!(
        error < MAX_CHARACTER_ERROR,
        "character error rate {error:.4}\n{text}"
    );
}

#[test]
fn a_picture_larger_than_needed_is_read_shrunk() {
    // The letter at 600 dpi: 35 million pixels, read within 16 million.
    let (page, lines) = print(LETTER, (A4.0 * 2, A4.1 * 2));
    let text = reader().read(&page).unwrap();
    let error = character_error_rate(&text.to_string(), &as_text(&lines));
    assert!(
        error < MAX_CHARACTER_ERROR,
        "character error rate {error:.4}\n{text}"
    );
}

/// Four pages, each naming its number, read on two threads.
#[test]
fn pages_read_in_parallel_come_back_in_order() {
    let words = ["first", "second", "third", "fourth", "fifth"];
    let pages: Vec<(String, GrayImage)> = words
        .iter()
        .enumerate()
        .map(|(n, word)| {
            let sentence = format!("This is the {word} page of the report, numbered {}.", 100 + n);
            let (page, _) = print(&[&sentence], A4);
            (sentence, scan(&page, 0.3, n as u64))
        })
        .collect();
    let mut readers = Readers::new(None, NonZeroUsize::new(2).unwrap()).unwrap();
    let texts = readers.read_pages(pages.iter().map(|(_, page)| page.clone()));
    assert_eq!(texts.len(), pages.len());
    for ((sentence, _), text) in pages.iter().zip(texts) {
        assert_eq!(text.unwrap().to_string(), *sentence);
    }

    // The same with the page made on the reading thread, as a PDF page is rendered there.
    let texts = readers.map(0..words.len(), |reader, n| {
        reader.read(&pages[n].1).map(|text| (n, text))
    });
    for (n, result) in texts.into_iter().enumerate() {
        let (read_n, text) = result.unwrap();
        assert_eq!((read_n, text.to_string()), (n, pages[n].0.clone()));
    }
}

#[test]
fn a_missing_model_is_named() {
    let empty = std::env::temp_dir().join(format!("drive-ocr-no-model-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let error = Reader::new(Some(&empty)).unwrap_err();
    std::fs::remove_dir(&empty).unwrap();
    assert!(
        matches!(&error, OcrError::Model { path, .. } if *path == empty.join("eng.traineddata")),
        "{error:?}"
    );
    assert!(std::path::Path::new(TESSDATA).join("eng.traineddata").is_file());
}
