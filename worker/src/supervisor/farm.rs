//! The supervising side of a worker. It takes jobs from the job rows, as many at once as it
//! has slots: each lane's next job by the accounts' turns ([`jobs::candidates`]), the lane by
//! weight ([`crate::supervisor::turns`]), claimed by one conditional update ([`jobs::claim`]). Idle, it
//! waits for the doorbell ([`drive_core::queue`]) or polls every second. For each job it hands
//! the job to a `drive-worker run-job` child process ([`crate::supervisor::process`]), answers the child's
//! requests ([`crate::supervisor::steward`]), renews the heartbeat, and kills the child when a stop is
//! asked for or the time limit passes. A crash, a hang or a memory blow-up inside a job
//! therefore ends that job alone, and an exploit inside one finds no credential: the child is
//! started with an empty environment and narrowed, and this process makes itself non-dumpable
//! so the child cannot read its environment or memory either.
//!
//! Once every slot runs a bulk job, a job of another lane still starts: one bulk job is held
//! still while it runs in that job's slot ([`crate::supervisor::pauses`]).
//!
//! On SIGTERM it drains: it takes no new job, lets the running ones finish for up to
//! `DRIVE_DRAIN_SECONDS`, then hands the rest back ([`jobs::hand_back`]: another worker takes
//! them at once, no attempt spent) and exits 0.
//!
//! Beside the jobs it runs the two loops of [`crate::supervisor::upkeep`], the webhook deliverer
//! ([`crate::supervisor::webhooks`]) and the agent's tasks ([`crate::supervisor::agent`]).

use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use drive_core::db;
use drive_core::db::jobs::{self, End, JobRow, Pool};
use drive_core::id::JobId;
use drive_core::job::{JobSpec, JobType, Lane};
use drive_core::queue::{self, Doorbell};
use drive_core::storage::Storage;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::{Notify, Semaphore, watch};
use tokio::task::JoinSet;
use uuid::Uuid;

use crate::supervisor::generation::{Failure, Generation};
use crate::supervisor::local_models::LocalModels;
use crate::supervisor::metrics::WorkerMetrics;
use crate::supervisor::pauses::{Pause, Pauses};
use crate::supervisor::process::JobProcesses;
use crate::supervisor::settings::{MAX_ATTEMPTS, Settings, given_up};
use crate::supervisor::shared::Shared;
use crate::supervisor::steward::{Place, Steward};
use crate::supervisor::turns::LaneTurns;
use crate::supervisor::upkeep;

mod one_process;
mod pipeline;
mod readings;

/// How often an idle worker looks for a job without being rung.
const POLL: Duration = Duration::from_secs(1);

/// How supervising a job process ended.
enum Supervised {
    /// The process exited by itself, with this status.
    Exited(ExitStatus),
    /// The job was dealt with here: ended, handed back, or left to the worker that took it over.
    Settled,
}

/// What every supervised job shares.
pub struct Farm {
    /// This process's name on the job rows it runs.
    name: String,
    shared: Arc<Shared>,
    processes: JobProcesses,
    /// One per job this worker may run at once.
    slots: Arc<Semaphore>,
    /// The bulk jobs running, which may be held still to lend their slot.
    pauses: Pauses,
    turns: Mutex<LaneTurns>,
    /// Set once a drain's time is up: every running job is handed back.
    handing_back: watch::Sender<bool>,
}

