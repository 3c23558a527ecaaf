//! Folder rules end to end: a job run on every file that lands in a folder — uploaded into it,
//! moved in, made there by another job, dropped by a request's sender — by real workers, never
//! on the rule's own results; paused, resumed and removed; a backfill estimated first and
//! stopped at its budget.

use std::time::Duration;

use drive_tests::senders::Sender;
use drive_tests::{TestApp, TestUser, assert_done, post_form};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// Uploads `bytes` through the presigned form and records the file in `folder`; answers its id.
async fn upload_into(
    app: &TestApp,
    user: &TestUser,
    folder: &str,
    name: &str,
    mime: &str,
    bytes: Vec<u8>,
) -> String {
    let kind = match mime.split('/').next() {
        Some("image") => "Image",
        Some("video") => "Video",
        _ => "Text",
    };
    let input = json!({
        "type": kind, "fileName": name, "fileSize": bytes.len(), "objectKey": user.key(name), "mimeType": mime,
    });
    let urls = app.call(user, "/generate-file-urls", Some(input.clone())).await;
    assert_eq!(urls.status, StatusCode::OK, "generate-file-urls: {}", urls.body);
    assert!(post_form(&urls.body, bytes, mime).await.is_success());
    let mut insert = input;
    insert["folder"] = json!(folder);
    let inserted = app.call(user, "/insert-file", Some(insert)).await;
    assert_eq!(inserted.status, StatusCode::OK, "insert-file: {}", inserted.body);
    inserted.body["id"].as_str().unwrap().to_string()
}

fn png(seed: u8) -> Vec<u8> {
    drive_tests::media::ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            &format!("color=c=0x{seed:02x}4080:size=64x48"),
            "-frames:v",
            "1",
        ],
        "png",
    )
}

async fn make_rule(app: &TestApp, user: &TestUser, body: Value) -> Value {
    let made = app.call(user, "/create-folder-rule", Some(body)).await;
    assert_eq!(made.status, StatusCode::OK, "create-folder-rule: {}", made.body);
    made.body
}

