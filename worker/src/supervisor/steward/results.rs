//! Storing and recording a job's results. A result is stored under its key, its size the length
//! its PUT declared (or, for a result streamed in parts, read back from the store), and recorded
//! in one transaction with its free name, its drive event and its place in the job's outputs.
//!
//! A save that waits does all of it before answering. A save ahead is answered as soon as the
//! supervisor holds the result's file open: the job process goes on making the next one while
//! several are stored at once, and each is recorded in its turn, after the one asked before it,
//! so that names, events and outputs follow the order asked exactly as with saves that wait.
//! The job process collects the files saved ahead (or the first failure among them) when it
//! needs them, and the job's end waits for them all.
//!
//! A pipeline's run records each result with the run: as a file too when its step's outputs
//! are files, otherwise as an intermediate, in no folder, no library and no quota.

use std::collections::VecDeque;

use drive_core::db::PgPool;
use drive_core::db::events::EventKind;
use drive_core::db::files::{self, FileRow, NewFile};
use drive_core::db::folders::{self, FolderRow};
use drive_core::db::jobs;
use drive_core::db::jobs::runs::{self, NewOutput};
use drive_core::entry::{self, Entered};
use drive_core::file::{FileName, guess_type};
use drive_core::id::{FolderId, JobId, UserId};
use drive_core::storage::{Bucket, ByteStream, Storage, StoredHeaders};
use tokio::sync::oneshot::{self, error::TryRecvError};
use tokio::task::JoinHandle;

use super::{Place, refused};
use crate::protocol::{JobError, JobResult};

/// A recorded result and the jobs queued for it: its metadata reading, its folder's rules'
/// (rung for once the job ends).
type Recorded = (FileRow, Vec<JobId>);

/// What storing and recording one job's results needs: cheap to clone into each save ahead.
#[derive(Clone)]
pub(super) struct Recorder {
    pub db: PgPool,
    pub storage: Storage,
    pub job_id: JobId,
    pub user_id: UserId,
    pub quota: i64,
    pub place: Place,
}

/// A result handed over ahead: its file, already opened inside the work folder, and where it
/// goes.
pub(super) struct Ahead {
    pub position: i32,
    pub file: std::fs::File,
    pub key: String,
    pub name: String,
    pub folder_id: Option<FolderId>,
}

impl Recorder {
    /// The key a result at `position` is stored under: the same on every attempt.
    pub fn key(&self, position: i32, name: &str) -> JobResult<String> {
        if position < 0 {
            return Err(refused("a negative position"));
        }
        // A name comes from the input (an archive's entry): one that cannot be a file's is
        // the input's fault.
        let name = FileName::try_from(name.to_string())
            .map_err(|why| JobError::Input(format!("a result cannot be named {name:?}: it {why}")))?;
        let (user, job, name) = (self.user_id, self.job_id, name.as_str());
        Ok(match self.place {
            Place::Job => format!("users/{user}/jobs/{job}/{position}/{name}"),
            Place::Run { at, .. } => {
                format!(
                    "users/{user}/jobs/{job}/steps/{}/{}/{position}/{name}",
                    at.step, at.run
                )
            }
        })
    }

    /// The result an earlier attempt recorded at `position`, if any.
    pub async fn recorded(&self, position: i32) -> JobResult<Option<FileRow>> {
        Ok(match self.place {
            Place::Job => jobs::output_at(&self.db, self.job_id, position).await?,
            Place::Run { at, .. } => runs::output_at(&self.db, at, position).await?.map(|o| o.file),
        })
    }

    /// The folder `id`, when it is the account's own (`None` for the top).
    pub async fn folder(&self, id: Option<FolderId>) -> JobResult<Option<FolderRow>> {
        let Some(id) = id else { return Ok(None) };
        match folders::find_owned(&self.db, self.user_id, id).await? {
            Some(folder) => Ok(Some(folder)),
            None => Err(refused("a folder that is not the account's")),
        }
    }

    /// Stores `file` under `key`, to be downloaded (`disposition`) as `name`; answers its size
    /// as the store has it: the length the supervisor measured when it opened the file and
    /// declared in the PUT, of which the store keeps all or nothing (the body reads that many
    /// bytes at most, and fewer fail the PUT). No HEAD to ask again: one request an entry less
    /// on the store, which an unzip of many small entries keeps busy.
    pub async fn store(
        &self,
        file: std::fs::File,
        key: &str,
        name: &str,
        disposition: &str,
    ) -> JobResult<i64> {
        let (_, mime) = guess_type(name);
        let headers = StoredHeaders::new(mime, name, disposition);
        let body = ByteStream::read_from()
            .file(tokio::fs::File::from_std(file))
            .build()
            .await
            .map_err(|e| JobError::Server(format!("reading the result {name:?}: {e}")))?;
        let size = match body.size_hint() {
            (low, Some(high)) if low == high => high as i64,
            _ => {
                return Err(JobError::Server(format!(
                    "the result {name:?} has no known length"
                )));
            }
        };
        self.storage
            .write(
                Bucket::Private,
                key,
                body,
                &headers.content_type,
                &headers.content_disposition,
            )
            .await?;
        Ok(size)
    }

