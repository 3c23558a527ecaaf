//! The farm's scheduling end to end: jobs wait in lanes (system, interactive, bulk) and a worker
//! takes from them by weight, accounts taking turns within a lane, a long wait going before
//! every turn; pools of workers take only their lanes and job types; a worker told to stop
//! (SIGTERM) drains, handing back what it could not finish; and the lanes show on `/metrics`.
//!
//! Every worker here is started alone ([`TestApp::start_worker_alone`]), scaled out or not:
//! the tests watch which worker takes which job, and in what order.

use std::io::Write;
use std::time::{Duration, Instant};

use drive_core::id::FileId;
use drive_tests::media::ffmpeg;
use drive_tests::scratch::Scratch;
use drive_tests::{TestApp, TestUser, assert_done, bytes, made, noise};
use futures::StreamExt;
use serde_json::{Value, json};
use sqlx::PgConnection;

/// A job's row as the farm keeps it: what the API does not show.
#[derive(Debug, sqlx::FromRow)]
struct Row {
    state: String,
    lane: String,
    attempts: i32,
    worker: Option<String>,
    /// Seconds since the epoch, by the database's clock.
    created: f64,
    started: Option<f64>,
    ended: Option<f64>,
}

async fn row(db: &mut PgConnection, job: &Value) -> Row {
    let id: uuid::Uuid = job["id"].as_str().expect("a job id").parse().expect("a uuid");
    sqlx::query_as(
        "select state, lane, attempts, worker,
                extract(epoch from created_at)::float8 as created,
                extract(epoch from started_at)::float8 as started,
                extract(epoch from ended_at)::float8 as ended
         from file_jobs where id = $1",
    )
    .bind(id)
    .fetch_one(db)
    .await
    .expect("the job's row")
}

/// How many job rows match `condition` (SQL on `file_jobs`).
async fn count(db: &mut PgConnection, condition: &str) -> i64 {
    sqlx::query_scalar(&format!("select count(*) from file_jobs where {condition}"))
        .fetch_one(db)
        .await
        .expect("counting job rows")
}

/// The database's clock now, in seconds since the epoch (what [`Row`]'s times compare with).
async fn db_now(db: &mut PgConnection) -> f64 {
    sqlx::query_scalar("select extract(epoch from clock_timestamp())::float8")
        .fetch_one(db)
        .await
        .expect("the database's clock")
}

/// Uploads `files` (name, kind, MIME type, bytes) eight at a time; answers their ids in order.
async fn upload_all(
    app: &TestApp,
    user: &TestUser,
    files: Vec<(String, &str, &str, Vec<u8>)>,
) -> Vec<FileId> {
    futures::stream::iter(
        files
            .into_iter()
            .map(|(name, kind, mime, bytes)| async move { app.upload(user, &name, kind, mime, bytes).await }),
    )
    .buffered(8)
    .collect()
    .await
}

/// `n` small files of different bytes (no reading of metadata follows their upload).
async fn small_files(app: &TestApp, user: &TestUser, n: usize) -> Vec<FileId> {
    let files = (0..n)
        .map(|i| {
            (
                format!("{i}.bin"),
                "Other",
                "application/octet-stream",
                bytes(1000 + i, 7),
            )
        })
        .collect();
    upload_all(app, user, files).await
}

/// A zip of `n` entries `f0.bin`, `f1.bin`… of `size` bytes: its unzip stores and records each
/// entry by itself, about 10 ms an entry here, so the number of entries sets how long it runs.
fn entries_zip(n: u16, size: usize, seed: u8) -> (Vec<Vec<u8>>, Vec<u8>) {
    let entries: Vec<Vec<u8>> = (0..n).map(|i| bytes(size, seed ^ i as u8)).collect();
    let mut out = std::io::Cursor::new(Vec::new());
    let mut writer = zip::ZipWriter::new(&mut out);
    for (i, entry) in entries.iter().enumerate() {
        writer
            .start_file(format!("f{i}.bin"), zip::write::SimpleFileOptions::default())
            .unwrap();
        writer.write_all(entry).unwrap();
    }
    writer.finish().unwrap();
    (entries, out.into_inner())
}

/// Asserts an unzip of [`entries_zip`]'s `n` entries made each once, in order.
#[track_caller]
fn assert_each_entry_once(job: &Value, n: usize) {
    let names = drive_tests::names(job);
    let wanted: Vec<String> = (0..n).map(|i| format!("f{i}.bin")).collect();
    assert!(names == wanted, "not each entry once, in order: {names:?}");
}

/// Where a worker serves `/metrics`: a port of its own, written to a file.
pub(crate) struct WorkerMetrics {
    scratch: Scratch,
}

impl WorkerMetrics {
    pub(crate) fn new() -> WorkerMetrics {
        WorkerMetrics {
            scratch: Scratch::new(),
        }
    }

    pub(crate) fn address_file(&self) -> String {
        self.scratch
            .path("metrics-address")
            .to_string_lossy()
            .into_owned()
    }

