//! Taking pages out of a PDF: chosen pages, or the whole document in parts.

use std::path::{Path, PathBuf};

use lopdf::{Dictionary, ObjectId};

use crate::assemble::{PageCopier, finish, new_document};
use crate::document::{Source, load, save};
use crate::error::{PdfError, guard};
use crate::pages::PageRanges;

/// Catalog entries that still hold for a document made of some of the source's pages: the
/// language, how viewers should show it, optional content (layers), which the pages' content
/// may refer to, the interactive form, whose fields live on the pages, and the named
/// destinations of PDF 1.1, which links may go to.
const KEPT_CATALOG_ENTRIES: [&str; 5] = ["Lang", "ViewerPreferences", "OCProperties", "AcroForm", "Dests"];

/// Writes only the named pages, in the order named (repeats allowed), to `output`. Returns the
/// number of pages written.
pub fn extract_pages(input: &Path, pages: &PageRanges, output: &Path) -> Result<u32, PdfError> {
    guard(|| {
        let src = load(input)?;
        let numbers = pages.pages(src.page_ids.len() as u32)?;
        let ids: Vec<ObjectId> = numbers.iter().map(|&n| src.page_ids[n as usize - 1]).collect();
        write_pages(&src, &ids, output)?;
        Ok(ids.len() as u32)
    })
}

/// Splits `input` into parts of `every` pages (the last part may be shorter), written as
/// `out_dir/<stem> part N.pdf` with N counting from 1. Returns the paths in order.
///
/// Path separators in `stem` are replaced, so that every part lands in `out_dir`.
pub fn split_every(
    input: &Path,
    every: u32,
    out_dir: &Path,
    stem: &str,
    progress: &mut dyn FnMut(f32),
) -> Result<Vec<PathBuf>, PdfError> {
    if every == 0 {
        return Err(PdfError::BadInput(
            "each part needs at least one page".to_string(),
        ));
    }
    let stem = file_stem(stem);
    guard(|| {
        let src = load(input)?;
        let parts: Vec<&[ObjectId]> = src.page_ids.chunks(every as usize).collect();
        let mut paths = Vec::with_capacity(parts.len());
        for (index, part) in parts.iter().enumerate() {
            let path = out_dir.join(format!("{stem} part {}.pdf", index + 1));
            write_pages(&src, part, &path)?;
            paths.push(path);
            progress((index + 1) as f32 / parts.len() as f32);
        }
        Ok(paths)
    })
}

/// A document of the given pages of `src`, with the document-level parts that still apply.
fn write_pages(src: &Source, pages: &[ObjectId], output: &Path) -> Result<(), PdfError> {
    let mut dst = new_document(&src.doc.version);
    let mut copier = PageCopier::new(src);
    let kids = copier.copy_pages(&mut dst, pages);
    let mut catalog = copier.copy_catalog_entries(&mut dst, &KEPT_CATALOG_ENTRIES);
    // Of the name trees, only the destinations, which links on the pages may name: the others
    // (attached files, scripts…) belong to the whole document and could be large.
    let dests = src
        .doc
        .catalog()
        .ok()
        .and_then(|c| c.get_deref(b"Names", &src.doc).ok())
        .and_then(|names| names.as_dict().ok()?.get(b"Dests").ok());
    if let Some(dests) = dests {
        let mut names = Dictionary::new();
        names.set("Dests", copier.copy_value(&mut dst, dests));
        catalog.set("Names", names);
    }
    if let Ok(info) = src.doc.trailer.get(b"Info") {
        let info = copier.copy_value(&mut dst, info);
        dst.trailer.set("Info", info);
    }
    finish(&mut dst, &kids, catalog);
    save(&mut dst, output)
}

fn file_stem(stem: &str) -> String {
    let stem: String = stem
        .chars()
        .map(|c| if matches!(c, '/' | '\\' | '\0') { '_' } else { c })
        .collect();
    if stem.trim().is_empty() {
        "document".to_string()
    } else {
        stem
    }
}

#[cfg(test)]
mod tests {
    use super::file_stem;

    #[test]
    fn stems_cannot_leave_the_output_folder() {
        assert_eq!(file_stem("report"), "report");
        assert_eq!(file_stem("../etc/passwd"), ".._etc_passwd");
        assert_eq!(file_stem("a\\b"), "a_b");
        assert_eq!(file_stem("  "), "document");
    }
}
