//! The end-to-end harness. Every test gets its own API process (the real `drive-api`
//! binary), its own database and its own pair of buckets in the run's object store, and the
//! process is killed by its PID when the test's [`TestApp`] is dropped.
//!
//! With `DRIVE_TEST_SCALE_OUT` set, every test app is two API processes behind a balancer
//! ([`proxy::TcpProxy::balance`]), and a test that starts a worker gets two more beside it:
//! the suite run so shows the drive works scaled out (`scripts/test` runs it so after the
//! plain run).
//!
//! `scripts/test` starts the object store and sets `DRIVE_S3_ENDPOINT`,
//! `DRIVE_S3_ACCESS_KEY_ID`, `DRIVE_S3_SECRET_ACCESS_KEY`, `DRIVE_TEST_DATABASE_URL` (an
//! administrative connection used to make and drop test databases) and
//! `DRIVE_TEST_REDIS_URL`.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use drive_core::id::{FileId, JobId, UserId};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::{Connection, PgConnection};
use uuid::Uuid;

pub mod bench;
pub mod browser;
pub mod image_providers;
pub mod local_model;
pub mod media;
pub mod oauth;
pub mod origin;
pub mod provider;
pub mod proxy;
pub mod receiver;
pub mod scratch;
pub mod senders;
pub mod tool_server;

/// The application id every file-service call carries in `X-Drive-App`.
pub const APP_ID: &str = "drive-test-app";
/// The `DRIVE_SECRET` of every test app.
pub const SECRET: &str = "1060f4d1e0e512463ddcb070c0682b09a3e9e245fa1c04f861acaaee93047a0b";

pub fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set: run the tests with scripts/test"))
}

/// A binary of this workspace, next to the test executable's `deps` folder.
pub fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe.parent().and_then(|d| d.parent()).expect("target directory");
    let path = dir.join(name);
    assert!(path.exists(), "{} is not built: run scripts/test", path.display());
    path
}

pub struct TestApp {
    /// The API's base URL, like `http://127.0.0.1:41234`.
    pub url: String,
    /// Where the (first) API serves `/metrics`, like `http://127.0.0.1:41235`: every test app's
    /// is on (`DRIVE_METRICS_LISTEN=127.0.0.1:0`) unless the test turns it off.
    pub metrics_url: Option<String>,
    /// This test's queue: the prefix of every Redis key its API and workers use.
    pub queue: String,
    pub http: reqwest::Client,
    /// This test's own database, for checks the API does not expose.
    pub database_url: String,
    pub private_bucket: String,
    pub public_bucket: String,
    database: String,
    child: Child,
    log: PathBuf,
    /// API processes beside the first, and their logs ([`TestApp::start_api`]; scaled out, one).
    others: Vec<(Child, PathBuf)>,
    /// Scaled out: the balancer in front of both API processes, which `url` names (held: it
    /// stops when dropped).
    _balancer: Option<proxy::TcpProxy>,
    /// Scaled out: the two workers started beside the test's first.
    companions: Vec<Worker>,
    /// Where this test's workers keep their jobs' files.
    work_dir: PathBuf,
    /// The environment the API was started with, which workers share.
    environment: Vec<(String, String)>,
    workers: Vec<Worker>,
}

/// A `drive-worker work` process of a test app.
pub struct Worker {
    child: Child,
    log: PathBuf,
    /// The name it takes jobs under (as the job rows record it).
    pub name: String,
}

/// Every process on this machine, by PID.
pub fn pids() -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .collect()
}

/// The fields of `/proc/PID/stat` from the state on (field 3 of proc(5) is the first), or none
/// when the process is gone. `pid (name) state ppid …`: the name may hold spaces, so the fields
/// are read after its `)`.
pub fn stat_fields(pid: u32) -> Vec<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Every `drive-worker run-job` process on this machine, as (PID, parent's PID).
pub fn job_processes() -> Vec<(u32, u32)> {
    pids()
        .into_iter()
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmdline).contains("run-job")
        })
        .filter_map(|pid| Some((pid, stat_fields(pid).get(1)?.parse().ok()?)))
        .collect()
}

/// Whether this run is scaled out (`DRIVE_TEST_SCALE_OUT`).
pub fn scaled_out() -> bool {
    std::env::var_os("DRIVE_TEST_SCALE_OUT").is_some()
}

/// The lock held to build, drop or copy a template: exclusively to build or drop one, shared to
/// copy one, so no run's copy meets another's drop.
const TEMPLATE_LOCK: i64 = 0x6472_6976_655f_746d;

