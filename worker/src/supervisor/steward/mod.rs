//! The supervisor's side of the [protocol](crate::protocol): it does, for one job, what the
//! job process holds no credential to do, and nothing else. It treats the process as
//! hostile: a file to store must be a regular file inside the job's work folder, results go
//! only under the job's own keys and into the account's own folders within its quota, an
//! upload must be one it opened for this job, metadata is stored only for the files a
//! readMetadata process was given to read, moments only for a readForSearch's inputs. It
//! parses no upload.
//!
//! Results are saved under keys fixed by the job and the result's position, and each is
//! recorded together with its place in the job's outputs: a retried job finds the results it
//! already made and skips them, so it never duplicates a file. A pipeline's step is run the
//! same way ([`Place::Run`]), its results recorded with its run and becoming files only when
//! the step's outputs are files.

mod readings;
mod results;
mod unzip_folders;
mod uploads;

use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine;
use chrono::TimeDelta;
use drive_core::db::PgPool;
use drive_core::db::files::{self, FileRow, Insert, NewFile};
use drive_core::db::folders::FolderRow;
use drive_core::db::jobs::runs::{self, RunAt};
use drive_core::db::jobs::{self, End, JobRow};
use drive_core::db::{requests, users};
use drive_core::file::{FileName, guess_type};
use drive_core::id::{FileId, FolderId, JobId};
use drive_core::job::{JobSpec, JobType};
use drive_core::job_end::ReadingEnd;
use drive_core::storage::{Bucket, Storage};
use serde::Serialize;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};

use results::{Ahead, Recorder, SavesAhead};
use uploads::Upload;

use crate::protocol::{Answer, Input, JobError, JobResult, MAX_DESCRIPTIONS, MetadataRead, Request, Start};
use crate::supervisor::local_models::{Listening, LocalModels};
use crate::supervisor::shared::Shared;
use crate::supervisor::vision::{self, Vision};

// The supervisor's failures (the database, the store) as the protocol's [`JobError`]: a job
// the server failed is retried, never failed for its input.

impl From<sqlx::Error> for JobError {
    fn from(e: sqlx::Error) -> JobError {
        JobError::Server(format!("database: {e}"))
    }
}

impl From<drive_core::storage::StorageError> for JobError {
    fn from(e: drive_core::storage::StorageError) -> JobError {
        JobError::Server(e.to_string())
    }
}

/// The longest request a job process may send: a job's end with its result (a checksum of
/// thousands of files) is the longest there is.
const MAX_REQUEST: u64 = 64 << 20;

/// What a job process works on.
#[derive(Debug, Clone, Copy)]
pub enum Place {
    /// A job of one type: its results are files, its end the job's.
    Job,
    /// One run of a pipeline's step: its results are recorded with the run, and become files
    /// when `files`; its end is the run's. Its progress covers `share` of the job's, after
    /// `done`.
    Run {
        at: RunAt,
        files: bool,
        done: f32,
        share: f32,
    },
}

pub struct Steward {
    db: PgPool,
    storage: Storage,
    /// As the job process sees it: for a pipeline's run, the step's type, settings and inputs.
    job: JobRow,
    place: Place,
    inputs: Vec<FileRow>,
    /// A readMetadata process's readings, one an input in the same order: the job's own, then
    /// those claimed with it ([`Steward::prepare_readings`]).
    readings: Vec<JobId>,
    /// The job's work folder, as the kernel names it (symbolic links resolved).
    dir: PathBuf,
    quota: i64,
    /// Multipart uploads opened for this job and not yet completed or aborted, by id.
    uploads: HashMap<String, Upload>,
    /// The jobs queued for the files the job made (their readings, their folders' rules'),
    /// rung for once the job has ended.
    queued: Vec<JobId>,
    vision: Option<Vision>,
    /// Pictures described for this job so far.
    described: usize,
    models: Arc<LocalModels>,
    /// The recording a readForSearch job's process is handing over ([`Request::Hear`]).
    listening: Option<Listening>,
    ahead: SavesAhead,
}

