//! readForSearch: the owner has files read for searching inside them (`/search-files`'s
//! `query`). The job turns each file into moments, embeds them and stores them.

use serde::{Deserialize, Serialize};

use super::{Rates, Settings};
use crate::file::FileKind;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReadForSearch {}

/// The kinds of file there is a source of moments for: text files (their text). PDFs (the
/// text layer, OCR), pictures (OCR) and sound (speech) join this list with their sources in the
/// worker's `reading` module.
const READABLE: &[FileKind] = &[FileKind::Text];

impl Settings for ReadForSearch {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        Some(READABLE)
    }

    fn rates(&self) -> Rates {
        // Embedding runs ~50 sentences a second on one core: about 5 kB of text a second,
        // plus loading the model (~1 s) per job.
        Rates {
            per_file: 0.2,
            bytes_per_second: 5_000.0,
        }
    }

    fn downloads(&self) -> bool {
        false
    }
}
