//! What a worker's parts share: its database, store, doorbell, settings, metrics and local
//! models. The job farm ([`crate::supervisor::farm`]) and the loops beside it (the upkeep, the
//! webhook deliverer, the agent's tasks, the metrics page) each take this, not one another.

use std::sync::Arc;

use anyhow::Result;
use drive_core::db::PgPool;
use drive_core::db::jobs::End;
use drive_core::id::JobId;
use drive_core::job_end;
use drive_core::queue::Doorbell;
use drive_core::storage::Storage;

use crate::supervisor::local_models::LocalModels;
use crate::supervisor::metrics::WorkerMetrics;
use crate::supervisor::settings::Settings;

pub struct Shared {
    pub db: PgPool,
    pub storage: Storage,
    pub doorbell: Doorbell,
    pub settings: Settings,
    /// What this worker ran, for its `/metrics`.
    pub metrics: Arc<WorkerMetrics>,
    /// Whisper and the embedding model, loaded once for all the worker's readForSearch jobs.
    pub models: Arc<LocalModels>,
}

impl Shared {
    /// Ends job `id` as `end` says (its row, its files' records, its event).
    pub async fn end(&self, id: JobId, end: End) -> Result<()> {
        tracing::info!(job.id = %id, ?end, "ended");
        job_end::finish(&self.db, &self.storage, id, end).await?;
        Ok(())
    }
}