/// The TCP ports a job's process may connect to: the store's, where its inputs are read and
/// its results written through presigned URLs; for an import, also its link's and the web's
/// (80 and 443, where redirects mostly lead). Not PostgreSQL's, Redis's, nor the store's filer
/// and volume servers'. An import's fetcher keeps it to public addresses; these keep the other
/// jobs, which parse uploaded bytes, to the store's one port.
pub fn ports(store: &str, job: &JobRow) -> JobResult<Vec<u16>> {
    let port_of = |link: &str| {
        drive_fetch::Url::parse(link)
            .ok()
            .and_then(|url| url.port_or_known_default())
    };
    let store = port_of(store)
        .ok_or_else(|| JobError::Server(format!("the store's address {store} names no port")))?;
    let mut ports = vec![store];
    if let Ok(JobSpec::Import(import)) = job.spec() {
        ports.extend([80, 443]);
        ports.extend(port_of(&import.url));
    }
    ports.sort_unstable();
    ports.dedup();
    Ok(ports)
}

impl Steward {
    /// The inputs of a job of one type, or why it cannot have them: a file trashed or deleted
    /// since the job was made fails the job (it would otherwise make something the caller did
    /// not ask for).
    pub async fn inputs_of(db: &PgPool, job: &JobRow) -> JobResult<Result<Vec<FileRow>, String>> {
        let found = files::find_many(db, job.user_id, &job.input_ids, true).await?;
        Ok(Steward::inputs_among(&found, job))
    }

    /// [`Steward::inputs_of`] among rows `found` already (several jobs' inputs read at once).
    pub fn inputs_among(found: &[FileRow], job: &JobRow) -> Result<Vec<FileRow>, String> {
        job.input_ids
            .iter()
            .map(|id| {
                found
                    .iter()
                    .find(|f| f.id == *id)
                    .cloned()
                    .ok_or_else(|| format!("the file {id} was trashed or deleted before the job ran"))
            })
            .collect()
    }

