//! Zip and unzip: archives written and read as streams, never downloaded whole.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{MB, Rates, Settings, SettingsError, check_name};
use crate::file::FileKind;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = ZipOptions)]
pub struct Zip {
    /// The archive's name without `.zip`, at most 200 characters; default the folder's name,
    /// or `Archive`.
    #[schema(min_length = 1, max_length = 200)]
    pub name: Option<String>,
}

/// Unzip takes no settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = UnzipOptions)]
pub struct Unzip {}

const ARCHIVING: Rates = Rates {
    per_file: 0.05,
    bytes_per_second: 150.0 * MB,
};

impl Settings for Zip {
    fn makes(&self, _taken: &[FileKind]) -> Vec<FileKind> {
        vec![FileKind::Archive]
    }

    fn kinds(&self) -> Option<&'static [FileKind]> {
        None
    }

    fn check(&self) -> Result<(), SettingsError> {
        check_name("options.name", self.name.as_deref())
    }

    fn rates(&self) -> Rates {
        ARCHIVING
    }

    fn input_count(&self) -> (usize, usize) {
        (1, 1000)
    }

    fn downloads(&self) -> bool {
        false
    }
}

impl Settings for Unzip {
    /// An archive holds files of any kind.
    fn makes(&self, _taken: &[FileKind]) -> Vec<FileKind> {
        FileKind::ALL.to_vec()
    }

    fn kinds(&self) -> Option<&'static [FileKind]> {
        None
    }

    fn rates(&self) -> Rates {
        ARCHIVING
    }

    fn input_count(&self) -> (usize, usize) {
        (1, 1)
    }

    fn takes(&self, _kind: FileKind, name: &str) -> bool {
        name.to_ascii_lowercase().ends_with(".zip")
    }

    fn takes_kind(&self, kind: FileKind) -> bool {
        kind == FileKind::Archive
    }

    fn takes_what(&self) -> String {
        "a .zip file".to_string()
    }

    fn downloads(&self) -> bool {
        false
    }
}
