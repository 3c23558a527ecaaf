//! What every worker runs beside the queue: one loop pushes again the jobs whose worker died (or
//! whose message Redis lost, or never took), one runs the scheduled sweep.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use chrono::Utc;
use drive_core::db::jobs::{self, End};
use drive_core::maintenance;

use crate::farm::Farm;
use crate::settings::{MAX_ATTEMPTS, given_up};

/// Pushes again the jobs a dead worker held and the queued jobs whose message may be lost;
/// fails the ones that have been tried too often. Every worker runs this; a claim makes the
/// duplicates harmless.
pub async fn repush_loop(farm: Arc<Farm>) {
    let stale = farm.settings.stale_after();
    let mut tick = tokio::time::interval(stale);
    loop {
        tick.tick().await;
        if let Err(e) = repush(&farm, stale).await {
            tracing::warn!("re-pushing jobs failed: {e:#}");
        }
    }
}

/// Each job on its own: `needing_a_push` has marked every one pushed now, so a job left out
/// after another's failure would wait the long re-push (`DRIVE_REPUSH_QUEUED_SECONDS`); a push
/// that fails marks its job for the next round itself (`jobs::push`).
async fn repush(farm: &Farm, stale: Duration) -> Result<()> {
    let repush = farm.settings.repush_queued_after.as_secs_f64();
    let jobs = jobs::needing_a_push(&farm.db, stale.as_secs_f64(), repush).await?;
    for job in jobs {
        let done = if job.attempts >= MAX_ATTEMPTS && job.state == jobs::JobState::Running {
            farm.end(job.id, End::Failed(given_up(job.attempts))).await
        } else {
            tracing::info!(job.id = %job.id, state = job.state.as_str(), "pushing the job again");
            jobs::push(&farm.db, &farm.queue, job.id)
                .await
                .map_err(Into::into)
        };
        if let Err(cause) = done {
            tracing::warn!(job.id = %job.id, "re-pushing a job failed; the next round tries it again: {cause:#}");
        }
    }
    Ok(())
}

/// The scheduled maintenance ([`maintenance::sweep`]). Idempotent, so every worker may run it.
pub async fn sweep_loop(farm: Arc<Farm>) {
    let mut tick = tokio::time::interval(farm.settings.sweep_every);
    loop {
        tick.tick().await;
        let swept = maintenance::sweep(
            &farm.db,
            &farm.storage,
            farm.settings.upload_idle,
            farm.settings.image_grace,
            Utc::now(),
        )
        .await;
        tracing::info!(?swept, "swept");
    }
}
