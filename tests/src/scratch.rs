//! Files on disk for tests that hand files to a client: a folder of the test's own, and large
//! files written a mebibyte at a time.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::bytes;

const MIB: usize = 1024 * 1024;

/// A folder of its own under the system's temporary folder, removed when dropped.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new() -> Scratch {
        let dir = std::env::temp_dir().join(format!("drive-test-{}", Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).expect("scratch folder");
        Scratch(dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// `bytes` written to a file named `input.EXT`.
    pub fn file(&self, bytes: &[u8], ext: &str) -> PathBuf {
        let path = self.path(&format!("input.{ext}"));
        std::fs::write(&path, bytes).expect("write scratch file");
        path
    }
}

impl Default for Scratch {
    fn default() -> Scratch {
        Scratch::new()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes `len` deterministic bytes (varying with `seed`) to `path`, a mebibyte at a time so
/// large files never sit in memory; answers their sha256.
pub fn write_file(path: &Path, len: usize, seed: u8) -> String {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("folder");
    }
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).expect("create file"));
    let mut hasher = Sha256::new();
    let block = bytes(MIB, seed);
    let mut written = 0;
    while written < len {
        let mut chunk = block[..MIB.min(len - written)].to_vec();
        // Every mebibyte differs, so a part sent at the wrong offset cannot go unnoticed.
        let index = (written / MIB) as u64;
        for (byte, stamp) in chunk.iter_mut().zip(index.to_le_bytes()) {
            *byte ^= stamp;
        }
        file.write_all(&chunk).expect("write file");
        hasher.update(&chunk);
        written += chunk.len();
    }
    file.flush().expect("flush file");
    hex::encode(hasher.finalize())
}

pub fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}