    /// The size of what was stored under `key`, as the store has it: what the job process
    /// wrote there is not taken on its word.
    pub async fn stored_size(&self, key: &str) -> JobResult<i64> {
        self.storage
            .object_size(Bucket::Private, key)
            .await?
            .ok_or_else(|| JobError::Server(format!("{key} is not in the store")))
    }

    /// Records the object of `size` stored under `key` as the job's `position`th result, with
    /// the reading of its metadata queued, under `name` or the first free variant of it in the
    /// folder. (The stored object keeps the name asked as its own header: downloads and public
    /// copies are named from the record.) A pipeline's run records it with the run, and an
    /// intermediate only there.
    pub async fn record(
        &self,
        position: i32,
        key: &str,
        name: &str,
        folder_id: Option<FolderId>,
        size: i64,
    ) -> JobResult<Recorded> {
        let at = match self.place {
            Place::Run { at, files: false, .. } => {
                return self.record_intermediate(at, position, key, name, size).await;
            }
            Place::Run { at, .. } => Some(at),
            Place::Job => None,
        };
        let mut tx = self.db.begin().await?;
        let name = folders::free_file_name(&mut tx, self.user_id, folder_id, name).await?;
        let (kind, mime) = guess_type(&name);
        let new = NewFile {
            user_id: self.user_id,
            file_name: &name,
            file_size: size,
            mime_type: mime,
            kind,
            bucket: Bucket::Private,
            object_key: key,
            modified_time: None,
            folder_id,
            derivative_of: None,
            copy_of: None,
        };
        // A result enters the drive like an upload: counted, announced, its metadata read.
        let recorded = match entry::enter(
            &mut tx,
            &new,
            self.quota,
            Some(EventKind::File),
            Some(self.job_id),
        )
        .await?
        {
            Entered::New { file, queued } => (file, queued),
            Entered::Existing(file) => (file, Vec::new()),
            Entered::OverQuota { used } => {
                drop(tx);
                // The object is not a file; remove it rather than leave bytes nobody owns.
                let _ = self.storage.delete(Bucket::Private, key).await;
                return Err(JobError::Input(format!(
                    "the results do not fit in the storage quota ({used} of {} bytes used)",
                    self.quota
                )));
            }
        };
        match at {
            None => jobs::add_output(&mut tx, self.job_id, position, recorded.0.id).await?,
            Some(at) => {
                let output = NewOutput {
                    file_name: &recorded.0.file_name,
                    file_size: size,
                    kind,
                    mime_type: mime,
                    object_key: key,
                    file_id: Some(recorded.0.id),
                };
                // Among the job's files after those its earlier runs made.
                if runs::add_output(&mut tx, at, position, &output).await?.is_some() {
                    jobs::add_next_output(&mut tx, self.job_id, recorded.0.id).await?;
                }
            }
        }
        tx.commit().await?;
        Ok(recorded)
    }

    /// Records an intermediate: with its run only, counted against nothing but the job's own
    /// bound (its intermediates may hold as much as the plan's whole quota).
    async fn record_intermediate(
        &self,
        at: runs::RunAt,
        position: i32,
        key: &str,
        name: &str,
        size: i64,
    ) -> JobResult<Recorded> {
        let held = runs::intermediate_bytes(&self.db, self.job_id).await?;
        if held.saturating_add(size) > self.quota {
            let _ = self.storage.delete(Bucket::Private, key).await;
            return Err(JobError::Input(format!(
                "the steps' in-between files would hold more than {} bytes, the plan's storage",
                self.quota
            )));
        }
        let (kind, mime) = guess_type(name);
        let output = NewOutput {
            file_name: name,
            file_size: size,
            kind,
            mime_type: mime,
            object_key: key,
            file_id: None,
        };
        let mut conn = self.db.acquire().await?;
        runs::add_output(&mut conn, at, position, &output).await?;
        let recorded = runs::output_at(&self.db, at, position)
            .await?
            .ok_or_else(|| JobError::Server(format!("the intermediate {key} was not recorded")))?;
        Ok((recorded.file, Vec::new()))
    }

