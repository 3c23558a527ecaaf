//! What a running job works with: its row, its inputs (read as streams through their
//! presigned URLs, or downloaded within the 2 GB limit), its work folder, progress reporting,
//! and saving results as new files. The job process holds no credential: every call here
//! that needs one is a request to its supervisor ([`crate::protocol`]), which checks it
//! against the job and does it.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine;
use drive_domain::id::FolderId;
use drive_domain::job::decimal_size;
use drive_domain::rows::FileRow;
use drive_domain::rows::FolderRow;
use drive_domain::rows::JobRow;
use serde::de::DeserializeOwned;
use std::io::{BufRead, BufReader, Read, Write};

use crate::protocol::{Answer, Input, JobError, JobResult, MAX_DESCRIPTIONS, MetadataRead, Request, Start};

// A job's failures, from what it calls (the supervisor, the disk, the media and PDF
// crates), as the protocol's [`JobError`]: an input's fault fails the job, the server's retries.

impl From<std::io::Error> for JobError {
    /// A failure of the store or the supervisor that travelled inside an `io::Error` (through
    /// the readers and writers of [`crate::job_process::objects`] and [`StoredBytes`]) keeps its sentence;
    /// any other is the local disk's.
    fn from(e: std::io::Error) -> JobError {
        match e.downcast::<JobError>() {
            Ok(carried) => carried,
            Err(e) => JobError::Server(format!("local disk: {e}")),
        }
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

pub struct JobContext {
    supervisor: Supervisor,
    http: reqwest::blocking::Client,
    pub job: JobRow,
    inputs: Result<Vec<Input>, String>,
    /// This job's own scratch folder, emptied when it ends.
    pub dir: PathBuf,
    pub font: PathBuf,
    /// Whether its results become files in folders ([`Start::makes_files`]).
    pub makes_files: bool,
    /// Whether [`JobContext::describe`] may be asked.
    describes: bool,
    described: Mutex<usize>,
    download_limit: i64,
    downloaded: Mutex<i64>,
    last_progress: Mutex<Option<Instant>>,
    fetch_hosts: Vec<String>,
}

/// Bytes read from the store at a time when downloading.
const COPY_BUFFER: usize = 1024 * 1024;

/// Progress is written at most this often.
const PROGRESS_EVERY: Duration = Duration::from_millis(500);

impl JobContext {
    pub fn new(supervisor: Supervisor, start: Start) -> JobContext {
        JobContext {
            supervisor,
            http: reqwest::blocking::Client::new(),
            job: start.job,
            makes_files: start.makes_files,
            inputs: start.inputs,
            dir: start.dir,
            font: start.font,
            describes: start.describes,
            described: Mutex::new(0),
            download_limit: start.download_limit,
            downloaded: Mutex::new(0),
            last_progress: Mutex::new(None),
            fetch_hosts: start.fetch_hosts,
        }
    }

    /// What an import may fetch beyond the public internet (the tests' servers; none in
    /// service).
    pub fn fetch_allowances(&self) -> drive_fetch::Allowances {
        drive_fetch::Allowances {
            hosts: self.fetch_hosts.clone(),
            ..Default::default()
        }
    }

    /// The job's input files in the order given. A file trashed or deleted since the job was
    /// made fails the job: it would otherwise make something the caller did not ask for.
    pub fn inputs(&self) -> JobResult<Vec<FileRow>> {
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
    pub fn progress(&self, fraction: f32) {
        {
            let mut last = self.last_progress.lock().unwrap_or_else(|e| e.into_inner());
            if last.is_some_and(|t| t.elapsed() < PROGRESS_EVERY) && fraction < 1.0 {
                return;
            }
            *last = Some(Instant::now());
        }
        if let Err(e) = self.supervisor.ask::<()>(&Request::Progress { fraction }) {
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
    fn get(&self, file: &FileRow, from: u64, len: Option<u64>) -> JobResult<reqwest::blocking::Response> {
        let mut request = self.http.get(self.location(file)?);
        if let Some(len) = len {
            request = request.header("Range", format!("bytes={from}-{}", from + len.max(1) - 1));
        }
        request
            .send()
            .and_then(reqwest::blocking::Response::error_for_status)
            .map_err(|e| store_read_failed(file, &e))
    }

    /// A file's bytes as a stream from the store.
    pub fn read<'a>(&self, file: &'a FileRow) -> JobResult<StoredBytes<'a>> {
        Ok(StoredBytes {
            body: self.get(file, 0, None)?,
            file_name: &file.file_name,
        })
    }

    /// `len` bytes of a file from `from` (a ranged GET).
    pub fn read_span(&self, file: &FileRow, from: u64, len: u64) -> JobResult<Vec<u8>> {
        let mut bytes = Vec::with_capacity(len as usize);
        self.get(file, from, Some(len))?
            .read_to_end(&mut bytes)
            .map_err(|e| store_read_failed(file, &e))?;
        Ok(bytes)
    }

    /// Downloads a picture or PDF into the work folder, counting it against the job's limit.
    pub fn download(&self, file: &FileRow, position: usize) -> JobResult<PathBuf> {
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
        let body = self.read(file)?;
        let mut out = std::fs::File::create(&path)?;
        std::io::copy(&mut BufReader::with_capacity(COPY_BUFFER, body), &mut out)?;
        Ok(path)
    }

    /// Bytes the account can still store.
    pub fn quota_left(&self) -> JobResult<i64> {
        self.supervisor.ask(&Request::QuotaLeft)
    }

    /// The result already saved at `position` by an earlier attempt of this job.
    pub fn saved(&self, position: i32) -> JobResult<Option<FileRow>> {
        self.supervisor.ask(&Request::Saved { position })
    }

    /// Saves a local file as the job's `position`th result named `name` (a free variant of
    /// it when the folder has one already), in `folder_id`.
    pub fn save(
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
        self.supervisor.ask(&request)
    }

    /// Hands a local file over as the job's `position`th result, like [`JobContext::save`], but
    /// goes on at once: the file may be removed as soon as this returns. Its file comes from
    /// [`JobContext::saved_ahead`]; the job's end waits for it.
    pub fn save_ahead(
        &self,
        position: i32,
        path: &Path,
        name: &str,
        folder_id: Option<FolderId>,
    ) -> JobResult<()> {
        let request = Request::SaveAhead {
            position,
            path: path.to_path_buf(),
            name: name.to_string(),
            folder_id,
        };
        self.supervisor.ask(&request)
    }

    /// The files saved ahead since the last call, in the order they were handed over, once all
    /// are recorded; the first failure among them otherwise.
    pub fn saved_ahead(&self) -> JobResult<Vec<FileRow>> {
        self.supervisor.ask(&Request::SavedAhead)
    }

    /// Saves a picture extracted from `of` (its album art or poster) as a derivative file,
    /// kept out of listings; `None` when it would pass the quota.
    pub fn save_derivative(&self, of: &FileRow, path: &Path, name: &str) -> JobResult<Option<FileRow>> {
        let request = Request::SaveDerivative {
            of: of.id,
            path: path.to_path_buf(),
            name: name.to_string(),
        };
        self.supervisor.ask(&request)
    }

    /// The path of one of the account's folders (`None` for the top).
    pub fn folder_path(&self, folder_id: Option<FolderId>) -> JobResult<Option<String>> {
        self.supervisor.ask(&Request::FolderPath { folder_id })
    }

    /// The folder an unzip fills (made by its first attempt).
    pub fn unzip_folder(&self) -> JobResult<FolderRow> {
        self.supervisor.ask(&Request::UnzipFolder)
    }

    /// The folder at `path`, at or below the unzip's folder, made when missing.
    pub fn entry_folder(&self, path: &str) -> JobResult<Option<FolderId>> {
        let request = Request::EntryFolder {
            path: path.to_string(),
        };
        self.supervisor.ask(&request)
    }

    /// Ends a readMetadata process's readings, one an input: what each read and its job's end.
    pub fn end_readings(&self, readings: Vec<MetadataRead>) -> JobResult<()> {
        self.supervisor.ask(&Request::EndReadings { readings })
    }

    /// How many more pictures the job may have described: none without a describing model,
    /// else what is left of [`MAX_DESCRIPTIONS`].
    pub fn descriptions_left(&self) -> usize {
        match self.describes {
            true => {
                MAX_DESCRIPTIONS.saturating_sub(*self.described.lock().unwrap_or_else(|e| e.into_inner()))
            }
            false => 0,
        }
    }

    /// What a JPEG shows, from the describing model the supervisor calls (`None`: nothing).
    pub fn describe(&self, jpeg: &[u8]) -> JobResult<Option<String>> {
        *self.described.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        let jpeg = base64::engine::general_purpose::STANDARD.encode(jpeg);
        self.supervisor.ask(&Request::Describe { jpeg })
    }

    /// Ends the job: done with its result, or failed with a sentence for the caller.
    pub fn end(&self, outcome: Result<serde_json::Value, String>) -> JobResult<()> {
        self.supervisor.ask(&Request::End { outcome })
    }

    /// Asks the supervisor something for a streamed write ([`crate::job_process::objects`]).
    pub fn ask<T: DeserializeOwned>(&self, request: &Request) -> JobResult<T> {
        self.supervisor.ask(request)
    }
}

/// A file's bytes as the store hands them over. A failure to read them is the server side's
/// (a [`JobError::Server`] inside the `io::Error`), told apart from the local disk's.
pub struct StoredBytes<'a> {
    body: reqwest::blocking::Response,
    file_name: &'a str,
}

impl Read for StoredBytes<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.body.read(buf).map_err(|e| {
            std::io::Error::other(JobError::Server(format!(
                "reading {} from the store: {e}",
                self.file_name
            )))
        })
    }
}

