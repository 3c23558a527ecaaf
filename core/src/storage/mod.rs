//! The object store: two buckets (private, and public with anonymous read), presigned URLs
//! for every byte transfer so bytes never pass through the API, and the few server-side
//! operations the API needs (head, move between buckets, delete). The presigned POST form is in
//! `policy`, multipart bookkeeping in `multipart`, the headers objects are stored with in
//! `headers`.

mod headers;
mod multipart;
mod policy;

pub use self::headers::{StoredHeaders, content_disposition};
pub use self::multipart::StoredPart;
pub use self::policy::{PostForm, PostRules};

use std::time::Duration;

use aws_credential_types::Credentials;
use aws_sdk_s3::Client;
use aws_sdk_s3::config::{Region, RequestChecksumCalculation, ResponseChecksumValidation};
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_s3::presigning::PresigningConfig;
pub use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart, MetadataDirective};
use chrono::TimeDelta;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::config::{self, ConfigError};
use crate::id::FileId;
pub use drive_domain::file::Bucket;

/// The API's address when nothing else says: its default `DRIVE_LISTEN`.
pub const DEFAULT_SITE_URL: &str = "http://127.0.0.1:8080";

#[derive(Clone)]
pub struct StorageConfig {
    pub endpoint: String,
    pub region: String,
    pub access_key_id: String,
    pub secret_access_key: String,
    pub private_bucket: String,
    pub public_bucket: String,
    pub public_base_url: String,
    /// Where people reach the drive: permanent public links are made on it, so that every
    /// open passes through the API (and is counted) before it is sent on to the object.
    pub site_url: String,
}

/// Everything but the secret key, which no log line may carry.
impl std::fmt::Debug for StorageConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StorageConfig")
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"(hidden)")
            .field("private_bucket", &self.private_bucket)
            .field("public_bucket", &self.public_bucket)
            .field("public_base_url", &self.public_base_url)
            .field("site_url", &self.site_url)
            .finish()
    }
}

impl StorageConfig {
    /// Reads `DRIVE_S3_ENDPOINT` (default `http://127.0.0.1:8333`), `DRIVE_S3_REGION`
    /// (default `us-east-1`), `DRIVE_S3_ACCESS_KEY_ID`, `DRIVE_S3_SECRET_ACCESS_KEY`,
    /// `DRIVE_PRIVATE_BUCKET` (default `drive-private`), `DRIVE_PUBLIC_BUCKET` (default
    /// `drive-public`) and `DRIVE_PUBLIC_BASE_URL` (default `{endpoint}/{public bucket}`:
    /// where public objects are read anonymously), and `DRIVE_SITE_URL` (default `site`: the
    /// API's own address).
    pub fn from_environment(site: &str) -> Result<StorageConfig, ConfigError> {
        let endpoint = config::or("DRIVE_S3_ENDPOINT", "http://127.0.0.1:8333")
            .trim_end_matches('/')
            .to_string();
        let public_bucket = config::or("DRIVE_PUBLIC_BUCKET", "drive-public");
        Ok(StorageConfig {
            region: config::or("DRIVE_S3_REGION", "us-east-1"),
            access_key_id: config::required("DRIVE_S3_ACCESS_KEY_ID")?,
            secret_access_key: config::required("DRIVE_S3_SECRET_ACCESS_KEY")?,
            private_bucket: config::or("DRIVE_PRIVATE_BUCKET", "drive-private"),
            public_base_url: config::or("DRIVE_PUBLIC_BASE_URL", &format!("{endpoint}/{public_bucket}")),
            public_bucket,
            endpoint,
            site_url: config::or("DRIVE_SITE_URL", site)
                .trim_end_matches('/')
                .to_string(),
        })
    }
}

/// A storage call that failed: the store is down, slow or refused us. Callers answer 502.
#[derive(Debug, thiserror::Error)]
#[error("object storage {operation} failed: {cause}")]
pub struct StorageError {
    pub operation: &'static str,
    pub cause: String,
}

/// Store calls this process made that failed: every [`StorageError`] is made by [`failed`],
/// which counts it, so the API and the workers report the same thing (`drive_store_errors_total`).
static FAILURES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many store calls of this process have failed so far.
pub fn failures() -> u64 {
    FAILURES.load(std::sync::atomic::Ordering::Relaxed)
}

