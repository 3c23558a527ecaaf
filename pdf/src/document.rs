//! Loading a PDF with `lopdf` and saving one, with the checks every pipeline shares.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use std::collections::HashSet;

use lopdf::{Dictionary, Document, Object, ObjectId, SaveOptions};

use crate::error::{PdfError, unreadable};

/// Deeper nesting than this, of direct objects or of a page tree, is hostile: it is cut off
/// rather than risking the stack or a loop.
pub(crate) const MAX_DEPTH: usize = 256;

/// A loaded document and its pages in reading order.
pub(crate) struct Source {
    pub doc: Document,
    pub page_ids: Vec<ObjectId>,
}

pub(crate) fn load(path: &Path) -> Result<Source, PdfError> {
    load_bytes(&std::fs::read(path)?)
}

/// Loads a document, refusing one that still needs a password or has no pages.
///
/// `lopdf` opens documents encrypted with an empty user password (the "owner password only"
/// kind that merely restricts printing or copying) by itself; what is left encrypted after
/// loading needs a password we don't have.
pub(crate) fn load_bytes(bytes: &[u8]) -> Result<Source, PdfError> {
    let doc = Document::load_mem(bytes)?;
    if doc.is_encrypted() {
        return Err(PdfError::Encrypted);
    }
    let page_ids: Vec<ObjectId> = doc.page_iter().collect();
    if page_ids.is_empty() {
        return Err(unreadable("it has no pages, or its list of pages is damaged"));
    }
    Ok(Source { doc, page_ids })
}

/// Writes `doc` with object streams and a cross-reference stream (PDF 1.5), which pack the
/// many small objects of a document far tighter than a classic cross-reference table.
pub(crate) fn save_to(doc: &mut Document, target: &mut impl Write) -> Result<(), PdfError> {
    let options = SaveOptions {
        use_object_streams: true,
        use_xref_streams: true,
        ..Default::default()
    };
    doc.save_with_options(target, options)
        .map_err(|e| PdfError::Write(e.to_string()))
}

pub(crate) fn save(doc: &mut Document, path: &Path) -> Result<(), PdfError> {
    let mut file = BufWriter::new(File::create(path)?);
    save_to(doc, &mut file)?;
    file.flush()?;
    Ok(())
}

/// The later of two PDF versions ("1.4", "1.7", "2.0": they compare as strings), and never
/// below 1.5, which object streams need. A header claiming something odd is ignored.
pub(crate) fn later_version(a: &str, b: &str) -> String {
    let plausible = |v: &&str| matches!(v.as_bytes(), [b'1' | b'2', b'.', d] if d.is_ascii_digit());
    [a, b, "1.5"]
        .into_iter()
        .filter(plausible)
        .max()
        .unwrap_or("1.5")
        .to_string()
}

/// The nearest ancestor's value of an inheritable attribute.
pub(crate) fn inherited<'d>(doc: &'d Document, page: &Dictionary, key: &[u8]) -> Option<&'d Object> {
    let mut seen = HashSet::new();
    let mut parent = page.get(b"Parent").and_then(Object::as_reference).ok();
    while let Some(id) = parent {
        if !seen.insert(id) || seen.len() > MAX_DEPTH {
            return None;
        }
        let node = doc.get_dictionary(id).ok()?;
        match node.get(key) {
            Ok(Object::Null) | Err(_) => parent = node.get(b"Parent").and_then(Object::as_reference).ok(),
            Ok(value) => return Some(value),
        }
    }
    None
}

/// A page's own value of an attribute, or the one it inherits.
pub(crate) fn page_attribute<'d>(doc: &'d Document, page: &'d Dictionary, key: &[u8]) -> Option<&'d Object> {
    match page.get(key) {
        Ok(Object::Null) | Err(_) => inherited(doc, page, key),
        Ok(value) => Some(value),
    }
}
