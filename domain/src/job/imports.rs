//! Import: a file brought in from a link, fetched by the farm and streamed into the store. It
//! has no input files; `/import-from-url` checks the link and submits it (a caller cannot
//! through `/create-file-job`).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{MB, Rates, Settings};
use crate::file::FileKind;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = ImportOptions)]
pub struct Import {
    /// The link, checked by the API (http or https, a public address).
    pub url: String,
    /// The new file's name.
    pub name: String,
}

impl Settings for Import {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        None
    }

    fn input_count(&self) -> (usize, usize) {
        (0, 0)
    }

    fn rates(&self) -> Rates {
        Rates {
            per_file: 5.0,
            bytes_per_second: 50.0 * MB,
        }
    }

    fn downloads(&self) -> bool {
        false
    }
}
