use drive_media::picture::{
    Convert, PictureError, PictureFormat, Position, Watermark, convert, dimensions, strip_metadata, watermark,
};
use image::DynamicImage;

use super::{Scratch, font, gradient, jpeg_bytes, png_bytes, png_chunk};

/// Every entry point on `input` must fail with a client error.
pub(super) fn assert_client_errors(scratch: &Scratch, input: &std::path::Path, what: &str) {
    let font = font();
    let output = scratch.path("out");
    let results: [(&str, Result<(), PictureError>); 4] = [
        ("dimensions", dimensions(input).map(drop)),
        (
            "convert",
            convert(
                input,
                &output,
                &Convert {
                    format: PictureFormat::Png,
                    max_edge: None,
                },
            )
            .map(drop),
        ),
        (
            "watermark",
            watermark(
                input,
                &output,
                &Watermark {
                    text: "x",
                    position: Position::Center,
                    opacity: 1.0,
                    font: &font,
                },
            )
            .map(drop),
        ),
        ("strip", strip_metadata(input, &output)),
    ];
    for (function, result) in results {
        let error = result.expect_err(&format!("{function} accepted {what}"));
        assert!(
            error.is_client_error(),
            "{function} on {what}: {error:?} should be a client error"
        );
    }
}

#[test]
fn random_bytes_are_the_client_s_problem() {
    let scratch = Scratch::new();
    let noise: Vec<u8> = (0u32..4096)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    assert_client_errors(&scratch, &scratch.file("noise", &noise), "random bytes");
    assert_client_errors(&scratch, &scratch.file("empty", b""), "an empty file");
}

#[test]
fn damaged_jpegs_are_the_client_s_problem() {
    let scratch = Scratch::new();
    let jpeg = jpeg_bytes(&gradient(200, 150));
    assert_client_errors(
        &scratch,
        &scratch.file("head.jpg", &jpeg[..12]),
        "a JPEG cut in its header",
    );
    let mut magic_then_noise = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00];
    magic_then_noise.extend([0x5A; 300]);
    assert_client_errors(
        &scratch,
        &scratch.file("noise.jpg", &magic_then_noise),
        "JPEG magic then noise",
    );
}

#[test]
fn a_jpeg_cut_in_its_image_data_is_the_client_s_problem() {
    let scratch = Scratch::new();
    let jpeg = jpeg_bytes(&gradient(200, 150));
    let input = scratch.file("cut.jpg", &jpeg[..jpeg.len() / 2]);
    let convert_error = convert(
        &input,
        &scratch.path("out"),
        &Convert {
            format: PictureFormat::Png,
            max_edge: None,
        },
    )
    .expect_err("a truncated JPEG is not converted");
    assert!(convert_error.is_client_error(), "{convert_error:?}");
    assert!(
        convert_error
            .to_string()
            .starts_with("the picture could not be read"),
        "{convert_error}"
    );
    let strip_error =
        strip_metadata(&input, &scratch.path("out")).expect_err("a truncated JPEG is not stripped");
    assert!(strip_error.is_client_error(), "{strip_error:?}");
}

#[test]
fn a_decompression_bomb_is_refused_before_decoding() {
    let scratch = Scratch::new();
    // A PNG header claiming 30000x30000 RGB pixels (900 megapixels) over a few bytes of data.
    let mut ihdr = 30_000u32.to_be_bytes().to_vec();
    ihdr.extend(30_000u32.to_be_bytes());
    ihdr.extend([8, 2, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(png_chunk(b"IHDR", &ihdr));
    png.extend(png_chunk(
        b"IDAT",
        &[0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01],
    ));
    png.extend(png_chunk(b"IEND", b""));
    let input = scratch.file("bomb.png", &png);
    let error = convert(
        &input,
        &scratch.path("out"),
        &Convert {
            format: PictureFormat::Jpg,
            max_edge: Some(100),
        },
    )
    .unwrap_err();
    assert!(matches!(error, PictureError::TooLarge(_)), "{error:?}");
    assert!(error.is_client_error());
    assert!(
        error.to_string().starts_with("the picture is too large"),
        "{error}"
    );
}

#[test]
fn a_missing_input_is_our_problem() {
    let scratch = Scratch::new();
    let error = convert(
        &scratch.path("nothing"),
        &scratch.path("out"),
        &Convert {
            format: PictureFormat::Jpg,
            max_edge: None,
        },
    )
    .unwrap_err();
    assert!(matches!(error, PictureError::Io(_)), "{error:?}");
    assert!(!error.is_client_error());
}

#[test]
fn a_png_cut_short_is_unreadable() {
    let scratch = Scratch::new();
    let png = png_bytes(&DynamicImage::ImageRgb8(gradient(100, 100)));
    let input = scratch.file("cut.png", &png[..png.len() / 2]);
    let error = strip_metadata(&input, &scratch.path("out")).unwrap_err();
    assert!(matches!(error, PictureError::Unreadable(_)), "{error:?}");
}