    /// A save ahead: stored at once, recorded once `turn` says the save asked before it was
    /// recorded (given up when that one failed). A result an earlier attempt recorded is
    /// answered as it is.
    async fn save_in_turn(
        &self,
        result: Ahead,
        mut turn: Option<oneshot::Receiver<bool>>,
    ) -> JobResult<Recorded> {
        let given_up = || JobError::Server("a result asked before this one was not saved".to_string());
        // One asked before that failed already spares this one its PUT.
        match turn.as_mut().map(oneshot::Receiver::try_recv) {
            Some(Ok(true)) => turn = None,
            Some(Ok(false) | Err(TryRecvError::Closed)) => return Err(given_up()),
            Some(Err(TryRecvError::Empty)) | None => {}
        }
        let stored = match self.recorded(result.position).await? {
            Some(row) => Stored::Earlier(row),
            None => {
                self.folder(result.folder_id).await?;
                Stored::Now(
                    self.store(result.file, &result.key, &result.name, "attachment")
                        .await?,
                )
            }
        };
        if let Some(turn) = turn
            && !turn.await.unwrap_or(false)
        {
            // Bytes nobody owns are removed, unless another attempt of the job (one that took it
            // over from a worker gone silent) has recorded them under the same key.
            if let Stored::Now(_) = stored
                && let Ok(false) = files::key_is_recorded(&self.db, &result.key).await
            {
                let _ = self.storage.delete(Bucket::Private, &result.key).await;
            }
            return Err(given_up());
        }
        match stored {
            Stored::Earlier(row) => Ok((row, Vec::new())),
            Stored::Now(size) => {
                self.record(result.position, &result.key, &result.name, result.folder_id, size)
                    .await
            }
        }
    }
}

/// A save ahead's result before its turn: recorded by an earlier attempt, or stored now with
/// this size.
enum Stored {
    Earlier(FileRow),
    Now(i64),
}

/// Saves ahead stored at once, at most: the next waits for the oldest, which bounds the files
/// held open, the store's connections and the database's.
const MAX_AHEAD: usize = 6;

/// Bytes saved ahead and not yet stored, at most. The job process removes a file once handed
/// over, so these bytes are on the work folder's disk without being counted in its limit; a
/// larger result is answered only once stored, as a save that waits would be.
const MAX_AHEAD_BYTES: u64 = 1 << 30;

/// The saves ahead of one job, oldest first.
#[derive(Default)]
pub(super) struct SavesAhead {
    /// Each with the size of its file.
    pending: VecDeque<(JoinHandle<JobResult<Recorded>>, u64)>,
    /// Told whether the newest pending save was recorded: the next one's turn.
    turn: Option<oneshot::Receiver<bool>>,
    /// Files saved ahead and not yet collected, in the order asked.
    done: Vec<FileRow>,
    /// The first failure, in the order asked: every later save ahead is refused with it.
    failure: Option<JobError>,
    /// The jobs queued for the files saved ahead.
    pub queued: Vec<JobId>,
}

impl SavesAhead {
    pub async fn push(&mut self, recorder: Recorder, result: Ahead) -> JobResult<()> {
        self.failed()?;
        let size = result.file.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
        let (told, turn) = oneshot::channel();
        let before = self.turn.replace(turn);
        let save = tokio::spawn(async move {
            let recorded = recorder.save_in_turn(result, before).await;
            let _ = told.send(recorded.is_ok());
            recorded
        });
        self.pending.push_back((save, size));
        while self.pending.len() > MAX_AHEAD
            || self
                .pending
                .iter()
                .map(|(_, size)| *size)
                .fold(0, u64::saturating_add)
                > MAX_AHEAD_BYTES
        {
            self.settle_oldest().await;
        }
        Ok(())
    }

    /// Waits for every save ahead; the first failure among them, if any.
    pub async fn wait(&mut self) -> JobResult<()> {
        while !self.pending.is_empty() {
            self.settle_oldest().await;
        }
        self.failed()
    }

    /// The files saved ahead since the last time they were collected, in the order asked.
    pub async fn collect(&mut self) -> JobResult<Vec<FileRow>> {
        self.wait().await?;
        Ok(std::mem::take(&mut self.done))
    }

    /// The file of the newest save ahead, once every save ahead is recorded: a save that waits.
    pub async fn take_newest(&mut self) -> JobResult<FileRow> {
        self.wait().await?;
        self.done
            .pop()
            .ok_or_else(|| JobError::Server("a save that was not asked".to_string()))
    }

    async fn settle_oldest(&mut self) {
        let Some((oldest, _)) = self.pending.pop_front() else {
            return;
        };
        match oldest.await {
            Ok(Ok((row, queued))) => {
                self.done.push(row);
                self.queued.extend(queued);
            }
            Ok(Err(e)) => {
                self.failure.get_or_insert(e);
            }
            Err(e) => {
                self.failure
                    .get_or_insert(JobError::Server(format!("a save ahead did not finish: {e}")));
            }
        }
    }

    fn failed(&self) -> JobResult<()> {
        match &self.failure {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}
