//! What a job process and its supervisor say to each other, one JSON object a line: the
//! supervisor writes the job's [`Start`] to the process's stdin, then the process asks
//! [`Request`]s on its protocol pipe (the stdout it was started with) and reads each
//! [`Answer`] on stdin. The job process holds no credential, so everything that needs one
//! (the database, the store's keys, the queue) is a request here, which the supervisor checks
//! against the job it claimed before doing it.

use std::path::PathBuf;

use drive_domain::id::{FileId, FolderId};
use drive_domain::metadata::Metadata;
use drive_domain::moment::EntryType;
use drive_domain::rows::FileRow;
use drive_domain::rows::JobRow;
use serde::{Deserialize, Serialize};

/// Why a job could not finish. Serializable: the supervisor answers a request with one.
#[derive(Debug, Clone, thiserror::Error, serde::Serialize, serde::Deserialize)]
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
    /// A failure of this machine's while doing `what` (a model that does not load, a library
    /// failing): the job is tried again.
    pub fn machine(what: &str, e: impl std::fmt::Display) -> JobError {
        JobError::Server(format!("{what}: {e}"))
    }

    /// Names the input at fault, for jobs that take several.
    pub fn in_file(self, name: &str) -> JobError {
        match self {
            JobError::Input(why) => JobError::Input(format!("{name}: {why}")),
            server => server,
        }
    }
}

/// The most pictures one job has described: a provider's calls cost money.
pub const MAX_DESCRIPTIONS: usize = 100;

/// Moments one file may have, checked again by the supervisor.
pub const MAX_MOMENTS: usize = 2_000;

/// A moment's text at most, in characters: a paragraph, or a few sentences of a long one.
pub const MAX_PASSAGE: usize = 600;

/// Samples of sound one [`Request::Hear`] hands over at most: 30 s at 16 kHz, Whisper's window.
pub const MAX_HEARD_SAMPLES: usize = 30 * drive_speech::SAMPLE_RATE;

/// The exit code by which a job process asks the supervisor to run the job again (sysexits'
/// EX_TEMPFAIL): a server-side failure.
pub const EXIT_RETRY: i32 = 75;

/// Everything a job process starts its job with.
#[derive(Debug, Serialize, Deserialize)]
pub struct Start {
    pub job: JobRow,
    /// The inputs in the order given, or why the job cannot have them (one was trashed). For a
    /// readMetadata job, the file of each reading the process reads: the job's own, then those
    /// of the account's other readings claimed with it.
    pub inputs: Result<Vec<Input>, String>,
    /// Whether its results become files in folders. Not for a pipeline's step whose results
    /// only later steps take: those are kept under the job, in no folder.
    pub makes_files: bool,
    /// The job's work folder, made empty for it.
    pub dir: PathBuf,
    pub font: PathBuf,
    /// Pictures and PDFs the job may download, in bytes.
    pub download_limit: i64,
    /// Whether the job may have pictures described ([`Request::Describe`]): a readForSearch
    /// job on a worker with a describing model.
    pub describes: bool,
    /// Hosts an import may fetch from beyond the public internet: the tests' loopback servers
    /// (`DRIVE_FETCH_ALLOW_HOSTS`); empty in service.
    pub fetch_hosts: Vec<String>,
    /// The TCP ports the job may connect to ([`crate::supervisor::steward::ports`]); its Landlock rules
    /// close every other.
    pub ports: Vec<u16>,
}

