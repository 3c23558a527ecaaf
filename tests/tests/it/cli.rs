//! The `drive` command-line client end to end: the real binary, run as a child process with
//! its own config file, against a real API and object store. Every effect is checked through
//! the API (or its database and store), not through the CLI's own word.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use drive_tests::scratch::{Scratch, sha256, write_file};
use drive_tests::*;
use serde_json::{Value, json};
use uuid::Uuid;

const MIB: usize = 1024 * 1024;

struct Run {
    success: bool,
    stdout: String,
    stderr: String,
}

/// The CLI with a config file of its own.
struct Drive {
    config: PathBuf,
}

impl Drive {
    fn new(scratch: &Scratch) -> Drive {
        Drive {
            config: scratch.path("config/drive.json"),
        }
    }

    /// `drive --config CONFIG ARGS…`; the child is killed if the test ends first.
    fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(bin("drive"));
        command
            .arg("--config")
            .arg(&self.config)
            .args(args)
            .env_remove("DRIVE_CONFIG")
            .env_remove("DRIVE_API_TOKEN")
            .stdin(Stdio::null())
            .kill_on_drop(true);
        command
    }

    async fn run(&self, args: &[&str]) -> Run {
        let output = tokio::time::timeout(Duration::from_secs(600), self.command(args).output())
            .await
            .unwrap_or_else(|_| panic!("drive {args:?} took over 10 minutes"))
            .expect("run drive");
        Run {
            success: output.status.success(),
            stdout: String::from_utf8(output.stdout).expect("utf-8 stdout"),
            stderr: String::from_utf8(output.stderr).expect("utf-8 stderr"),
        }
    }

    /// `drive --json ARGS…`, which must succeed; answers the JSON document it printed.
    async fn json(&self, args: &[&str]) -> Value {
        let run = self.run(&[&["--json"], args].concat()).await;
        assert!(run.success, "drive --json {args:?} failed:\n{}", run.stderr);
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
    }

    /// `drive --json ARGS…`, which must fail; answers the JSON it printed and its stderr.
    async fn json_failing(&self, args: &[&str]) -> (Value, String) {
        let run = self.run(&[&["--json"], args].concat()).await;
        assert!(
            !run.success,
            "drive --json {args:?} should have failed:\n{}",
            run.stdout
        );
        let printed = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout));
        (printed, run.stderr)
    }

    async fn login(&self, app: &TestApp, user: &TestUser) {
        let signed_in = self
            .json(&[
                "login",
                "--token",
                &user.api_token,
                "--url",
                &app.url,
                "--app",
                APP_ID,
            ])
            .await;
        assert_eq!(signed_in["userId"], user.id.to_string(), "{signed_in}");
    }

    fn read_config(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(&self.config).expect("config file"))
            .expect("config json")
    }

    fn write_config(&self, config: &Value) {
        std::fs::write(&self.config, config.to_string()).expect("write config");
    }
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

async fn library(app: &TestApp, user: &TestUser) -> Vec<Value> {
    let files = app.call(user, "/select-user-files", None).await;
    assert_eq!(files.status, 200, "{}", files.body);
    files.body.as_array().expect("array").clone()
}

/// How many times the library was listed whole (`/select-user-files`), from the API's metrics.
async fn library_listings(app: &TestApp) -> usize {
    let metrics = app
        .metrics_url
        .as_deref()
        .expect("the test app serves its metrics");
    let text = reqwest::get(format!("{metrics}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .filter(|l| l.starts_with(r#"drive_http_requests_total{route="/select-user-files""#))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<usize>().unwrap())
        .sum()
}

async fn trash(app: &TestApp, user: &TestUser) -> Vec<Value> {
    let files = app.call(user, "/select-trashed-files", None).await;
    assert_eq!(files.status, 200, "{}", files.body);
    files.body.as_array().expect("array").clone()
}

fn ids(files: &[Value]) -> Vec<String> {
    files
        .iter()
        .map(|f| f["id"].as_str().expect("id").to_string())
        .collect()
}

/// The bytes of file `id`, fetched through a fresh link from the API.
async fn download(app: &TestApp, user: &TestUser, id: &str) -> Vec<u8> {
    let link = app
        .call(user, "/generate-download-url", Some(json!({ "id": id })))
        .await;
    assert_eq!(link.status, 200, "{}", link.body);
    let (status, bytes) = get(link.body["downloadUrl"].as_str().expect("downloadUrl")).await;
    assert_eq!(status, 200);
    bytes
}

/// The object key and storage upload id of the multipart upload the service has open.
async fn open_upload(db: &mut sqlx::PgConnection) -> Option<(String, String)> {
    sqlx::query_as("select object_key, upload_id from multipart_uploads where state = 'open'")
        .fetch_optional(db)
        .await
        .expect("multipart_uploads")
}

/// How many parts storage holds for an open multipart upload.
async fn stored_parts(store: &aws_sdk_s3::Client, app: &TestApp, key: &str, upload_id: &str) -> usize {
    let listed = store
        .list_parts()
        .bucket(&app.private_bucket)
        .key(key)
        .upload_id(upload_id)
        .send()
        .await
        .expect("list parts");
    listed.parts().len()
}

/// The storage key the CLI gives a local file, by its rule (cli/src/local.rs): the name, the
/// size and the modified time to the second, hashed, under `users/{id}/cli/`.
fn cli_object_key(user: &TestUser, path: &Path) -> String {
    let metadata = std::fs::metadata(path).expect("metadata");
    let name = path.file_name().expect("file name").to_string_lossy();
    let modified = chrono::DateTime::<chrono::Utc>::from(metadata.modified().expect("modified time"));
    let identity = format!(
        "{name}\n{}\n{}",
        metadata.len(),
        modified.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    );
    let digest = sha256(identity.as_bytes());
    format!("users/{}/cli/{}/{name}", user.id, &digest[..32])
}

async fn is_public(app: &TestApp, user: &TestUser, id: &str) -> Value {
    let files = library(app, user).await;
    files.iter().find(|f| f["id"] == id).expect("listed")["isPublic"].clone()
}

#[tokio::test]
async fn uploads_a_folder_in_parts_and_forms_then_sends_nothing_twice() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&drive.config).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the config holds a token: owner only");
    }

    // 25 small files of varying sizes (one empty, some in a folder inside) and one of
    // 150 MiB, which goes up in three parts: 64 + 64 + 22 MiB.
    let folder = scratch.path("photos");
    let extensions = ["txt", "jpg", "mp3", "pdf", "bin"];
    let mut local = Vec::new();
    for i in 0..25 {
        let name = format!("file-{i:02}.{}", extensions[i % extensions.len()]);
        let path = if i % 3 == 0 {
            folder.join("inside").join(&name)
        } else {
            folder.join(&name)
        };
        let size = i * i * 997 + i * 13;
        local.push((name, size, write_file(&path, size, i as u8)));
    }
    let big_size = 150 * MIB;
    local.push((
        "big.mp4".to_string(),
        big_size,
        write_file(&folder.join("big.mp4"), big_size, 99),
    ));

    let reports = drive.json(&["upload", path_str(&folder)]).await;
    let reports = reports.as_array().expect("an array of reports");
    assert_eq!(reports.len(), 26, "{reports:?}");
    for report in reports {
        assert_eq!(report["status"], "uploaded", "{report}");
        assert!(report["id"].is_string(), "{report}");
    }

    let stored = library(&app, &user).await;
    assert_eq!(stored.len(), 26);
    for (name, size, _) in &local {
        let record = stored
            .iter()
            .find(|f| f["fileName"] == *name)
            .unwrap_or_else(|| panic!("{name} not listed"));
        assert_eq!(record["fileSize"], *size as u64, "{record}");
        assert!(record["modifiedTime"].is_string(), "{record}");
        assert_eq!(record["isPublic"], false);
        let report = reports.iter().find(|r| r["fileName"] == *name).expect("reported");
        assert_eq!(report["id"], record["id"]);
        assert_eq!(report["fileSize"], *size as u64);
    }
    let big = stored.iter().find(|f| f["fileName"] == "big.mp4").unwrap();
    assert_eq!(
        (&big["type"], &big["mimeType"]),
        (&json!("Video"), &json!("video/mp4"))
    );
    assert_eq!(
        stored.iter().find(|f| f["fileName"] == "file-01.jpg").unwrap()["type"],
        "Image"
    );
    assert_eq!(
        stored.iter().find(|f| f["fileName"] == "file-04.bin").unwrap()["mimeType"],
        "application/octet-stream"
    );

    // The big file went up as one three-part multipart upload; the small ones did not.
    let uploads: Vec<(i64, i64, String)> =
        sqlx::query_as("select file_size, part_size, state from multipart_uploads")
            .fetch_all(&mut app.db().await)
            .await
            .unwrap();
    assert_eq!(
        uploads,
        vec![(big_size as i64, 64 * MIB as i64, "complete".to_string())]
    );

    // The bytes that arrived are the bytes on disk.
    let big_id = big["id"].as_str().unwrap();
    assert_eq!(sha256(&download(&app, &user, big_id).await), local[25].2);
    let small = stored.iter().find(|f| f["fileName"] == "file-24.bin").unwrap();
    assert_eq!(
        sha256(&download(&app, &user, small["id"].as_str().unwrap()).await),
        local[24].2
    );

    // Again: every file is found stored by name, size and modified time, each looked up by
    // its name and size, the library never listed; nothing is sent.
    let listed_before = library_listings(&app).await;
    let again = drive.json(&["upload", path_str(&folder)]).await;
    assert_eq!(
        library_listings(&app).await,
        listed_before,
        "drive upload listed the library"
    );
    let again = again.as_array().unwrap();
    assert_eq!(again.len(), 26);
    for (first, second) in reports.iter().zip(again) {
        assert_eq!(second["status"], "already stored", "{second}");
        assert_eq!(second["id"], first["id"]);
    }
    assert_eq!(
        ids(&library(&app, &user).await),
        ids(&stored),
        "the library did not change"
    );
    let opened: i64 = sqlx::query_scalar("select count(*) from multipart_uploads")
        .fetch_one(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(opened, 1, "no second multipart upload was opened");

    // People get a table; a single file may be named directly.
    let run = drive.run(&["upload", path_str(&folder.join("big.mp4"))]).await;
    assert!(run.success, "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        lines[0].starts_with("STATUS") && lines[0].contains("PATH"),
        "{}",
        run.stdout
    );
    assert!(
        lines[1].starts_with("already stored  150.0 MiB  ") && lines[1].contains(big_id),
        "{}",
        run.stdout
    );
}

/// The CLI is killed with SIGKILL in the middle of a 400 MiB (seven-part) upload, at a moment
/// the test makes sure of rather than guesses: the service has opened the upload (its row in
/// `multipart_uploads` is open) and storage already holds at least one part (listed with a
/// raw S3 client). The parts go four at a time and the first four finish together, so three
/// parts (144 MiB) are still to go when the kill lands; the test checks that it did land in
/// time (the row is still open, no file recorded). Running the command again must pick the
/// same upload up (`resumed`, no new row) and skip the parts stored.
#[tokio::test]
async fn an_interrupted_multipart_upload_resumes() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;
    let path = scratch.path("long take.mov");
    let digest = write_file(&path, 400 * MIB, 7);

    let mut child = drive
        .command(&["--json", "upload", path_str(&path)])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start drive");
    let store = raw_store().await;
    let mut db = app.db().await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(300);
    let (key, upload_id) = loop {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no part was stored within 5 minutes"
        );
        if let Some(exit) = child.try_wait().expect("poll drive") {
            panic!("drive ended ({exit}) before the test could interrupt it");
        }
        if let Some((key, upload_id)) = open_upload(&mut db).await
            && stored_parts(&store, &app, &key, &upload_id).await > 0
        {
            // SIGKILL: the CLI gets no chance to abort or tidy up.
            child.kill().await.expect("kill -9 drive");
            break (key, upload_id);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };

    // Interrupted for real: the upload is still open and nothing is recorded.
    assert_eq!(
        open_upload(&mut db).await,
        Some((key.clone(), upload_id.clone())),
        "it finished first"
    );
    assert!(library(&app, &user).await.is_empty());
    assert!(
        key.starts_with(&format!("users/{}/cli/", user.id)) && key.ends_with("/long take.mov"),
        "{key}"
    );
    let stored_at_kill = stored_parts(&store, &app, &key, &upload_id).await;
    assert!((1..7).contains(&stored_at_kill), "{stored_at_kill} parts stored");

    let reports = drive.json(&["upload", path_str(&path)]).await;
    let report = &reports[0];
    assert_eq!(report["status"], "resumed", "{report}");
    let resumed_parts = report["resumedParts"].as_u64().expect("resumedParts");
    assert!(
        resumed_parts as usize >= stored_at_kill,
        "{report} but {stored_at_kill} were stored"
    );

    // The same upload (same key, same id), completed; no second one was opened.
    let uploads: Vec<(String, String, String)> =
        sqlx::query_as("select object_key, upload_id, state from multipart_uploads")
            .fetch_all(&mut db)
            .await
            .unwrap();
    assert_eq!(uploads, vec![(key, upload_id, "complete".to_string())]);
    let stored = library(&app, &user).await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0]["id"], report["id"]);
    assert_eq!(stored[0]["fileSize"], 400 * MIB as u64);
    let id = stored[0]["id"].as_str().unwrap();
    assert_eq!(sha256(&download(&app, &user, id).await), digest);
}

