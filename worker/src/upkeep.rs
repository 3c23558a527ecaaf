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

async fn repush(farm: &Farm, stale: Duration) -> Result<()> {
    let repush = farm.settings.repush_queued_after.as_secs_f64();
    let jobs = jobs::needing_a_push(&farm.db, stale.as_secs_f64(), repush).await?;
    for job in jobs {
        if job.attempts >= MAX_ATTEMPTS && job.state == jobs::JobState::Running {
            farm.end(job.id, End::Failed(given_up(job.attempts))).await?;
        } else {
            tracing::info!(job.id = %job.id, state = job.state.as_str(), "pushing the job again");
            jobs::push(&farm.db, &farm.queue, job.id).await?;
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
