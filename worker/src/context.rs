//! What a running job works with: its row, its inputs (read as streams through their
//! presigned URLs, or downloaded within the 2 GB limit), its work folder, progress reporting,
//! and saving results as new files. The job process holds no credential: every call here
//! that needs one is a request to its supervisor ([`crate::protocol`]), which checks it
//! against the job and does it.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use drive_core::db::files::FileRow;
use drive_core::db::folders::FolderRow;
use drive_core::db::jobs::JobRow;
use drive_core::id::FolderId;
use drive_core::job::decimal_size;
use drive_core::metadata::Metadata;
use drive_core::storage::StorageError;
use serde::de::DeserializeOwned;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};

use crate::protocol::{Answer, Input, Request, Start};

/// Why a job could not finish. Serializable: the supervisor answers a request with one.
#[derive(Debug, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum JobError {
    /// Something about the inputs or settings: the job fails with this sentence.
    #[error("{0}")]
    Input(String),
    /// The server side (the store, the database, the disk): the job is tried again.
    #[error("{0}")]
    Server(String),
}

pub type JobResult<T> = Result<T, JobError>;

impl JobError {
    /// Names the input at fault, for jobs that take several.
    pub fn in_file(self, name: &str) -> JobError {
        match self {
            JobError::Input(why) => JobError::Input(format!("{name}: {why}")),
            server => server,
        }
    }
}

impl From<sqlx::Error> for JobError {
    fn from(e: sqlx::Error) -> JobError {
        JobError::Server(format!("database: {e}"))
    }
}

impl From<StorageError> for JobError {
    fn from(e: StorageError) -> JobError {
        JobError::Server(e.to_string())
    }
}

impl From<std::io::Error> for JobError {
    fn from(e: std::io::Error) -> JobError {
        JobError::Server(format!("local disk: {e}"))
    }
}

impl From<drive_media::picture::PictureError> for JobError {
    fn from(e: drive_media::picture::PictureError) -> JobError {
        if e.is_client_error() {
            JobError::Input(e.to_string())
        } else {
            JobError::Server(e.to_string())
        }
    }
}

impl From<drive_media::av::AvError> for JobError {
    fn from(e: drive_media::av::AvError) -> JobError {
        if e.is_client_error() {
            JobError::Input(e.to_string())
        } else {
            JobError::Server(e.to_string())
        }
    }
}

impl From<drive_pdf::PdfError> for JobError {
    fn from(e: drive_pdf::PdfError) -> JobError {
        if e.is_client_error() {
            JobError::Input(e.to_string())
        } else {
            JobError::Server(e.to_string())
        }
    }
}

impl From<tokio::task::JoinError> for JobError {
    fn from(e: tokio::task::JoinError) -> JobError {
        JobError::Server(format!("a job thread failed: {e}"))
    }
}

pub struct JobContext {
    supervisor: Supervisor,
    http: reqwest::Client,
    pub job: JobRow,
    inputs: Result<Vec<Input>, String>,
    /// This job's own scratch folder, emptied when it ends.
    pub dir: PathBuf,
    pub font: PathBuf,
    /// The local models' folder (readable under the job's Landlock rules).
    pub models: PathBuf,
    download_limit: i64,
    downloaded: Mutex<i64>,
    last_progress: Mutex<Option<Instant>>,
}

/// Progress is written at most this often.
const PROGRESS_EVERY: Duration = Duration::from_millis(500);

impl JobContext {
    pub fn new(supervisor: Supervisor, start: Start) -> JobContext {
        JobContext {
            supervisor,
            http: reqwest::Client::new(),
            job: start.job,
            inputs: start.inputs,
            dir: start.dir,
            font: start.font,
            models: start.models,
            download_limit: start.download_limit,
            downloaded: Mutex::new(0),
            last_progress: Mutex::new(None),
        }
    }

    /// The job's input files in the order given. A file trashed or deleted since the job was
    /// made fails the job: it would otherwise make something the caller did not ask for.
    pub async fn inputs(&self) -> JobResult<Vec<FileRow>> {
        match &self.inputs {
            Ok(inputs) => Ok(inputs.iter().map(|input| input.file.clone()).collect()),
            Err(why) => Err(JobError::Input(why.clone())),
        }
    }

