//! The supervising side of a worker: apalis hands it job ids from Redis; for each it claims
//! the job row, hands the job to a `drive-worker run-job` child process, answers the child's
//! requests ([`crate::steward`]), renews the heartbeat, and kills the child when a stop is
//! asked for or the time limit passes. A crash, a hang or a memory blow-up inside a job
//! therefore ends that job alone, and an exploit inside one finds no credential: the child
//! is started with an empty environment and narrowed ([`drive_confine`]), and this process
//! makes itself non-dumpable so the child cannot read its environment or memory either. One
//! child is kept started ahead (the spare), waiting for a job, so a job does not wait for a
//! process.
//!
//! Beside the queue it runs the two loops of [`crate::upkeep`], the webhook deliverer
//! ([`crate::webhooks`]) and the agent's tasks ([`crate::agent`]).

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use apalis::prelude::*;
use apalis_redis::factory::RedisStorageFactory;
use chrono::Utc;
use drive_core::db::jobs::{self, End, JobRow};
use drive_core::db::users;
use drive_core::db::{self, PgPool};
use drive_core::id::{JobId, UserId};
use drive_core::job::JobType;
use drive_core::queue::{JobMessage, JobQueue};
use drive_core::storage::Storage;
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, Command};
use tokio::signal::unix::{SignalKind, signal};
use tokio::task::JoinHandle;
use uuid::Uuid;

use crate::generation::{Failure, Generation};
use crate::metrics::WorkerMetrics;
use crate::protocol::Start;
use crate::run::EXIT_RETRY;
use crate::settings::{MAX_ATTEMPTS, Settings, given_up};
use crate::steward::Steward;
use crate::upkeep;

/// What every supervised job shares.
pub struct Farm {
    /// This process's name in the queue and on the job rows it runs.
    name: String,
    pub(crate) db: PgPool,
    pub(crate) storage: Storage,
    pub(crate) queue: JobQueue,
    pub(crate) settings: Settings,
    /// A job process started ahead, waiting on stdin for the next job this worker claims.
    spare: Mutex<Option<Child>>,
    /// What this worker ran, for its `/metrics`.
    metrics: WorkerMetrics,
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
    let queue = JobQueue::connect(&settings.queue).await?;
    let name = format!(
        "{}-{}-{}",
        hostname(),
        std::process::id(),
        &Uuid::new_v4().simple().to_string()[..8]
    );
    std::fs::create_dir_all(&settings.work_dir)
        .with_context(|| format!("making the work folder {}", settings.work_dir.display()))?;
    let farm = Arc::new(Farm {
        name: name.clone(),
        db,
        storage,
        queue,
        settings,
        spare: Mutex::new(None),
        metrics: WorkerMetrics::default(),
    });
    farm.refill_spare();

    if let Some(listen) = farm.settings.metrics_listen {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("binding the metrics address {listen}"))?;
        if let Some(path) = &farm.settings.metrics_address_file {
            let address = listener.local_addr().context("reading the metrics address")?;
            std::fs::write(path, address.to_string())
                .with_context(|| format!("writing the metrics address to {}", path.display()))?;
        }
        tokio::spawn(crate::metrics::serve(listener, farm.clone()));
    }
    tokio::spawn(upkeep::repush_loop(farm.clone()));
    tokio::spawn(upkeep::sweep_loop(farm.clone()));
    tokio::spawn(crate::webhooks::deliver_loop(farm.clone()));
    tokio::spawn(crate::agent::run_loop(farm.clone()));
    tokio::spawn(crate::agent::wake_loop(farm.clone()));
    let concurrency = farm.settings.concurrency;
    tracing::info!(worker = %name, concurrency, queue = %farm.settings.queue.name, "taking jobs");
    // The one line on stdout: tests and scripts wait for it.
    println!("worker {name} ready");

    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut terminate = signal(SignalKind::terminate()).context("installing a SIGTERM handler")?;
    tokio::spawn(async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
        }
        let _ = stop.send(true);
    });
    // A queue outage ends apalis's worker with an error; this process stays, and takes jobs
    // again once Redis answers (jobs it was running are picked up by their heartbeats).
    // (A wrong address has failed the start already: `JobQueue::connect` above.)
    let mut pause = Duration::from_millis(200);
    loop {
        let mut until = stopped.clone();
        let shutdown = async move {
            let _ = until.wait_for(|stop| *stop).await;
            Ok::<(), std::io::Error>(())
        };
        let started = std::time::Instant::now();
        let failure = match take_jobs(&farm, shutdown).await {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        if *stopped.borrow() {
            return Ok(());
        }
        // Back to a short pause once a run lasted: the outage it ended with is a new one.
        if started.elapsed() > Duration::from_secs(10) {
            pause = Duration::from_millis(200);
        }
        tracing::warn!("the queue failed; taking jobs again in {pause:?}: {failure:#}");
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(5));
    }
}

