//! Outages of what the drive stands on: PostgreSQL, Redis and the object store each taken away
//! (every connection cut, new ones dropped, through a [`TcpProxy`] in front of the shared
//! server) and brought back, one after the other, under a stream of calls and jobs. During an
//! outage every call answers within a bound, either served or with a retryable error (502 or 503,
//! `retryable: true`); afterwards the same API and worker processes serve again, unrestarted, and
//! every job the drive accepted ends done, exactly once. And one request the store ends early:
//! a result's part PUT broken off, sent again by the job process within its attempt.

use std::time::{Duration, Instant};

use drive_tests::proxy::TcpProxy;
use drive_tests::*;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The longest a call may take while a service is away.
const BOUND: Duration = Duration::from_secs(12);

/// A call during an outage: served, or refused in a way a client knows to retry.
fn served_or_retryable(what: &str, reply: &Reply, took: Duration) {
    assert!(took < BOUND, "{what} took {took:?} during the outage");
    if reply.status == StatusCode::OK {
        return;
    }
    assert!(
        matches!(reply.status.as_u16(), 502 | 503),
        "{what} answered {} during the outage: {}",
        reply.status,
        reply.body
    );
    assert_eq!(reply.body["retryable"], true, "{what}: {}", reply.body);
}

async fn timed(app: &TestApp, user: &TestUser, route: &str, body: Option<Value>) -> (Reply, Duration) {
    let started = Instant::now();
    let reply = app.call(user, route, body).await;
    (reply, started.elapsed())
}

