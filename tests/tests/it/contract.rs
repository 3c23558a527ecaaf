//! The served OpenAPI document checked from outside, by tools that know nothing of the drive:
//! Schemathesis fuzzes every operation against it (with real ids seeded, so calls get past the
//! lookups), and openapi-python-client generates a client from it that then calls the drive.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use drive_tests::image_providers::FakeProviders;
use drive_tests::media;
use drive_tests::oauth::OAuthClient;
use drive_tests::scratch::Scratch;
use drive_tests::senders::Sender;
use drive_tests::*;
use serde_json::{Value, json};

/// POSTs as `user` and answers the body of a 200.
async fn made(app: &TestApp, user: &TestUser, route: &str, body: Value) -> Value {
    let reply = app.call(user, route, Some(body)).await;
    assert_eq!(reply.status, 200, "{route}: {}", reply.body);
    reply.body
}

/// A webhook link the drive takes (loopback is allowed here); nothing listens, and no worker
/// runs to send to it.
const WEBHOOK_URL: &str = "https://127.0.0.1:9/hook";

/// Real ids and credentials of every kind the routes look up, for tests/contract/hooks.py to
/// swap in.
async fn seed(app: &TestApp, user: &TestUser) -> Value {
    let mut files = Vec::new();
    for n in 0..12 {
        let id = app
            .upload(
                user,
                &format!("note-{n}.txt"),
                "Text",
                "text/plain",
                bytes(2_000 + n, n as u8),
            )
            .await;
        files.push(id.to_string());
    }
    let mut expendable = Vec::new();
    for n in 0..8 {
        let id = app
            .upload(
                user,
                &format!("spare-{n}.txt"),
                "Text",
                "text/plain",
                bytes(1_000 + n, n as u8),
            )
            .await;
        expendable.push(id.to_string());
    }
    let video = app
        .upload(
            user,
            "clip.mp4",
            "Video",
            "video/mp4",
            media::video_of("testsrc=size=160x120:rate=10", 1.0, &[]),
        )
        .await;
    files.push(video.to_string());
    let picture = app
        .upload(
            user,
            "still.jpg",
            "Image",
            "image/jpeg",
            media::ffmpeg(
                &["-f", "lavfi", "-i", "testsrc=size=64x48", "-frames:v", "1"],
                "jpg",
            ),
        )
        .await;
    files.push(picture.to_string());
    let public = app
        .upload(user, "shared.txt", "Text", "text/plain", bytes(500, 7))
        .await;
    made(app, user, "/toggle-file-access", json!({ "id": public })).await;
    let moved = made(
        app,
        user,
        "/move-files",
        json!({ "fileIds": [files[0]], "folder": "/Seeded" }),
    )
    .await;
    let tagged = made(
        app,
        user,
        "/tag-files",
        json!({ "fileIds": [files[1]], "tags": ["seeded"] }),
    )
    .await;
    // No worker runs here: every job waits, for /cancel-file-job to stop.
    let job = app
        .create_job(user, json!({ "jobType": "checksum", "fileIds": [files[1]] }))
        .await;
    let mut cancelable = Vec::new();
    for file in &files[2..5] {
        let job = app
            .create_job(user, json!({ "jobType": "checksum", "fileIds": [file] }))
            .await;
        cancelable.push(job["id"].clone());
    }
    // Stopped jobs for /retry-file-job to queue again (each once: a queued job is not retried).
    let mut retryable = Vec::new();
    for file in &files[2..5] {
        let job = app
            .create_job(
                user,
                json!({ "jobType": "checksum", "options": { "algorithm": "md5" }, "fileIds": [file] }),
            )
            .await;
        made(app, user, "/cancel-file-job", json!({ "id": job["id"] })).await;
        retryable.push(job["id"].clone());
    }
    // A template to run, and templates for /delete-job-template to take away.
    let steps = json!([{ "jobType": "checksum" }]);
    let template = made(
        app,
        user,
        "/create-job-template",
        json!({ "name": "Kept", "steps": steps }),
    )
    .await;
    let mut expendable_templates = Vec::new();
    for n in 0..3 {
        let made = made(
            app,
            user,
            "/create-job-template",
            json!({ "name": format!("Spare {n}"), "steps": steps }),
        )
        .await;
        expendable_templates.push(made["template"]["id"].clone());
    }
    // A rule to pause and resume, and rules for /delete-folder-rule to take away.
    let rule = made(
        app,
        user,
        "/create-folder-rule",
        json!({ "folder": "/Ruled", "jobType": "checksum" }),
    )
    .await;
    let mut expendable_rules = Vec::new();
    for n in 0..3 {
        let made = made(
            app,
            user,
            "/create-folder-rule",
            json!({ "folder": format!("/Ruled {n}"), "jobType": "checksum" }),
        )
        .await;
        expendable_rules.push(made["rule"]["id"].clone());
    }
    let playlist = made(app, user, "/create-playlist", json!({ "title": "Seeded" })).await;
    let gallery = made(app, user, "/create-gallery", json!({ "title": "Seeded" })).await;
    // Folders, playlists, galleries, tags, requests and reviews for the routes that delete or
    // close them, so the others keep theirs.
    let (mut expendable_folders, mut expendable_playlists, mut expendable_galleries) =
        (vec![], vec![], vec![]);
    let (mut expendable_tags, mut expendable_requests, mut expendable_reviews) = (vec![], vec![], vec![]);
    for n in 0..3 {
        let folder = made(
            app,
            user,
            "/move-files",
            json!({ "fileIds": [files[5]], "folder": format!("/Spare {n}") }),
        )
        .await;
        expendable_folders.push(folder["folder"]["id"].clone());
        let title = json!({ "title": format!("Spare {n}") });
        expendable_playlists.push(made(app, user, "/create-playlist", title.clone()).await["id"].clone());
        expendable_galleries.push(made(app, user, "/create-gallery", title).await["id"].clone());
        let request = json!({ "title": format!("Spare request {n}") });
        expendable_requests.push(made(app, user, "/create-file-request", request).await["id"].clone());
        let tag = json!({ "fileIds": [files[1]], "tags": [format!("spare {n}")] });
        expendable_tags.push(made(app, user, "/tag-files", tag).await["tags"][0]["id"].clone());
        let review = json!({ "fileId": video, "title": format!("Spare {n}") });
        expendable_reviews.push(made(app, user, "/create-file-review", review).await["id"].clone());
    }
    let upload = made(
        app,
        user,
        "/create-multipart-upload",
        json!({ "type": "Video", "fileName": "big.mp4", "fileSize": 200_000_000, "objectKey": user.key("big.mp4"), "mimeType": "video/mp4" }),
    )
    .await;
    // One upload whose one part is stored, to complete, and one to abort.
    let completable = made(
        app,
        user,
        "/create-multipart-upload",
        json!({ "type": "Other", "fileName": "whole.bin", "fileSize": 1_000, "objectKey": user.key("whole.bin") }),
    )
    .await;
    let part = put(
        completable["signedParts"][0]["url"].as_str().unwrap(),
        bytes(1_000, 3),
    )
    .await;
    assert!(part.is_success(), "the store refused the part: {part}");
    let abortable = made(
        app,
        user,
        "/create-multipart-upload",
        json!({ "type": "Other", "fileName": "halted.bin", "fileSize": 1_000, "objectKey": user.key("halted.bin") }),
    )
    .await;
    // An object stored through a form and not yet recorded, for /insert-file.
    let stored_key = user.key("stored.txt");
    let form = made(
        app,
        user,
        "/generate-file-urls",
        json!({ "type": "Text", "fileName": "stored.txt", "fileSize": 1_500, "objectKey": stored_key, "mimeType": "text/plain" }),
    )
    .await;
    let posted = post_form(&form, bytes(1_500, 4), "text/plain").await;
    assert!(posted.is_success(), "the store refused the form: {posted}");

    let request = made(app, user, "/create-file-request", json!({ "title": "Seeded" })).await;
    let closable = made(app, user, "/create-file-request", json!({ "title": "Closable" })).await;
    let request_id = request["id"].as_str().unwrap();
    let drop = Sender::start(app, request_id, "Seeder", None).await;
    let other_drop = Sender::start(app, request_id, "Seeder", None).await;
    // A file announced in parts (none sent), and one sent whole but not yet recorded.
    let parted = drop.announce(app, "parted.bin", 200_000_000).await;
    assert_eq!(parted.status, 200, "{}", parted.body);
    let sent = drop.announce(app, "sent.bin", 1_000).await;
    assert_eq!(sent.status, 200, "{}", sent.body);
    drop.send_bytes(&sent.body, &bytes(1_000, 5)).await;
    let review = made(app, user, "/create-file-review", json!({ "fileId": video })).await;
    // Subscriptions for /delete-event-subscription to take away.
    let mut subscriptions = Vec::new();
    for _ in 0..3 {
        let made = made(
            app,
            user,
            "/create-event-subscription",
            json!({ "url": WEBHOOK_URL }),
        )
        .await;
        subscriptions.push(made["subscription"]["id"].clone());
    }
    // Apps let in through OAuth, for /revoke-connection to end.
    let client = OAuthClient::register(app, "Seeded app", "https://app.example/cb").await;
    for _ in 0..3 {
        client.connect(app, &user.api_token, &["read"]).await;
    }
    let listed = made(app, user, "/select-connections", json!({})).await;
    let connections: Vec<Value> = listed["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].clone())
        .collect();
    let note = app
        .send(
            None,
            None,
            "/add-review-note",
            Some(
                json!({ "reviewId": review["id"], "reviewerName": "Seeder", "text": "Here", "seconds": 0.5 }),
            ),
        )
        .await;
    assert_eq!(note.status, 200, "{}", note.body);
    // Someone to share with.
    let friend = app.user(Some("Pro")).await;
    // People's sign-in: the friend signs in with a password (invitations for /accept-invitation
    // set the same one), a cookie of theirs renews sessions; the caller has sign-ins of its own
    // for /end-sign-ins to end, one a call.
    let sign_in = |handle: String| async move {
        let body = json!({ "invitation": app.invitation(&handle), "password": CONTRACT_PASSWORD });
        let response = app
            .http
            .post(format!("{}/accept-invitation", app.url))
            .header("X-Drive-App", APP_ID)
            .json(&body)
            .send()
            .await
            .unwrap();
        let cookie = response.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .split(';')
            .next()
            .unwrap()
            .to_string();
        assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
        cookie
    };
    let friend_cookie = sign_in(friend.handle.clone()).await;
    let invitations: Vec<String> = (0..10).map(|_| app.invitation(&friend.handle)).collect();
    for _ in 0..10 {
        sign_in(user.handle.clone()).await;
    }
    let own = made(app, user, "/select-sign-ins", json!({})).await;
    let sign_ins: Vec<Value> = own["signIns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["signInId"].clone())
        .collect();
    // Agent tasks for /stop-agent-task to stop, one a call (no worker runs: they stay working).
    let mut tasks = Vec::new();
    for n in 0..10 {
        let asked = json!({
            "message": crate::agent::text_message(&format!("task {n}")),
            "configuration": { "returnImmediately": true },
        });
        let answer = crate::agent::rpc(app, &user.api_token, "SendMessage", asked).await;
        tasks.push(crate::agent::task_of(&answer)["id"].clone());
    }
    let mut seeded = json!({
        "shareHandle": [friend.handle],
        "signInHandle": [friend.handle],
        "password": [CONTRACT_PASSWORD],
        "signInCookie": [friend_cookie],
        "invitation": invitations,
        "expendableSignInId": sign_ins,
        "stoppableTaskId": tasks,
        "expendableFolderId": expendable_folders,
        "expendablePlaylistId": expendable_playlists,
        "expendableGalleryId": expendable_galleries,
        "expendableTagId": expendable_tags,
        "expendableRequestId": expendable_requests,
        "expendableReviewId": expendable_reviews,
    });
    let rest = json!({
        "userId": [user.id],
        "fileId": files,
        "expendableFileId": expendable,
        "videoId": [video],
        "imageId": [picture],
        "publicFileId": [public],
        "folderId": [moved["folder"]["id"]],
        "tagId": [tagged["tags"][0]["id"]],
        "jobId": [job["id"]],
        "cancelableJobId": cancelable,
        "retryableJobId": retryable,
        "templateId": [template["template"]["id"]],
        "expendableTemplateId": expendable_templates,
        "ruleId": [rule["rule"]["id"]],
        "expendableRuleId": expendable_rules,
        "playlistId": [playlist["id"]],
        "galleryId": [gallery["id"]],
        "requestId": [request["id"]],
        "closableRequestId": [closable["id"]],
        "reviewId": [review["id"]],
        "noteId": [note.body["id"]],
        "dropId": [drop.drop_id],
        "arrivalId": [parted.body["arrivalId"]],
        "arrivalPartCount": [parted.body["parts"]["partCount"]],
        "finishableArrivalId": [sent.body["arrivalId"]],
        "uploadToken": [upload["token"]],
        "uploadPartCount": [upload["partCount"]],
        "completableUploadToken": [completable["token"]],
        "abortableUploadToken": [abortable["token"]],
        "storedObject": [{ "objectKey": stored_key, "fileSize": 1_500 }],
        "importUrl": [format!("{}/p/{public}", app.url)],
        "webhookUrl": [WEBHOOK_URL],
        "subscriptionId": subscriptions,
        "connectionId": connections,
        "dropToken": [drop.token],
        "finishedDropToken": [other_drop.token],
    });
    seeded
        .as_object_mut()
        .unwrap()
        .extend(rest.as_object().unwrap().clone());
    seeded
}

/// The password the contract run's accounts sign in with.
const CONTRACT_PASSWORD: &str = "contract run password";

#[tokio::test]
async fn schemathesis_finds_every_operation_true_to_the_document() {
    // Every image model answers (a stand-in for each provider), so /generate-image can succeed.
    // No worker runs: what the fuzzer starts only waits (imports included, whose link is this
    // loopback drive's), so no account limit on jobs waiting is met.
    let providers = FakeProviders::start().await;
    let mut environment = providers.environment();
    environment.push(("DRIVE_MAX_ACTIVE_JOBS".into(), "100000".into()));
    // Every sign-in route is tried many times a minute from one address.
    environment.push(("DRIVE_RATE_SIGN_IN_PER_MINUTE".into(), "100000".into()));
    let environment: Vec<(&str, &str)> = environment
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let app = TestApp::spawn_with(&environment).await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let seed_path = scratch.path("seed.json");
    std::fs::write(&seed_path, seed(&app, &user).await.to_string()).unwrap();
    let calls_path = scratch.path("calls.jsonl");
    let contract = Path::new(env!("CARGO_MANIFEST_DIR")).join("contract");
    let out = Command::new(env("DRIVE_CONTRACT_PYTHON"))
        .args(["-m", "schemathesis.cli"])
        .arg("--config-file")
        .arg(contract.join("schemathesis.toml"))
        .arg("run")
        .arg(format!("{}/openapi.json", app.url))
        .args(["--seed", "1"])
        .env("DRIVE_SESSION", &user.session)
        .env("DRIVE_APP", APP_ID)
        .env("DRIVE_API_TOKEN", &user.api_token)
        .env("PYTHONPATH", &contract)
        .env("SCHEMATHESIS_HOOKS", "hooks")
        .env("DRIVE_CONTRACT_SEED", &seed_path)
        .env("DRIVE_CONTRACT_CALLS", &calls_path)
        .env("NO_COLOR", "1")
        .output()
        .expect("run schemathesis");
    let report = String::from_utf8_lossy(&out.stdout);
    println!("{report}\n{}", String::from_utf8_lossy(&out.stderr));

    // By operation, how many calls answered each status.
    let mut reached: BTreeMap<String, BTreeMap<u16, usize>> = BTreeMap::new();
    let calls = std::fs::read_to_string(&calls_path).unwrap_or_default();
    for line in calls.lines() {
        let call: Value = serde_json::from_str(line).unwrap();
        *reached
            .entry(call["operation"].as_str().unwrap().to_string())
            .or_default()
            .entry(call["status"].as_u64().unwrap() as u16)
            .or_default() += 1;
    }
    let past_validation: Vec<&String> = reached
        .iter()
        .filter(|(_, statuses)| statuses.keys().any(|s| (200..400).contains(s)))
        .map(|(op, _)| op)
        .collect();
    println!(
        "{} calls; {} of {} operations answered 2xx or 3xx",
        calls.lines().count(),
        past_validation.len(),
        reached.len()
    );
    for (op, statuses) in &reached {
        println!("{op}: {statuses:?}");
    }
    assert!(
        out.status.success() && report.contains(" passed"),
        "schemathesis found failures (above)"
    );
    // Every operation was called, and every one got past validation and the lookups at least
    // once: the seeded ids, tokens, plans and objects reach each route's success.
    assert_eq!(reached.len(), 102, "operations called: {:?}", reached.keys());
    let short: Vec<&String> = reached
        .keys()
        .filter(|op| !past_validation.contains(op))
        .collect();
    assert!(short.is_empty(), "never answered 2xx or 3xx: {short:?}");
}

#[tokio::test]
async fn a_client_generated_from_the_document_calls_three_routes() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let bytes = bytes(3_000, 9);
    let id = app
        .upload(&user, "hello.txt", "Text", "text/plain", bytes.clone())
        .await;
    let scratch = Scratch::new();
    let doc = reqwest::get(format!("{}/openapi.json", app.url))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    std::fs::write(scratch.path("openapi.json"), doc).unwrap();
    let python = env("DRIVE_CONTRACT_PYTHON");
    let generated = Command::new(&python)
        .args([
            "-m",
            "openapi_python_client",
            "generate",
            "--meta",
            "none",
            "--path",
        ])
        .arg(scratch.path("openapi.json"))
        .arg("--output-path")
        .arg(scratch.path("drive_api_client"))
        .output()
        .expect("run openapi-python-client");
    assert!(
        generated.status.success(),
        "generating failed: {}{}",
        String::from_utf8_lossy(&generated.stdout),
        String::from_utf8_lossy(&generated.stderr)
    );
    // It compiles: every module of the package, byte-compiled.
    let compiled = Command::new(&python)
        .args(["-m", "compileall", "-q"])
        .arg(scratch.path("drive_api_client"))
        .status()
        .unwrap();
    assert!(compiled.success(), "the generated client does not compile");

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("contract/call_generated.py");
    let out = Command::new(&python)
        .arg(script)
        .arg(scratch.path(""))
        .args([&app.url, &user.api_token, APP_ID, &id.to_string()])
        .output()
        .expect("run the generated client");
    assert!(
        out.status.success(),
        "the generated client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answered: Value = serde_json::from_slice(&out.stdout).expect("the script's JSON");
    assert_eq!(answered["usage"]["usedBytes"], 3_000, "{answered}");
    assert_eq!(answered["files"][0]["id"], id.to_string(), "{answered}");
    assert_eq!(answered["link"]["id"], id.to_string(), "{answered}");
    let (status, got) = get(answered["link"]["downloadUrl"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    assert_eq!(got, bytes);
}
