//! The job farm end to end: the real API, real `drive-worker` processes, Redis, PostgreSQL
//! and the object store. Checksums, zip and unzip, cancel, minutes, the job event, workers
//! sharing a queue and a worker killed mid-job.

use std::io::{Read, Write};
use std::process::Command;
use std::time::{Duration, Instant};

use drive_tests::media::video_of;

#[cfg(target_arch = "x86_64")]
mod probe;
use drive_tests::proxy::TcpProxy;
use drive_tests::{TestApp, TestUser, bytes, env, names};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sqlx::Row;

/// What a command-line tool prints first for `bytes` (`sha256sum`, `md5sum`).
fn digest_by(tool: &str, bytes: &[u8]) -> String {
    let path = std::env::temp_dir().join(format!("drive-digest-{}", uuid::Uuid::new_v4().simple()));
    std::fs::write(&path, bytes).unwrap();
    let out = Command::new(tool)
        .arg(&path)
        .output()
        .expect("run the digest tool");
    std::fs::remove_file(&path).unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// Uploads `n` files of `len` bytes and asks a checksum of each (a file each: a second checksum
/// of one file is answered from its kept digest, with no job run); answers the jobs.
async fn checksums_of_new_files(app: &TestApp, user: &TestUser, n: u8, len: usize) -> Vec<Value> {
    let mut jobs = Vec::new();
    for i in 0..n {
        let name = format!("{i}.bin");
        let file = app
            .upload(user, &name, "Other", "application/octet-stream", bytes(len, i))
            .await;
        jobs.push(
            app.create_job(user, json!({ "jobType": "checksum", "fileIds": [file] }))
                .await,
        );
    }
    jobs
}

async fn app_with_worker() -> (TestApp, TestUser) {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    (app, user)
}

#[tokio::test]
async fn checksums_equal_sha256sum_and_md5sum_of_the_bytes() {
    let (app, user) = app_with_worker().await;
    let big = bytes(9 * 1024 * 1024 + 7, 3);
    let small = bytes(1000, 9);
    let a = app
        .upload(&user, "big.bin", "Other", "application/octet-stream", big.clone())
        .await;
    let b = app
        .upload(
            &user,
            "small.bin",
            "Other",
            "application/octet-stream",
            small.clone(),
        )
        .await;

    let job = app
        .run_job(&user, json!({ "jobType": "checksum", "fileIds": [a, b] }))
        .await;
    assert_eq!(job["state"], "done", "{job}");
    assert_eq!(job["result"]["algorithm"], "sha256");
    let sums = &job["result"]["checksums"];
    assert_eq!(sums[0]["fileId"], a.to_string());
    assert_eq!(sums[0]["digest"], digest_by("sha256sum", &big));
    assert_eq!(sums[1]["digest"], digest_by("sha256sum", &small));
    assert_eq!(job["progress"], 1.0);
    assert!(
        job["files"].as_array().unwrap().is_empty(),
        "a checksum makes no files"
    );
    // With nothing ahead of it, a job starts within a second of its creation.
    let time = |f: &str| chrono::DateTime::parse_from_rfc3339(job[f].as_str().unwrap()).unwrap();
    let waited = time("startTime") - time("createTime");
    assert!(waited < chrono::TimeDelta::seconds(1), "waited {waited}");

    let job = app
        .run_job(
            &user,
            json!({ "jobType": "checksum", "fileIds": [a], "options": { "algorithm": "md5" } }),
        )
        .await;
    assert_eq!(
        job["result"]["checksums"][0]["digest"],
        digest_by("md5sum", &big),
        "{job}"
    );
}

#[tokio::test]
async fn a_checksum_computed_once_is_answered_at_once_the_next_time() {
    let (app, user) = app_with_worker().await;
    let blob = bytes(3 * 1024 * 1024 + 1, 8);
    let file = app
        .upload(
            &user,
            "blob.bin",
            "Other",
            "application/octet-stream",
            blob.clone(),
        )
        .await;
    let other = app
        .upload(
            &user,
            "other.bin",
            "Other",
            "application/octet-stream",
            bytes(500, 2),
        )
        .await;
    let first = app
        .run_job(&user, json!({ "jobType": "checksum", "fileIds": [file] }))
        .await;
    assert_eq!(first["state"], "done", "{first}");

    // The same file and algorithm again: done in the answer itself, nothing queued or run.
    let again = app
        .call(
            &user,
            "/create-file-job",
            Some(json!({ "jobType": "checksum", "fileIds": [file] })),
        )
        .await;
    assert_eq!(again.status, 200, "{}", again.body);
    let job = &again.body["job"];
    assert_eq!(job["state"], "done", "{job}");
    assert_eq!(job["progress"], 1.0);
    assert_eq!(job["seconds"], 0.0, "{job}");
    assert_eq!(job["result"], first["result"]);
    assert_eq!(
        job["result"]["checksums"][0]["digest"],
        digest_by("sha256sum", &blob)
    );
    // Its end is a drive event like any job's.
    let ended = app
        .wait_events(&user, json!({ "kinds": ["job"], "jobId": job["id"] }), 1)
        .await;
    assert_eq!(ended[0]["job"]["state"], "done");

    // Another algorithm, or a file with no digest kept, is a job that runs.
    let md5 = app
        .run_job(
            &user,
            json!({ "jobType": "checksum", "fileIds": [file], "options": { "algorithm": "md5" } }),
        )
        .await;
    assert_eq!(
        md5["result"]["checksums"][0]["digest"],
        digest_by("md5sum", &blob)
    );
    let both = app
        .create_job(&user, json!({ "jobType": "checksum", "fileIds": [file, other] }))
        .await;
    let both = app.wait_job(&user, &both["id"]).await;
    assert_eq!(both["result"]["checksums"][0], first["result"]["checksums"][0]);
}

/// The keys in Redis under `queue` (the app's prefix).
fn queue_keys(queue: &str) -> Vec<String> {
    let out = Command::new("redis-cli")
        .arg("-u")
        .arg(env("DRIVE_TEST_REDIS_URL"))
        .args(["--scan", "--pattern", &format!("{queue}:*")])
        .output()
        .expect("redis-cli");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The job rows are the queue: Redis only rings the workers' doorbell, so it holds nothing of
/// a job, queued, running or ended, however many ran (the rate limits' counters aside).
#[tokio::test]
async fn redis_holds_nothing_of_jobs() {
    let (app, user) = app_with_worker().await;
    for n in 0..12u8 {
        let file = app
            .upload(
                &user,
                &format!("{n}.bin"),
                "Other",
                "application/octet-stream",
                bytes(1000 + usize::from(n), n),
            )
            .await;
        app.run_job(&user, json!({ "jobType": "checksum", "fileIds": [file] }))
            .await;
    }
    let kept: Vec<String> = queue_keys(&app.queue)
        .into_iter()
        .filter(|key| !key.starts_with(&format!("{}:rate:", app.queue)))
        .collect();
    assert!(kept.is_empty(), "Redis keeps {kept:?}");
}

#[tokio::test]
async fn a_burst_of_short_jobs_never_stops_the_workers_queue() {
    // apalis records its lease on a message in a batch of its own, at times after the job has
    // ended; removing the message before that failed the lease ("task not held by this
    // worker") and stopped the worker's polling for 5 s at a time, and under load jobs were
    // given up as interrupted.
    let mut app = TestApp::spawn_with(&[("DRIVE_MAX_ACTIVE_JOBS", "1000")]).await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    let jobs = checksums_of_new_files(&app, &user, 80, 500).await;
    for job in &jobs {
        let ended = app.wait_job(&user, &job["id"]).await;
        assert_eq!(ended["state"], "done", "{ended}");
    }
    let logs = app.worker_logs();
    assert!(
        !logs.contains("task not held by this worker"),
        "the queue failed under the burst"
    );
    assert!(
        !logs.contains("the queue failed"),
        "the queue failed under the burst"
    );
}

#[tokio::test]
async fn a_zip_holds_the_files_and_unzipping_it_gives_them_back() {
    let (app, user) = app_with_worker().await;
    let text = b"hello, zip\n".repeat(50_000);
    let blob = bytes(3 * 1024 * 1024, 5);
    let t = app
        .upload(&user, "notes.txt", "Text", "text/plain", text.clone())
        .await;
    let p = app
        .upload(&user, "photo.jpg", "Image", "image/jpeg", blob.clone())
        .await;
    let d = app
        .upload(&user, "notes.txt", "Text", "text/plain", b"second".to_vec())
        .await;
    let moved = app
        .call(
            &user,
            "/move-files",
            Some(json!({ "fileIds": [t, p, d], "folder": "/work" })),
        )
        .await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.body);

    let job = app
        .run_job(
            &user,
            json!({ "jobType": "zip", "fileIds": [t, p, d], "options": { "name": "bundle" } }),
        )
        .await;
    assert_eq!(job["state"], "done", "{job}");
    let made = &job["files"][0];
    assert_eq!(made["fileName"], "bundle.zip");
    assert_eq!(
        job["folder"]["path"], "/work/",
        "results land beside the first file"
    );
    let zipped = app.download(&user, made["id"].as_str().unwrap()).await;
    assert_eq!(made["fileSize"], zipped.len());
    // Read with an independent reader, entry by entry.
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(zipped.clone())).expect("a readable zip");
    assert_eq!(archive.len(), 3);
    let mut entry = |i: usize| {
        let mut e = archive.by_index(i).unwrap();
        let mut out = Vec::new();
        e.read_to_end(&mut out).unwrap();
        (e.name().unwrap().to_string(), out)
    };
    assert_eq!(entry(0), ("notes.txt".to_string(), text.clone()));
    assert_eq!(entry(1), ("photo.jpg".to_string(), blob.clone()));
    assert_eq!(entry(2), ("notes (2).txt".to_string(), b"second".to_vec()));

    let zip_id = made["id"].clone();
    let job = app
        .run_job(&user, json!({ "jobType": "unzip", "fileIds": [zip_id] }))
        .await;
    assert_eq!(job["state"], "done", "{job}");
    assert_eq!(
        job["folder"]["path"], "/work/bundle/",
        "a new folder beside the zip"
    );
    assert_eq!(job["result"]["entries"], 3);
    let files = job["files"].as_array().unwrap();
    let names: Vec<&str> = files.iter().map(|f| f["fileName"].as_str().unwrap()).collect();
    assert_eq!(names, ["notes.txt", "photo.jpg", "notes (2).txt"]);
    assert_eq!(app.download(&user, files[0]["id"].as_str().unwrap()).await, text);
    assert_eq!(app.download(&user, files[1]["id"].as_str().unwrap()).await, blob);
    assert_eq!(files[1]["type"], "Image", "kinds come from the names");

    // Zipping a folder keeps the paths below it and lands beside the folder.
    let folders = app.call(&user, "/select-collections", None).await;
    let work = folders.body["folders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "/work/")
        .unwrap()["id"]
        .clone();
    let job = app
        .run_job(&user, json!({ "jobType": "zip", "fromFolderId": work }))
        .await;
    assert_eq!(job["state"], "done", "{job}");
    assert_eq!(job["files"][0]["fileName"], "work.zip");
    assert!(job["folder"].is_null(), "beside /work is the top: {job}");
    let zipped = app.download(&user, job["files"][0]["id"].as_str().unwrap()).await;
    let mut names = names_in(&zipped);
    names.sort();
    assert_eq!(
        names,
        [
            "bundle.zip",
            "bundle/notes (2).txt",
            "bundle/notes.txt",
            "bundle/photo.jpg",
            "notes (2).txt",
            "notes.txt",
            "photo.jpg"
        ]
    );
}

/// A zip of `n` entries `f0.bin`, `f1.bin`… of `size` bytes each, slow enough to unpack (each
/// entry is stored and recorded by itself) that a test can act while the job runs; answers the
/// entries' bytes and the zip.
fn many_entries(n: u16, size: usize) -> (Vec<Vec<u8>>, Vec<u8>) {
    let entries: Vec<(String, Vec<u8>)> = (0..n)
        .map(|i| (format!("f{i}.bin"), bytes(size, i as u8)))
        .collect();
    let refs: Vec<(&str, &[u8])> = entries.iter().map(|(n, b)| (n.as_str(), b.as_slice())).collect();
    let zipped = zip_of(&refs);
    (entries.into_iter().map(|(_, b)| b).collect(), zipped)
}

/// The entry names of a zip, in the order stored.
fn names_in(zipped: &[u8]) -> Vec<String> {
    let archive = zip::ZipArchive::new(std::io::Cursor::new(zipped)).expect("a readable zip");
    archive.file_names().map(|n| n.unwrap().to_string()).collect()
}

/// A zip made in the test with `entries` as (name, bytes), deflated.
fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    let mut writer = zip::ZipWriter::new(&mut out);
    for (name, data) in entries {
        writer
            .start_file(*name, zip::write::SimpleFileOptions::default())
            .unwrap();
        writer.write_all(data).unwrap();
    }
    writer.finish().unwrap();
    out.into_inner()
}

