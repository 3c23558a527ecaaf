//! `scripts/bench scale`: jobs a minute with 1, 2 and 4 workers on one fixed batch: 40 checksums
//! of 16 MiB files and 40 picture conversions (a 2400×1600 JPEG to at most 1024 px), from eight
//! accounts (ten jobs each, the most one account may have open). Each worker runs one job at a
//! time (`DRIVE_WORKER_CONCURRENCY=1`), so the workers are the parallelism. Timed from the first
//! submission to the last job's end, both read from the job rows (one clock: this machine's).
//! Each figure is the median of three rounds, rotating the order, with the spread.
//!
//! Then, on one worker: how long a job waits to start with an empty queue at the production
//! heartbeat (10 s), over 200 jobs one at a time; how long an interactive job waits to start
//! behind a bulk backlog of 0, 100, 1,000 and 10,000 jobs of another account (one slot, so each
//! waits for the bulk job running when it arrives). The ingestion of many small files is
//! `scripts/bench ingestion`'s.

use std::path::Path;

use drive_tests::bench::{add_file, forget_digests, min_median_max};
use drive_tests::{TestApp, env};
use serde_json::json;

const ACCOUNTS: usize = 8;
const ROUNDS: usize = 3;

/// Seconds from the first submission to the last end of the batch, with `workers` workers.
/// Seconds from the first submission to the last end of the batch, with `workers` workers, and
/// the metadata readings (of the conversions' pictures) that ran within that time: the lanes run
/// them among the batch, where the FIFO ran them after it.
async fn batch(workers: usize, dir: &Path) -> (f64, i64) {
    let mut app = TestApp::spawn().await;
    for _ in 0..workers {
        app.start_worker(&[("DRIVE_WORKER_CONCURRENCY", "1")]).await;
    }
    let mut submissions = Vec::new();
    for _ in 0..ACCOUNTS {
        let user = app.user(Some("Pro")).await;
        // A file for each checksum: a second checksum of one file is answered from the digest
        // kept, with no job run.
        let mut blobs = Vec::new();
        for _ in 0..5 {
            let blob = add_file(
                &app,
                &user,
                &dir.join("blob.bin"),
                "Other",
                "application/octet-stream",
            )
            .await;
            blobs.push(blob);
        }
        let picture = add_file(&app, &user, &dir.join("photo.jpg"), "Image", "image/jpeg").await;
        // The readings of the new files end before the batch starts.
        drive_tests::bench::reading_seconds(&app, picture).await;
        submissions.push((user, blobs, picture));
    }
    let mut ids = Vec::new();
    for (user, blobs, picture) in &submissions {
        for blob in blobs {
            let checksum = app
                .create_job(user, json!({ "jobType": "checksum", "fileIds": [blob] }))
                .await;
            let convert = app
                .create_job(
                    user,
                    json!({ "jobType": "convert", "fileIds": [picture], "options": { "format": "jpg", "maxEdge": 1024 } }),
                )
                .await;
            ids.push((user.clone(), checksum["id"].clone()));
            ids.push((user.clone(), convert["id"].clone()));
        }
    }
    for (user, id) in &ids {
        let job = app.wait_job(user, id).await;
        assert_eq!(job["state"], "done", "{job}");
    }
    let (seconds, readings): (f64, i64) = sqlx::query_as(
        "with window_of as (
             select min(created_at) as opened, max(ended_at) as closed from file_jobs
             where job_type in ('checksum', 'convert')
         )
         select extract(epoch from closed - opened)::float8,
                (select count(*) from file_jobs
                 where job_type = 'readMetadata' and started_at >= opened and ended_at <= closed)
         from window_of",
    )
    .fetch_one(&mut app.db().await)
    .await
    .unwrap();
    for index in 0..workers {
        app.kill_worker(index);
    }
    (seconds, readings)
}

/// Jobs timed for the start latency.
const SAMPLES: usize = 200;

/// Seconds from just before `/create-file-job` to the job's `startTime`, for [`SAMPLES`]
/// checksums of a small file, one at a time, with a worker idle at the production heartbeat.
async fn start_latencies(dir: &Path) -> Vec<f64> {
    let heartbeat = [("DRIVE_HEARTBEAT_SECONDS", "10")];
    let mut app = TestApp::spawn_with(&heartbeat).await;
    app.start_worker(&[("DRIVE_WORKER_CONCURRENCY", "1")]).await;
    checksum_latencies(&app, dir, SAMPLES).await
}

/// Seconds from just before `/create-file-job` to the job's `startTime`, for `samples`
/// checksums of a small file by a new account, one at a time.
async fn checksum_latencies(app: &TestApp, dir: &Path, samples: usize) -> Vec<f64> {
    let user = app.user(Some("Pro")).await;
    let small = add_file(
        app,
        &user,
        &dir.join("small.bin"),
        "Other",
        "application/octet-stream",
    )
    .await;
    let mut latencies = Vec::new();
    for _ in 0..samples {
        // Else the second checksum is answered from the digest kept, with no job run.
        forget_digests(app).await;
        let submitted = chrono::Utc::now();
        let job = app
            .create_job(&user, json!({ "jobType": "checksum", "fileIds": [small] }))
            .await;
        let job = app.wait_job(&user, &job["id"]).await;
        assert_eq!(job["state"], "done", "{job}");
        let started: chrono::DateTime<chrono::Utc> =
            serde_json::from_value(job["startTime"].clone()).unwrap();
        latencies.push((started - submitted).num_microseconds().unwrap() as f64 / 1e6);
    }
    latencies
}

