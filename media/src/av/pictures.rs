//! Frames as pictures: a still at a moment, a contact sheet of many (or of pictures, decoded
//! by [`crate::picture::upright_rgb`]), and the cover art a track carries.

use std::path::Path;

use ffmpeg::util::format::Pixel;
use image::{RgbImage, imageops};

use super::graph::{Filtered, Flow, Outputs, Pipeline};
use super::{AvError, Input, ffmpeg};
use crate::picture::{PictureFormat, save_rgba};

/// The first frame at or after `at` seconds, at its display size.
pub fn frame_at(location: &str, at: f64) -> Result<RgbImage, AvError> {
    let input = Input {
        location: location.to_string(),
        start: at,
        end: Some(at + 0.5),
    };
    // Square pixels, so the picture shows as the video does.
    let spec = "[v0]scale='trunc(iw*sar/2)*2':ih,setsar=1[vout]";
    let pipeline = Pipeline::new(
        vec![input.open()?],
        spec,
        Outputs {
            video: Some(Pixel::RGB24),
            audio: None,
        },
    )?;
    let mut picture = None;
    pipeline.run(&mut |frame, _| {
        if let Filtered::Video(frame) = frame {
            picture = Some(to_image(frame));
            return Ok(Flow::Enough);
        }
        Ok(Flow::More)
    })?;
    picture.ok_or_else(|| AvError::Input(format!("there is no picture at {at:.2} s")))
}

fn to_image(frame: &ffmpeg::frame::Video) -> RgbImage {
    let (width, height) = (frame.width(), frame.height());
    let stride = frame.stride(0);
    let data = frame.data(0);
    let row = width as usize * 3;
    let mut pixels = Vec::with_capacity(row * height as usize);
    for y in 0..height as usize {
        pixels.extend_from_slice(&data[y * stride..y * stride + row]);
    }
    RgbImage::from_raw(width, height, pixels).expect("rows were copied to the frame's size")
}

/// A picture scaled to `width`, its aspect kept: one cell of a contact sheet.
pub fn cell(picture: &RgbImage, width: u32) -> RgbImage {
    let height = (u64::from(picture.height()) * u64::from(width) / u64::from(picture.width().max(1))).max(1);
    if picture.width() > width {
        // Shrinking, averaging areas looks as good as a filter and takes a fraction of the
        // time: a video's dozen frames are the bulk of a contact sheet's work otherwise.
        imageops::thumbnail(picture, width, height as u32)
    } else {
        imageops::resize(picture, width, height as u32, imageops::FilterType::Triangle)
    }
}

/// Cells (see [`cell`]) in a grid `columns` wide, each centred in a row as tall as its
/// tallest, with a thin dark border.
pub fn contact_sheet(cells: &[RgbImage], columns: u32) -> RgbImage {
    const GAP: u32 = 4;
    let columns = columns.clamp(1, cells.len().max(1) as u32);
    let rows = (cells.len() as u32).div_ceil(columns);
    let cell_width = cells.iter().map(RgbImage::width).max().unwrap_or(1);
    let cell_height = cells.iter().map(RgbImage::height).max().unwrap_or(1);
    let mut sheet = RgbImage::from_pixel(
        columns * cell_width + (columns + 1) * GAP,
        rows * cell_height + (rows + 1) * GAP,
        image::Rgb([16, 16, 16]),
    );
    for (n, picture) in cells.iter().enumerate() {
        let (column, row) = (n as u32 % columns, n as u32 / columns);
        let x = GAP + column * (cell_width + GAP) + (cell_width - picture.width()) / 2;
        let y = GAP + row * (cell_height + GAP) + (cell_height - picture.height()) / 2;
        imageops::replace(&mut sheet, picture, i64::from(x), i64::from(y));
    }
    sheet
}

/// Writes the cover art a file carries (the bytes it was stored as) to `path`; answers its
/// extension (`png` or `jpg`), or `None` when there is none.
pub fn cover_art(location: &str, path: &Path) -> Result<Option<&'static str>, AvError> {
    let mut context = super::source::open(location)?;
    let cover = context.streams().find(|s| {
        // SAFETY: reads the disposition of an opened stream.
        unsafe { (*s.as_ptr()).disposition & ffmpeg::ffi::AV_DISPOSITION_ATTACHED_PIC != 0 }
    });
    let Some(index) = cover.map(|s| s.index()) else {
        return Ok(None);
    };
    // The demuxer hands the attached picture over before any other packet.
    for (stream, packet) in context.packets() {
        if stream.index() == index {
            let data = packet.data().unwrap_or_default();
            if data.is_empty() {
                return Ok(None);
            }
            std::fs::write(path, data).map_err(|e| AvError::machine("writing the cover art", e))?;
            return Ok(Some(if data.starts_with(b"\x89PNG") {
                "png"
            } else {
                "jpg"
            }));
        }
    }
    Ok(None)
}

/// Writes a frame or sheet as a picture file.
pub fn save(picture: &RgbImage, format: PictureFormat, path: &Path) -> Result<(), AvError> {
    let rgba = image::DynamicImage::ImageRgb8(picture.clone()).to_rgba8();
    save_rgba(&rgba, format, path).map_err(|e| AvError::machine("writing a picture", e))
}
