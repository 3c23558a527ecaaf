//! The child side: `drive-worker run-job`, the process that parses uploaded bytes. It is
//! started with an empty environment and no new privileges, and holds no credential: it
//! waits for the job its supervisor claimed (the row, its inputs with presigned URLs, a work
//! folder) on stdin, runs it, and asks the supervisor for everything that needs a key
//! ([`crate::protocol`]): saving results, folders, progress, the end. A server-side failure
//! exits with [`EXIT_RETRY`] instead of ending the job, and the supervisor decides whether to
//! try again. Because it waits before it is given anything, the supervisor keeps one such
//! process started ahead: a job starts without paying for a process start.

use std::process::ExitCode;
use std::time::Instant;

use drive_domain::job::JobSpec;

use crate::job_process::context::{JobContext, Supervisor};
use crate::job_process::{archive, av, checksum, imports, metadata, pdfs, pictures, reading};
use crate::protocol::{EXIT_RETRY, JobError};

pub fn run_job() -> ExitCode {
    let supervisor = match Supervisor::attach() {
        Ok(supervisor) => supervisor,
        Err(e) => {
            tracing::error!("a job process could not take its pipes: {e}");
            return ExitCode::from(EXIT_RETRY as u8);
        }
    };
    let Some(start) = supervisor.start() else {
        // The supervisor stopped before handing this process a job.
        return ExitCode::SUCCESS;
    };
    // Before any thread starts (the store's HTTP client starts one), so that every thread is
    // bound by it.
    match drive_confine::restrict(&start.dir, &[&start.font], &start.ports) {
        Ok(restricted) => {
            if let Some(missing) = restricted.missing() {
                tracing::warn!("this kernel leaves the job process unconfined in part: {missing}");
            }
        }
        Err(e) => {
            tracing::error!("a job process could not restrict itself: {e}");
            return ExitCode::from(EXIT_RETRY as u8);
        }
    }
    // SAFETY: no other thread runs yet. What a library writes to temporary files lands in
    // the job's own folder, the only one it may write to.
    unsafe { std::env::set_var("TMPDIR", &start.dir) };
    let context = JobContext::new(supervisor, start);
    let id = context.job.id;
    match run(&context) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(job.id = %id, "the job hit a server-side failure: {e}");
            ExitCode::from(EXIT_RETRY as u8)
        }
    }
}

fn run(context: &JobContext) -> Result<(), JobError> {
    let started = Instant::now();
    let spec = context
        .job
        .spec()
        .map_err(|e| JobError::Server(format!("the job's settings do not read back: {e}")))?;
    let outcome = match spec {
        // Its readings end together, each with what it read (crate::job_process::metadata).
        JobSpec::ReadMetadata(_) => metadata::read(context).map(|()| None),
        spec => perform(context, &spec).map(Some),
    };
    let worked = started.elapsed();
    let _ = std::fs::remove_dir_all(&context.dir);
    match outcome {
        Ok(None) => {}
        Ok(Some(result)) => context.end(Ok(result))?,
        Err(JobError::Input(why)) => context.end(Err(why))?,
        Err(server) => return Err(server),
    }
    // Where a job's time went, for whoever tunes the farm: the pipeline with its reads and
    // saves, and the end's transaction.
    tracing::info!(
        job.id = %context.job.id,
        work_ms = worked.as_millis() as u64,
        end_ms = (started.elapsed() - worked).as_millis() as u64,
        "ended"
    );
    Ok(())
}

/// Runs the job's pipeline; answers its `result`.
fn perform(context: &JobContext, spec: &JobSpec) -> Result<serde_json::Value, JobError> {
    match spec {
        JobSpec::Checksum(settings) => checksum::run(context, settings),
        JobSpec::ReadMetadata(_) => Err(JobError::Server("readMetadata is read and ended in `run`".into())),
        JobSpec::Zip(settings) => archive::zip(context, settings),
        JobSpec::Unzip(_) => archive::unzip(context),
        JobSpec::Cut(settings) => av::cut(context, settings),
        JobSpec::Proxy(settings) => av::proxy(context, settings),
        JobSpec::Shrink(settings) => av::shrink(context, settings),
        JobSpec::Reframe(settings) => av::reframe(context, settings),
        JobSpec::Gif(settings) => av::gif(context, settings),
        JobSpec::BurnIn(settings) => av::burn_in(context, settings),
        JobSpec::Join(settings) => av::join(context, settings),
        JobSpec::Stills(settings) => av::stills(context, settings),
        JobSpec::ContactSheet(settings) => av::contact_sheet(context, settings),
        JobSpec::ExtractAudio(settings) => av::extract_audio(context, settings),
        JobSpec::Loudness(settings) => av::loudness(context, settings),
        JobSpec::Split(settings) => av::split(context, settings),
        JobSpec::Convert(settings) if settings.format.picture().is_none() => av::convert(context, settings),
        JobSpec::Convert(settings) => pictures::convert(context, settings),
        JobSpec::Watermark(settings) => pictures::watermark(context, settings),
        JobSpec::StripMetadata(_) => av::strip_metadata(context),
        JobSpec::MakePdf(settings) => pdfs::make(context, settings),
        JobSpec::MergePdf(settings) => pdfs::merge(context, settings),
        JobSpec::SplitPdf(settings) => pdfs::split(context, settings),
        JobSpec::ExtractPages(settings) => pdfs::extract_pages(context, settings),
        JobSpec::CompressPdf(settings) => pdfs::compress(context, settings),
        JobSpec::PdfToImages(settings) => pdfs::to_images(context, settings),
        JobSpec::ReadForSearch(_) => reading::read_for_search(context),
        JobSpec::Captions(settings) => reading::captions::run(context, settings),
        JobSpec::Import(settings) => imports::run(context, settings),
        JobSpec::VideoThumbnail(settings) => av::video_thumbnail(context, settings),
        // Worked by the supervisor, which holds the providers' keys; never handed to a job
        // process.
        JobSpec::GenerateImage(_) => Err(JobError::Input(
            "a generateImage job is not run in a job process".into(),
        )),
        // Run by the supervisor step by step, each step's run in a job process of its own.
        JobSpec::Pipeline(_) => Err(JobError::Input("a pipeline is not run in one job process".into())),
    }
}
