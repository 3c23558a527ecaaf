//! Decoded pixels in the two layouts the pipelines work on: 8-bit RGB, or RGBA when the picture has
//! an alpha channel. Opaque pictures skip the fourth byte, a quarter less memory for big photos.

use fast_image_resize::images::{Image, ImageRef};
use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};
use image::DynamicImage;

use super::encode::Pixels;
use super::{Dimensions, PictureError};

pub(crate) struct Canvas {
    /// Rows top to bottom, 3 or 4 bytes a pixel.
    pub data: Vec<u8>,
    pub width: u32,
    pub height: u32,
    pub alpha: bool,
}

impl Canvas {
    /// Converts to 8 bits a channel; 16-bit and float pictures lose precision no output needs.
    pub fn from_image(image: DynamicImage) -> Self {
        let (width, height) = (image.width(), image.height());
        if image.color().has_alpha() {
            Canvas {
                data: image.into_rgba8().into_raw(),
                width,
                height,
                alpha: true,
            }
        } else {
            Canvas {
                data: image.into_rgb8().into_raw(),
                width,
                height,
                alpha: false,
            }
        }
    }

    pub fn dimensions(&self) -> Dimensions {
        Dimensions {
            width: self.width,
            height: self.height,
        }
    }

    pub fn channels(&self) -> usize {
        if self.alpha { 4 } else { 3 }
    }

    pub fn view(&self) -> Pixels<'_> {
        Pixels {
            data: &self.data,
            width: self.width,
            height: self.height,
            alpha: self.alpha,
        }
    }

    /// Shrinks so the longer edge is at most `max_edge`, keeping the aspect ratio; never enlarges.
    /// Catmull-Rom is nearly as sharp as Lanczos3 when shrinking, at two thirds of the cost.
    pub fn shrink_to_fit(&mut self, max_edge: u32) -> Result<(), PictureError> {
        let target = fit(self.dimensions(), max_edge);
        if target == self.dimensions() {
            return Ok(());
        }
        let pixel_type = if self.alpha {
            PixelType::U8x4
        } else {
            PixelType::U8x3
        };
        let source = ImageRef::new(self.width, self.height, &self.data, pixel_type).map_err(resize_error)?;
        let mut resized = Image::new(target.width, target.height, pixel_type);
        // Alpha is premultiplied during the resize (the default), so transparent pixels' colours
        // do not bleed into their neighbours.
        let options = ResizeOptions::new().resize_alg(ResizeAlg::Convolution(FilterType::CatmullRom));
        Resizer::new()
            .resize(&source, &mut resized, &options)
            .map_err(resize_error)?;
        self.data = resized.into_vec();
        self.width = target.width;
        self.height = target.height;
        Ok(())
    }
}

/// The size within `max_edge` on its longer side, rounded, never below 1 pixel nor above the
/// original.
fn fit(size: Dimensions, max_edge: u32) -> Dimensions {
    let longer = size.width.max(size.height);
    if longer <= max_edge {
        return size;
    }
    let scale = f64::from(max_edge) / f64::from(longer);
    let side = |length: u32| ((f64::from(length) * scale).round() as u32).clamp(1, max_edge);
    Dimensions {
        width: side(size.width),
        height: side(size.height),
    }
}

/// Our buffers always match their sizes, so a resize failure is a bug on our side.
fn resize_error(error: impl std::fmt::Display) -> PictureError {
    PictureError::Encode(format!("resizing failed: {error}"))
}
