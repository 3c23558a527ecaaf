//! What the benchmarks share: putting a local file in the drive, timing a job and a peer
//! command, and taking medians.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use uuid::Uuid;

use crate::{TestApp, TestUser, raw_store};

/// Puts a local file in the store under the user's key and records it through `/insert-file`.
pub async fn add_file(app: &TestApp, user: &TestUser, path: &Path, kind: &str, mime: &str) -> Uuid {
    let name = path.file_name().unwrap().to_str().unwrap();
    let key = user.key(name);
    let size = std::fs::metadata(path).unwrap().len();
    raw_store()
        .await
        .put_object()
        .bucket(&app.private_bucket)
        .key(&key)
        .content_length(size as i64)
        .body(aws_sdk_s3::primitives::ByteStream::from_path(path).await.unwrap())
        .send()
        .await
        .unwrap();
    let inserted = app
        .call(
            user,
            "/insert-file",
            Some(json!({ "type": kind, "fileName": name, "fileSize": size, "objectKey": key, "mimeType": mime })),
        )
        .await;
    assert_eq!(inserted.status, 200, "{}", inserted.body);
    inserted.body["id"].as_str().unwrap().parse().unwrap()
}

/// A 6-hour link to the file's object in the store, as `/generate-download-url` hands it out.
pub async fn link(app: &TestApp, user: &TestUser, id: Uuid) -> String {
    let reply = app
        .call(user, "/generate-download-url", Some(json!({ "id": id })))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body["downloadUrl"]
        .as_str()
        .expect("downloadUrl")
        .to_string()
}

/// Runs a job; answers (its own run time, end-to-end time, the job).
pub async fn timed_job(app: &TestApp, user: &TestUser, body: Value) -> (f64, f64, Value) {
    let start = Instant::now();
    let job = app.create_job(user, body).await;
    let job = loop {
        let now = app.job(user, &job["id"]).await;
        if now["state"] != "queued" && now["state"] != "running" {
            break now;
        }
        // Often enough to time short jobs, seldom enough not to take the CPU from long ones
        // (the end-to-end figure is off by at most 2 %).
        let interval = (start.elapsed() / 50).clamp(Duration::from_millis(5), Duration::from_millis(200));
        tokio::time::sleep(interval).await;
    };
    let end_to_end = start.elapsed().as_secs_f64();
    assert_eq!(job["state"], "done", "{job}");
    let time = |f: &str| chrono::DateTime::parse_from_rfc3339(job[f].as_str().unwrap()).unwrap();
    let own = (time("endTime") - time("startTime")).num_microseconds().unwrap() as f64 / 1e6;
    (own, end_to_end, job)
}

/// Runs a command; answers its wall time.
pub fn timed(program: &str, args: &[&str]) -> f64 {
    let start = Instant::now();
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    start.elapsed().as_secs_f64()
}

/// The median of some figures.
pub fn middle(mut figures: Vec<f64>) -> f64 {
    figures.sort_by(f64::total_cmp);
    figures[figures.len() / 2]
}

/// The median wall time of three runs of a command.
pub fn timed_median(program: &str, args: &[&str]) -> f64 {
    middle((0..3).map(|_| timed(program, args)).collect())
}

/// The median of `n` runs of `f`.
pub async fn median<F, Fut>(n: usize, mut f: F) -> (f64, f64)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = (f64, f64)>,
{
    let mut runs = Vec::new();
    for _ in 0..n {
        runs.push(f().await);
    }
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    runs[n / 2]
}

/// Runs a bash script (`set -eo pipefail`) whose `$1`, `$2`, … are `args`; answers its wall time.
pub fn timed_script(body: &str, args: &[&str]) -> f64 {
    let body = format!("set -eo pipefail; {body}");
    let mut all = vec!["-c", body.as_str(), "bash"];
    all.extend_from_slice(args);
    timed("bash", &all)
}

/// The median wall time of three runs of a bash script (see [`timed_script`]).
pub fn script(body: &str, args: &[&str]) -> f64 {
    middle((0..3).map(|_| timed_script(body, args)).collect())
}

/// A presigned PUT to a scratch key of the private bucket, for a peer to write its result to.
pub async fn put_link(app: &TestApp, key: &str) -> String {
    let config = aws_sdk_s3::presigning::PresigningConfig::expires_in(Duration::from_secs(3600)).unwrap();
    raw_store()
        .await
        .put_object()
        .bucket(&app.private_bucket)
        .key(key)
        .presigned(config)
        .await
        .unwrap()
        .uri()
        .to_string()
}
