//! Reading a JPEG's header: what a PDF needs to embed the file as it is.

/// What the frame header of an embeddable JPEG says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct JpegInfo {
    pub width: u32,
    pub height: u32,
    /// 1 (grey), 3 (YCbCr or RGB) or 4 (CMYK or YCCK).
    pub components: u8,
    /// An Adobe APP14 segment is present. Adobe software writes CMYK JPEGs inverted, and
    /// readers expect such files to carry that mark.
    pub adobe: bool,
}

/// The header of a JPEG that PDF readers can show as it is (DCTDecode): 8-bit, baseline or
/// progressive, Huffman-coded, 1, 3 or 4 components. `None` for anything else, including
/// data that is not a JPEG at all.
pub(crate) fn jpeg_info(data: &[u8]) -> Option<JpegInfo> {
    if !data.starts_with(&[0xFF, 0xD8]) {
        return None;
    }
    let mut adobe = false;
    let mut at = 2;
    loop {
        if *data.get(at)? != 0xFF {
            return None;
        }
        // Any number of 0xFF fill bytes may precede a marker.
        while *data.get(at)? == 0xFF {
            at += 1;
        }
        let marker = data[at];
        at += 1;
        match marker {
            // Markers without a segment.
            0x01 | 0xD0..=0xD8 => continue,
            // Scan data or the end before any frame header.
            0xD9 | 0xDA => return None,
            _ => {}
        }
        let length = usize::from(u16::from_be_bytes([*data.get(at)?, *data.get(at + 1)?]));
        let segment = data.get(at + 2..at + length)?;
        match marker {
            0xEE if segment.starts_with(b"Adobe") => adobe = true,
            // Baseline, extended sequential and progressive Huffman frames.
            0xC0..=0xC2 => {
                let [precision, h1, h0, w1, w0, components, ..] = *segment else {
                    return None;
                };
                let (height, width) = (u16::from_be_bytes([h1, h0]), u16::from_be_bytes([w1, w0]));
                let plausible = precision == 8 && height > 0 && width > 0 && matches!(components, 1 | 3 | 4);
                return plausible.then_some(JpegInfo {
                    width: u32::from(width),
                    height: u32::from(height),
                    components,
                    adobe,
                });
            }
            // Lossless, hierarchical or arithmetic-coded frames, which readers do not all show.
            0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF => return None,
            _ => {}
        }
        at += length;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(width: u16, height: u16, color: jpeg_encoder::ColorType, channels: usize) -> Vec<u8> {
        let mut jpeg = Vec::new();
        let pixels = vec![128u8; usize::from(width) * usize::from(height) * channels];
        jpeg_encoder::Encoder::new(&mut jpeg, 80)
            .encode(&pixels, width, height, color)
            .unwrap();
        jpeg
    }

    #[test]
    fn reads_size_and_components() {
        let info = jpeg_info(&encode(40, 30, jpeg_encoder::ColorType::Rgb, 3)).unwrap();
        assert_eq!((info.width, info.height, info.components), (40, 30, 3));
        let info = jpeg_info(&encode(7, 9, jpeg_encoder::ColorType::Luma, 1)).unwrap();
        assert_eq!((info.width, info.height, info.components), (7, 9, 1));
    }

    #[test]
    fn cmyk_from_this_encoder_carries_the_adobe_mark() {
        let info = jpeg_info(&encode(8, 8, jpeg_encoder::ColorType::Cmyk, 4)).unwrap();
        assert_eq!(info.components, 4);
        assert!(info.adobe);
    }

    #[test]
    fn rejects_what_is_not_a_complete_jpeg() {
        assert_eq!(jpeg_info(b""), None);
        assert_eq!(jpeg_info(b"\x89PNG\r\n\x1a\n"), None);
        let jpeg = encode(40, 30, jpeg_encoder::ColorType::Rgb, 3);
        // Cut inside the headers, before the frame header ends.
        let frame = jpeg.windows(2).position(|w| w == [0xFF, 0xC0]).unwrap();
        assert_eq!(jpeg_info(&jpeg[..frame + 6]), None);
    }
}