/// A run stopped after `/complete-multipart-upload` but before `/insert-file` leaves the whole
/// object stored under the file's key and nothing recorded. The test makes that state through
/// the API directly; running the command again must record the object as it is (`recovered`)
/// rather than open a new multipart upload and send the 70 MiB again.
#[tokio::test]
async fn a_file_stored_but_not_recorded_is_recovered_without_sending_it_again() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;
    let path = scratch.path("stored only.mov");
    let size = 70 * MIB;
    let digest = write_file(&path, size, 11);
    let key = cli_object_key(&user, &path);

    let create = app
        .call(
            &user,
            "/create-multipart-upload",
            Some(json!({
                "type": "Video",
                "fileName": "stored only.mov",
                "fileSize": size,
                "objectKey": key,
                "mimeType": "video/quicktime",
            })),
        )
        .await;
    assert_eq!(create.status, 200, "{}", create.body);
    let data = std::fs::read(&path).expect("read file");
    let parts = create.body["signedParts"].as_array().expect("signedParts");
    assert_eq!(parts.len(), 2, "{}", create.body);
    for part in parts {
        let number = part["partNumber"].as_u64().expect("partNumber") as usize;
        let start = (number - 1) * 64 * MIB;
        let end = (start + 64 * MIB).min(size);
        let status = put(part["url"].as_str().expect("url"), data[start..end].to_vec()).await;
        assert!(status.is_success(), "part {number} refused: {status}");
    }
    let done = app
        .call(
            &user,
            "/complete-multipart-upload",
            Some(json!({ "token": create.body["token"] })),
        )
        .await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert!(library(&app, &user).await.is_empty(), "nothing recorded yet");

    let reports = drive.json(&["upload", path_str(&path)]).await;
    let report = &reports[0];
    assert_eq!(report["status"], "recovered", "{report}");
    assert_eq!(report["fileSize"], size as u64);

    let stored = library(&app, &user).await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0]["id"], report["id"]);
    assert_eq!(stored[0]["fileName"], "stored only.mov");
    assert_eq!(stored[0]["fileSize"], size as u64);
    assert!(stored[0]["modifiedTime"].is_string(), "{}", stored[0]);
    let uploads: Vec<(String, String)> = sqlx::query_as("select object_key, state from multipart_uploads")
        .fetch_all(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(
        uploads,
        vec![(key, "complete".to_string())],
        "the CLI opened no multipart upload of its own"
    );
    let id = stored[0]["id"].as_str().unwrap();
    assert_eq!(sha256(&download(&app, &user, id).await), digest);
}