/// Makes `database` a copy of a template database on which the API's migrations have run,
/// made once per set of migrations (named by their checksums) and kept on the server for the
/// runs after; the API then finds nothing to apply. Migrating each test's database instead
/// costs half a second of the server's time, twice scaled out, over some seven hundred tests.
/// A template of other migrations (another checkout's, an older one's) is dropped when this
/// one is made. Each test's API still runs the migrator at start, as in production.
async fn copy_migrated(admin: &mut PgConnection, admin_url: &str, database: &str) {
    let mut checksums = std::hash::DefaultHasher::new();
    for migration in drive_core::db::MIGRATOR.iter() {
        std::hash::Hash::hash(&(migration.version, &migration.checksum[..]), &mut checksums);
    }
    let template = format!("drive_template_{:016x}", std::hash::Hasher::finish(&checksums));
    lock(admin, "pg_advisory_lock_shared").await;
    let made = database_exists(admin, &template).await;
    if !made {
        lock(admin, "pg_advisory_unlock_shared").await;
        lock(admin, "pg_advisory_lock").await;
        if !database_exists(admin, &template).await {
            make_template(admin, admin_url, &template).await;
        }
    }
    sqlx::query(&format!("create database {database} template {template}"))
        .execute(&mut *admin)
        .await
        .expect("create test database");
    let unlock = if made {
        "pg_advisory_unlock_shared"
    } else {
        "pg_advisory_unlock"
    };
    lock(admin, unlock).await;
}

/// Whether the server has a database named `name`.
async fn database_exists(admin: &mut PgConnection, name: &str) -> bool {
    sqlx::query_scalar("select exists (select from pg_database where datname = $1)")
        .bind(name)
        .fetch_one(admin)
        .await
        .expect("look for a database")
}

/// Takes or lets go of [`TEMPLATE_LOCK`] with `function`.
async fn lock(admin: &mut PgConnection, function: &str) {
    sqlx::query(&format!("select {function}($1)"))
        .bind(TEMPLATE_LOCK)
        .execute(admin)
        .await
        .expect("the template lock");
}

/// Drops the templates of other migrations, then migrates a new database with `drive-api
/// migrate` and names it `template` only once that succeeded (a run killed half way leaves
/// no template that lacks a migration).
async fn make_template(admin: &mut PgConnection, admin_url: &str, template: &str) {
    let others: Vec<String> =
        sqlx::query_scalar("select datname from pg_database where datname like 'drive\\_template\\_%'")
            .fetch_all(&mut *admin)
            .await
            .expect("list template databases");
    for other in others {
        sqlx::query(&format!("drop database if exists {other} with (force)"))
            .execute(&mut *admin)
            .await
            .expect("drop another template database");
    }
    let building = format!("{template}_building");
    sqlx::query(&format!("create database {building}"))
        .execute(&mut *admin)
        .await
        .expect("create the template database");
    let migrated = Command::new(bin("drive-api"))
        .arg("migrate")
        .env("DRIVE_DATABASE_URL", with_database(admin_url, &building))
        .output()
        .expect("run drive-api migrate");
    assert!(
        migrated.status.success(),
        "drive-api migrate on the template database failed:\n{}",
        String::from_utf8_lossy(&migrated.stderr)
    );
    sqlx::query(&format!("alter database {building} rename to {template}"))
        .execute(&mut *admin)
        .await
        .expect("name the template database");
}

/// An API process [`start_api`] started: its base URL (empty when it did not start) and its
/// metrics listener's (`DRIVE_METRICS_LISTEN`; none when not served).
struct Started {
    child: Child,
    url: String,
    metrics_url: Option<String>,
}

/// Starts `drive-api serve` with `environment` (its metrics on a port of their own unless it
/// says otherwise), its stderr in `log`.
async fn start_api(environment: &[(String, String)], log: &PathBuf) -> Started {
    let mut command = Command::new(bin("drive-api"));
    command
        .arg("serve")
        .env("DRIVE_METRICS_LISTEN", "127.0.0.1:0")
        .envs(environment.iter().map(|(k, v)| (k, v)))
        .env("DRIVE_LISTEN", "127.0.0.1:0")
        .env("DRIVE_LOG", "info,drive_api=debug")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).expect("log file"));
    let mut child = command.spawn().expect("start drive-api");
    let stdout = child.stdout.take().expect("stdout");
    // `metrics on URL` first when they are served, then `listening on URL`.
    let urls = tokio::task::spawn_blocking(move || {
        let mut metrics_url = None;
        for line in BufReader::new(stdout).lines() {
            let line = line.ok()?;
            if let Some(url) = line.trim().strip_prefix("metrics on ") {
                metrics_url = Some(url.to_string());
            } else {
                return Some((
                    line.trim().strip_prefix("listening on ")?.to_string(),
                    metrics_url,
                ));
            }
        }
        None
    });
    let urls = tokio::time::timeout(Duration::from_secs(60), urls)
        .await
        .ok()
        .and_then(|r| r.ok().flatten());
    let (url, metrics_url) = urls.unwrap_or_default();
    Started {
        child,
        url,
        metrics_url,
    }
}

impl TestApp {
    pub async fn spawn() -> TestApp {
        TestApp::spawn_with(&[]).await
    }

    /// Starts an API whose environment is the default one plus `extra` (which wins).
    pub async fn spawn_with(extra: &[(&str, &str)]) -> TestApp {
        TestApp::spawn_through(None, extra).await
    }