#[tokio::test]
async fn unzip_makes_nested_folders_and_refuses_escapes_and_bombs() {
    let (app, user) = app_with_worker().await;
    let nested = zip_of(&[("a/b/deep.txt", b"deep"), ("top.txt", b"top")]);
    let id = app
        .upload(&user, "tree.zip", "Archive", "application/zip", nested)
        .await;
    let job = app
        .run_job(
            &user,
            json!({ "jobType": "unzip", "fileIds": [id], "folder": "/out" }),
        )
        .await;
    assert_eq!(job["state"], "done", "{job}");
    assert_eq!(job["folder"]["path"], "/out/tree/");
    let listed = app.call(&user, "/select-collections", None).await;
    let paths: Vec<&str> = listed.body["folders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"/out/tree/a/b/"), "{paths:?}");
    assert_eq!(
        app.download(&user, job["files"][0]["id"].as_str().unwrap()).await,
        b"deep"
    );

    // Unzipping the same archive again makes a second folder rather than mixing the two.
    let again = app
        .run_job(
            &user,
            json!({ "jobType": "unzip", "fileIds": [id], "folder": "/out" }),
        )
        .await;
    assert_eq!(again["folder"]["path"], "/out/tree (2)/");

    let escape = zip_of(&[("../../evil.txt", b"evil")]);
    let id = app
        .upload(&user, "escape.zip", "Archive", "application/zip", escape)
        .await;
    let job = app
        .run_job(&user, json!({ "jobType": "unzip", "fileIds": [id] }))
        .await;
    assert_eq!(job["state"], "done", "{job}");
    assert!(job["files"].as_array().unwrap().is_empty(), "{job}");
    assert!(
        job["result"]["skipped"][0].as_str().unwrap().contains("outside"),
        "{job}"
    );

    let zeros = vec![0u8; 50 * 1024 * 1024];
    let bomb = zip_of(&[("zeros.bin", &zeros)]);
    assert!(bomb.len() < 200_000);
    let id = app
        .upload(&user, "bomb.zip", "Archive", "application/zip", bomb)
        .await;
    let job = app
        .run_job(&user, json!({ "jobType": "unzip", "fileIds": [id] }))
        .await;
    assert_eq!(job["state"], "failed", "{job}");
    assert!(job["error"].as_str().unwrap().contains("zip bomb"), "{job}");
    assert!(job["files"].as_array().unwrap().is_empty());

    let junk = app
        .upload(&user, "junk.zip", "Archive", "application/zip", bytes(5000, 1))
        .await;
    let job = app
        .run_job(&user, json!({ "jobType": "unzip", "fileIds": [junk] }))
        .await;
    assert_eq!(job["state"], "failed", "{job}");
    assert!(job["error"].as_str().unwrap().contains("junk.zip"), "{job}");
}

/// An unzip's entries are stored several at a time while the next is unpacked, yet each is
/// recorded in the archive's order: entries landing on one name are numbered as they come, and
/// their events follow the same order.
#[tokio::test]
async fn unzipped_entries_are_named_and_announced_in_the_archives_order() {
    let (app, user) = app_with_worker().await;
    // One name reached 24 ways ("./" repeated), each entry's bytes saying which it is.
    let paths: Vec<String> = (0..24).map(|n| format!("{}same.txt", "./".repeat(n))).collect();
    let contents: Vec<String> = (0..24).map(|n| format!("entry {n}")).collect();
    let entries: Vec<(&str, &[u8])> = paths
        .iter()
        .zip(&contents)
        .map(|(path, content)| (path.as_str(), content.as_bytes()))
        .collect();
    let id = app
        .upload(&user, "same.zip", "Archive", "application/zip", zip_of(&entries))
        .await;
    let job = app
        .run_job(&user, json!({ "jobType": "unzip", "fileIds": [id] }))
        .await;
    assert_eq!(job["state"], "done", "{job}");
    let made = drive_tests::made(&job);
    assert_eq!(made.len(), 24, "{job}");
    for (n, (file_id, name)) in made.iter().enumerate() {
        let wanted = match n {
            0 => "same.txt".to_string(),
            n => format!("same ({}).txt", n + 1),
        };
        assert_eq!(name, &wanted);
        assert_eq!(
            app.download(&user, file_id).await,
            contents[n].as_bytes(),
            "{name}"
        );
    }
    let events = app.wait_events(&user, json!({ "kinds": ["file"] }), 25).await;
    let announced: Vec<&str> = events
        .iter()
        .map(|e| e["file"]["id"].as_str().unwrap())
        .filter(|id| made.iter().any(|(made, _)| made == id))
        .collect();
    let in_order: Vec<&str> = made.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(announced, in_order);
}

#[tokio::test]
async fn unzip_skips_entries_whose_names_the_drive_refuses() {
    let (app, user) = app_with_worker().await;
    let archive = zip_of(&[
        ("../../x.txt", b"x"),
        ("..\\..\\y.txt", b"y"),
        ("bell\u{7}.txt", b"bell"),
        ("photo\u{202E}gpj.exe", b"exe"),
        ("sub/\u{2066}hidden/z.txt", b"z"),
        ("sub/ok.txt", b"ok"),
    ]);
    let id = app
        .upload(&user, "names.zip", "Archive", "application/zip", archive)
        .await;
    let job = app
        .run_job(&user, json!({ "jobType": "unzip", "fileIds": [id] }))
        .await;
    assert_eq!(job["state"], "done", "{job}");
    assert_eq!(names(&job), ["ok.txt"], "{job}");
    assert_eq!(job["result"]["entries"], 1, "{job}");
    assert_eq!(job["result"]["skipped"].as_array().unwrap().len(), 5, "{job}");
    // Nothing else came to be: no file, and no folder but the archive's and `sub`.
    let listed = app.call(&user, "/select-user-files", None).await;
    let mut all: Vec<&str> = listed
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["fileName"].as_str().unwrap())
        .collect();
    all.sort_unstable();
    assert_eq!(all, ["names.zip", "ok.txt"]);
    let collections = app.call(&user, "/select-collections", None).await;
    let folders: Vec<&str> = collections.body["folders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(folders, ["/names/", "/names/sub/"]);
}

#[tokio::test]
async fn a_zip_never_writes_an_entry_that_could_escape() {
    let (app, user) = app_with_worker().await;
    let a = app
        .upload(&user, "a.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    let b = app
        .upload(&user, "b.txt", "Text", "text/plain", bytes(10, 2))
        .await;
    let c = app
        .upload(&user, "c.txt", "Text", "text/plain", bytes(10, 3))
        .await;
    // Names stored before the drive checked them as it does now.
    for (id, name) in [(a, "..\\..\\evil.txt"), (b, ".."), (c, "trap\u{202E}txt.exe")] {
        sqlx::query("update files set file_name = $1 where id = $2")
            .bind(name)
            .bind(id)
            .execute(&mut app.db().await)
            .await
            .unwrap();
    }
    let job = app
        .run_job(&user, json!({ "jobType": "zip", "fileIds": [a, b, c] }))
        .await;
    assert_eq!(job["state"], "done", "{job}");
    let zipped = app.download(&user, job["files"][0]["id"].as_str().unwrap()).await;
    assert_eq!(names_in(&zipped), [".._.._evil.txt", "_", "trap_txt.exe"]);
}

#[tokio::test]
async fn requests_are_validated_and_a_dry_run_only_estimates() {
    let (app, user) = app_with_worker().await;
    let other = app.user(Some("Pro")).await;
    let file = app
        .upload(
            &user,
            "a.bin",
            "Other",
            "application/octet-stream",
            bytes(2000, 1),
        )
        .await;
    let theirs = app
        .upload(&other, "b.bin", "Other", "application/octet-stream", bytes(10, 1))
        .await;

    let bad = |body: Value| {
        let app = &app;
        let user = &user;
        async move { app.call(user, "/create-file-job", Some(body)).await }
    };
    bad(json!({ "fileIds": [file] }))
        .await
        .assert_bad_field("missing_field", "jobType");
    bad(json!({ "jobType": "shuffle", "fileIds": [file] }))
        .await
        .assert_bad_field("invalid_field", "jobType");
    bad(json!({ "jobType": "checksum" }))
        .await
        .assert_bad_field("missing_field", "fileIds");
    bad(json!({ "jobType": "checksum", "fileIds": [] }))
        .await
        .assert_bad_field("invalid_field", "fileIds");
    bad(json!({ "jobType": "checksum", "fileIds": [file, file] }))
        .await
        .assert_bad_field("invalid_field", "fileIds");
    bad(json!({ "jobType": "checksum", "fileIds": [file], "options": { "algorithm": "sha1" } }))
        .await
        .assert_bad_field("invalid_field", "options.algorithm");
    bad(json!({ "jobType": "zip", "fileIds": [file], "options": { "name": "a/b" } }))
        .await
        .assert_bad_field("invalid_field", "options.name");
    bad(json!({ "jobType": "unzip", "fileIds": [file] }))
        .await
        .assert_bad_field("invalid_field", "fileIds");
    bad(json!({ "jobType": "checksum", "fileIds": [file], "folder": "relative" }))
        .await
        .assert_bad_field("invalid_field", "folder");
    bad(json!({ "jobType": "checksum", "fromFolderId": uuid::Uuid::new_v4() }))
        .await
        .assert_bad_field("invalid_field", "fromFolderId");
    // Another user's file, or folder, is like one that does not exist.
    bad(json!({ "jobType": "checksum", "fileIds": [theirs] }))
        .await
        .assert_error(404, "file_not_found");
    bad(json!({ "jobType": "checksum", "fileIds": [file], "folderId": uuid::Uuid::new_v4() }))
        .await
        .assert_error(404, "folder_not_found");

    let dry = app
        .call(
            &user,
            "/create-file-job",
            Some(json!({ "jobType": "checksum", "fileIds": [file], "dryRun": true })),
        )
        .await;
    assert_eq!(dry.status, StatusCode::OK, "{}", dry.body);
    assert_eq!(dry.body["dryRun"], true);
    assert!(dry.body["estimateSeconds"].as_u64().unwrap() >= 1);
    assert!(dry.body.get("job").is_none());
    let listed = app.call(&user, "/select-file-jobs", None).await;
    assert_eq!(listed.body["jobs"], json!([]), "a dry run starts nothing");

    // Jobs are private to their owner.
    let job = app
        .run_job(&user, json!({ "jobType": "checksum", "fileIds": [file] }))
        .await;
    let seen = app
        .call(&other, "/select-file-jobs", Some(json!({ "ids": [job["id"]] })))
        .await;
    assert_eq!(seen.body["jobs"], json!([]));
    app.call(&other, "/cancel-file-job", Some(json!({ "id": job["id"] })))
        .await
        .assert_error(404, "job_not_found");
    app.call(&user, "/cancel-file-job", Some(json!({ "id": job["id"] })))
        .await
        .assert_error(409, "job_ended");
    app.call(&user, "/select-file-jobs", Some(json!({ "limit": 0 })))
        .await
        .assert_bad_field("invalid_field", "limit");
}

#[tokio::test]
async fn jobs_are_listed_newest_first_and_their_end_is_a_drive_event() {
    let (app, user) = app_with_worker().await;
    let file = app
        .upload(&user, "a.bin", "Other", "application/octet-stream", bytes(100, 1))
        .await;
    let zip = app
        .run_job(&user, json!({ "jobType": "zip", "fileIds": [file] }))
        .await;
    let sum = app
        .run_job(&user, json!({ "jobType": "checksum", "fileIds": [file] }))
        .await;

    let listed = app
        .call(&user, "/select-file-jobs", Some(json!({ "limit": 1 })))
        .await;
    assert_eq!(listed.body["jobs"][0]["id"], sum["id"]);
    assert_eq!(listed.body["nextOffset"], 1);
    let rest = app
        .call(
            &user,
            "/select-file-jobs",
            Some(json!({ "limit": 1, "offset": 1 })),
        )
        .await;
    assert_eq!(rest.body["jobs"][0]["id"], zip["id"]);
    assert!(rest.body["nextOffset"].is_null());

    let events = app
        .wait_events(&user, json!({ "kinds": ["job"], "jobId": zip["id"] }), 1)
        .await;
    let event = &events[0];
    assert_eq!(event["kind"], "job");
    assert_eq!(event["job"]["id"], zip["id"]);
    assert_eq!(event["job"]["state"], "done");
    assert_eq!(event["job"]["jobType"], "zip");
    assert_eq!(
        event["files"][0]["id"], zip["files"][0]["id"],
        "the event carries what it made"
    );
    // What a job makes is a new file like an upload: it has its own `file` event too.
    let files = app.wait_events(&user, json!({ "kinds": ["file"] }), 2).await;
    let announced = files
        .iter()
        .filter(|e| e["file"]["id"] == zip["files"][0]["id"])
        .count();
    assert_eq!(announced, 1, "{files:?}");
}

#[tokio::test]
async fn job_minutes_count_done_jobs_not_failed_ones_and_refuse_when_used_up() {
    let mut app = TestApp::spawn_with(&[("DRIVE_JOB_MINUTES_INTRO", "0.000001")]).await;
    app.start_worker(&[]).await;
    let pro = app.user(Some("Pro")).await;
    let file = app
        .upload(&pro, "a.bin", "Other", "application/octet-stream", bytes(100, 1))
        .await;
    let broken = app
        .upload(&pro, "x.zip", "Archive", "application/zip", bytes(100, 2))
        .await;
    let done = app
        .run_job(&pro, json!({ "jobType": "checksum", "fileIds": [file] }))
        .await;
    let failed = app
        .run_job(&pro, json!({ "jobType": "unzip", "fileIds": [broken] }))
        .await;
    assert_eq!(failed["state"], "failed");
    assert!(failed["seconds"].is_null(), "a failed job costs nothing");
    let seconds = done["seconds"].as_f64().unwrap();
    assert!(seconds > 0.0);
    let listed = app.call(&pro, "/select-file-jobs", None).await;
    let used = listed.body["minutes"]["used"].as_f64().unwrap();
    assert!(
        (used - seconds / 60.0).abs() < 1e-6,
        "{} vs {seconds}",
        listed.body
    );
    assert_eq!(listed.body["minutes"]["limit"], 900.0);

    // An Intro account here has 0.000001 minutes (60 µs): any job uses them up.
    let intro = app.user(Some("Intro")).await;
    let file = app
        .upload(
            &intro,
            "a.bin",
            "Other",
            "application/octet-stream",
            bytes(100, 1),
        )
        .await;
    app.run_job(&intro, json!({ "jobType": "checksum", "fileIds": [file] }))
        .await;
    app.call(
        &intro,
        "/create-file-job",
        Some(json!({ "jobType": "checksum", "fileIds": [file] })),
    )
    .await
    .assert_error(403, "job_minutes_used_up");
}

#[tokio::test]
async fn a_canceled_job_stops_and_keeps_what_it_made() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    // Queued with no worker: stops at once.
    let file = app
        .upload(&user, "a.bin", "Other", "application/octet-stream", bytes(100, 1))
        .await;
    let queued = app
        .create_job(&user, json!({ "jobType": "checksum", "fileIds": [file] }))
        .await;
    let canceled = app
        .call(&user, "/cancel-file-job", Some(json!({ "id": queued["id"] })))
        .await;
    assert_eq!(canceled.status, StatusCode::OK, "{}", canceled.body);
    assert_eq!(canceled.body["job"]["state"], "stopped");
    assert!(canceled.body["job"]["seconds"].is_null(), "it never ran");

    // Running: unzip enough entries to stop it part-way. Each entry is recorded in a turn of
    // its own (a few milliseconds), so it is their number that keeps it running, not their size.
    let (_, zipped) = many_entries(400, 30_000);
    let id = app
        .upload(&user, "many.zip", "Archive", "application/zip", zipped)
        .await;
    app.start_worker(&[]).await;
    let job = app
        .create_job(&user, json!({ "jobType": "unzip", "fileIds": [id] }))
        .await;
    app.wait_made(&user, &job["id"], 2).await;
    let canceled = app
        .call(&user, "/cancel-file-job", Some(json!({ "id": job["id"] })))
        .await;
    assert_eq!(canceled.status, StatusCode::OK, "{}", canceled.body);
    let stopped = &canceled.body["job"];
    assert_eq!(stopped["state"], "stopped", "{stopped}");
    let kept = stopped["files"].as_array().unwrap();
    assert!(kept.len() >= 2 && kept.len() < 400, "{}", kept.len());
    assert!(
        stopped["seconds"].as_f64().unwrap() > 0.0,
        "a stopped job counts its time"
    );
    let library = app.call(&user, "/select-user-files", None).await;
    for made in kept {
        assert!(
            library
                .body
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["id"] == made["id"]),
            "{made} is kept"
        );
    }
    let events = app
        .wait_events(&user, json!({ "kinds": ["job"], "jobId": job["id"] }), 1)
        .await;
    assert_eq!(events[0]["job"]["state"], "stopped");
}