#[tokio::test]
async fn library_commands_act_through_the_api() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;
    let files = ["a.txt", "b.jpg", "c.pdf"].map(|name| scratch.path(&format!("up/{name}")));
    for (i, path) in files.iter().enumerate() {
        write_file(path, 1000 * (i + 1), i as u8);
    }
    let uploaded = drive
        .json(&[
            "upload",
            path_str(&files[0]),
            path_str(&files[1]),
            path_str(&files[2]),
        ])
        .await;
    let [a, b, c] = [0, 1, 2].map(|i| uploaded[i]["id"].as_str().expect("id").to_string());

    // list: the library as the API answers it, newest first.
    let listed = drive.json(&["list"]).await;
    let listed = listed.as_array().unwrap();
    assert_eq!(ids(listed), ids(&library(&app, &user).await));
    assert_eq!(listed.len(), 3);
    let run = drive.run(&["list"]).await;
    assert!(run.success, "{}", run.stderr);
    assert!(run.stdout.starts_with("ID "), "{}", run.stdout);
    for name in ["a.txt", "b.jpg", "c.pdf"] {
        assert!(run.stdout.lines().any(|l| l.ends_with(name)), "{}", run.stdout);
    }

    // link: a working link to the bytes.
    let link = drive.json(&["link", &a]).await;
    assert_eq!(link["id"], a.as_str());
    let (status, bytes) = get(link["downloadUrl"].as_str().expect("downloadUrl")).await;
    assert_eq!((status.as_u16(), bytes), (200, std::fs::read(&files[0]).unwrap()));
    let run = drive.run(&["link", &b]).await;
    assert!(
        run.success && run.stdout.trim().starts_with("http"),
        "{}",
        run.stdout
    );

    // trash, and restore.
    let trashed = drive.json(&["trash", &a, &b]).await;
    assert_eq!(trashed, json!({ "trashed": [a, b], "notFound": [] }));
    assert_eq!(ids(&library(&app, &user).await), vec![c.clone()]);
    let mut in_trash = ids(&trash(&app, &user).await);
    in_trash.sort();
    let mut expected = vec![a.clone(), b.clone()];
    expected.sort();
    assert_eq!(in_trash, expected);
    let (again, stderr) = drive.json_failing(&["trash", &a]).await;
    assert_eq!(again, json!({ "trashed": [], "notFound": [a] }));
    assert!(stderr.starts_with("error: not in your library"), "{stderr}");
    // Uploading a trashed file again sends nothing: the service says its key is taken, and
    // the CLI finds it in the trash.
    let reupload = drive.json(&["upload", path_str(&files[0])]).await;
    assert_eq!(
        (&reupload[0]["status"], &reupload[0]["id"]),
        (&json!("in trash"), &json!(a))
    );
    assert_eq!(library(&app, &user).await.len(), 1);
    let restored = drive.json(&["restore", &a, &b]).await;
    assert_eq!(restored, json!({ "restored": [a, b], "notFound": [] }));
    assert_eq!(library(&app, &user).await.len(), 3);
    assert!(trash(&app, &user).await.is_empty());

    // public and private: the toggle is called only when the state must change.
    let public = drive.json(&["public", &a]).await;
    assert_eq!(
        (&public["changed"], &public["file"]["isPublic"]),
        (&json!(true), &json!(true))
    );
    assert_eq!(is_public(&app, &user, &a).await, true);
    let (status, bytes) = get(public["file"]["downloadUrl"].as_str().expect("public link")).await;
    assert_eq!(
        (status.as_u16(), bytes.len()),
        (200, 1000),
        "the permanent link works with no token"
    );
    let listed_before = library_listings(&app).await;
    let public_again = drive.json(&["public", &a]).await;
    assert_eq!(
        library_listings(&app).await,
        listed_before,
        "drive public listed the library"
    );
    assert_eq!(public_again["changed"], false);
    assert_eq!(
        is_public(&app, &user, &a).await,
        true,
        "asking twice must not switch it back"
    );
    let run = drive.run(&["private", &a]).await;
    assert!(
        run.success && run.stdout.trim() == "a.txt is now private",
        "{}",
        run.stdout
    );
    assert_eq!(is_public(&app, &user, &a).await, false);
    let private_again = drive.json(&["private", &a]).await;
    assert_eq!(
        (&private_again["changed"], &private_again["file"]["isPublic"]),
        (&json!(false), &json!(false))
    );
    assert_eq!(is_public(&app, &user, &a).await, false);

    // usage: what the API says.
    let usage = drive.json(&["usage"]).await;
    let from_api = app.call(&user, "/get-user-storage-usage", None).await.body;
    assert_eq!(usage, from_api);
    assert_eq!(usage["usedBytes"], 6000);
    let run = drive.run(&["usage"]).await;
    assert!(
        run.success && run.stdout.contains("Plan       Pro"),
        "{}",
        run.stdout
    );

    // delete: gone for good, from the library, the trash and the storage count.
    let deleted = drive.json(&["delete", &c]).await;
    assert_eq!(deleted, json!({ "deleted": [c], "notFound": [] }));
    assert_eq!(library(&app, &user).await.len(), 2);
    assert!(trash(&app, &user).await.is_empty());
    assert_eq!(drive.json(&["usage"]).await["usedBytes"], 3000);

    // The service's errors come out as `error: <error> (<code>)`, with a failing exit.
    let run = drive.run(&["link", &Uuid::new_v4().to_string()]).await;
    assert!(!run.success);
    assert_eq!(
        run.stderr,
        "error: no file of yours has that id (file_not_found)\n"
    );

    // A library longer than a page is listed a page at a time, every file once, in order.
    drive_tests::bench::seed_library(&app, &user, 450).await;
    let listed = drive.json(&["list"]).await;
    assert_eq!(ids(listed.as_array().unwrap()), ids(&library(&app, &user).await));
    assert_eq!(listed.as_array().unwrap().len(), 452);
    let run = drive.run(&["list"]).await;
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 453, "a header and a row a file");
    // The seeded files' names (`file-…`) start in one column on the first page and the last.
    let seeded: Vec<usize> = lines.iter().filter_map(|l| l.find("file-")).collect();
    assert_eq!(seeded.len(), 450);
    assert_eq!(seeded[0], seeded[449], "later pages line up with the first");

    // A reader that stops early (`drive --json list | head`): the rest is not written and the
    // command ends quietly, not with a panic about a broken pipe. The JSON of 452 files is
    // several times what a pipe holds, so the command is still writing when the reader goes.
    let mut child = tokio::process::Command::new(bin("drive"))
        .arg("--config")
        .arg(&drive.config)
        .args(["--json", "list"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut first = [0u8; 1];
    let mut stdout = child.stdout.take().unwrap();
    tokio::io::AsyncReadExt::read_exact(&mut stdout, &mut first)
        .await
        .unwrap();
    assert_eq!(&first, b"[");
    drop(stdout);
    let output = child.wait_with_output().await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stderr.is_empty(),
        "{:?}: {stderr}",
        output.status
    );
}

#[tokio::test]
async fn uploads_refuse_what_does_not_fit_and_report_each_failure() {
    let app = TestApp::spawn_with(&[("DRIVE_QUOTA_PRO_BYTES", "1000")]).await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;

    // More than the 1000 bytes left: refused before anything is sent.
    write_file(&scratch.path("big/one.bin"), 600, 1);
    write_file(&scratch.path("big/two.bin"), 600, 2);
    let run = drive.run(&["upload", path_str(&scratch.path("big"))]).await;
    assert!(!run.success);
    assert!(
        run.stderr
            .starts_with("error: not enough storage: 2 files to upload need 1.2 KiB, but only 1000 B"),
        "{}",
        run.stderr
    );
    assert!(library(&app, &user).await.is_empty());
    assert_eq!(
        sqlx::query_scalar::<_, i64>("select count(*) from multipart_uploads")
            .fetch_one(&mut app.db().await)
            .await
            .unwrap(),
        0
    );

    // A name the service refuses fails that file alone, with the service's error and field.
    write_file(&scratch.path("mixed/good.txt"), 10, 3);
    write_file(&scratch.path("mixed/bad\tname.txt"), 10, 4);
    let (reports, stderr) = drive
        .json_failing(&["upload", path_str(&scratch.path("mixed"))])
        .await;
    let bad = reports
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["fileName"] == "bad\tname.txt")
        .expect("reported");
    let good = reports
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["fileName"] == "good.txt")
        .expect("reported");
    assert_eq!(good["status"], "uploaded");
    assert_eq!(bad["status"], "failed");
    assert!(
        bad["error"]
            .as_str()
            .unwrap()
            .ends_with("(invalid_field, field fileName)"),
        "{bad}"
    );
    assert!(stderr.contains("(invalid_field, field fileName)\n"), "{stderr}");
    assert!(
        stderr.ends_with("error: 1 of 2 files were not uploaded\n"),
        "{stderr}"
    );
    assert_eq!(
        ids(&library(&app, &user).await),
        vec![good["id"].as_str().unwrap().to_string()]
    );

    // Two copies with the same name, size and modified time are one file: sent once.
    let copies = [
        scratch.path("copies/one/same.txt"),
        scratch.path("copies/two/same.txt"),
    ];
    let modified = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    for copy in &copies {
        write_file(copy, 20, 5);
        let file = std::fs::File::options().write(true).open(copy).unwrap();
        file.set_modified(modified).unwrap();
    }
    let reports = drive.json(&["upload", path_str(&scratch.path("copies"))]).await;
    assert_eq!(reports[0]["status"], "uploaded", "{reports}");
    assert_eq!(reports[1]["status"], "already stored", "{reports}");
    assert_eq!(reports[0]["id"], reports[1]["id"]);
    let stored = library(&app, &user).await;
    assert_eq!(stored.len(), 2);
    let same = stored.iter().find(|f| f["fileName"] == "same.txt").unwrap();
    assert_eq!(same["modifiedTime"], "2023-11-14T22:13:20Z");
}

#[tokio::test]
async fn the_session_is_renewed_before_it_ends_and_after_a_refusal() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);

    // Not signed in yet; then a login naming an application the service does not know
    // is refused and saves nothing.
    let run = drive.run(&["list"]).await;
    assert!(
        !run.success && run.stderr.contains("not signed in"),
        "{}",
        run.stderr
    );
    let run = drive
        .run(&[
            "login",
            "--token",
            &user.api_token,
            "--url",
            &app.url,
            "--app",
            "nope",
        ])
        .await;
    assert!(
        !run.success && run.stderr.contains("(app_not_allowed)"),
        "{}",
        run.stderr
    );
    assert!(!drive.config.exists());
    drive.login(&app, &user).await;
    let config = drive.read_config();
    assert_eq!(config["baseUrl"], app.url);
    assert_eq!(config["appId"], APP_ID);
    assert_eq!(config["apiToken"], user.api_token);
    assert_eq!(config["session"]["userId"], user.id.to_string());
    let first = config["session"]["gelToken"].as_str().unwrap().to_string();

    // Less than a minute left: renewed before the call.
    let mut config = drive.read_config();
    config["session"]["expiresAt"] =
        json!((chrono::Utc::now() + chrono::TimeDelta::seconds(30)).to_rfc3339());
    drive.write_config(&config);
    drive.json(&["usage"]).await;
    let renewed = drive.read_config();
    let second = renewed["session"]["gelToken"].as_str().unwrap().to_string();
    assert_ne!(second, first);
    let expires: chrono::DateTime<chrono::Utc> =
        renewed["session"]["expiresAt"].as_str().unwrap().parse().unwrap();
    assert!(
        expires > chrono::Utc::now() + chrono::TimeDelta::hours(23),
        "{expires}"
    );

    // A session the service refuses (401): exchanged again once, and the call goes through.
    let mut config = drive.read_config();
    config["session"]["gelToken"] = json!("not-a-session");
    drive.write_config(&config);
    let run = drive.run(&["usage"]).await;
    assert!(run.success, "{}", run.stderr);
    let third = drive.read_config()["session"]["gelToken"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(third != "not-a-session" && third != second);

    // DRIVE_CONFIG names the config file when --config does not.
    let output = tokio::process::Command::new(bin("drive"))
        .args(["--json", "list"])
        .env("DRIVE_CONFIG", &drive.config)
        .kill_on_drop(true)
        .output()
        .await
        .expect("run drive");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&output.stdout).unwrap(),
        json!([])
    );
}

