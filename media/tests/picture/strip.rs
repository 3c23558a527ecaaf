use drive_media::picture::{Dimensions, PictureError, dimensions, strip_metadata};
use image::DynamicImage;

use super::{
    Scratch, contains, decode, exif_app1, exif_tiff, extended_webp, gradient, halves, jpeg_bytes, png_bytes,
    png_chunk, webp_bytes, with_jpeg_segments, with_png_chunks,
};

#[test]
fn jpeg_loses_exif_and_comments_but_keeps_every_scan_byte() {
    let scratch = Scratch::new();
    let clean = jpeg_bytes(&gradient(120, 80));
    let exif = exif_app1(1);
    let xmp = b"http://ns.adobe.com/xap/1.0/\0<x:xmpmeta>Alice</x:xmpmeta>".as_slice();
    let dirty = with_jpeg_segments(
        &clean,
        &[
            (0xE1, &exif),
            (0xFE, b"secret comment"),
            (0xE1, xmp),
            (0xED, b"Photoshop 3.0\0IPTC"),
        ],
    );
    let mut with_tail = dirty.clone();
    with_tail.extend(b"trailing preview picture with its own Exif");
    let input = scratch.file("in.jpg", &with_tail);
    let output = scratch.path("out.jpg");

    strip_metadata(&input, &output).unwrap();

    let stripped = std::fs::read(&output).unwrap();
    assert_eq!(
        stripped, clean,
        "the output should be the picture before metadata was added"
    );
    assert!(
        !contains(&stripped, b"Exif") && !contains(&stripped, b"secret") && !contains(&stripped, b"Alice")
    );
    assert_eq!(
        decode(&output).to_rgb8(),
        decode(&scratch.file("dirty.jpg", &dirty)).to_rgb8()
    );
}

#[test]
fn jpeg_keeps_its_colour_profile() {
    let scratch = Scratch::new();
    let clean = jpeg_bytes(&gradient(40, 30));
    let mut icc = b"ICC_PROFILE\0\x01\x01".to_vec();
    icc.extend([7; 100]);
    let input = scratch.file(
        "in.jpg",
        &with_jpeg_segments(&clean, &[(0xE2, &icc), (0xE1, &exif_app1(1))]),
    );
    let output = scratch.path("out.jpg");
    strip_metadata(&input, &output).unwrap();
    let stripped = std::fs::read(&output).unwrap();
    assert!(contains(&stripped, &icc));
    assert!(!contains(&stripped, b"Exif"));
}

#[test]
fn a_turned_jpeg_is_re_encoded_upright() {
    let scratch = Scratch::new();
    let input = scratch.file(
        "in.jpg",
        &with_jpeg_segments(&jpeg_bytes(&halves(60, 40)), &[(0xE1, &exif_app1(6))]),
    );
    let output = scratch.path("out.jpg");
    strip_metadata(&input, &output).unwrap();
    let stripped = std::fs::read(&output).unwrap();
    assert!(!contains(&stripped, b"Exif"));
    assert_eq!(
        dimensions(&output).unwrap(),
        Dimensions {
            width: 40,
            height: 60
        }
    );
    let upright = decode(&output).to_rgb8();
    assert!(upright.get_pixel(20, 5)[0] > 200, "red is on top");
    assert!(upright.get_pixel(20, 55)[2] > 200, "blue is at the bottom");
}

#[test]
fn png_loses_text_exif_and_time_chunks() {
    let scratch = Scratch::new();
    let clean = png_bytes(&DynamicImage::ImageRgb8(gradient(50, 30)));
    let gamma = png_chunk(b"gAMA", &45455u32.to_be_bytes());
    let chunks = [
        png_chunk(b"tEXt", b"Author\0Alice"),
        gamma.clone(),
        png_chunk(b"iTXt", b"XML:com.adobe.xmp\0\0\0\0\0<x:xmpmeta/>"),
        png_chunk(b"eXIf", &exif_tiff(1)),
        png_chunk(b"tIME", &[7, 234, 1, 2, 3, 4, 5]),
    ];
    let input = scratch.file("in.png", &with_png_chunks(&clean, &chunks));
    let output = scratch.path("out.png");
    strip_metadata(&input, &output).unwrap();
    let stripped = std::fs::read(&output).unwrap();
    assert_eq!(stripped, with_png_chunks(&clean, &[gamma]));
    assert!(!contains(&stripped, b"Alice"));
    assert_eq!(decode(&output).to_rgb8(), decode(&input).to_rgb8());
}

#[test]
fn webp_loses_exif_and_xmp_and_their_flags() {
    let scratch = Scratch::new();
    let picture = gradient(64, 48);
    let simple = webp_bytes(&picture);
    let xmp = b"<x:xmpmeta>Alice</x:xmpmeta>".as_slice();
    let exif = exif_tiff(1);
    let input = scratch.file(
        "in.webp",
        &extended_webp(&simple, 64, 48, 0x08 | 0x04, &[(b"EXIF", &exif), (b"XMP ", xmp)]),
    );
    let output = scratch.path("out.webp");
    strip_metadata(&input, &output).unwrap();

    let stripped = std::fs::read(&output).unwrap();
    assert_eq!(stripped, extended_webp(&simple, 64, 48, 0, &[]));
    assert!(!contains(&stripped, b"EXIF") && !contains(&stripped, b"Alice"));
    assert_eq!(
        u32::from_le_bytes(stripped[4..8].try_into().unwrap()) as usize,
        stripped.len() - 8
    );
    assert_eq!(decode(&output).to_rgb8(), decode(&input).to_rgb8());
}

#[test]
fn a_turned_webp_is_re_encoded_upright() {
    let scratch = Scratch::new();
    let simple = webp_bytes(&halves(60, 40));
    let input = scratch.file(
        "in.webp",
        &extended_webp(&simple, 60, 40, 0x08, &[(b"EXIF", &exif_tiff(6))]),
    );
    assert_eq!(
        dimensions(&input).unwrap(),
        Dimensions {
            width: 40,
            height: 60
        }
    );
    let output = scratch.path("out.webp");
    strip_metadata(&input, &output).unwrap();
    assert!(!contains(&std::fs::read(&output).unwrap(), b"EXIF"));
    let upright = decode(&output).to_rgb8();
    assert_eq!(upright.dimensions(), (40, 60));
    assert!(upright.get_pixel(20, 5)[0] > 200, "red is on top");
}

#[test]
fn other_formats_are_refused() {
    let scratch = Scratch::new();
    let mut gif = std::io::Cursor::new(Vec::new());
    DynamicImage::ImageRgb8(gradient(10, 10))
        .write_to(&mut gif, image::ImageFormat::Gif)
        .unwrap();
    let input = scratch.file("in.gif", &gif.into_inner());
    let error = strip_metadata(&input, &scratch.path("out")).unwrap_err();
    assert!(matches!(error, PictureError::Unsupported(_)), "{error:?}");
    assert!(error.is_client_error());
}
