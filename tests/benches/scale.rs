//! `scripts/bench scale`: jobs a minute with 1, 2 and 4 workers on one fixed batch: 40 checksums
//! of 16 MiB files and 40 picture conversions (a 2400×1600 JPEG to at most 1024 px), from eight
//! accounts (ten jobs each, the most one account may have open). Each worker runs one job at a
//! time (`DRIVE_WORKER_CONCURRENCY=1`), so the workers are the parallelism. Timed from the first
//! submission to the last job's end, both read from the job rows (one clock: this machine's).
//! Each figure is the median of three rounds, rotating the order, with the spread.

use std::path::Path;

use drive_tests::bench::add_file;
use drive_tests::{TestApp, env};
use serde_json::json;

const ACCOUNTS: usize = 8;
const ROUNDS: usize = 3;

/// Seconds from the first submission to the last end of the batch, with `workers` workers.
async fn batch(workers: usize, dir: &Path) -> f64 {
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
    let seconds: f64 = sqlx::query_scalar(
        "select extract(epoch from max(ended_at) - min(created_at))::float8 from file_jobs
         where job_type in ('checksum', 'convert')",
    )
    .fetch_one(&mut app.db().await)
    .await
    .unwrap();
    for index in 0..workers {
        app.kill_worker(index);
    }
    seconds
}

fn spread(mut figures: Vec<f64>) -> (f64, f64, f64) {
    figures.sort_by(f64::total_cmp);
    (figures[0], figures[figures.len() / 2], figures[figures.len() - 1])
}

#[tokio::main]
async fn main() {
    let dir = std::path::PathBuf::from(env("DRIVE_BENCH_DIR"));
    std::fs::write(dir.join("blob.bin"), drive_tests::noise(16 * 1024 * 1024, 5)).unwrap();
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
    println!("| Workers | seconds, median (min–max) | jobs a minute | vs 1 worker |");
    println!("|---|---|---|---|");
    let one = spread(figures[0].clone()).1;
    for (index, workers) in counts.iter().enumerate() {
        let (min, median, max) = spread(figures[index].clone());
        println!(
            "| {workers} | {median:.2} ({min:.2}–{max:.2}) | {:.0} | {:.2}× |",
            jobs as f64 * 60.0 / median,
            one / median
        );
    }
}
