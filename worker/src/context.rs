//! What a running job works with: its row, its inputs (read as streams, or downloaded within
//! the 2 GB limit), its work folder, progress reporting, and saving results as new files.
//!
//! Results are saved under keys fixed by the job and the result's position, and each is
//! recorded together with its place in the job's outputs: a retried job finds the results it
//! already made and skips them, so it never duplicates a file.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use drive_core::db::PgPool;
use drive_core::db::files::{self, FileRow, Insert, NewFile};
use drive_core::db::jobs::JobRow;
use drive_core::db::{folders, jobs, users};
use drive_core::file::guess_type;
use drive_core::job::decimal_size;
use drive_core::storage::{self, ByteStream, Storage, StorageError, StoredHeaders};
use tokio::io::AsyncWriteExt;
use uuid::Uuid;

use crate::settings::Settings;

/// Why a job could not finish.
#[derive(Debug, thiserror::Error)]
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
    pub db: PgPool,
    pub storage: Storage,
    pub job: JobRow,
    /// This job's own scratch folder, emptied when it ends.
    pub dir: PathBuf,
    pub font: PathBuf,
    quota: i64,
    download_limit: i64,
    downloaded: Mutex<i64>,
    last_progress: Mutex<Option<Instant>>,
    /// The readings queued for the files the job made, announced once the job has ended.
    readings: Mutex<Vec<Uuid>>,
}

/// Progress is written at most this often.
const PROGRESS_EVERY: Duration = Duration::from_millis(500);