#[tokio::test]
async fn files_are_read_and_searched_inside_from_the_command_line() {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;
    let path = scratch.path("up/garage.txt");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        &path,
        "The mechanic replaced the worn brake pads.\n\nInvoice paid in cash.\n",
    )
    .unwrap();
    let uploaded = drive.json(&["upload", path_str(&path)]).await;
    let id = uploaded[0]["id"].as_str().expect("id").to_string();

    let submitted = drive.json(&["read-for-search", &id]).await;
    assert_eq!(submitted["job"]["jobType"], "readForSearch", "{submitted}");
    let job = app.wait_job(&user, &submitted["job"]["id"]).await;
    drive_tests::assert_done(&job);

    let found = drive
        .json(&["search", "--query", "car repair", "--limit", "1"])
        .await;
    assert_eq!(
        found["moments"][0]["text"], "The mechanic replaced the worn brake pads.",
        "{found}"
    );
    assert_eq!(found["moments"].as_array().unwrap().len(), 1);
    let run = drive.run(&["search", "--query", "brake"]).await;
    assert!(run.success, "{}", run.stderr);
    assert!(
        run.stdout.lines().any(|l| l.starts_with("garage.txt") && l.ends_with("The mechanic replaced the worn brake pads.")),
        "{}",
        run.stdout
    );
    let refused = drive.run(&["search", "--query", &"x".repeat(501)]).await;
    assert!(
        !refused.success && refused.stderr.contains("field query"),
        "{}",
        refused.stderr
    );

    // Read back: the text, and a picture written where --out says.
    let read = drive.run(&["read", &id]).await;
    assert!(read.success, "{}", read.stderr);
    assert!(
        read.stdout.contains("The mechanic replaced the worn brake pads."),
        "{}",
        read.stdout
    );
    let picture = scratch.path("up/dot.png");
    let mut png = Vec::new();
    image::RgbImage::from_pixel(40, 30, image::Rgb([200, 10, 10]))
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    std::fs::write(&picture, png).unwrap();
    let uploaded = drive.json(&["upload", path_str(&picture)]).await;
    let picture_id = uploaded[0]["id"].as_str().expect("id").to_string();
    let no_out = drive.run(&["read", &picture_id]).await;
    assert!(
        !no_out.success && no_out.stderr.contains("--out"),
        "{}",
        no_out.stderr
    );
    let out = scratch.path("dot.jpg");
    let read = drive.run(&["read", &picture_id, "--out", path_str(&out)]).await;
    assert!(read.success, "{}", read.stderr);
    let jpeg = image::load_from_memory(&std::fs::read(&out).unwrap()).expect("a JPEG");
    assert_eq!((jpeg.width(), jpeg.height()), (40, 30));

    // Captions are of videos and audio: a text file is refused, naming the field.
    let captions = drive.run(&["captions", &id, "--format", "vtt"]).await;
    assert!(
        !captions.success && captions.stderr.contains("fileIds"),
        "{}",
        captions.stderr
    );
}

#[tokio::test]
async fn file_requests_are_made_listed_closed_and_opened_from_the_command_line() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;

    let made = drive
        .json(&[
            "request",
            "create",
            "Invoices",
            "--message",
            "PDFs only",
            "--folder",
            "/Billing",
            "--max-bytes",
            "5000",
            "--accept",
            ".pdf,Image",
            "--max-files-per-sender",
            "3",
            "--on-arrival",
            "checksum",
            "--on-arrival-options",
            r#"{"algorithm":"md5"}"#,
        ])
        .await;
    assert_eq!(made["folder"]["path"], "/Billing/", "{made}");
    assert_eq!(made["acceptTypes"], json!([".pdf", "Image"]));
    assert_eq!(
        made["onArrival"],
        json!({ "jobType": "checksum", "options": { "algorithm": "md5" } })
    );
    let id = made["id"].as_str().unwrap().to_string();
    let sender = drive_tests::senders::Sender::start(&app, &id, "Supplier", None).await;
    sender.send(&app, "march.pdf", b"%PDF-1.4 march").await;

    let text = drive.run(&["request", "list"]).await;
    assert!(text.success, "{}", text.stderr);
    let line = text
        .stdout
        .lines()
        .find(|l| l.contains(&id))
        .expect("the request's line");
    assert!(
        line.contains("open") && line.contains("/Billing/") && line.contains("Invoices"),
        "{line}"
    );
    let listed = drive.json(&["request", "list", "--folder", "/Billing"]).await;
    assert_eq!(
        listed["requests"][0]["drops"][0]["files"][0]["fileName"], "march.pdf",
        "{listed}"
    );
    assert_eq!(listed["requests"][0]["receivedBytes"], 14);

    let closed = drive.run(&["request", "close", &id]).await;
    assert!(
        closed.success && closed.stdout.contains("is closed"),
        "{}",
        closed.stderr
    );
    assert_eq!(
        drive.json(&["request", "list"]).await["requests"][0]["open"],
        false
    );
    let opened = drive.json(&["request", "open", &id]).await;
    assert_eq!(opened["open"], true, "{opened}");

    let refused = drive.run(&["request", "create", ""]).await;
    assert!(
        !refused.success && refused.stderr.contains("title"),
        "{}",
        refused.stderr
    );
}

#[tokio::test]
async fn reviews_are_made_listed_answered_and_resolved_from_the_command_line() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;
    let video = app
        .upload(&user, "cut.webm", "Video", "video/webm", crate::reviews::webm())
        .await;
    let made = drive
        .json(&["review", "create", &video.to_string(), "--title", "Cut 1"])
        .await;
    let id = made["id"].as_str().unwrap().to_string();
    let left = drive_tests::senders::call(
        &app,
        "/add-review-note",
        json!({ "reviewId": id, "reviewerName": "Ida", "text": "Too dark here", "seconds": 1.25 }),
    )
    .await;
    assert_eq!(left.status, 200, "{}", left.body);
    let note = left.body["id"].as_str().unwrap().to_string();

    let replied = drive
        .run(&["review", "reply", &note, "Brightened in cut 2"])
        .await;
    assert!(replied.success, "{}", replied.stderr);
    let resolved = drive.run(&["review", "resolve", &note]).await;
    assert!(
        resolved.success && resolved.stdout.contains("resolved"),
        "{}",
        resolved.stderr
    );
    let text = drive.run(&["review", "list"]).await;
    assert!(text.success, "{}", text.stderr);
    assert!(
        text.stdout.contains("00:00:01.250") && text.stdout.contains("Ida: Too dark here [resolved]"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains(&format!("{}: Brightened in cut 2", user.handle)),
        "{}",
        text.stdout
    );
    let undone = drive.json(&["review", "resolve", &note, "--undo"]).await;
    assert_eq!(undone["resolved"], false, "{undone}");
    let listed = drive
        .json(&["review", "list", "--file", &video.to_string()])
        .await;
    assert_eq!(listed["reviews"][0]["notes"][0]["resolved"], false, "{listed}");
}

#[tokio::test]
async fn a_link_is_imported_from_the_command_line() {
    use drive_tests::origin::{Answer, Origin};
    let origin = Origin::start(vec![(
        "/report.pdf",
        Answer::Bytes(std::sync::Arc::new(b"%PDF-1.4 report".to_vec())),
    )])
    .await;
    let allow = ("DRIVE_FETCH_ALLOW_HOSTS", "127.0.0.1");
    let mut app = TestApp::spawn_with(&[allow]).await;
    app.start_worker(&[allow]).await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;
    let url = format!("{}/report.pdf", origin.url);
    let queued = drive.json(&["import", &url, "--folder", "/Papers"]).await;
    assert_eq!(queued["job"]["jobType"], "import", "{queued}");
    let done = app.wait_job(&user, &queued["job"]["id"]).await;
    drive_tests::assert_done(&done);
    assert_eq!(drive_tests::names(&done), ["report.pdf"]);
    let refused = drive.run(&["import", "http://127.0.0.2/x"]).await;
    assert!(
        !refused.success && refused.stderr.contains("public internet"),
        "{}",
        refused.stderr
    );
}

