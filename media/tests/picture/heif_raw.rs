//! HEIC and AVIF (libheif) and camera RAW files (their embedded preview) through every public
//! function, as JPEG, PNG and WebP go.

use std::process::Command;

use drive_media::picture::{
    Convert, Dimensions, PictureFormat, Position, Watermark, convert, dimensions, upright, upright_rgb,
    watermark,
};
use image::{DynamicImage, Rgba, RgbaImage};

use super::errors::assert_client_errors;
use super::{Scratch, decode, font, gradient, halves, jpeg_bytes, png_bytes};

/// `picture` as HEIC, or AVIF when `avif`, made by `heif-enc` from a PNG.
fn heif(scratch: &Scratch, picture: &DynamicImage, avif: bool) -> Vec<u8> {
    let source = scratch.file("source.png", &png_bytes(picture));
    let output = scratch.path(if avif { "made.avif" } else { "made.heic" });
    let mut command = Command::new("heif-enc");
    if avif {
        command.arg("--avif");
    }
    let made = command
        .arg("-q")
        .arg("90")
        .arg("-o")
        .arg(&output)
        .arg(&source)
        .output()
        .expect("heif-enc (apt-get install libheif-examples)");
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    std::fs::read(&output).unwrap()
}

/// A little-endian DNG: IFD0 with `orientation` and the DNG version, and a SubIFD holding
/// `preview` as a JPEG, as cameras store theirs; the sensor data is left out.
fn dng(preview: &[u8], orientation: u16) -> Vec<u8> {
    let entry = |tag: u16, kind: u16, count: u32, value: u32| {
        let mut e = tag.to_le_bytes().to_vec();
        e.extend(kind.to_le_bytes());
        e.extend(count.to_le_bytes());
        e.extend(value.to_le_bytes());
        e
    };
    let ifd0 = 8u32;
    let sub = ifd0 + 2 + 3 * 12 + 4;
    let data = sub + 2 + 3 * 12 + 4;
    let mut out = b"II*\0".to_vec();
    out.extend(ifd0.to_le_bytes());
    out.extend(3u16.to_le_bytes());
    out.extend(entry(0x0112, 3, 1, u32::from(orientation)));
    out.extend(entry(0x014A, 4, 1, sub));
    out.extend(entry(0xC612, 1, 4, 0x0000_0401));
    out.extend(0u32.to_le_bytes());
    out.extend(3u16.to_le_bytes());
    out.extend(entry(0x00FE, 4, 1, 1));
    out.extend(entry(0x0201, 4, 1, data));
    out.extend(entry(0x0202, 4, 1, preview.len() as u32));
    out.extend(0u32.to_le_bytes());
    out.extend(preview);
    out
}

fn to(format: PictureFormat, max_edge: Option<u32>) -> Convert {
    Convert { format, max_edge }
}

fn size(width: u32, height: u32) -> Dimensions {
    Dimensions { width, height }
}

/// Red on the left and blue on the right of a `width` x `height` picture.
fn is_halves(picture: &DynamicImage) -> bool {
    let picture = picture.to_rgb8();
    let (w, h) = picture.dimensions();
    let (left, right) = (
        picture.get_pixel(w / 8, h / 2),
        picture.get_pixel(w - w / 8, h / 2),
    );
    left[0] > 200 && left[2] < 60 && right[2] > 200 && right[0] < 60
}

#[test]
fn heic_and_avif_are_read_by_every_function() {
    let scratch = Scratch::new();
    let font = font();
    for avif in [false, true] {
        let what = if avif { "AVIF" } else { "HEIC" };
        let input = scratch.file(
            "input",
            &heif(&scratch, &DynamicImage::ImageRgb8(halves(64, 48)), avif),
        );
        assert_eq!(dimensions(&input).unwrap(), size(64, 48), "{what}");
        assert!(is_halves(&upright(&input).unwrap()), "{what}");
        assert_eq!(upright_rgb(&input).unwrap().dimensions(), (64, 48), "{what}");

        for format in [PictureFormat::Jpg, PictureFormat::Png, PictureFormat::Webp] {
            let output = scratch.path("out");
            let made = convert(&input, &output, &to(format, Some(32))).unwrap();
            assert_eq!(made, size(32, 24), "{what} to {format:?}");
            let back = decode(&output);
            assert_eq!((back.width(), back.height()), (32, 24), "{what} to {format:?}");
            assert!(is_halves(&back), "{what} to {format:?}");
        }

        // Written as PNG, the format for what is read but never written.
        let output = scratch.path("marked");
        let mark = Watermark {
            text: "DRIVE",
            position: Position::Center,
            opacity: 1.0,
            font: &font,
        };
        assert_eq!(watermark(&input, &output, &mark).unwrap(), size(64, 48), "{what}");
        assert_eq!(
            PictureFormat::of_path(&output),
            Some(PictureFormat::Png),
            "{what}"
        );
    }
}