    /// Readies `job` on `inputs` for `place`: its quota, its inputs with a presigned GET each
    /// (valid for the job's whole time limit) and an empty work folder. Answers the steward and
    /// what the job process starts with.
    pub async fn prepare(
        shared: &Shared,
        job: JobRow,
        inputs: Result<Vec<FileRow>, String>,
        place: Place,
    ) -> JobResult<(Steward, Start)> {
        let (db, storage, settings) = (shared.db.clone(), shared.storage.clone(), &shared.settings);
        let plan = users::plan_of(&db, job.user_id).await?;
        let mut quota = plan.map_or(0, |p| settings.quotas.for_plan(p));
        // A file request's onArrival job works within the request's room as well as the
        // owner's quota: an anonymous sender's archive cannot unzip past its `maxBytes`.
        if let Some(room) = requests::room_for_job(&db, job.id).await? {
            let used = users::used_bytes(&db, job.user_id).await?;
            quota = quota.min(used.saturating_add(room));
        }
        let lifetime = TimeDelta::from_std(settings.time_limit).unwrap_or(TimeDelta::hours(2));
        let mut given = Vec::new();
        for file in inputs.iter().flatten() {
            let url = storage
                .presign_get(file.bucket, &file.object_key, &file.file_name, lifetime)
                .await?;
            given.push(Input {
                file: file.clone(),
                url,
            });
        }
        let dir = settings.work_dir.join(job.id.to_string());
        // A retry starts from a clean folder; what it already saved is in the store.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        let start = Start {
            job: job.clone(),
            inputs: inputs.as_ref().map(|_| given).map_err(String::clone),
            makes_files: matches!(place, Place::Job | Place::Run { files: true, .. }),
            dir: dir.clone(),
            font: settings.font.clone(),
            download_limit: settings.download_limit,
            describes: settings.vision.is_some() && job.job_type == JobType::ReadForSearch,
            fetch_hosts: settings.fetch_allowances.hosts.clone(),
            ports: ports(storage.endpoint(), &job)?,
        };
        let steward = Steward {
            db,
            storage,
            readings: vec![job.id],
            job,
            place,
            inputs: inputs.unwrap_or_default(),
            dir: dir.canonicalize()?,
            quota,
            uploads: HashMap::new(),
            queued: Vec::new(),
            vision: settings.vision.clone(),
            described: 0,
            models: shared.models.clone(),
            listening: None,
            ahead: SavesAhead::default(),
        };
        Ok((steward, start))
    }

    /// Readies one process for the readMetadata jobs `readings` of one account, each reading
    /// the file at its place in `inputs`: the steward of the first, answering for them all.
    pub async fn prepare_readings(
        shared: &Shared,
        readings: &[JobRow],
        inputs: Vec<FileRow>,
    ) -> JobResult<(Steward, Start)> {
        let first = readings
            .first()
            .ok_or_else(|| refused("a process for no reading"))?;
        let (mut steward, start) = Steward::prepare(shared, first.clone(), Ok(inputs), Place::Job).await?;
        steward.readings = readings.iter().map(|job| job.id).collect();
        Ok((steward, start))
    }

    /// Answers the job process's requests until it closes its pipe (it exited or was killed);
    /// answers the jobs queued for its files, to ring for. Uploads it left open are aborted.
    pub async fn serve(mut self, mut to_child: ChildStdin, from_child: ChildStdout) -> Vec<JobId> {
        let mut from_child = BufReader::new(from_child);
        let mut line = Vec::new();
        loop {
            line.clear();
            // A line past the limit ends the conversation (and so the job's attempt) rather
            // than the supervisor's memory.
            match (&mut from_child)
                .take(MAX_REQUEST)
                .read_until(b'\n', &mut line)
                .await
            {
                Ok(_) if line.ends_with(b"\n") => {}
                _ => break,
            }
            let answer = match serde_json::from_slice::<Request>(&line) {
                Ok(request) => self.answer(request).await,
                Err(e) => Err(JobError::Server(format!(
                    "a request the supervisor cannot read: {e}"
                ))),
            };
            if let Err(JobError::Server(why)) = &answer {
                tracing::warn!(job.id = %self.job.id, "a job process's request failed: {why}");
            }
            let mut answer = serde_json::to_vec(&answer).unwrap_or_default();
            answer.push(b'\n');
            if to_child.write_all(&answer).await.is_err() {
                break;
            }
        }
        // What was handed over ahead is the job's, however its process ended.
        let _ = self.ahead.wait().await;
        self.abort_uploads().await;
        self.queued.append(&mut self.ahead.queued);
        self.queued
    }

    async fn answer(&mut self, request: Request) -> Answer {
        match request {
            Request::Progress { fraction } => {
                let fraction = fraction.clamp(0.0, 1.0);
                let progress = match self.place {
                    Place::Job => fraction,
                    Place::Run { done, share, .. } => done + share * fraction,
                };
                jobs::set_progress(&self.db, self.job.id, progress).await?;
                Ok(Value::Null)
            }
            Request::QuotaLeft => json(self.quota - users::used_bytes(&self.db, self.job.user_id).await?),
            Request::Saved { position } => json(self.recorder().recorded(position).await?),
            Request::Save {
                position,
                path,
                name,
                folder_id,
            } => json(self.save(position, &path, &name, folder_id).await?),
            Request::SaveAhead {
                position,
                path,
                name,
                folder_id,
            } => json(self.save_ahead(position, &path, &name, folder_id).await?),
            Request::SavedAhead => json(self.ahead.collect().await?),
            Request::SaveDerivative { of, path, name } => json(self.save_derivative(of, &path, &name).await?),
            Request::StartUpload {
                position,
                name,
                folder_id,
            } => json(self.start_upload(position, &name, folder_id).await?),
            Request::PartUrl {
                upload_id,
                number,
                length,
            } => json(self.part_url(&upload_id, number, length).await?),
            Request::CompleteUpload { upload_id, parts } => {
                json(self.complete_upload(&upload_id, &parts).await?)
            }
            Request::AbortUpload { upload_id } => json(self.abort_upload(&upload_id).await?),
            Request::FolderPath { folder_id } => json(self.folder(folder_id).await?.map(|f| f.path)),
            Request::UnzipFolder => json(self.unzip_folder().await?),
            Request::EntryFolder { path } => json(self.entry_folder(&path).await?),
            Request::EndReadings { readings } => {
                let readings = self.reading_ends(readings)?;
                drive_core::job_end::finish_readings(&self.db, &self.storage, readings).await?;
                Ok(Value::Null)
            }
            Request::StoreReading { file_id, reading } => json(self.store_reading(file_id, reading).await?),
            Request::Hear { samples } => json(self.hear(&samples).await?),
            Request::Transcript => json(self.transcript().await?),
            Request::Describe { jpeg } => json(self.describe(&jpeg).await?),
            Request::SetArtwork { of, artwork } => json(self.set_artwork(of, artwork).await?),
            Request::Said { file_id } => {
                json(readings::said(&self.db, &self.job, &self.inputs, file_id).await?)
            }
            Request::End { outcome } => {
                // Results still on their way belong to the job: it ends once they are
                // recorded, and a failure to record one is the job's.
                let outcome = match (self.ahead.wait().await, outcome) {
                    (Err(JobError::Server(why)), _) => return Err(JobError::Server(why)),
                    (Err(JobError::Input(why)), _) | (Ok(()), Err(why)) => Err(why),
                    (Ok(()), Ok(result)) => Ok(result),
                };
                match self.place {
                    Place::Job => {
                        let end = outcome.map_or_else(End::Failed, End::Done);
                        drive_core::job_end::finish(&self.db, &self.storage, self.job.id, end).await?;
                    }
                    // The pipeline goes on (or fails) in the supervisor, once the process exits.
                    Place::Run { at, .. } => runs::end(&self.db, at, outcome).await?,
                }
                Ok(Value::Null)
            }
        }
    }

    /// What a readForSearch job's picture shows, from the describing model: at most
    /// [`MAX_DESCRIPTIONS`] a job, each JPEG at most [`vision::MAX_JPEG_BYTES`].
    async fn describe(&mut self, jpeg: &str) -> JobResult<Option<String>> {
        let vision = match &self.vision {
            Some(vision) if self.job.job_type == JobType::ReadForSearch => vision,
            _ => return Err(refused("a description the job has no describing model for")),
        };
        let jpeg = base64::engine::general_purpose::STANDARD
            .decode(jpeg)
            .map_err(|_| refused("a picture that is not base64"))?;
        if jpeg.len() > vision::MAX_JPEG_BYTES || !jpeg.starts_with(&[0xFF, 0xD8]) {
            return Err(refused("a picture to describe that is not a small JPEG"));
        }
        self.described += 1;
        if self.described > MAX_DESCRIPTIONS {
            return Err(refused("more pictures to describe than a job may have"));
        }
        vision.describe(&jpeg).await
    }

    /// The folder `id`, when it is the account's own (`None` for the top).
    async fn folder(&self, id: Option<FolderId>) -> JobResult<Option<FolderRow>> {
        self.recorder().folder(id).await
    }

    fn recorder(&self) -> Recorder {
        Recorder {
            db: self.db.clone(),
            storage: self.storage.clone(),
            job_id: self.job.id,
            user_id: self.job.user_id,
            quota: self.quota,
            place: self.place,
        }
    }

    /// A result saved before answering: a save ahead, waited for (so results are recorded in
    /// the order asked whichever way they are saved).
    async fn save(
        &mut self,
        position: i32,
        path: &Path,
        name: &str,
        folder_id: Option<FolderId>,
    ) -> JobResult<FileRow> {
        self.save_ahead(position, path, name, folder_id).await?;
        self.ahead.take_newest().await
    }

    /// A result saved ahead ([`results`]): answered once its file is held open.
    async fn save_ahead(
        &mut self,
        position: i32,
        path: &Path,
        name: &str,
        folder_id: Option<FolderId>,
    ) -> JobResult<()> {
        let result = Ahead {
            position,
            file: self.open_result(path)?,
            key: self.recorder().key(position, name)?,
            name: name.to_string(),
            folder_id,
        };
        self.ahead.push(self.recorder(), result).await
    }

    /// The file at `path`, which must be a regular file inside the work folder.
    fn open_result(&self, path: &Path) -> JobResult<std::fs::File> {
        open_within(&self.dir, path)
            .ok_or_else(|| refused(&format!("{} as a file of the job's work folder", path.display())))
    }

    /// Records a stored result (see [`Recorder::record`]), its jobs to be rung for.
    async fn record(
        &mut self,
        position: i32,
        key: &str,
        name: &str,
        folder_id: Option<FolderId>,
        size: i64,
    ) -> JobResult<FileRow> {
        let (row, queued) = self
            .recorder()
            .record(position, key, name, folder_id, size)
            .await?;
        self.queued.extend(queued);
        Ok(row)
    }

    /// Saves a picture extracted from the input `of` (its album art or poster) as a
    /// derivative file: stored under a key of its own (the same on a retry, which then finds
    /// it recorded), counted in storage, kept out of listings. Skipped when it would pass the
    /// quota.
    async fn save_derivative(&self, of: FileId, path: &Path, name: &str) -> JobResult<Option<FileRow>> {
        let of = self
            .inputs
            .iter()
            .find(|f| f.id == of)
            .ok_or_else(|| refused("a derivative of a file the job does not read"))?;
        let name =
            FileName::try_from(name.to_string()).map_err(|why| refused(&format!("a name that {why}")))?;
        let name = name.as_str();
        let key = format!("users/{}/derivatives/{}/{name}", of.user_id, of.id);
        let size = self
            .recorder()
            .store(self.open_result(path)?, &key, name, "inline")
            .await?;
        let (kind, mime) = guess_type(name);
        let new = NewFile {
            user_id: of.user_id,
            file_name: name,
            file_size: size,
            mime_type: mime,
            kind,
            bucket: Bucket::Private,
            object_key: &key,
            modified_time: None,
            folder_id: None,
            derivative_of: Some(of.id),
            copy_of: None,
        };
        let mut tx = self.db.begin().await?;
        match files::insert(&mut tx, &new, self.quota).await? {
            Insert::New(row) | Insert::Existing(row) => {
                tx.commit().await?;
                Ok(Some(row))
            }
            Insert::OverQuota { .. } => {
                drop(tx);
                let _ = self.storage.delete(Bucket::Private, &key).await;
                Ok(None)
            }
        }
    }

    /// A videoThumbnail job's frame, shown as its input's art: only that job's, for its own
    /// input, and a derivative it saved of it.
    async fn set_artwork(&self, of: FileId, artwork: FileId) -> JobResult<()> {
        if self.job.job_type != JobType::VideoThumbnail || !self.inputs.iter().any(|f| f.id == of) {
            return Err(refused("art for a file the job does not make a thumbnail of"));
        }
        let derived: Option<FileId> =
            sqlx::query_scalar("select id from files where id = $1 and derivative_of = $2 and user_id = $3")
                .bind(artwork)
                .bind(of)
                .bind(self.job.user_id)
                .fetch_optional(&self.db)
                .await?;
        if derived.is_none() {
            return Err(refused("art that is not a frame the job saved"));
        }
        files::set_artwork(&self.db, self.job.user_id, of, Some(artwork)).await?;
        Ok(())
    }

    /// A readMetadata process's readings as the jobs they end: its first inputs in their order
    /// (the first at least; it hands back the rest), and no other file.
    fn reading_ends(&self, readings: Vec<MetadataRead>) -> JobResult<Vec<ReadingEnd>> {
        let theirs = (1..=self.readings.len()).contains(&readings.len())
            && readings
                .iter()
                .zip(&self.inputs)
                .all(|(read, file)| read.file_id == file.id);
        if self.job.job_type != JobType::ReadMetadata || !theirs {
            return Err(refused("readings of files other than the process's inputs"));
        }
        Ok(readings
            .into_iter()
            .zip(&self.readings)
            .map(|(read, &job)| ReadingEnd {
                job,
                file: read.file_id,
                metadata: read.metadata,
                end: read.outcome.map_or_else(End::Failed, End::Done),
            })
            .collect())
    }
}

