use drive_media::picture::{Convert, Dimensions, PictureError, PictureFormat, convert, dimensions};
use image::{DynamicImage, Rgba, RgbaImage};

use super::{
    Scratch, decode, exif_app1, gradient, halves, jpeg_bytes, png_bytes, webp_bytes, with_jpeg_segments,
};

const FORMATS: [PictureFormat; 3] = [PictureFormat::Jpg, PictureFormat::Png, PictureFormat::Webp];

fn inputs(scratch: &Scratch, width: u32, height: u32) -> Vec<std::path::PathBuf> {
    let picture = gradient(width, height);
    vec![
        scratch.file("in.jpg", &jpeg_bytes(&picture)),
        scratch.file("in.png", &png_bytes(&DynamicImage::ImageRgb8(picture.clone()))),
        scratch.file("in.webp", &webp_bytes(&picture)),
    ]
}

#[test]
fn every_format_converts_to_every_format_within_the_edge() {
    let scratch = Scratch::new();
    for input in inputs(&scratch, 300, 200) {
        for format in FORMATS {
            let output = scratch.path(&format!("out.{}", format.extension()));
            let size = convert(
                &input,
                &output,
                &Convert {
                    format,
                    max_edge: Some(120),
                },
            )
            .unwrap();
            let expected = Dimensions {
                width: 120,
                height: 80,
            };
            assert_eq!(size, expected, "{input:?} to {format:?}");
            assert_eq!(PictureFormat::of_path(&output), Some(format));
            assert_eq!(dimensions(&output).unwrap(), expected);
            let decoded = decode(&output);
            assert_eq!((decoded.width(), decoded.height()), (120, 80));
        }
    }
}

#[test]
fn portrait_pictures_fit_by_their_height() {
    let scratch = Scratch::new();
    let input = scratch.file("in.png", &png_bytes(&DynamicImage::ImageRgb8(gradient(200, 301))));
    let output = scratch.path("out.jpg");
    let size = convert(
        &input,
        &output,
        &Convert {
            format: PictureFormat::Jpg,
            max_edge: Some(150),
        },
    )
    .unwrap();
    assert_eq!(
        size,
        Dimensions {
            width: 100,
            height: 150
        }
    );
}

#[test]
fn small_pictures_are_never_enlarged() {
    let scratch = Scratch::new();
    for input in inputs(&scratch, 90, 60) {
        let output = scratch.path("out.png");
        let size = convert(
            &input,
            &output,
            &Convert {
                format: PictureFormat::Png,
                max_edge: Some(1000),
            },
        )
        .unwrap();
        assert_eq!(
            size,
            Dimensions {
                width: 90,
                height: 60
            }
        );
        assert_eq!(decode(&output).width(), 90);
    }
}

#[test]
fn exif_orientation_6_turns_the_picture_clockwise() {
    let scratch = Scratch::new();
    // Stored 60x40, red on the left; turned a quarter clockwise, red is on top.
    let jpeg = with_jpeg_segments(&jpeg_bytes(&halves(60, 40)), &[(0xE1, &exif_app1(6))]);
    let input = scratch.file("in.jpg", &jpeg);
    assert_eq!(
        dimensions(&input).unwrap(),
        Dimensions {
            width: 40,
            height: 60
        }
    );

    let output = scratch.path("out.png");
    let size = convert(
        &input,
        &output,
        &Convert {
            format: PictureFormat::Png,
            max_edge: None,
        },
    )
    .unwrap();
    assert_eq!(
        size,
        Dimensions {
            width: 40,
            height: 60
        }
    );
    let turned = decode(&output).to_rgb8();
    let top = turned.get_pixel(20, 5);
    let bottom = turned.get_pixel(20, 55);
    assert!(top[0] > 200 && top[2] < 60, "top should be red, is {top:?}");
    assert!(
        bottom[2] > 200 && bottom[0] < 60,
        "bottom should be blue, is {bottom:?}"
    );
}

#[test]
fn transparency_becomes_white_in_jpeg_and_stays_in_png() {
    let scratch = Scratch::new();
    let picture = RgbaImage::from_fn(64, 64, |x, _| {
        if x < 32 {
            Rgba([0, 0, 0, 0])
        } else {
            Rgba([0, 0, 0, 255])
        }
    });
    let input = scratch.file("in.png", &png_bytes(&DynamicImage::ImageRgba8(picture)));

    let jpeg = scratch.path("out.jpg");
    convert(
        &input,
        &jpeg,
        &Convert {
            format: PictureFormat::Jpg,
            max_edge: None,
        },
    )
    .unwrap();
    let flattened = decode(&jpeg).to_rgb8();
    assert!(
        flattened.get_pixel(8, 8).0.iter().all(|&c| c > 240),
        "transparent should be white"
    );
    assert!(
        flattened.get_pixel(56, 8).0.iter().all(|&c| c < 15),
        "opaque black stays black"
    );

    let png = scratch.path("out.png");
    convert(
        &input,
        &png,
        &Convert {
            format: PictureFormat::Png,
            max_edge: Some(32),
        },
    )
    .unwrap();
    let kept = decode(&png).to_rgba8();
    assert_eq!(kept.get_pixel(2, 2)[3], 0);
    assert_eq!(kept.get_pixel(30, 2)[3], 255);
}

#[test]
fn a_zero_edge_is_refused_as_the_client_s_mistake() {
    let scratch = Scratch::new();
    let input = scratch.file("in.jpg", &jpeg_bytes(&gradient(20, 20)));
    let error = convert(
        &input,
        &scratch.path("out.jpg"),
        &Convert {
            format: PictureFormat::Jpg,
            max_edge: Some(0),
        },
    )
    .unwrap_err();
    assert!(matches!(error, PictureError::InvalidOptions(_)), "{error:?}");
    assert!(error.is_client_error());
}

#[test]
fn gif_and_bmp_inputs_are_read() {
    let scratch = Scratch::new();
    let picture = DynamicImage::ImageRgb8(gradient(50, 40));
    for (name, format) in [
        ("in.gif", image::ImageFormat::Gif),
        ("in.bmp", image::ImageFormat::Bmp),
    ] {
        let mut bytes = std::io::Cursor::new(Vec::new());
        picture.write_to(&mut bytes, format).unwrap();
        let input = scratch.file(name, &bytes.into_inner());
        assert_eq!(
            dimensions(&input).unwrap(),
            Dimensions {
                width: 50,
                height: 40
            }
        );
        let output = scratch.path("out.webp");
        let size = convert(
            &input,
            &output,
            &Convert {
                format: PictureFormat::Webp,
                max_edge: Some(25),
            },
        )
        .unwrap();
        assert_eq!(
            size,
            Dimensions {
                width: 25,
                height: 20
            }
        );
    }
}