pub async fn work() -> Result<()> {
    // Job processes run as this process's user: not dumpable, its environment (every key)
    // and memory are closed to them (/proc/PID/environ, /proc/PID/mem, ptrace).
    // SAFETY: prctl on this process, no pointers.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0) } != 0 {
        return Err(std::io::Error::last_os_error()).context("making the worker non-dumpable");
    }
    let settings = Settings::from_environment()?;
    let db = db::connect(&settings.database_url)
        .await
        .context("connecting to PostgreSQL")?;
    let storage = Storage::new(settings.storage.clone());
    // A wrong address fails the start here; an outage later only delays the doorbell.
    let doorbell = Doorbell::connect(&settings.queue).await?;
    let name = format!(
        "{}-{}-{}",
        hostname(),
        std::process::id(),
        &Uuid::new_v4().simple().to_string()[..8]
    );
    std::fs::create_dir_all(&settings.work_dir)
        .with_context(|| format!("making the work folder {}", settings.work_dir.display()))?;
    let metrics = Arc::new(WorkerMetrics::default());
    let shared = Arc::new(Shared {
        db,
        storage,
        doorbell,
        models: Arc::new(LocalModels::new(settings.models.clone(), metrics.clone())),
        metrics,
        settings,
    });
    let settings = &shared.settings;
    let farm = Arc::new(Farm {
        name: name.clone(),
        shared: shared.clone(),
        processes: JobProcesses::new(settings.memory_limit, settings.disk_limit),
        slots: Arc::new(Semaphore::new(settings.concurrency)),
        pauses: Pauses::new(settings.bulk_pause),
        turns: Mutex::new(LaneTurns::new(&settings.lane_weights)),
        handing_back: watch::channel(false).0,
    });
    farm.processes.refill_spare();

    if let Some(listen) = settings.metrics_listen {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("binding the metrics address {listen}"))?;
        if let Some(path) = &settings.metrics_address_file {
            let address = listener.local_addr().context("reading the metrics address")?;
            std::fs::write(path, address.to_string())
                .with_context(|| format!("writing the metrics address to {}", path.display()))?;
        }
        tokio::spawn(crate::supervisor::metrics::serve(
            listener,
            shared.db.clone(),
            shared.metrics.clone(),
            settings.concurrency,
        ));
    }
    tokio::spawn(upkeep::requeue_loop(shared.clone()));
    tokio::spawn(upkeep::sweep_loop(shared.clone()));
    tokio::spawn(crate::supervisor::webhooks::deliver_loop(shared.clone()));
    tokio::spawn(crate::supervisor::agent::run_loop(shared.clone()));
    tokio::spawn(crate::supervisor::agent::wake_loop(shared.clone()));
    let wake = Arc::new(Notify::new());
    tokio::spawn(queue::listen(settings.queue.clone(), wake.clone()));
    let pool = &settings.pool;
    tracing::info!(
        worker = %name,
        concurrency = settings.concurrency,
        lanes = ?pool.lanes,
        job_types = ?pool.job_types,
        bulk_pause_seconds = settings.bulk_pause.as_secs_f64(),
        "taking jobs"
    );
    // The one line on stdout: tests and scripts wait for it.
    println!("worker {name} ready");

    let (stop, stopped) = watch::channel(false);
    let mut terminate = signal(SignalKind::terminate()).context("installing a SIGTERM handler")?;
    tokio::spawn(async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
        }
        let _ = stop.send(true);
    });
    let mut running = JoinSet::new();
    take_jobs(&farm, &wake, stopped, &mut running).await;
    drain(&farm, running).await;
    Ok(())
}

/// Claims jobs while a slot is free, until `stopped`; each runs in `running`.
async fn take_jobs(
    farm: &Arc<Farm>,
    wake: &Notify,
    mut stopped: watch::Receiver<bool>,
    running: &mut JoinSet<()>,
) {
    // Whether the last look for a job to run in a bulk job's slot found one: more may wait.
    let mut lent = false;
    loop {
        while running.try_join_next().is_some() {}
        let permit = tokio::select! {
            permit = farm.slots.clone().acquire_owned() => permit.expect("the slots are never closed"),
            _ = stopped.wait_for(|stop| *stop) => return,
            // Every slot is busy: a job of another lane may still run in a bulk job's.
            () = farm.chance_to_lend(wake, lent) => {
                lent = farm.lend_slot(running).await.unwrap_or_else(|e| {
                    tracing::warn!("lending a bulk job's slot failed: {e}");
                    false
                });
                continue;
            }
        };
        match farm.next_job(&farm.shared.settings.pool).await {
            Ok(Some(job)) => {
                let farm = farm.clone();
                running.spawn(async move {
                    farm.handle(job).await;
                    drop(permit);
                });
                continue;
            }
            Ok(None) => {}
            // The database is away: the poll tries again.
            Err(e) => tracing::warn!("looking for a job failed: {e}"),
        }
        drop(permit);
        tokio::select! {
            _ = wake.notified() => {}
            _ = tokio::time::sleep(POLL) => {}
            _ = stopped.wait_for(|stop| *stop) => return,
        }
    }
}

/// Lets the running jobs finish for up to the drain time, then hands back the rest.
async fn drain(farm: &Farm, mut running: JoinSet<()>) {
    farm.shared.metrics.set_draining();
    let busy = farm.shared.metrics.running_now();
    tracing::info!(
        jobs = busy,
        seconds = farm.shared.settings.drain.as_secs_f64(),
        "draining: no new job, the running ones may finish"
    );
    let finished = tokio::time::timeout(farm.shared.settings.drain, async {
        while running.join_next().await.is_some() {}
    })
    .await;
    if finished.is_err() {
        tracing::info!("the drain's time is up: handing the running jobs back");
        // Kept for a job still being readied, which subscribes only once its process runs.
        farm.handing_back.send_replace(true);
        while running.join_next().await.is_some() {}
    }
    tracing::info!("drained");
}

