use drive_media::picture::{Dimensions, PictureError, PictureFormat, Position, Watermark, watermark};
use image::{DynamicImage, Rgb, RgbImage, RgbaImage};

use super::{Scratch, decode, distance, font, jpeg_bytes, png_bytes};

fn grey(width: u32, height: u32) -> DynamicImage {
    DynamicImage::ImageRgb8(RgbImage::from_pixel(width, height, Rgb([128, 128, 128])))
}

/// Pixels that differ from the original by more than `tolerance` within a rectangle.
fn changed(
    before: &RgbaImage,
    after: &RgbaImage,
    x: u32,
    y: u32,
    width: u32,
    height: u32,
    tolerance: u8,
) -> usize {
    let mut count = 0;
    for py in y..y + height {
        for px in x..x + width {
            if distance(*before.get_pixel(px, py), *after.get_pixel(px, py)) > tolerance {
                count += 1;
            }
        }
    }
    count
}

fn run(input: &std::path::Path, output: &std::path::Path, position: Position, opacity: f32) -> Dimensions {
    let font = font();
    watermark(
        input,
        output,
        &Watermark {
            text: "Drive ©2026",
            position,
            opacity,
            font: &font,
        },
    )
    .unwrap()
}

#[test]
fn the_text_lands_in_the_chosen_corner_only() {
    let scratch = Scratch::new();
    let original = grey(400, 300);
    let input = scratch.file("in.png", &png_bytes(&original));
    let before = original.to_rgba8();
    for (position, marked, untouched) in [
        (Position::BottomRight, (200, 150), (0, 0)),
        (Position::TopLeft, (0, 0), (200, 150)),
    ] {
        let output = scratch.path("out.png");
        assert_eq!(
            run(&input, &output, position, 1.0),
            Dimensions {
                width: 400,
                height: 300
            }
        );
        let after = decode(&output).to_rgba8();
        let near = changed(&before, &after, marked.0, marked.1, 200, 150, 0);
        let far = changed(&before, &after, untouched.0, untouched.1, 200, 150, 0);
        assert!(
            near > 200,
            "{position:?}: only {near} pixels changed near the corner"
        );
        assert_eq!(far, 0, "{position:?}: the opposite corner changed");
        // White text with a dark outline: both show up on mid grey.
        let region = after.pixels().filter(|p| p[0] > 230).count();
        let outline = after.pixels().filter(|p| p[0] < 80).count();
        assert!(
            region > 50 && outline > 50,
            "{position:?}: {region} light and {outline} dark pixels"
        );
    }
}

#[test]
fn the_text_is_sized_from_the_shorter_edge() {
    let scratch = Scratch::new();
    let original = grey(600, 400);
    let input = scratch.file("in.png", &png_bytes(&original));
    let output = scratch.path("out.png");
    run(&input, &output, Position::Center, 1.0);
    let after = decode(&output).to_rgba8();
    let rows: Vec<u32> = (0..400)
        .filter(|&y| (0..600).any(|x| after.get_pixel(x, y)[0] > 230))
        .collect();
    let height = rows.last().unwrap() - rows.first().unwrap() + 1;
    // 400 / 20 = 20 px from the top of the tallest glyph to the bottom of the lowest.
    assert!((10..=26).contains(&height), "text is {height} px high");
    let middle = (rows.first().unwrap() + rows.last().unwrap()) / 2;
    assert!((180..=220).contains(&middle), "centred text sits at row {middle}");
}

#[test]
fn zero_opacity_leaves_the_pixels_alone() {
    let scratch = Scratch::new();
    let original = DynamicImage::ImageRgb8(super::gradient(200, 120));
    let input = scratch.file("in.png", &png_bytes(&original));
    let output = scratch.path("out.png");
    run(&input, &output, Position::Center, 0.0);
    assert_eq!(decode(&output).to_rgb8(), original.to_rgb8());
}

#[test]
fn half_opacity_is_fainter_than_full() {
    let scratch = Scratch::new();
    let input = scratch.file("in.png", &png_bytes(&grey(300, 200)));
    let brightest = |opacity| {
        let output = scratch.path("out.png");
        run(&input, &output, Position::Center, opacity);
        decode(&output).to_rgba8().pixels().map(|p| p[0]).max().unwrap()
    };
    let (half, full) = (brightest(0.5), brightest(1.0));
    assert!(full > 245, "solid text is white, got {full}");
    assert!(
        (170..=215).contains(&half),
        "half-opaque white on grey is about 191, got {half}"
    );
}

#[test]
fn the_output_keeps_the_input_format() {
    let scratch = Scratch::new();
    let jpeg = scratch.file("in.jpg", &jpeg_bytes(&super::gradient(160, 120)));
    let output = scratch.path("out");
    run(&jpeg, &output, Position::Bottom, 0.8);
    assert_eq!(PictureFormat::of_path(&output), Some(PictureFormat::Jpg));

    let mut gif = std::io::Cursor::new(Vec::new());
    grey(80, 60).write_to(&mut gif, image::ImageFormat::Gif).unwrap();
    let gif = scratch.file("in.gif", &gif.into_inner());
    run(&gif, &output, Position::Top, 0.8);
    assert_eq!(PictureFormat::of_path(&output), Some(PictureFormat::Png));
}

#[test]
fn tiny_pictures_get_text_that_fits() {
    let scratch = Scratch::new();
    let input = scratch.file("in.png", &png_bytes(&grey(40, 30)));
    let output = scratch.path("out.png");
    assert_eq!(
        run(&input, &output, Position::BottomRight, 1.0),
        Dimensions {
            width: 40,
            height: 30
        }
    );
}

#[test]
fn a_broken_font_is_our_fault_not_the_client_s() {
    let scratch = Scratch::new();
    let input = scratch.file("in.png", &png_bytes(&grey(40, 30)));
    let error = watermark(
        &input,
        &scratch.path("out.png"),
        &Watermark {
            text: "x",
            position: Position::Center,
            opacity: 1.0,
            font: b"not a font",
        },
    )
    .unwrap_err();
    assert!(matches!(error, PictureError::Font(_)), "{error:?}");
    assert!(!error.is_client_error());
}