#[tokio::test]
async fn covers_and_thumbnails_are_set_from_the_command_line() {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;
    let wav = drive_tests::media::ffmpeg(&["-f", "lavfi", "-i", "sine=frequency=440:duration=1"], "wav");
    let track = app
        .upload(&user, "tone.wav", "Audio", "audio/wav", wav)
        .await
        .to_string();
    let image = app
        .upload(
            &user,
            "art.png",
            "Image",
            "image/png",
            drive_tests::media::scanned_page(&["ART"]),
        )
        .await
        .to_string();
    let video = drive_tests::media::video_of("testsrc2=size=320x240:rate=25", 2.0, &[]);
    let video = app
        .upload(&user, "clip.mp4", "Video", "video/mp4", video)
        .await
        .to_string();

    let set = drive.json(&["cover", "--track", &track, "--image", &image]).await;
    assert_eq!(set["imageId"], image.as_str(), "{set}");
    let framed = drive.json(&["thumbnail", &video, "--at", "0:01"]).await;
    let done = app.wait_job(&user, &framed["job"]["job"]["id"]).await;
    drive_tests::assert_done(&done);
    let pictured = drive.run(&["thumbnail", &video, "--image", &image]).await;
    assert!(
        pictured.success && pictured.stdout.contains("now shows"),
        "{}",
        pictured.stderr
    );
    let refused = drive.run(&["cover", "--track", &video, "--image", &image]).await;
    assert!(
        !refused.success && refused.stderr.contains("thumbnail"),
        "{}",
        refused.stderr
    );
}

