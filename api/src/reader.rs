//! Running `drive-reader`, the process that opens a file for `/read-file`. The API holds the
//! store's keys and the database's URL, so it never parses an uploaded byte itself: each read
//! starts a reader with an empty environment, no new privileges, no capabilities, the
//! seccomp filter and Landlock of `drive-confine`, capped address space, CPU time and file
//! size, and a folder of its own; hands it a presigned GET of the one object; and kills it
//! past [`TIME_LIMIT`]. At most [`Reader::slots`] run at once; more reads wait their turn.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use chrono::TimeDelta;
use drive_core::ConfigError;
use drive_core::config;
use drive_core::read::{Read, ReadAnswer, ReadRequest};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::sync::Semaphore;

use crate::error::{ApiError, ApiResult};

/// How long one read may take, from its start to its answer: a frame seeks over HTTP, a
/// PDF's twenty pages are interpreted. Past it the file is too big to read.
pub const TIME_LIMIT: Duration = Duration::from_secs(60);

/// How long the reader's link to the object works: a little longer than a read may take.
pub const LINK_LIFETIME: TimeDelta = TimeDelta::minutes(5);

/// The CPU time a reader may use (seconds): its own decoding threads count too.
const CPU_SECONDS: u64 = 120;

/// The address space a reader may take: a picture at the media crate's 200-megapixel limit
/// decodes into 800 MB, a PDF of 200 MB is held whole, and FFmpeg and libheif map their
/// threads' stacks.
const MEMORY_BYTES: u64 = 4 << 30;

/// The largest file a reader may write to its folder: the picture it downloads (at most
/// `drive_core::read::MAX_DOWNLOAD_BYTES`) and what it makes of it.
const FILE_BYTES: u64 = 256_000_000;

/// The longest answer read from a reader: a JPEG of 1568 pixels on a side as base64, or 100 KB
/// of text escaped as JSON, with room to spare.
const MAX_ANSWER_BYTES: u64 = 8 << 20;

pub struct Reader {
    program: PathBuf,
    /// Where each read gets its folder.
    work_dir: PathBuf,
    slots: Semaphore,
}

impl Reader {
    /// `DRIVE_READER` (default: `drive-reader` beside this executable), `DRIVE_READERS`
    /// (reads at once; default the number of CPUs) and `DRIVE_READ_WORK_DIR` (default
    /// `$TMPDIR/drive-reads`).
    pub fn from_environment() -> Result<Reader, ConfigError> {
        let beside = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(|dir| dir.join("drive-reader")))
            .unwrap_or_else(|| PathBuf::from("drive-reader"));
        let program = std::env::var_os("DRIVE_READER").map_or(beside, PathBuf::from);
        let cpus = std::thread::available_parallelism().map_or(1, usize::from);
        let slots: usize = config::parsed_or("DRIVE_READERS", cpus)?;
        let work_dir = std::env::var_os("DRIVE_READ_WORK_DIR")
            .map_or_else(|| std::env::temp_dir().join("drive-reads"), PathBuf::from);
        Ok(Reader {
            program,
            work_dir,
            slots: Semaphore::new(slots.max(1)),
        })
    }

    /// Reads `request.what` of the object at `request.url` in a reader of its own, waiting
    /// for a free slot first.
    pub async fn read(&self, url: String, size: u64, what: drive_core::read::Reading) -> ApiResult<Read> {
        let _slot = self
            .slots
            .acquire()
            .await
            .map_err(|_| ApiError::Machine("the readers' slots were closed".into()))?;
        let dir = self.work_dir.join(uuid::Uuid::new_v4().simple().to_string());
        std::fs::create_dir_all(&dir).map_err(|e| machine("making a reader's folder", e))?;
        let request = ReadRequest {
            url,
            size,
            dir: dir.clone(),
            what,
        };
        let answer = self.run(&request).await;
        if let Err(e) = std::fs::remove_dir_all(&dir) {
            tracing::warn!("removing {}: {e}", dir.display());
        }
        match answer? {
            ReadAnswer::Read(read) => Ok(read),
            ReadAnswer::Unreadable(why) => Err(ApiError::Unreadable { message: why }),
            ReadAnswer::FetchFailed(why) => Err(ApiError::FetchFailed { cause: why }),
            // Only the fields a file can make unusable; anything else from a reader is not
            // believed.
            ReadAnswer::BadField { field, message } => match field.as_str() {
                "at" | "fromPage" | "offset" => Err(ApiError::invalid(&field, message)),
                _ => Err(unreadable()),
            },
        }
    }

    async fn run(&self, request: &ReadRequest) -> ApiResult<ReadAnswer> {
        let limits = drive_confine::Limits {
            memory: MEMORY_BYTES,
            file_size: FILE_BYTES,
            cpu_seconds: Some(CPU_SECONDS),
        };
        let mut command = Command::from(drive_confine::command(&self.program, limits));
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .map_err(|e| machine(&format!("starting {}", self.program.display()), e))?;
        let input = serde_json::to_vec(request).map_err(|e| machine("writing a read's request", e))?;
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let mut stdout = child.stdout.take().expect("stdout is piped");
        let talk = async {
            // A reader that dies before taking its request answers nothing, below.
            let _ = stdin.write_all(&input).await;
            drop(stdin);
            let mut answer = Vec::new();
            (&mut stdout)
                .take(MAX_ANSWER_BYTES)
                .read_to_end(&mut answer)
                .await
                .map_err(|e| machine("reading a reader's answer", e))?;
            let status = child
                .wait()
                .await
                .map_err(|e| machine("waiting for a reader", e))?;
            Ok::<_, ApiError>((answer, status))
        };
        let Ok(talked) = tokio::time::timeout(TIME_LIMIT, talk).await else {
            // Returning drops the child, which kills it.
            return Err(ApiError::Unreadable {
                message: format!(
                    "the file is too big to read: reading it took over {} seconds",
                    TIME_LIMIT.as_secs()
                ),
            });
        };
        let (answer, status) = talked?;
        match serde_json::from_slice(&answer) {
            Ok(answer) => Ok(answer),
            Err(e) => {
                // Killed by its limits (memory, CPU time), or crashed on the file's bytes.
                tracing::warn!(%status, "a reader gave no answer: {e}");
                Err(unreadable())
            }
        }
    }
}

fn unreadable() -> ApiError {
    ApiError::Unreadable {
        message: "the file could not be read: it is damaged, or too big to read".into(),
    }
}

fn machine(what: &str, e: impl std::fmt::Display) -> ApiError {
    ApiError::Machine(format!("{what}: {e}"))
}
