//! A hostile uploader against the store: objects that never become files are counted and
//! removed, a recorded key is never written again, access switches never lose or leak bytes,
//! a queued deletion never takes newer bytes, a trashed public file is not public, and an
//! archive request never lands in another user's folder.

use drive_core::id::{FileId, FolderId, UserId};
use drive_tests::proxy::TcpProxy;
use drive_tests::*;
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use uuid::Uuid;

fn upload_input(key: &str, size: usize) -> Value {
    json!({ "type": "Other", "fileName": "x.bin", "fileSize": size, "objectKey": key, "mimeType": "application/octet-stream" })
}

fn insert_input(user: &TestUser, key: &str, size: usize) -> Value {
    let mut input = upload_input(key, size);
    input["isPublic"] = json!(false);
    input["creator"] = json!({ "id": user.id });
    input
}

/// Whether the store holds `key` in `bucket`, and its length.
async fn stored(bucket: &str, key: &str) -> Option<i64> {
    let head = raw_store()
        .await
        .head_object()
        .bucket(bucket)
        .key(key)
        .send()
        .await;
    head.ok().map(|h| h.content_length().unwrap_or(0))
}

async fn used_bytes(app: &TestApp, user: &TestUser) -> Value {
    let usage = app.call(user, "/get-user-storage-usage", None).await;
    usage.body["usedBytes"].clone()
}

/// Makes every upload reservation of the test's database lapse, as if its time had run out.
async fn expire_reservations(app: &TestApp) {
    sqlx::query("update upload_reservations set expires_at = now() - interval '1 second'")
        .execute(&mut app.db().await)
        .await
        .unwrap();
}

#[tokio::test]
async fn an_uploaded_object_never_inserted_counts_against_the_quota_until_the_sweep_removes_it() {
    let app = TestApp::spawn_with(&[("DRIVE_QUOTA_PRO_BYTES", "1000")]).await;
    let user = app.user(Some("Pro")).await;
    let first = user.key("first.bin");
    let urls = app
        .call(&user, "/generate-file-urls", Some(upload_input(&first, 600)))
        .await;
    assert_eq!(urls.status, StatusCode::OK, "{}", urls.body);
    assert!(
        post_form(&urls.body, bytes(600, 1), "application/octet-stream")
            .await
            .is_success()
    );

    // Never inserted, yet its 600 bytes are spoken for: 600 more do not fit in 1000.
    let second = user.key("second.bin");
    app.call(&user, "/generate-file-urls", Some(upload_input(&second, 600)))
        .await
        .assert_bad_field("storage_limit_reached", "fileSize");
    // A multipart upload completed and never inserted is held the same way.
    let multipart = app
        .call(
            &user,
            "/create-multipart-upload",
            Some(upload_input(&second, 300)),
        )
        .await;
    assert_eq!(multipart.status, StatusCode::OK, "{}", multipart.body);
    let part = multipart.body["signedParts"][0]["url"].as_str().unwrap();
    assert!(put(part, bytes(300, 2)).await.is_success());
    let token = json!({ "token": multipart.body["token"] });
    let completed = app.call(&user, "/complete-multipart-upload", Some(token)).await;
    assert_eq!(completed.status, StatusCode::OK, "{}", completed.body);
    app.call(
        &user,
        "/generate-file-urls",
        Some(upload_input(&user.key("third.bin"), 101)),
    )
    .await
    .assert_bad_field("storage_limit_reached", "fileSize");

    // Not yet expired: the sweep leaves both.
    let out = app.admin(&["sweep"]);
    assert!(out.contains("removed 0 unrecorded uploads"), "{out}");
    assert_eq!(stored(&app.private_bucket, &first).await, Some(600));

    expire_reservations(&app).await;
    let out = app.admin(&["sweep"]);
    assert!(out.contains("removed 2 unrecorded uploads"), "{out}");
    assert_eq!(
        stored(&app.private_bucket, &first).await,
        None,
        "the sweep left the form's object"
    );
    assert_eq!(
        stored(&app.private_bucket, &second).await,
        None,
        "the sweep left the multipart object"
    );
    app.call(&user, "/insert-file", Some(insert_input(&user, &first, 600)))
        .await
        .assert_bad_field("object_not_found", "objectKey");
    // The room is back.
    let again = app
        .call(
            &user,
            "/generate-file-urls",
            Some(upload_input(&user.key("fourth.bin"), 1000)),
        )
        .await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
}