/// An input file and a presigned GET for its bytes, valid as long as the job may run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Input {
    pub file: FileRow,
    pub url: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "ask", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum Request {
    /// The job's progress, 0 to 1.
    Progress {
        fraction: f32,
    },
    /// Bytes the account can still store.
    QuotaLeft,
    /// The result an earlier attempt saved at `position`: a `FileRow` or null.
    Saved {
        position: i32,
    },
    /// Store the file at `path` (in the work folder) as the result at `position` named `name`
    /// (a free variant of it) in `folder_id`, and record it: a `FileRow`.
    Save {
        position: i32,
        path: PathBuf,
        name: String,
        folder_id: Option<FolderId>,
    },
    /// The same, answered (null) once the supervisor holds the file open: the job process may
    /// remove it and go on while it is stored and recorded, in the order asked.
    SaveAhead {
        position: i32,
        path: PathBuf,
        name: String,
        folder_id: Option<FolderId>,
    },
    /// The files saved ahead since the last time asked, in the order asked, once they are all
    /// recorded (or the first failure among them): a list of `FileRow`.
    SavedAhead,
    /// Store the picture at `path` as a derivative of the input `of`: a `FileRow` or null
    /// when it would pass the quota.
    SaveDerivative {
        of: FileId,
        path: PathBuf,
        name: String,
    },
    /// Open a multipart upload for the result at `position` (a streamed write): its id.
    StartUpload {
        position: i32,
        name: String,
        folder_id: Option<FolderId>,
    },
    /// A presigned PUT for part `number` of an upload started here, `length` bytes.
    PartUrl {
        upload_id: String,
        number: i32,
        length: i64,
    },
    /// Complete an upload started here with the parts `parts` (ascending), and record it as
    /// its result: a `FileRow`. Named, since a part PUT broken off may still be listed by the
    /// store under its number; the job sends that part again under a new one.
    CompleteUpload {
        upload_id: String,
        parts: Vec<i32>,
    },
    AbortUpload {
        upload_id: String,
    },
    /// The path of one of the account's folders (null for the top): a string or null.
    FolderPath {
        folder_id: Option<FolderId>,
    },
    /// The folder an unzip fills, made on its first attempt: a `FolderRow`.
    UnzipFolder,
    /// Ensure a folder at `path`, at or below the unzip's folder: its id or null.
    EntryFolder {
        path: String,
    },
    /// End a readMetadata process's readings (one a job: the job's own, then the account's
    /// others read with it), those of its first inputs in the order given, in one transaction;
    /// the supervisor hands back the rest.
    EndReadings {
        readings: Vec<MetadataRead>,
    },
    /// What a readForSearch job read from its input `file_id`: its moments, which replace the
    /// file's earlier ones (embedded by the supervisor), or why it could not be read.
    StoreReading {
        file_id: FileId,
        reading: Result<Vec<ReadMoment>, String>,
    },
    /// Show `artwork`, a derivative the job saved of its input `of`, as that input's art (a
    /// videoThumbnail job's frame).
    SetArtwork {
        of: FileId,
        artwork: FileId,
    },
    /// Sound of a readForSearch job's input to transcribe, decoded by the process to 16 kHz
    /// mono: base64 of little-endian `f32` samples, at most [`MAX_HEARD_SAMPLES`]. Answered (null)
    /// once the supervisor has room for them: the worker's Whisper, loaded once for all its
    /// jobs, transcribes them while the process decodes more.
    Hear {
        samples: String,
    },
    /// The end of the recording handed over since the last transcript: what was said in it, a
    /// list of `Said` (seconds from its first sample).
    Transcript,
    /// What a JPEG the job made (a picture or a video's frame, at most 1024 px on a side)
    /// shows, for a readForSearch job's `visual` moments: a string or null.
    Describe {
        /// Base64.
        jpeg: String,
    },
    /// What is said in the input `file_id` (its speech moments, in order of time), for a job
    /// that works from it (captions): a list of `Said`.
    Said {
        file_id: FileId,
    },
    /// End the job: done with its result, or failed with the sentence for the caller.
    End {
        outcome: Result<serde_json::Value, String>,
    },
}

/// What a readMetadata process read from one of its inputs.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MetadataRead {
    pub file_id: FileId,
    /// What was read, stored on the file, or why it could not be, recorded on it.
    pub metadata: Result<Metadata, String>,
    /// Its job's end: done with its result, or failed with the sentence for the caller.
    pub outcome: Result<serde_json::Value, String>,
}

/// A moment as a readForSearch job hands it over: checked by the supervisor
/// ([`crate::supervisor::steward::readings::checked`]) before it is stored.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadMoment {
    pub entry_type: EntryType,
    pub text: String,
    pub at: Option<f64>,
    pub until: Option<f64>,
    pub page: Option<i32>,
}

/// The answer to a request: what it asked for, or why not.
pub type Answer = Result<serde_json::Value, JobError>;
