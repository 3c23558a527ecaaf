//! Metadata readings a burst at a time. An upload of a thousand files queues a thousand
//! readMetadata jobs; run one a process, each pays for a process, a dozen queries and its own
//! transactions, more than reading a small file costs. So the worker that claims a reading
//! also claims up to [`BATCH`] − 1 more of the same account's queued readings of small files
//! ([`jobs::claim_readings`]), reads them all in one job process, and ends them in one
//! transaction ([`drive_core::job_end::finish_readings`]). One account's only: the process
//! holds presigned GETs of that account's objects and no one else's.
//!
//! The process reads for about a fifth of a second ([`crate::job_process::metadata`]) and ends what it
//! read, the first always: the readings it did not come to are handed back, their attempts
//! unspent, so a slot is never held long from another lane's job. A reading whose process
//! ended before it ended the first (a crash, a failure of the store) is read again alone, its
//! attempt spent: whichever file ended the process, the others do not share its fate twice,
//! and it meets its own limit of attempts.

use std::time::Duration;

use anyhow::Result;
use drive_core::db::files;
use drive_core::db::files::FileRow;
use drive_core::db::jobs::{self, End, JobRow};
use drive_core::id::{FileId, JobId};
use drive_core::job::Lane;

use super::{Farm, Supervised};
use crate::supervisor::steward::Steward;

/// The most readings one process reads.
const BATCH: usize = 32;

/// The largest file read with others, in bytes: photos and short tracks. A larger file's
/// reading takes long next to what its own process costs.
const BATCHED_SIZE: i64 = 16 << 20;

impl Farm {
    /// Reads the metadata of claimed reading `first`'s file, and of the account's other queued
    /// readings claimed with it when it is a first attempt at a small file.
    pub(super) async fn read_metadata(&self, first: JobRow) -> Result<()> {
        let mut claimed = vec![first];
        if claimed[0].attempts == 1
            && let [file] = claimed[0].input_ids[..]
        {
            claimed.extend(self.claim_more_readings(&claimed[0], file).await?);
        }
        let input_ids: Vec<FileId> = claimed.iter().flat_map(|job| job.input_ids.clone()).collect();
        let found = files::find_many(&self.shared.db, claimed[0].user_id, &input_ids, true).await?;
        let mut readings = Vec::with_capacity(claimed.len());
        for job in claimed {
            // A file trashed or deleted before its reading ran fails it, as any job's input.
            match Steward::inputs_among(&found, &job).map(<[FileRow; 1]>::try_from) {
                Ok(Ok([file])) => readings.push((job, file)),
                Ok(Err(files)) => {
                    let why = format!("a reading reads one file, not {}", files.len());
                    self.shared.end(job.id, End::Failed(why)).await?;
                }
                Err(why) => self.shared.end(job.id, End::Failed(why)).await?,
            }
        }
        if readings.is_empty() {
            return Ok(());
        }
        let (jobs, files): (Vec<JobRow>, Vec<FileRow>) = readings.into_iter().unzip();
        let ids: Vec<JobId> = jobs.iter().map(|job| job.id).collect();
        let first = &jobs[0];
        tracing::info!(job.id = %first.id, readings = ids.len(), "reading metadata");
        let (steward, start) = self
            .beating(&ids, Steward::prepare_readings(&self.shared, &jobs, files))
            .await?;
        // The others' heartbeats renewed here: the first's is the process's.
        let supervised = self
            .beating(&ids[1..], self.supervise(first, steward, start))
            .await?;
        match supervised {
            // Read alone: its exit means for it what it means for any job.
            Supervised::Exited(status) if ids.len() == 1 => self.after_exit(first.id, status).await?,
            // The process's time was up: it ended what it read, the first always; the readings
            // it did not come to wait for the next process, their attempts unspent.
            Supervised::Exited(status) if status.success() && self.has_ended(first.id).await? => {
                self.give_back(&ids[1..]).await?
            }
            Supervised::Exited(_) => self.read_again_alone(&ids).await?,
            // The first was ended, handed back or taken over; the others follow it.
            Supervised::Settled => self.read_again_alone(&ids[1..]).await?,
        }
        for &id in &ids[1..] {
            if let Some(job) = jobs::find(&self.shared.db, id).await?
                && job.state.has_ended()
            {
                self.shared.metrics.ended(&job);
            }
        }
        Ok(())
    }

    /// Claims up to [`BATCH`] − 1 more of `first`'s account's readings to read with it, as
    /// many as the download limit allows at [`BATCHED_SIZE`] each.
    async fn claim_more_readings(&self, first: &JobRow, file: FileId) -> Result<Vec<JobRow>> {
        let room = (self.shared.settings.download_limit / BATCHED_SIZE - 1).clamp(0, BATCH as i64 - 1);
        if room == 0 {
            return Ok(Vec::new());
        }
        let claimed = jobs::claim_readings(
            &self.shared.db,
            first.user_id,
            file,
            &self.name,
            room,
            BATCHED_SIZE,
        )
        .await?;
        Ok(claimed
            .into_iter()
            .map(|claimed| {
                if claimed.first_start
                    && let Some(started) = claimed.job.started_at
                {
                    let waited = (started - claimed.job.created_at).num_milliseconds() as f64 / 1000.0;
                    self.shared.metrics.waited(Lane::System, waited);
                }
                claimed.job
            })
            .collect())
    }

    /// Whether job `id` has ended.
    async fn has_ended(&self, id: JobId) -> Result<bool> {
        Ok(jobs::find(&self.shared.db, id)
            .await?
            .is_some_and(|job| job.state.has_ended()))
    }

    /// Puts back the readings of `ids` this worker still runs, each to be read alone: after
    /// the 2 s of a first retry, or at once by any worker when the drain's time is up.
    async fn read_again_alone(&self, ids: &[JobId]) -> Result<()> {
        if *self.handing_back.borrow() {
            return self.give_back(ids).await;
        }
        let released =
            jobs::release_unended(&self.shared.db, ids, &self.name, Duration::from_secs(2)).await?;
        if released > 0 {
            tracing::info!(
                readings = released,
                "readings read together whose process ended first, to be read alone"
            );
        }
        Ok(())
    }
}