/// Resolves once the drain's time is up (never, should the farm be gone).
async fn handed_back(handing_back: &mut watch::Receiver<bool>) {
    if handing_back.wait_for(|now| *now).await.is_err() {
        std::future::pending::<()>().await;
    }
}

impl Farm {
    /// The next job this worker takes of `takes`, claimed; `None` when none is waiting.
    async fn next_job(&self, takes: &Pool) -> Result<Option<JobRow>, sqlx::Error> {
        let aging = self.shared.settings.aging.as_secs_f64();
        // A claim lost to another worker: look again.
        for _ in 0..10 {
            let candidates = jobs::candidates(&self.shared.db, takes, aging).await?;
            let chosen = self
                .turns
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .pick(&candidates)
                .cloned();
            let Some(chosen) = chosen else {
                return Ok(None);
            };
            if let Some(claimed) = jobs::claim(&self.shared.db, chosen.id, &self.name).await? {
                if claimed.first_start {
                    self.shared.metrics.waited(chosen.lane, chosen.waited);
                }
                return Ok(Some(claimed.job));
            }
        }
        Ok(None)
    }

    /// Resolves when a bulk job may be held and a job may be waiting: at once after a look that
    /// `found` one, else once rung or at the poll.
    async fn chance_to_lend(&self, wake: &Notify, found: bool) {
        self.pauses.until_one_may_be_held().await;
        if found {
            return;
        }
        tokio::select! {
            () = wake.notified() => {}
            () = tokio::time::sleep(POLL) => {}
        }
    }

