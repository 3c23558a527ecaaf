//! Building PDFs from pictures.

mod common;

use std::path::{Path, PathBuf};

use common::{jpeg, page_sizes};
use drive_pdf::{PageSize, PdfError, from_pictures, page_count, render_pages};
use image::{ImageFormat, Rgb, RgbImage, Rgba, RgbaImage};
use jpeg_encoder::ColorType;
use lopdf::{Document, Object};

/// A JPEG `width` × `height`, its left half red and right half blue, with an EXIF orientation
/// when given.
fn halves_jpeg(dir: &Path, name: &str, width: u16, height: u16, orientation: Option<u16>) -> PathBuf {
    let pixels = RgbImage::from_fn(width.into(), height.into(), |x, _| {
        if x < u32::from(width) / 2 {
            Rgb([255, 0, 0])
        } else {
            Rgb([0, 0, 255])
        }
    });
    let mut data = Vec::new();
    let mut encoder = jpeg_encoder::Encoder::new(&mut data, 90);
    if let Some(orientation) = orientation {
        // A big-endian TIFF header and one IFD entry: Orientation (0x0112), SHORT, 1 value.
        let mut exif = b"MM\0\x2A\0\0\0\x08\0\x01\x01\x12\0\x03\0\0\0\x01".to_vec();
        exif.extend(orientation.to_be_bytes());
        exif.extend([0, 0, 0, 0, 0, 0]);
        encoder.add_exif_metadata(&exif).unwrap();
    }
    encoder
        .encode(pixels.as_raw(), width, height, ColorType::Rgb)
        .unwrap();
    let path = dir.join(name);
    std::fs::write(&path, data).unwrap();
    path
}

/// A PNG whose left half is transparent and right half opaque black.
fn half_transparent_png(dir: &Path, width: u32, height: u32) -> PathBuf {
    let pixels = RgbaImage::from_fn(width, height, |x, _| {
        if x < width / 2 {
            Rgba([0, 0, 0, 0])
        } else {
            Rgba([0, 0, 0, 255])
        }
    });
    let path = dir.join("half.png");
    pixels.save_with_format(&path, ImageFormat::Png).unwrap();
    path
}

fn render_first(path: &Path, dpi: u32) -> RgbaImage {
    let mut first = None;
    render_pages(path, dpi, None, &mut |_, image| {
        first.get_or_insert(image);
        Ok(())
    })
    .unwrap();
    first.unwrap()
}

#[test]
fn a4_pages_follow_each_pictures_orientation() {
    let dir = tempfile::tempdir().unwrap();
    let pictures = vec![
        halves_jpeg(dir.path(), "wide.jpg", 400, 300, None),
        half_transparent_png(dir.path(), 300, 500),
    ];
    let output = dir.path().join("out.pdf");
    let mut reports = Vec::new();
    let pages = from_pictures(&pictures, PageSize::A4, &output, &mut |p| reports.push(p)).unwrap();
    assert_eq!(pages, 2);
    assert_eq!(page_count(&output).unwrap(), 2);
    assert_eq!(page_sizes(&output), [(842.0, 595.0), (595.0, 842.0)]);
    assert_eq!(reports, [0.5, 1.0]);

    // The JPEG went in as it was.
    let doc = Document::load(&output).unwrap();
    let original = std::fs::read(&pictures[0]).unwrap();
    let embedded = doc
        .objects
        .values()
        .filter_map(|o| o.as_stream().ok())
        .any(|s| s.content == original);
    assert!(embedded, "the JPEG bytes are embedded unchanged");

    // The landscape JPEG fills the width inside the margin: 770 × 577.5 pt, centred.
    let page = render_first(&output, 72);
    assert_eq!(page.dimensions(), (842, 595));
    let red = page.get_pixel(100, 297).0;
    assert!(red[0] > 200 && red[2] < 60, "left half is red: {red:?}");
    let blue = page.get_pixel(700, 297).0;
    assert!(blue[2] > 200 && blue[0] < 60, "right half is blue: {blue:?}");
    let margin = page.get_pixel(20, 297).0;
    assert!(
        margin[..3].iter().all(|&c| c > 240),
        "margin is white: {margin:?}"
    );
}

#[test]
fn fit_pages_have_the_pictures_proportions() {
    let dir = tempfile::tempdir().unwrap();
    let pictures = vec![
        halves_jpeg(dir.path(), "a.jpg", 640, 480, None),
        half_transparent_png(dir.path(), 300, 500),
    ];
    let output = dir.path().join("out.pdf");
    from_pictures(&pictures, PageSize::Fit, &output, &mut |_| {}).unwrap();
    let sizes = page_sizes(&output);
    // 150 pixels per inch: 640 px is 307.2 pt.
    assert!(
        (sizes[0].0 - 307.2).abs() < 0.01 && (sizes[0].1 - 230.4).abs() < 0.01,
        "{sizes:?}"
    );
    assert!(
        (sizes[1].0 / sizes[1].1 - 300.0 / 500.0).abs() < 1e-3,
        "{sizes:?}"
    );
}

#[test]
fn transparency_becomes_a_soft_mask() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("out.pdf");
    from_pictures(
        &[half_transparent_png(dir.path(), 150, 100)],
        PageSize::Fit,
        &output,
        &mut |_| {},
    )
    .unwrap();
    // Fit at 150 dpi renders pixel for pixel.
    let page = render_first(&output, 150);
    assert_eq!(page.dimensions(), (150, 100));
    let see_through = page.get_pixel(30, 50).0;
    assert!(
        see_through[..3].iter().all(|&c| c > 240),
        "transparent half shows the white page: {see_through:?}"
    );
    let black = page.get_pixel(120, 50).0;
    assert!(
        black[..3].iter().all(|&c| c < 20),
        "opaque half is black: {black:?}"
    );
}

