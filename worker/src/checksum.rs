//! checksum: each file's SHA-256 or MD5, streamed from the store. Reading and hashing run
//! side by side (the network on the runtime, the hash on a thread of its own, joined by a
//! short queue of chunks), so a file of any size takes a few chunks of memory.

use drive_core::db::files::FileRow;
use drive_core::job::{Checksum, DigestAlgorithm};
use md5::Md5;
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::context::{JobContext, JobError, JobResult};

/// Chunks in flight between the reader and the hasher.
const CHUNKS_IN_FLIGHT: usize = 16;

pub async fn run(context: &JobContext, settings: &Checksum) -> JobResult<serde_json::Value> {
    let inputs = context.inputs().await?;
    let total: i64 = inputs.iter().map(|f| f.file_size).sum::<i64>().max(1);
    let mut done = 0i64;
    let mut checksums = Vec::with_capacity(inputs.len());
    for file in &inputs {
        let digest = match settings.algorithm {
            DigestAlgorithm::Sha256 => digest::<Sha256>(context, file, &mut done, total).await?,
            DigestAlgorithm::Md5 => digest::<Md5>(context, file, &mut done, total).await?,
        };
        checksums.push(json!({
            "fileId": file.id,
            "fileName": file.file_name,
            "bytes": file.file_size,
            "digest": digest,
        }));
    }
    Ok(json!({ "algorithm": settings.algorithm, "checksums": checksums }))
}

async fn digest<D: Digest + Send + 'static>(
    context: &JobContext,
    file: &FileRow,
    done: &mut i64,
    total: i64,
) -> JobResult<String> {
    let mut body = context.read(file).await?;
    let (chunks, received) = std::sync::mpsc::sync_channel::<bytes::Bytes>(CHUNKS_IN_FLIGHT);
    let hasher = tokio::task::spawn_blocking(move || {
        let mut hasher = D::new();
        for chunk in received {
            hasher.update(&chunk);
        }
        hex::encode(hasher.finalize())
    });
    let mut read = 0i64;
    while let Some(chunk) = body
        .chunk()
        .await
        .map_err(|e| JobError::Server(format!("reading {} from the store: {e}", file.file_name)))?
    {
        read += chunk.len() as i64;
        // Blocks this task only while the hasher is behind; it is this process's only job.
        let sent = tokio::task::block_in_place(|| chunks.send(chunk));
        if sent.is_err() {
            break;
        }
        context.progress((*done + read) as f32 / total as f32).await;
    }
    drop(chunks);
    let digest = hasher.await?;
    if read != file.file_size {
        return Err(JobError::Server(format!(
            "the store handed over {read} of {}'s {} bytes",
            file.file_name, file.file_size
        )));
    }
    *done += read;
    Ok(digest)
}