impl JobContext {
    pub async fn new(
        db: PgPool,
        storage: Storage,
        job: JobRow,
        settings: &Settings,
    ) -> JobResult<JobContext> {
        let plan = users::plan_of(&db, job.user_id).await?;
        let quota = plan.map_or(0, |p| settings.quotas.for_plan(p));
        let dir = settings.work_dir.join(job.id.to_string());
        // A retry starts from a clean folder; what it already saved is in the store.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        Ok(JobContext {
            db,
            storage,
            job,
            dir,
            font: settings.font.clone(),
            quota,
            download_limit: settings.download_limit,
            downloaded: Mutex::new(0),
            last_progress: Mutex::new(None),
            readings: Mutex::new(Vec::new()),
        })
    }

    /// The job's input files in the order given. A file trashed or deleted since the job was
    /// made fails the job: it would otherwise make something the caller did not ask for.
    pub async fn inputs(&self) -> JobResult<Vec<FileRow>> {
        let found = files::find_many(&self.db, self.job.user_id, &self.job.input_ids, true).await?;
        self.job
            .input_ids
            .iter()
            .map(|id| {
                found.iter().find(|f| f.id == *id).cloned().ok_or_else(|| {
                    JobError::Input(format!("the file {id} was trashed or deleted before the job ran"))
                })
            })
            .collect()
    }

    /// Where results land: the folder the job names, or beside its first input.
    pub fn folder_id(&self) -> Option<Uuid> {
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
        if let Err(e) = jobs::set_progress(&self.db, self.job.id, fraction).await {
            tracing::warn!(job.id = %self.job.id, "writing progress failed: {e}");
        }
    }

    /// A file's bytes as a stream from the store.
    pub async fn read(&self, file: &FileRow) -> JobResult<ByteStream> {
        Ok(self.storage.read(file.bucket(), &file.object_key, 0).await?)
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
            .try_next()
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
        Ok(self.quota - users::used_bytes(&self.db, self.job.user_id).await?)
    }

    /// The result already saved at `position` by an earlier attempt of this job.
    pub async fn saved(&self, position: i32) -> JobResult<Option<FileRow>> {
        Ok(jobs::output_at(&self.db, self.job.id, position).await?)
    }

    /// The key a result at `position` is stored under: the same on every attempt.
    pub fn output_key(&self, position: i32, name: &str) -> String {
        format!(
            "users/{}/jobs/{}/{position}/{name}",
            self.job.user_id, self.job.id
        )
    }

    /// Saves a local file as the job's `position`th result named `name` (a free variant of
    /// it when the folder has one already), in `folder_id`.
    pub async fn save(
        &self,
        position: i32,
        path: &Path,
        name: &str,
        folder_id: Option<Uuid>,
    ) -> JobResult<FileRow> {
        if let Some(saved) = self.saved(position).await? {
            return Ok(saved);
        }
        let key = self.output_key(position, name);
        let free = folders::free_file_name(&self.db, self.job.user_id, folder_id, name).await?;
        let size = self.upload(path, &key, &free, "attachment").await?;
        self.record(position, &key, &free, size, folder_id).await
    }

    /// Puts a local file in the private bucket under `key`, to be downloaded (`disposition`)
    /// as `name`; answers its size.
    async fn upload(&self, path: &Path, key: &str, name: &str, disposition: &str) -> JobResult<i64> {
        let (_, mime) = guess_type(name);
        let headers = StoredHeaders::new(mime, name, disposition);
        let body = ByteStream::from_path(path)
            .await
            .map_err(|e| JobError::Server(format!("reading the result {}: {e}", path.display())))?;
        self.storage
            .write(
                storage::Bucket::Private,
                key,
                body,
                &headers.content_type,
                &headers.content_disposition,
            )
            .await?;
        Ok(tokio::fs::metadata(path).await?.len() as i64)
    }

    /// Saves a picture extracted from `of` (its album art or poster) as a derivative file:
    /// stored under a key of its own (the same on a retry, which then finds it recorded),
    /// counted in storage, kept out of listings. Skipped when it would pass the quota.
    pub async fn save_derivative(&self, of: &FileRow, path: &Path, name: &str) -> JobResult<Option<FileRow>> {
        let key = format!("users/{}/derivatives/{}/{name}", of.user_id, of.id);
        let (kind, mime) = guess_type(name);
        let new = NewFile {
            user_id: of.user_id,
            file_name: name,
            file_size: self.upload(path, &key, name, "inline").await?,
            mime_type: mime,
            kind,
            bucket: storage::Bucket::Private,
            object_key: &key,
            modified_time: None,
            folder_id: None,
            derivative_of: Some(of.id),
        };
        let mut tx = self.db.begin().await?;
        match files::insert(&mut tx, &new, self.quota).await? {
            Insert::New(row) | Insert::Existing(row) => {
                tx.commit().await?;
                Ok(Some(row))
            }
            Insert::OverQuota { .. } => {
                drop(tx);
                let _ = self.storage.delete(storage::Bucket::Private, &key).await;
                Ok(None)
            }
        }
    }

    /// Records an object already stored under `key` as the job's `position`th result.
    pub async fn record(
        &self,
        position: i32,
        key: &str,
        name: &str,
        size: i64,
        folder_id: Option<Uuid>,
    ) -> JobResult<FileRow> {
        let (kind, mime) = guess_type(name);
        let new = NewFile {
            user_id: self.job.user_id,
            file_name: name,
            file_size: size,
            mime_type: mime,
            kind,
            bucket: storage::Bucket::Private,
            object_key: key,
            modified_time: None,
            folder_id,
            derivative_of: None,
        };
        let mut tx = self.db.begin().await?;
        let (row, reading) = match files::insert_and_announce(&mut tx, &new, self.quota).await? {
            // A result is a new file like an upload: its metadata is read too.
            Insert::New(row) => {
                let reading = jobs::queue_metadata_reading(&mut tx, &row).await?;
                (row, reading)
            }
            Insert::Existing(row) => (row, None),
            Insert::OverQuota { used } => {
                drop(tx);
                // The object is not a file; remove it rather than leave bytes nobody owns.
                let _ = self.storage.delete(storage::Bucket::Private, key).await;
                return Err(JobError::Input(format!(
                    "the results do not fit in the storage quota ({used} of {} bytes used)",
                    self.quota
                )));
            }
        };
        jobs::add_output(&mut tx, self.job.id, position, row.id).await?;
        tx.commit().await?;
        if let Some(id) = reading {
            self.readings.lock().unwrap_or_else(|e| e.into_inner()).push(id);
        }
        Ok(row)
    }

    /// The readings queued for what the job made, to be pushed to the queue. The job's own
    /// end does not wait for them, nor for a connection to Redis: they are pushed after it.
    pub fn take_readings(&self) -> Vec<Uuid> {
        std::mem::take(&mut self.readings.lock().unwrap_or_else(|e| e.into_inner()))
    }
}
