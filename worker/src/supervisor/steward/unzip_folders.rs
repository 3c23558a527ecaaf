//! The folders an unzip fills: its own, made on its first attempt beside the archive (a run of a
//! pipeline's unzip keeps it with the run), and the entries' folders, only at or below it.

use drive_core::db::folders::{self, FolderRow};
use drive_core::db::jobs;
use drive_core::db::jobs::runs;
use drive_core::file::stem;
use drive_core::folder::FolderPath;
use drive_core::id::FolderId;
use drive_core::job::JobType;

use super::{Place, Steward, refused};
use crate::protocol::{JobError, JobResult};

impl Steward {
    /// The new folder an unzip fills: beside the archive (or in the job's folder), named after
    /// it; a retry reuses the one it made.
    pub(super) async fn unzip_folder(&mut self) -> JobResult<FolderRow> {
        if self.job.job_type != JobType::Unzip {
            return Err(refused("an unzip folder for a job that is no unzip"));
        }
        if let Some(made) = self.job.output_folder_id
            && let Some(folder) = folders::find_owned(&self.db, self.job.user_id, made).await?
        {
            return Ok(folder);
        }
        if let Place::Run { files: false, .. } = self.place {
            return Err(refused("a folder for a step whose results are in no folder"));
        }
        let archive = self
            .inputs
            .first()
            .ok_or_else(|| JobError::Server("the unzip has no archive".to_string()))?;
        let parent = folders::path_of(&self.db, self.job.folder_id)
            .await?
            .unwrap_or_default();
        let wanted = format!("{parent}/{}", stem(&archive.file_name).trim());
        let path = folders::free_folder_path(&self.db, self.job.user_id, &wanted).await?;
        let path = FolderPath::try_from(path)
            .map_err(|why| JobError::Input(format!("cannot make the folder for the archive: {why}")))?;
        let mut conn = self.db.acquire().await?;
        let folder = folders::ensure(&mut conn, self.job.user_id, &path)
            .await?
            .ok_or_else(|| JobError::Server("the unzip folder is the top".to_string()))?;
        match self.place {
            Place::Job => jobs::set_output_folder(&self.db, self.job.id, folder.id).await?,
            Place::Run { at, .. } => runs::set_output_folder(&self.db, at, folder.id).await?,
        }
        self.job.output_folder_id = Some(folder.id);
        Ok(folder)
    }

    /// Ensures the folder at `path`, which must be the unzip's folder or below it.
    pub(super) async fn entry_folder(&self, path: &str) -> JobResult<Option<FolderId>> {
        let unzip = self
            .folder(self.job.output_folder_id)
            .await?
            .ok_or_else(|| refused("an entry folder before the unzip's folder"))?;
        let path = FolderPath::try_from(path.to_string())
            .map_err(|why| JobError::Input(format!("an entry cannot be a file here: {why}")))?;
        if !at_or_below(&path.stored(), &unzip.path) {
            return Err(refused("an entry folder outside the unzip's folder"));
        }
        let mut conn = self.db.acquire().await?;
        Ok(folders::ensure(&mut conn, self.job.user_id, &path)
            .await?
            .map(|f| f.id))
    }
}

/// Whether the stored folder path `path` is `folder` or below it.
fn at_or_below(path: &str, folder: &str) -> bool {
    path.strip_prefix(folder)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_at_or_below_only_itself_and_its_subfolders() {
        assert!(at_or_below("/a", "/a"));
        assert!(at_or_below("/a/b/c", "/a"));
        assert!(!at_or_below("/ab", "/a"));
        assert!(!at_or_below("/b/a", "/a"));
    }
}