#[tokio::test]
async fn two_workers_share_one_queue() {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[("DRIVE_WORKER_CONCURRENCY", "1")]).await;
    app.start_worker(&[("DRIVE_WORKER_CONCURRENCY", "1")]).await;
    let user = app.user(Some("Pro")).await;
    let jobs = checksums_of_new_files(&app, &user, 8, 4 * 1024 * 1024).await;
    for job in &jobs {
        assert_eq!(app.wait_job(&user, &job["id"]).await["state"], "done");
    }
    let mut db = app.db().await;
    let workers: Vec<String> = sqlx::query("select distinct worker from file_jobs")
        .fetch_all(&mut db)
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(workers.len(), 2, "both workers took jobs: {workers:?}");
    let expected = [app.worker(0).name.clone(), app.worker(1).name.clone()];
    assert!(workers.iter().all(|w| expected.contains(w)), "{workers:?}");
}

/// Waits until worker 0 has exactly one job process (its spare) and none is `not`.
async fn spare_of(app: &TestApp, not: Option<u32>) -> u32 {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let processes = app.job_processes(0);
        if let [spare] = processes[..]
            && Some(spare) != not
        {
            return spare;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "job processes: {processes:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Asserts that job process `pid` has none of the worker's credentials in its environment,
/// by name or by value, and can gain no privilege: no new privileges, no capabilities, under a
/// seccomp filter.
fn assert_holds_no_credential(app: &TestApp, pid: u32) {
    let credentials = [
        ("DRIVE_DATABASE_URL", app.database_url.clone()),
        ("DRIVE_S3_ACCESS_KEY_ID", env("DRIVE_S3_ACCESS_KEY_ID")),
        ("DRIVE_S3_SECRET_ACCESS_KEY", env("DRIVE_S3_SECRET_ACCESS_KEY")),
        ("DRIVE_SECRET", drive_tests::SECRET.to_string()),
        ("DRIVE_REDIS_URL", env("DRIVE_TEST_REDIS_URL")),
    ];
    let environ = std::fs::read(format!("/proc/{pid}/environ")).expect("the job process's environment");
    let environ = String::from_utf8_lossy(&environ);
    for variable in environ.split('\0').filter(|v| !v.is_empty()) {
        for (name, value) in &credentials {
            assert!(
                !variable.starts_with(&format!("{name}=")),
                "the job process {pid} holds {name}"
            );
            assert!(
                !variable.contains(value.as_str()),
                "the job process {pid} holds the value of {name}: {variable}"
            );
        }
    }
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the job process's status");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .map(str::trim)
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(field("NoNewPrivs:"), "1", "{status}");
    assert_eq!(field("CapEff:"), "0000000000000000", "{status}");
    assert_eq!(field("CapBnd:"), "0000000000000000", "{status}");
    // A seccomp filter (mode 2) refuses what parsing never needs.
    assert_eq!(field("Seccomp:"), "2", "{status}");
}

/// Starts a job of seconds (stills of twenty videos) and catches its process once it has read
/// and saved stills of some of them; answers the process and the job.
async fn a_running_job_process(app: &TestApp, user: &TestUser) -> (u32, Value) {
    let video = video_of("testsrc2=size=320x240:rate=25", 10.0, &[]);
    let mut ids = Vec::new();
    for n in 0..20 {
        let name = format!("clip {n}.mp4");
        ids.push(app.upload(user, &name, "Video", "video/mp4", video.clone()).await);
    }
    // Their readings ended, so the only job process left is the one caught below.
    for id in &ids {
        app.reading(user, *id).await;
    }
    let created = app
        .create_job(
            user,
            json!({ "jobType": "stills", "fileIds": ids, "options": { "at": 5 } }),
        )
        .await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let job = app.job(user, &created["id"]).await;
        if job["state"] == "running" && job["progress"].as_f64() > Some(0.0) {
            break;
        }
        assert!(
            (job["state"] == "queued" || job["state"] == "running") && Instant::now() < deadline,
            "the job was not caught running: {job}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let running = app.job_processes(0);
    assert_eq!(running.len(), 1, "the job's process alone: {running:?}");
    (running[0], created)
}

#[tokio::test]
async fn a_job_process_holds_no_credential_while_it_parses_uploads() {
    let (app, user) = app_with_worker().await;
    // The spare, waiting for a job.
    let spare = spare_of(&app, None).await;
    assert_holds_no_credential(&app, spare);

    let (running, created) = a_running_job_process(&app, &user).await;
    assert_holds_no_credential(&app, running);

    let job = app.wait_job(&user, &created["id"]).await;
    assert_eq!(job["state"], "done", "{job}");
    assert_eq!(job["files"].as_array().map(Vec::len), Some(20), "{job}");
}

/// A job process mid-job, made to try what a parser taken over would (see [`probe`]): every
/// connection but to the store's port (by `connect` and by TCP Fast Open), a Unix socket, an
/// MPTCP one, a namespace, `/run` and the secrets of `/etc`, a signal to its supervisor. Each is refused, and the job ends as if
/// nothing had happened.
#[cfg(target_arch = "x86_64")]
#[tokio::test]
async fn a_job_process_reaches_only_the_store_and_makes_no_namespace() {
    let (app, user) = app_with_worker().await;
    let (pid, created) = a_running_job_process(&app, &user).await;
    let port_of = |variable: &str| {
        url::Url::parse(&env(variable))
            .unwrap()
            .port_or_known_default()
            .unwrap()
    };
    let store = port_of("DRIVE_S3_ENDPOINT");
    let supervisor = drive_tests::job_processes()
        .into_iter()
        .find_map(|(job, parent)| (job == pid).then_some(parent))
        .expect("the job process's supervisor");
    let loopback = [127, 0, 0, 1];
    // All in this thread, which the process is traced by; no await until it is let go.
    let mut probe = probe::Probe::attach(pid).expect("attach to the job process");
    let reached = probe.connect(loopback, store);
    let refused = [
        ("Redis", probe.connect(loopback, port_of("DRIVE_TEST_REDIS_URL"))),
        (
            "PostgreSQL",
            probe.connect(loopback, port_of("DRIVE_TEST_DATABASE_URL")),
        ),
        // The store's other servers, beside its S3 gateway (`start_store` in scripts/lib.sh).
        ("the store's volume server", probe.connect(loopback, store + 2)),
        ("the store's filer", probe.connect(loopback, store + 3)),
        (
            "a cloud's metadata address",
            probe.connect([169, 254, 169, 254], 80),
        ),
        ("the internet", probe.connect([1, 1, 1, 1], 443)),
    ];
    let fast_open = probe.fast_open(loopback, port_of("DRIVE_TEST_REDIS_URL"));
    let unix = probe.socket(libc::AF_UNIX, libc::SOCK_STREAM, 0);
    let mptcp = probe.socket(libc::AF_INET, libc::SOCK_STREAM, libc::IPPROTO_MPTCP);
    let new_user = probe.call(
        libc::SYS_clone,
        &[(libc::CLONE_NEWUSER | libc::SIGCHLD) as u64, 0, 0, 0, 0],
    );
    let mut clone_args = [0u8; 88];
    clone_args[..8].copy_from_slice(&(libc::CLONE_NEWUSER as u64).to_ne_bytes());
    clone_args[32..40].copy_from_slice(&(libc::SIGCHLD as u64).to_ne_bytes());
    let at = probe.put(&clone_args);
    let clone3 = probe.call(libc::SYS_clone3, &[at, 88]);
    let unshare = probe.call(libc::SYS_unshare, &[libc::CLONE_NEWUSER as u64]);
    let hosts = probe.open("/etc/hosts");
    let shadow = probe.open("/etc/shadow");
    let run = probe.open("/run");
    let signalled = probe.call(libc::SYS_kill, &[u64::from(supervisor), 0]);
    drop(probe);

    assert_eq!(reached, 0, "the store's port is open");
    for (what, answer) in refused {
        assert_eq!(answer, -i64::from(libc::EACCES), "{what} was not refused");
    }
    assert_eq!(
        fast_open,
        -i64::from(libc::EPERM),
        "Redis was reached by TCP Fast Open"
    );
    assert_eq!(unix, -i64::from(libc::EPERM), "a Unix socket was made");
    assert_eq!(mptcp, -i64::from(libc::EPERM), "an MPTCP socket was made");
    assert_eq!(new_user, -i64::from(libc::EPERM), "clone made a user namespace");
    assert_eq!(clone3, -i64::from(libc::ENOSYS), "clone3 was let through");
    assert_eq!(unshare, -i64::from(libc::EPERM), "unshare made a user namespace");
    assert_eq!(hosts, 0, "/etc/hosts is read");
    assert_eq!(shadow, -i64::from(libc::EACCES), "/etc/shadow was opened");
    assert_eq!(run, -i64::from(libc::EACCES), "/run was opened");
    assert_eq!(
        signalled,
        -i64::from(libc::EPERM),
        "the supervisor could be signalled"
    );

    let job = app.wait_job(&user, &created["id"]).await;
    assert_eq!(job["state"], "done", "{job}");
    assert_eq!(job["files"].as_array().map(Vec::len), Some(20), "{job}");
}

#[tokio::test]
async fn a_job_process_waits_ahead_and_a_dead_one_is_replaced() {
    let (app, user) = app_with_worker().await;
    let content = bytes(5000, 4);
    let id = app
        .upload(
            &user,
            "a.bin",
            "Other",
            "application/octet-stream",
            content.clone(),
        )
        .await;
    let checksum = json!({ "jobType": "checksum", "fileIds": [id] });

    // The spare runs the next job, and another is started for the one after.
    let first = spare_of(&app, None).await;
    let job = app.run_job(&user, checksum).await;
    assert_eq!(job["state"], "done", "{job}");
    let second = spare_of(&app, Some(first)).await;

    // A spare that died (here SIGKILL) is replaced by a new process when a job comes.
    let killed = Command::new("kill")
        .args(["-9", &second.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // MD5 this time: the SHA-256 is kept from the first job and would be answered at once.
    let md5 = json!({ "jobType": "checksum", "fileIds": [id], "options": { "algorithm": "md5" } });
    let job = app.run_job(&user, md5).await;
    assert_eq!(job["state"], "done", "{job}");
    assert_eq!(
        job["result"]["checksums"][0]["digest"],
        digest_by("md5sum", &content)
    );
    spare_of(&app, Some(second)).await;
}

/// A job's process ends its job, then pushes the readings of the files it made. Its supervisor
/// must let it: a heartbeat that finds the job ended in between once took that for the job
/// being taken away, killed the process, and the reading waited ten minutes for the re-push
/// loop. Here every new connection to Redis opens 300 ms late and heartbeats come every 200 ms,
/// so one always falls in between.
#[tokio::test]
async fn a_job_that_has_ended_may_still_queue_the_readings_of_what_it_made() {
    let mut app = TestApp::spawn().await;
    let redis = TcpProxy::start_slow(&env("DRIVE_TEST_REDIS_URL"), Duration::from_millis(300)).await;
    app.start_worker(&[
        ("DRIVE_REDIS_URL", redis.endpoint.as_str()),
        ("DRIVE_HEARTBEAT_SECONDS", "0.2"),
    ])
    .await;
    let user = app.user(Some("Pro")).await;
    let video = video_of("testsrc2=size=320x240:rate=25", 2.0, &[]);
    let id = app.upload(&user, "clip.mp4", "Video", "video/mp4", video).await;
    let job = app
        .run_job(
            &user,
            json!({ "jobType": "stills", "fileIds": [id], "options": { "at": 1 } }),
        )
        .await;
    assert_eq!(job["state"], "done", "{job}");
    let still: drive_core::id::FileId = job["result"]["files"][0]["fileId"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();

    // Had the job's end been the last word, the still would stay unread for good.
    let (state, _) = app.reading_job(still, Duration::from_secs(20)).await;
    assert_eq!(state, "done", "the still's reading ended {state}");
}

#[tokio::test]
async fn a_worker_killed_mid_job_loses_nothing_and_leaves_no_duplicates() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let (entries, zipped) = many_entries(30, 300_000);
    let id = app
        .upload(&user, "many.zip", "Archive", "application/zip", zipped)
        .await;
    let first = app.start_worker(&[]).await;
    let job = app
        .create_job(&user, json!({ "jobType": "unzip", "fileIds": [id] }))
        .await;
    app.wait_made(&user, &job["id"], 3).await;
    app.kill_worker(first);
    app.start_worker(&[]).await;

    let ended = app.wait_job(&user, &job["id"]).await;
    assert_eq!(ended["state"], "done", "{ended}");
    let made = ended["files"].as_array().unwrap();
    assert_eq!(made.len(), 30);
    for (i, file) in made.iter().enumerate() {
        assert_eq!(file["fileName"], format!("f{i}.bin"), "no duplicate, no ` (2)`");
    }
    assert_eq!(
        app.download(&user, made[29]["id"].as_str().unwrap()).await,
        entries[29]
    );
    let mut db = app.db().await;
    let row = sqlx::query(
        "select attempts, (select count(*) from files where folder_id = output_folder_id) from file_jobs",
    )
    .fetch_one(&mut db)
    .await
    .unwrap();
    assert_eq!(row.get::<i32, _>(0), 2, "run once more by the second worker");
    assert_eq!(row.get::<i64, _>(1), 30, "the folder holds each entry once");
}

#[tokio::test]
async fn an_archive_request_zips_a_gallery_in_the_background() {
    let (app, user) = app_with_worker().await;
    let a = app
        .upload(&user, "a.jpg", "Image", "image/jpeg", bytes(1000, 1))
        .await;
    let b = app
        .upload(&user, "b.jpg", "Image", "image/jpeg", bytes(2000, 2))
        .await;
    let gallery = app
        .call(
            &user,
            "/create-gallery",
            Some(json!({ "title": "Trip", "fileIds": [b, a] })),
        )
        .await;
    assert_eq!(gallery.status, StatusCode::OK, "{}", gallery.body);
    let gallery_id = gallery.body["id"].clone();

    let accepted = app
        .call(
            &user,
            "/create-archive-request",
            Some(json!({ "galleryId": gallery_id, "title": "Trip photos" })),
        )
        .await;
    assert_eq!(accepted.status, StatusCode::ACCEPTED, "{}", accepted.body);
    let job = app.wait_job(&user, &accepted.body["job"]["id"]).await;
    assert_eq!(job["state"], "done", "{job}");
    assert_eq!(job["files"][0]["fileName"], "Trip photos.zip");
    let zipped = app.download(&user, job["files"][0]["id"].as_str().unwrap()).await;
    assert_eq!(names_in(&zipped), ["b.jpg", "a.jpg"], "in the gallery's order");

    let other = app.user(Some("Pro")).await;
    app.call(
        &other,
        "/create-archive-request",
        Some(json!({ "galleryId": gallery_id })),
    )
    .await
    .assert_error(404, "gallery_not_found");
    app.call(&user, "/create-archive-request", Some(json!({})))
        .await
        .assert_bad_field("missing_field", "fileIds");
}

/// CRC-32 (ISO-HDLC) as PNG chunks carry it.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A small PNG whose header claims `side` × `side` RGB pixels: decoding it needs
/// side² × 3 bytes of memory, whatever the file's size.
fn png_claiming(side: u32) -> Vec<u8> {
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut chunk = |kind: &[u8], data: &[u8]| {
        png.extend((data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend(data);
        png.extend(&body);
        png.extend(crc32(&body).to_be_bytes());
    };
    let mut header = side.to_be_bytes().to_vec();
    header.extend(side.to_be_bytes());
    header.extend([8, 2, 0, 0, 0]);
    chunk(b"IHDR", &header);
    // A stored zlib block holding one filter byte and one black row start: the rest is missing.
    chunk(b"IDAT", &[0x78, 0x01, 0x01, 0x04, 0x00, 0xfb, 0xff, 0, 0, 0, 0]);
    chunk(b"IEND", &[]);
    png
}

#[tokio::test]
async fn the_time_memory_and_download_limits_fail_the_job_alone() {
    let mut app = TestApp::spawn_with(&[("DRIVE_JOB_DOWNLOAD_LIMIT_BYTES", "1000000")]).await;
    app.start_worker(&[
        // Long enough for a small job on a machine busy with the rest of the suite (1 s was
        // seen passed by a checksum of 1,000 bytes), short next to the slow unzip below.
        ("DRIVE_JOB_TIME_LIMIT_SECONDS", "3"),
        ("DRIVE_JOB_MEMORY_LIMIT_BYTES", &(768u64 << 20).to_string()),
        ("DRIVE_WORKER_CONCURRENCY", "1"),
    ])
    .await;
    let user = app.user(Some("Pro")).await;

    // Pictures and PDFs past the download limit (1 MB here) are refused before anything runs.
    let a = app
        .upload(&user, "a.jpg", "Image", "image/jpeg", bytes(600_000, 1))
        .await;
    let b = app
        .upload(&user, "b.jpg", "Image", "image/jpeg", bytes(600_000, 2))
        .await;
    let refused = app
        .call(
            &user,
            "/create-file-job",
            Some(json!({ "jobType": "convert", "fileIds": [a, b], "options": { "format": "png" } })),
        )
        .await;
    refused.assert_bad_field("invalid_field", "fileIds");
    assert!(
        refused.body["error"].as_str().unwrap().contains("1 MB"),
        "{}",
        refused.body
    );

    // A picture that needs 588 MB to decode (within the pictures' pixel limit) under a 768 MiB
    // cap on the job's address space: the job fails, the worker goes on.
    let huge = app
        .upload(&user, "huge.png", "Image", "image/png", png_claiming(14_000))
        .await;
    let job = app
        .run_job(
            &user,
            json!({ "jobType": "convert", "fileIds": [huge], "options": { "format": "jpg" } }),
        )
        .await;
    assert_eq!(job["state"], "failed", "{job}");
    assert!(job["error"].as_str().unwrap().contains("memory"), "{job}");
    assert!(job["files"].as_array().unwrap().is_empty());

    // A job still running after the time limit (3 s here) is stopped as failed: 1,000 entries
    // saved one by one take several times that (250 took 3 s on a fast machine).
    let (_, zipped) = many_entries(1000, 1000);
    let slow = app
        .upload(&user, "many.zip", "Archive", "application/zip", zipped)
        .await;
    let job = app
        .run_job(&user, json!({ "jobType": "unzip", "fileIds": [slow] }))
        .await;
    assert_eq!(job["state"], "failed", "{job}");
    assert!(job["error"].as_str().unwrap().contains("time limit"), "{job}");
    assert!(job["seconds"].is_null(), "a failed job costs nothing");

    // And the same worker, under the same caps, still does its work.
    let small = app
        .upload(
            &user,
            "s.bin",
            "Other",
            "application/octet-stream",
            bytes(1000, 3),
        )
        .await;
    let job = app
        .run_job(&user, json!({ "jobType": "checksum", "fileIds": [small] }))
        .await;
    assert_eq!(job["state"], "done", "{job}");
}

#[tokio::test]
async fn a_zip_larger_than_a_part_is_written_in_parts_and_reads_back_whole() {
    let (app, user) = app_with_worker().await;
    let first = bytes(40 * 1024 * 1024, 7);
    let second = bytes(40 * 1024 * 1024 + 13, 8);
    let a = app
        .upload(&user, "a.mp4", "Video", "video/mp4", first.clone())
        .await;
    let b = app
        .upload(&user, "b.mp4", "Video", "video/mp4", second.clone())
        .await;
    let job = app
        .run_job(&user, json!({ "jobType": "zip", "fileIds": [a, b] }))
        .await;
    assert_eq!(job["state"], "done", "{job}");
    let zipped = app.download(&user, job["files"][0]["id"].as_str().unwrap()).await;
    assert!(
        zipped.len() as u64 > 64 * 1024 * 1024,
        "more than one 64 MiB part"
    );
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(zipped)).unwrap();
    for (i, original) in [first, second].iter().enumerate() {
        let mut entry = archive.by_index(i).unwrap();
        assert_eq!(
            entry.compression(),
            zip::CompressionMethod::Stored,
            "videos are stored"
        );
        let mut out = Vec::new();
        entry.read_to_end(&mut out).unwrap();
        assert!(out == *original, "entry {i} differs");
    }

    // Expected to take parts (68 MiB in), its first part is streamed to the store from the
    // first byte; deflated, the zip ends far short of a part and is sent again whole.
    let text = "every line of these notes is the same line, over and over\n"
        .repeat(70 * 1024 * 1024 / 60)
        .into_bytes();
    let notes = app
        .upload(&user, "notes.txt", "Text", "text/plain", text.clone())
        .await;
    let job = app
        .run_job(&user, json!({ "jobType": "zip", "fileIds": [notes] }))
        .await;
    assert_eq!(job["state"], "done", "{job}");
    let zipped = app.download(&user, job["files"][0]["id"].as_str().unwrap()).await;
    assert!(zipped.len() < 1024 * 1024, "deflated: {} bytes", zipped.len());
    assert_eq!(job["result"]["bytes"], zipped.len() as u64, "{job}");
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(zipped)).unwrap();
    let mut out = Vec::new();
    archive.by_index(0).unwrap().read_to_end(&mut out).unwrap();
    assert!(out == text, "the notes come back as they went in");
}

#[tokio::test]
async fn a_zip_of_many_parts_keeps_its_job_process_under_100_mib() {
    // Parts are spooled to the work folder, not held: memory stays flat however many 64 MiB
    // parts the result takes (held, three parts alone were 192 MiB).
    let (app, user) = app_with_worker().await;
    let mut inputs = Vec::new();
    for n in 0..4 {
        let id = app
            .upload(
                &user,
                &format!("{n}.mp4"),
                "Video",
                "video/mp4",
                drive_tests::noise(64 * 1024 * 1024, n),
            )
            .await;
        inputs.push(id);
    }
    let job = app
        .create_job(&user, json!({ "jobType": "zip", "fileIds": inputs }))
        .await;
    let mut peak_kib = 0u64;
    let ended = loop {
        for pid in app.job_processes(0) {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            let hwm = status
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok());
            peak_kib = peak_kib.max(hwm.unwrap_or(0));
        }
        let now = app.job(&user, &job["id"]).await;
        if now["state"] != "queued" && now["state"] != "running" {
            break now;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(ended["state"], "done", "{ended}");
    assert!(
        ended["result"]["bytes"].as_u64().unwrap() > 4 * 64 * 1024 * 1024,
        "{ended}"
    );
    println!("the zip job's process peaked at {} MiB", peak_kib / 1024);
    assert!(peak_kib > 0, "the job's process was never seen");
    assert!(
        peak_kib < 100 * 1024,
        "the job's process peaked at {} MiB",
        peak_kib / 1024
    );
}

#[tokio::test]
async fn a_waiting_poller_hears_of_a_job_s_end_without_polling() {
    // No worker yet: the job waits in the queue.
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let file = app
        .upload(
            &user,
            "a.bin",
            "Other",
            "application/octet-stream",
            bytes(1000, 1),
        )
        .await;
    let job = app
        .create_job(&user, json!({ "jobType": "checksum", "fileIds": [file] }))
        .await;
    let poller = app.call_in_background(
        &user,
        "/select-file-jobs",
        json!({ "ids": [job["id"]], "wait": 30 }),
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        !poller.is_finished(),
        "the poller answered while the job was queued"
    );
    app.start_worker(&[]).await;
    let (answered, page) = poller.await.unwrap();
    let ended = &page["jobs"][0];
    assert_eq!(ended["state"], "done", "{page}");
    let end_time: chrono::DateTime<chrono::Utc> = serde_json::from_value(ended["endTime"].clone()).unwrap();
    let late = chrono::Utc::now() - end_time - chrono::TimeDelta::from_std(answered.elapsed()).unwrap();
    assert!(
        late < chrono::TimeDelta::seconds(1),
        "answered {late} after the job ended"
    );

    // An ended job answers at once, whatever the wait; the wait is checked.
    let start = Instant::now();
    let reply = app
        .call(
            &user,
            "/select-file-jobs",
            Some(json!({ "ids": [job["id"]], "wait": 30 })),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(start.elapsed() < Duration::from_secs(5));
    let reply = app
        .call(&user, "/select-file-jobs", Some(json!({ "wait": 61 })))
        .await;
    reply.assert_bad_field(reply.body["code"].as_str().unwrap_or(""), "wait");
}

#[tokio::test]
async fn results_recorded_at_once_each_get_a_name_of_their_own() {
    let mut app = TestApp::spawn().await;
    // Eight at a time, so the results are recorded within moments of each other.
    app.start_worker(&[("DRIVE_WORKER_CONCURRENCY", "8")]).await;
    let user = app.user(Some("Pro")).await;
    let notes = app
        .upload(&user, "notes.txt", "Text", "text/plain", bytes(100, 1))
        .await;
    let mut queued = Vec::new();
    for _ in 0..8 {
        let body = json!({ "jobType": "zip", "fileIds": [notes], "options": { "name": "bundle" } });
        queued.push(app.create_job(&user, body).await);
    }
    let mut made = Vec::new();
    for job in &queued {
        let job = app.wait_job(&user, &job["id"]).await;
        assert_eq!(job["state"], "done", "{job}");
        made.extend(drive_tests::made(&job));
    }
    let mut got: Vec<&str> = made.iter().map(|(_, name)| name.as_str()).collect();
    got.sort();
    let mut wanted: Vec<String> = (2..=8).map(|n| format!("bundle ({n}).zip")).collect();
    wanted.push("bundle.zip".to_string());
    wanted.sort();
    assert_eq!(got, wanted);

    // The bytes were stored under the name asked; made public, the file is served under the
    // name it was given (as a download: a zip is no type a browser shows).
    let (second, _) = made.iter().find(|(_, name)| name == "bundle (2).zip").unwrap();
    let public = app
        .call(&user, "/toggle-file-access", Some(json!({ "id": second })))
        .await;
    assert_eq!(public.status, StatusCode::OK, "{}", public.body);
    let response = reqwest::get(public.body["downloadUrl"].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let disposition = response.headers()["content-disposition"].to_str().unwrap();
    assert!(
        disposition.starts_with("attachment; filename=\"bundle (2).zip\""),
        "{disposition}"
    );
}
