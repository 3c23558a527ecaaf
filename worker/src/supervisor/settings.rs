//! The worker's configuration, read from the environment (docs/configuration.md lists every
//! variable).

use crate::supervisor::vision::Vision;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use drive_core::config::{self, ConfigError};
use drive_core::db::jobs::Pool;
use drive_core::job::{JobType, Lane};
use drive_core::plan::{JobMinutes, Quotas};
use drive_core::queue::QueueConfig;
use drive_core::sealed::Sealer;
use drive_core::storage::{DEFAULT_SITE_URL, StorageConfig};
use drive_core::{job, multipart};
use drive_generate::Generators;

pub struct Settings {
    pub database_url: String,
    pub storage: StorageConfig,
    pub queue: QueueConfig,
    pub quotas: Quotas,
    /// Jobs this process runs at once (its slots).
    pub concurrency: usize,
    /// The lanes and job types this worker takes (`DRIVE_WORKER_LANES`,
    /// `DRIVE_WORKER_JOB_TYPES`; default every one): ops run a pool per kind of work.
    pub pool: Pool,
    /// Each lane's share of the picks (`DRIVE_LANE_WEIGHTS`, default `system=2,interactive=2,bulk=1`).
    pub lane_weights: BTreeMap<Lane, u32>,
    /// A job waiting longer than this goes before every lane's turn (`DRIVE_AGING_SECONDS`,
    /// default 300).
    pub aging: Duration,
    /// On SIGTERM, how long running jobs may finish before they are handed back
    /// (`DRIVE_DRAIN_SECONDS`, default 300).
    pub drain: Duration,
    /// The longest a running bulk job is held still so that a job of another lane runs in its
    /// slot (`DRIVE_BULK_PAUSE_SECONDS`, default 10; 0: never held).
    pub bulk_pause: Duration,
    /// A job running longer, counted from its first start across its attempts, is stopped as
    /// failed.
    pub time_limit: Duration,
    /// The address space a job's process may take; beyond it allocations fail and the job
    /// fails alone.
    pub memory_limit: u64,
    /// Pictures and PDFs one job may download, in bytes.
    pub download_limit: i64,
    /// What one job may write to its work folder, in all and in any one file, in bytes.
    pub disk_limit: u64,
    /// Monthly job minutes per plan: a running job is stopped when its account's run out.
    pub job_minutes: JobMinutes,
    /// Where jobs keep the inputs they download and the results they write.
    pub work_dir: PathBuf,
    /// How often the scheduled sweep (idle multipart uploads, queued object deletions) runs.
    pub sweep_every: Duration,
    /// Multipart uploads with no new part for this long are aborted by the sweep.
    pub upload_idle: chrono::TimeDelta,
    /// Generations that succeeded at their provider and have no image this long after are
    /// failed by the sweep.
    pub image_grace: chrono::TimeDelta,
    /// Where `/metrics` is served (`DRIVE_WORKER_METRICS_LISTEN`; unset: not served).
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Where the address `/metrics` is served on is written once bound
    /// (`DRIVE_WORKER_METRICS_ADDRESS_FILE`): with port 0, how a health check finds it.
    pub metrics_address_file: Option<std::path::PathBuf>,
    /// The image providers generateImage jobs call (their keys are credentials: only this
    /// process holds them).
    pub generators: Generators,
    /// The font watermarks are drawn with.
    pub font: PathBuf,
    /// The local models (`DRIVE_MODELS`): readForSearch jobs embed with the one in it.
    pub models: PathBuf,
    /// The provider readForSearch jobs have pictures and video scenes described by, if any.
    pub vision: Option<Vision>,
    /// What imports may fetch beyond the public internet (`DRIVE_FETCH_ALLOW_HOSTS`, tests only).
    pub fetch_allowances: drive_fetch::Allowances,
    /// Opens what the drive sealed (webhooks' signing secrets), under `DRIVE_SECRET`.
    pub sealer: Sealer,
    /// The agent's model (`DRIVE_AGENT_MODEL_URL`…; none: agent tasks fail saying so).
    pub agent_model: Option<crate::supervisor::agent_model::Model>,
    /// The drive client application's id (`DRIVE_APP_ID`), which an agent task's calls carry.
    pub app_id: String,
}

