//! The file routes, typed: the library and the trash, links, public or private, and storage
//! usage. What the CLI's file commands and the tool server's seven tools are made of.

use std::collections::{BTreeMap, HashSet};

use anyhow::Result;
use uuid::Uuid;

use crate::Client;
use crate::records::{FileRecord, FileRef, StorageUsage};

/// Most files `/trash-files`, `/restore-files` and `/delete-files` take in one call.
const FILES_PER_CALL: usize = 100;

/// The three routes that take an array of file references and answer the ids they acted on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Batch {
    Trash,
    Restore,
    Delete,
}

impl Batch {
    fn route(self) -> &'static str {
        match self {
            Batch::Trash => "/trash-files",
            Batch::Restore => "/restore-files",
            Batch::Delete => "/delete-files",
        }
    }

    /// The answer's field, and the word for what was done.
    pub fn done(self) -> &'static str {
        match self {
            Batch::Trash => "trashed",
            Batch::Restore => "restored",
            Batch::Delete => "deleted",
        }
    }
}

/// What a batch did: the ids acted on and those passed over, each in the order given.
#[derive(Debug, Clone, Default)]
pub struct BatchOutcome {
    pub done: Vec<Uuid>,
    pub skipped: Vec<Uuid>,
}

impl Client {
    /// `/select-user-files`: the library, newest first, without the trash.
    pub async fn library(&self) -> Result<Vec<FileRecord>> {
        self.post_empty("/select-user-files").await
    }

    /// `/select-trashed-files`.
    pub async fn trash_listing(&self) -> Result<Vec<FileRecord>> {
        self.post_empty("/select-trashed-files").await
    }

    /// `/generate-download-url`: the file with a fresh link, permanent for a public file,
    /// 6 hours for a private one.
    pub async fn download_link(&self, id: Uuid) -> Result<FileRecord> {
        self.post("/generate-download-url", &FileRef { id }).await
    }

    /// `/get-user-storage-usage`.
    pub async fn storage_usage(&self) -> Result<StorageUsage> {
        self.post_empty("/get-user-storage-usage").await
    }

    /// Makes a library file public or private, answering whether it changed. The service's
    /// route toggles, so it is called only when the file is not already as wanted; otherwise
    /// asking twice would undo it. `None` when the library has no such file.
    pub async fn set_access(&self, id: Uuid, public: bool) -> Result<Option<(bool, FileRecord)>> {
        let Some(file) = self.library_file(id).await? else {
            return Ok(None);
        };
        if file.is_public == public {
            return Ok(Some((false, file)));
        }
        let file = self.post("/toggle-file-access", &FileRef { id }).await?;
        Ok(Some((true, file)))
    }

    /// Trashes, restores or deletes `ids` (each once, a hundred per call).
    pub async fn batch(&self, batch: Batch, ids: &[Uuid]) -> Result<BatchOutcome> {
        let mut seen = HashSet::new();
        let ids: Vec<Uuid> = ids.iter().copied().filter(|id| seen.insert(*id)).collect();
        let mut acted_on = HashSet::new();
        for chunk in ids.chunks(FILES_PER_CALL) {
            let refs: Vec<FileRef> = chunk.iter().map(|&id| FileRef { id }).collect();
            let mut answer: BTreeMap<String, Vec<Uuid>> = self.post(batch.route(), &refs).await?;
            acted_on.extend(answer.remove(batch.done()).unwrap_or_default());
        }
        // In the order given, which the service's answer need not keep.
        let (done, skipped) = ids.iter().partition(|id| acted_on.contains(id));
        Ok(BatchOutcome { done, skipped })
    }
}