/// Takes this farm's jobs from Redis, on a connection of its own, until `shutdown` (Ok) or the
/// queue fails (the error).
async fn take_jobs(
    farm: &Arc<Farm>,
    shutdown: impl std::future::Future<Output = std::io::Result<()>> + Send + 'static,
) -> Result<()> {
    // Workers wake on Redis pub/sub pushes when a job is queued, which needs RESP3.
    let url = &farm.settings.queue.redis_url;
    let resp3 = format!("{url}{}protocol=resp3", if url.contains('?') { '&' } else { '?' });
    let client = apalis_redis::Client::open(resp3.as_str())?;
    let mut factory = RedisStorageFactory::new(client).await?;
    let concurrency = farm.settings.concurrency;
    // A batch no bigger than what this worker runs at once leaves the rest of the queue to
    // the other workers.
    let backend = factory.create_with_config(farm.settings.queue.apalis(concurrency))?;
    WorkerBuilder::new(farm.name.as_str())
        .backend(backend)
        .data(farm.clone())
        .concurrency(concurrency)
        .build(handle)
        .run_until(shutdown)
        .await?;
    Ok(())
}

/// How often a handled message's removal is tried, a quarter second apart (a minute).
const FORGET_TRIES: usize = 240;

async fn handle(message: JobMessage, task: TaskId, farm: Data<Arc<Farm>>) -> Result<(), BoxDynError> {
    let id = message.job_id;
    let supervised = {
        let _running = farm.metrics.running();
        farm.supervise(id).await
    };
    // The row has the outcome (or, after a failure here, the farm pushes the job again): the
    // message can go, once apalis has recorded its lease on it (`JobQueue::forget`).
    let (queue, worker, task) = (farm.queue.clone(), farm.name.clone(), task.to_string());
    tokio::spawn(async move {
        for _ in 0..FORGET_TRIES {
            match queue.forget(&task, &worker).await {
                Ok(true) => return,
                Ok(false) => {}
                Err(e) => tracing::warn!(job.id = %id, "forgetting the queue's message failed: {e}"),
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        tracing::warn!(job.id = %id, "the queue's message was never leased; left to Redis");
    });
    if matches!(supervised, Ok(true)) {
        match jobs::find(&farm.db, id).await {
            Ok(Some(job)) if job.state.has_ended() => farm.metrics.ended(&job),
            Ok(_) => {}
            Err(e) => tracing::warn!(job.id = %id, "reading the job back for the metrics failed: {e}"),
        }
    }
    // Between jobs rather than at a job's start, so that readying it takes no CPU from one.
    farm.refill_spare();
    supervised.map(drop).map_err(|e| {
        tracing::error!(job.id = %id, "supervising the job failed: {e:#}");
        e.into()
    })
}

impl Farm {
    /// Claims job `id` and sees it through this attempt; `false` when it was not this worker's
    /// to run (a repeated message).
    async fn supervise(&self, id: JobId) -> Result<bool> {
        let stale = self.settings.stale_after().as_secs_f64();
        let Some(job) = jobs::claim(&self.db, id, &self.name, stale).await? else {
            // Ended, stopped while queued, or running healthily elsewhere: a repeated message.
            return Ok(false);
        };
        self.run_claimed(job).await.map(|()| true)
    }

    async fn run_claimed(&self, job: JobRow) -> Result<()> {
        let id = job.id;
        if job.stop_requested_at.is_some() {
            self.end(id, End::Stopped).await?;
            return Ok(());
        }
        if job.attempts > MAX_ATTEMPTS {
            self.end(id, End::Failed(given_up(job.attempts - 1))).await?;
            return Ok(());
        }
        // The time limit is the job's, not an attempt's: retries share what is left of it.
        let first_start = job.started_at.unwrap_or_else(Utc::now);
        let time_limit =
            chrono::TimeDelta::from_std(self.settings.time_limit).unwrap_or(chrono::TimeDelta::MAX);
        let out_of_time = || {
            (Utc::now() - first_start > time_limit).then(|| {
                End::Failed(format!(
                    "the job ran past its time limit of {} minutes (over {} attempts) and was stopped",
                    self.settings.time_limit.as_secs() / 60,
                    job.attempts
                ))
            })
        };
        if let Some(end) = out_of_time() {
            self.end(id, end).await?;
            return Ok(());
        }
        if job.job_type == JobType::GenerateImage {
            return self.generate(job).await;
        }
        tracing::info!(job.id = %id, job.r#type = job.job_type.as_str(), attempt = job.attempts, "running");
        let started = tokio::time::Instant::now();
        let (steward, start) =
            Steward::prepare(self.db.clone(), self.storage.clone(), job.clone(), &self.settings).await?;
        let mut child = self.start_child(&start).await?;
        let (Some(to_child), Some(from_child)) = (child.stdin.take(), child.stdout.take()) else {
            anyhow::bail!("the job process's pipes were taken");
        };
        let steward = tokio::spawn(steward.serve(to_child, from_child));
        // Checking often keeps a cancel quick; the heartbeat itself is one small UPDATE.
        let period = self.settings.queue.heartbeat.min(Duration::from_secs(1));
        let mut tick = tokio::time::interval(period);
        let mut minutes_checked: Option<tokio::time::Instant> = None;
        let status = loop {
            tokio::select! {
                status = child.wait() => break status?,
                _ = tick.tick() => {
                    let verdict = match jobs::heartbeat(&self.db, id, &self.name).await {
                        Ok(Some(true)) => Some(End::Stopped),
                        Ok(Some(false)) => None,
                        // No longer running as ours. Ended: at its own process's request, which
                        // is only left to exit, so let it. Otherwise another worker claimed it:
                        // stop working on it.
                        Ok(None) => match jobs::find(&self.db, id).await? {
                            Some(job) if job.state.has_ended() => break last_words(&mut child).await?,
                            _ => {
                                kill(&mut child).await;
                                self.announce(steward).await;
                                return Ok(());
                            }
                        },
                        Err(e) => { tracing::warn!(job.id = %id, "heartbeat failed: {e}"); None }
                    };
                    let verdict = match verdict.or_else(&out_of_time).or_else(|| self.over_disk(id)) {
                        Some(end) => Some(end),
                        // The month's minutes, once a heartbeat: a job stops, keeping what it
                        // made, when its account's run out (its own time counts as it runs).
                        None if job.job_type != JobType::ReadMetadata
                            // Half a tick's slack: a tick a hair early must not put the
                            // check off by a whole tick.
                            && minutes_checked.is_none_or(|at| at.elapsed() + period / 2 >= self.settings.queue.heartbeat) =>
                        {
                            minutes_checked = Some(tokio::time::Instant::now());
                            self.minutes_ran_out(job.user_id).await.then_some(End::Stopped)
                        }
                        None => None,
                    };
                    if let Some(end) = verdict {
                        kill(&mut child).await;
                        self.announce(steward).await;
                        self.clean_up(id);
                        self.end(id, end).await?;
                        return Ok(());
                    }
                }
            }
        };
        tracing::info!(job.id = %id, %status, process_ms = started.elapsed().as_millis() as u64, "job process exited");
        self.announce(steward).await;
        self.clean_up(id);
        let job = jobs::find(&self.db, id).await?.context("the job row vanished")?;
        if job.state.has_ended() {
            return Ok(());
        }
        if status.code() == Some(EXIT_RETRY) && job.attempts < MAX_ATTEMPTS {
            // A server-side failure (the store or the database): the job's results so far are
            // reused, never duplicated.
            return self.retry_later(&job).await;
        }
        self.end(id, End::Failed(describe(status))).await
    }

    /// A job that failed on this side (the store or the database did not answer) runs again
    /// after 2, then 4 seconds: released so that no message claims it sooner (one pushed twice
    /// would otherwise spend its attempts at once), then pushed.
    async fn retry_later(&self, job: &JobRow) -> Result<()> {
        let wait = Duration::from_secs(2u64.pow(job.attempts as u32));
        jobs::release(&self.db, job.id, wait).await?;
        tokio::time::sleep(wait).await;
        jobs::push(&self.db, &self.queue, job.id).await?;
        Ok(())
    }

    /// Works a generateImage job in this process ([`crate::generation`]), renewing its
    /// heartbeat meanwhile; a failure of this machine's is retried like a job process's.
    async fn generate(&self, job: JobRow) -> Result<()> {
        let id = job.id;
        tracing::info!(job.id = %id, attempt = job.attempts, "generating an image");
        let generation = Generation {
            db: &self.db,
            storage: &self.storage,
            generators: &self.settings.generators,
            quotas: &self.settings.quotas,
        };
        let work = generation.work(&job);
        tokio::pin!(work);
        let mut tick = tokio::time::interval(self.settings.queue.heartbeat.min(Duration::from_secs(1)));
        let outcome = loop {
            tokio::select! {
                outcome = &mut work => break outcome,
                _ = tick.tick() => match jobs::heartbeat(&self.db, id, &self.name).await {
                    // Another worker took it over: this one stops.
                    Ok(None) => return Ok(()),
                    // A caller cannot stop a generation; nothing else asks.
                    Ok(Some(_)) => {}
                    Err(e) => tracing::warn!(job.id = %id, "heartbeat failed: {e}"),
                },
            }
        };
        match outcome {
            Ok(reading) => {
                self.end(id, End::Done(serde_json::json!({}))).await?;
                if let Some(reading) = reading
                    && let Err(cause) = jobs::push(&self.db, &self.queue, reading).await
                {
                    tracing::warn!(%cause, "a reading recorded but not queued; the re-push loop will push it");
                }
                Ok(())
            }
            Err(Failure::Generation(why)) => self.end(id, End::Failed(why)).await,
            Err(Failure::Server(why)) if job.attempts < MAX_ATTEMPTS => {
                tracing::warn!(job.id = %id, "generating failed on this side, to be tried again: {why}");
                self.retry_later(&job).await
            }
            Err(Failure::Server(why)) => {
                self.end(
                    id,
                    End::Failed(format!("the drive failed to save the image: {why}")),
                )
                .await
            }
        }
    }

    /// This worker's `/metrics` page.
    pub async fn metrics_text(&self) -> Result<String, sqlx::Error> {
        let queued: i64 = sqlx::query_scalar("select count(*) from file_jobs where state = 'queued'")
            .fetch_one(&self.db)
            .await?;
        // The queue's depth is left out while Redis does not answer: the rest still tells.
        let messages = self.queue.depth().await.ok();
        Ok(self.metrics.render(queued, messages))
    }

    /// The process that runs the job: the spare, or a new one when there is none or it died.
    async fn start_child(&self, start: &Start) -> Result<Child> {
        let id = start.job.id;
        let spare = self.spare.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(mut child) = spare {
            match hand_over(&mut child, start).await {
                Ok(()) => return Ok(child),
                Err(e) => tracing::warn!(job.id = %id, "the spare job process was gone ({e}); starting one"),
            }
        }
        let mut child = self.spawn_child()?;
        // Should the job not go through, the process has ended: its exit status says why.
        let _ = hand_over(&mut child, start).await;
        Ok(child)
    }

    /// Waits for the steward of a job whose process has exited or been killed, and pushes the
    /// readings of the files the job made. They are queued in the database already: a push
    /// lost here is made again by the re-push loop.
    async fn announce(&self, steward: JoinHandle<Vec<JobId>>) {
        let readings = steward.await.unwrap_or_default();
        for id in readings {
            if let Err(cause) = jobs::push(&self.db, &self.queue, id).await {
                tracing::warn!(%cause, "a reading recorded but not queued; the re-push loop will push it");
            }
        }
    }

    /// Starts a spare job process unless a live one is waiting.
    fn refill_spare(&self) {
        let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
        if spare
            .as_mut()
            .is_some_and(|child| matches!(child.try_wait(), Ok(None)))
        {
            return;
        }
        *spare = self
            .spawn_child()
            .inspect_err(|e| tracing::warn!("starting a spare job process failed: {e:#}"))
            .ok();
    }

    fn spawn_child(&self) -> Result<Child> {
        let mut command = Command::new(std::env::current_exe()?);
        command
            .arg("run-job")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            // Nothing of this process's environment: no database URL, no store keys, no
            // Redis URL, no DRIVE_SECRET. Only where programs are and how much to log (it
            // points TMPDIR at its job's folder itself).
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin");
        if let Ok(filter) = std::env::var("DRIVE_LOG") {
            command.env("DRIVE_LOG", filter);
        }
        let memory_limit = self.settings.memory_limit;
        let disk_limit = self.settings.disk_limit;
        let filter = drive_confine::filter();
        // SAFETY: between fork and exec only async-signal-safe calls (prctl, setrlimit).
        unsafe {
            command.pre_exec(move || {
                // The job dies with its supervisor: a killed worker leaves no job running
                // unwatched (another worker picks the job up again).
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                for (resource, limit) in [(libc::RLIMIT_AS, memory_limit), (libc::RLIMIT_FSIZE, disk_limit)] {
                    let limit = libc::rlimit {
                        rlim_cur: limit,
                        rlim_max: limit,
                    };
                    libc::setrlimit(resource, &limit);
                }
                drive_confine::narrow(&filter)
            });
        }
        command.spawn().context("starting the job's process")
    }

    /// A failure when job `id`'s work folder holds more than the disk limit.
    fn over_disk(&self, id: JobId) -> Option<End> {
        let used = folder_size(&self.settings.work_dir.join(id.to_string()));
        (used > self.settings.disk_limit).then(|| {
            End::Failed(format!(
                "the job wrote more than {} to its work folder and was stopped",
                drive_core::job::decimal_size(self.settings.disk_limit as i64)
            ))
        })
    }

    /// Whether the account has used up this month's job minutes (a database error answers
    /// no: the next heartbeat asks again).
    async fn minutes_ran_out(&self, user_id: UserId) -> bool {
        let checked = async {
            let plan = users::plan_of(&self.db, user_id).await?;
            let used = jobs::seconds_this_month(&self.db, user_id).await?;
            Ok::<_, sqlx::Error>(used >= plan.map_or(0.0, |p| self.settings.job_minutes.for_plan(p)) * 60.0)
        };
        checked
            .await
            .inspect_err(|e| tracing::warn!("checking job minutes failed: {e}"))
            .unwrap_or(false)
    }

    fn clean_up(&self, id: JobId) {
        let dir = self.settings.work_dir.join(id.to_string());
        if let Err(e) = std::fs::remove_dir_all(&dir)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(job.id = %id, "removing {}: {e}", dir.display());
        }
    }

    pub(crate) async fn end(&self, id: JobId, end: End) -> Result<()> {
        tracing::info!(job.id = %id, ?end, "ended");
        jobs::finish(&self.db, &self.storage, id, end).await?;
        Ok(())
    }
}

/// Writes the job's start to a job process's stdin, where its answers follow.
async fn hand_over(child: &mut Child, start: &Start) -> std::io::Result<()> {
    let stdin = child
        .stdin
        .as_mut()
        .ok_or_else(|| std::io::Error::other("its stdin was taken"))?;
    let mut line = serde_json::to_string(start).map_err(std::io::Error::other)?;
    line.push('\n');
    stdin.write_all(line.as_bytes()).await?;
    stdin.flush().await
}

async fn kill(child: &mut Child) {
    let _ = child.kill().await;
}

/// How long a job's process may take to exit once it has ended its job.
const LAST_WORDS: Duration = Duration::from_secs(10);

/// Waits for a process that has ended its job to exit, and kills it past [`LAST_WORDS`].
async fn last_words(child: &mut Child) -> std::io::Result<ExitStatus> {
    match tokio::time::timeout(LAST_WORDS, child.wait()).await {
        Ok(status) => status,
        Err(_) => {
            kill(child).await;
            child.wait().await
        }
    }
}

/// Why a job's process ended without ending the job, in words for the job's `error`.
fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (_, Some(libc::SIGKILL)) => "the job's process was killed (out of memory?)".to_string(),
        (_, Some(libc::SIGXFSZ)) => "the job wrote a file larger than its disk limit".to_string(),
        (_, Some(libc::SIGABRT)) => {
            "the job's process aborted (it may have run out of its memory limit)".to_string()
        }
        (_, Some(signal)) => format!("the job's process crashed (signal {signal})"),
        (Some(EXIT_RETRY), _) => "the job failed on the server side too many times".to_string(),
        (code, _) => format!("the job's process failed (exit code {code:?})"),
    }
}

/// Bytes in the files below `dir` (0 when it does not exist).
fn folder_size(dir: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => folder_size(&entry.path()),
            _ => entry.metadata().map_or(0, |m| m.len()),
        })
        .sum()
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "worker".to_string())
}
