//! Multipart uploads: created, listed, presigned part by part, completed and aborted by the
//! API; parts sent from this process by the worker.

use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart};
use chrono::{DateTime, TimeDelta, Utc};

use super::{Bucket, ByteStream, Storage, StorageError, failed, presigning, status_of};

/// A part an open multipart upload already holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPart {
    pub part_number: i32,
    pub size: i64,
    pub etag: String,
    pub last_modified: Option<DateTime<Utc>>,
}

impl Storage {
    /// Sends one part of a multipart upload from this process.
    pub async fn upload_part(
        &self,
        bucket: Bucket,
        key: &str,
        upload_id: &str,
        part_number: i32,
        bytes: Vec<u8>,
    ) -> Result<StoredPart, StorageError> {
        let size = bytes.len() as i64;
        let part = self
            .client
            .upload_part()
            .bucket(self.bucket_name(bucket))
            .key(key)
            .upload_id(upload_id)
            .part_number(part_number)
            .body(ByteStream::from(bytes))
            .send()
            .await
            .map_err(failed("upload part"))?;
        Ok(StoredPart {
            part_number,
            size,
            etag: part.e_tag().unwrap_or_default().to_string(),
            last_modified: None,
        })
    }

    pub async fn create_multipart(
        &self,
        bucket: Bucket,
        key: &str,
        content_type: &str,
        content_disposition: &str,
    ) -> Result<String, StorageError> {
        let created = self
            .client
            .create_multipart_upload()
            .bucket(self.bucket_name(bucket))
            .key(key)
            .content_type(content_type)
            .content_disposition(content_disposition)
            .send()
            .await
            .map_err(failed("create multipart upload"))?;
        Ok(created.upload_id().unwrap_or_default().to_string())
    }

    /// The parts an upload holds, by number; `None` when the store no longer has the upload.
    pub async fn list_parts(
        &self,
        bucket: Bucket,
        key: &str,
        upload_id: &str,
    ) -> Result<Option<Vec<StoredPart>>, StorageError> {
        let mut parts = Vec::new();
        let mut marker: Option<String> = None;
        loop {
            let page = match self
                .client
                .list_parts()
                .bucket(self.bucket_name(bucket))
                .key(key)
                .upload_id(upload_id)
                .set_part_number_marker(marker.clone())
                .send()
                .await
            {
                Ok(page) => page,
                Err(e) if status_of(&e) == Some(404) => return Ok(None),
                Err(e) => return Err(failed("list parts")(e)),
            };
            parts.extend(page.parts().iter().map(|p| {
                StoredPart {
                    part_number: p.part_number().unwrap_or_default(),
                    size: p.size().unwrap_or_default(),
                    etag: p.e_tag().unwrap_or_default().to_string(),
                    last_modified: p
                        .last_modified()
                        .and_then(|t| DateTime::from_timestamp(t.secs(), t.subsec_nanos())),
                }
            }));
            match page.next_part_number_marker() {
                Some(next) if page.is_truncated() == Some(true) => marker = Some(next.to_string()),
                _ => break,
            }
        }
        // A part sent twice may be listed twice (SeaweedFS keeps each PUT of a number apart
        // until the upload completes): the newest is the part, as S3 has it.
        parts.sort_by(|a, b| {
            a.part_number
                .cmp(&b.part_number)
                .then(b.last_modified.cmp(&a.last_modified))
        });
        parts.dedup_by_key(|p| p.part_number);
        Ok(Some(parts))
    }

    /// A presigned PUT for one part, signed for its exact length.
    pub async fn presign_part(
        &self,
        bucket: Bucket,
        key: &str,
        upload_id: &str,
        part_number: i32,
        length: i64,
        expires_in: TimeDelta,
    ) -> Result<String, StorageError> {
        let request = self
            .client
            .upload_part()
            .bucket(self.bucket_name(bucket))
            .key(key)
            .upload_id(upload_id)
            .part_number(part_number)
            .content_length(length)
            .presigned(presigning(expires_in)?)
            .await
            .map_err(failed("presign part"))?;
        Ok(request.uri().to_string())
    }

    pub async fn complete_multipart(
        &self,
        bucket: Bucket,
        key: &str,
        upload_id: &str,
        parts: &[StoredPart],
    ) -> Result<(), StorageError> {
        let parts = parts
            .iter()
            .map(|p| {
                CompletedPart::builder()
                    .part_number(p.part_number)
                    .e_tag(&p.etag)
                    .build()
            })
            .collect();
        self.client
            .complete_multipart_upload()
            .bucket(self.bucket_name(bucket))
            .key(key)
            .upload_id(upload_id)
            .multipart_upload(CompletedMultipartUpload::builder().set_parts(Some(parts)).build())
            .send()
            .await
            .map_err(failed("complete multipart upload"))?;
        Ok(())
    }

    /// Discards an upload and its parts; an upload already gone is not an error.
    pub async fn abort_multipart(
        &self,
        bucket: Bucket,
        key: &str,
        upload_id: &str,
    ) -> Result<(), StorageError> {
        match self
            .client
            .abort_multipart_upload()
            .bucket(self.bucket_name(bucket))
            .key(key)
            .upload_id(upload_id)
            .send()
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if status_of(&e) == Some(404) => Ok(()),
            Err(e) => Err(failed("abort multipart upload")(e)),
        }
    }
}