fn failed<E, R>(operation: &'static str) -> impl FnOnce(SdkError<E, R>) -> StorageError
where
    E: ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug,
{
    move |e| {
        FAILURES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        StorageError {
            operation,
            cause: match e.code() {
                Some(code) => format!("{code}: {}", e.message().unwrap_or_default()),
                None => aws_sdk_s3::error::DisplayErrorContext(&e).to_string(),
            },
        }
    }
}

fn status_of<E, R: HasStatus>(e: &SdkError<E, R>) -> Option<u16> {
    e.raw_response().map(HasStatus::status)
}

trait HasStatus {
    fn status(&self) -> u16;
}

impl HasStatus for aws_sdk_s3::config::http::HttpResponse {
    fn status(&self) -> u16 {
        self.status().as_u16()
    }
}

/// Characters kept as they are in a copy source: the key's slashes must survive.
const KEY_ENCODE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'/')
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Objects up to this size are copied in one request; S3 refuses a single copy above 5 GiB.
const SINGLE_COPY_LIMIT: i64 = 5 * 1024 * 1024 * 1024;
const COPY_PART_SIZE: i64 = 1024 * 1024 * 1024;

/// An object as the store describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    pub size: i64,
    /// The store's tag for these bytes: it changes whenever the key is written again.
    pub etag: String,
}

#[derive(Clone)]
pub struct Storage {
    client: Client,
    config: StorageConfig,
}

impl Storage {
    pub fn new(config: StorageConfig) -> Storage {
        let credentials = Credentials::new(
            &config.access_key_id,
            &config.secret_access_key,
            None,
            None,
            "drive-config",
        );
        let sdk_config = aws_sdk_s3::Config::builder()
            .behavior_version_latest()
            .region(Region::new(config.region.clone()))
            .endpoint_url(&config.endpoint)
            .credentials_provider(credentials)
            .force_path_style(true)
            // Presigned part URLs must carry nothing but what a plain PUT of the bytes sends.
            .request_checksum_calculation(RequestChecksumCalculation::WhenRequired)
            .response_checksum_validation(ResponseChecksumValidation::WhenRequired)
            .timeout_config(
                aws_sdk_s3::config::timeout::TimeoutConfig::builder()
                    .connect_timeout(Duration::from_secs(3))
                    .operation_attempt_timeout(Duration::from_secs(60))
                    .build(),
            )
            .build();
        Storage {
            client: Client::from_conf(sdk_config),
            config,
        }
    }

    pub fn bucket_name(&self, bucket: Bucket) -> &str {
        match bucket {
            Bucket::Private => &self.config.private_bucket,
            Bucket::Public => &self.config.public_bucket,
        }
    }

    /// Where people reach the drive (`DRIVE_SITE_URL`): the base of its links and pages.
    pub fn site_url(&self) -> &str {
        &self.config.site_url
    }

    /// The store's address: the origin a web page sends bytes to through presigned URLs.
    pub fn endpoint(&self) -> &str {
        &self.config.endpoint
    }

    /// The permanent link of a public file: the API's `/p/{id}`, which counts the open and
    /// sends the reader on to [`Storage::public_object_url`]. It names the file, not the
    /// object, so it stays the same for as long as the file is public.
    pub fn public_link(&self, file_id: FileId) -> String {
        format!("{}/p/{file_id}", self.config.site_url)
    }

    /// The base of public objects' addresses (`DRIVE_PUBLIC_BASE_URL`): a page shows public
    /// files from its origin.
    pub fn public_base_url(&self) -> &str {
        &self.config.public_base_url
    }

    /// Where an object in the public bucket is read anonymously.
    pub fn public_object_url(&self, key: &str) -> String {
        format!(
            "{}/{}",
            self.config.public_base_url,
            utf8_percent_encode(key, KEY_ENCODE)
        )
    }

    /// Whether the store answers for the private bucket (for `/readyz`).
    pub async fn reachable(&self) -> Result<(), StorageError> {
        self.client
            .head_bucket()
            .bucket(self.bucket_name(Bucket::Private))
            .send()
            .await
            .map(drop)
            .map_err(failed("head bucket"))
    }