#[tokio::test]
async fn open_multipart_uploads_per_account_are_bounded() {
    let app = TestApp::spawn_with(&[("DRIVE_MAX_OPEN_UPLOADS", "2")]).await;
    let user = app.user(Some("Pro")).await;
    let create = |key: String| app.call(&user, "/create-multipart-upload", Some(upload_input(&key, 10)));
    let first = create(user.key("a.bin")).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    let second_key = user.key("b.bin");
    assert_eq!(create(second_key.clone()).await.status, StatusCode::OK);
    create(user.key("c.bin"))
        .await
        .assert_bad_field("too_many_open_uploads", "objectKey");
    // Resuming one already open is not a new one.
    assert_eq!(create(second_key).await.body["resumed"], true);
    let aborted = app
        .call(
            &user,
            "/abort-multipart-upload",
            Some(json!({ "token": first.body["token"] })),
        )
        .await;
    assert_eq!(aborted.body, json!({ "aborted": true }));
    assert_eq!(create(user.key("c.bin")).await.status, StatusCode::OK);
}

#[tokio::test]
async fn a_recorded_key_is_never_written_again() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let key = user.key("small.bin");
    // A multipart upload of 10 bytes opened under the key first...
    let multipart = app
        .call(&user, "/create-multipart-upload", Some(upload_input(&key, 10)))
        .await;
    assert_eq!(multipart.status, StatusCode::OK, "{}", multipart.body);
    let part = multipart.body["signedParts"][0]["url"].as_str().unwrap();
    assert!(put(part, bytes(10, 9)).await.is_success());
    // ...then a file of the same size (the key's one size) recorded under it by a form.
    let id = app
        .upload_at(
            &user,
            &key,
            "small.bin",
            "Other",
            "application/octet-stream",
            bytes(10, 7),
        )
        .await;

    let token = json!({ "token": multipart.body["token"] });
    app.call(&user, "/complete-multipart-upload", Some(token.clone()))
        .await
        .assert_error(409, "object_key_taken");
    assert_eq!(
        stored(&app.private_bucket, &key).await,
        Some(10),
        "the file's bytes changed"
    );
    assert_eq!(app.download(&user, &id.to_string()).await, bytes(10, 7));

    app.call(&user, "/generate-file-urls", Some(upload_input(&key, 1)))
        .await
        .assert_error(409, "object_key_taken");
    app.call(&user, "/create-multipart-upload", Some(upload_input(&key, 10)))
        .await
        .assert_error(409, "object_key_taken");
    app.call(
        &user,
        "/sign-upload-parts",
        Some(json!({ "token": multipart.body["token"], "partNumbers": [1] })),
    )
    .await
    .assert_error(404, "upload_not_found");
    // A re-sent insert still answers the same file.
    let again = app
        .call(&user, "/insert-file", Some(insert_input(&user, &key, 10)))
        .await;
    assert_eq!(again.body["id"], json!(id));
}

