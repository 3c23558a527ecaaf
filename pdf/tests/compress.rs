//! Compressing PDFs with large images.

mod common;

use std::path::{Path, PathBuf};

use common::{TestPage, draw, jpeg, numbered_pdf, page_sizes, photo_pixels, write_pdf};
use drive_pdf::{Quality, compress, page_count, render_pages};
use lopdf::{Dictionary, Document, Object, ObjectId, Stream, dictionary};

fn jpeg_image(doc: &mut Document, side: u16) -> ObjectId {
    let data = jpeg(
        &photo_pixels(side.into(), side.into()),
        side,
        side,
        jpeg_encoder::ColorType::Rgb,
        90,
    );
    doc.add_object(
        Stream::new(
            dictionary! {
                "Type" => "XObject", "Subtype" => "Image", "Width" => i64::from(side), "Height" => i64::from(side),
                "ColorSpace" => "DeviceRGB", "BitsPerComponent" => 8, "Filter" => "DCTDecode",
            },
            data,
        )
        .with_compression(false),
    )
}

/// Two Letter pages drawing a square photo of `side` pixels, `drawn` points square on page 1 and
/// 100 pt square on page 2.
fn photo_pdf(dir: &Path, side: u16, drawn: f32) -> PathBuf {
    let path = dir.join("photo.pdf");
    let pages = vec![
        TestPage {
            width: 612,
            height: 792,
            operations: draw("Im1", 50.0, 50.0, drawn, drawn),
        },
        TestPage {
            width: 612,
            height: 792,
            operations: draw("Im1", 50.0, 50.0, 100.0, 100.0),
        },
    ];
    write_pdf(&path, pages, |doc| dictionary! { "Im1" => jpeg_image(doc, side) });
    path
}

/// The width and height of each image XObject in the file.
fn image_sizes(path: &Path) -> Vec<(i64, i64)> {
    let doc = Document::load(path).unwrap();
    doc.objects
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
        .collect()
}

#[test]
fn screen_quality_shrinks_a_big_photo_to_its_drawn_size() {
    let dir = tempfile::tempdir().unwrap();
    let input = photo_pdf(dir.path(), 3000, 500.0);
    let output = dir.path().join("small.pdf");
    let mut reports = Vec::new();
    let (before, after) = compress(&input, Quality::Screen, &output, &mut |p| reports.push(p)).unwrap();

    assert_eq!(before, std::fs::metadata(&input).unwrap().len());
    assert_eq!(after, std::fs::metadata(&output).unwrap().len());
    assert!(after * 5 < before, "{after} bytes from {before}");
    // Drawn at most 500 pt wide: 500 px at 72 dpi.
    assert_eq!(image_sizes(&output), [(500, 500)]);
    assert_eq!(page_count(&output).unwrap(), 2);
    assert_eq!(page_sizes(&output), [(612.0, 792.0), (612.0, 792.0)]);
    assert!(reports.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(reports.last(), Some(&1.0));

    // Still a picture where it was: the photo's bottom-left is dark, its top-right bright.
    render_pages(&output, 72, Some(&common::ranges("1")), &mut |_, image| {
        let at = |x: u32, y: u32| image.get_pixel(x, 792 - y).0;
        let (low, high) = (at(60, 60), at(540, 540));
        assert!(low[0] < 60 && high[0] > 200, "{low:?} {high:?}");
        Ok(())
    })
    .unwrap();
}

#[test]
fn higher_qualities_keep_more_pixels() {
    let dir = tempfile::tempdir().unwrap();
    let input = photo_pdf(dir.path(), 1000, 150.0);
    let ebook = dir.path().join("ebook.pdf");
    compress(&input, Quality::Ebook, &ebook, &mut |_| {}).unwrap();
    // 150 pt at 150 dpi.
    assert_eq!(image_sizes(&ebook), [(313, 313)]);
    let printer = dir.path().join("printer.pdf");
    compress(&input, Quality::Printer, &printer, &mut |_| {}).unwrap();
    // 150 pt at 300 dpi.
    assert_eq!(image_sizes(&printer), [(625, 625)]);
    // Drawn larger, 1000 px is about what 300 dpi needs: not worth a re-encode.
    let input = photo_pdf(dir.path(), 1000, 230.0);
    compress(&input, Quality::Printer, &printer, &mut |_| {}).unwrap();
    assert_eq!(image_sizes(&printer), [(1000, 1000)]);
}

#[test]
fn lossless_images_drawn_inside_forms_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("form.pdf");
    let (w, h) = (1200u32, 800u32);
    let page = TestPage {
        width: 612,
        height: 792,
        operations: draw("Fm1", 0.0, 0.0, 1.0, 1.0),
    };
    write_pdf(&input, vec![page], |doc| {
        let image = doc.add_object(Stream::new(
            dictionary! {
                "Type" => "XObject", "Subtype" => "Image", "Width" => w as i64, "Height" => h as i64,
                "ColorSpace" => "DeviceRGB", "BitsPerComponent" => 8,
            },
            photo_pixels(w, h),
        ));
        // The form scales by 2 and draws the image 150 × 100, so it shows 300 × 200 pt.
        let content = lopdf::content::Content {
            operations: draw("Im1", 10.0, 10.0, 150.0, 100.0),
        };
        let form = doc.add_object(Stream::new(
            dictionary! {
                "Type" => "XObject", "Subtype" => "Form", "BBox" => vec![0.into(), 0.into(), 400.into(), 400.into()],
                "Matrix" => vec![2.into(), 0.into(), 0.into(), 2.into(), 0.into(), 0.into()],
                "Resources" => dictionary! { "XObject" => dictionary! { "Im1" => image } },
            },
            content.encode().unwrap(),
        ));
        dictionary! { "Fm1" => form }
    });
    let output = dir.path().join("out.pdf");
    let (before, after) = compress(&input, Quality::Screen, &output, &mut |_| {}).unwrap();
    assert!(after * 10 < before, "{after} bytes from {before}");
    assert_eq!(image_sizes(&output), [(300, 200)]);
}

