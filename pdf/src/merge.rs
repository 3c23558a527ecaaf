//! Merging PDFs one after another.

use std::path::{Path, PathBuf};

use crate::assemble::{PageCopier, finish, new_document};
use crate::document::{later_version, load, save};
use crate::error::{PdfError, guard};

/// Catalog entries of the first input that still describe the merged document.
const KEPT_CATALOG_ENTRIES: [&str; 2] = ["Lang", "ViewerPreferences"];

/// Writes the pages of every input, in order, to `output` and returns the merged page count.
///
/// Each page keeps its content, annotations and links to pages of its own file. Document-level
/// parts that describe one input (outlines, form field trees, structure trees, metadata) are
/// left out: the merged file has no bookmarks and its form fields are no longer interactive,
/// though they still show. An error about one input says which one ("file 2 of 3: …").
pub fn merge(inputs: &[PathBuf], output: &Path, progress: &mut dyn FnMut(f32)) -> Result<u32, PdfError> {
    if inputs.is_empty() {
        return Err(PdfError::BadInput("there are no PDFs to merge".to_string()));
    }
    guard(|| {
        let count = inputs.len();
        let mut dst = new_document("1.5");
        let mut pages = Vec::new();
        let mut catalog = None;
        for (index, input) in inputs.iter().enumerate() {
            let src = load(input).map_err(|e| e.in_input(index, count))?;
            dst.version = later_version(&dst.version, &src.doc.version);
            let mut copier = PageCopier::new(&src);
            pages.extend(copier.copy_pages(&mut dst, &src.page_ids));
            if catalog.is_none() {
                catalog = Some(copier.copy_catalog_entries(&mut dst, &KEPT_CATALOG_ENTRIES));
            }
            // Loading and copying is most of the work; saving takes the last tenth.
            progress(0.9 * (index + 1) as f32 / count as f32);
        }
        finish(&mut dst, &pages, catalog.unwrap_or_default());
        save(&mut dst, output)?;
        progress(1.0);
        Ok(pages.len() as u32)
    })
}