async fn rule(app: &TestApp, user: &TestUser, id: &Value) -> Value {
    let listed = app.call(user, "/select-folder-rules", Some(json!({}))).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    listed.body["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == *id)
        .cloned()
        .unwrap_or_else(|| panic!("rule {id} not listed: {}", listed.body))
}

/// The caller's jobs of `job_type` on `file`, as `/select-file-jobs` lists them.
async fn jobs_on(app: &TestApp, user: &TestUser, job_type: &str, file: &str) -> Vec<Value> {
    let listed = app
        .call(user, "/select-file-jobs", Some(json!({ "limit": 100 })))
        .await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    listed.body["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["jobType"] == job_type && j["fileIds"].as_array().unwrap().iter().any(|f| f == file))
        .cloned()
        .collect()
}

/// The one job of `job_type` on `file`, waited for to its end.
async fn the_job_on(app: &TestApp, user: &TestUser, job_type: &str, file: &str) -> Value {
    for _ in 0..100 {
        if let [job] = jobs_on(app, user, job_type, file).await.as_slice() {
            return app.wait_job(user, &job["id"]).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no {job_type} job on {file}");
}

#[tokio::test]
async fn a_rule_runs_on_files_uploaded_moved_or_made_in_its_folder_and_never_on_its_own_results() {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    let made = make_rule(
        &app,
        &user,
        json!({ "folder": "/Inbox", "jobType": "convert", "options": { "format": "jpg" } }),
    )
    .await;
    let id = made["rule"]["id"].clone();
    assert_eq!(made["rule"]["folder"]["path"], "/Inbox/", "{made}");
    assert_eq!(made["rule"]["options"]["format"], "jpg", "{made}");
    assert_eq!(made["rule"]["paused"], false);

    // Uploaded into the folder: converted, the result beside it, and the result (a picture the
    // rule takes) fires nothing.
    let uploaded = upload_into(&app, &user, "/Inbox", "cover.png", "image/png", png(1)).await;
    let job = the_job_on(&app, &user, "convert", &uploaded).await;
    assert_done(&job);
    assert_eq!(job["folder"]["path"], "/Inbox/", "{job}");
    let result = job["files"][0]["id"].as_str().unwrap().to_string();
    // A text file is not a picture: not taken.
    upload_into(
        &app,
        &user,
        "/Inbox",
        "notes.txt",
        "text/plain",
        b"words".to_vec(),
    )
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(jobs_on(&app, &user, "convert", &result).await.is_empty());
    assert_eq!(rule(&app, &user, &id).await["filesTaken"], 1);

    // Moved in from the top: taken; moved again within the folder: not taken twice.
    let top = app
        .upload(&user, "poster.png", "Image", "image/png", png(2))
        .await
        .to_string();
    assert!(jobs_on(&app, &user, "convert", &top).await.is_empty());
    for _ in 0..2 {
        let moved = app
            .call(
                &user,
                "/move-files",
                Some(json!({ "fileIds": [top], "folder": "/Inbox" })),
            )
            .await;
        assert_eq!(moved.status, StatusCode::OK, "{}", moved.body);
    }
    assert_done(&the_job_on(&app, &user, "convert", &top).await);

    // Made in the folder by another job (not a rule's): taken.
    let elsewhere = app
        .upload(&user, "logo.png", "Image", "image/png", png(3))
        .await
        .to_string();
    let webp = app
        .run_job(
            &user,
            json!({ "jobType": "convert", "fileIds": [elsewhere], "options": { "format": "webp" }, "folder": "/Inbox" }),
        )
        .await;
    assert_done(&webp);
    let made_there = webp["files"][0]["id"].as_str().unwrap();
    assert_done(&the_job_on(&app, &user, "convert", made_there).await);
    assert_eq!(rule(&app, &user, &id).await["filesTaken"], 3);

    // Paused: nothing fires; resumed: it fires again.
    let paused = app
        .call(
            &user,
            "/set-folder-rule-paused",
            Some(json!({ "id": id, "paused": true })),
        )
        .await;
    assert_eq!(paused.body["rule"]["paused"], true, "{}", paused.body);
    let while_paused = upload_into(&app, &user, "/Inbox", "paused.png", "image/png", png(4)).await;
    let resumed = app
        .call(
            &user,
            "/set-folder-rule-paused",
            Some(json!({ "id": id, "paused": false })),
        )
        .await;
    assert_eq!(resumed.body["rule"]["paused"], false, "{}", resumed.body);
    let after = upload_into(&app, &user, "/Inbox", "resumed.png", "image/png", png(5)).await;
    assert_done(&the_job_on(&app, &user, "convert", &after).await);
    assert!(jobs_on(&app, &user, "convert", &while_paused).await.is_empty());

    // Another account sees no such rule; removed, it is gone and fires nothing.
    let other = app.user(Some("Pro")).await;
    for route in ["/set-folder-rule-paused", "/delete-folder-rule"] {
        let body = json!({ "id": id, "paused": true });
        let body = if route == "/delete-folder-rule" {
            json!({ "id": id })
        } else {
            body
        };
        let reply = app.call(&other, route, Some(body)).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{route}: {}", reply.body);
        assert_eq!(reply.body["code"], "rule_not_found", "{}", reply.body);
    }
    let listed = app.call(&other, "/select-folder-rules", Some(json!({}))).await;
    assert_eq!(listed.body["rules"], json!([]), "{}", listed.body);
    let removed = app
        .call(&user, "/delete-folder-rule", Some(json!({ "id": id })))
        .await;
    assert_eq!(removed.body["deleted"], id, "{}", removed.body);
    let last = upload_into(&app, &user, "/Inbox", "last.png", "image/png", png(6)).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(jobs_on(&app, &user, "convert", &last).await.is_empty());
    let again = app
        .call(&user, "/delete-folder-rule", Some(json!({ "id": id })))
        .await;
    assert_eq!(again.status, StatusCode::NOT_FOUND, "{}", again.body);
}

#[tokio::test]
async fn a_rule_and_a_request_s_on_arrival_fire_on_a_sender_s_drop() {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let owner = app.user(Some("Pro")).await;
    let request = app
        .call(
            &owner,
            "/create-file-request",
            Some(json!({ "title": "Logos", "folder": "/Logos", "onArrival": { "jobType": "checksum" } })),
        )
        .await;
    assert_eq!(request.status, StatusCode::OK, "{}", request.body);
    // The request's onArrival is the rule on its folder.
    let listed = app.call(&owner, "/select-folder-rules", Some(json!({}))).await;
    let on_arrival = &listed.body["rules"][0];
    assert_eq!(on_arrival["requestId"], request.body["id"], "{}", listed.body);
    assert_eq!(on_arrival["jobType"], "checksum");
    assert_eq!(on_arrival["folder"]["path"], "/Logos/");
    // A rule of the owner's own on the same folder.
    make_rule(
        &app,
        &owner,
        json!({ "folderId": request.body["folder"]["id"], "jobType": "convert", "options": { "format": "jpg" } }),
    )
    .await;

    let sender = Sender::start(&app, request.body["id"].as_str().unwrap(), "Ann", None).await;
    sender.send(&app, "logo.png", &png(7)).await;
    let requests = app
        .call(
            &owner,
            "/select-file-requests",
            Some(json!({ "ids": [request.body["id"]] })),
        )
        .await;
    let dropped = requests.body["requests"][0]["drops"][0]["files"][0].clone();
    let file = dropped["id"].as_str().unwrap();
    let checksum = the_job_on(&app, &owner, "checksum", file).await;
    assert_done(&checksum);
    assert_eq!(
        dropped["jobId"], checksum["id"],
        "the drop lists the first rule's job"
    );
    let converted = the_job_on(&app, &owner, "convert", file).await;
    assert_done(&converted);
    assert_eq!(converted["folder"]["path"], "/Logos/", "{converted}");
}

#[tokio::test]
async fn a_backfill_is_estimated_first_and_stops_at_its_budget() {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    // Three 45 MB "videos": a shrink is estimated at 2 MB a second, so about 24 s each.
    let mut ids = Vec::new();
    for n in 0..3u8 {
        let bytes = vec![n; 45_000_000];
        ids.push(
            upload_into(
                &app,
                &user,
                "/Talks",
                &format!("talk-{n}.mp4"),
                "video/mp4",
                bytes,
            )
            .await,
        );
    }
    upload_into(
        &app,
        &user,
        "/Talks",
        "readme.txt",
        "text/plain",
        b"not a video".to_vec(),
    )
    .await;

    let estimate = make_rule(
        &app,
        &user,
        json!({ "folder": "/Talks", "jobType": "shrink", "options": { "targetMB": 10 }, "dryRun": true }),
    )
    .await;
    assert_eq!(estimate["dryRun"], true, "{estimate}");
    assert!(estimate.get("rule").is_none(), "{estimate}");
    assert_eq!(estimate["backfill"]["files"], 3, "{estimate}");
    let each = estimate["backfill"]["estimateSeconds"].as_u64().unwrap() / 3;
    assert!((21..=30).contains(&each), "{estimate}");
    let listed = app.call(&user, "/select-folder-rules", Some(json!({}))).await;
    assert_eq!(listed.body["rules"], json!([]), "a dry run makes no rule");

    // A backfill needs its budget, of at least a minute.
    app.call(
        &user,
        "/create-folder-rule",
        Some(
            json!({ "folder": "/Talks", "jobType": "shrink", "options": { "targetMB": 10 }, "backfill": {} }),
        ),
    )
    .await
    .assert_bad_field("missing_field", "backfill.budgetMinutes");
    app.call(
        &user,
        "/create-folder-rule",
        Some(json!({ "folder": "/Talks", "jobType": "shrink", "options": { "targetMB": 10 }, "backfill": { "budgetMinutes": 0 } })),
    )
    .await
    .assert_bad_field("invalid_field", "backfill.budgetMinutes");

    // One minute holds the two oldest, not the third.
    let made = make_rule(
        &app,
        &user,
        json!({ "folder": "/Talks", "jobType": "shrink", "options": { "targetMB": 10 }, "backfill": { "budgetMinutes": 1 } }),
    )
    .await;
    assert_eq!(made["backfill"]["files"], 3, "{made}");
    assert_eq!(made["backfill"]["filesTaken"], 2, "{made}");
    assert_eq!(
        made["backfill"]["estimateSeconds"].as_u64().unwrap(),
        2 * each,
        "{made}"
    );
    assert_eq!(made["rule"]["filesTaken"], 2, "{made}");
    for id in &ids[..2] {
        // Not videos at all: their jobs end, failed, but they ran.
        let job = the_job_on(&app, &user, "shrink", id).await;
        assert!(job["state"] == "failed" || job["state"] == "done", "{job}");
    }
    assert!(jobs_on(&app, &user, "shrink", &ids[2]).await.is_empty());
}

#[tokio::test]
async fn a_rule_is_refused_for_jobs_it_cannot_run_on_one_file_and_for_folders_not_the_callers() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let other = app.user(Some("Pro")).await;
    let call = |body: Value| {
        let (app, user) = (&app, &user);
        async move { app.call(user, "/create-folder-rule", Some(body)).await }
    };
    call(json!({ "folder": "/In", "jobType": "join" }))
        .await
        .assert_bad_field("invalid_field", "jobType");
    call(json!({ "folder": "/In", "jobType": "captions" }))
        .await
        .assert_bad_field("invalid_field", "jobType");
    call(json!({ "folder": "/In", "jobType": "convert", "options": { "format": "bmpx" } }))
        .await
        .assert_bad_field("invalid_field", "options.format");
    call(json!({ "jobType": "checksum" }))
        .await
        .assert_bad_field("missing_field", "folderId");
    call(json!({ "folder": "/", "jobType": "checksum" }))
        .await
        .assert_bad_field("invalid_field", "folder");
    call(json!({ "folder": "/In", "jobType": "checksum", "templateId": uuid::Uuid::new_v4() }))
        .await
        .assert_bad_field("invalid_field", "templateId");
    call(json!({ "folder": "/In", "steps": [{ "name": "a", "jobType": "join" }, { "name": "b", "jobType": "gif" }] }))
        .await
        .assert_bad_field("invalid_field", "steps");

    let theirs = app
        .call(
            &other,
            "/create-folder-rule",
            Some(json!({ "folder": "/Theirs", "jobType": "checksum" })),
        )
        .await;
    assert_eq!(theirs.status, StatusCode::OK, "{}", theirs.body);
    let folder = theirs.body["rule"]["folder"]["id"].clone();
    for field in ["folderId", "resultFolderId"] {
        let mut body = json!({ "folder": "/In", "jobType": "checksum" });
        if field == "folderId" {
            body = json!({ "folderId": folder, "jobType": "checksum" });
        } else {
            body[field] = folder.clone();
        }
        let reply = call(body).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{field}: {}", reply.body);
        assert_eq!(reply.body["code"], "folder_not_found", "{}", reply.body);
    }
    let template = app
        .call(
            &other,
            "/create-job-template",
            Some(json!({ "name": "t", "steps": [{ "name": "sum", "jobType": "checksum" }] })),
        )
        .await;
    let reply = call(json!({ "folder": "/In", "templateId": template.body["template"]["id"] })).await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.body);
    assert_eq!(reply.body["code"], "template_not_found", "{}", reply.body);
    // Nothing refused made a rule.
    let listed = app.call(&user, "/select-folder-rules", Some(json!({}))).await;
    assert_eq!(listed.body["rules"], json!([]), "{}", listed.body);
}

/// An account's rules have at most 100 jobs waiting in the queue: the files past that are taken
/// and wait, and start as room opens.
#[tokio::test]
async fn past_a_hundred_queued_rule_jobs_files_wait_and_start_as_room_opens() {
    let mut app = TestApp::spawn().await;
    // A worker that takes no checksum: the rule's jobs stay queued, and its upkeep runs.
    app.start_worker_alone(&[("DRIVE_WORKER_JOB_TYPES", "zip")]).await;
    let user = app.user(Some("Pro")).await;
    let made = make_rule(&app, &user, json!({ "folder": "/Many", "jobType": "checksum" })).await;
    let id = made["rule"]["id"].clone();
    for n in 0..103 {
        upload_into(
            &app,
            &user,
            "/Many",
            &format!("f{n:03}.txt"),
            "text/plain",
            vec![b'x'; 10],
        )
        .await;
    }
    let ruled = rule(&app, &user, &id).await;
    assert_eq!(
        (ruled["filesTaken"].as_i64(), ruled["filesWaiting"].as_i64()),
        (Some(103), Some(3)),
        "{ruled}"
    );
    let listed = app
        .call(&user, "/select-file-jobs", Some(json!({ "limit": 100 })))
        .await;
    let queued: Vec<&Value> = listed.body["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["jobType"] == "checksum" && j["state"] == "queued")
        .collect();
    assert_eq!(queued.len(), 100, "{}", listed.body);
    // Two leave the queue: two waiting files start.
    for job in &queued[..2] {
        let stopped = app
            .call(&user, "/cancel-file-job", Some(json!({ "id": job["id"] })))
            .await;
        assert_eq!(stopped.status, StatusCode::OK, "{}", stopped.body);
    }
    let mut waiting = 3;
    for _ in 0..100 {
        waiting = rule(&app, &user, &id).await["filesWaiting"].as_i64().unwrap();
        if waiting == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(waiting, 1, "two of the three waiting files started");
}