/// `drive upload` of a folder of 500 pictures and 500 audio clips, then until every file's
/// metadata is read, at the production heartbeat: (upload seconds, seconds until all read, the
/// readings that failed).
/// Interactive jobs timed against each backlog.
const BACKLOG_SAMPLES: usize = 20;

/// Seconds from just before `/create-file-job` to the job's `startTime`, for
/// [`BACKLOG_SAMPLES`] checksums of a small file, one at a time, by one account, while another
/// account has `backlog` bulk checksums (of 11 files of 64 KiB) queued before them, with one
/// worker of one slot. The backlog is made by copying one job made through the API, row by
/// row in SQL: 10,000 through the API would take the per-account cap of open jobs a thousand
/// accounts.
async fn backlog_latencies(dir: &Path, backlog: usize) -> (Vec<f64>, f64) {
    let app = TestApp::spawn().await;
    let bulk = app.user(Some("Pro")).await;
    let mut db = app.db().await;
    if backlog > 0 {
        let mut files = Vec::new();
        for _ in 0..11 {
            files.push(
                add_file(
                    &app,
                    &bulk,
                    &dir.join("small.bin"),
                    "Other",
                    "application/octet-stream",
                )
                .await,
            );
        }
        let template = app
            .create_job(&bulk, json!({ "jobType": "checksum", "fileIds": files }))
            .await;
        sqlx::query(
        "insert into file_jobs (id, user_id, job_type, lane, options, input_ids, created_at)
         select gen_random_uuid(), user_id, job_type, lane, options, input_ids, created_at + n * interval '1 microsecond'
         from file_jobs, generate_series(1, $2) as n where id = $1::uuid",
    )
        .bind(template["id"].as_str().unwrap())
        .bind(backlog as i32 - 1)
        .execute(&mut db)
        .await
        .unwrap();
    }
    let mut app = app;
    app.start_worker(&[("DRIVE_WORKER_CONCURRENCY", "1")]).await;
    let latencies = checksum_latencies(&app, dir, BACKLOG_SAMPLES).await;
    // What one bulk job of the backlog took, for the FIFO farm's figure.
    let bulk_seconds: f64 = sqlx::query_scalar(
        "select percentile_cont(0.5) within group (order by seconds) from file_jobs
         where user_id = $1 and state = 'done'",
    )
    .bind(bulk.id)
    .fetch_one(&mut db)
    .await
    .unwrap_or(0.0);
    app.kill_worker(0);
    (latencies, bulk_seconds)
}

#[tokio::main]
async fn main() {
    let dir = std::path::PathBuf::from(env("DRIVE_BENCH_DIR"));
    std::fs::write(dir.join("blob.bin"), drive_tests::noise(16 * 1024 * 1024, 5)).unwrap();
    std::fs::write(dir.join("small.bin"), drive_tests::noise(64 * 1024, 6)).unwrap();
    drive_tests::bench::photo(&dir.join("photo.jpg"), 2400, 1600);
    let counts = [1usize, 2, 4];
    let mut figures = vec![Vec::new(); counts.len()];
    for round in 0..ROUNDS {
        for k in 0..counts.len() {
            let index = (k + round) % counts.len();
            figures[index].push(batch(counts[index], &dir).await);
        }
    }
    let jobs = ACCOUNTS * 10;
    println!(
        "{jobs} jobs (half checksums of 16 MiB, half conversions of a 2400x1600 JPEG), one job a worker at a time, {ROUNDS} rounds rotating the order"
    );
    println!(
        "| Workers | seconds, median (min–max) | jobs a minute | vs 1 worker | readings run within (min–max) | jobs a minute, those readings counted |"
    );
    println!("|---|---|---|---|---|---|");
    let seconds_of = |index: usize| figures[index].iter().map(|(s, _)| *s).collect::<Vec<f64>>();
    let one = min_median_max(seconds_of(0)).1;
    for (index, workers) in counts.iter().enumerate() {
        let (min, median, max) = min_median_max(seconds_of(index));
        let readings: Vec<f64> = figures[index].iter().map(|(_, r)| *r as f64).collect();
        let (fewest, readings_median, most) = min_median_max(readings);
        println!(
            "| {workers} | {median:.2} ({min:.2}–{max:.2}) | {:.0} | {:.2}× | {readings_median:.0} ({fewest:.0}–{most:.0}) | {:.0} |",
            jobs as f64 * 60.0 / median,
            one / median,
            (jobs as f64 + readings_median) * 60.0 / median
        );
    }

    let mut latencies = start_latencies(&dir).await;
    latencies.sort_by(f64::total_cmp);
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize] * 1000.0;
    println!();
    println!(
        "| job start latency, empty queue, heartbeat 10 s, {SAMPLES} checksums one at a time | p50 | p99 | max |"
    );
    println!("|---|---|---|---|");
    println!(
        "| submission → the job's startTime | {:.1} ms | {:.1} ms | {:.1} ms |",
        at(0.5),
        at(0.99),
        at(1.0)
    );

    println!();
    println!(
        "| interactive job's start behind another account's bulk backlog, one worker, one slot, {BACKLOG_SAMPLES} checksums one at a time | p50 | p99 | a FIFO farm (backlog × one bulk job's median) |"
    );
    println!("|---|---|---|---|");
    for backlog in [0usize, 100, 1_000, 10_000] {
        let (mut latencies, bulk_seconds) = backlog_latencies(&dir, backlog).await;
        latencies.sort_by(f64::total_cmp);
        let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize] * 1000.0;
        println!(
            "| {backlog} queued | {:.1} ms | {:.1} ms | {:.0} s |",
            at(0.5),
            at(0.99),
            backlog as f64 * bulk_seconds
        );
    }
}