/// `path` opened for reading when it is a regular file of one link inside `dir` (a canonical
/// path). It is opened without following a last symbolic link (nor waiting on a pipe), then
/// checked by the name the kernel gives the open file: a job process cannot have the
/// supervisor read a file not its own, not by a link, nor by swapping names around the check.
fn open_within(dir: &Path, path: &Path) -> Option<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let opened = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()?;
    let metadata = file.metadata().ok()?;
    let inside = opened.starts_with(dir) && opened != dir;
    (inside && metadata.is_file() && metadata.nlink() == 1).then_some(file)
}

fn json(value: impl Serialize) -> Answer {
    serde_json::to_value(value)
        .map_err(|e| JobError::Server(format!("an answer that does not serialize: {e}")))
}

/// A request the job process had no business making: it is refused as a server-side failure,
/// so the job is retried and, persisting, fails.
fn refused(what: &str) -> JobError {
    JobError::Server(format!("the supervisor refused {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    #[test]
    fn only_a_regular_file_of_the_work_folder_is_opened() {
        let base = std::env::temp_dir().join(format!("drive-steward-{}", Uuid::new_v4().simple()));
        let work = base.join("work");
        std::fs::create_dir_all(&work).unwrap();
        let work = work.canonicalize().unwrap();
        let secret = base.join("secret");
        std::fs::write(&secret, b"not the job's").unwrap();
        std::fs::write(work.join("result"), b"made").unwrap();
        std::os::unix::fs::symlink(&secret, work.join("symlink")).unwrap();
        std::os::unix::fs::symlink(&base, work.join("up")).unwrap();
        std::fs::hard_link(&secret, work.join("hard link")).unwrap();
        let fifo = std::ffi::CString::new(work.join("fifo").as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);

        assert!(open_within(&work, &work.join("result")).is_some());
        for refused in ["symlink", "up/secret", "hard link", "fifo", "../secret", "."] {
            assert!(open_within(&work, &work.join(refused)).is_none(), "{refused}");
        }
        assert!(open_within(&work, &secret).is_none());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