    /// [`TestApp::spawn_with`], its processes reaching PostgreSQL at `database_at` (`host:port`,
    /// a [`proxy::TcpProxy`] in front of the shared server, say) rather than directly. The test's
    /// own checks ([`TestApp::db`]) still go straight to the server.
    pub async fn spawn_through(database_at: Option<&str>, extra: &[(&str, &str)]) -> TestApp {
        let id = Uuid::new_v4().simple().to_string();
        let database = format!("drive_test_{id}");
        let admin_url = env("DRIVE_TEST_DATABASE_URL");
        let mut admin = PgConnection::connect(&admin_url).await.expect("admin connection");
        copy_migrated(&mut admin, &admin_url, &database).await;
        let database_url = with_database(&admin_url, &database);
        let private_bucket = format!("t{}-private", &id[..12]);
        let public_bucket = format!("t{}-public", &id[..12]);
        let log = std::env::temp_dir().join(format!("drive-api-{id}.log"));

        let queue = format!("drive-test-{id}");
        let work_dir = std::env::temp_dir().join(format!("drive-jobs-{id}"));
        let served_url = match database_at {
            Some(address) => through(&database_url, address),
            None => database_url.clone(),
        };
        let mut environment: Vec<(String, String)> = [
            ("DRIVE_DATABASE_URL", served_url.as_str()),
            ("DRIVE_REDIS_URL", &env("DRIVE_TEST_REDIS_URL")),
            ("DRIVE_QUEUE", &queue),
            // Workers presumed dead after 1.5 s of silence, so a killed one is replaced quickly.
            ("DRIVE_HEARTBEAT_SECONDS", "0.5"),
            ("DRIVE_JOB_WORK_DIR", &work_dir.to_string_lossy()),
            ("DRIVE_WORKER_CONCURRENCY", "2"),
            ("DRIVE_APP_ID", APP_ID),
            ("DRIVE_SECRET", SECRET),
            ("DRIVE_S3_ENDPOINT", &env("DRIVE_S3_ENDPOINT")),
            ("DRIVE_S3_ACCESS_KEY_ID", &env("DRIVE_S3_ACCESS_KEY_ID")),
            ("DRIVE_S3_SECRET_ACCESS_KEY", &env("DRIVE_S3_SECRET_ACCESS_KEY")),
            ("DRIVE_PRIVATE_BUCKET", &private_bucket),
            ("DRIVE_PUBLIC_BUCKET", &public_bucket),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        for (k, v) in extra {
            environment.retain(|(name, _)| name != k);
            environment.push((k.to_string(), v.to_string()));
        }
        // Scaled out, both processes are told the balancer's address as the site's, as
        // production behind a balancer is (their links name it).
        let balancer = scaled_out().then(|| proxy::TcpProxy::balancer("http"));
        let mut api_environment = environment.clone();
        if let Some(front) = &balancer {
            api_environment.push(("DRIVE_SITE_URL".to_string(), front.endpoint.clone()));
        }
        let Started {
            child,
            mut url,
            metrics_url,
        } = start_api(&api_environment, &log).await;
        let mut others = Vec::new();
        if let Some(front) = &balancer
            && !url.is_empty()
        {
            let other = start_api(&api_environment, &log.with_extension("2.log")).await;
            let other_url = other.url;
            others.push((other.child, log.with_extension("2.log")));
            front.balance_over(&[&url, &other_url]);
            url = if other_url.is_empty() {
                other_url
            } else {
                front.endpoint.clone()
            };
        }
        // Workers write public links into job events: on this API, as its own are.
        environment.push(("DRIVE_SITE_URL".to_string(), url.clone()));
        let app = TestApp {
            url,
            metrics_url,
            queue,
            http: reqwest::Client::new(),
            database_url,
            private_bucket,
            public_bucket,
            database,
            child,
            log,
            others,
            _balancer: balancer,
            companions: Vec::new(),
            work_dir,
            environment,
            workers: Vec::new(),
        };
        assert!(!app.url.is_empty(), "drive-api did not start:\n{}", app.log());
        app
    }

    /// Starts a `drive-worker work` on this app's queue (`extra` added to its environment)
    /// and waits until it takes jobs; answers its index in [`TestApp::workers`]. Scaled out,
    /// the first one brings two more (same environment) that share the queue with it.
    pub async fn start_worker(&mut self, extra: &[(&str, &str)]) -> usize {
        let worker = self.spawn_worker(extra).await;
        self.workers.push(worker);
        if scaled_out() && self.companions.is_empty() {
            for _ in 0..2 {
                let companion = self.spawn_worker(extra).await;
                self.companions.push(companion);
            }
        }
        self.workers.len() - 1
    }

    async fn spawn_worker(&self, extra: &[(&str, &str)]) -> Worker {
        let log = std::env::temp_dir().join(format!("drive-worker-{}.log", Uuid::new_v4().simple()));
        let mut command = Command::new(bin("drive-worker"));
        command
            .arg("work")
            .envs(self.environment.iter().map(|(k, v)| (k, v)))
            .envs(extra.iter().copied())
            .env("DRIVE_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("worker log file"));
        let mut child = command.spawn().expect("start drive-worker");
        let stdout = child.stdout.take().expect("stdout");
        let ready = tokio::task::spawn_blocking(move || {
            let mut line = String::new();
            BufReader::new(stdout).read_line(&mut line).ok();
            line.trim()
                .strip_prefix("worker ")
                .and_then(|l| l.strip_suffix(" ready"))
                .map(str::to_string)
        });
        let name = tokio::time::timeout(Duration::from_secs(60), ready)
            .await
            .ok()
            .and_then(|r| r.ok().flatten());
        let worker = Worker {
            child,
            log,
            name: name.unwrap_or_default(),
        };
        assert!(
            !worker.name.is_empty(),
            "drive-worker did not start:\n{}",
            std::fs::read_to_string(&worker.log).unwrap_or_default()
        );
        worker
    }

    pub fn worker(&self, index: usize) -> &Worker {
        &self.workers[index]
    }

    /// What every worker of this app has logged, companions included.
    pub fn worker_logs(&self) -> String {
        self.workers
            .iter()
            .chain(&self.companions)
            .map(|w| std::fs::read_to_string(&w.log).unwrap_or_default())
            .collect()
    }

    /// The PID of a worker (`drive-worker work`): the supervisor of its jobs' processes.
    pub fn worker_pid(&self, index: usize) -> u32 {
        self.workers[index].child.id()
    }

    /// The PIDs of a worker's job processes (`drive-worker run-job` children): the job it runs
    /// and the spare it keeps started ahead.
    pub fn job_processes(&self, index: usize) -> Vec<u32> {
        let parent = self.workers[index].child.id();
        job_processes()
            .into_iter()
            .filter(|&(_, ppid)| ppid == parent)
            .map(|(pid, _)| pid)
            .collect()
    }

    /// Kills a worker with SIGKILL, as a crash or the OOM killer would.
    pub fn kill_worker(&mut self, index: usize) {
        let worker = &mut self.workers[index];
        let _ = worker.child.kill();
        let _ = worker.child.wait();
    }

    /// Starts a worker as [`TestApp::start_worker`] does, but alone even scaled out (no
    /// companions beside it): for tests that watch which worker takes which job, or stop one.
    pub async fn start_worker_alone(&mut self, extra: &[(&str, &str)]) -> usize {
        let worker = self.spawn_worker(extra).await;
        self.workers.push(worker);
        self.workers.len() - 1
    }

    /// Sends a worker SIGTERM (what a container runtime sends to stop it) and returns at once:
    /// the worker drains meanwhile ([`TestApp::worker_exit`] waits for its end).
    pub fn signal_worker(&self, index: usize) {
        let pid = self.workers[index].child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().expect("kill");
        assert!(sent.success(), "kill -TERM {pid}");
    }

    /// A worker's exit status once it has exited, waiting up to `within` for it.
    pub async fn worker_exit(&mut self, index: usize, within: Duration) -> std::process::ExitStatus {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let worker = &mut self.workers[index];
            if let Some(status) = worker.child.try_wait().expect("the worker's status") {
                return status;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the worker {} did not exit within {within:?}",
                worker.name
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Sends a worker SIGTERM and answers its exit status once it has drained and exited
    /// (within `within`).
    pub async fn terminate_worker(&mut self, index: usize, within: Duration) -> std::process::ExitStatus {
        self.signal_worker(index);
        self.worker_exit(index, within).await
    }

    /// Sends the API process SIGTERM (what a container runtime sends to stop it) and answers
    /// its exit status once it has exited.
    pub async fn terminate_api(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().expect("kill");
        assert!(sent.success(), "kill -TERM {pid}");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().expect("the API's status") {
                return status;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the API did not exit on SIGTERM"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Starts one more API process on this app's database, queue and buckets; answers its URL.
    /// The app's own calls still go to [`TestApp::url`].
    pub async fn start_api(&mut self) -> String {
        let log = self.log.with_extension(format!("{}.log", self.others.len() + 2));
        let Started { child, url, .. } = start_api(&self.environment, &log).await;
        self.others.push((child, log));
        assert!(!url.is_empty(), "drive-api did not start:\n{}", self.log());
        url
    }

    /// Starts one more API process with `extra` added to this app's environment, expecting it
    /// to refuse to start (a setting it cannot take); answers what it wrote to stderr.
    pub fn refused_start(&self, extra: &[(&str, &str)]) -> String {
        self.refused("drive-api", "serve", extra)
    }

    /// [`TestApp::refused_start`] for a worker (`drive-worker work`).
    pub fn refused_worker_start(&self, extra: &[(&str, &str)]) -> String {
        self.refused("drive-worker", "work", extra)
    }

    fn refused(&self, program: &str, command: &str, extra: &[(&str, &str)]) -> String {
        let mut child = Command::new(bin(program))
            .arg(command)
            .envs(self.environment.iter().map(|(k, v)| (k, v)))
            .envs(extra.iter().copied())
            .env("DRIVE_LISTEN", "127.0.0.1:0")
            .env("DRIVE_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {program}: {e}"));
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while child.try_wait().expect("the process's status").is_none() {
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("{program} started with {extra:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let out = child.wait_with_output().expect("the process's stderr");
        assert!(!out.status.success(), "{program} exited 0 with {extra:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    /// What the API processes wrote to stderr so far.
    pub fn log(&self) -> String {
        let mut log = std::fs::read_to_string(&self.log).unwrap_or_default();
        for (_, other) in &self.others {
            log.push_str(&std::fs::read_to_string(other).unwrap_or_default());
        }
        log
    }

    /// Runs `drive-api admin ARGS…` against this test's database and buckets (on the run's
    /// store directly) and answers its stdout.
    pub fn admin(&self, args: &[&str]) -> String {
        let out = self.admin_with(&[], args);
        assert!(
            out.status.success(),
            "admin {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    }

    /// Runs `drive-api admin` on this app's database and buckets with `extra` in its
    /// environment (which wins), whatever it answers.
    pub fn admin_with(&self, extra: &[(&str, &str)], args: &[&str]) -> std::process::Output {
        Command::new(bin("drive-api"))
            .arg("admin")
            .args(args)
            .env("DRIVE_DATABASE_URL", &self.database_url)
            .env("DRIVE_S3_ENDPOINT", env("DRIVE_S3_ENDPOINT"))
            .env("DRIVE_S3_ACCESS_KEY_ID", env("DRIVE_S3_ACCESS_KEY_ID"))
            .env("DRIVE_S3_SECRET_ACCESS_KEY", env("DRIVE_S3_SECRET_ACCESS_KEY"))
            .env("DRIVE_PRIVATE_BUCKET", &self.private_bucket)
            .env("DRIVE_PUBLIC_BUCKET", &self.public_bucket)
            .env("DRIVE_LOG", "warn")
            .envs(extra.iter().copied())
            .output()
            .expect("run drive-api admin")
    }

    /// A new invitation to set the password of the account `handle` (`drive-api admin invite`):
    /// its token, its link checked to lead to the app.
    pub fn invitation(&self, handle: &str) -> String {
        let made: Value =
            serde_json::from_str(&self.admin(&["invite", "--handle", handle, "--json"])).unwrap();
        let link = made["link"].as_str().unwrap();
        assert!(link.contains("/app/#invite=drive_invite_"), "{made}");
        made["invitation"].as_str().unwrap().to_string()
    }

    /// A new account on `plan` (`None`: no plan), signed in.
    pub async fn user(&self, plan: Option<&str>) -> TestUser {
        let handle = format!("user-{}", Uuid::new_v4().simple());
        let mut args = vec!["create-user", "--handle", &handle, "--json"];
        if let Some(plan) = plan {
            args.extend(["--plan", plan]);
        }
        let created: Value = serde_json::from_str(&self.admin(&args)).expect("admin json");
        let api_token = created["apiToken"].as_str().expect("apiToken").to_string();
        let session = self.exchange(&api_token).await;
        assert_eq!(session.status, StatusCode::OK, "exchange: {}", session.body);
        TestUser {
            id: created["userId"].as_str().unwrap().parse().unwrap(),
            token_id: created["tokenId"].as_str().unwrap().to_string(),
            api_token,
            session: session.body["gelToken"].as_str().unwrap().to_string(),
            handle,
        }
    }

    pub async fn exchange(&self, api_token: &str) -> Reply {
        let response = self
            .http
            .post(format!("{}/exchange-token", self.url))
            .bearer_auth(api_token)
            .send()
            .await
            .expect("exchange-token");
        Reply::read(response).await
    }

    /// POSTs `body` (when given) to `route` as `user` with the application header.
    pub async fn call(&self, user: &TestUser, route: &str, body: Option<Value>) -> Reply {
        self.send(Some(&user.session), Some(APP_ID), route, body).await
    }

    /// [`TestApp::call`] on a task of its own, for a call that holds (a `wait`): answers when it
    /// answered, and its body.
    pub fn call_in_background(
        &self,
        user: &TestUser,
        route: &str,
        body: Value,
    ) -> tokio::task::JoinHandle<(std::time::Instant, Value)> {
        let request = self
            .http
            .post(format!("{}{route}", self.url))
            .bearer_auth(&user.session)
            .header("X-Drive-App", APP_ID)
            .json(&body);
        tokio::spawn(async move {
            let reply = Reply::read(request.send().await.expect("request")).await;
            assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
            (std::time::Instant::now(), reply.body)
        })
    }

    /// POSTs with exactly the credentials given.
    pub async fn send(
        &self,
        session: Option<&str>,
        app: Option<&str>,
        route: &str,
        body: Option<Value>,
    ) -> Reply {
        let mut request = self.http.post(format!("{}{route}", self.url));
        if let Some(session) = session {
            request = request.bearer_auth(session);
        }
        if let Some(app) = app {
            request = request.header("X-Drive-App", app);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        Reply::read(request.send().await.expect("request")).await
    }

    /// Uploads `bytes` through the presigned form and records the file; answers its id.
    pub async fn upload(
        &self,
        user: &TestUser,
        name: &str,
        kind: &str,
        mime: &str,
        bytes: Vec<u8>,
    ) -> FileId {
        self.upload_at(user, &user.key(name), name, kind, mime, bytes)
            .await
    }

    /// [`TestApp::upload`] under the object key `key`.
    pub async fn upload_at(
        &self,
        user: &TestUser,
        key: &str,
        name: &str,
        kind: &str,
        mime: &str,
        bytes: Vec<u8>,
    ) -> FileId {
        let input = json!({
            "type": kind, "fileName": name, "fileSize": bytes.len(), "objectKey": key, "mimeType": mime,
        });
        let urls = self.call(user, "/generate-file-urls", Some(input.clone())).await;
        assert_eq!(urls.status, StatusCode::OK, "generate-file-urls: {}", urls.body);
        let stored = post_form(&urls.body, bytes, mime).await;
        assert!(stored.is_success(), "storage refused the form: {stored}");
        let mut insert = input;
        insert["isPublic"] = json!(false);
        insert["creator"] = json!({ "id": user.id });
        let inserted = self.call(user, "/insert-file", Some(insert)).await;
        assert_eq!(inserted.status, StatusCode::OK, "insert-file: {}", inserted.body);
        inserted.body["id"].as_str().unwrap().parse().unwrap()
    }

    /// The object key a file is stored under.
    pub async fn object_key(&self, file: FileId) -> String {
        sqlx::query_scalar("select object_key from files where id = $1")
            .bind(file)
            .fetch_one(&mut self.db().await)
            .await
            .expect("the file's row")
    }

    /// The bytes of one of `user`'s files, through a download link.
    pub async fn download(&self, user: &TestUser, id: &str) -> Vec<u8> {
        let link = self
            .call(user, "/generate-download-url", Some(json!({ "id": id })))
            .await;
        assert_eq!(
            link.status,
            StatusCode::OK,
            "generate-download-url: {}",
            link.body
        );
        let (status, bytes) = get(link.body["downloadUrl"].as_str().expect("downloadUrl")).await;
        assert_eq!(status, StatusCode::OK);
        bytes
    }

    /// Creates a file job (the body of `/create-file-job`); answers the queued job.
    pub async fn create_job(&self, user: &TestUser, body: Value) -> Value {
        self.start_job(user, "/create-file-job", body).await
    }

    /// Calls a route that starts a job (`/create-file-job`, `/create-archive-request`,
    /// `/set-video-thumbnail` with `at`); answers the queued job.
    pub async fn start_job(&self, user: &TestUser, route: &str, body: Value) -> Value {
        let created = self.call(user, route, Some(body)).await;
        assert!(created.status.is_success(), "{route}: {}", created.body);
        // A thumbnail's answer carries `/create-file-job`'s whole answer as its `job`.
        let job = match route {
            "/set-video-thumbnail" => &created.body["job"]["job"],
            _ => &created.body["job"],
        };
        assert_eq!(job["state"], "queued", "{route}: {}", created.body);
        job.clone()
    }

    /// A job as `/select-file-jobs` shows it now.
    pub async fn job(&self, user: &TestUser, id: &Value) -> Value {
        let listed = self
            .call(user, "/select-file-jobs", Some(json!({ "ids": [id] })))
            .await;
        assert_eq!(listed.status, StatusCode::OK, "select-file-jobs: {}", listed.body);
        listed.body["jobs"][0].clone()
    }

    /// Polls a job until it has ended (done, failed or stopped); answers it.
    pub async fn wait_job(&self, user: &TestUser, id: &Value) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
        loop {
            let job = self.job(user, id).await;
            if ["done", "failed", "stopped"].contains(&job["state"].as_str().unwrap_or_default()) {
                return job;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the job never ended: {job}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The job once it has made at least `n` files, while it still runs (failing the test
    /// should it end first).
    pub async fn wait_made(&self, user: &TestUser, id: &Value, n: usize) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let job = self.job(user, id).await;
            if job["files"].as_array().map_or(0, Vec::len) >= n {
                return job;
            }
            assert!(
                !matches!(job["state"].as_str(), Some("done" | "failed" | "stopped")),
                "the job ended before it made {n} files: {job}"
            );
            assert!(
                tokio::time::Instant::now() < deadline,
                "the job never made {n} files: {job}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Creates a job and waits for its end.
    pub async fn run_job(&self, user: &TestUser, body: Value) -> Value {
        let job = self.create_job(user, body).await;
        self.wait_job(user, &job["id"]).await
    }

    /// The file as `/search-files` shows it once the drive's reading of its metadata has
    /// ended (read or failed).
    pub async fn reading(&self, user: &TestUser, id: FileId) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let found = self
                .call(user, "/search-files", Some(json!({ "limit": 200 })))
                .await;
            assert_eq!(found.status, 200, "{}", found.body);
            let file = found.body["files"]
                .as_array()
                .and_then(|files| files.iter().find(|f| f["id"] == id.to_string()))
                .cloned()
                .unwrap_or_else(|| panic!("{id} is not in {}", found.body));
            if file["metadataState"] != "pending" {
                return file;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the file was never read: {file}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The drive's readMetadata job of a file, once it has ended: its state and attempts. The
    /// file shows as read (or failed) a moment before its job row ends.
    pub async fn reading_job(&self, file: FileId, within: Duration) -> (String, i32) {
        let mut db = self.db().await;
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let job: Option<(String, i32)> = sqlx::query_as(
                "select state, attempts from file_jobs where job_type = 'readMetadata' and $1 = any(input_ids)",
            )
            .bind(file)
            .fetch_optional(&mut db)
            .await
            .expect("reading file_jobs");
            if let Some((state, attempts)) = &job
                && ["done", "failed", "stopped"].contains(&state.as_str())
            {
                return (state.clone(), *attempts);
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the reading of {file} has not ended after {within:?}: {job:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The events `/select-drive-events` answers for `body`, once there are at least `n`: an
    /// event shows when every transaction on the server older than it has ended, which with
    /// other tests sharing the server can take a moment.
    pub async fn wait_events(&self, user: &TestUser, body: Value, n: usize) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let reply = self.call(user, "/select-drive-events", Some(body.clone())).await;
            assert_eq!(
                reply.status,
                StatusCode::OK,
                "select-drive-events: {}",
                reply.body
            );
            let events = reply.body["events"].as_array().cloned().unwrap_or_default();
            if events.len() >= n {
                return events;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "fewer than {n} events: {}",
                reply.body
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub async fn db(&self) -> PgConnection {
        PgConnection::connect(&self.database_url)
            .await
            .expect("test database")
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        for (other, _) in &mut self.others {
            let _ = other.kill();
            let _ = other.wait();
        }
        for worker in self.workers.iter_mut().chain(self.companions.iter_mut()) {
            let _ = worker.child.kill();
            let _ = worker.child.wait();
            if std::thread::panicking() {
                eprintln!(
                    "--- drive-worker {} log ---\n{}",
                    worker.name,
                    std::fs::read_to_string(&worker.log).unwrap_or_default()
                );
            }
            let _ = std::fs::remove_file(&worker.log);
        }
        if std::thread::panicking() {
            eprintln!("--- drive-api log ---\n{}", self.log());
        }
        let _ = std::fs::remove_file(&self.log);
        for (_, other_log) in &self.others {
            let _ = std::fs::remove_file(other_log);
        }
        // Killed workers leave their jobs' folders behind.
        let _ = std::fs::remove_dir_all(&self.work_dir);
        // This test's queue keys; Redis is shared with other tests and CI.
        let _ = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "redis-cli -u \"$0\" --scan --pattern '*{}*' | xargs -r redis-cli -u \"$0\" del >/dev/null",
                self.queue
            ))
            .arg(env("DRIVE_TEST_REDIS_URL"))
            .status();
        let admin_url = env("DRIVE_TEST_DATABASE_URL");
        let database = self.database.clone();
        let database_url = self.database_url.clone();
        // Drop runs inside the test's runtime; a separate thread may block on its own.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(async {
                // A job left waiting or running is a test that ended before its work did.
                let mut own = PgConnection::connect(&database_url).await?;
                let unfinished: Vec<(JobId, String, String)> = sqlx::query_as(
                    "select id, job_type, state from file_jobs where state in ('queued', 'running') order by created_at",
                )
                .fetch_all(&mut own)
                .await?;
                for (id, job_type, state) in unfinished {
                    eprintln!("the test ended with job {id} ({job_type}) still {state}");
                }
                drop(own);
                let mut admin = PgConnection::connect(&admin_url).await?;
                sqlx::query(&format!("drop database if exists {database} with (force)"))
                    .execute(&mut admin)
                    .await?;
                Ok::<_, sqlx::Error>(())
            })?;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
        })
        .join();
    }
}

/// `url` with its `host:port` replaced by `address`.
fn through(url: &str, address: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a database URL with a scheme");
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let user = authority.strip_suffix(host).unwrap_or("");
    format!("{scheme}://{user}{address}/{path}")
}

fn with_database(url: &str, database: &str) -> String {
    let (base, query) = url.split_once('?').map_or((url, None), |(b, q)| (b, Some(q)));
    let base = base.rsplit_once('/').map_or(base, |(b, _)| b);
    match query {
        Some(q) => format!("{base}/{database}?{q}"),
        None => format!("{base}/{database}"),
    }
}

#[derive(Clone)]
pub struct TestUser {
    pub id: UserId,
    pub handle: String,
    pub token_id: String,
    pub api_token: String,
    pub session: String,
}

impl TestUser {
    /// A fresh object key under this user's prefix.
    pub fn key(&self, name: &str) -> String {
        format!("users/{}/{}/{name}", self.id, Uuid::new_v4().simple())
    }
}

/// A response: status and JSON body (`Value::Null` when the body is not JSON).
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub body: Value,
}

impl Reply {
    pub async fn read(response: reqwest::Response) -> Reply {
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        Reply {
            status,
            body: serde_json::from_str(&text).unwrap_or(Value::Null),
        }
    }

    /// Asserts the spec's error body with this status and code; answers the body.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: &str) -> &Value {
        assert_eq!(self.status.as_u16(), status, "{}", self.body);
        assert_eq!(self.body["code"], code, "{}", self.body);
        assert!(
            self.body["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{}",
            self.body
        );
        assert!(self.body["retryable"].is_boolean(), "{}", self.body);
        &self.body
    }

    /// Asserts a 400 naming `field` with `code`.
    #[track_caller]
    pub fn assert_bad_field(&self, code: &str, field: &str) {
        self.assert_error(400, code);
        assert_eq!(self.body["field"], field, "{}", self.body);
    }
}

/// The key of an authenticator app from the base32 `/begin-totp` answers (RFC 4648), as a
/// person's phone reads it, for the tests to make codes with.
pub fn totp_key(secret: &str) -> Vec<u8> {
    const ALPHABET: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let (mut buffer, mut bits, mut key) = (0u32, 0, Vec::new());
    for c in secret.chars() {
        buffer = (buffer << 5) | ALPHABET.find(c).expect("base32") as u32;
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            key.push((buffer >> bits) as u8);
        }
    }
    key
}

/// POSTs bytes through a presigned form (`uploadUrl`, `uploadForm`) the way the spec says:
/// every form field unchanged, then the file.
pub async fn post_form(urls: &Value, bytes: Vec<u8>, content_type: &str) -> StatusCode {
    let mut form = reqwest::multipart::Form::new();
    for (k, v) in urls["uploadForm"].as_object().expect("uploadForm") {
        form = form.text(k.clone(), v.as_str().unwrap().to_string());
    }
    let part = reqwest::multipart::Part::bytes(bytes)
        .file_name("upload")
        .mime_str(content_type)
        .unwrap();
    form = form.part("file", part);
    reqwest::Client::new()
        .post(urls["uploadUrl"].as_str().expect("uploadUrl"))
        .multipart(form)
        .send()
        .await
        .expect("post form")
        .status()
}

/// PUTs bytes to a presigned URL.
pub async fn put(url: &str, bytes: impl Into<reqwest::Body>) -> StatusCode {
    reqwest::Client::new()
        .put(url)
        .body(bytes)
        .send()
        .await
        .expect("put")
        .status()
}

/// GETs a URL and answers its status and bytes.
pub async fn get(url: &str) -> (StatusCode, Vec<u8>) {
    let response = reqwest::Client::new().get(url).send().await.expect("get");
    let status = response.status();
    (status, response.bytes().await.unwrap_or_default().to_vec())
}

/// Deterministic bytes of a given length that differ by `seed`.
pub fn bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 8) as u8)
        .collect()
}

/// Deterministic pseudo-random bytes that nothing can compress or parse.
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as u8
        })
        .collect()
}

/// A raw S3 client on the run's store, for what only an operator (or an attacker holding
/// store credentials) could do, such as planting a part of the wrong size.
pub async fn raw_store() -> aws_sdk_s3::Client {
    raw_store_at(&env("DRIVE_S3_ENDPOINT"))
}

/// [`raw_store`] reached at `endpoint` (a [`proxy::TcpProxy`] in front of it, say).
pub fn raw_store_at(endpoint: &str) -> aws_sdk_s3::Client {
    let credentials = aws_sdk_s3::config::Credentials::new(
        env("DRIVE_S3_ACCESS_KEY_ID"),
        env("DRIVE_S3_SECRET_ACCESS_KEY"),
        None,
        None,
        "test",
    );
    let config = aws_sdk_s3::Config::builder()
        .behavior_version_latest()
        .region(aws_sdk_s3::config::Region::new("us-east-1"))
        .endpoint_url(endpoint)
        .credentials_provider(credentials)
        .force_path_style(true)
        .build();
    aws_sdk_s3::Client::from_conf(config)
}

/// Asserts a job ended done, with no error.
#[track_caller]
pub fn assert_done(job: &Value) {
    assert_eq!(job["state"], "done", "{job}");
    assert_eq!(job["error"], Value::Null, "{job}");
}

/// The files a job made: (id, name), in order.
pub fn made(job: &Value) -> Vec<(String, String)> {
    job["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap().to_string(),
                f["fileName"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The names of the files a job made, in order.
pub fn names(job: &Value) -> Vec<String> {
    made(job).into_iter().map(|(_, name)| name).collect()
}