/// The attack seen live: forms for 1 byte and for 4 MiB under one key, the small one recorded,
/// then the big one posted, and a 1-byte record served megabytes outside the quota. A key with
/// a form keeps one size, so the big form (or a multipart upload of that size) is never
/// issued; and a form issued before the insert that
/// writes the key again with other bytes (the store cannot withdraw it) is caught: the record
/// follows what is stored before the bytes are handed out, digests included.
#[tokio::test]
async fn a_key_keeps_one_size_and_a_form_that_writes_it_again_is_followed() {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    let key = user.key("one.bin");
    let small = app
        .call(&user, "/generate-file-urls", Some(upload_input(&key, 1)))
        .await;
    assert_eq!(small.status, StatusCode::OK, "{}", small.body);
    for route in ["/generate-file-urls", "/create-multipart-upload"] {
        app.call(&user, route, Some(upload_input(&key, 4 << 20)))
            .await
            .assert_bad_field("size_mismatch", "fileSize");
    }
    // Asking again for the same size is a client retrying: it gets a form.
    let again = app
        .call(&user, "/generate-file-urls", Some(upload_input(&key, 1)))
        .await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert!(
        post_form(&small.body, vec![1], "application/octet-stream")
            .await
            .is_success()
    );
    let inserted = app
        .call(&user, "/insert-file", Some(insert_input(&user, &key, 1)))
        .await;
    assert_eq!(inserted.status, StatusCode::OK, "{}", inserted.body);
    let id = inserted.body["id"].clone();
    // The big form cannot be had once the key is a file either, so the record serves 1 byte.
    app.call(&user, "/generate-file-urls", Some(upload_input(&key, 4 << 20)))
        .await
        .assert_error(409, "object_key_taken");
    assert_eq!(app.download(&user, id.as_str().unwrap()).await, vec![1]);
    assert_eq!(used_bytes(&app, &user).await, 1);

    // Same size, other bytes, through a form issued before the insert.
    let key = user.key("rewritten.bin");
    let form = app
        .call(&user, "/generate-file-urls", Some(upload_input(&key, 5)))
        .await;
    assert!(
        post_form(&form.body, b"aaaaa".to_vec(), "application/octet-stream")
            .await
            .is_success()
    );
    let id = app
        .call(&user, "/insert-file", Some(insert_input(&user, &key, 5)))
        .await
        .body["id"]
        .clone();
    let sha256 = json!({ "jobType": "checksum", "fileIds": [id], "options": { "algorithm": "sha256" } });
    let first = app.run_job(&user, sha256.clone()).await;
    assert_eq!(
        first["result"]["checksums"][0]["digest"],
        hex::encode(Sha256::digest(b"aaaaa")),
        "{first}"
    );
    assert!(
        post_form(&form.body, b"bbbbb".to_vec(), "application/octet-stream")
            .await
            .is_success()
    );
    // The digest kept from the old bytes is not answered again: the job reads the new ones.
    let second = app.run_job(&user, sha256).await;
    assert_eq!(
        second["result"]["checksums"][0]["digest"],
        hex::encode(Sha256::digest(b"bbbbb")),
        "{second}"
    );
    assert_eq!(app.download(&user, id.as_str().unwrap()).await, b"bbbbb");
    assert_eq!(
        used_bytes(&app, &user).await,
        6,
        "the account counts both files' bytes"
    );
    let out = app.admin(&["sweep"]);
    assert!(
        out.contains("followed 0 rewritten files"),
        "followed once already: {out}"
    );
}

/// A form issued before a file was recorded can post its object again after the file was
/// deleted for good: the object is nobody's, and is removed once the last form for its key
/// has expired (before, the form could still write it again).
#[tokio::test]
async fn an_object_posted_again_under_a_deleted_files_key_is_removed_when_its_form_expires() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let key = user.key("gone.bin");
    let form = app
        .call(&user, "/generate-file-urls", Some(upload_input(&key, 3)))
        .await;
    assert!(
        post_form(&form.body, vec![1, 2, 3], "application/octet-stream")
            .await
            .is_success()
    );
    let id = app
        .call(&user, "/insert-file", Some(insert_input(&user, &key, 3)))
        .await
        .body["id"]
        .clone();
    let deleted = app
        .call(&user, "/delete-files", Some(json!([{ "id": id }])))
        .await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);
    assert_eq!(stored(&app.private_bucket, &key).await, None);

    assert!(
        post_form(&form.body, vec![4, 5, 6], "application/octet-stream")
            .await
            .is_success()
    );
    let out = app.admin(&["sweep"]);
    assert!(out.contains("removed 0 queued objects"), "{out}");
    assert_eq!(
        stored(&app.private_bucket, &key).await,
        Some(3),
        "the form can still write: nothing is removed yet"
    );
    sqlx::query("update upload_forms set form_until = now() - interval '1 second'")
        .execute(&mut app.db().await)
        .await
        .unwrap();
    let out = app.admin(&["sweep"]);
    assert!(out.contains("removed 1 queued objects"), "{out}");
    assert_eq!(stored(&app.private_bucket, &key).await, None, "the orphan stays");
    let remembered: i64 = sqlx::query_scalar("select count(*) from upload_forms")
        .fetch_one(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(remembered, 0, "an expired form is forgotten");
}

