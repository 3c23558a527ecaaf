//! Files sent as base64 (over the tool server's HTTP, in an agent task's `raw` parts): the
//! content decoded a slice at a time into a temporary file, which [`crate::upload`] then
//! uploads from disk like any other (in parts above 64 MiB). The temporary file goes when the
//! [`Spooled`] is dropped.

use std::io::Write;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, SubsecRound, Utc};
use tempfile::NamedTempFile;

use crate::local::LocalFile;

/// Most bytes one spooled file takes.
pub const MOST_BYTES: u64 = 100 * 1024 * 1024;
/// Base64 characters decoded at a time: a multiple of 4, so slices end on whole groups.
const SLICE: usize = 4 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum SpoolError {
    #[error("it holds more than {} MiB of bytes", MOST_BYTES >> 20)]
    TooLarge,
    #[error("it is not base64 ({0})")]
    NotBase64(String),
    #[error("the sent file could not be held here: {0}")]
    Io(#[from] std::io::Error),
    #[error("a file's name is 1 to 255 bytes with no slashes, such as report.pdf")]
    BadName,
}

pub struct Spooled {
    file: NamedTempFile,
    size: u64,
}

/// Decodes `content` (standard base64 with padding) into a temporary file.
pub async fn decode(content: String) -> Result<Spooled, SpoolError> {
    let most_chars = MOST_BYTES.div_ceil(3) * 4;
    if content.len() as u64 > most_chars {
        return Err(SpoolError::TooLarge);
    }
    tokio::task::spawn_blocking(move || write(&content))
        .await
        .map_err(|e| SpoolError::Io(std::io::Error::other(e)))?
}

fn write(content: &str) -> Result<Spooled, SpoolError> {
    let mut file = NamedTempFile::with_prefix("drive-spool-")?;
    let mut size = 0;
    let mut decoded = Vec::with_capacity(SLICE / 4 * 3);
    for slice in content.as_bytes().chunks(SLICE) {
        decoded.clear();
        STANDARD
            .decode_vec(slice, &mut decoded)
            .map_err(|e| SpoolError::NotBase64(e.to_string()))?;
        file.write_all(&decoded)?;
        size += decoded.len() as u64;
    }
    file.flush()?;
    Ok(Spooled { file, size })
}

impl Spooled {
    /// The spooled bytes as the file `name`, last modified at `modified` (now when not given).
    pub fn as_file(&self, name: &str, modified: Option<DateTime<Utc>>) -> Result<LocalFile, SpoolError> {
        if name.trim().is_empty()
            || name.len() > 255
            || name.contains(['/', '\\', '\0'])
            || name == "."
            || name == ".."
        {
            return Err(SpoolError::BadName);
        }
        Ok(LocalFile {
            path: self.file.path().to_path_buf(),
            name: name.to_string(),
            size: self.size,
            modified: modified.unwrap_or_else(Utc::now).trunc_subsecs(0),
        })
    }
}
