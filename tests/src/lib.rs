//! The end-to-end harness. Every test gets its own API process (the real `drive-api`
//! binary), its own database and its own pair of buckets in the run's object store, and the
//! process is killed by its PID when the test's [`TestApp`] is dropped.
//!
//! `scripts/test` starts the object store and sets `DRIVE_S3_ENDPOINT`,
//! `DRIVE_S3_ACCESS_KEY_ID`, `DRIVE_S3_SECRET_ACCESS_KEY`, `DRIVE_TEST_DATABASE_URL` (an
//! administrative connection used to make and drop test databases) and
//! `DRIVE_TEST_REDIS_URL`.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::{Connection, PgConnection};
use uuid::Uuid;

pub mod proxy;

/// The application id every file-service call carries in `X-Drive-App`.
pub const APP_ID: &str = "drive-test-app";
const SECRET: &str = "drive-test-secret-for-upload-tokens";

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
    pub http: reqwest::Client,
    /// This test's own database, for checks the API does not expose.
    pub database_url: String,
    pub private_bucket: String,
    pub public_bucket: String,
    database: String,
    child: Child,
    log: PathBuf,
}

impl TestApp {
    pub async fn spawn() -> TestApp {
        TestApp::spawn_with(&[]).await
    }

    /// Starts an API whose environment is the default one plus `extra` (which wins).
    pub async fn spawn_with(extra: &[(&str, &str)]) -> TestApp {
        let id = Uuid::new_v4().simple().to_string();
        let database = format!("drive_test_{id}");
        let admin_url = env("DRIVE_TEST_DATABASE_URL");
        let mut admin = PgConnection::connect(&admin_url).await.expect("admin connection");
        sqlx::query(&format!("create database {database}"))
            .execute(&mut admin)
            .await
            .expect("create test database");
        let database_url = with_database(&admin_url, &database);
        let private_bucket = format!("t{}-private", &id[..12]);
        let public_bucket = format!("t{}-public", &id[..12]);
        let log = std::env::temp_dir().join(format!("drive-api-{id}.log"));

        let mut command = Command::new(bin("drive-api"));
        command
            .arg("serve")
            .env("DRIVE_DATABASE_URL", &database_url)
            .env("DRIVE_REDIS_URL", env("DRIVE_TEST_REDIS_URL"))
            .env("DRIVE_LISTEN", "127.0.0.1:0")
            .env("DRIVE_APP_ID", APP_ID)
            .env("DRIVE_SECRET", SECRET)
            .env("DRIVE_S3_ENDPOINT", env("DRIVE_S3_ENDPOINT"))
            .env("DRIVE_S3_ACCESS_KEY_ID", env("DRIVE_S3_ACCESS_KEY_ID"))
            .env("DRIVE_S3_SECRET_ACCESS_KEY", env("DRIVE_S3_SECRET_ACCESS_KEY"))
            .env("DRIVE_PRIVATE_BUCKET", &private_bucket)
            .env("DRIVE_PUBLIC_BUCKET", &public_bucket)
            .env("DRIVE_LOG", "info,drive_api=debug")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("log file"));
        for (k, v) in extra {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("start drive-api");
        let stdout = child.stdout.take().expect("stdout");
        let url = tokio::task::spawn_blocking(move || {
            let mut line = String::new();
            BufReader::new(stdout).read_line(&mut line).ok();
            line.trim().strip_prefix("listening on ").map(str::to_string)
        });
        let url = tokio::time::timeout(Duration::from_secs(60), url)
            .await
            .ok()
            .and_then(|r| r.ok().flatten());
        let app = TestApp {
            url: url.unwrap_or_default(),
            http: reqwest::Client::new(),
            database_url,
            private_bucket,
            public_bucket,
            database,
            child,
            log,
        };
        assert!(!app.url.is_empty(), "drive-api did not start:\n{}", app.log());
        app
    }

    /// What the API process wrote to stderr so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Runs `drive-api admin ARGS…` against this test's database and buckets (on the run's
    /// store directly) and answers its stdout.
    pub fn admin(&self, args: &[&str]) -> String {
        let out = Command::new(bin("drive-api"))
            .arg("admin")
            .args(args)
            .env("DRIVE_DATABASE_URL", &self.database_url)
            .env("DRIVE_S3_ENDPOINT", env("DRIVE_S3_ENDPOINT"))
            .env("DRIVE_S3_ACCESS_KEY_ID", env("DRIVE_S3_ACCESS_KEY_ID"))
            .env("DRIVE_S3_SECRET_ACCESS_KEY", env("DRIVE_S3_SECRET_ACCESS_KEY"))
            .env("DRIVE_PRIVATE_BUCKET", &self.private_bucket)
            .env("DRIVE_PUBLIC_BUCKET", &self.public_bucket)
            .env("DRIVE_LOG", "warn")
            .output()
            .expect("run drive-api admin");
        assert!(
            out.status.success(),
            "admin {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
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
    pub async fn upload(&self, user: &TestUser, name: &str, kind: &str, mime: &str, bytes: Vec<u8>) -> Uuid {
        let key = user.key(name);
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
        if std::thread::panicking() {
            eprintln!("--- drive-api log ---\n{}", self.log());
        }
        let _ = std::fs::remove_file(&self.log);
        let admin_url = env("DRIVE_TEST_DATABASE_URL");
        let database = self.database.clone();
        // Drop runs inside the test's runtime; a separate thread may block on its own.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(async {
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

fn with_database(url: &str, database: &str) -> String {
    let (base, query) = url.split_once('?').map_or((url, None), |(b, q)| (b, Some(q)));
    let base = base.rsplit_once('/').map_or(base, |(b, _)| b);
    match query {
        Some(q) => format!("{base}/{database}?{q}"),
        None => format!("{base}/{database}"),
    }
}

pub struct TestUser {
    pub id: Uuid,
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

/// A raw S3 client on the run's store, for what only an operator (or an attacker holding
/// store credentials) could do, such as planting a part of the wrong size.
pub async fn raw_store() -> aws_sdk_s3::Client {
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
        .endpoint_url(env("DRIVE_S3_ENDPOINT"))
        .credentials_provider(credentials)
        .force_path_style(true)
        .build();
    aws_sdk_s3::Client::from_conf(config)
}