#[tokio::test]
async fn concurrent_access_switches_never_lose_or_leak_the_bytes() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let content = bytes(5000, 3);
    let id = app
        .upload(
            &user,
            "switch.bin",
            "Other",
            "application/octet-stream",
            content.clone(),
        )
        .await;
    let key = app.object_key(id).await;

    let toggles = (0..100).map(|_| app.call(&user, "/toggle-file-access", Some(json!({ "id": id }))));
    for reply in futures::future::join_all(toggles).await {
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    }
    // 100 switches: back where it started.
    let public: bool = sqlx::query_scalar("select bucket = 'public' from files where id = $1")
        .bind(id)
        .fetch_one(&mut app.db().await)
        .await
        .unwrap();
    assert!(!public, "an even number of switches leaves the file private");
    assert_eq!(app.download(&user, &id.to_string()).await, content);

    app.admin(&["sweep"]);
    assert_eq!(
        stored(&app.public_bucket, &key).await,
        None,
        "a copy remains in the public bucket"
    );
    assert_eq!(stored(&app.private_bucket, &key).await, Some(5000));
    let queued: i64 = sqlx::query_scalar("select count(*) from object_deletions")
        .fetch_one(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(queued, 0);
}

#[tokio::test]
async fn a_trashed_public_file_is_not_public_until_restored() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let content = bytes(700, 4);
    let id = app
        .upload(&user, "shared.txt", "Text", "text/plain", content.clone())
        .await;
    let key = app.object_key(id).await;
    let public = app
        .call(&user, "/toggle-file-access", Some(json!({ "id": id })))
        .await;
    assert_eq!(public.body["isPublic"], true, "{}", public.body);
    let object_url = format!("{}/{}/{key}", env("DRIVE_S3_ENDPOINT"), app.public_bucket);
    assert_eq!(get(&object_url).await, (StatusCode::OK, content.clone()));

    let trashed = app.call(&user, "/trash-files", Some(json!([{ "id": id }]))).await;
    assert_eq!(trashed.body, json!({ "trashed": [id] }));
    assert_ne!(
        get(&object_url).await.0,
        StatusCode::OK,
        "a trashed file is still served publicly"
    );
    let link = app.http.get(format!("{}/p/{id}", app.url)).send().await.unwrap();
    assert_eq!(link.status(), StatusCode::NOT_FOUND);
    app.call(&user, "/toggle-file-access", Some(json!({ "id": id })))
        .await
        .assert_bad_field("file_trashed", "id");

    let restored = app
        .call(&user, "/restore-files", Some(json!([{ "id": id }])))
        .await;
    assert_eq!(restored.body, json!({ "restored": [id] }));
    assert_eq!(
        get(&object_url).await,
        (StatusCode::OK, content),
        "restored, it is public again"
    );
    let listed = app.call(&user, "/select-user-files", None).await;
    assert_eq!(listed.body[0]["isPublic"], true);
}