/// Calls `route` until it succeeds (the service is back); panics past `within`.
async fn until_served(
    app: &TestApp,
    user: &TestUser,
    route: &str,
    body: Option<Value>,
    within: Duration,
) -> Reply {
    let deadline = Instant::now() + within;
    loop {
        let reply = app.call(user, route, body.clone()).await;
        if reply.status == StatusCode::OK {
            return reply;
        }
        assert!(
            Instant::now() < deadline,
            "{route} still answers {} : {}",
            reply.status,
            reply.body
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn the_drive_rides_out_outages_of_its_database_queue_and_store() {
    let admin = env("DRIVE_TEST_DATABASE_URL");
    let server = admin
        .split_once("://")
        .and_then(|(_, rest)| rest.rsplit_once('@').map_or(Some(rest), |(_, host)| Some(host)))
        .and_then(|rest| rest.split('/').next())
        .expect("the database server's address");
    let database = TcpProxy::start(&format!("tcp://{server}")).await;
    let queue = TcpProxy::start(&env("DRIVE_TEST_REDIS_URL")).await;
    let store = TcpProxy::start(&env("DRIVE_S3_ENDPOINT")).await;
    let database_address = database.endpoint.trim_start_matches("tcp://").to_string();
    let mut app = TestApp::spawn_through(
        Some(&database_address),
        &[
            ("DRIVE_REDIS_URL", &queue.endpoint),
            ("DRIVE_S3_ENDPOINT", &store.endpoint),
        ],
    )
    .await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    let file = app
        .upload(
            &user,
            "kept.bin",
            "Other",
            "application/octet-stream",
            bytes(200_000, 3),
        )
        .await;
    let checksum = json!({ "jobType": "checksum", "fileIds": [file] });

    let mut accepted = Vec::new();
    for (name, proxy) in [
        ("the database", &database),
        ("the queue", &queue),
        ("the store", &store),
    ] {
        proxy.take_down();
        let (listing, took) = timed(&app, &user, "/select-user-files", None).await;
        served_or_retryable(&format!("listing with {name} away"), &listing, took);
        let (job, took) = timed(&app, &user, "/create-file-job", Some(checksum.clone())).await;
        served_or_retryable(&format!("a job with {name} away"), &job, took);
        if job.status == StatusCode::OK {
            accepted.push(job.body["job"]["id"].clone());
        }
        let (link, took) = timed(&app, &user, "/generate-download-url", Some(json!({ "id": file }))).await;
        served_or_retryable(&format!("a link with {name} away"), &link, took);
        let health = app.http.get(format!("{}/healthz", app.url)).send().await.unwrap();
        assert_eq!(
            health.status(),
            StatusCode::OK,
            "the process is up with {name} away"
        );
        // Without Redis the API serves everything still (rate limits in memory, workers
        // polling), so it stays in its balancer.
        let ready = app.http.get(format!("{}/readyz", app.url)).send().await.unwrap();
        let expected = if name == "the queue" {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        };
        assert_eq!(ready.status(), expected, "readiness with {name} away");

        proxy.bring_up();
        // Back without a restart: the same processes serve again, and take jobs again.
        until_served(&app, &user, "/select-user-files", None, Duration::from_secs(30)).await;
        let job = until_served(
            &app,
            &user,
            "/create-file-job",
            Some(checksum.clone()),
            Duration::from_secs(30),
        )
        .await;
        accepted.push(job.body["job"]["id"].clone());
        let ready = app.http.get(format!("{}/readyz", app.url)).send().await.unwrap();
        assert_eq!(
            ready.status(),
            StatusCode::OK,
            "ready again after {name} came back"
        );
    }

    // Every job the drive accepted, during an outage or after, ends done, once.
    for id in &accepted {
        let job = app.wait_job(&user, id).await;
        assert_eq!(job["state"], "done", "{job}");
    }
    let mut db = app.db().await;
    let (jobs, ended): (i64, i64) = sqlx::query_as(
        "select count(*), count(*) filter (where state = 'done') from file_jobs where user_id = $1 and job_type = 'checksum'",
    )
    .bind(user.id)
    .fetch_one(&mut db)
    .await
    .unwrap();
    assert_eq!(
        jobs as usize,
        accepted.len(),
        "no job recorded but not answered, none lost"
    );
    assert_eq!(ended, jobs, "every job ended done");
    let ends: Vec<(String, i64)> = sqlx::query_as(
        "select fields->'job'->>'id', count(*) from drive_events
         where user_id = $1 and kind = 'job' and fields->'job'->>'state' = 'done' group by 1",
    )
    .bind(user.id)
    .fetch_all(&mut db)
    .await
    .unwrap();
    assert_eq!(ends.len(), accepted.len(), "each job's end announced: {ends:?}");
    assert!(ends.iter().all(|(_, n)| *n == 1), "a job ended twice: {ends:?}");
}

/// Workers killed with SIGKILL, one every 400 ms, through a run of 40 jobs of four accounts (ten
/// each, the most one account may have open; each zips three files into one result), with a
/// fresh worker started for each one killed: every job ends done exactly once, none is lost, and
/// each made exactly one zip.
#[tokio::test]
async fn workers_killed_at_random_through_a_run_of_jobs_lose_and_double_nothing() {
    const ACCOUNTS: usize = 4;
    const JOBS: usize = 10 * ACCOUNTS;
    let mut app = TestApp::spawn().await;
    let mut alive: Vec<usize> = Vec::new();
    for _ in 0..3 {
        alive.push(app.start_worker(&[]).await);
    }
    let mut ids = Vec::new();
    for account in 0..ACCOUNTS {
        let user = app.user(Some("Pro")).await;
        let mut files = Vec::new();
        for i in 0..3u8 {
            let name = format!("part-{i}.bin");
            files.push(
                app.upload(
                    &user,
                    &name,
                    "Other",
                    "application/octet-stream",
                    bytes(400_000, i),
                )
                .await,
            );
        }
        for i in 0..JOBS / ACCOUNTS {
            let name = format!("run-{account}-{i}");
            let job = app
                .create_job(
                    &user,
                    json!({ "jobType": "zip", "fileIds": files, "options": { "name": name } }),
                )
                .await;
            ids.push((user.clone(), job["id"].clone()));
        }
    }

    // A pseudo-random but repeatable choice of victim.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut killed = 0;
    let deadline = Instant::now() + Duration::from_secs(240);
    let mut db = app.db().await;
    loop {
        let open: i64 =
            sqlx::query_scalar("select count(*) from file_jobs where state in ('queued', 'running')")
                .fetch_one(&mut db)
                .await
                .unwrap();
        if open == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{open} jobs still open after four minutes"
        );
        tokio::time::sleep(Duration::from_millis(400)).await;
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let victim = alive.remove(state as usize % alive.len());
        app.kill_worker(victim);
        killed += 1;
        alive.push(app.start_worker(&[]).await);
    }
    assert!(
        killed >= 3,
        "the run was long enough to kill a few workers ({killed})"
    );

    // A job whose worker is killed under it three times is failed on purpose (a job that kills
    // its workers must not take the farm down); at this killing rate one now and then is.
    let mut failed = 0;
    for (user, id) in &ids {
        let job = app.job(user, id).await;
        if job["state"] == "failed" {
            let why = job["error"].as_str().unwrap_or_default();
            // (Whether the requeue loop or the next worker to claim it finds it so.)
            assert!(why.contains("interrupted 3 times"), "{job}");
            failed += 1;
            continue;
        }
        assert_eq!(job["state"], "done", "{job}");
        assert_eq!(
            job["files"].as_array().map(Vec::len),
            Some(1),
            "one zip made: {job}"
        );
    }
    let doubled: i64 = sqlx::query_scalar(
        "select count(*) from (select file_name from files where file_name like 'run-%' group by 1 having count(*) > 1) d",
    )
    .fetch_one(&mut db)
    .await
    .unwrap();
    assert_eq!(doubled, 0, "no job's zip stored twice");
    let ends: Vec<i64> = sqlx::query_scalar(
        "select count(*) from drive_events where kind = 'job' and fields->'job'->>'state' in ('done', 'failed')
         group by fields->'job'->>'id'",
    )
    .fetch_all(&mut db)
    .await
    .unwrap();
    assert_eq!(ends.len(), JOBS, "every job's end announced");
    assert!(ends.iter().all(|&n| n == 1), "a job ended twice: {ends:?}");
    println!(
        "{JOBS} jobs, {killed} workers killed with SIGKILL: {} done, {failed} failed after three kills, 0 lost, 0 doubled",
        JOBS - failed
    );
}

/// Whether `request` is the PUT of a multipart upload's first part.
fn first_part(request: &str) -> bool {
    request.starts_with("PUT ") && request.split(['?', '&']).any(|pair| pair == "partNumber=1")
}

#[tokio::test]
async fn a_part_whose_put_the_store_ends_early_is_sent_again_from_its_file_within_the_attempt() {
    // The worker (and so the part URLs it presigns for its job process) reaches the store
    // through a proxy that breaks off the first part's PUT a mebibyte in.
    let store = TcpProxy::start(&env("DRIVE_S3_ENDPOINT")).await;
    let mut app = TestApp::spawn().await;
    app.start_worker(&[("DRIVE_S3_ENDPOINT", &store.endpoint)]).await;
    let user = app.user(Some("Pro")).await;
    let video = bytes(70 * 1024 * 1024, 11);
    let file = app
        .upload(&user, "long.mp4", "Video", "video/mp4", video.clone())
        .await;
    store.cut_first(first_part, 1024 * 1024);

    // Expected to take two 64 MiB parts, the zip streams its first part from its first byte.
    let job = app
        .run_job(&user, json!({ "jobType": "zip", "fileIds": [file] }))
        .await;
    assert_eq!(job["state"], "done", "{job}");
    assert!(store.has_cut(), "the first part's PUT was broken off");
    let attempts: i32 = sqlx::query_scalar("select attempts from file_jobs where id::text = $1")
        .bind(job["id"].as_str().unwrap())
        .fetch_one(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(attempts, 1, "the part went again from its file, not the job");
    let zipped = app.download(&user, job["files"][0]["id"].as_str().unwrap()).await;
    assert_eq!(job["result"]["bytes"], zipped.len() as u64, "{job}");
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(zipped)).unwrap();
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut archive.by_index(0).unwrap(), &mut out).unwrap();
    assert!(out == video, "the video comes back as it went in");
}
