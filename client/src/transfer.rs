//! Sending one file: its bytes straight to storage, streamed from disk (a presigned form up
//! to 64 MiB, signed parts above), then `/insert-file` to record it; or, when an earlier run
//! stored the bytes but did not record them, only `/insert-file`.

use std::collections::HashSet;
use std::io::SeekFrom;
use std::path::Path;

use anyhow::{Context, Result, bail};
use futures::{TryStreamExt, stream};
use reqwest::Body;
use reqwest::header::CONTENT_LENGTH;
use reqwest::multipart::{Form, Part};
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use tokio::fs::File;
use tokio::io::{AsyncReadExt, AsyncSeekExt};
use tokio_util::io::ReaderStream;
use uuid::Uuid;

use crate::local::LocalFile;
use crate::{Client, has_code};
use drive_kinds::FileKind;

/// Told the bytes of a file as they leave for storage (a progress bar, or nothing).
pub type Progress = std::sync::Arc<dyn Fn(u64) + Send + Sync>;

/// Files up to this size go in one form POST; larger ones in parts, which can resume.
pub const FORM_UPLOAD_LIMIT: u64 = 64 * 1024 * 1024;
/// Parts of one file sent at once.
const PARTS_IN_FLIGHT: usize = 4;
/// Most part numbers `/sign-upload-parts` signs in one call.
const SIGN_BATCH: usize = 1000;
/// Bytes read from disk per chunk sent.
const CHUNK: usize = 256 * 1024;

/// The body of `/generate-file-urls` and `/create-multipart-upload`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UploadInput<'a> {
    #[serde(rename = "type")]
    kind: FileKind,
    file_name: &'a str,
    file_size: u64,
    object_key: &'a str,
    mime_type: &'static str,
}

/// The body of `/insert-file`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InsertInput<'a> {
    #[serde(flatten)]
    upload: &'a UploadInput<'a>,
    is_public: bool,
    creator: Creator,
    modified_time: String,
}

#[derive(Serialize)]
struct Creator {
    id: Uuid,
}

