//! What every worker runs beside its jobs: one loop puts back in the queue the jobs whose worker
//! died (their heartbeat stopped), the metadata readings deferred by the per-account cap and
//! the folder rules' jobs that waited for room, one runs the scheduled sweep.

use std::sync::Arc;

use anyhow::Result;
use chrono::Utc;
use drive_core::db::jobs::{self, End};
use drive_core::db::rules;
use drive_core::maintenance;

use crate::supervisor::settings::{MAX_ATTEMPTS, given_up};
use crate::supervisor::shared::Shared;

/// Every stale interval: fails the jobs of dead workers that have been tried too often and
/// queues the others again. Every worker runs this; each update is conditional, so two
/// workers doing it at once do it once.
pub async fn requeue_loop(shared: Arc<Shared>) {
    let stale = shared.settings.stale_after();
    let mut tick = tokio::time::interval(stale);
    loop {
        tick.tick().await;
        if let Err(e) = requeue(&shared, stale.as_secs_f64()).await {
            tracing::warn!("queueing the jobs of stopped workers again failed: {e:#}");
        }
    }
}

async fn requeue(shared: &Shared, stale: f64) -> Result<()> {
    for job in jobs::stale_given_up(&shared.db, stale, MAX_ATTEMPTS).await? {
        if let Err(cause) = shared.end(job.id, End::Failed(given_up(job.attempts))).await {
            tracing::warn!(job.id = %job.id, "failing a job given up on failed; the next round tries again: {cause:#}");
        }
    }
    let requeued = jobs::requeue_stale(&shared.db, stale, MAX_ATTEMPTS).await?;
    for id in &requeued {
        tracing::info!(job.id = %id, "queued again: its worker stopped");
    }
    if !requeued.is_empty() {
        shared.doorbell.ring().await;
    }
    queue_deferred_readings(shared).await;
    queue_waiting_rule_jobs(shared).await;
    Ok(())
}

/// Queues the metadata readings deferred while their accounts had too many waiting.
pub async fn queue_deferred_readings(shared: &Shared) {
    match jobs::queue_deferred_readings(&shared.db).await {
        Ok(0) => {}
        Ok(n) => {
            tracing::info!(readings = n, "queued deferred metadata readings");
            shared.doorbell.ring().await;
        }
        Err(e) => tracing::warn!("queueing deferred metadata readings failed: {e}"),
    }
}

/// Starts the jobs of folder rules' hits that waited for room in the queue.
pub async fn queue_waiting_rule_jobs(shared: &Shared) {
    match rules::queue_waiting(&shared.db).await {
        Ok(0) => {}
        Ok(n) => {
            tracing::info!(jobs = n, "started folder rules' waiting jobs");
            shared.doorbell.ring().await;
        }
        Err(e) => tracing::warn!("starting folder rules' waiting jobs failed: {e}"),
    }
}

/// The scheduled maintenance ([`maintenance::sweep`]). Idempotent, so every worker may run it.
pub async fn sweep_loop(shared: Arc<Shared>) {
    let mut tick = tokio::time::interval(shared.settings.sweep_every);
    loop {
        tick.tick().await;
        let swept = maintenance::sweep(
            &shared.db,
            &shared.storage,
            shared.settings.upload_idle,
            shared.settings.image_grace,
            Utc::now(),
        )
        .await;
        tracing::info!(?swept, "swept");
    }
}
