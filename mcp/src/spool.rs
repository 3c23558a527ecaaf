//! Files sent over HTTP: the base64 content decoded a slice at a time into a temporary file,
//! which the client library then uploads from disk like any other (in parts above 64 MiB).
//! The temporary file goes when the call ends.

use std::io::Write;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, SubsecRound, Utc};
use drive_client::local::LocalFile;
use tempfile::NamedTempFile;

use crate::explain::Failure;

/// Most bytes one upload_file call over HTTP takes; the request body limit follows from it.
pub const MOST_BYTES: u64 = 100 * 1024 * 1024;
/// Base64 characters decoded at a time: a multiple of 4, so slices end on whole groups.
const SLICE: usize = 4 * 1024 * 1024;

pub struct Spooled {
    file: NamedTempFile,
    size: u64,
}

/// Decodes `content` into a temporary file.
pub async fn decode(content: String) -> Result<Spooled, Failure> {
    let most_chars = MOST_BYTES.div_ceil(3) * 4;
    if content.len() as u64 > most_chars {
        return Err(Failure::new(format!(
            "contentBase64 holds more than {} MiB of bytes.",
            MOST_BYTES >> 20
        ))
        .next("Upload larger files with the drive CLI, or run this server over stdio and pass a path."));
    }
    tokio::task::spawn_blocking(move || write(&content))
        .await
        .map_err(|e| Failure::new(format!("decoding the content stopped: {e}")))?
}

fn write(content: &str) -> Result<Spooled, Failure> {
    let failed =
        |e: std::io::Error| Failure::new(format!("could not hold the sent file on this server: {e}"));
    let mut file = NamedTempFile::with_prefix("drive-mcp-").map_err(failed)?;
    let mut size = 0;
    let mut decoded = Vec::with_capacity(SLICE / 4 * 3);
    for slice in content.as_bytes().chunks(SLICE) {
        decoded.clear();
        STANDARD.decode_vec(slice, &mut decoded).map_err(|e| {
            Failure::new(format!("contentBase64 is not base64 ({e})."))
                .next("Send the file's bytes in standard base64 with padding, no line breaks.")
        })?;
        file.write_all(&decoded).map_err(failed)?;
        size += decoded.len() as u64;
    }
    file.flush().map_err(failed)?;
    Ok(Spooled { file, size })
}

impl Spooled {
    /// The spooled bytes as the file `name`, last modified at `modified` (now when not given).
    pub fn as_file(&self, name: &str, modified: Option<DateTime<Utc>>) -> Result<LocalFile, Failure> {
        if name.trim().is_empty()
            || name.len() > 255
            || name.contains(['/', '\\', '\0'])
            || name == "."
            || name == ".."
        {
            return Err(Failure::new(
                "fileName must be a file's name (1 to 255 bytes, no slashes), such as report.pdf.",
            ));
        }
        Ok(LocalFile {
            path: self.file.path().to_path_buf(),
            name: name.to_string(),
            size: self.size,
            modified: modified.unwrap_or_else(Utc::now).trunc_subsecs(0),
        })
    }
}
