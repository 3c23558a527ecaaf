use drive_media::picture::{Dimensions, PictureFormat, dimensions, save_rgba};
use image::{DynamicImage, Rgba, RgbaImage};

use super::{Scratch, decode, extended_webp, gradient, jpeg_bytes, png_bytes, webp_bytes};

#[test]
fn dimensions_come_from_every_header_kind() {
    let scratch = Scratch::new();
    let picture = gradient(123, 45);
    let mut lossless = std::io::Cursor::new(Vec::new());
    DynamicImage::ImageRgb8(picture.clone())
        .write_to(&mut lossless, image::ImageFormat::WebP)
        .unwrap();
    let cases = [
        ("jpg", jpeg_bytes(&picture)),
        ("png", png_bytes(&DynamicImage::ImageRgb8(picture.clone()))),
        ("lossy.webp", webp_bytes(&picture)),
        ("lossless.webp", lossless.into_inner()),
        (
            "extended.webp",
            extended_webp(&webp_bytes(&picture), 123, 45, 0, &[]),
        ),
    ];
    for (name, bytes) in cases {
        let path = scratch.file(name, &bytes);
        assert_eq!(
            dimensions(&path).unwrap(),
            Dimensions {
                width: 123,
                height: 45
            },
            "{name}"
        );
    }
}

#[test]
fn formats_are_sniffed_from_their_bytes() {
    assert_eq!(PictureFormat::Png.mime_type(), "image/png");
    assert_eq!(PictureFormat::Webp.extension(), "webp");
    let scratch = Scratch::new();
    // The content decides, not the name.
    let path = scratch.file("picture.png", &jpeg_bytes(&gradient(8, 8)));
    assert_eq!(PictureFormat::of_path(&path), Some(PictureFormat::Jpg));
    assert_eq!(PictureFormat::of_path(&scratch.path("missing")), None);
}

#[test]
fn rgba_pixels_save_in_every_format() {
    let scratch = Scratch::new();
    let opaque = RgbaImage::from_fn(30, 20, |x, _| Rgba([x as u8 * 8, 100, 50, 255]));
    let mut see_through = opaque.clone();
    for (x, y) in (0..16).flat_map(|x| (0..16).map(move |y| (x, y))) {
        see_through.put_pixel(x, y, Rgba([0, 0, 0, 0]));
    }
    for format in [PictureFormat::Jpg, PictureFormat::Png, PictureFormat::Webp] {
        let path = scratch.path(&format!("page.{}", format.extension()));
        save_rgba(&opaque, format, &path).unwrap();
        assert_eq!(PictureFormat::of_path(&path), Some(format));
        let saved = decode(&path);
        assert_eq!((saved.width(), saved.height()), (30, 20));
        assert!(
            !saved.color().has_alpha() || format == PictureFormat::Webp,
            "{format:?} keeps no alpha"
        );

        save_rgba(&see_through, format, &path).unwrap();
        let corner = decode(&path).to_rgba8().get_pixel(4, 4).0;
        match format {
            PictureFormat::Jpg => assert!(corner[..3].iter().all(|&c| c > 230), "{corner:?} is white"),
            _ => assert_eq!(corner[3], 0),
        }
    }
}