#[tokio::test]
async fn a_queued_deletion_never_removes_bytes_written_after_it() {
    let proxy = TcpProxy::start(&env("DRIVE_S3_ENDPOINT")).await;
    let app = TestApp::spawn_with(&[("DRIVE_S3_ENDPOINT", &proxy.endpoint)]).await;
    let user = app.user(Some("Pro")).await;
    // The CLI names a file's key after the file (its name, size and modified time), so the
    // same key comes back.
    let key = user.key("notes.txt");
    let old = app
        .upload_at(&user, &key, "notes.txt", "Text", "text/plain", bytes(10, 1))
        .await;

    proxy.take_down();
    let deleted = app
        .call(&user, "/delete-files", Some(json!([{ "id": old }])))
        .await;
    assert_eq!(deleted.body, json!({ "deleted": [old] }));
    proxy.bring_up();

    // Other bytes of the key's one size.
    let newer = bytes(10, 2);
    let new = app
        .upload_at(&user, &key, "notes.txt", "Text", "text/plain", newer.clone())
        .await;
    let out = app.admin(&["sweep"]);
    assert!(out.contains("removed 0 queued objects"), "{out}");
    assert_eq!(
        app.download(&user, &new.to_string()).await,
        newer,
        "the sweep removed the new bytes"
    );
}

#[tokio::test]
async fn an_archive_of_a_gallery_starting_with_another_users_file_lands_in_the_callers_drive() {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let owner = app.user(Some("Pro")).await;
    let theirs = app
        .upload(&owner, "theirs.jpg", "Image", "image/jpeg", bytes(100, 1))
        .await;
    let moved = app
        .call(
            &owner,
            "/move-files",
            Some(json!({ "fileIds": [theirs], "folder": "/Private stuff" })),
        )
        .await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.body);
    app.call(&owner, "/toggle-file-access", Some(json!({ "id": theirs })))
        .await;

    let caller = app.user(Some("Pro")).await;
    let mine = app
        .upload(&caller, "mine.jpg", "Image", "image/jpeg", bytes(100, 2))
        .await;
    let gallery = app
        .call(
            &caller,
            "/create-gallery",
            Some(json!({ "title": "Mixed", "fileIds": [theirs, mine] })),
        )
        .await;
    assert_eq!(gallery.status, StatusCode::OK, "{}", gallery.body);
    let accepted = app
        .call(
            &caller,
            "/create-archive-request",
            Some(json!({ "galleryId": gallery.body["id"] })),
        )
        .await;
    assert_eq!(accepted.status, StatusCode::ACCEPTED, "{}", accepted.body);
    assert!(accepted.body["job"]["folder"].is_null(), "{}", accepted.body);
    let job = app.wait_job(&caller, &accepted.body["job"]["id"]).await;
    assert_done(&job);

    let archive: FileId = job["files"][0]["id"].as_str().unwrap().parse().unwrap();
    let (owner_id, folder): (UserId, Option<FolderId>) =
        sqlx::query_as("select user_id, folder_id from files where id = $1")
            .bind(archive)
            .fetch_one(&mut app.db().await)
            .await
            .unwrap();
    assert_eq!(owner_id, caller.id);
    assert_eq!(folder, None, "the archive lands at the top of the caller's drive");
    let in_their_folder: i64 = sqlx::query_scalar(
        "select count(*) from files where folder_id = (select folder_id from files where id = $1)",
    )
    .bind(theirs)
    .fetch_one(&mut app.db().await)
    .await
    .unwrap();
    assert_eq!(in_their_folder, 1, "nothing new in the other user's folder");
}

// ---- the farm cannot be exhausted for free ----

