//! What every handler shares: the database pool, the object store and the settings.

use std::sync::Arc;

use drive_core::ConfigError;
use drive_core::config;
use drive_core::db::PgPool;
use drive_core::multipart::UploadTokens;
use drive_core::plan::{JobMinutes, Quotas};
use drive_core::queue::JobQueue;
use drive_core::storage::Storage;

#[derive(Clone)]
pub struct AppState {
    pub db: PgPool,
    pub storage: Storage,
    pub queue: JobQueue,
    pub settings: Arc<Settings>,
}

pub struct Settings {
    /// The identifier every file-service call must carry in `X-Drive-App`.
    pub app_id: String,
    pub quotas: Quotas,
    pub job_minutes: JobMinutes,
    /// Pictures and PDFs one job may download, in bytes.
    pub job_download_limit: i64,
    pub upload_tokens: UploadTokens,
}

impl Settings {
    /// Reads `DRIVE_APP_ID` (default `drive`), `DRIVE_SECRET` (required: signs upload
    /// tokens; keep it stable across restarts and replicas) and the plan quotas.
    pub fn from_environment() -> Result<Settings, ConfigError> {
        Ok(Settings {
            app_id: config::or("DRIVE_APP_ID", "drive"),
            quotas: Quotas::from_environment()?,
            job_minutes: JobMinutes::from_environment()?,
            job_download_limit: drive_core::job::download_limit()?,
            upload_tokens: UploadTokens::new(&config::required("DRIVE_SECRET")?),
        })
    }
}