    /// Where results land: the folder the job names, or beside its first input.
    pub fn folder_id(&self) -> Option<FolderId> {
        self.job.output_folder_id.or(self.job.folder_id)
    }

    /// Reports progress (0..1), at most every half second unless `force`d.
    pub async fn progress(&self, fraction: f32) {
        {
            let mut last = self.last_progress.lock().unwrap_or_else(|e| e.into_inner());
            if last.is_some_and(|t| t.elapsed() < PROGRESS_EVERY) && fraction < 1.0 {
                return;
            }
            *last = Some(Instant::now());
        }
        if let Err(e) = self.supervisor.ask::<()>(&Request::Progress { fraction }).await {
            tracing::warn!(job.id = %self.job.id, "writing progress failed: {e}");
        }
    }

    /// The presigned GET the supervisor gave for an input: FFmpeg reads it as it seeks.
    pub fn location(&self, file: &FileRow) -> JobResult<String> {
        self.inputs
            .iter()
            .flatten()
            .find(|input| input.file.id == file.id)
            .map(|input| input.url.clone())
            .ok_or_else(|| JobError::Server(format!("no link for {}", file.file_name)))
    }

    /// A file's bytes from `from` on (all of them when `len` is `None`, else `len` of them),
    /// as a response whose body is read as it comes.
    async fn get(&self, file: &FileRow, from: u64, len: Option<u64>) -> JobResult<reqwest::Response> {
        let mut request = self.http.get(self.location(file)?);
        if let Some(len) = len {
            request = request.header("Range", format!("bytes={from}-{}", from + len.max(1) - 1));
        }
        request
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| JobError::Server(format!("reading {} from the store: {e}", file.file_name)))
    }

    /// A file's bytes as a stream from the store.
    pub async fn read(&self, file: &FileRow) -> JobResult<reqwest::Response> {
        self.get(file, 0, None).await
    }

    /// `len` bytes of a file from `from` (a ranged GET).
    pub async fn read_span(&self, file: &FileRow, from: u64, len: u64) -> JobResult<Bytes> {
        self.get(file, from, Some(len))
            .await?
            .bytes()
            .await
            .map_err(|e| JobError::Server(format!("reading {} from the store: {e}", file.file_name)))
    }

    /// Downloads a picture or PDF into the work folder, counting it against the job's limit.
    pub async fn download(&self, file: &FileRow, position: usize) -> JobResult<PathBuf> {
        {
            let mut total = self.downloaded.lock().unwrap_or_else(|e| e.into_inner());
            *total += file.file_size;
            if *total > self.download_limit {
                return Err(JobError::Input(format!(
                    "pictures and PDFs a job works on may total {}; these are more",
                    decimal_size(self.download_limit)
                )));
            }
        }
        let path = self.dir.join(format!("input-{position}"));
        let mut body = self.read(file).await?;
        let mut out = tokio::fs::File::create(&path).await?;
        while let Some(chunk) = body
            .chunk()
            .await
            .map_err(|e| JobError::Server(format!("reading {} from the store: {e}", file.file_name)))?
        {
            out.write_all(&chunk).await?;
        }
        out.flush().await?;
        Ok(path)
    }

    /// Bytes the account can still store.
    pub async fn quota_left(&self) -> JobResult<i64> {
        self.supervisor.ask(&Request::QuotaLeft).await
    }

    /// The result already saved at `position` by an earlier attempt of this job.
    pub async fn saved(&self, position: i32) -> JobResult<Option<FileRow>> {
        self.supervisor.ask(&Request::Saved { position }).await
    }

    /// Saves a local file as the job's `position`th result named `name` (a free variant of
    /// it when the folder has one already), in `folder_id`.
    pub async fn save(
        &self,
        position: i32,
        path: &Path,
        name: &str,
        folder_id: Option<FolderId>,
    ) -> JobResult<FileRow> {
        let request = Request::Save {
            position,
            path: path.to_path_buf(),
            name: name.to_string(),
            folder_id,
        };
        self.supervisor.ask(&request).await
    }

    /// Saves a picture extracted from `of` (its album art or poster) as a derivative file,
    /// kept out of listings; `None` when it would pass the quota.
    pub async fn save_derivative(&self, of: &FileRow, path: &Path, name: &str) -> JobResult<Option<FileRow>> {
        let request = Request::SaveDerivative {
            of: of.id,
            path: path.to_path_buf(),
            name: name.to_string(),
        };
        self.supervisor.ask(&request).await
    }

    /// The path of one of the account's folders (`None` for the top).
    pub async fn folder_path(&self, folder_id: Option<FolderId>) -> JobResult<Option<String>> {
        self.supervisor.ask(&Request::FolderPath { folder_id }).await
    }

    /// The folder an unzip fills (made by its first attempt).
    pub async fn unzip_folder(&self) -> JobResult<FolderRow> {
        self.supervisor.ask(&Request::UnzipFolder).await
    }

    /// The folder at `path`, at or below the unzip's folder, made when missing.
    pub async fn entry_folder(&self, path: &str) -> JobResult<Option<FolderId>> {
        let request = Request::EntryFolder {
            path: path.to_string(),
        };
        self.supervisor.ask(&request).await
    }

    /// Stores what a readMetadata job read from its file.
    pub async fn store_metadata(&self, metadata: Metadata) -> JobResult<()> {
        self.supervisor.ask(&Request::StoreMetadata { metadata }).await
    }

    /// Records why a readMetadata job's file could not be read.
    pub async fn metadata_unreadable(&self, why: &str) -> JobResult<()> {
        let request = Request::MetadataUnreadable { why: why.to_string() };
        self.supervisor.ask(&request).await
    }

    /// Ends the job: done with its result, or failed with a sentence for the caller.
    pub async fn end(&self, outcome: Result<serde_json::Value, String>) -> JobResult<()> {
        self.supervisor.ask(&Request::End { outcome }).await
    }

    /// Asks the supervisor something for a streamed write ([`crate::objects`]).
    pub async fn ask<T: DeserializeOwned>(&self, request: &Request) -> JobResult<T> {
        self.supervisor.ask(request).await
    }

    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }
}