#[test]
fn images_used_as_masks_and_unsupported_colours_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("masked.pdf");
    let side = 2000i64;
    let page = TestPage {
        width: 612,
        height: 792,
        operations: draw("Im1", 0.0, 0.0, 100.0, 100.0),
    };
    write_pdf(&input, vec![page], |doc| {
        let mask = doc.add_object(Stream::new(
            dictionary! {
                "Type" => "XObject", "Subtype" => "Image", "Width" => side, "Height" => side,
                "ColorSpace" => "DeviceGray", "BitsPerComponent" => 8,
            },
            common::noise((side * side) as usize, 4),
        ));
        let cmyk = doc.add_object(Stream::new(
            dictionary! {
                "Type" => "XObject", "Subtype" => "Image", "Width" => side, "Height" => side,
                "ColorSpace" => "DeviceCMYK", "BitsPerComponent" => 8, "SMask" => mask,
            },
            vec![0; (side * side * 4) as usize],
        ));
        dictionary! { "Im1" => cmyk }
    });
    let output = dir.path().join("out.pdf");
    let (before, after) = compress(&input, Quality::Screen, &output, &mut |_| {}).unwrap();
    // Deflating the raw data still pays off...
    assert!(after < before);
    // ...but neither image changed size.
    let mut sizes = image_sizes(&output);
    sizes.sort();
    assert_eq!(sizes, [(side, side), (side, side)]);
}

#[test]
fn compressing_never_grows_a_file() {
    let dir = tempfile::tempdir().unwrap();
    // Already as small as it gets: a text page written the way compress writes.
    let input = numbered_pdf(dir.path(), "text.pdf", 1, 100);
    let once = dir.path().join("once.pdf");
    compress(&input, Quality::Screen, &once, &mut |_| {}).unwrap();
    let twice = dir.path().join("twice.pdf");
    let (before, after) = compress(&once, Quality::Screen, &twice, &mut |_| {}).unwrap();
    assert!(after <= before, "{after} > {before}");
    if after == before {
        assert_eq!(std::fs::read(&once).unwrap(), std::fs::read(&twice).unwrap());
    }
    assert_eq!(page_count(&twice).unwrap(), 1);

    // A file of nothing but a small JPEG: nothing to gain, so the input comes back as it was.
    let tiny = dir.path().join("tiny.pdf");
    write_pdf(
        &tiny,
        vec![TestPage {
            width: 100,
            height: 100,
            operations: draw("Im1", 0.0, 0.0, 100.0, 100.0),
        }],
        |doc| {
            let data = jpeg(&photo_pixels(50, 50), 50, 50, jpeg_encoder::ColorType::Rgb, 50);
            let image = doc.add_object(Stream::new(
                dictionary! {
                    "Type" => "XObject", "Subtype" => "Image", "Width" => 50, "Height" => 50,
                    "ColorSpace" => "DeviceRGB", "BitsPerComponent" => 8, "Filter" => "DCTDecode",
                },
                data,
            ));
            let mut xobjects = Dictionary::new();
            xobjects.set("Im1", image);
            xobjects
        },
    );
    let out = dir.path().join("tiny out.pdf");
    let (before, after) = compress(&tiny, Quality::Printer, &out, &mut |_| {}).unwrap();
    assert!(after <= before);
    assert_eq!(after, std::fs::metadata(&out).unwrap().len());
}

#[test]
fn garbage_is_a_client_error() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("random.pdf");
    std::fs::write(&input, common::noise(5_000, 9)).unwrap();
    let error = compress(&input, Quality::Ebook, &dir.path().join("o.pdf"), &mut |_| {}).unwrap_err();
    assert!(error.is_client_error(), "{error:?}");
}
