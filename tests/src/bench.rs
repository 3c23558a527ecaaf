//! What the benchmarks share: putting a local file in the drive, timing a job and a peer
//! command, taking medians, and reading where the CPU went.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use drive_core::id::{FileId, JobId};
use serde_json::{Value, json};

use crate::{APP_ID, TestApp, TestUser, bin, raw_store};

/// Puts a local file in the store under the user's key and records it through `/insert-file`:
/// the upload is reserved through `/generate-file-urls` as any upload is, but the bytes go in
/// one streamed PUT of the file rather than a form held in memory.
pub async fn add_file(app: &TestApp, user: &TestUser, path: &Path, kind: &str, mime: &str) -> FileId {
    let name = path.file_name().unwrap().to_str().unwrap();
    let key = user.key(name);
    let size = std::fs::metadata(path).unwrap().len();
    let upload =
        json!({ "type": kind, "fileName": name, "fileSize": size, "objectKey": key, "mimeType": mime });
    let reserved = app.call(user, "/generate-file-urls", Some(upload)).await;
    assert_eq!(reserved.status, 200, "{}", reserved.body);
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

/// The `/generate-file-urls` body of a 16-byte text file `seed-NNNNN.txt` of `user`'s.
pub fn small_file(user: &TestUser, n: usize) -> Value {
    let name = format!("seed-{n:05}.txt");
    json!({ "type": "Text", "fileName": name, "fileSize": 16, "objectKey": user.key(&name), "mimeType": "text/plain" })
}

/// Stores [`small_file`] `n` through its presigned form; answers the body that records it
/// with `/insert-file`.
pub async fn store_small_file(app: &TestApp, user: &TestUser, n: usize) -> Value {
    let mut input = small_file(user, n);
    let urls = app.call(user, "/generate-file-urls", Some(input.clone())).await;
    assert_eq!(urls.status, 200, "{}", urls.body);
    assert!(
        crate::post_form(&urls.body, vec![b'x'; 16], "text/plain")
            .await
            .is_success()
    );
    input["creator"] = json!({ "id": user.id });
    input
}

/// A 6-hour link to the file's object in the store, as `/generate-download-url` hands it out.
pub async fn link(app: &TestApp, user: &TestUser, id: FileId) -> String {
    let reply = app
        .call(user, "/generate-download-url", Some(json!({ "id": id })))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body["downloadUrl"]
        .as_str()
        .expect("downloadUrl")
        .to_string()
}

/// Waits until the drive's readings (`readMetadata` jobs) of `files` have ended, and answers
/// the seconds each took (none for files it does not read).
async fn readings_of(app: &TestApp, files: &[FileId]) -> Vec<f64> {
    let mut db = app.db().await;
    loop {
        let readings: Vec<(String, Option<f64>)> = sqlx::query_as(
            "select state, extract(epoch from ended_at - started_at)::float8 from file_jobs
             where job_type = 'readMetadata' and input_ids && $1",
        )
        .bind(files)
        .fetch_all(&mut db)
        .await
        .unwrap();
        if readings.iter().all(|(_, seconds)| seconds.is_some()) {
            return readings
                .into_iter()
                .map(|(state, seconds)| {
                    assert_eq!(state, "done");
                    seconds.unwrap()
                })
                .collect();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The seconds the drive's reading of a new file took, once it has ended.
pub async fn reading_seconds(app: &TestApp, file: FileId) -> f64 {
    let seconds = readings_of(app, &[file]).await;
    assert_eq!(seconds.len(), 1, "one reading of {file}");
    seconds[0]
}

/// Runs a job; answers (its own run time, end-to-end time, the job). Both come from the job's
/// own times (the server runs on this machine's clock): end to end is from just before
/// `/create-file-job` to its `endTime`. So the polling can be sparse: each request it makes
/// takes CPU from the job it times and from no peer command. It answers once the drive has
/// also read the job's media results (their `readMetadata` jobs start at the job's end), so
/// that reading never runs beside whatever is timed next.
pub async fn timed_job(app: &TestApp, user: &TestUser, body: Value) -> (f64, f64, Value) {
    timed_job_at(app, user, "/create-file-job", body).await
}

/// [`timed_job`] for a job started through `route` (see [`TestApp::start_job`]).
pub async fn timed_job_at(app: &TestApp, user: &TestUser, route: &str, body: Value) -> (f64, f64, Value) {
    let submitted = chrono::Utc::now();
    let job = app.start_job(user, route, body).await;
    let job = loop {
        let now = app.job(user, &job["id"]).await;
        if now["state"] != "queued" && now["state"] != "running" {
            break now;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(job["state"], "done", "{job}");
    let time = |f: &str| chrono::DateTime::parse_from_rfc3339(job[f].as_str().unwrap()).unwrap();
    let seconds = |d: chrono::TimeDelta| d.num_microseconds().unwrap() as f64 / 1e6;
    let own = seconds(time("endTime") - time("startTime"));
    let end_to_end = seconds(time("endTime").with_timezone(&chrono::Utc) - submitted);
    let id: JobId = job["id"].as_str().unwrap().parse().unwrap();
    let made: Vec<FileId> = sqlx::query_scalar("select file_id from file_job_outputs where job_id = $1")
        .bind(id)
        .fetch_all(&mut app.db().await)
        .await
        .unwrap();
    readings_of(app, &made).await;
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

/// The least, the median and the most of some figures.
pub fn min_median_max(mut figures: Vec<f64>) -> (f64, f64, f64) {
    figures.sort_by(f64::total_cmp);
    (figures[0], figures[figures.len() / 2], figures[figures.len() - 1])
}

/// Timings in seconds as their median with their spread: `1.23 s (1.20–1.31)`.
pub fn spread(seconds: &[f64]) -> String {
    let (min, max) = seconds
        .iter()
        .fold((f64::MAX, 0f64), |(a, b), x| (a.min(*x), b.max(*x)));
    format!("{:.2} s ({min:.2}–{max:.2})", middle(seconds.to_vec()))
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

/// `drive login` of `user` into the config file `config`, which must succeed.
pub async fn drive_login(app: &TestApp, user: &TestUser, config: &Path) {
    let status = tokio::process::Command::new(bin("drive"))
        .arg("--config")
        .arg(config)
        .args([
            "login",
            "--url",
            &app.url,
            "--app",
            APP_ID,
            "--token",
            &user.api_token,
        ])
        .stdout(Stdio::null())
        .status()
        .await
        .unwrap();
    assert!(status.success(), "drive login");
}

/// `drive upload PATH` of a fresh account (so nothing is skipped as sent before), timed from the
/// command's start to its end; its config file is `drive-{round}.json` in `dir`.
pub async fn drive_upload(app: &TestApp, dir: &Path, path: &Path, round: usize) -> Duration {
    let user = app.user(Some("Pro")).await;
    let config = dir.join(format!("drive-{round}.json"));
    drive_login(app, &user, &config).await;
    let run = |args: Vec<String>| {
        let config = config.clone();
        async move {
            let status = tokio::process::Command::new(bin("drive"))
                .arg("--config")
                .arg(&config)
                .args(&args)
                .stdout(Stdio::null())
                .status()
                .await
                .unwrap();
            assert!(status.success(), "drive {args:?}");
        }
    };
    let start = Instant::now();
    run(vec!["--json".into(), "upload".into(), path.display().to_string()]).await;
    start.elapsed()
}

/// A `width`×`height` JPEG (quality 90) of bands and noise, which compresses like a photo.
pub fn photo(path: &Path, width: u32, height: u32) {
    let mut pixels = image::RgbImage::new(width, height);
    let mut state = 1u32;
    for (x, y, p) in pixels.enumerate_pixels_mut() {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let noise = (state >> 28) as u8;
        *p = image::Rgb([(x / 24) as u8 ^ noise, (y / 16) as u8, ((x + y) / 40) as u8]);
    }
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90)
        .encode_image(&pixels)
        .unwrap();
}

/// Forgets the digests checksum jobs kept, so the next checksum is computed again rather than
/// answered from them: what a benchmark of the hashing times.
pub async fn forget_digests(app: &TestApp) {
    sqlx::query("delete from file_digests")
        .execute(&mut app.db().await)
        .await
        .unwrap();
}

/// CPU seconds (user and system) used so far by: the children this process has waited for
/// (`curl`, through its shell), the worker itself, the worker's children it has waited for
/// (its jobs' processes), the store (every `weed` process) and PostgreSQL (every `postgres`
/// process, those of connections that ended included only while their parent lives: all of
/// them here).
pub struct Cpu([f64; 5]);

/// The column heads of [`Cpu::row`]'s cells.
pub const CPU_HEADS: &str = "wall | the reader (`curl`, or the job's process) | the worker (supervisor) | the store | PostgreSQL | all ÷ (cores × wall)";

impl Cpu {
    pub fn now(worker: u32) -> Cpu {
        let (_, waited) = ticks(std::process::id());
        let (own, jobs) = ticks(worker);
        let tick = clock_ticks();
        Cpu([
            waited / tick,
            own / tick,
            jobs / tick,
            cpu_seconds_of("weed"),
            cpu_seconds_of("postgres"),
        ])
    }

    /// The cells of [`CPU_HEADS`] for what ran from `before` to this, `wall` seconds.
    pub fn row(&self, before: &Cpu, wall: f64) -> String {
        let d = |i: usize| self.0[i] - before.0[i];
        let (reader, worker, store, database) = (d(0) + d(2), d(1), d(3), d(4));
        let cores = std::thread::available_parallelism().map_or(1, usize::from) as f64;
        format!(
            "{wall:.2} s | {reader:.2} | {worker:.2} | {store:.2} | {database:.2} | {:.0} %",
            100.0 * (reader + worker + store + database) / (cores * wall)
        )
    }
}

/// CPU seconds used so far by every process named `name` (its `comm`) and the children it has
/// waited for.
pub fn cpu_seconds_of(name: &str) -> f64 {
    let ticks: f64 = crate::pids()
        .into_iter()
        .filter(|pid| std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == name))
        .map(|pid| {
            let (own, waited) = ticks(pid);
            own + waited
        })
        .sum();
    ticks / clock_ticks()
}

/// A process's CPU time in clock ticks: its own, and its waited-for children's (`utime +
/// stime`, `cutime + cstime`: fields 14 to 17 of `/proc/PID/stat`); none once it is gone.
fn ticks(pid: u32) -> (f64, f64) {
    let fields: Vec<f64> = crate::stat_fields(pid)
        .iter()
        .map(|f| f.parse().unwrap_or(0.0))
        .collect();
    if fields.len() < 15 {
        return (0.0, 0.0);
    }
    (fields[11] + fields[12], fields[13] + fields[14])
}

fn clock_ticks() -> f64 {
    let out = Command::new("getconf").arg("CLK_TCK").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// Gives `user` a library of `files` text files (`file-000001.txt`…, a second apart, of sizes
/// spread up to 5 MB), recorded straight into the database as if uploaded over time: their
/// bytes are not in the store. Analyzed, as autovacuum would leave a library that grew.
pub async fn seed_library(app: &TestApp, user: &TestUser, files: i64) {
    let mut db = app.db().await;
    sqlx::query(
        "insert into files (id, user_id, file_name, file_size, mime_type, kind, bucket, object_key, created_at)
         select gen_random_uuid(), $1, 'file-' || lpad(n::text, 6, '0') || '.txt', (n::bigint * 7919) % 5000000,
                'text/plain', 'Text', 'private', 'users/' || $1 || '/bench/' || n, now() - make_interval(secs => n)
         from generate_series(1, $2) as n",
    )
    .bind(user.id)
    .bind(i32::try_from(files).expect("files fit an int"))
    .execute(&mut db)
    .await
    .expect("seeding");
    sqlx::query("vacuum (analyze) files")
        .execute(&mut db)
        .await
        .unwrap();
}

/// Peak resident memory of a process so far, in KiB (VmHWM).
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Peak resident memory (`VmHWM`, KiB) of any `drive-worker run-job` process, read every
/// `every` until `done` is set.
pub fn watch_job_memory(
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    every: Duration,
) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut peak_kib = 0u64;
        while !done.load(std::sync::atomic::Ordering::Relaxed) {
            for (pid, _) in crate::job_processes() {
                peak_kib = peak_kib.max(peak_rss_kib(pid).unwrap_or(0));
            }
            std::thread::sleep(every);
        }
        peak_kib
    })
}