#[tokio::test]
async fn images_are_generated_from_the_command_line_with_the_development_stand_in() {
    use drive_tests::image_providers::StandIn;
    let stand_in = StandIn::start();
    let provider = [
        ("DRIVE_OPENAI_API_KEY", "dev"),
        ("DRIVE_OPENAI_BASE_URL", stand_in.url.as_str()),
    ];
    let mut app = TestApp::spawn_with(&provider).await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;

    let done = drive
        .json(&["generate", "A red fox asleep in the snow", "--wait"])
        .await;
    assert_eq!(done["status"], "done", "{done}");
    assert_eq!(done["image"]["fileName"], "A red fox asleep in the snow.png");
    let square = download(&app, &user, done["image"]["id"].as_str().unwrap()).await;
    let picture = image::load_from_memory(&square).expect("a real PNG");
    assert_eq!((picture.width(), picture.height()), (1024, 1024));

    let text = drive
        .run(&[
            "generate",
            "A red fox asleep in the snow",
            "--aspect-ratio",
            "3:2",
            "--wait",
        ])
        .await;
    assert!(text.success && text.stdout.contains(" done: "), "{}", text.stdout);
    let wide = library(&app, &user).await;
    assert_eq!(wide.len(), 2, "each image saved once: {wide:?}");
    let started = drive.json(&["generate", "A blue whale"]).await;
    let id = started["id"].as_str().unwrap().to_string();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    let whale = loop {
        let seen = drive.json(&["generate", "--status", &id]).await;
        if seen["status"] != "working" {
            break seen;
        }
        assert!(tokio::time::Instant::now() < deadline, "{seen}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    // Drawn from the prompt: another prompt, another picture.
    let whale = download(&app, &user, whale["image"]["id"].as_str().unwrap()).await;
    assert_ne!(whale, square);
    assert_eq!(library(&app, &user).await.len(), 3);

    let refused = drive.run(&["generate", "A cat", "--model", "nanoBanana"]).await;
    assert!(
        !refused.success && refused.stderr.contains("DRIVE_GEMINI_API_KEY"),
        "{}",
        refused.stderr
    );
}

#[tokio::test]
async fn events_are_listed_and_followed_from_the_command_line() {
    use tokio::io::AsyncBufReadExt;
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;
    let first = app
        .upload(&user, "first.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    let listed = drive.run(&["events", "--kinds", "file"]).await;
    assert!(
        listed.success && listed.stdout.contains("file") && listed.stdout.contains("first.txt"),
        "{}",
        listed.stdout
    );

    // A follower prints what happens after it started, one JSON event a line.
    let follow = || {
        let mut command = drive.command(&["--json", "events", "--follow", "--kinds", "file"]);
        command.stdout(std::process::Stdio::piped());
        command.spawn().expect("drive events --follow")
    };
    let mut follower = follow();
    let mut lines = tokio::io::BufReader::new(follower.stdout.take().unwrap()).lines();
    // It starts 24 hours back: the first file comes at once.
    assert_eq!(next_file(&mut lines).await, first.to_string());
    let kept = kept_cursor(&drive, None).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let second = app
        .upload(&user, "second.txt", "Text", "text/plain", bytes(10, 2))
        .await;
    assert_eq!(next_file(&mut lines).await, second.to_string());
    // The cursor is kept once a page is printed.
    kept_cursor(&drive, Some(&kept)).await;
    let _ = follower.kill().await;

    // Started again, it goes on from where it stopped: nothing twice.
    let mut follower = follow();
    let mut lines = tokio::io::BufReader::new(follower.stdout.take().unwrap()).lines();
    let third = app
        .upload(&user, "third.txt", "Text", "text/plain", bytes(10, 3))
        .await;
    assert_eq!(next_file(&mut lines).await, third.to_string());
    let _ = follower.kill().await;
}

/// Waits until the config keeps an events cursor other than `before`; answers it.
async fn kept_cursor(drive: &Drive, before: Option<&Value>) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let cursor = drive.read_config()["eventsCursor"].clone();
        if cursor.is_string() && Some(&cursor) != before {
            return cursor;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no new cursor kept: {cursor}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The file id of the next event a follower prints (one JSON event a line), within 10 s.
async fn next_file(lines: &mut tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>) -> Value {
    let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("an event within 10 s")
        .expect("the follower's output")
        .expect("a line");
    serde_json::from_str::<Value>(&line).expect("one JSON event")["file"]["id"].clone()
}

#[tokio::test]
async fn jobs_are_created_followed_listed_and_canceled_from_the_command_line() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;
    let content = bytes(5000, 7);
    let file = app
        .upload(
            &user,
            "data.bin",
            "Other",
            "application/octet-stream",
            content.clone(),
        )
        .await
        .to_string();

    // No worker yet: a job waits in the queue, and is canceled there.
    let queued = drive.json(&["jobs", "create", "checksum", &file]).await;
    let id = queued["job"]["id"].as_str().unwrap().to_string();
    assert_eq!(queued["job"]["state"], "queued", "{queued}");
    let canceled = drive.run(&["jobs", "cancel", &id]).await;
    assert!(
        canceled.success && canceled.stdout.contains("stopped"),
        "{}",
        canceled.stdout
    );

    // Settings as flags or JSON; a dry run only estimates; a bad setting names its field.
    let dry = drive
        .run(&[
            "jobs",
            "create",
            "checksum",
            &file,
            "--set",
            "algorithm=md5",
            "--dry-run",
        ])
        .await;
    assert!(
        dry.success && dry.stdout.contains("would take about"),
        "{}",
        dry.stdout
    );
    let refused = drive
        .run(&[
            "jobs",
            "create",
            "checksum",
            &file,
            "--options",
            r#"{"algorithm":"crc"}"#,
        ])
        .await;
    assert!(
        !refused.success && refused.stderr.contains("algorithm"),
        "{}",
        refused.stderr
    );

    app.start_worker(&[]).await;
    let done = drive
        .json(&[
            "jobs",
            "create",
            "checksum",
            &file,
            "--set",
            "algorithm=md5",
            "--wait",
        ])
        .await;
    assert_eq!(done["state"], "done", "{done}");
    let path = scratch.path("data.bin");
    std::fs::write(&path, &content).unwrap();
    let md5sum = std::process::Command::new("md5sum").arg(&path).output().unwrap();
    let expected = String::from_utf8(md5sum.stdout).unwrap();
    assert_eq!(
        done["result"]["checksums"][0]["digest"],
        expected.split_whitespace().next().unwrap()
    );
    let text = drive.run(&["jobs", "create", "zip", &file, "--wait"]).await;
    assert!(
        text.success && text.stdout.contains(" zip done") && text.stdout.contains(".zip"),
        "{}",
        text.stdout
    );

    let listed = drive.run(&["jobs", "list"]).await;
    assert!(listed.success, "{}", listed.stderr);
    assert_eq!(
        listed.stdout.lines().filter(|l| l.contains("checksum")).count(),
        2,
        "{}",
        listed.stdout
    );
    assert!(listed.stdout.contains("stopped") && listed.stdout.contains("job minutes this month"));

    let completions = drive.run(&["completions", "bash"]).await;
    assert!(
        completions.success && completions.stdout.contains("jobs") && completions.stdout.contains("generate")
    );
}

#[tokio::test]
async fn pipelines_run_and_stopped_jobs_are_tried_again_from_the_command_line() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;
    let file = app
        .upload(
            &user,
            "data.bin",
            "Other",
            "application/octet-stream",
            bytes(5000, 3),
        )
        .await
        .to_string();
    // Stopped while queued, then tried again once a worker runs.
    let queued = drive.json(&["jobs", "create", "checksum", &file]).await;
    let id = queued["job"]["id"].as_str().unwrap().to_string();
    assert!(drive.run(&["jobs", "cancel", &id]).await.success);
    app.start_worker(&[]).await;
    let again = drive.json(&["jobs", "retry", &id, "--wait"]).await;
    assert_eq!(
        (again["id"].as_str(), again["state"].as_str()),
        (Some(id.as_str()), Some("done")),
        "{again}"
    );

    // A chain from a file of steps: packed, then unpacked again; only the last step's files land.
    let chain = scratch.path("chain.json");
    std::fs::write(
        &chain,
        r#"{ "steps": [ { "name": "packed", "jobType": "zip", "options": { "name": "packed" } },
                        { "jobType": "unzip" } ] }"#,
    )
    .unwrap();
    let chain = chain.to_str().unwrap();
    let done = drive
        .json(&["jobs", "create", "--steps", chain, &file, "--wait"])
        .await;
    assert_eq!(done["state"], "done", "{done}");
    assert_eq!(done["jobType"], "pipeline");
    assert_eq!(done["steps"][0]["name"], "packed");
    let made: Vec<&str> = done["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["fileName"].as_str().unwrap())
        .collect();
    assert_eq!(made, ["data.bin"], "{done}");
    let text = drive
        .run(&[
            "jobs",
            "create",
            "--steps",
            chain,
            &file,
            "--wait",
            "--idempotency-key",
            "k-1",
        ])
        .await;
    assert!(
        text.success && text.stdout.contains("step packed (zip) done 1/1 runs"),
        "{}",
        text.stdout
    );
    // Kept as a template, listed, run by its id, removed.
    let kept = drive
        .json(&["templates", "create", "zip and back", "--steps", chain])
        .await;
    let template = kept["template"]["id"].as_str().unwrap().to_string();
    let listed = drive.run(&["templates", "list"]).await;
    assert!(
        listed.stdout.contains("zip and back  packed → unzip"),
        "{}",
        listed.stdout
    );
    let ran = drive
        .json(&["jobs", "create", "--template", &template, &file, "--wait"])
        .await;
    assert_eq!(ran["state"], "done", "{ran}");
    assert_eq!(ran["steps"][1]["jobType"], "unzip");
    assert!(drive.run(&["templates", "remove", &template]).await.success);
    assert_eq!(drive.json(&["templates", "list"]).await["templates"], json!([]));
    let bad = scratch.path("bad.json");
    std::fs::write(&bad, r#"[ { "jobType": "zip" }, { "jobType": "proxy" } ]"#).unwrap();
    let refused = drive
        .run(&["jobs", "create", "--steps", bad.to_str().unwrap(), &file])
        .await;
    assert!(
        !refused.success && refused.stderr.contains("steps[1].use"),
        "{}",
        refused.stderr
    );
}

#[tokio::test]
async fn files_are_organized_collected_and_searched_by_every_filter_from_the_command_line() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;
    let upload = |name: &'static str, kind: &'static str, mime: &'static str, len: usize| {
        let (app, user) = (&app, &user);
        async move {
            app.upload(user, name, kind, mime, bytes(len, 1))
                .await
                .to_string()
        }
    };
    let report = upload("report.txt", "Text", "text/plain", 100).await;
    let notes = upload("notes.txt", "Text", "text/plain", 3000).await;
    let photo = upload("photo.png", "Image", "image/png", 200).await;
    let one = upload("one.wav", "Audio", "audio/wav", 300).await;
    let two = upload("two.wav", "Audio", "audio/wav", 300).await;
    let three = upload("three.wav", "Audio", "audio/wav", 300).await;
    let names = |found: &Value| -> Vec<String> {
        let mut names: Vec<String> = found["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["fileName"].as_str().unwrap().to_string())
            .collect();
        names.sort();
        names
    };

    let moved = drive.run(&["mv", &report, &notes, "--to", "/Work/2026"]).await;
    assert!(
        moved.success && moved.stdout.contains("moved 2 file(s) to /Work/2026/"),
        "{}",
        moved.stdout
    );
    let tagged = drive.run(&["tag", &report, "--tags", "urgent,client"]).await;
    assert!(
        tagged.success && tagged.stdout.contains("urgent"),
        "{}",
        tagged.stdout
    );
    let described = drive.run(&["describe", &report, "quarterly numbers"]).await;
    assert!(described.success, "{}", described.stderr);

    let found = drive.json(&["search", "--folder", "/Work"]).await;
    assert_eq!(names(&found), ["notes.txt", "report.txt"]);
    let found = drive.json(&["search", "--tags", "urgent"]).await;
    assert_eq!(names(&found), ["report.txt"]);
    let found = drive.json(&["search", "--text", "quarterly"]).await;
    assert_eq!(names(&found), ["report.txt"]);
    let found = drive.json(&["search", "--name", "notes.txt"]).await;
    assert_eq!(names(&found), ["notes.txt"]);
    let found = drive
        .json(&["search", "--types", "Image,Text", "--min-size", "150"])
        .await;
    assert_eq!(names(&found), ["notes.txt", "photo.png"]);
    let found = drive
        .json(&["search", "--private", "--sort", "largest", "--limit", "1"])
        .await;
    assert_eq!(found["files"][0]["fileName"], "notes.txt", "{found}");
    let listed = drive.run(&["search", "--types", "Audio", "--sort", "name"]).await;
    let order: Vec<&str> = listed.stdout.lines().filter(|l| l.contains(".wav")).collect();
    assert!(
        order.len() == 3 && order[0].ends_with("one.wav") && order[2].ends_with("two.wav"),
        "{}",
        listed.stdout
    );
    // A page at a time: each page's last line names the next page's cursor.
    let (mut walked, mut cursor) = (Vec::new(), None::<String>);
    loop {
        let mut args = vec!["search", "--types", "Audio", "--sort", "name", "--limit", "1"];
        if let Some(cursor) = &cursor {
            args.extend(["--cursor", cursor.as_str()]);
        }
        let page = drive.run(&args).await;
        assert!(page.success, "{}", page.stderr);
        let rows = page
            .stdout
            .lines()
            .filter(|l| l.contains(".wav") && !l.starts_with("more:"));
        walked.extend(rows.map(str::to_string));
        cursor = page
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("more: --cursor "))
            .map(str::to_string);
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(walked, order, "{walked:?}");
    let refused = drive.run(&["search", "--sort", "loudest"]).await;
    assert!(
        !refused.success && refused.stderr.contains("sort"),
        "{}",
        refused.stderr
    );

    let mix = drive
        .json(&["playlist", "create", "Mix", &one, &two, &report])
        .await;
    assert_eq!(mix["fileCount"], 2, "{mix}");
    assert_eq!(mix["skipped"], json!([report]));
    let id = mix["id"].as_str().unwrap().to_string();
    let added = drive.run(&["playlist", "add", &id, &three]).await;
    assert!(
        added.success && added.stdout.contains("3 file(s)"),
        "{}",
        added.stdout
    );
    drive.json(&["playlist", "reorder", &id, &three, &one]).await;
    let pics = drive
        .json(&[
            "gallery",
            "create",
            "Pics",
            &photo,
            "--featured",
            &photo,
            "--description",
            "Holiday",
        ])
        .await;
    assert_eq!(pics["featuredCount"], 1, "{pics}");
    let collections = drive.run(&["collections"]).await;
    for expected in ["/Work/2026/", "Mix", "Pics", "urgent"] {
        assert!(
            collections.stdout.contains(expected),
            "{expected}: {}",
            collections.stdout
        );
    }
    let listed = app.call(&user, "/select-collections", None).await;
    let playlist = &listed.body["playlists"][0];
    assert_eq!(playlist["fileCount"], 3, "{}", listed.body);

    let archived = drive
        .json(&["archive", &report, &notes, "--title", "bundle"])
        .await;
    assert_eq!(archived["job"]["jobType"], "zip", "{archived}");
    let gallery_zip = drive
        .json(&["archive", "--gallery", pics["id"].as_str().unwrap()])
        .await;
    assert_eq!(gallery_zip["job"]["fileIds"], json!([photo]));
    let views = drive.json(&["views"]).await;
    assert!(
        views["since"].is_string() && views["files"] == json!([]),
        "{views}"
    );
}

#[tokio::test]
async fn a_newer_client_is_mentioned_once_a_day_without_holding_a_command_up() {
    let app = TestApp::spawn_with(&[("DRIVE_CLIENT_VERSION", "99.0.0")]).await;
    let user = app.user(Some("Pro")).await;
    let versions = reqwest::get(format!("{}/version", app.url)).await.unwrap();
    assert_eq!(versions.status(), 200);
    let versions: Value = versions.json().await.unwrap();
    assert_eq!(versions["apiVersion"], "2026.09.28");
    assert_eq!(versions["clients"]["drive"], "99.0.0");

    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;
    let first = drive.run(&["list"]).await;
    assert!(first.success, "{}", first.stderr);
    assert!(
        first.stderr.contains("drive 99.0.0 is available"),
        "{}",
        first.stderr
    );
    // Checked today: not again.
    let second = drive.run(&["list"]).await;
    assert!(!second.stderr.contains("available"), "{}", second.stderr);
    // A day later (the note's time moved back), once more; --json output stays one document.
    let marker = scratch.path("config/drive.json.version-checked");
    std::fs::write(
        &marker,
        (chrono::Utc::now() - chrono::TimeDelta::hours(25)).to_rfc3339(),
    )
    .unwrap();
    let third = drive.run(&["--json", "list"]).await;
    assert!(third.stderr.contains("99.0.0"), "{}", third.stderr);
    serde_json::from_str::<Value>(&third.stdout).expect("stdout is only the JSON document");
}

#[tokio::test]
async fn webhooks_are_added_listed_and_removed_from_the_command_line() {
    let receiver = drive_tests::receiver::Receiver::start().await;
    let mut app = TestApp::spawn_with(&receiver.trust()).await;
    app.start_worker(&receiver.trust()).await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;

    let url = format!("{}/drive", receiver.url);
    let added = drive.run(&["webhook", "add", &url, "--kinds", "file,job"]).await;
    assert!(added.success, "{}{}", added.stdout, added.stderr);
    assert!(
        added.stdout.contains("sends file,job events to"),
        "{}",
        added.stdout
    );
    let secret = added
        .stdout
        .split_whitespace()
        .find(|w| w.starts_with("whsec_"))
        .expect("the secret is printed")
        .to_string();
    app.upload(&user, "a.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    let received = receiver.wait_for(1, Duration::from_secs(20)).await;
    assert_eq!(received[0].json()["file"]["fileName"], "a.txt");
    assert!(
        received[0].signed_by(&secret),
        "not signed with the secret printed"
    );

    let listed = drive.json(&["webhook", "list"]).await;
    let subscription = &listed["subscriptions"][0];
    assert_eq!(subscription["url"], url.as_str());
    let id = subscription["id"].as_str().unwrap().to_string();
    let table = drive.run(&["webhook", "list"]).await;
    assert!(
        table.success
            && table.stdout.contains(&id)
            && table.stdout.contains("active")
            && table.stdout.contains(&url),
        "{}",
        table.stdout
    );

    let refused = drive.run(&["webhook", "add", "http://127.0.0.1:9/x"]).await;
    assert!(
        !refused.success && refused.stderr.contains("https"),
        "{}",
        refused.stderr
    );

    let removed = drive.run(&["webhook", "remove", &id]).await;
    assert!(
        removed.success && removed.stdout.contains("removed"),
        "{}",
        removed.stderr
    );
    let again = drive.run(&["webhook", "remove", &id]).await;
    assert!(
        !again.success && again.stderr.contains("no event subscription"),
        "{}",
        again.stderr
    );
    let empty = drive.run(&["webhook", "list"]).await;
    assert!(empty.stdout.contains("No webhooks"), "{}", empty.stdout);
}

#[tokio::test]
async fn the_apps_let_in_through_oauth_are_listed_and_revoked_from_the_command_line() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;
    let empty = drive.run(&["connections", "list"]).await;
    assert!(
        empty.success && empty.stdout.contains("No apps"),
        "{}{}",
        empty.stdout,
        empty.stderr
    );

    let client = drive_tests::oauth::OAuthClient::register(&app, "Sketchbook", "http://127.0.0.1:9/cb").await;
    let access = client.connect(&app, &user.api_token, &["read", "write"]).await;
    let listed = drive.json(&["connections", "list"]).await;
    let connection = &listed["connections"][0];
    assert_eq!(connection["clientName"], "Sketchbook");
    let id = connection["id"].as_str().unwrap().to_string();
    let table = drive.run(&["connections", "list"]).await;
    assert!(
        table.stdout.contains(&id)
            && table.stdout.contains("Sketchbook")
            && table.stdout.contains("read write"),
        "{}",
        table.stdout
    );

    let revoked = drive.run(&["connections", "revoke", &id]).await;
    assert!(
        revoked.success && revoked.stdout.contains("revoked"),
        "{}",
        revoked.stderr
    );
    assert_eq!(app.exchange(&access).await.status, 401, "the app's token stopped");
    let again = drive.run(&["connections", "revoke", &id]).await;
    assert!(
        !again.success && again.stderr.contains("no app you let in"),
        "{}",
        again.stderr
    );
}

#[tokio::test]
async fn waiting_agent_tasks_are_listed_and_stopped_from_the_command_line() {
    let model = drive_tests::provider::FakeChat::scripted(
        vec![crate::agent::call(
            "wait_for",
            json!({ "for": "files_in_folder", "folder": "/inbox" }),
        )],
        Duration::ZERO,
    )
    .await;
    let mut app = TestApp::spawn().await;
    app.start_worker(&[("DRIVE_AGENT_MODEL_URL", &model.url)]).await;
    let user = app.user(Some("Pro")).await;
    let placed = app
        .upload(&user, "readme.txt", "Text", "text/plain", bytes(10, 2))
        .await;
    let moved = app
        .call(
            &user,
            "/move-files",
            Some(json!({ "fileIds": [placed], "folder": "/inbox" })),
        )
        .await;
    assert_eq!(moved.status, 200, "{}", moved.body);
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;
    let empty = drive.run(&["agents", "list"]).await;
    assert!(
        empty.success && empty.stdout.contains("No agent tasks"),
        "{}{}",
        empty.stdout,
        empty.stderr
    );

    // A blocking ask answers once the task waits.
    let asked = drive.json(&["ask", "Tell me when files land in /inbox"]).await;
    let id = asked["task"]["id"].as_str().unwrap().to_string();
    assert_eq!(asked["task"]["status"]["state"], "TASK_STATE_WORKING", "{asked}");
    let table = drive.run(&["agents", "list", "--state", "waiting"]).await;
    assert!(
        table.success && table.stdout.contains(&id) && table.stdout.contains("/inbox (until "),
        "{}{}",
        table.stdout,
        table.stderr
    );
    let stopped = drive.run(&["agents", "stop", &id]).await;
    assert!(
        stopped.success && stopped.stdout.contains("stopped"),
        "{}",
        stopped.stderr
    );
    let listed = drive.json(&["agents", "list"]).await;
    assert_eq!(listed["tasks"][0]["taskId"], id, "{listed}");
    assert_eq!(listed["tasks"][0]["state"], "canceled", "{listed}");
    assert_eq!(listed["tasks"][0]["waitingFor"], Value::Null, "{listed}");
    let waiting = drive.json(&["agents", "list", "--state", "waiting"]).await;
    assert_eq!(waiting["tasks"], json!([]), "{waiting}");
    let again = drive.run(&["agents", "stop", &id]).await;
    assert!(
        !again.success && again.stderr.contains("ended"),
        "{}",
        again.stderr
    );
}

#[tokio::test]
async fn the_agent_is_asked_from_the_command_line() {
    let model = drive_tests::provider::FakeChat::scripted(
        vec![json!({ "role": "assistant", "content": null, "tool_calls": [{
            "id": "call-1", "type": "function",
            "function": { "name": "reply", "arguments": "{\"text\":\"You have no files yet.\"}" }
        }] })],
        Duration::ZERO,
    )
    .await;
    let mut app = TestApp::spawn().await;
    app.start_worker(&[("DRIVE_AGENT_MODEL_URL", &model.url)]).await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;

    let asked = drive.run(&["ask", "What files do I have?"]).await;
    assert!(asked.success, "{}{}", asked.stdout, asked.stderr);
    assert_eq!(asked.stdout.trim(), "You have no files yet.");
    let context = asked
        .stderr
        .split_whitespace()
        .skip_while(|w| *w != "--context")
        .nth(1)
        .expect("the conversation's id is printed")
        .to_string();
    let again = drive.json(&["ask", "And now?", "--context", &context]).await;
    assert_eq!(again["task"]["contextId"], context.as_str());
    assert_eq!(again["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    // The model read the first question and its answer before the second.
    let second = &model.sent()[1].body["messages"];
    assert_eq!(second[1]["content"], "What files do I have?");
    assert_eq!(second[2]["content"], "You have no files yet.");
    assert_eq!(second[3]["content"], "And now?");

    let refused = drive.run(&["ask", "hello", "--context", "not-an-id"]).await;
    assert!(
        !refused.success && refused.stderr.contains("contextId"),
        "{}",
        refused.stderr
    );
}

/// `drive rules`: a rule added on a folder (made on the way), estimated first with `--dry-run`,
/// listed with what it took, paused, resumed and removed.
#[tokio::test]
async fn folder_rules_are_added_listed_paused_and_removed_from_the_command_line() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;
    let file = app
        .upload(
            &user,
            "data.bin",
            "Other",
            "application/octet-stream",
            bytes(5000, 4),
        )
        .await
        .to_string();
    let moved = app
        .call(
            &user,
            "/move-files",
            Some(json!({ "fileIds": [file], "folder": "/Sums" })),
        )
        .await;
    assert_eq!(moved.status, 200, "{}", moved.body);

    let estimate = drive
        .json(&[
            "rules",
            "add",
            "/Sums",
            "--type",
            "checksum",
            "--set",
            "algorithm=md5",
            "--dry-run",
        ])
        .await;
    assert_eq!(estimate["dryRun"], true, "{estimate}");
    assert_eq!(estimate["backfill"]["files"], 1, "{estimate}");
    assert!(
        drive.json(&["rules", "list"]).await["rules"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    app.start_worker(&[]).await;
    let added = drive
        .run(&[
            "rules",
            "add",
            "/Sums",
            "--type",
            "checksum",
            "--set",
            "algorithm=md5",
            "--backfill",
            "5",
        ])
        .await;
    assert!(added.success, "{}", added.stderr);
    assert!(added.stdout.contains("/Sums/  checksum  on"), "{}", added.stdout);
    assert!(
        added.stdout.contains("backfill: 1 of 1 files"),
        "{}",
        added.stdout
    );
    let listed = drive.json(&["rules", "list"]).await;
    let rule = &listed["rules"][0];
    assert_eq!(rule["options"]["algorithm"], "md5", "{listed}");
    assert_eq!(rule["filesTaken"], 1, "{listed}");
    let id = rule["id"].as_str().unwrap();

    let paused = drive.run(&["rules", "pause", id]).await;
    assert!(paused.stdout.contains("paused"), "{}", paused.stdout);
    let resumed = drive.json(&["rules", "resume", id]).await;
    assert_eq!(resumed["rule"]["paused"], false, "{resumed}");
    let removed = drive.run(&["rules", "remove", id]).await;
    assert!(removed.stdout.contains("removed"), "{}", removed.stdout);
    let gone = drive.run(&["rules", "remove", id]).await;
    assert!(
        !gone.success && gone.stderr.contains("rule_not_found"),
        "{}",
        gone.stderr
    );
    // Neither a type nor steps nor a template: clap refuses before any call.
    let neither = drive.run(&["rules", "add", "/Sums"]).await;
    assert!(!neither.success, "{}", neither.stdout);
}

#[tokio::test]
async fn everyday_verbs_run_from_the_command_line() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;
    let file = app
        .upload(&user, "draft.txt", "Text", "text/plain", bytes(40, 1))
        .await
        .to_string();
    let song = app
        .upload(&user, "song.mp3", "Audio", "audio/mpeg", bytes(40, 2))
        .await
        .to_string();

    let renamed = drive.json(&["rename", &file, "final.txt"]).await;
    assert_eq!(renamed["fileName"], "final.txt");
    let refused = drive.run(&["rename", &file, "a/b"]).await;
    assert!(
        !refused.success && refused.stderr.contains("fileName"),
        "{}",
        refused.stderr
    );
    let copied = drive.run(&["cp", &file, "--to", "/Drafts/Old"]).await;
    assert!(copied.success, "{}", copied.stderr);
    assert!(
        copied.stdout.contains("copied 1 file(s) to /Drafts/Old/"),
        "{}",
        copied.stdout
    );
    let moved = drive.json(&["folder", "mv", "/Drafts", "/Archive/Drafts"]).await;
    assert_eq!(moved["folder"]["path"], "/Archive/Drafts/");
    assert_eq!(moved["from"], "/Drafts/");
    let deleted = drive.json(&["folder", "rm", "/Archive/Drafts/Old"]).await;
    assert_eq!(deleted["trashed"].as_array().unwrap().len(), 1, "{deleted}");
    assert_eq!(trash(&app, &user).await.len(), 1);

    let tagged = drive.run(&["tag", &file, "--tags", "Later"]).await;
    assert!(tagged.success, "{}", tagged.stderr);
    assert!(drive.run(&["delete-tag", "later"]).await.success);
    let collections = app.call(&user, "/select-collections", None).await.body;
    assert_eq!(collections["tags"], json!([]));

    let playlist = drive.json(&["playlist", "create", "Mix", &song]).await;
    let id = playlist["id"].as_str().unwrap().to_string();
    let renamed = drive.json(&["playlist", "rename", &id, "Mix 2"]).await;
    assert_eq!(renamed["title"], "Mix 2");
    let removed = drive.json(&["playlist", "remove", &id, &song]).await;
    assert_eq!(removed["removed"], json!([song]));
    assert!(drive.run(&["playlist", "delete", &id]).await.success);
    let gone = drive.run(&["playlist", "delete", &id]).await;
    assert!(
        !gone.success && gone.stderr.contains("playlist_not_found"),
        "{}",
        gone.stderr
    );

    let request = drive.json(&["request", "create", "Receipts"]).await;
    let request_id = request["id"].as_str().unwrap().to_string();
    assert!(drive.run(&["request", "delete", &request_id]).await.success);
    let review = drive.json(&["review", "create", &song]).await;
    let closed = drive
        .json(&["review", "close", review["id"].as_str().unwrap()])
        .await;
    assert!(closed["closeTime"].is_string(), "{closed}");
}

#[tokio::test]
async fn files_are_shared_listed_and_taken_back_from_the_command_line() {
    let app = TestApp::spawn().await;
    let (owner, friend) = (app.user(Some("Pro")).await, app.user(Some("Pro")).await);
    let (scratch, other_scratch) = (Scratch::new(), Scratch::new());
    let (mine, theirs) = (Drive::new(&scratch), Drive::new(&other_scratch));
    mine.login(&app, &owner).await;
    theirs.login(&app, &friend).await;
    let file = app
        .upload(&owner, "plan.txt", "Text", "text/plain", bytes(30, 1))
        .await
        .to_string();
    let shared = mine.run(&["share", &file, "--with", &friend.handle]).await;
    assert!(shared.success, "{}", shared.stderr);
    assert!(
        shared.stdout.contains(&format!("with {}", friend.handle)),
        "{}",
        shared.stdout
    );
    let listed = mine.json(&["shares"]).await;
    assert_eq!(listed["shares"][0]["file"]["id"], file.as_str());
    let with_me = theirs.run(&["shared"]).await;
    assert!(
        with_me.success && with_me.stdout.contains("plan.txt"),
        "{}",
        with_me.stdout
    );
    assert!(
        with_me.stdout.contains(&format!("from {}", owner.handle)),
        "{}",
        with_me.stdout
    );
    let found = theirs.json(&["search", "--shared", "only"]).await;
    assert_eq!(found["files"][0]["id"], file.as_str(), "{found}");
    let profile = theirs
        .json(&["profile", "--display-name", "Fern", "--show-views", "false"])
        .await;
    assert_eq!(
        (profile["displayName"].clone(), profile["showViews"].clone()),
        (json!("Fern"), json!(false))
    );
    let taken = mine.run(&["unshare", &file]).await;
    assert!(
        taken.success && taken.stdout.contains("took back 1 share(s)"),
        "{}",
        taken.stdout
    );
    assert_eq!(theirs.json(&["shared"]).await, json!([]));
    let nobody = mine.run(&["share", &file, "--with", "no-such-handle"]).await;
    assert!(
        !nobody.success && nobody.stderr.contains("handle_not_found"),
        "{}",
        nobody.stderr
    );
}

#[tokio::test]
async fn sign_ins_to_the_app_are_listed_and_ended_from_the_command_line() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let drive = Drive::new(&scratch);
    drive.login(&app, &user).await;
    let none = drive.run(&["sign-ins"]).await;
    assert!(
        none.success && none.stdout.contains("not signed in to the app anywhere"),
        "{}",
        none.stdout
    );

    // Two browsers sign in with the password an invitation set.
    let password = json!({ "invitation": app.invitation(&user.handle), "password": "correct horse battery" });
    let accepted = app
        .send(None, Some(APP_ID), "/accept-invitation", Some(password))
        .await;
    assert_eq!(accepted.status, reqwest::StatusCode::OK, "{}", accepted.body);
    let again = json!({ "handle": user.handle, "password": "correct horse battery" });
    let second = app.send(None, Some(APP_ID), "/sign-in", Some(again)).await;
    assert_eq!(second.status, reqwest::StatusCode::OK, "{}", second.body);

    let listed = drive.json(&["sign-ins"]).await;
    let ids: Vec<&str> = listed["signIns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["signInId"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{listed}");
    let table = drive.run(&["sign-ins"]).await;
    assert!(
        table.stdout.contains(ids[0]) && table.stdout.contains("127.0.0.1"),
        "{}",
        table.stdout
    );
    let one = drive.run(&["sign-ins", "--end", ids[0]]).await;
    assert!(
        one.success && one.stdout.contains("ended 1 sign-in(s)"),
        "{} {}",
        one.stdout,
        one.stderr
    );
    let all = drive.json(&["sign-ins", "--end-all"]).await;
    assert_eq!(all["ended"], 1, "{all}");
    let gone = drive.run(&["sign-ins", "--end", ids[1]]).await;
    assert!(
        !gone.success && gone.stderr.contains("no live sign-in"),
        "{}",
        gone.stderr
    );
    let session = second.body["gelToken"].as_str().unwrap();
    app.send(Some(session), Some(APP_ID), "/select-profile", None)
        .await
        .assert_error(401, "unauthorized");
}
