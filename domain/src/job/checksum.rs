//! Checksum: a digest of each file, read as a stream.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{MB, Rates, Settings};
use crate::file::FileKind;
use crate::id::FileId;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DigestAlgorithm {
    #[default]
    Sha256,
    Md5,
}

impl DigestAlgorithm {
    pub fn as_str(self) -> &'static str {
        match self {
            DigestAlgorithm::Sha256 => "sha256",
            DigestAlgorithm::Md5 => "md5",
        }
    }

    /// Whether `digest` is one of this algorithm's, in lowercase hex.
    pub fn is_digest(self, digest: &str) -> bool {
        let len = match self {
            DigestAlgorithm::Sha256 => 64,
            DigestAlgorithm::Md5 => 32,
        };
        digest.len() == len && digest.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = ChecksumOptions)]
pub struct Checksum {
    #[serde(default)]
    pub algorithm: DigestAlgorithm,
}

/// What a checksum job answers (its `result`): each input's digest, in the inputs' order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checksums {
    pub algorithm: DigestAlgorithm,
    pub checksums: Vec<FileDigest>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileDigest {
    pub file_id: FileId,
    pub file_name: String,
    pub bytes: i64,
    pub digest: String,
}

impl Settings for Checksum {
    /// Digests, in its result: no files.
    fn makes(&self, _taken: &[FileKind]) -> Vec<FileKind> {
        Vec::new()
    }

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
