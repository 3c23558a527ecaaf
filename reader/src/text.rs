//! A piece of a text file: up to [`MAX_TEXT_BYTES`] from a byte offset, fetched as a range,
//! ending on a whole UTF-8 character, with where to go on from. Pieces read one after the
//! other from 0 rebuild the file byte for byte (bytes that are not UTF-8 read as U+FFFD in
//! the text, but are counted in the offsets as they are stored).

use drive_domain::read::{MAX_TEXT_BYTES, Read};

use crate::failure::Failure;
use crate::fetch::Object;

/// A UTF-8 character is at most four bytes: three continuation bytes after its first.
const MAX_CONTINUATION: usize = 3;

pub async fn read(store: &Object, offset: u64) -> Result<Read, Failure> {
    if offset > store.size {
        return Err(Failure::BadField {
            field: "offset",
            message: format!(
                "offset is past the end of the text, which has {} bytes",
                store.size
            ),
        });
    }
    let bytes = store
        .range(offset, (MAX_TEXT_BYTES + MAX_CONTINUATION) as u64)
        .await?;
    // An offset inside a character starts at the next whole one.
    let skip = bytes
        .iter()
        .take(MAX_CONTINUATION)
        .take_while(|&&b| is_continuation(b))
        .count();
    let piece = &bytes[skip..bytes.len().min(skip + MAX_TEXT_BYTES)];
    let start = offset + skip as u64;
    let more = start + (piece.len() as u64) < store.size;
    let end = if more {
        whole_characters(piece)
    } else {
        piece.len()
    };
    let next = start + end as u64;
    let note = if more {
        format!(
            "Bytes {start} to {next} of {}; ask offset {next} for more.",
            store.size
        )
    } else {
        format!("Bytes {start} to {next} of {}: the end of the text.", store.size)
    };
    Ok(Read {
        note,
        text: Some(String::from_utf8_lossy(&piece[..end]).into_owned()),
        next_offset: more.then_some(next),
        ..Read::default()
    })
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

/// How much of `bytes` ends on a whole character: a character whose last bytes are not in
/// `bytes` is left for the next piece.
pub fn whole_characters(bytes: &[u8]) -> usize {
    let len = bytes.len();
    for back in 1..=len.min(MAX_CONTINUATION + 1) {
        let byte = bytes[len - back];
        if is_continuation(byte) {
            continue;
        }
        let needs = match byte {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if needs > back { len - back } else { len };
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_piece_ends_before_a_character_it_does_not_hold_whole() {
        let text = "aé€😀".as_bytes();
        // Cut anywhere, the piece keeps only whole characters.
        let ends: Vec<usize> = (0..=text.len()).map(|n| whole_characters(&text[..n])).collect();
        assert_eq!(ends, vec![0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10]);
        // Bytes that are not UTF-8 are let through one by one, never held back.
        assert_eq!(whole_characters(b"ab\xFF"), 3);
    }
}
