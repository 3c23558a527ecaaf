//! import: a file fetched from a link through the drive's one outbound fetcher (its own
//! resolver drops every address that is not public before a connection is made; redirects go
//! through the same checks) and streamed into the store as the job's result, a few parts of
//! memory whatever its size. The account's room left is checked before the first byte (by the
//! length the server declares) and as the bytes come.

use std::io::{self, Read};
use std::time::Duration;

use drive_domain::file::MAX_FILE_SIZE;
use drive_domain::job::Import;
use drive_fetch::{BlockingFetcher, SystemResolver};
use serde_json::json;

use crate::job_process::archive::copy_with_progress;
use crate::job_process::context::JobContext;
use crate::job_process::objects::ResultWriter;
use crate::protocol::{JobError, JobResult};

pub fn run(context: &JobContext, settings: &Import) -> JobResult<serde_json::Value> {
    if let Some(saved) = context.saved(0)? {
        return Ok(json!({ "url": settings.url, "bytes": saved.file_size }));
    }
    // The job's own time limit stops it; this only keeps a stalled server from holding it.
    let fetcher = BlockingFetcher::new(
        SystemResolver,
        context.fetch_allowances(),
        Duration::from_secs(drive_domain::job::TIME_LIMIT_SECONDS),
    );
    let response = fetcher
        .get(&settings.url)
        .map_err(|e| JobError::Input(e.to_string()))?;
    let status = response.status();
    if !status.is_success() {
        return Err(JobError::Input(format!("the link answered {status}")));
    }
    let room = context.quota_left()?.min(MAX_FILE_SIZE);
    let declared = response.content_length();
    if let Some(length) = declared
        && length > room as u64
    {
        return Err(too_big(length, room));
    }
    let mut body = Capped {
        inner: response,
        left: room as u64,
        room,
    };
    let mut writer = ResultWriter::new(
        context,
        0,
        &settings.name,
        context.folder_id(),
        declared.unwrap_or(0),
    );
    let copied = copy_with_progress(&mut body, &mut writer, |n| {
        if let Some(length) = declared {
            context.progress(n as f32 / length.max(1) as f32);
        }
    })
    .map_err(|e| match e.downcast::<JobError>() {
        Ok(carried) => carried,
        Err(e) => JobError::Input(format!("the link's server stopped sending: {e}")),
    })?;
    if declared.is_some_and(|length| length != copied) {
        return Err(JobError::Input(format!(
            "the link's server declared {} bytes and sent {copied}",
            declared.unwrap_or_default()
        )));
    }
    let saved = writer.finish()?;
    Ok(json!({ "url": settings.url, "bytes": saved.file_size }))
}

fn too_big(length: u64, room: i64) -> JobError {
    JobError::Input(format!(
        "the file is {length} bytes and there is room for {room} (the account's storage left, at most 2 TB a file)"
    ))
}

/// The response's bytes, failing as the file's fault once they pass the room there is.
struct Capped<R> {
    inner: R,
    left: u64,
    room: i64,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n as u64 > self.left {
            return Err(io::Error::other(JobError::Input(format!(
                "the file is larger than the room there is ({} bytes: the account's storage left, at most 2 TB a file)",
                self.room
            ))));
        }
        self.left -= n as u64;
        Ok(n)
    }
}