    pub(crate) async fn scrape(&self) -> String {
        let listen = std::fs::read_to_string(self.address_file()).expect("the metrics address written down");
        scrape(&format!("http://{listen}/metrics")).await
    }

    /// A scrape of an idle worker. It holds a slot for the moment it looks for a job (once a
    /// second, and just after its start), so a scrape may catch one busy: another shows it free.
    async fn scrape_idle(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(3);
        loop {
            let text = self.scrape().await;
            if value(&text, "drive_worker_slots_busy") == Some(0.0) || Instant::now() > deadline {
                return text;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

async fn scrape(url: &str) -> String {
    let reply = reqwest::get(url).await.expect("metrics");
    assert_eq!(reply.status(), 200, "{url}");
    reply.text().await.expect("the metrics' text")
}

/// The API's `/metrics`.
async fn api_metrics(app: &TestApp) -> String {
    let served = app
        .metrics_url
        .as_deref()
        .expect("the test app serves its metrics");
    scrape(&format!("{served}/metrics")).await
}

/// The value of `series` (its name and labels, exactly) in a scrape; `None` when absent.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[track_caller]
pub(crate) fn assert_series(text: &str, series: &str, wanted: f64) {
    assert_eq!(value(text, series), Some(wanted), "{series} in:\n{text}");
}

/// Asserts the farm's lanes in a scrape: (lane, queued, running) each, and that the oldest
/// queued job of a lane with jobs queued has waited at least `waited` seconds (0 when none).
#[track_caller]
fn assert_lanes(text: &str, lanes: &[(&str, f64, f64)], waited: f64) {
    for &(lane, queued, running) in lanes {
        assert_series(
            text,
            &format!("drive_farm_jobs_queued{{lane=\"{lane}\"}}"),
            queued,
        );
        assert_series(
            text,
            &format!("drive_farm_jobs_running{{lane=\"{lane}\"}}"),
            running,
        );
        let oldest = value(
            text,
            &format!("drive_farm_oldest_queued_seconds{{lane=\"{lane}\"}}"),
        )
        .unwrap_or_else(|| panic!("no oldest queued seconds of {lane} in:\n{text}"));
        if queued > 0.0 {
            assert!(
                oldest >= waited,
                "the oldest {lane} job waited {oldest} s:\n{text}"
            );
        } else {
            assert_eq!(oldest, 0.0, "{lane} has nothing queued:\n{text}");
        }
    }
}

/// Cancels the jobs of `user` that have not ended (a test's leftover backlog).
async fn cancel_unended(app: &TestApp, user: &TestUser, jobs: &[Value]) {
    for job in jobs {
        let reply = app
            .call(user, "/cancel-file-job", Some(json!({ "id": job["id"] })))
            .await;
        assert!(
            reply.status == 200 || reply.body["code"] == "job_ended",
            "{}",
            reply.body
        );
    }
}

/// Account A's backlog is the drive's readings of 200 recordings it just uploaded (system lane)
/// and a reading for search of all 200, in two jobs of 100 (a job reads at most 100: bulk,
/// minutes of speech recognition each); account B then
/// asks for a checksum of a small file, which is done within 2 s on a worker of one slot: it
/// waits neither for A's backlog (a FIFO farm runs it after the 200 readings) nor for the bulk
/// job in the slot, which stands still while B's job runs (crate `drive-worker`'s `pauses`)
/// and then goes on.
#[tokio::test]
async fn one_accounts_backlog_does_not_hold_up_anothers_job() {
    let mut app = TestApp::spawn().await;
    let a = app.user(Some("Pro")).await;
    let b = app.user(Some("Pro")).await;
    // Queued before any worker runs. Half a second each: the point is their number.
    let clip = ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=440:sample_rate=8000",
            "-t",
            "0.5",
            "-ac",
            "1",
        ],
        "wav",
    );
    let recordings = upload_all(
        &app,
        &a,
        (0..200)
            .map(|n| (format!("take {n}.wav"), "Audio", "audio/wav", clip.clone()))
            .collect(),
    )
    .await;
    let mut db = app.db().await;
    assert_eq!(
        count(
            &mut db,
            "job_type = 'readMetadata' and lane = 'system' and state = 'queued'"
        )
        .await,
        200
    );
    let reading = app
        .create_job(
            &a,
            json!({ "jobType": "readForSearch", "fileIds": &recordings[..100] }),
        )
        .await;
    let the_rest = app
        .create_job(
            &a,
            json!({ "jobType": "readForSearch", "fileIds": &recordings[100..] }),
        )
        .await;
    assert_eq!(row(&mut db, &reading).await.lane, "bulk");
    assert_eq!(row(&mut db, &the_rest).await.lane, "bulk");
    let small = app
        .upload(&b, "b.bin", "Other", "application/octet-stream", bytes(1000, 1))
        .await;

    let worker = app.start_worker_alone(&[("DRIVE_WORKER_CONCURRENCY", "1")]).await;
    // Once the reading for search holds the slot, and the readings have taken turns in it for
    // a while.
    let deadline = Instant::now() + Duration::from_secs(60);
    while row(&mut db, &reading).await.state != "running"
        || count(&mut db, "job_type = 'readMetadata' and state = 'done'").await < 10
    {
        assert!(
            Instant::now() < deadline,
            "the reading for search and ten readings never ran"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let submitted = Instant::now();
    let job = app
        .create_job(&b, json!({ "jobType": "checksum", "fileIds": [small] }))
        .await;
    let ended = loop {
        let now = app.job(&b, &job["id"]).await;
        if now["state"] != "queued" && now["state"] != "running" {
            break now;
        }
        let left = count(&mut db, "job_type = 'readMetadata' and state = 'queued'").await;
        assert!(
            submitted.elapsed() < Duration::from_secs(2),
            "B's job is still {} {:?} after its submission, behind {left} of A's readings",
            now["state"],
            submitted.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let took = submitted.elapsed();
    assert_done(&ended);
    assert!(took < Duration::from_secs(2), "B's job took {took:?}");
    let left = count(&mut db, "job_type = 'readMetadata' and state = 'queued'").await;
    println!("B's job was done {took:?} after its submission, {left} of A's readings still queued");
    assert!(
        left >= 100,
        "only {left} of A's readings were left: B's job hardly passed any"
    );
    let done = row(&mut db, &job).await;
    assert_eq!(done.lane, "interactive");
    assert_eq!(done.worker.as_deref(), Some(app.worker(worker).name.as_str()));
    assert_eq!(
        row(&mut db, &reading).await.state,
        "running",
        "the bulk reading kept its slot"
    );
    // The worker logs `lent_to=<B's job>` on the line (its field names may be styled).
    let lent_to = job["id"].as_str().unwrap();
    assert!(
        app.worker_logs()
            .lines()
            .any(|line| line.contains("held still") && line.contains(lent_to)),
        "B's job did not run in the held bulk job's slot"
    );
    // Held again and again by A's readings, the bulk job still gets on: it is held only while
    // it has run as long as it stood still.
    let deadline = Instant::now() + Duration::from_secs(120);
    while app.job(&a, &reading["id"]).await["progress"]
        .as_f64()
        .unwrap_or(0.0)
        < 0.01
    {
        assert!(
            Instant::now() < deadline,
            "the bulk reading made no progress while the readings ran"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    cancel_unended(&app, &a, &[reading.clone(), the_rest]).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while row(&mut db, &reading).await.ended.is_none() {
        assert!(Instant::now() < deadline, "the canceled reading never ended");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Its time stood still is not its account's: `seconds` leaves it out.
    let id: uuid::Uuid = reading["id"].as_str().unwrap().parse().unwrap();
    let (ran, seconds, stood): (f64, f64, f64) = sqlx::query_as(
        "select extract(epoch from ended_at - started_at)::float8, seconds, paused_seconds
         from file_jobs where id = $1",
    )
    .bind(id)
    .fetch_one(&mut db)
    .await
    .expect("the reading's times");
    println!("the bulk reading ran {ran:.1} s, stood still {stood:.1} s, counted {seconds:.1} s");
    assert!(stood > 0.0, "the bulk reading was never held");
    assert!(
        (seconds - (ran - stood)).abs() < 0.05,
        "counted {seconds} s of {ran} s with {stood} s held"
    );
}

/// Within a lane accounts take turns: A's ten jobs of seconds each, queued first, do not go
/// before B's next one, which starts as soon as the one running ends (a FIFO farm starts A's
/// nine others first). The issue speaks of jobs of a minute; a few seconds make the same point.
#[tokio::test]
async fn anothers_job_starts_next_after_the_one_running_not_after_an_accounts_queue() {
    let mut app = TestApp::spawn().await;
    let a = app.user(Some("Pro")).await;
    let b = app.user(Some("Pro")).await;
    let worker = app.start_worker_alone(&[("DRIVE_WORKER_CONCURRENCY", "1")]).await;
    // A checksum of both takes some 3.5 s here.
    let big = upload_all(
        &app,
        &a,
        (0..2u64)
            .map(|n| {
                (
                    format!("{n}.bin"),
                    "Other",
                    "application/octet-stream",
                    noise(64 << 20, n),
                )
            })
            .collect(),
    )
    .await;
    let small = app
        .upload(&b, "b.bin", "Other", "application/octet-stream", bytes(1000, 1))
        .await;
    // Ten, the most one account may have waiting or running.
    let mut a_jobs = Vec::new();
    for _ in 0..10 {
        a_jobs.push(
            app.create_job(&a, json!({ "jobType": "checksum", "fileIds": big }))
                .await,
        );
    }
    let b_job = app
        .create_job(&b, json!({ "jobType": "checksum", "fileIds": [small] }))
        .await;
    assert_done(&app.wait_job(&b, &b_job["id"]).await);

    let mut db = app.db().await;
    let theirs = row(&mut db, &b_job).await;
    let first = row(&mut db, &a_jobs[0]).await;
    assert_eq!(theirs.lane, "interactive");
    assert_eq!(first.lane, "interactive");
    assert!(
        first.started.is_some_and(|s| s < theirs.created) && first.ended.is_none_or(|e| e > theirs.created),
        "A's first job was not running when B's was submitted (too short for this machine?): {first:?} {theirs:?}"
    );
    let mut before = Vec::new();
    for (n, job) in a_jobs.iter().enumerate() {
        let mine = row(&mut db, job).await;
        assert_eq!(mine.worker.is_some(), mine.started.is_some());
        if mine.started.is_some_and(|s| s < theirs.started.unwrap()) {
            before.push(n);
        }
    }
    assert_eq!(before, [0], "A's jobs started before B's: {before:?}");
    assert!(
        theirs.started.unwrap() >= first.ended.expect("A's first job ended before B's started"),
        "B's job started while A's first ran, on a worker of one slot"
    );
    assert_eq!(theirs.worker.as_deref(), Some(app.worker(worker).name.as_str()));
    cancel_unended(&app, &a, &a_jobs).await;
}

/// A bulk job queued before a long interactive backlog, on a worker weighting interactive work
/// 100 to 1: past `DRIVE_AGING_SECONDS` (2 s) it goes before the lanes' turns, so it starts
/// before the backlog is through; with the aging time an hour, the weighted turn of the bulk
/// lane (after some fifty picks of the interactive one) comes only once all forty have started.
/// A FIFO farm starts it first either way.
#[tokio::test]
async fn a_job_waiting_behind_a_long_backlog_still_starts() {
    let mut app = TestApp::spawn_with(&[("DRIVE_MAX_ACTIVE_JOBS", "100")]).await;
    let user = app.user(Some("Pro")).await;
    let files = small_files(&app, &user, 51).await;
    let (many, singles) = files.split_at(11);
    let mut db = app.db().await;
    let mut started_before_bulk = Vec::new();
    // A second round on the same files with another algorithm: a digest kept from the first
    // would answer a checksum at once.
    for (aging, algorithm) in [("2", "sha256"), ("3600", "md5")] {
        let options = json!({ "algorithm": algorithm });
        let bulk = app
            .create_job(
                &user,
                json!({ "jobType": "checksum", "fileIds": many, "options": options }),
            )
            .await;
        let mut backlog = Vec::new();
        for file in singles {
            backlog.push(
                app.create_job(
                    &user,
                    json!({ "jobType": "checksum", "fileIds": [file], "options": options }),
                )
                .await,
            );
        }
        assert_eq!(row(&mut db, &bulk).await.lane, "bulk");
        assert_eq!(row(&mut db, &backlog[0]).await.lane, "interactive");
        let worker = app
            .start_worker_alone(&[
                ("DRIVE_LANE_WEIGHTS", "interactive=100,system=1,bulk=1"),
                ("DRIVE_AGING_SECONDS", aging),
                ("DRIVE_WORKER_CONCURRENCY", "1"),
            ])
            .await;
        for job in std::iter::once(&bulk).chain(&backlog) {
            assert_done(&app.wait_job(&user, &job["id"]).await);
        }
        let bulk_started = row(&mut db, &bulk).await.started.unwrap();
        let mut before = 0;
        for job in &backlog {
            if row(&mut db, job).await.started.unwrap() < bulk_started {
                before += 1;
            }
        }
        println!("aging {aging} s: the bulk job started after {before} of the 40 interactive jobs");
        started_before_bulk.push(before);
        let status = app.terminate_worker(worker, Duration::from_secs(30)).await;
        assert_eq!(status.code(), Some(0), "{status}");
    }
    assert!(
        started_before_bulk[0] < 40,
        "aged past 2 s, the bulk job still waited for all 40 interactive jobs"
    );
    assert_eq!(
        started_before_bulk[1], 40,
        "without aging, the bulk job started at its weighted turn after {} interactive jobs, not after all 40",
        started_before_bulk[1]
    );
}

/// A worker takes only the lanes and job types it is told (`DRIVE_WORKER_LANES`,
/// `DRIVE_WORKER_JOB_TYPES`): what it does not take waits for a worker that does; and names it
/// does not know, or a weight out of 1..100, refuse its start naming the variable.
#[tokio::test]
async fn a_pool_takes_only_its_lanes_and_types() {
    let mut app = TestApp::spawn().await;
    for (name, value) in [
        ("DRIVE_WORKER_LANES", "fast"),
        ("DRIVE_WORKER_JOB_TYPES", "zipp"),
        ("DRIVE_LANE_WEIGHTS", "bulk=0"),
        ("DRIVE_LANE_WEIGHTS", "bulk=101"),
        ("DRIVE_LANE_WEIGHTS", "fast=1"),
        ("DRIVE_LANE_WEIGHTS", "bulk"),
    ] {
        let refused = app.refused_worker_start(&[(name, value)]);
        assert!(
            refused.contains(name),
            "{name}={value} was refused without naming it: {refused}"
        );
    }

    let user = app.user(Some("Pro")).await;
    let mut db = app.db().await;
    let notes = app
        .upload(
            &user,
            "notes.txt",
            "Text",
            "text/plain",
            b"The garage replaced the worn brake pads this morning.".to_vec(),
        )
        .await;
    let readers = app
        .start_worker_alone(&[("DRIVE_WORKER_JOB_TYPES", "readForSearch")])
        .await;
    let zip = app
        .create_job(&user, json!({ "jobType": "zip", "fileIds": [notes] }))
        .await;
    let reading = app
        .run_job(&user, json!({ "jobType": "readForSearch", "fileIds": [notes] }))
        .await;
    assert_done(&reading);
    let readers_name = app.worker(readers).name.clone();
    assert_eq!(row(&mut db, &reading).await.worker, Some(readers_name.clone()));
    // Two more polls (a second each) and the zip still waits, never taken.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let waiting = row(&mut db, &zip).await;
    assert_eq!(
        (
            waiting.state.as_str(),
            waiting.worker.as_deref(),
            waiting.attempts
        ),
        ("queued", None, 0),
        "{waiting:?}"
    );
    assert_eq!(waiting.lane, "bulk");
    // A worker of every type takes it.
    let any = app.start_worker_alone(&[]).await;
    assert_done(&app.wait_job(&user, &zip["id"]).await);
    let zipped = row(&mut db, &zip).await;
    assert_eq!(zipped.worker.as_deref(), Some(app.worker(any).name.as_str()));
    assert_eq!(zipped.attempts, 1);
    let status = app.terminate_worker(any, Duration::from_secs(30)).await;
    assert_eq!(status.code(), Some(0), "{status}");

    // A pool of the bulk lane takes bulk work (a checksum of more than ten files) and leaves an
    // interactive job (of one) waiting.
    let bulk_pool = app.start_worker_alone(&[("DRIVE_WORKER_LANES", "bulk")]).await;
    let files = small_files(&app, &user, 11).await;
    let single = app
        .create_job(&user, json!({ "jobType": "checksum", "fileIds": [files[0]] }))
        .await;
    let many = app
        .run_job(&user, json!({ "jobType": "checksum", "fileIds": files }))
        .await;
    assert_done(&many);
    let ran = row(&mut db, &many).await;
    assert_eq!(ran.lane, "bulk");
    assert_eq!(ran.worker.as_deref(), Some(app.worker(bulk_pool).name.as_str()));
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let waiting = row(&mut db, &single).await;
    assert_eq!(
        (
            waiting.lane.as_str(),
            waiting.state.as_str(),
            waiting.worker.as_deref()
        ),
        ("interactive", "queued", None),
        "{waiting:?}"
    );
    // Nor does the readers' pool take it, a checksum.
    assert_eq!(
        count(
            &mut db,
            &format!("worker = '{readers_name}' and job_type <> 'readForSearch'")
        )
        .await,
        0
    );
    cancel_unended(&app, &user, &[single]).await;
}

/// SIGTERM while a job of some ten seconds runs, with a drain of 60 s: the worker shows it
/// drains, takes no new job though a slot is free, lets the job end done, and exits 0.
#[tokio::test]
async fn a_draining_worker_takes_no_new_job_finishes_its_own_and_exits_0() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let metrics = WorkerMetrics::new();
    let (_, zipped) = entries_zip(1000, 1000, 1);
    let archive = app
        .upload(&user, "many.zip", "Archive", "application/zip", zipped)
        .await;
    let small = app
        .upload(
            &user,
            "a.bin",
            "Other",
            "application/octet-stream",
            bytes(1000, 1),
        )
        .await;
    let address_file = metrics.address_file();
    let worker = app
        .start_worker_alone(&[
            ("DRIVE_DRAIN_SECONDS", "60"),
            ("DRIVE_WORKER_CONCURRENCY", "2"),
            ("DRIVE_WORKER_METRICS_LISTEN", "127.0.0.1:0"),
            ("DRIVE_WORKER_METRICS_ADDRESS_FILE", &address_file),
        ])
        .await;
    let name = app.worker(worker).name.clone();
    let job = app
        .create_job(&user, json!({ "jobType": "unzip", "fileIds": [archive] }))
        .await;
    app.wait_made(&user, &job["id"], 3).await;
    let text = metrics.scrape().await;
    assert_series(&text, "drive_worker_draining", 0.0);
    assert_series(&text, "drive_worker_slots_busy", 1.0);

    let mut db = app.db().await;
    let signaled = db_now(&mut db).await;
    app.signal_worker(worker);
    let deadline = Instant::now() + Duration::from_secs(5);
    let draining = loop {
        let text = metrics.scrape().await;
        if value(&text, "drive_worker_draining") == Some(1.0) {
            break text;
        }
        assert!(
            Instant::now() < deadline,
            "the worker never showed it drains:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_series(&draining, "drive_worker_slots_busy", 1.0);
    assert_series(&draining, "drive_worker_slots_free", 1.0);
    let later = app
        .create_job(&user, json!({ "jobType": "checksum", "fileIds": [small] }))
        .await;

    let status = app.worker_exit(worker, Duration::from_secs(120)).await;
    assert_eq!(status.code(), Some(0), "{status}");
    let ended = app.job(&user, &job["id"]).await;
    assert_done(&ended);
    assert_each_entry_once(&ended, 1000);
    let finished = row(&mut db, &job).await;
    assert_eq!(finished.worker.as_deref(), Some(name.as_str()));
    assert_eq!(finished.attempts, 1);
    assert!(
        finished.ended.unwrap() > signaled,
        "the job had ended before the SIGTERM: {finished:?}"
    );
    let untaken = row(&mut db, &later).await;
    assert_eq!(
        (
            untaken.state.as_str(),
            untaken.worker.as_deref(),
            untaken.attempts
        ),
        ("queued", None, 0),
        "a draining worker took a new job: {untaken:?}"
    );
    // The next worker takes it.
    app.start_worker_alone(&[]).await;
    assert_done(&app.wait_job(&user, &later["id"]).await);
}

/// With a drain of 1 s, the job still running is handed back: its process killed, the job
/// queued again with its attempt unspent, and another worker takes it at once and carries on
/// from what was stored (kept, not made again). The first worker exits 0.
#[tokio::test]
async fn past_the_drain_a_job_is_handed_back_and_another_worker_takes_it_at_once() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let (entries, zipped) = entries_zip(1000, 1000, 2);
    let archive = app
        .upload(&user, "many.zip", "Archive", "application/zip", zipped)
        .await;
    let first = app
        .start_worker_alone(&[("DRIVE_DRAIN_SECONDS", "1"), ("DRIVE_WORKER_CONCURRENCY", "1")])
        .await;
    let job = app
        .create_job(&user, json!({ "jobType": "unzip", "fileIds": [archive] }))
        .await;
    let early = app.wait_made(&user, &job["id"], 3).await;
    // Idle beside it: nothing else waits.
    let second = app.start_worker_alone(&[]).await;
    let (first_name, second_name) = (app.worker(first).name.clone(), app.worker(second).name.clone());
    let mut db = app.db().await;
    let before = row(&mut db, &job).await;
    assert_eq!(
        (before.state.as_str(), before.worker.as_deref(), before.attempts),
        ("running", Some(first_name.as_str()), 1)
    );

    let signaled = Instant::now();
    app.signal_worker(first);
    let mut seen = Vec::new();
    let (taken_after, taken) = loop {
        let now = row(&mut db, &job).await;
        let at = signaled.elapsed();
        if now.worker.as_deref() == Some(second_name.as_str()) {
            break (at, now);
        }
        assert!(
            now.state == "running" || now.state == "queued",
            "the job ended before the second worker took it: {now:?}"
        );
        seen.push((at, now.state.clone(), now.worker.clone(), now.attempts));
        assert!(
            at < Duration::from_secs(10),
            "the second worker has not taken the job {at:?} after the SIGTERM: {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    println!("taken by the second worker {taken_after:?} after the SIGTERM");
    // The drain's second passed before the hand-back, and the second worker took the job
    // within 2 s of it.
    assert!(
        taken_after >= Duration::from_secs(1),
        "handed back before the drain's time was up"
    );
    assert!(
        taken_after < Duration::from_secs(3),
        "taken {taken_after:?} after the SIGTERM: over 2 s after the hand-back"
    );
    assert_eq!(taken.attempts, 1, "the hand-back spent an attempt: {taken:?}");
    let status = app.worker_exit(first, Duration::from_secs(10)).await;
    assert_eq!(status.code(), Some(0), "{status}");
    assert!(app.worker_logs().contains("handed back"));

    let ended = app.wait_job(&user, &job["id"]).await;
    assert_done(&ended);
    assert_each_entry_once(&ended, 1000);
    let all = made(&ended);
    for kept in made(&early) {
        assert!(
            all.contains(&kept),
            "{kept:?}, stored before the hand-back, was not kept"
        );
    }
    // Its progress kept, the second attempt asked what was saved rather than unpacking it again.
    let carried = carried_on(&app, &job);
    assert!(
        carried >= made(&early).len(),
        "the second attempt carried on past {carried} entries, fewer than were saved before the hand-back"
    );
    assert_eq!(
        app.download(&user, &all[999].0).await,
        entries[999],
        "the last entry's bytes"
    );
    let after = row(&mut db, &job).await;
    assert_eq!(
        (after.state.as_str(), after.worker.as_deref(), after.attempts),
        ("done", Some(second_name.as_str()), 1)
    );
    assert_eq!(
        ran_to_the_end(&app, &job),
        1,
        "the job ran to its end more than once"
    );
    assert_eq!(job_events(&app, &user, &job).await, 1);
}

/// How many times a job's process ran it to its end, by the workers' logs (the `ended` line
/// each writes, with its timings, once the job's end is recorded).
fn ran_to_the_end(app: &TestApp, job: &Value) -> usize {
    let id = job["id"].as_str().unwrap();
    plain(&app.worker_logs())
        .lines()
        .filter(|line| {
            line.contains(" ended ") && line.contains(&format!("job.id={id} ")) && line.contains(" work_ms=")
        })
        .count()
}

/// How many entries saved by an earlier attempt an unzip's attempt carried on past, by the
/// workers' logs (0 when none did).
fn carried_on(app: &TestApp, job: &Value) -> usize {
    job_log(app, job)
        .lines()
        .filter(|line| line.contains("carried on past entries saved before"))
        .filter_map(|line| {
            line.split(" entries=")
                .nth(1)?
                .split_whitespace()
                .next()?
                .parse::<usize>()
                .ok()
        })
        .sum()
}

/// What the workers logged of `job`, for a failure's message: which worker took it, when and
/// why it ran again.
fn job_log(app: &TestApp, job: &Value) -> String {
    let id = job["id"].as_str().unwrap();
    plain(&app.worker_logs())
        .lines()
        .filter(|line| line.contains(id))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A log without its colours (the terminal's escape sequences around levels and fields).
fn plain(log: &str) -> String {
    let mut out = String::with_capacity(log.len());
    let mut chars = log.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // `ESC [ … m`
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The `job` drive events of a job (its end), once there is one.
async fn job_events(app: &TestApp, user: &TestUser, job: &Value) -> usize {
    let filter = json!({ "kinds": ["job"], "jobId": job["id"] });
    app.wait_events(user, filter.clone(), 1).await;
    let reply = app.call(user, "/select-drive-events", Some(filter)).await;
    reply.body["events"].as_array().map_or(0, Vec::len)
}

/// Three workers replaced one at a time (SIGTERM, drain of 2 s, a new one started) while they
/// work through 60 jobs, some of seconds: none is lost, none fails, each ends once, and a job
/// handed back spends no attempt.
#[tokio::test]
async fn a_rolling_restart_loses_no_job_and_ends_each_once() {
    let mut app = TestApp::spawn_with(&[("DRIVE_MAX_ACTIVE_JOBS", "100")]).await;
    let user = app.user(Some("Pro")).await;
    let files = small_files(&app, &user, 54).await;
    let archives = upload_all(
        &app,
        &user,
        (0..6u8)
            .map(|n| {
                (
                    format!("archive {n}.zip"),
                    "Archive",
                    "application/zip",
                    entries_zip(300, 1000, n).1,
                )
            })
            .collect(),
    )
    .await;
    let settings = [("DRIVE_DRAIN_SECONDS", "2"), ("DRIVE_WORKER_CONCURRENCY", "2")];
    let mut workers = Vec::new();
    for _ in 0..3 {
        workers.push(app.start_worker_alone(&settings).await);
    }
    // An unzip of some seconds every tenth job, checksums between.
    let mut jobs = Vec::new();
    let (mut archives, mut files) = (archives.into_iter(), files.into_iter());
    for n in 0..60 {
        let body = if n % 10 == 0 {
            json!({ "jobType": "unzip", "fileIds": [archives.next().unwrap()] })
        } else {
            json!({ "jobType": "checksum", "fileIds": [files.next().unwrap()] })
        };
        jobs.push(app.create_job(&user, body).await);
    }

    let mut db = app.db().await;
    for index in 0..3 {
        let worker = workers[index];
        let name = app.worker(worker).name.clone();
        // Stopped while it runs an unzip, when it gets one.
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline
            && count(
                &mut db,
                &format!("worker = '{name}' and state = 'running' and job_type = 'unzip'"),
            )
            .await
                == 0
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let status = app.terminate_worker(worker, Duration::from_secs(30)).await;
        assert_eq!(status.code(), Some(0), "{name}: {status}");
        workers.push(app.start_worker_alone(&settings).await);
    }

    for job in &jobs {
        let ended = app.wait_job(&user, &job["id"]).await;
        assert_done(&ended);
        if ended["jobType"] == "unzip" {
            assert_each_entry_once(&ended, 300);
        }
        let finished = row(&mut db, job).await;
        assert_eq!(finished.attempts, 1, "{finished:?}\n{}", job_log(&app, job));
        assert_eq!(ran_to_the_end(&app, job), 1, "{ended}");
        assert_eq!(job_events(&app, &user, job).await, 1, "{ended}");
    }
    let handed_back = app.worker_logs().matches("handed back").count();
    println!("{handed_back} jobs were handed back");
    assert!(
        handed_back > 0,
        "no job was handed back: the restarts never cut a job short"
    );
}

/// The farm's lanes on the API's `/metrics` and a worker's, for a known queue; and a worker's
/// slots and the waits of the jobs it started, as it runs them.
#[tokio::test]
async fn the_lanes_and_a_workers_slots_show_on_metrics() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let files = small_files(&app, &user, 14).await;
    let (_, zipped) = entries_zip(400, 1000, 3);
    let archive = app
        .upload(&user, "many.zip", "Archive", "application/zip", zipped)
        .await;
    // No worker runs: three interactive jobs and two bulk ones (the unzip of some seconds).
    let mut jobs = Vec::new();
    for file in &files[..3] {
        jobs.push(
            app.create_job(&user, json!({ "jobType": "checksum", "fileIds": [file] }))
                .await,
        );
    }
    jobs.push(
        app.create_job(&user, json!({ "jobType": "checksum", "fileIds": &files[3..] }))
            .await,
    );
    jobs.push(
        app.create_job(&user, json!({ "jobType": "unzip", "fileIds": [archive] }))
            .await,
    );
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let queued = [
        ("interactive", 3.0, 0.0),
        ("bulk", 2.0, 0.0),
        ("system", 0.0, 0.0),
    ];
    assert_lanes(&api_metrics(&app).await, &queued, 1.0);

    // A worker of the system lane takes none of them, and serves the same.
    let watching = WorkerMetrics::new();
    let address_file = watching.address_file();
    app.start_worker_alone(&[
        ("DRIVE_WORKER_LANES", "system"),
        ("DRIVE_WORKER_METRICS_LISTEN", "127.0.0.1:0"),
        ("DRIVE_WORKER_METRICS_ADDRESS_FILE", &address_file),
    ])
    .await;
    let text = watching.scrape_idle().await;
    assert_lanes(&text, &queued, 1.0);
    assert_series(&text, "drive_worker_slots_busy", 0.0);
    assert_series(&text, "drive_worker_slots_free", 2.0);
    assert_series(&text, "drive_worker_draining", 0.0);
    assert!(
        !text.contains("drive_worker_job_wait_seconds_count"),
        "it started no job:\n{text}"
    );

    // A worker of one slot runs them: busy while it works, each start's wait counted by lane.
    let running = WorkerMetrics::new();
    let address_file = running.address_file();
    app.start_worker_alone(&[
        ("DRIVE_WORKER_CONCURRENCY", "1"),
        ("DRIVE_WORKER_METRICS_LISTEN", "127.0.0.1:0"),
        ("DRIVE_WORKER_METRICS_ADDRESS_FILE", &address_file),
    ])
    .await;
    let mut db = app.db().await;
    let (mut busy_seen, mut bulk_running_seen) = (false, false);
    let deadline = Instant::now() + Duration::from_secs(60);
    while count(&mut db, "state in ('queued', 'running')").await > 0 {
        let text = running.scrape().await;
        if value(&text, "drive_worker_slots_busy") == Some(1.0) {
            assert_series(&text, "drive_worker_slots_free", 0.0);
            busy_seen = true;
        }
        if value(&text, "drive_farm_jobs_running{lane=\"bulk\"}") == Some(1.0) {
            bulk_running_seen = true;
        }
        assert!(Instant::now() < deadline, "the jobs never ended");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(busy_seen, "the worker's slot never showed busy");
    assert!(
        bulk_running_seen,
        "the farm never showed the unzip running in the bulk lane"
    );
    for job in &jobs {
        assert_done(&app.job(&user, &job["id"]).await);
    }
    let text = running.scrape_idle().await;
    assert_series(&text, "drive_worker_slots_busy", 0.0);
    assert_series(&text, "drive_worker_slots_free", 1.0);
    for (lane, n) in [("interactive", 3.0), ("bulk", 2.0)] {
        assert_series(
            &text,
            &format!("drive_worker_job_wait_seconds_count{{lane=\"{lane}\"}}"),
            n,
        );
        assert_series(
            &text,
            &format!("drive_worker_job_wait_seconds_bucket{{lane=\"{lane}\",le=\"+Inf\"}}"),
            n,
        );
        assert_series(
            &text,
            &format!("drive_worker_job_wait_seconds_bucket{{lane=\"{lane}\",le=\"0.5\"}}"),
            0.0,
        );
        let sum = value(
            &text,
            &format!("drive_worker_job_wait_seconds_sum{{lane=\"{lane}\"}}"),
        )
        .unwrap();
        assert!(sum >= n * 1.1, "the {lane} jobs waited {sum} s in all:\n{text}");
    }
    let idle = [
        ("interactive", 0.0, 0.0),
        ("bulk", 0.0, 0.0),
        ("system", 0.0, 0.0),
    ];
    assert_lanes(&text, &idle, 0.0);
    assert_lanes(&api_metrics(&app).await, &idle, 0.0);
}
