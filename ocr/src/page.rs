//! The pictures a reader takes, and the size they are read at.

use std::borrow::Cow;

use fast_image_resize::images::{Image, ImageRef};
use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};
use image::{GrayImage, RgbImage};

/// The most pixels read: an A4 page at about 400 dpi. Printed text needs about 300 dpi, so a
/// larger picture is shrunk to this first, which bounds Tesseract's memory (a few times the
/// pixel count) whatever the picture.
pub const MAX_PIXELS: u64 = 16_000_000;

/// The longest side read: Tesseract keeps coordinates in 16 bits.
pub const MAX_SIDE: u32 = 30_000;

/// Tesseract refuses pictures narrower or lower than this; no letter fits in them anyway.
const MIN_SIDE: u32 = 3;

/// A picture a [`Reader`](crate::Reader) reads: [`GrayImage`] or [`RgbImage`] (Tesseract makes its
/// own grey from colour, which keeps coloured text on coloured ground apart).
pub trait Page: sealed::Sealed {
    #[doc(hidden)]
    fn as_pixels(&self) -> Pixels<'_>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for image::GrayImage {}
    impl Sealed for image::RgbImage {}
}

impl Page for GrayImage {
    fn as_pixels(&self) -> Pixels<'_> {
        Pixels {
            data: Cow::Borrowed(self.as_raw()),
            width: self.width(),
            height: self.height(),
            channels: 1,
        }
    }
}

impl Page for RgbImage {
    fn as_pixels(&self) -> Pixels<'_> {
        Pixels {
            data: Cow::Borrowed(self.as_raw()),
            width: self.width(),
            height: self.height(),
            channels: 3,
        }
    }
}

/// Rows of 8-bit pixels, `channels` bytes each, with no padding.
#[doc(hidden)]
pub struct Pixels<'a> {
    data: Cow<'a, [u8]>,
    width: u32,
    height: u32,
    channels: u32,
}

impl Pixels<'_> {
    pub(crate) fn as_raw(&self) -> (&[u8], u32, u32, u32) {
        (&self.data, self.width, self.height, self.channels)
    }

    /// The picture turned by 180°: its pixels in reverse order.
    pub(crate) fn turned_half_round(&self) -> Pixels<'static> {
        let data = self
            .data
            .chunks_exact(self.channels as usize)
            .rev()
            .flatten()
            .copied()
            .collect();
        Pixels {
            data: Cow::Owned(data),
            ..*self
        }
    }
}

/// The picture as it is read: itself, or a copy shrunk within [`MAX_PIXELS`] and [`MAX_SIDE`];
/// `None` when it is too small to read.
pub(crate) fn fit(page: &impl Page) -> Option<Pixels<'_>> {
    let pixels = page.as_pixels();
    let (width, height) = (pixels.width, pixels.height);
    if width < MIN_SIDE || height < MIN_SIDE {
        return None;
    }
    let area = u64::from(width) * u64::from(height);
    let scale = [
        (MAX_PIXELS as f64 / area as f64).sqrt(),
        f64::from(MAX_SIDE) / f64::from(width),
        f64::from(MAX_SIDE) / f64::from(height),
    ]
    .into_iter()
    .fold(1.0, f64::min);
    if scale >= 1.0 {
        return Some(pixels);
    }
    let side = |length: u32| ((f64::from(length) * scale).floor() as u32).max(1);
    let (to_width, to_height) = (side(width), side(height));
    if to_width < MIN_SIDE || to_height < MIN_SIDE {
        return None;
    }
    let pixel_type = if pixels.channels == 1 {
        PixelType::U8
    } else {
        PixelType::U8x3
    };
    let source =
        ImageRef::new(width, height, &pixels.data, pixel_type).expect("an image's buffer fits its size");
    let mut shrunk = Image::new(to_width, to_height, pixel_type);
    Resizer::new()
        .resize(
            &source,
            &mut shrunk,
            &ResizeOptions::new().resize_alg(ResizeAlg::Convolution(FilterType::CatmullRom)),
        )
        .expect("same pixel type, sizes above zero");
    Some(Pixels {
        data: Cow::Owned(shrunk.into_vec()),
        width: to_width,
        height: to_height,
        channels: pixels.channels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_pictures_are_shrunk_within_the_bounds() {
        let page = GrayImage::new(4000, 5000);
        let (data, width, height, channels) = fit(&page)
            .map(|p| (p.data.len(), p.width, p.height, p.channels))
            .unwrap();
        assert!(
            u64::from(width) * u64::from(height) <= MAX_PIXELS,
            "{width}x{height}"
        );
        assert_eq!(
            (width as f64 / height as f64 * 100.0).round(),
            80.0,
            "{width}x{height} keeps its shape"
        );
        assert_eq!((data, channels), (width as usize * height as usize, 1));

        let strip = RgbImage::new(60_000, 40);
        let fitted = fit(&strip).unwrap();
        assert_eq!((fitted.width, fitted.height, fitted.channels), (MAX_SIDE, 20, 3));
        assert_eq!(fitted.data.len(), MAX_SIDE as usize * 20 * 3);
    }

    #[test]
    fn pictures_within_the_bounds_are_read_as_they_are() {
        let page = GrayImage::new(2480, 3508);
        assert!(matches!(fit(&page).unwrap().data, Cow::Borrowed(_)));
    }

    #[test]
    fn turning_half_round_reverses_the_pixels() {
        let rgb = RgbImage::from_raw(2, 1, vec![1, 2, 3, 4, 5, 6]).unwrap();
        let turned = rgb.as_pixels().turned_half_round();
        assert_eq!(
            (&turned.data[..], turned.width, turned.height, turned.channels),
            (&[4, 5, 6, 1, 2, 3][..], 2, 1, 3)
        );
        let grey = GrayImage::from_raw(3, 1, vec![1, 2, 3]).unwrap();
        assert_eq!(&grey.as_pixels().turned_half_round().data[..], &[3, 2, 1]);
    }

    #[test]
    fn pictures_too_small_for_a_letter_are_not_read() {
        assert!(fit(&GrayImage::new(0, 0)).is_none());
        assert!(fit(&GrayImage::new(2, 500)).is_none());
        // Shrunk below the smallest side Tesseract takes.
        assert!(fit(&GrayImage::new(200_000, 4)).is_none());
    }
}