    /// Makes both buckets when missing and lets anyone read the public one.
    pub async fn ensure_buckets(&self) -> Result<(), StorageError> {
        for bucket in [Bucket::Private, Bucket::Public] {
            let name = self.bucket_name(bucket);
            if let Err(e) = self.client.head_bucket().bucket(name).send().await {
                if status_of(&e) != Some(404) {
                    return Err(failed("head bucket")(e));
                }
                self.client
                    .create_bucket()
                    .bucket(name)
                    .send()
                    .await
                    .map_err(failed("create bucket"))?;
            }
        }
        let name = self.bucket_name(Bucket::Public);
        let policy = serde_json::json!({
            "Version": "2012-10-17",
            "Statement": [{
                "Sid": "AnonymousRead",
                "Effect": "Allow",
                "Principal": "*",
                "Action": ["s3:GetObject"],
                "Resource": [format!("arn:aws:s3:::{name}/*")],
            }],
        });
        self.client
            .put_bucket_policy()
            .bucket(name)
            .policy(policy.to_string())
            .send()
            .await
            .map_err(failed("put bucket policy"))?;
        Ok(())
    }

    /// A presigned GET that downloads under `file_name`.
    pub async fn presign_get(
        &self,
        bucket: Bucket,
        key: &str,
        file_name: &str,
        expires_in: TimeDelta,
    ) -> Result<String, StorageError> {
        let request = self
            .client
            .get_object()
            .bucket(self.bucket_name(bucket))
            .key(key)
            .response_content_disposition(content_disposition("attachment", file_name))
            .presigned(presigning(expires_in)?)
            .await
            .map_err(failed("presign get"))?;
        Ok(request.uri().to_string())
    }

    /// The stored length of an object, or `None` when there is no such object.
    pub async fn object_size(&self, bucket: Bucket, key: &str) -> Result<Option<i64>, StorageError> {
        Ok(self.head(bucket, key).await?.map(|stored| stored.size))
    }

    /// What the store holds under `key`: its length and ETag, or `None` when there is no such
    /// object.
    pub async fn head(&self, bucket: Bucket, key: &str) -> Result<Option<Stored>, StorageError> {
        match self
            .client
            .head_object()
            .bucket(self.bucket_name(bucket))
            .key(key)
            .send()
            .await
        {
            Ok(head) => Ok(Some(Stored {
                size: head.content_length().unwrap_or_default(),
                etag: head.e_tag().unwrap_or_default().to_string(),
            })),
            Err(e) if status_of(&e) == Some(404) => Ok(None),
            Err(e) => Err(failed("head object")(e)),
        }
    }

    /// The object's bytes as a stream, from `from` to the end (a ranged GET when `from` > 0):
    /// the worker reads inputs this way, never whole into memory.
    pub async fn read(&self, bucket: Bucket, key: &str, from: u64) -> Result<ByteStream, StorageError> {
        self.read_range(bucket, key, (from > 0).then(|| format!("bytes={from}-")))
            .await
    }

    /// `len` bytes of the object from `from` (a ranged GET).
    pub async fn read_span(
        &self,
        bucket: Bucket,
        key: &str,
        from: u64,
        len: u64,
    ) -> Result<ByteStream, StorageError> {
        let last = from + len.max(1) - 1;
        self.read_range(bucket, key, Some(format!("bytes={from}-{last}")))
            .await
    }

    async fn read_range(
        &self,
        bucket: Bucket,
        key: &str,
        range: Option<String>,
    ) -> Result<ByteStream, StorageError> {
        let object = self
            .client
            .get_object()
            .bucket(self.bucket_name(bucket))
            .key(key)
            .set_range(range)
            .send()
            .await
            .map_err(failed("get object"))?;
        Ok(object.body)
    }

    /// Stores an object in one request (up to 5 GiB; bigger ones go through
    /// [`Storage::create_multipart`] and [`Storage::upload_part`]). `body` is a local file
    /// (`ByteStream::from_path`) or bytes in memory.
    pub async fn write(
        &self,
        bucket: Bucket,
        key: &str,
        body: ByteStream,
        content_type: &str,
        content_disposition: &str,
    ) -> Result<(), StorageError> {
        self.client
            .put_object()
            .bucket(self.bucket_name(bucket))
            .key(key)
            .content_type(content_type)
            .content_disposition(content_disposition)
            .body(body)
            .send()
            .await
            .map_err(failed("put object"))?;
        Ok(())
    }