#[test]
fn exif_orientation_turns_the_jpeg_upright() {
    let dir = tempfile::tempdir().unwrap();
    // Stored 200 × 100 with red on the left; "rotate 90° clockwise to view" puts red on top.
    let picture = halves_jpeg(dir.path(), "turned.jpg", 200, 100, Some(6));
    let output = dir.path().join("out.pdf");
    from_pictures(&[picture], PageSize::Fit, &output, &mut |_| {}).unwrap();
    assert_eq!(page_sizes(&output), [(48.0, 96.0)]);
    let page = render_first(&output, 150);
    assert_eq!(page.dimensions(), (100, 200));
    let top = page.get_pixel(50, 40).0;
    let bottom = page.get_pixel(50, 160).0;
    assert!(top[0] > 200 && top[2] < 60, "top is red: {top:?}");
    assert!(bottom[2] > 200 && bottom[0] < 60, "bottom is blue: {bottom:?}");
}

#[test]
fn cmyk_and_grey_jpegs_keep_their_colours() {
    let dir = tempfile::tempdir().unwrap();
    // Pure cyan; the encoder writes Adobe's inverted CMYK.
    let cyan = dir.path().join("cyan.jpg");
    std::fs::write(
        &cyan,
        jpeg(&[255, 0, 0, 0].repeat(64 * 64), 64, 64, ColorType::Cmyk, 95),
    )
    .unwrap();
    let grey = dir.path().join("grey.jpg");
    std::fs::write(&grey, jpeg(&[60].repeat(64 * 64), 64, 64, ColorType::Luma, 95)).unwrap();
    let output = dir.path().join("out.pdf");
    from_pictures(&[cyan, grey], PageSize::Fit, &output, &mut |_| {}).unwrap();

    let mut pages = Vec::new();
    render_pages(&output, 150, None, &mut |_, image| {
        pages.push(image);
        Ok(())
    })
    .unwrap();
    let cyan = pages[0].get_pixel(32, 32).0;
    assert!(cyan[0] < 100 && cyan[1] > 120 && cyan[2] > 180, "cyan: {cyan:?}");
    let grey = pages[1].get_pixel(32, 32).0;
    assert!(
        grey[..3].iter().all(|&c| (40..=80).contains(&c)),
        "grey: {grey:?}"
    );
    let doc = Document::load(&output).unwrap();
    let spaces: Vec<Vec<u8>> = doc
        .objects
        .values()
        .filter_map(|o| o.as_stream().ok())
        .filter_map(|s| {
            s.dict
                .get(b"ColorSpace")
                .and_then(Object::as_name)
                .ok()
                .map(<[u8]>::to_vec)
        })
        .collect();
    assert!(
        spaces.contains(&b"DeviceCMYK".to_vec()) && spaces.contains(&b"DeviceGray".to_vec()),
        "{spaces:?}"
    );
}

#[test]
fn every_supported_format_makes_a_page() {
    let dir = tempfile::tempdir().unwrap();
    let pixels = RgbImage::from_fn(40, 20, |x, y| Rgb([(x * 6) as u8, (y * 12) as u8, 90]));
    let formats = [
        (ImageFormat::Png, "png"),
        (ImageFormat::Gif, "gif"),
        (ImageFormat::Bmp, "bmp"),
        (ImageFormat::Tiff, "tiff"),
        (ImageFormat::WebP, "webp"),
    ];
    let mut pictures = Vec::new();
    for (format, extension) in formats {
        // Misleading names: the format is found from the contents.
        let path = dir.path().join(format!("picture {extension}.dat"));
        if format == ImageFormat::Gif {
            image::DynamicImage::ImageRgb8(pixels.clone())
                .to_rgba8()
                .save_with_format(&path, format)
                .unwrap();
        } else {
            pixels.save_with_format(&path, format).unwrap();
        }
        pictures.push(path);
    }
    let output = dir.path().join("out.pdf");
    assert_eq!(
        from_pictures(&pictures, PageSize::Letter, &output, &mut |_| {}).unwrap(),
        5
    );
    assert!(page_sizes(&output).iter().all(|&size| size == (792.0, 612.0)));
}

#[test]
fn a_bad_picture_is_a_client_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let good = halves_jpeg(dir.path(), "good.jpg", 20, 20, None);
    let text = dir.path().join("notes.png");
    std::fs::write(&text, b"just some words").unwrap();
    let output = dir.path().join("out.pdf");
    let error = from_pictures(&[good, text], PageSize::Fit, &output, &mut |_| {}).unwrap_err();
    assert!(error.is_client_error(), "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with("file 2 of 2: the picture could not be read"),
        "{error}"
    );

    // A PNG cut short.
    let png = half_transparent_png(dir.path(), 200, 200);
    let bytes = std::fs::read(&png).unwrap();
    std::fs::write(&png, &bytes[..bytes.len() / 2]).unwrap();
    let error = from_pictures(&[png], PageSize::Fit, &output, &mut |_| {}).unwrap_err();
    assert!(error.is_client_error(), "{error:?}");

    let error = from_pictures(&[], PageSize::Fit, &output, &mut |_| {}).unwrap_err();
    assert!(matches!(error, PdfError::BadInput(_)), "{error:?}");
}
