//! Watching one job process: the heartbeat, and the limits and asks that end it before it
//! ends by itself (a stop, the time limit, the disk, the month's minutes, a drain's end, another
//! worker taking the job over); then what its exit means for the job.

use std::convert::Infallible;
use std::process::ExitStatus;
use std::time::Duration;

use anyhow::{Context, Result};
use chrono::Utc;
use drive_core::db::jobs::{self, End, JobRow};
use drive_core::db::users;
use drive_core::id::{JobId, UserId};
use drive_core::job::{JobType, Lane};
use tokio::task::JoinHandle;

use super::{Farm, Supervised, handed_back};
use crate::protocol::{EXIT_RETRY, Start};
use crate::supervisor::process::{describe, kill, last_words};
use crate::supervisor::settings::MAX_ATTEMPTS;
use crate::supervisor::steward::Steward;
use crate::supervisor::work_folders;

impl Farm {
    /// When job `job` has run past its time limit (over all its attempts and, for a pipeline,
    /// all its steps), the failure that ends it.
    pub(super) fn out_of_time(&self, job: &JobRow) -> Option<End> {
        // The time limit is the job's, not an attempt's: retries share what is left of it.
        let first_start = job.started_at?;
        let time_limit =
            chrono::TimeDelta::from_std(self.shared.settings.time_limit).unwrap_or(chrono::TimeDelta::MAX);
        // The time it stood still is not its own (crate::supervisor::pauses).
        let stood = Duration::from_secs_f64(job.paused_seconds.max(0.0)) + self.pauses.stood(job.id);
        let stood = chrono::TimeDelta::from_std(stood).unwrap_or_default();
        (Utc::now() - first_start - stood > time_limit).then(|| {
            End::Failed(format!(
                "the job ran past its time limit of {} minutes (over {} attempts) and was stopped",
                self.shared.settings.time_limit.as_secs() / 60,
                job.attempts
            ))
        })
    }

    /// Runs a prepared job process for `job` to its end: renews the heartbeat, and kills the
    /// process when a stop is asked for, the time, disk or minutes run out (ending the job), the
    /// drain's time is up (handing it back) or another worker took the job over.
    pub(super) async fn supervise(&self, job: &JobRow, steward: Steward, start: Start) -> Result<Supervised> {
        let id = job.id;
        let started = tokio::time::Instant::now();
        let mut child = self.beating(&[id], self.processes.start(&start)).await?;
        let _held = (job.lane == Lane::Bulk)
            .then(|| self.pauses.hold(id, &child))
            .flatten();
        let (Some(to_child), Some(from_child)) = (child.stdin.take(), child.stdout.take()) else {
            anyhow::bail!("the job process's pipes were taken");
        };
        let steward = tokio::spawn(steward.serve(to_child, from_child));
        let period = self.shared.settings.beat_every();
        let mut tick = tokio::time::interval(period);
        let mut minutes_checked: Option<tokio::time::Instant> = None;
        let mut handing_back = self.handing_back.subscribe();
        let status = loop {
            tokio::select! {
                status = child.wait() => break status?,
                () = handed_back(&mut handing_back) => {
                    kill(&mut child).await;
                    self.wind_down(id, steward).await;
                    self.give_back(&[id]).await?;
                    return Ok(Supervised::Settled);
                }
                _ = tick.tick() => {
                    let verdict = match jobs::heartbeat(&self.shared.db, id, &self.name).await {
                        Ok(Some(true)) => Some(End::Stopped),
                        Ok(Some(false)) => None,
                        // No longer running as ours. Ended: at its own process's request, which
                        // is only left to exit, so let it. Otherwise another worker claimed it:
                        // stop working on it.
                        Ok(None) => match jobs::find(&self.shared.db, id).await? {
                            Some(job) if job.state.has_ended() => break last_words(&mut child).await?,
                            _ => {
                                tracing::info!(job.id = %id, "no longer this worker's job: another worker took it up");
                                kill(&mut child).await;
                                self.announce(steward).await;
                                return Ok(Supervised::Settled);
                            }
                        },
                        Err(e) => { tracing::warn!(job.id = %id, "heartbeat failed: {e}"); None }
                    };
                    let verdict = match verdict.or_else(|| self.out_of_time(job)).or_else(|| self.over_disk(id)) {
                        Some(end) => Some(end),
                        // The month's minutes, once a heartbeat: a job stops, keeping what it
                        // made, when its account's run out (its own time counts as it runs).
                        None if job.job_type != JobType::ReadMetadata
                            // Half a tick's slack: a tick a hair early must not put the
                            // check off by a whole tick.
                            && minutes_checked.is_none_or(|at| at.elapsed() + period / 2 >= self.shared.settings.queue.heartbeat) =>
                        {
                            minutes_checked = Some(tokio::time::Instant::now());
                            self.minutes_ran_out(job.user_id).await.then_some(End::Stopped)
                        }
                        None => None,
                    };
                    if let Some(end) = verdict {
                        kill(&mut child).await;
                        self.wind_down(id, steward).await;
                        self.shared.end(id, end).await?;
                        return Ok(Supervised::Settled);
                    }
                }
            }
        };
        tracing::info!(job.id = %id, %status, process_ms = started.elapsed().as_millis() as u64, "job process exited");
        self.wind_down(id, steward).await;
        Ok(Supervised::Exited(status))
    }

