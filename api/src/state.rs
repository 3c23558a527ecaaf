//! What every handler shares: the database pool, the object store and the settings.

use std::sync::Arc;

use axum::extract::FromRef;
use drive_core::ConfigError;
use drive_core::config;
use drive_core::db::PgPool;
use drive_core::generation::ImageAllowance;
use drive_core::multipart::UploadTokens;
use drive_core::plan::{JobMinutes, Quotas};
use drive_core::queue::Doorbell;
use drive_core::sealed::Sealer;
use drive_core::storage::Storage;

use drive_generate::Generators;

use crate::client::TrustedProxies;
use crate::follow::Follow;
use crate::limits::RateLimits;
use crate::metrics::Metrics;
use crate::moment_index::MomentIndex;
use crate::reader::Reader;

#[derive(Clone)]
pub struct AppState {
    pub db: PgPool,
    pub storage: Storage,
    pub doorbell: Doorbell,
    pub limits: RateLimits,
    /// Runs `drive-reader` processes for `/read-file`.
    pub reader: Arc<Reader>,
    pub settings: Arc<Settings>,
    /// The embedding model and the searched accounts' moments in memory, for `query`.
    pub moments: Arc<MomentIndex>,
    /// Wakes `/select-drive-events` callers waiting for their account's next event.
    pub follow: Arc<Follow>,
    /// Requests counted for `/metrics`.
    pub metrics: Arc<Metrics>,
}

pub struct Settings {
    /// The identifier every file-service call must carry in `X-Drive-App`.
    pub app_id: String,
    pub quotas: Quotas,
    pub job_minutes: JobMinutes,
    /// Pictures and PDFs one job may download, in bytes.
    pub job_download_limit: i64,
    pub upload_tokens: UploadTokens,
    /// Seals what the drive must use again (webhooks' signing secrets), under `DRIVE_SECRET`.
    pub sealer: Sealer,
    /// Multipart uploads one account may have open at once (`DRIVE_MAX_OPEN_UPLOADS`).
    pub max_open_uploads: i64,
    /// Bytes a file request's anonymous senders may hold announced and not yet sent, at once
    /// (`DRIVE_REQUEST_PENDING_BYTES`, default 10 GiB).
    pub request_pending_bytes: i64,
    /// Jobs one account may have waiting or running at once (`DRIVE_MAX_ACTIVE_JOBS`).
    pub max_active_jobs: i64,
    /// What `/import-from-url` may fetch beyond the public internet (`DRIVE_FETCH_ALLOW_HOSTS`:
    /// the tests' loopback servers; never in service).
    pub fetch_allowances: drive_fetch::Allowances,
    /// Images a month per plan (`DRIVE_IMAGES_*`).
    pub image_allowance: ImageAllowance,
    /// The newest client version this drive tells clients of (`DRIVE_CLIENT_VERSION`,
    /// default the version it was built as: clients of the same release).
    pub client_version: String,
    /// Which image models have a provider configured (the keys are read here only to know
    /// which; the worker calls the providers).
    pub generators: Generators,
    /// The proxies whose forwarded headers name the client (`DRIVE_TRUSTED_PROXIES`).
    pub trusted_proxies: TrustedProxies,
    /// How long a blocking `SendMessage` holds before it answers a task still working
    /// (`DRIVE_AGENT_ANSWER_WITHIN_SECONDS`, default 300).
    pub agent_answer_within: std::time::Duration,
    /// How many wrong guesses lock an account's sign-in, and for how long.
    pub guessing: drive_core::people::Guessing,
}

impl Settings {
    /// Reads `DRIVE_APP_ID` (default `drive`), `DRIVE_SECRET` (required, of 256 bits at least:
    /// signs upload tokens and seals webhook secrets; keep it stable across restarts and
    /// replicas) and the plan quotas.
    pub fn from_environment() -> Result<Settings, ConfigError> {
        let secret = config::secret()?;
        let fetch_allowances = drive_fetch::allowances_from_environment()
            .map_err(|why| config::invalid("DRIVE_FETCH_ROOT_CERT", why))?;
        Ok(Settings {
            app_id: config::or("DRIVE_APP_ID", "drive"),
            quotas: Quotas::from_environment()?,
            job_minutes: JobMinutes::from_environment()?,
            job_download_limit: drive_core::job::download_limit()?,
            upload_tokens: UploadTokens::new(&secret),
            sealer: Sealer::new(&secret),
            max_open_uploads: config::parsed_or("DRIVE_MAX_OPEN_UPLOADS", 100)?,
            request_pending_bytes: config::parsed_or("DRIVE_REQUEST_PENDING_BYTES", 10 << 30)?,
            max_active_jobs: config::parsed_or("DRIVE_MAX_ACTIVE_JOBS", 10)?,
            fetch_allowances: fetch_allowances.clone(),
            image_allowance: ImageAllowance::from_environment()?,
            client_version: config::or("DRIVE_CLIENT_VERSION", env!("CARGO_PKG_VERSION")),
            generators: Generators::from_environment(fetch_allowances)?,
            trusted_proxies: TrustedProxies::from_environment()?,
            agent_answer_within: std::time::Duration::from_secs(config::parsed_or(
                "DRIVE_AGENT_ANSWER_WITHIN_SECONDS",
                300,
            )?),
            guessing: drive_core::people::Guessing::from_environment()?,
        })
    }
}

// What the extractors and handlers that need one part of the state take from it, so that they
// need not know `AppState` (and its module need not be theirs).
impl FromRef<AppState> for PgPool {
    fn from_ref(state: &AppState) -> PgPool {
        state.db.clone()
    }
}

impl FromRef<AppState> for Arc<Metrics> {
    fn from_ref(state: &AppState) -> Arc<Metrics> {
        state.metrics.clone()
    }
}

impl FromRef<AppState> for TrustedProxies {
    fn from_ref(state: &AppState) -> TrustedProxies {
        state.settings.trusted_proxies.clone()
    }
}
