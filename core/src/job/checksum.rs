//! Checksum: a digest of each file, read as a stream.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{MB, Rates, Settings};
use crate::file::FileKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DigestAlgorithm {
    #[default]
    Sha256,
    Md5,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = ChecksumOptions)]
pub struct Checksum {
    #[serde(default)]
    pub algorithm: DigestAlgorithm,
}

impl Settings for Checksum {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        None
    }

    fn rates(&self) -> Rates {
        Rates {
            per_file: 0.05,
            bytes_per_second: 300.0 * MB,
        }
    }

    fn downloads(&self) -> bool {
        false
    }
}