#[tokio::test]
async fn an_account_may_have_only_so_many_jobs_waiting_or_running() {
    // No worker: every job stays queued.
    let app = TestApp::spawn_with(&[("DRIVE_MAX_ACTIVE_JOBS", "2")]).await;
    let user = app.user(Some("Pro")).await;
    let id = app
        .upload(&user, "a.bin", "Other", "application/octet-stream", bytes(10, 1))
        .await;
    let checksum = json!({ "jobType": "checksum", "fileIds": [id] });
    for _ in 0..2 {
        let created = app.call(&user, "/create-file-job", Some(checksum.clone())).await;
        assert_eq!(created.status, StatusCode::OK, "{}", created.body);
    }
    let refused = app.call(&user, "/create-file-job", Some(checksum.clone())).await;
    let body = refused.assert_error(429, "too_many_jobs");
    assert_eq!(body["retryable"], true);
    // Another account is not held back by this one's jobs.
    let other = app.user(Some("Pro")).await;
    let theirs = app
        .upload(&other, "b.bin", "Other", "application/octet-stream", bytes(10, 2))
        .await;
    let created = app
        .call(
            &other,
            "/create-file-job",
            Some(json!({ "jobType": "checksum", "fileIds": [theirs] })),
        )
        .await;
    assert_eq!(created.status, StatusCode::OK, "{}", created.body);
}

#[tokio::test]
async fn a_running_job_stops_when_the_months_minutes_run_out_keeping_what_it_made() {
    // Pro has 1.2 seconds of job time a month here; the job takes over two seconds even on a
    // fast machine, and its minutes are checked about once a heartbeat (1 s). A still takes
    // about 0.15 s on two idle cores (4 to 6 made by 0.6 s), and more on busy ones: with 0.6 s
    // a run beside other tests once stopped before its first.
    let mut app = TestApp::spawn_with(&[
        ("DRIVE_JOB_MINUTES_PRO", "0.02"),
        ("DRIVE_HEARTBEAT_SECONDS", "1"),
    ])
    .await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    let video = drive_tests::media::video_of("testsrc2=size=320x240:rate=25", 10.0, &[]);
    let mut ids = Vec::new();
    for n in 0..40 {
        ids.push(
            app.upload(
                &user,
                &format!("clip {n}.mp4"),
                "Video",
                "video/mp4",
                video.clone(),
            )
            .await,
        );
    }
    // A still of each video, saved as each is made.
    let created = app
        .create_job(
            &user,
            json!({ "jobType": "stills", "fileIds": ids, "options": { "at": 5 } }),
        )
        .await;
    let job = app.wait_job(&user, &created["id"]).await;
    assert_eq!(job["state"], "stopped", "{job}");
    let made = job["files"].as_array().unwrap().len();
    assert!(
        made > 0 && made < 40,
        "it keeps the {made} stills it made before the stop"
    );
    let seconds = job["seconds"].as_f64().unwrap();
    assert!(seconds < 10.0, "stopped after {seconds} s");
    app.call(
        &user,
        "/create-file-job",
        Some(json!({ "jobType": "checksum", "fileIds": [ids[0]] })),
    )
    .await
    .assert_error(403, "job_minutes_used_up");
}

#[tokio::test]
async fn a_job_writing_past_its_disk_limit_fails() {
    let mut app = TestApp::spawn_with(&[("DRIVE_JOB_DISK_LIMIT_BYTES", "100000")]).await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    // A picture job downloads its input to the work folder: 300 kB is past the limit.
    let id = app
        .upload(&user, "big.png", "Image", "image/png", noise(300_000, 5))
        .await;
    let job = app
        .run_job(
            &user,
            json!({ "jobType": "convert", "fileIds": [id], "options": { "format": "jpg" } }),
        )
        .await;
    assert_eq!(job["state"], "failed", "{job}");
    assert!(job["error"].as_str().unwrap().contains("disk limit"), "{job}");
}

#[tokio::test]
async fn retries_share_the_jobs_time_limit() {
    let app = TestApp::spawn_with(&[("DRIVE_JOB_TIME_LIMIT_SECONDS", "60")]).await;
    let user = app.user(Some("Pro")).await;
    let id = app
        .upload(&user, "a.bin", "Other", "application/octet-stream", bytes(10, 1))
        .await;
    let created = app
        .create_job(&user, json!({ "jobType": "checksum", "fileIds": [id] }))
        .await;
    // As if an earlier attempt had started two minutes ago and its worker died.
    sqlx::query("update file_jobs set attempts = 1, started_at = now() - interval '2 minutes' where id = $1")
        .bind(created["id"].as_str().unwrap().parse::<Uuid>().unwrap())
        .execute(&mut app.db().await)
        .await
        .unwrap();
    let mut app = app;
    app.start_worker(&[]).await;
    let job = app.wait_job(&user, &created["id"]).await;
    assert_eq!(job["state"], "failed", "{job}");
    assert!(job["error"].as_str().unwrap().contains("time limit"), "{job}");
}