/// A job whose worker stopped this many times is failed rather than tried again.
pub const MAX_ATTEMPTS: i32 = 3;

/// Why a job interrupted `times` times is failed: found so by the requeue loop (its worker's
/// heartbeat stopped) or by the worker that claims it again after a server-side failure.
pub fn given_up(times: i32) -> String {
    format!("the job was interrupted {times} times (its worker stopped or the store failed); giving up")
}

impl Settings {
    /// Reads `DRIVE_DATABASE_URL`, the object store's and the queue's variables, the plan quotas,
    /// `DRIVE_WORKER_CONCURRENCY` (default: the number of CPUs), what the worker takes and in
    /// what order (`DRIVE_WORKER_LANES`, `DRIVE_WORKER_JOB_TYPES`, `DRIVE_LANE_WEIGHTS`,
    /// `DRIVE_AGING_SECONDS`), `DRIVE_DRAIN_SECONDS`, `DRIVE_MAX_QUEUED_READINGS`,
    /// `DRIVE_JOB_TIME_LIMIT_SECONDS`
    /// (default 7200), `DRIVE_JOB_MEMORY_LIMIT_BYTES` (default 8 GiB),
    /// `DRIVE_JOB_DOWNLOAD_LIMIT_BYTES` (default 2 GB), `DRIVE_JOB_DISK_LIMIT_BYTES` (default
    /// 50 GB), the plans' job minutes, `DRIVE_JOB_WORK_DIR`
    /// (default `$TMPDIR/drive-jobs`), `DRIVE_SWEEP_INTERVAL_SECONDS` (default 3600),
    /// `DRIVE_UPLOAD_IDLE_SECONDS` (default 7 days, the spec's),
    /// `DRIVE_GENERATION_IMAGE_GRACE_SECONDS` (default 900), the image providers' keys (see
    /// [`Generators::from_environment`]) and
    /// `DRIVE_FONT` (default DejaVu Sans from Debian's fonts-dejavu-core), `DRIVE_MODELS`
    /// (default `~/.cache/drive/models`) and the describing model's (see [`Vision`]).
    pub fn from_environment() -> Result<Settings, ConfigError> {
        let cpus = std::thread::available_parallelism().map_or(1, usize::from);
        let fetch_allowances = drive_fetch::allowances_from_environment()
            .map_err(|why| config::invalid("DRIVE_FETCH_ROOT_CERT", why))?;
        // Read here so that a bad cap refuses the start (the queries read it again).
        drive_core::db::jobs::reading_cap()?;
        Ok(Settings {
            sealer: Sealer::new(&config::secret()?),
            agent_model: crate::supervisor::agent_model::Model::from_environment()?,
            app_id: config::or("DRIVE_APP_ID", "drive"),
            database_url: config::database_url()?,
            storage: StorageConfig::from_environment(DEFAULT_SITE_URL)?,
            queue: QueueConfig::from_environment()?,
            quotas: Quotas::from_environment()?,
            concurrency: config::parsed_or("DRIVE_WORKER_CONCURRENCY", cpus)?.max(1),
            pool: Pool {
                lanes: listed("DRIVE_WORKER_LANES", Lane::parse)?.unwrap_or_else(|| Lane::ALL.to_vec()),
                job_types: listed("DRIVE_WORKER_JOB_TYPES", JobType::parse)?,
            },
            lane_weights: lane_weights()?,
            aging: seconds("DRIVE_AGING_SECONDS", 300.0)?,
            drain: seconds("DRIVE_DRAIN_SECONDS", 300.0)?,
            bulk_pause: seconds("DRIVE_BULK_PAUSE_SECONDS", 10.0)?,
            time_limit: Duration::from_secs_f64(config::parsed_or(
                "DRIVE_JOB_TIME_LIMIT_SECONDS",
                job::TIME_LIMIT_SECONDS as f64,
            )?),
            memory_limit: config::parsed_or("DRIVE_JOB_MEMORY_LIMIT_BYTES", 8u64 << 30)?,
            download_limit: job::download_limit()?,
            disk_limit: config::parsed_or("DRIVE_JOB_DISK_LIMIT_BYTES", 50_000_000_000u64)?,
            job_minutes: JobMinutes::from_environment()?,
            work_dir: config::or(
                "DRIVE_JOB_WORK_DIR",
                &std::env::temp_dir().join("drive-jobs").to_string_lossy(),
            )
            .into(),
            sweep_every: Duration::from_secs_f64(config::parsed_or("DRIVE_SWEEP_INTERVAL_SECONDS", 3600.0)?),
            upload_idle: chrono::TimeDelta::seconds(config::parsed_or(
                "DRIVE_UPLOAD_IDLE_SECONDS",
                multipart::UPLOAD_LIFETIME.num_seconds(),
            )?),
            image_grace: chrono::TimeDelta::from_std(drive_core::generation::image_grace()?)
                .unwrap_or(chrono::TimeDelta::MAX),
            generators: Generators::from_environment(fetch_allowances.clone())?,
            metrics_listen: config::parsed_optional("DRIVE_WORKER_METRICS_LISTEN")?,
            metrics_address_file: std::env::var_os("DRIVE_WORKER_METRICS_ADDRESS_FILE")
                .filter(|path| !path.is_empty())
                .map(Into::into),
            font: config::or("DRIVE_FONT", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf").into(),
            models: config::models(),
            vision: Vision::from_environment()?,
            fetch_allowances,
        })
    }

    /// How often a held job's heartbeat is renewed and its stop looked for: every heartbeat,
    /// but at least every second, so that a cancel is quick (the heartbeat is one small UPDATE).
    pub fn beat_every(&self) -> Duration {
        self.queue.heartbeat.min(Duration::from_secs(1))
    }

    /// A running job whose heartbeat is older than this lost its worker.
    pub fn stale_after(&self) -> Duration {
        self.queue.heartbeat * self.queue.missed_heartbeats as u32
    }
}

/// A duration in seconds from variable `name`, `default` when unset.
fn seconds(name: &'static str, default: f64) -> Result<Duration, ConfigError> {
    let seconds: f64 = config::parsed_or(name, default)?;
    Duration::try_from_secs_f64(seconds)
        .map_err(|_| config::invalid(name, format!("{seconds} is not a number of seconds")))
}

/// The comma-separated names in variable `name`, each read by `parse`; `None` when unset.
fn listed<T: PartialEq>(
    name: &'static str,
    parse: fn(&str) -> Option<T>,
) -> Result<Option<Vec<T>>, ConfigError> {
    let Some(value) = std::env::var(name).ok().filter(|v| !v.trim().is_empty()) else {
        return Ok(None);
    };
    let mut items = Vec::new();
    for item in value.split(',').map(str::trim) {
        let parsed = parse(item).ok_or_else(|| config::invalid(name, format!("{item:?} is not one")))?;
        if !items.contains(&parsed) {
            items.push(parsed);
        }
    }
    Ok(Some(items))
}

/// `DRIVE_LANE_WEIGHTS`: `lane=weight` pairs, weights 1 to 100; a lane left out keeps its default.
fn lane_weights() -> Result<BTreeMap<Lane, u32>, ConfigError> {
    const NAME: &str = "DRIVE_LANE_WEIGHTS";
    let mut weights = BTreeMap::from([(Lane::System, 2), (Lane::Interactive, 2), (Lane::Bulk, 1)]);
    let value = config::or(NAME, "");
    for pair in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let parsed = pair.split_once('=').and_then(|(lane, weight)| {
            Some((
                Lane::parse(lane.trim())?,
                weight
                    .trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|w| (1..=100).contains(w))?,
            ))
        });
        let (lane, weight) = parsed.ok_or_else(|| {
            config::invalid(
                NAME,
                format!("{pair:?} is not lane=weight, a weight from 1 to 100"),
            )
        })?;
        weights.insert(lane, weight);
    }
    Ok(weights)
}