    /// Runs the next job of this worker's other lanes in a bulk job's slot, that job held still
    /// until it ends or the longest pause is up; answers whether one was waiting.
    async fn lend_slot(self: &Arc<Self>, running: &mut JoinSet<()>) -> Result<bool, sqlx::Error> {
        let takes = Pool {
            lanes: self
                .shared
                .settings
                .pool
                .lanes
                .iter()
                .copied()
                .filter(|lane| *lane != Lane::Bulk)
                .collect(),
            job_types: self.shared.settings.pool.job_types.clone(),
        };
        // Looked for before any job is held: the poll finds nothing most of the time.
        if takes.lanes.is_empty()
            || jobs::candidates(&self.shared.db, &takes, self.shared.settings.aging.as_secs_f64())
                .await?
                .is_empty()
        {
            return Ok(false);
        }
        let Some(pause) = self.pauses.pause() else {
            return Ok(false);
        };
        self.shared.metrics.set_held(self.pauses.held_now());
        let job = match self.next_job(&takes).await {
            Ok(Some(job)) => job,
            taken_or_failed => {
                self.go_on(pause).await;
                self.pauses.slot_given_back();
                return taken_or_failed.map(|_| false);
            }
        };
        tracing::info!(job.id = %pause.job, lent_to = %job.id, "a bulk job held still for a job of another lane");
        if let Err(e) = jobs::paused(&self.shared.db, pause.job, &self.name).await {
            tracing::warn!(job.id = %pause.job, "marking the pause failed: {e}");
        }
        let farm = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(farm.pauses.longest()).await;
            farm.go_on(pause).await;
        });
        let farm = self.clone();
        running.spawn(async move {
            farm.handle(job).await;
            farm.go_on(pause).await;
            farm.pauses.slot_given_back();
        });
        Ok(true)
    }

    /// Ends `pause`, if it is still under way: the held job goes on.
    async fn go_on(&self, pause: Pause) {
        let resumed = self.pauses.resume(pause);
        self.shared.metrics.set_held(self.pauses.held_now());
        if resumed && let Err(e) = jobs::resumed(&self.shared.db, pause.job).await {
            tracing::warn!(job.id = %pause.job, "marking the pause's end failed: {e}");
        }
    }

    async fn handle(&self, job: JobRow) {
        let (id, job_type) = (job.id, job.job_type);
        let ran = {
            let _running = self.shared.metrics.running();
            self.run_claimed(job).await
        };
        match ran {
            Ok(()) => match jobs::find(&self.shared.db, id).await {
                Ok(Some(job)) if job.state.has_ended() => self.shared.metrics.ended(&job),
                Ok(_) => {}
                Err(e) => tracing::warn!(job.id = %id, "reading the job back for the metrics failed: {e}"),
            },
            // The job is still running in its row: its heartbeat lapses and the requeue loop
            // gives it to another worker.
            Err(e) => tracing::error!(job.id = %id, "supervising the job failed: {e:#}"),
        }
        // A reading ended: its account may have room for a deferred one.
        if job_type == JobType::ReadMetadata {
            upkeep::queue_deferred_readings(&self.shared).await;
        }
        // A rule's job left the queue: its account may have room for a waiting hit.
        upkeep::queue_waiting_rule_jobs(&self.shared).await;
        // Between jobs rather than at a job's start, so that readying it takes no CPU from one.
        self.processes.refill_spare();
    }

    async fn run_claimed(&self, job: JobRow) -> Result<()> {
        let id = job.id;
        if job.stop_requested_at.is_some() {
            self.shared.end(id, End::Stopped).await?;
            return Ok(());
        }
        if job.attempts > MAX_ATTEMPTS {
            self.shared
                .end(id, End::Failed(given_up(job.attempts - 1)))
                .await?;
            return Ok(());
        }
        if let Some(end) = self.out_of_time(&job) {
            self.shared.end(id, end).await?;
            return Ok(());
        }
        match job.spec() {
            Ok(JobSpec::GenerateImage(_)) => return self.generate(job).await,
            Ok(JobSpec::Pipeline(chain)) => return self.run_pipeline(job, chain).await,
            Ok(JobSpec::ReadMetadata(_)) => return self.read_metadata(job).await,
            _ => {}
        }
        tracing::info!(job.id = %id, job.r#type = job.job_type.as_str(), attempt = job.attempts, "running");
        let (steward, start) = self
            .beating(&[id], async {
                let inputs = Steward::inputs_of(&self.shared.db, &job).await?;
                Steward::prepare(&self.shared, job.clone(), inputs, Place::Job).await
            })
            .await?;
        match self.supervise(&job, steward, start).await? {
            Supervised::Exited(status) => self.after_exit(id, status).await,
            Supervised::Settled => Ok(()),
        }
    }

    /// A job that failed on this side (the store or the database did not answer) runs again
    /// after 2, then 4 seconds: released to the queue, where no worker claims it sooner.
    async fn retry_later(&self, job: &JobRow) -> Result<()> {
        let wait = Duration::from_secs(2u64.pow(job.attempts as u32));
        jobs::release(&self.shared.db, job.id, wait).await?;
        Ok(())
    }

    /// Gives jobs this worker runs back to the queue, their attempts unspent (the drain's time
    /// is up, or a reading process's), and rings for another worker.
    async fn give_back(&self, ids: &[JobId]) -> Result<()> {
        let handed = jobs::hand_back(&self.shared.db, ids, &self.name).await?;
        if handed > 0 {
            tracing::info!(job.id = %ids[0], jobs = handed, "handed back");
            self.shared.doorbell.ring().await;
        }
        Ok(())
    }

    /// Works a generateImage job in this process ([`crate::supervisor::generation`]), renewing its
    /// heartbeat meanwhile; a failure of this machine's is retried like a job process's.
    async fn generate(&self, job: JobRow) -> Result<()> {
        let id = job.id;
        tracing::info!(job.id = %id, attempt = job.attempts, "generating an image");
        let generation = Generation {
            db: &self.shared.db,
            storage: &self.shared.storage,
            generators: &self.shared.settings.generators,
            quotas: &self.shared.settings.quotas,
        };
        let work = generation.work(&job);
        tokio::pin!(work);
        let mut tick = tokio::time::interval(self.shared.settings.beat_every());
        let mut handing_back = self.handing_back.subscribe();
        let outcome = loop {
            tokio::select! {
                outcome = &mut work => break outcome,
                () = handed_back(&mut handing_back) => return self.give_back(&[id]).await,
                _ = tick.tick() => match jobs::heartbeat(&self.shared.db, id, &self.name).await {
                    // Another worker took it over: this one stops.
                    Ok(None) => return Ok(()),
                    // A caller cannot stop a generation; nothing else asks.
                    Ok(Some(_)) => {}
                    Err(e) => tracing::warn!(job.id = %id, "heartbeat failed: {e}"),
                },
            }
        };
        match outcome {
            Ok(queued) => {
                self.shared.end(id, End::Done(serde_json::json!({}))).await?;
                if !queued.is_empty() {
                    self.shared.doorbell.ring().await;
                }
                Ok(())
            }
            Err(Failure::Generation(why)) => self.shared.end(id, End::Failed(why)).await,
            Err(Failure::Server(why)) if job.attempts < MAX_ATTEMPTS => {
                tracing::warn!(job.id = %id, "generating failed on this side, to be tried again: {why}");
                self.retry_later(&job).await
            }
            Err(Failure::Server(why)) => {
                self.shared
                    .end(
                        id,
                        End::Failed(format!("the drive failed to save the image: {why}")),
                    )
                    .await
            }
        }
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "worker".to_string())
}