fn store_read_failed(file: &FileRow, e: &dyn std::fmt::Display) -> JobError {
    JobError::Server(format!("reading {} from the store: {e}", file.file_name))
}

/// The job process's line to its supervisor: requests out on the pipe that was its stdout,
/// answers in on stdin. One request at a time.
pub struct Supervisor {
    line: Mutex<(std::fs::File, BufReader<std::io::Stdin>)>,
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
        Ok(Supervisor {
            line: Mutex::new((requests, BufReader::new(std::io::stdin()))),
        })
    }

    /// The job this process is to run; `None` when the supervisor stopped before handing one.
    pub fn start(&self) -> Option<Start> {
        let mut text = String::new();
        let mut line = self.line.lock().unwrap_or_else(|e| e.into_inner());
        line.1.read_line(&mut text).ok()?;
        serde_json::from_str(&text)
            .inspect_err(|e| tracing::error!("the job's start does not read: {e}"))
            .ok()
    }

    fn ask<T: DeserializeOwned>(&self, request: &Request) -> JobResult<T> {
        let lost = |e: &dyn std::fmt::Display| JobError::Server(format!("the supervisor's line: {e}"));
        let mut line = self.line.lock().unwrap_or_else(|e| e.into_inner());
        let mut text = serde_json::to_string(request).map_err(|e| lost(&e))?;
        text.push('\n');
        line.0.write_all(text.as_bytes()).map_err(|e| lost(&e))?;
        line.0.flush().map_err(|e| lost(&e))?;
        let mut answer = String::new();
        if line.1.read_line(&mut answer).map_err(|e| lost(&e))? == 0 {
            return Err(lost(&"closed"));
        }
        let answer: Answer = serde_json::from_str(&answer).map_err(|e| lost(&e))?;
        serde_json::from_value(answer?).map_err(|e| lost(&e))
    }
}
