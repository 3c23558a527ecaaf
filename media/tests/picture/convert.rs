use std::path::Path;

use drive_media::picture::{Convert, Dimensions, PictureError, PictureFormat, convert, dimensions};
use image::{DynamicImage, Rgb, RgbImage, Rgba, RgbaImage};

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

/// Broad areas of colour with fine detail on top, so a shrunk copy can be told apart from a wrong
/// one by its mean colours.
fn landscape(width: u32, height: u32) -> RgbImage {
    RgbImage::from_fn(width, height, |x, y| {
        let (u, v) = (x * 256 / width, y * 256 / height);
        let detail = (x * 7 + y * 3) % 16;
        let sun = if u.abs_diff(180).pow(2) + v.abs_diff(64).pow(2) < 26 * 26 {
            100
        } else {
            0
        };
        let stripes = if (u / 32) % 2 == 0 { 80 } else { 0 };
        Rgb([
            (40 + u * 3 / 5 + detail + sun).min(255) as u8,
            (200 - v / 2 + detail) as u8,
            (30 + stripes + sun + if v < 100 { 60 } else { 0 }) as u8,
        ])
    })
}

/// A JPEG at quality 90 with 4:2:0 chroma, as cameras write them.
fn camera_jpeg(picture: &RgbImage) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut encoder = jpeg_encoder::Encoder::new(&mut bytes, 90);
    encoder.set_sampling_factor(jpeg_encoder::SamplingFactor::R_4_2_0);
    encoder
        .encode(
            picture.as_raw(),
            picture.width() as u16,
            picture.height() as u16,
            jpeg_encoder::ColorType::Rgb,
        )
        .expect("encode a test JPEG");
    bytes
}

/// Mean colour of each cell of an 8 by 8 grid laid over the picture, from at most about 100 by 100
/// pixels of each cell.
fn cell_means(picture: &RgbImage) -> Vec<[f64; 3]> {
    const CELLS: u32 = 8;
    let (width, height) = picture.dimensions();
    let step = (width.max(height) / (CELLS * 100)).max(1) as usize;
    let mut means = Vec::new();
    for row in 0..CELLS {
        for column in 0..CELLS {
            let (left, right) = (column * width / CELLS, (column + 1) * width / CELLS);
            let (top, bottom) = (row * height / CELLS, (row + 1) * height / CELLS);
            let mut sum = [0.0; 3];
            let mut count = 0.0;
            for y in (top..bottom).step_by(step) {
                for x in (left..right).step_by(step) {
                    for (total, value) in sum.iter_mut().zip(picture.get_pixel(x, y).0) {
                        *total += f64::from(value);
                    }
                    count += 1.0;
                }
            }
            means.push(sum.map(|total| total / count));
        }
    }
    means
}

/// `shrunk`'s mean colours, over an 8 by 8 grid, are `reference`'s to within 4 levels.
fn assert_same_colours(reference: &RgbImage, shrunk: &RgbImage) {
    let expected = cell_means(reference);
    for (cell, (expected, actual)) in expected.iter().zip(&cell_means(shrunk)).enumerate() {
        for channel in 0..3 {
            let difference = (expected[channel] - actual[channel]).abs();
            assert!(
                difference < 4.0,
                "cell {cell} channel {channel}: {actual:?} where {expected:?} was expected"
            );
        }
    }
}

fn to_jpeg(input: &Path, output: &Path, max_edge: u32) -> Dimensions {
    convert(
        input,
        output,
        &Convert {
            format: PictureFormat::Jpg,
            max_edge: Some(max_edge),
        },
    )
    .unwrap()
}

#[test]
fn a_big_jpeg_shrunk_a_lot_has_the_exact_size_and_its_colours() {
    // An eighth of 4000x3000 is exactly 500x375: the JPEG is decoded at that scale.
    let scratch = Scratch::new();
    let picture = landscape(4000, 3000);
    let input = scratch.file("in.jpg", &camera_jpeg(&picture));
    let output = scratch.path("out.jpg");
    let expected = Dimensions {
        width: 500,
        height: 375,
    };
    assert_eq!(to_jpeg(&input, &output, 500), expected);
    assert_eq!(dimensions(&output).unwrap(), expected);
    assert_same_colours(&picture, &decode(&output).to_rgb8());
}

#[test]
fn a_jpeg_decoded_reduced_is_sized_from_its_full_size_and_looks_like_a_full_decode() {
    // A quarter of 1601x1199 rounds up to 401x300, which would fit 400 as 400x299; the full size
    // fits as 400x300, and that is what a full decode has always given.
    let scratch = Scratch::new();
    let input = scratch.file("in.jpg", &camera_jpeg(&landscape(1601, 1199)));
    let output = scratch.path("out.jpg");
    let expected = Dimensions {
        width: 400,
        height: 300,
    };
    assert_eq!(to_jpeg(&input, &output, 400), expected);
    assert_eq!(dimensions(&output).unwrap(), expected);
    assert_same_colours(&decode(&input).to_rgb8(), &decode(&output).to_rgb8());
}
#[test]
fn a_jpeg_decoded_reduced_is_turned_by_its_exif_orientation() {
    // Stored 1600x1200, red on the left; turned a quarter clockwise and shrunk to 200 pixels, red
    // is on top.
    let scratch = Scratch::new();
    let jpeg = with_jpeg_segments(&jpeg_bytes(&halves(1600, 1200)), &[(0xE1, &exif_app1(6))]);
    let input = scratch.file("in.jpg", &jpeg);
    let output = scratch.path("out.png");
    let size = convert(
        &input,
        &output,
        &Convert {
            format: PictureFormat::Png,
            max_edge: Some(200),
        },
    )
    .unwrap();
    assert_eq!(
        size,
        Dimensions {
            width: 150,
            height: 200
        }
    );
    let turned = decode(&output).to_rgb8();
    assert_eq!(turned.dimensions(), (150, 200));
    let top = turned.get_pixel(75, 20);
    let bottom = turned.get_pixel(75, 180);
    assert!(top[0] > 200 && top[2] < 60, "top should be red, is {top:?}");
    assert!(
        bottom[2] > 200 && bottom[0] < 60,
        "bottom should be blue, is {bottom:?}"
    );
}

#[test]
fn grey_and_cmyk_jpegs_shrink_with_their_colours() {
    let scratch = Scratch::new();
    let picture = landscape(1200, 800);
    let grey = DynamicImage::ImageRgb8(picture.clone()).to_luma8();
    let cmyk: Vec<u8> = picture
        .pixels()
        .flat_map(|&Rgb([r, g, b])| {
            let k = 255 - r.max(g).max(b);
            [255 - r - k, 255 - g - k, 255 - b - k, k]
        })
        .collect();
    for (name, pixels, color) in [
        (
            "grey.jpg",
            grey.as_raw().as_slice(),
            jpeg_encoder::ColorType::Luma,
        ),
        ("cmyk.jpg", cmyk.as_slice(), jpeg_encoder::ColorType::Cmyk),
    ] {
        let mut bytes = Vec::new();
        jpeg_encoder::Encoder::new(&mut bytes, 90)
            .encode(pixels, 1200, 800, color)
            .unwrap();
        let input = scratch.file(name, &bytes);
        let output = scratch.path("out.jpg");
        assert_eq!(
            to_jpeg(&input, &output, 300),
            Dimensions {
                width: 300,
                height: 200
            },
            "{name}"
        );
        assert_same_colours(&decode(&input).to_rgb8(), &decode(&output).to_rgb8());
    }
}