    /// After job `id`'s process exited or was killed: waits for its steward (which may be
    /// finishing a save: seconds on a loaded machine) and removes its work folder, the job
    /// still this worker's meanwhile, its heartbeat renewed.
    async fn wind_down(&self, id: JobId, steward: JoinHandle<Vec<JobId>>) {
        self.beating(&[id], async {
            self.announce(steward).await;
            self.clean_up(id);
        })
        .await
    }

    /// `work` while the heartbeats of `ids` are renewed: readying a job (its inputs, its
    /// steward, its process) or winding one down, when no process is watched for it. On a
    /// loaded machine either can take longer than the three heartbeats after which any worker
    /// takes a silent job up again (a job handed back by a drain then spent an attempt).
    pub(super) async fn beating<T>(&self, ids: &[JobId], work: impl Future<Output = T>) -> T {
        tokio::select! {
            done = work => done,
            never = self.keep_alive(ids) => match never {},
        }
    }

    /// Renews the heartbeats of `ids` until dropped.
    async fn keep_alive(&self, ids: &[JobId]) -> Infallible {
        let mut tick = tokio::time::interval(self.shared.settings.beat_every());
        loop {
            tick.tick().await;
            if !ids.is_empty()
                && let Err(e) = jobs::heartbeats(&self.shared.db, ids, &self.name).await
            {
                tracing::warn!(job.id = %ids[0], jobs = ids.len(), "renewing heartbeats failed: {e}");
            }
        }
    }

    /// After job `id`'s process exited: nothing more when the job has ended; otherwise it is
    /// tried again after a server-side failure (its results so far reused, never duplicated),
    /// or failed.
    pub(super) async fn after_exit(&self, id: JobId, status: ExitStatus) -> Result<()> {
        let job = jobs::find(&self.shared.db, id)
            .await?
            .context("the job row vanished")?;
        if job.state.has_ended() {
            return Ok(());
        }
        if status.code() == Some(EXIT_RETRY) && job.attempts < MAX_ATTEMPTS {
            return self.retry_later(&job).await;
        }
        self.shared.end(id, End::Failed(describe(status))).await
    }

    /// Waits for the steward of a job whose process has exited or been killed, and rings for
    /// the jobs queued for the files the job made (in the database already: their readings,
    /// their folders' rules').
    pub(super) async fn announce(&self, steward: JoinHandle<Vec<JobId>>) {
        let queued = steward.await.unwrap_or_default();
        if !queued.is_empty() {
            self.shared.doorbell.ring().await;
        }
    }

    /// A failure when job `id`'s work folder holds more than the disk limit.
    pub(super) fn over_disk(&self, id: JobId) -> Option<End> {
        let used = work_folders::size(&self.shared.settings.work_dir, id);
        (used > self.shared.settings.disk_limit).then(|| {
            End::Failed(format!(
                "the job wrote more than {} to its work folder and was stopped",
                drive_core::job::decimal_size(self.shared.settings.disk_limit as i64)
            ))
        })
    }

    /// Whether the account has used up this month's job minutes (a database error answers
    /// no: the next heartbeat asks again).
    pub(super) async fn minutes_ran_out(&self, user_id: UserId) -> bool {
        let checked = async {
            let plan = users::plan_of(&self.shared.db, user_id).await?;
            let used = jobs::seconds_this_month(&self.shared.db, user_id).await?;
            Ok::<_, sqlx::Error>(
                used >= plan.map_or(0.0, |p| self.shared.settings.job_minutes.for_plan(p)) * 60.0,
            )
        };
        checked
            .await
            .inspect_err(|e| tracing::warn!("checking job minutes failed: {e}"))
            .unwrap_or(false)
    }

    pub(super) fn clean_up(&self, id: JobId) {
        work_folders::remove(&self.shared.settings.work_dir, id);
    }
}
