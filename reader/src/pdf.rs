//! A PDF as the text of its pages: as many whole pages from `from` as fit in
//! [`MAX_TEXT_BYTES`], at most [`MAX_PAGES`], each under a line naming it.

use drive_domain::read::{DEFAULT_PAGES, MAX_PAGES, MAX_TEXT_BYTES, PageSpan, Read};
use drive_pdf::TextPages;

use crate::failure::Failure;
use crate::fetch::Object;
use crate::text::whole_characters;

pub async fn read(store: &Object, from: u32, to: Option<u32>) -> Result<Read, Failure> {
    let pages = TextPages::open(store.whole().await?)?;
    let total = pages.count();
    if from > total {
        return Err(Failure::BadField {
            field: "fromPage",
            message: format!(
                "fromPage is past the end: the PDF has {total} page{}",
                if total == 1 { "" } else { "s" }
            ),
        });
    }
    // A `toPage` past the end reads to the end.
    let last = to
        .unwrap_or(from + DEFAULT_PAGES - 1)
        .min(from + MAX_PAGES - 1)
        .min(total);
    let mut text = String::new();
    let mut read_to = from;
    let mut without_text = Vec::new();
    let mut cut = false;
    for number in from..=last {
        let page = pages.page(number)?;
        let separator = if number == from { "" } else { "\n\n" };
        let piece = format!("{separator}--- page {number} ---\n{}", page.text);
        if text.len() + piece.len() > MAX_TEXT_BYTES {
            if number == from {
                // Not even one page fits: as much of it as does, cut on a whole character.
                let end = whole_characters(&piece.as_bytes()[..MAX_TEXT_BYTES]);
                text.push_str(&piece[..end]);
                cut = true;
            }
            break;
        }
        text.push_str(&piece);
        read_to = number;
        if !page.has_text_layer {
            without_text.push(number.to_string());
        }
    }
    let mut note = format!("Pages {from} to {read_to} of {total}.");
    if cut {
        note.push_str(&format!(
            " Page {from} holds more than {} KB of text: only its beginning is here.",
            MAX_TEXT_BYTES / 1000
        ));
    }
    if read_to < total {
        note.push_str(&format!(" Ask fromPage {} for more.", read_to + 1));
    }
    if !without_text.is_empty() {
        note.push_str(&format!(
            " No text layer on page {} (a scan?): what its pictures show is not read.",
            without_text.join(", ")
        ));
    }
    Ok(Read {
        note,
        text: Some(text),
        pages: Some(PageSpan {
            from,
            to: read_to,
            total,
        }),
        ..Read::default()
    })
}