#[test]
fn a_heif_picture_keeps_its_transparency_in_png() {
    let scratch = Scratch::new();
    let see_through = RgbaImage::from_fn(40, 30, |x, _| {
        if x < 20 {
            Rgba([0, 200, 0, 255])
        } else {
            Rgba([0, 0, 0, 0])
        }
    });
    let input = scratch.file(
        "input",
        &heif(&scratch, &DynamicImage::ImageRgba8(see_through), false),
    );
    let output = scratch.path("out.png");
    convert(&input, &output, &to(PictureFormat::Png, None)).unwrap();
    let back = decode(&output).to_rgba8();
    assert!(back.get_pixel(5, 15)[3] > 200, "{:?}", back.get_pixel(5, 15));
    assert!(back.get_pixel(35, 15)[3] < 50, "{:?}", back.get_pixel(35, 15));
}

#[test]
fn a_raw_file_is_read_by_its_preview_turned_as_the_file_says() {
    let scratch = Scratch::new();
    // Stored 60x40, red on the left; the RAW file says to turn it a quarter right: red on top.
    let input = scratch.file("input", &dng(&jpeg_bytes(&halves(60, 40)), 6));
    assert_eq!(dimensions(&input).unwrap(), size(40, 60));
    let turned = upright(&input).unwrap().to_rgb8();
    assert_eq!(turned.dimensions(), (40, 60));
    let (top, bottom) = (turned.get_pixel(20, 5), turned.get_pixel(20, 55));
    assert!(top[0] > 200 && top[2] < 60, "top should be red, is {top:?}");
    assert!(
        bottom[2] > 200 && bottom[0] < 60,
        "bottom should be blue, is {bottom:?}"
    );

    // A big preview shrunk a lot (decoded reduced), turned after.
    let input = scratch.file("big", &dng(&jpeg_bytes(&gradient(1600, 1200)), 6));
    let output = scratch.path("out.jpg");
    assert_eq!(
        convert(&input, &output, &to(PictureFormat::Jpg, Some(200))).unwrap(),
        size(150, 200)
    );
    let back = decode(&output).to_rgb8();
    assert_eq!(back.dimensions(), (150, 200));
    // The stored left edge (no red) is now the top.
    assert!(back.get_pixel(75, 5)[0] + 150 < back.get_pixel(75, 195)[0]);

    // Not a preview: a plain TIFF is still a TIFF.
    let mut tiff = std::io::Cursor::new(Vec::new());
    DynamicImage::ImageRgb8(halves(30, 20))
        .write_to(&mut tiff, image::ImageFormat::Tiff)
        .unwrap();
    let input = scratch.file("plain.tif", tiff.get_ref());
    assert_eq!(dimensions(&input).unwrap(), size(30, 20));
    assert!(is_halves(&upright(&input).unwrap()));
}

#[test]
fn damaged_heif_and_raw_files_are_the_client_s_problem() {
    let scratch = Scratch::new();
    let heic = heif(&scratch, &DynamicImage::ImageRgb8(gradient(64, 48)), false);
    let cut = scratch.file("cut.heic", &heic[..heic.len() / 2]);
    assert_client_errors(&scratch, &cut, "a HEIC cut in half");
    // A RAW file whose preview is cut short in its image data: its header still gives the size,
    // as a cut JPEG's does, but its pixels are not there to decode.
    let preview = jpeg_bytes(&gradient(64, 48));
    let raw = scratch.file("cut.dng", &dng(&preview[..preview.len() - 200], 1));
    assert_eq!(dimensions(&raw).unwrap(), size(64, 48));
    let output = scratch.path("out.png");
    for error in [
        convert(&raw, &output, &to(PictureFormat::Png, None)).map(drop),
        upright(&raw).map(drop),
    ] {
        assert!(error.expect_err("a cut preview was decoded").is_client_error());
    }
}