/// The job process's line to its supervisor: requests out on the pipe that was its stdout,
/// answers in on stdin. One request at a time.
pub struct Supervisor {
    line: tokio::sync::Mutex<(tokio::fs::File, Lines<BufReader<tokio::io::Stdin>>)>,
}

impl Supervisor {
    /// Takes this process's stdout for the protocol and points fd 1 at stderr instead, so
    /// that nothing a library prints can be read as a request.
    pub fn attach() -> std::io::Result<Supervisor> {
        use std::os::fd::FromRawFd;
        // SAFETY: dup and dup2 on this process's own standard descriptors; the new
        // descriptor is owned by the `File` alone.
        let requests = unsafe {
            let fd = libc::dup(1);
            if fd < 0 || libc::dup2(2, 1) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            std::fs::File::from_raw_fd(fd)
        };
        let answers = BufReader::new(tokio::io::stdin()).lines();
        Ok(Supervisor {
            line: tokio::sync::Mutex::new((tokio::fs::File::from_std(requests), answers)),
        })
    }

    /// The job this process is to run; `None` when the supervisor stopped before handing one.
    /// Read before the runtime starts; the answers that follow are read through the same
    /// buffered stdin, so nothing read ahead is lost.
    pub fn start(&self) -> Option<Start> {
        let mut text = String::new();
        std::io::stdin().read_line(&mut text).ok()?;
        serde_json::from_str(&text)
            .inspect_err(|e| tracing::error!("the job's start does not read: {e}"))
            .ok()
    }

    async fn ask<T: DeserializeOwned>(&self, request: &Request) -> JobResult<T> {
        let lost = |e: &dyn std::fmt::Display| JobError::Server(format!("the supervisor's line: {e}"));
        let mut line = self.line.lock().await;
        let mut text = serde_json::to_string(request).map_err(|e| lost(&e))?;
        text.push('\n');
        line.0.write_all(text.as_bytes()).await.map_err(|e| lost(&e))?;
        line.0.flush().await.map_err(|e| lost(&e))?;
        let answer = line
            .1
            .next_line()
            .await
            .map_err(|e| lost(&e))?
            .ok_or_else(|| lost(&"closed"))?;
        let answer: Answer = serde_json::from_str(&answer).map_err(|e| lost(&e))?;
        serde_json::from_value(answer?).map_err(|e| lost(&e))
    }
}