    /// Deletes an object; deleting one that is not there succeeds.
    pub async fn delete(&self, bucket: Bucket, key: &str) -> Result<(), StorageError> {
        self.client
            .delete_object()
            .bucket(self.bucket_name(bucket))
            .key(key)
            .send()
            .await
            .map_err(failed("delete object"))?;
        Ok(())
    }

    /// Copies an object to `to_key` in `to` (the other bucket, another key, or the same object
    /// again to store it with new headers), with `headers`. Objects above 5 GiB are copied
    /// part by part on the store's side; nothing passes through this process. A copy that
    /// fails part-way is aborted, so no parts are left behind.
    pub async fn copy(
        &self,
        from: Bucket,
        from_key: &str,
        to: Bucket,
        key: &str,
        size: i64,
        headers: &StoredHeaders,
    ) -> Result<(), StorageError> {
        let source = format!(
            "{}/{}",
            self.bucket_name(from),
            utf8_percent_encode(from_key, KEY_ENCODE)
        );
        let target = self.bucket_name(to);
        if size <= SINGLE_COPY_LIMIT {
            // The headers are the record's (its name now, inline), not the ones stored with
            // the bytes.
            self.client
                .copy_object()
                .copy_source(source)
                .bucket(target)
                .key(key)
                .metadata_directive(MetadataDirective::Replace)
                .content_type(&headers.content_type)
                .content_disposition(&headers.content_disposition)
                .send()
                .await
                .map_err(failed("copy object"))?;
            return Ok(());
        }
        // A multipart copy starts a new object: its headers are given again.
        let upload = self
            .client
            .create_multipart_upload()
            .bucket(target)
            .key(key)
            .content_type(&headers.content_type)
            .content_disposition(&headers.content_disposition)
            .send()
            .await
            .map_err(failed("create multipart copy"))?;
        let upload_id = upload.upload_id().unwrap_or_default();
        let copied = self.copy_parts(&source, target, key, upload_id, size).await;
        if copied.is_err()
            && let Err(cause) = self.abort_multipart(to, key, upload_id).await
        {
            tracing::warn!(%cause, key, "a failed copy's parts were not aborted; the store's own expiry removes them");
        }
        copied
    }

    async fn copy_parts(
        &self,
        source: &str,
        target: &str,
        key: &str,
        upload_id: &str,
        size: i64,
    ) -> Result<(), StorageError> {
        let mut parts = Vec::new();
        for (index, start) in (0..size).step_by(COPY_PART_SIZE as usize).enumerate() {
            let end = (start + COPY_PART_SIZE).min(size) - 1;
            let number = index as i32 + 1;
            let copied = self
                .client
                .upload_part_copy()
                .bucket(target)
                .key(key)
                .upload_id(upload_id)
                .part_number(number)
                .copy_source(source)
                .copy_source_range(format!("bytes={start}-{end}"))
                .send()
                .await
                .map_err(failed("copy part"))?;
            let etag = copied
                .copy_part_result()
                .and_then(|r| r.e_tag())
                .unwrap_or_default();
            parts.push(CompletedPart::builder().part_number(number).e_tag(etag).build());
        }
        self.client
            .complete_multipart_upload()
            .bucket(target)
            .key(key)
            .upload_id(upload_id)
            .multipart_upload(CompletedMultipartUpload::builder().set_parts(Some(parts)).build())
            .send()
            .await
            .map_err(failed("complete multipart copy"))?;
        Ok(())
    }
}

fn presigning(expires_in: TimeDelta) -> Result<PresigningConfig, StorageError> {
    PresigningConfig::expires_in(expires_in.to_std().unwrap_or_default()).map_err(|e| StorageError {
        operation: "presign",
        cause: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_never_print_the_secret_key() {
        let config = StorageConfig {
            endpoint: "http://127.0.0.1:8333".into(),
            region: "us-east-1".into(),
            access_key_id: "key-id".into(),
            secret_access_key: "very-secret".into(),
            private_bucket: "p".into(),
            public_bucket: "q".into(),
            public_base_url: "http://127.0.0.1:8333/q".into(),
            site_url: "http://127.0.0.1:8080".into(),
        };
        let printed = format!("{config:?}");
        assert!(
            printed.contains("key-id") && !printed.contains("very-secret"),
            "{printed}"
        );
    }
}
