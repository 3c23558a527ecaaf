//! When and where a photo was taken, from its EXIF.

use std::io::Cursor;

use exif::{In, Reader, Tag, Value};

/// What a photo's EXIF says of its taking.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Taken {
    /// `2024-05-01T10:20:30` plus the offset when the camera wrote one (`+02:00`).
    pub time: Option<String>,
    /// Latitude and longitude.
    pub place: Option<(f64, f64)>,
}

/// Reads the EXIF of the start of a picture file (a JPEG keeps it in its first segments;
/// a megabyte is plenty). A picture without EXIF, or with EXIF past `head`, says nothing.
pub fn read(head: &[u8]) -> Taken {
    let Ok(exif) = Reader::new().read_from_container(&mut Cursor::new(head)) else {
        return Taken::default();
    };
    let text = |tag| {
        exif.get_field(tag, In::PRIMARY).and_then(|f| match &f.value {
            Value::Ascii(parts) => parts
                .first()
                .map(|p| String::from_utf8_lossy(p).trim().to_string()),
            _ => None,
        })
    };
    let time = text(Tag::DateTimeOriginal)
        .or_else(|| text(Tag::DateTime))
        .and_then(|t| {
            // `2024:05:01 10:20:30`
            let (date, clock) = t.split_once(' ')?;
            let date = date.replace(':', "-");
            let offset = text(Tag::OffsetTimeOriginal).unwrap_or_default();
            Some(format!("{date}T{clock}{offset}"))
        });
    let degrees = |tag, reference: Tag, negative: &str| {
        let field = exif.get_field(tag, In::PRIMARY)?;
        let Value::Rational(parts) = &field.value else {
            return None;
        };
        let value = parts
            .iter()
            .zip([1.0, 60.0, 3600.0])
            .map(|(r, div)| r.to_f64() / div)
            .sum::<f64>();
        let sign = if text(reference).as_deref() == Some(negative) {
            -1.0
        } else {
            1.0
        };
        value.is_finite().then_some(sign * value)
    };
    let place = degrees(Tag::GPSLatitude, Tag::GPSLatitudeRef, "S")
        .zip(degrees(Tag::GPSLongitude, Tag::GPSLongitudeRef, "W"))
        .filter(|(lat, lon)| (-90.0..=90.0).contains(lat) && (-180.0..=180.0).contains(lon));
    Taken { time, place }
}
