//! Files on this machine: finding them under the paths given, and what identifies one to the
//! drive (name, size and modified time).

use std::collections::HashSet;
use std::fs::Metadata;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use chrono::{DateTime, SecondsFormat, SubsecRound, Utc};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::records::FileRecord;

#[derive(Debug, Clone)]
pub struct LocalFile {
    pub path: PathBuf,
    pub name: String,
    pub size: u64,
    /// Whole seconds: the precision every store of modified times keeps.
    pub modified: DateTime<Utc>,
}

impl LocalFile {
    fn new(path: PathBuf, metadata: &Metadata) -> Result<LocalFile> {
        let name = path
            .file_name()
            .with_context(|| format!("{} has no file name", path.display()))?
            .to_string_lossy()
            .into_owned();
        let modified = metadata
            .modified()
            .with_context(|| format!("reading the modified time of {}", path.display()))?;
        Ok(LocalFile {
            name,
            size: metadata.len(),
            modified: DateTime::<Utc>::from(modified).trunc_subsecs(0),
            path,
        })
    }

    /// The file at `path`, which must be a file (a link to one is followed).
    pub fn open(path: &Path) -> Result<LocalFile> {
        let metadata = std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
        if !metadata.is_file() {
            bail!("{} is not a file", path.display());
        }
        LocalFile::new(path.to_path_buf(), &metadata)
    }

    pub fn modified_rfc3339(&self) -> String {
        self.modified.to_rfc3339_opts(SecondsFormat::Secs, true)
    }

    /// The storage key of this file: the same for the same name, size and modified time, so
    /// running the command again finds the multipart upload an interrupted run left open.
    pub fn object_key(&self, user_id: Uuid) -> String {
        let identity = format!("{}\n{}\n{}", self.name, self.size, self.modified_rfc3339());
        let digest = hex::encode(Sha256::digest(identity.as_bytes()));
        format!("users/{user_id}/cli/{}/{}", &digest[..32], self.name)
    }

    /// Whether `record` is this file, uploaded before: same name, size and modified time.
    pub fn is_stored_as(&self, record: &FileRecord) -> bool {
        record.file_name == self.name
            && record.file_size == self.size
            && record
                .modified_time
                .is_some_and(|m| m.timestamp() == self.modified.timestamp())
    }
}

/// Every file named in `paths` or under a folder named there, in the order given (folders
/// sorted by name), each once. Symbolic links to files are followed; links to folders are
/// not, so a link loop cannot make the walk endless.
pub fn find_files(paths: &[PathBuf]) -> Result<Vec<LocalFile>> {
    let mut found = Vec::new();
    for path in paths {
        let metadata = std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
        if metadata.is_dir() {
            walk(path, &mut found)?;
        } else if metadata.is_file() {
            found.push(LocalFile::new(path.clone(), &metadata)?);
        } else {
            bail!("{} is neither a file nor a folder", path.display());
        }
    }
    let mut seen = HashSet::new();
    found.retain(|file| seen.insert(std::fs::canonicalize(&file.path).unwrap_or(file.path.clone())));
    Ok(found)
}

fn walk(dir: &Path, found: &mut Vec<LocalFile>) -> Result<()> {
    let mut entries = std::fs::read_dir(dir)
        .and_then(|entries| entries.collect::<std::io::Result<Vec<_>>>())
        .with_context(|| format!("reading the folder {}", dir.display()))?;
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let path = entry.path();
        let kind = entry
            .file_type()
            .with_context(|| format!("reading {}", path.display()))?;
        if kind.is_dir() {
            walk(&path, found)?;
            continue;
        }
        // A link is taken for what it points at, if that is a file.
        let metadata = if kind.is_symlink() {
            std::fs::metadata(&path)
        } else {
            entry.metadata()
        };
        match metadata {
            Ok(metadata) if metadata.is_file() => found.push(LocalFile::new(path, &metadata)?),
            Ok(_) => {}
            Err(e) if kind.is_symlink() && e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, size: u64, modified: &str) -> LocalFile {
        LocalFile {
            path: PathBuf::from(name),
            name: name.to_string(),
            size,
            modified: modified.parse().unwrap(),
        }
    }

    #[test]
    fn keys_depend_on_name_size_and_modified_time_only() {
        let user = Uuid::nil();
        let a = file("clip.mp4", 10, "2026-01-02T03:04:05Z");
        let key = a.object_key(user);
        assert!(key.starts_with(&format!("users/{user}/cli/")));
        assert!(key.ends_with("/clip.mp4"));
        assert_eq!(key, a.clone().object_key(user));
        assert_ne!(key, file("clip.mp4", 11, "2026-01-02T03:04:05Z").object_key(user));
        assert_ne!(key, file("clip.mp4", 10, "2026-01-02T03:04:06Z").object_key(user));
        assert_ne!(key, file("clap.mp4", 10, "2026-01-02T03:04:05Z").object_key(user));
    }

    #[test]
    fn stored_records_match_to_the_second() {
        let local = file("a.txt", 3, "2026-01-02T03:04:05Z");
        let record = |name: &str, size: u64, modified: Option<&str>| FileRecord {
            id: Uuid::nil(),
            file_name: name.to_string(),
            file_size: size,
            mime_type: "text/plain".to_string(),
            kind: "Text".to_string(),
            is_public: false,
            download_url: None,
            insert_time: Utc::now(),
            modified_time: modified.map(|m| m.parse().unwrap()),
            folder_id: None,
        };
        assert!(local.is_stored_as(&record("a.txt", 3, Some("2026-01-02T03:04:05.900Z"))));
        assert!(!local.is_stored_as(&record("a.txt", 3, Some("2026-01-02T03:04:06Z"))));
        assert!(!local.is_stored_as(&record("a.txt", 4, Some("2026-01-02T03:04:05Z"))));
        assert!(!local.is_stored_as(&record("b.txt", 3, Some("2026-01-02T03:04:05Z"))));
        assert!(!local.is_stored_as(&record("a.txt", 3, None)));
    }
}
