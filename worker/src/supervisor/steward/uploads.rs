//! Multipart uploads a job process fills through part URLs: opened under the job's own
//! result keys, part URLs presigned one at a time with their exact length, completed with the
//! parts the job names, as the store lists them, and recorded as the job's result.

use chrono::TimeDelta;
use drive_core::db::files::FileRow;
use drive_core::file::guess_type;
use drive_core::id::FolderId;
use drive_core::storage::{Bucket, StoredHeaders};

use super::{Steward, refused};
use crate::protocol::{JobError, JobResult};

/// Parts of one upload at most, and bytes in one part: the store's own limits.
const MAX_PARTS: i32 = 10_000;
const MAX_PART_BYTES: i64 = 5 << 30;

/// How long a part URL stays valid: a part is sent as soon as it is asked for.
const PART_URL_LIFETIME: TimeDelta = TimeDelta::hours(1);

/// An upload opened for the job and not yet completed or aborted.
pub struct Upload {
    position: i32,
    key: String,
    name: String,
    folder_id: Option<FolderId>,
}

impl Steward {
    pub(super) async fn start_upload(
        &mut self,
        position: i32,
        name: &str,
        folder_id: Option<FolderId>,
    ) -> JobResult<String> {
        let key = self.recorder().key(position, name)?;
        self.folder(folder_id).await?;
        let (_, mime) = guess_type(name);
        let headers = StoredHeaders::new(mime, name, "attachment");
        let id = self
            .storage
            .create_multipart(
                Bucket::Private,
                &key,
                &headers.content_type,
                &headers.content_disposition,
            )
            .await?;
        let upload = Upload {
            position,
            key,
            name: name.to_string(),
            folder_id,
        };
        self.uploads.insert(id.clone(), upload);
        Ok(id)
    }

    fn upload(&self, id: &str) -> JobResult<&Upload> {
        self.uploads
            .get(id)
            .ok_or_else(|| refused("an upload the supervisor did not open for this job"))
    }

    /// Completes an upload with the parts the job names, as the store holds them (their ETags
    /// the store's, never the job process's), and records it.
    pub(super) async fn complete_upload(&mut self, id: &str, named: &[i32]) -> JobResult<FileRow> {
        let upload = self.upload(id)?;
        let (position, key, name, folder_id) = (
            upload.position,
            upload.key.clone(),
            upload.name.clone(),
            upload.folder_id,
        );
        // In the order asked: saves ahead are recorded first. Should one fail, the upload stays
        // open, to be aborted with the job's others, rather than completed and never recorded.
        self.ahead.wait().await?;
        if named.is_empty() || !named.is_sorted() {
            return Err(refused("an upload's parts named out of order"));
        }
        let parts: Vec<_> = self
            .storage
            .list_parts(Bucket::Private, &key, id)
            .await?
            .ok_or_else(|| JobError::Server(format!("the upload of {key} is gone")))?
            .into_iter()
            .filter(|part| named.binary_search(&part.part_number).is_ok())
            .collect();
        if parts.len() != named.len() {
            return Err(refused("an upload's parts named that the store does not hold"));
        }
        self.storage
            .complete_multipart(Bucket::Private, &key, id, &parts)
            .await?;
        self.uploads.remove(id);
        let size = self.recorder().stored_size(&key).await?;
        self.record(position, &key, &name, folder_id, size).await
    }

    pub(super) async fn part_url(&self, id: &str, number: i32, length: i64) -> JobResult<String> {
        let upload = self.upload(id)?;
        if !(1..=MAX_PARTS).contains(&number) || !(0..=MAX_PART_BYTES).contains(&length) {
            return Err(refused("a part number or length out of range"));
        }
        Ok(self
            .storage
            .presign_part(
                Bucket::Private,
                &upload.key,
                id,
                number,
                length,
                PART_URL_LIFETIME,
            )
            .await?)
    }

    /// Aborts what the job process left open when it ended: a failed job's parts are not kept.
    pub(super) async fn abort_uploads(&mut self) {
        for (id, upload) in std::mem::take(&mut self.uploads) {
            let _ = self
                .storage
                .abort_multipart(Bucket::Private, &upload.key, &id)
                .await;
        }
    }

    pub(super) async fn abort_upload(&mut self, id: &str) -> JobResult<()> {
        let upload = self.upload(id)?;
        self.storage
            .abort_multipart(Bucket::Private, &upload.key, id)
            .await?;
        self.uploads.remove(id);
        Ok(())
    }
}