#[derive(Deserialize)]
struct Inserted {
    id: Uuid,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileUrls {
    upload_url: String,
    upload_form: serde_json::Map<String, serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MultipartUpload {
    token: String,
    resumed: bool,
    part_size: u64,
    part_count: u32,
    parts: Vec<StoredPart>,
    #[serde(default)]
    signed_parts: Vec<SignedPart>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredPart {
    part_number: u32,
    size: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SignedPart {
    part_number: u32,
    size: u64,
    url: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SignPartsInput<'a> {
    token: &'a str,
    part_numbers: &'a [u32],
}

#[derive(Deserialize)]
struct SignedParts {
    parts: Vec<SignedPart>,
}

#[derive(Serialize)]
struct UploadToken<'a> {
    token: &'a str,
}

/// How sending a file ended.
pub enum Sent {
    /// Recorded as file `id`. `resumed_parts` is how many parts an earlier, interrupted run
    /// had stored, when the service picked that upload up.
    Recorded { id: Uuid, resumed_parts: Option<usize> },
    /// Nothing sent: storage already held the bytes under this file's key (an earlier run
    /// stored them and stopped before recording them), and the file is now recorded as `id`.
    /// `id` may also be a file recorded under the key already, one in the trash for instance.
    Recovered { id: Uuid },
    /// A file is already recorded under this file's key, that is, this very file.
    KeyTaken,
}

pub async fn send(client: &Client, file: &LocalFile, user_id: Uuid, progress: &Progress) -> Result<Sent> {
    let object_key = file.object_key(user_id);
    let (kind, mime_type) = drive_kinds::for_name(&file.name);
    let input = UploadInput {
        kind,
        file_name: &file.name,
        file_size: file.size,
        object_key: &object_key,
        mime_type,
    };
    if let Some(id) = recover(client, file, &input, user_id).await? {
        progress(file.size);
        return Ok(Sent::Recovered { id });
    }
    let stored = if file.size <= FORM_UPLOAD_LIMIT {
        send_form(client, file, &input, progress).await.map(|()| None)
    } else {
        send_parts(client, file, &input, progress).await
    };
    let resumed_parts = match stored {
        Ok(resumed_parts) => resumed_parts,
        Err(e) if has_code(&e, "object_key_taken") => return Ok(Sent::KeyTaken),
        Err(e) => return Err(e),
    };
    Ok(Sent::Recorded {
        id: insert(client, file, &input, user_id).await?,
        resumed_parts,
    })
}

/// Records the file from what storage already holds under its key, before any byte is sent:
/// a run stopped between storing the object and `/insert-file` leaves it there. `None` when
/// nothing is stored under the key, the usual case.
async fn recover(
    client: &Client,
    file: &LocalFile,
    input: &UploadInput<'_>,
    user_id: Uuid,
) -> Result<Option<Uuid>> {
    match insert(client, file, input, user_id).await {
        Ok(id) => Ok(Some(id)),
        Err(e) if has_code(&e, "object_not_found") => Ok(None),
        Err(e) => Err(e),
    }
}

/// `/insert-file`: records the object stored under the key as this file.
async fn insert(client: &Client, file: &LocalFile, input: &UploadInput<'_>, user_id: Uuid) -> Result<Uuid> {
    let insert = InsertInput {
        upload: input,
        is_public: false,
        creator: Creator { id: user_id },
        modified_time: file.modified_rfc3339(),
    };
    let inserted: Inserted = client.post("/insert-file", &insert).await?;
    Ok(inserted.id)
}

/// One POST of the presigned form: its fields unchanged, then the file, which storage takes
/// only last.
async fn send_form(
    client: &Client,
    file: &LocalFile,
    input: &UploadInput<'_>,
    progress: &Progress,
) -> Result<()> {
    let urls: FileUrls = client.post("/generate-file-urls", input).await?;
    let mut form = Form::new();
    for (name, value) in urls.upload_form {
        let serde_json::Value::String(value) = value else {
            bail!("/generate-file-urls answered a non-text value for the form field {name}");
        };
        form = form.text(name, value);
    }
    let body = stream_from_disk(&file.path, 0, file.size, progress).await?;
    let part = Part::stream_with_length(body, file.size)
        .file_name(file.name.clone())
        .mime_str(input.mime_type)?;
    let response = client
        .http()
        .post(&urls.upload_url)
        .multipart(form.part("file", part))
        .send()
        .await
        .context("reaching storage")?;
    check_stored(response, "the file").await
}

/// A multipart upload: parts storage already holds are skipped, the rest are PUT four at a
/// time. Answers the number of parts resumed, when the service resumed an upload.
async fn send_parts(
    client: &Client,
    file: &LocalFile,
    input: &UploadInput<'_>,
    progress: &Progress,
) -> Result<Option<usize>> {
    let upload: MultipartUpload = client.post("/create-multipart-upload", input).await?;
    progress(upload.parts.iter().map(|p| p.size).sum());
    // Parts neither stored nor signed in the create answer (past the first 100 missing) are
    // signed a batch at a time as they are reached, so no URL ages out (they last a day)
    // while earlier parts of a very large file are still going.
    let covered: HashSet<u32> = upload
        .parts
        .iter()
        .map(|p| p.part_number)
        .chain(upload.signed_parts.iter().map(|p| p.part_number))
        .collect();
    let unsigned: Vec<u32> = (1..=upload.part_count).filter(|n| !covered.contains(n)).collect();
    let resume_hint = || {
        format!(
            "sending {} in parts (run the same command again to resume)",
            file.name
        )
    };

    put_parts(client, file, upload.part_size, upload.signed_parts, progress)
        .await
        .with_context(resume_hint)?;
    for numbers in unsigned.chunks(SIGN_BATCH) {
        let signed: SignedParts = client
            .post(
                "/sign-upload-parts",
                &SignPartsInput {
                    token: &upload.token,
                    part_numbers: numbers,
                },
            )
            .await?;
        put_parts(client, file, upload.part_size, signed.parts, progress)
            .await
            .with_context(resume_hint)?;
    }
    let _: IgnoredAny = client
        .post(
            "/complete-multipart-upload",
            &UploadToken { token: &upload.token },
        )
        .await?;
    Ok(upload.resumed.then_some(upload.parts.len()))
}

async fn put_parts(
    client: &Client,
    file: &LocalFile,
    part_size: u64,
    parts: Vec<SignedPart>,
    progress: &Progress,
) -> Result<()> {
    stream::iter(parts.into_iter().map(Ok))
        .try_for_each_concurrent(PARTS_IN_FLIGHT, |part| async move {
            let offset = u64::from(part.part_number.saturating_sub(1)) * part_size;
            let body = stream_from_disk(&file.path, offset, part.size, progress).await?;
            // Streams carry no length of their own; the URL is signed for this exact one.
            let response = client
                .http()
                .put(&part.url)
                .header(CONTENT_LENGTH, part.size)
                .body(body)
                .send()
                .await
                .with_context(|| format!("sending part {}", part.part_number))?;
            check_stored(response, &format!("part {}", part.part_number)).await
        })
        .await
}

/// `len` bytes of the file at `path` from `offset`, read as they are sent rather than all
/// at once, moving the progress bar as they go.
async fn stream_from_disk(path: &Path, offset: u64, len: u64, progress: &Progress) -> Result<Body> {
    let mut file = File::open(path)
        .await
        .with_context(|| format!("opening {}", path.display()))?;
    file.seek(SeekFrom::Start(offset))
        .await
        .with_context(|| format!("reading {}", path.display()))?;
    let progress = progress.clone();
    let chunks = ReaderStream::with_capacity(file.take(len), CHUNK)
        .inspect_ok(move |chunk| progress(chunk.len() as u64));
    Ok(Body::wrap_stream(chunks))
}

/// Storage answers errors as S3 XML; its `Message` says what went wrong.
async fn check_stored(response: reqwest::Response, what: &str) -> Result<()> {
    let status = response.status();
    if status.is_success() {
        return Ok(());
    }
    let text = response.text().await.unwrap_or_default();
    let message = xml_element(&text, "Message")
        .or_else(|| xml_element(&text, "Code"))
        .unwrap_or_else(|| text.trim().chars().take(200).collect());
    bail!("storage refused {what}: {message} (HTTP {status})")
}

fn xml_element(xml: &str, name: &str) -> Option<String> {
    let start = xml.find(&format!("<{name}>"))? + name.len() + 2;
    let len = xml[start..].find(&format!("</{name}>"))?;
    Some(xml[start..start + len].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_errors_say_their_message() {
        let xml = "<Error><Code>AccessDenied</Code><Message>Policy expired</Message></Error>";
        assert_eq!(xml_element(xml, "Message").as_deref(), Some("Policy expired"));
        assert_eq!(xml_element(xml, "Code").as_deref(), Some("AccessDenied"));
        assert_eq!(xml_element("not xml", "Message"), None);
    }
}
