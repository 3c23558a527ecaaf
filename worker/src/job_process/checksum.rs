//! checksum: each file's SHA-256 or MD5, streamed from the store. Reading and hashing run
//! side by side (each on a thread of its own, joined by a short queue of chunks), so a file
//! of any size takes a few chunks of memory.

use std::io::Read;

use drive_domain::job::{Checksum, Checksums, DigestAlgorithm, FileDigest};
use drive_domain::rows::FileRow;
use md5::Md5;
use sha2::{Digest, Sha256};

use crate::job_process::context::JobContext;
use crate::protocol::{JobError, JobResult};

/// Chunks in flight between the reader and the hasher, and their size.
const CHUNKS_IN_FLIGHT: usize = 16;
const CHUNK: usize = 256 * 1024;

pub fn run(context: &JobContext, settings: &Checksum) -> JobResult<serde_json::Value> {
    let inputs = context.inputs()?;
    let total: i64 = inputs.iter().map(|f| f.file_size).sum::<i64>().max(1);
    let mut done = 0i64;
    let mut checksums = Vec::with_capacity(inputs.len());
    for file in &inputs {
        let digest = match settings.algorithm {
            DigestAlgorithm::Sha256 => digest::<Sha256>(context, file, &mut done, total)?,
            DigestAlgorithm::Md5 => digest::<Md5>(context, file, &mut done, total)?,
        };
        checksums.push(FileDigest {
            file_id: file.id,
            file_name: file.file_name.clone(),
            bytes: file.file_size,
            digest,
        });
    }
    let result = Checksums {
        algorithm: settings.algorithm,
        checksums,
    };
    serde_json::to_value(result).map_err(|e| JobError::Server(format!("the result is not JSON: {e}")))
}

fn digest<D: Digest>(context: &JobContext, file: &FileRow, done: &mut i64, total: i64) -> JobResult<String> {
    let mut body = context.read(file)?;
    let (chunks, received) = std::sync::mpsc::sync_channel::<Vec<u8>>(CHUNKS_IN_FLIGHT);
    // The store's bytes are read on a thread of their own while this one hashes.
    let read = std::thread::scope(|scope| {
        let reader = scope.spawn(move || -> std::io::Result<i64> {
            let mut read = 0i64;
            loop {
                let mut chunk = Vec::with_capacity(CHUNK);
                let n = (&mut body).take(CHUNK as u64).read_to_end(&mut chunk)?;
                if n == 0 {
                    return Ok(read);
                }
                read += n as i64;
                if chunks.send(chunk).is_err() {
                    return Ok(read);
                }
            }
        });
        let mut hasher = D::new();
        let mut hashed = 0i64;
        for chunk in received {
            hasher.update(&chunk);
            hashed += chunk.len() as i64;
            context.progress((*done + hashed) as f32 / total as f32);
        }
        let read = reader
            .join()
            .map_err(|_| JobError::Server("the reading thread panicked".to_string()))??;
        Ok::<_, JobError>((read, hex::encode(hasher.finalize())))
    });
    let (read, digest) = read?;
    if read != file.file_size {
        return Err(JobError::Server(format!(
            "the store handed over {read} of {}'s {} bytes",
            file.file_name, file.file_size
        )));
    }
    *done += read;
    Ok(digest)
}
