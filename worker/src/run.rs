//! The child side: `drive-worker run-job` readies what a job needs (its settings and a database
//! connection), then reads the id of the job its supervisor claimed from stdin,
//! runs it, ends it done or failed, and exits. A server-side failure exits with
//! [`EXIT_RETRY`] instead, and the supervisor decides whether to try again. Because the
//! readying comes before the id, the supervisor keeps one such process started ahead: a job
//! starts without paying for a process start, its settings or a connection.

use std::process::ExitCode;
use std::time::Instant;

use drive_core::db::jobs::{self, End, JobState};
use drive_core::db::{self, PgPool};
use drive_core::job::JobSpec;
use drive_core::queue::JobQueue;
use drive_core::storage::Storage;
use tokio::io::AsyncBufReadExt;
use uuid::Uuid;

use crate::context::{JobContext, JobError};
use crate::settings::Settings;
use crate::{archive, av, checksum, metadata, pdfs, pictures};

/// The exit code that asks the supervisor to run the job again (sysexits' EX_TEMPFAIL).
pub const EXIT_RETRY: i32 = 75;

pub async fn run_job() -> ExitCode {
    let ready = async {
        let settings = Settings::from_environment().map_err(|e| JobError::Server(e.to_string()))?;
        let db = db::connect(&settings.database_url).await?;
        Ok::<_, JobError>((settings, db))
    };
    let (settings, db) = match ready.await {
        Ok(ready) => ready,
        Err(e) => {
            tracing::error!("a job process could not get ready: {e}");
            return ExitCode::from(EXIT_RETRY as u8);
        }
    };
    let Some(id) = job_id().await else {
        // The supervisor stopped before handing this process a job.
        return ExitCode::SUCCESS;
    };
    match run(id, &settings, db).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(job.id = %id, "the job hit a server-side failure: {e}");
            ExitCode::from(EXIT_RETRY as u8)
        }
    }
}

/// The job id the supervisor writes on stdin; `None` when stdin closes without one.
async fn job_id() -> Option<Uuid> {
    let mut line = String::new();
    tokio::io::BufReader::new(tokio::io::stdin())
        .read_line(&mut line)
        .await
        .ok()?;
    line.trim().parse().ok()
}

async fn run(id: Uuid, settings: &Settings, db: PgPool) -> Result<(), JobError> {
    let started = Instant::now();
    let storage = Storage::new(settings.storage.clone());
    let Some(job) = jobs::find(&db, id).await? else {
        return Ok(());
    };
    if job.state() != JobState::Running {
        return Ok(());
    }
    let spec = job
        .spec()
        .map_err(|e| JobError::Server(format!("the job's settings do not read back: {e}")))?;
    let context = JobContext::new(db.clone(), storage.clone(), job, settings).await?;
    let ready = started.elapsed();
    let outcome = perform(&context, &spec).await;
    let worked = started.elapsed();
    let _ = std::fs::remove_dir_all(&context.dir);
    let end = match outcome {
        Ok(result) => End::Done(result),
        Err(JobError::Input(why)) => End::Failed(why),
        Err(server) => return Err(server),
    };
    jobs::finish(&db, &storage, id, end).await?;
    // Where a job's time went, for whoever tunes the farm: its own setup (the row, the plan,
    // the work folder), the pipeline with its reads and saves, and the end's transaction.
    tracing::info!(
        job.id = %id,
        setup_ms = ready.as_millis() as u64,
        work_ms = (worked - ready).as_millis() as u64,
        end_ms = (started.elapsed() - worked).as_millis() as u64,
        "ended"
    );
    announce(settings, context.take_readings()).await;
    Ok(())
}

/// Pushes the readings of the files a job made. They are queued in the database already: a
/// push lost here is made again by the farm's re-push loop.
async fn announce(settings: &Settings, readings: Vec<Uuid>) {
    if readings.is_empty() {
        return;
    }
    let pushed = async {
        let queue = JobQueue::connect(&settings.queue).await?;
        for id in readings {
            queue.push(id).await?;
        }
        Ok::<(), drive_core::queue::QueueError>(())
    };
    if let Err(cause) = pushed.await {
        tracing::warn!(%cause, "readings recorded but not queued; the farm will re-push them");
    }
}

/// Runs the job's pipeline; answers its `result`.
async fn perform(context: &JobContext, spec: &JobSpec) -> Result<serde_json::Value, JobError> {
    match spec {
        JobSpec::Checksum(settings) => checksum::run(context, settings).await,
        JobSpec::ReadMetadata(_) => metadata::read(context).await,
        JobSpec::Zip(settings) => archive::zip(context, settings).await,
        JobSpec::Unzip(_) => archive::unzip(context).await,
        JobSpec::Cut(settings) => av::cut(context, settings).await,
        JobSpec::Proxy(settings) => av::proxy(context, settings).await,
        JobSpec::Shrink(settings) => av::shrink(context, settings).await,
        JobSpec::Reframe(settings) => av::reframe(context, settings).await,
        JobSpec::Gif(settings) => av::gif(context, settings).await,
        JobSpec::BurnIn(settings) => av::burn_in(context, settings).await,
        JobSpec::Join(settings) => av::join(context, settings).await,
        JobSpec::Stills(settings) => av::stills(context, settings).await,
        JobSpec::ContactSheet(settings) => av::contact_sheet(context, settings).await,
        JobSpec::ExtractAudio(settings) => av::extract_audio(context, settings).await,
        JobSpec::Loudness(settings) => av::loudness(context, settings).await,
        JobSpec::Split(settings) => av::split(context, settings).await,
        JobSpec::Convert(settings) if settings.format.picture().is_none() => {
            av::convert(context, settings).await
        }
        JobSpec::Convert(settings) => pictures::convert(context, settings).await,
        JobSpec::Watermark(settings) => pictures::watermark(context, settings).await,
        JobSpec::StripMetadata(_) => av::strip_metadata(context).await,
        JobSpec::MakePdf(settings) => pdfs::make(context, settings).await,
        JobSpec::MergePdf(settings) => pdfs::merge(context, settings).await,
        JobSpec::SplitPdf(settings) => pdfs::split(context, settings).await,
        JobSpec::ExtractPages(settings) => pdfs::extract_pages(context, settings).await,
        JobSpec::CompressPdf(settings) => pdfs::compress(context, settings).await,
        JobSpec::PdfToImages(settings) => pdfs::to_images(context, settings).await,
    }
}