/// Uploads a file, makes it public and answers what the public bucket serves for it.
async fn served_publicly(
    app: &TestApp,
    user: &TestUser,
    name: &str,
    mime: &str,
    content: Vec<u8>,
) -> reqwest::Response {
    let id = app.upload(user, name, "Other", mime, content).await;
    let key = app.object_key(id).await;
    let public = app
        .call(user, "/toggle-file-access", Some(json!({ "id": id })))
        .await;
    assert_eq!(public.body["isPublic"], true, "{}", public.body);
    let url = format!("{}/{}/{key}", env("DRIVE_S3_ENDPOINT"), app.public_bucket);
    reqwest::get(url).await.unwrap()
}

#[tokio::test]
async fn public_files_a_browser_would_run_are_served_as_downloads() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let page = b"<html><script>alert(document.domain)</script></html>".to_vec();
    // Active types, and types on no list at all: only the types a browser shows without
    // running anything are inline (an allow-list), whatever the name.
    for (name, mime) in [
        ("page.html", "text/html"),
        ("logo.svg", "image/svg+xml"),
        ("app.bin", "application/javascript"),
        ("feed", "text/xml"),
        ("page", "application/xhtml+xml"),
        ("movie", "application/x-shockwave-flash"),
        ("stream", "multipart/x-mixed-replace"),
        ("made-up", "application/x-drive-test"),
        ("picture.html", "image/png"),
    ] {
        let served = served_publicly(&app, &user, name, mime, page.clone()).await;
        assert_eq!(served.status(), StatusCode::OK);
        let header = |h: &str| served.headers().get(h).map(|v| v.to_str().unwrap().to_string());
        let disposition = header("content-disposition").unwrap_or_default();
        assert!(disposition.starts_with("attachment"), "{name}: {disposition}");
        // The store (SeaweedFS) types a key by its extension whatever it was sent, so only a
        // key without an active extension shows the type the drive stored.
        if !name.contains(".html") && !name.contains(".svg") {
            assert_eq!(
                header("content-type").as_deref(),
                Some("application/octet-stream"),
                "{name}"
            );
        }
        assert_eq!(served.bytes().await.unwrap().to_vec(), page);
    }
    // A picture, a text and a PDF keep their type and are shown inline.
    for (name, mime) in [
        ("a.png", "image/png"),
        ("notes.txt", "text/plain"),
        ("paper.pdf", "application/pdf"),
    ] {
        let served = served_publicly(&app, &user, name, mime, bytes(10, 1)).await;
        assert_eq!(served.headers()["content-type"], mime);
        let disposition = served.headers()["content-disposition"].to_str().unwrap();
        assert!(disposition.starts_with("inline"), "{name}: {disposition}");
    }
}

#[tokio::test]
async fn a_guessable_drive_secret_is_refused_by_the_api_and_workers() {
    let app = TestApp::spawn().await;
    let repeated = "a".repeat(64);
    for weak in ["drive-test-secret-for-upload-tokens", repeated.as_str()] {
        for (program, log) in [
            ("drive-api", app.refused_start(&[("DRIVE_SECRET", weak)])),
            (
                "drive-worker",
                app.refused_worker_start(&[("DRIVE_SECRET", weak)]),
            ),
        ] {
            assert!(
                log.contains("DRIVE_SECRET is too weak") && log.contains("openssl rand -hex 32"),
                "{program} with {weak:?}: {log}"
            );
            assert!(!log.contains(weak), "{program} shows the secret: {log}");
        }
    }
}
