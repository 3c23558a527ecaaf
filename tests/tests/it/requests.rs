//! File requests over real HTTP: the owner's routes, the senders' routes the page calls (with
//! real bytes through forms and parts), every row of the state table, the `drop` event, and
//! the extensions (acceptTypes, maxFilesPerSender).

use std::time::Duration;

use drive_tests::senders::{Sender, call};
use drive_tests::*;
use serde_json::{Value, json};

async fn create(app: &TestApp, user: &TestUser, body: Value) -> Value {
    let created = app.call(user, "/create-file-request", Some(body)).await;
    assert_eq!(created.status, 200, "create-file-request: {}", created.body);
    created.body
}

async fn listed(app: &TestApp, user: &TestUser, body: Value) -> Vec<Value> {
    let reply = app.call(user, "/select-file-requests", Some(body)).await;
    assert_eq!(reply.status, 200, "select-file-requests: {}", reply.body);
    reply.body["requests"].as_array().unwrap().clone()
}

async fn one(app: &TestApp, user: &TestUser, id: &Value) -> Value {
    listed(app, user, json!({ "requestIds": [id] })).await.remove(0)
}

fn file_names(request: &Value) -> Vec<String> {
    let mut names: Vec<String> = request["drops"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| d["files"].as_array().unwrap().iter())
        .map(|f| f["fileName"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_sender_without_an_account_sends_files_into_the_requests_folder_and_the_owner_gets_one_drop_event()
{
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let request = create(
        &app,
        &owner,
        json!({ "title": "Tax papers 2026", "message": "Scans of receipts, please.\nThanks!",
                "folder": "/Clients/Acme", "maxBytes": 200_000_000 }),
    )
    .await;
    assert_eq!(request["title"], "Tax papers 2026");
    assert_eq!(request["message"], "Scans of receipts, please.\nThanks!");
    assert_eq!(request["maxBytes"], 200_000_000);
    assert_eq!(request["folder"]["path"], "/Clients/Acme/");
    let id = request["id"].as_str().unwrap();
    assert_eq!(request["url"], format!("{}/requests/{id}", app.url));

    let sender = Sender::start(
        &app,
        id,
        "Ada Lovelace",
        Some("Two files, the big one is the scan."),
    )
    .await;
    let small = bytes(1500, 1);
    // Over 64 MiB: sent in two parts.
    let large = noise(64 * 1024 * 1024 + 4096, 7);
    let added = sender.announce(&app, "receipts.txt", small.len()).await;
    assert_eq!(added.status, 200, "{}", added.body);
    assert!(added.body["form"]["uploadUrl"].is_string(), "{}", added.body);
    sender.send_bytes(&added.body, &small).await;
    // Repeating the record answers the same.
    for _ in 0..2 {
        let finished = sender.finish_file(&app, &added.body["arrivalId"]).await;
        assert_eq!(finished.status, 200, "{}", finished.body);
        assert_eq!(finished.body["fileName"], "receipts.txt");
    }
    let added = sender.announce(&app, "scan.bin", large.len()).await;
    assert_eq!(added.status, 200, "{}", added.body);
    assert_eq!(added.body["parts"]["partCount"], 2, "{}", added.body);
    sender.send_bytes(&added.body, &large).await;
    let finished = sender.finish_file(&app, &added.body["arrivalId"]).await;
    assert_eq!(finished.status, 200, "{}", finished.body);

    // Recorded as the owner's files in the request's folder, whole.
    let folder = app
        .call(
            &owner,
            "/search-files",
            Some(json!({ "folder": "/Clients/Acme" })),
        )
        .await;
    assert_eq!(folder.status, 200, "{}", folder.body);
    let files = folder.body["files"].as_array().unwrap();
    assert_eq!(files.len(), 2, "{}", folder.body);
    for file in files {
        let id = file["id"].as_str().unwrap();
        let expected = if file["fileName"] == "scan.bin" {
            &large
        } else {
            &small
        };
        assert!(
            app.download(&owner, id).await == *expected,
            "{} differs",
            file["fileName"]
        );
    }

    // Nothing is announced before the sender says it is done; then one drop event.
    let finished = sender.finish(&app).await;
    assert_eq!(finished.status, 200, "{}", finished.body);
    assert_eq!(finished.body["files"], 2);
    let again = sender.finish(&app).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.body["finishTime"], finished.body["finishTime"]);
    let events = app
        .wait_events(
            &owner,
            json!({ "since": "2000-01-01T00:00:00Z", "kinds": ["drop"], "requestId": id }),
            1,
        )
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let all = app
        .wait_events(
            &owner,
            json!({ "since": "2000-01-01T00:00:00Z", "kinds": ["drop", "file"] }),
            1,
        )
        .await;
    assert_eq!(all.len(), 1, "one drop event and no file events: {all:?}");
    let event = &events[0];
    assert_eq!(event["kind"], "drop");
    assert_eq!(event["sender"]["name"], "Ada Lovelace");
    assert_eq!(event["note"], "Two files, the big one is the scan.");
    assert_eq!(event["request"]["id"], id);
    assert_eq!(event["request"]["title"], "Tax papers 2026");
    let mut sent: Vec<&str> = event["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["fileName"].as_str().unwrap())
        .collect();
    sent.sort();
    assert_eq!(sent, ["receipts.txt", "scan.bin"]);

    // The listing: one drop, its files, the bytes received; viewed once listed.
    let listed_once = one(&app, &owner, &request["id"]).await;
    assert_eq!(listed_once["open"], true);
    assert_eq!(listed_once["receivedBytes"], (small.len() + large.len()) as u64);
    let drop = &listed_once["drops"][0];
    assert_eq!(listed_once["drops"].as_array().unwrap().len(), 1);
    assert_eq!(drop["id"], sender.drop_id.as_str());
    assert_eq!(drop["senderName"], "Ada Lovelace");
    assert!(
        drop["finishTime"].is_string() && drop["arrivedTime"].is_string(),
        "{drop}"
    );
    assert_eq!(drop["viewed"], false);
    assert_eq!(file_names(&listed_once), ["receipts.txt", "scan.bin"]);
    let large_entry = drop["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["fileName"] == "scan.bin")
        .unwrap();
    assert_eq!(large_entry["fileSize"], large.len() as u64);
    assert_eq!(large_entry["type"], "Other");
    assert_eq!(large_entry["mimeType"], "application/octet-stream");
    assert_eq!(
        one(&app, &owner, &request["id"]).await["drops"][0]["viewed"],
        true
    );

    // A finished drop takes nothing more.
    sender
        .announce(&app, "late.txt", 10)
        .await
        .assert_bad_field("drop_finished", "token");
}

#[tokio::test]
async fn the_page_shows_the_request_escaped_and_says_when_it_is_closed() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let request = create(
        &app,
        &owner,
        json!({ "title": "<script>alert(1)</script> & photos", "message": "Send \"them\" <b>all</b>" }),
    )
    .await;
    // With no folder given, a new folder at the top is named for the request.
    assert_eq!(request["folder"]["path"], "/<script>alert(1)<-script> & photos/");
    let url = request["url"].as_str().unwrap();
    let page = reqwest::get(url).await.unwrap();
    assert_eq!(page.status(), 200);
    let policy = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        policy.contains("script-src 'self'") && policy.contains("default-src 'none'"),
        "{policy}"
    );
    assert_eq!(page.headers()["x-content-type-options"], "nosniff");
    let html = page.text().await.unwrap();
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; photos"),
        "{html}"
    );
    assert!(
        html.contains("Send &quot;them&quot; &lt;b&gt;all&lt;/b&gt;"),
        "{html}"
    );
    assert!(!html.contains("<script>alert"), "{html}");
    assert!(
        html.contains(r#"id="send""#) && html.contains("/pages/request.js"),
        "{html}"
    );
    let (status, script) = get(&format!("{}/pages/request.js", app.url)).await;
    assert_eq!(status, 200);
    assert!(String::from_utf8(script).unwrap().contains("/add-request-file"));

    let closed = app
        .call(
            &owner,
            "/set-file-request-open",
            Some(json!({ "requestId": request["id"], "open": false })),
        )
        .await;
    assert_eq!(closed.status, 200, "{}", closed.body);
    let html = reqwest::get(url).await.unwrap().text().await.unwrap();
    assert!(html.contains("This request is closed"), "{html}");
    assert!(!html.contains(r#"id="send""#), "{html}");

    for nowhere in [
        format!("{}/requests/{}", app.url, uuid::Uuid::new_v4()),
        format!("{}/requests/nope", app.url),
    ] {
        let page = reqwest::get(&nowhere).await.unwrap();
        assert_eq!(page.status(), 404);
        assert!(
            page.text()
                .await
                .unwrap()
                .contains("There is no file request at this link.")
        );
    }
}

#[tokio::test]
async fn every_row_of_the_state_table_and_a_request_reopened_past_its_expiry_stays_closed() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let expire = chrono::Utc::now() + chrono::TimeDelta::seconds(3);
    let request = create(
        &app,
        &owner,
        json!({ "title": "Soon over", "expireTime": expire }),
    )
    .await;
    let id = request["id"].clone();
    let set = |open: bool| {
        let app = &app;
        let owner = &owner;
        let id = id.clone();
        async move {
            let reply = app
                .call(
                    owner,
                    "/set-file-request-open",
                    Some(json!({ "requestId": id, "open": open })),
                )
                .await;
            assert_eq!(reply.status, 200, "{}", reply.body);
            reply.body
        }
    };
    // open → closed, closeTime set.
    let closed = set(false).await;
    assert_eq!(closed["open"], false);
    assert!(closed["closeTime"].is_string(), "{closed}");
    let sender_refused = call(
        &app,
        "/start-request-drop",
        json!({ "requestId": id, "senderName": "Bo" }),
    )
    .await;
    sender_refused.assert_error(403, "request_closed");
    // closed → open before expireTime.
    let reopened = set(true).await;
    assert_eq!(reopened["open"], true);
    assert!(reopened["closeTime"].is_null(), "{reopened}");
    let sender = Sender::start(&app, id.as_str().unwrap(), "Bo", None).await;
    // open → time: past expireTime it reads open false and takes nothing.
    tokio::time::sleep(Duration::from_millis(3200)).await;
    assert_eq!(one(&app, &owner, &id).await["open"], false);
    sender
        .announce(&app, "a.txt", 5)
        .await
        .assert_error(403, "request_closed");
    call(
        &app,
        "/start-request-drop",
        json!({ "requestId": id, "senderName": "Cy" }),
    )
    .await
    .assert_error(403, "request_closed");
    let html = reqwest::get(request["url"].as_str().unwrap())
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains("This request stopped taking files."), "{html}");
    // closed → open past expireTime: stays closed.
    let closed = set(false).await;
    assert_eq!(closed["open"], false);
    let close_time = closed["closeTime"].clone();
    let still = set(true).await;
    assert_eq!(still["open"], false, "{still}");
    assert_eq!(still["closeTime"], close_time);
    assert_eq!(still["expireTime"], request["expireTime"]);
    call(
        &app,
        "/start-request-drop",
        json!({ "requestId": id, "senderName": "Cy" }),
    )
    .await
    .assert_error(403, "request_closed");
}

#[tokio::test]
async fn two_senders_racing_never_take_a_request_past_its_max_bytes() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let request = create(
        &app,
        &owner,
        json!({ "title": "Ten thousand bytes", "maxBytes": 10_000 }),
    )
    .await;
    let id = request["id"].as_str().unwrap();
    let senders = [
        Sender::start(&app, id, "First", None).await,
        Sender::start(&app, id, "Second", None).await,
    ];
    // Each announces eight files of 1,000 bytes, all sixteen at once: ten fit.
    let announcements = futures::future::join_all(
        senders
            .iter()
            .flat_map(|s| (0..8).map(move |n| (s, format!("{n}.bin"))))
            .map(|(s, name)| {
                let app = &app;
                async move { (s, s.announce(app, &name, 1000).await) }
            }),
    )
    .await;
    let mut accepted = Vec::new();
    for (sender, reply) in announcements {
        if reply.status == 200 {
            accepted.push((sender, reply.body));
        } else {
            reply.assert_bad_field("request_full", "fileSize");
        }
    }
    assert_eq!(accepted.len(), 10, "exactly the room there was");
    for (sender, added) in &accepted {
        sender.send_bytes(added, &bytes(1000, 3)).await;
        let finished = sender.finish_file(&app, &added["arrivalId"]).await;
        assert_eq!(finished.status, 200, "{}", finished.body);
    }
    let listed = one(&app, &owner, &request["id"]).await;
    assert_eq!(listed["receivedBytes"], 10_000);
    senders[0]
        .announce(&app, "more.bin", 1)
        .await
        .assert_bad_field("request_full", "fileSize");

    // A file deleted for good frees its room.
    let file = listed["drops"][0]["files"][0]["id"].clone();
    let deleted = app
        .call(&owner, "/delete-files", Some(json!([{ "id": file }])))
        .await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    assert_eq!(one(&app, &owner, &request["id"]).await["receivedBytes"], 9_000);
    let added = senders[1].announce(&app, "again.bin", 1000).await;
    assert_eq!(added.status, 200, "{}", added.body);
}

#[tokio::test]
async fn the_folder_filter_and_drops_list_only_files_still_there() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let inbox = create(&app, &owner, json!({ "title": "Inbox", "folder": "/Work/Inbox" })).await;
    let photos = create(&app, &owner, json!({ "title": "Photos", "folder": "/Photos" })).await;
    let first = Sender::start(&app, inbox["id"].as_str().unwrap(), "Ann", None).await;
    for name in ["a.txt", "b.txt", "c.txt", "d.txt"] {
        first.send(&app, name, &bytes(100, 1)).await;
    }
    let second = Sender::start(&app, photos["id"].as_str().unwrap(), "Ben", None).await;
    second.send(&app, "p.txt", &bytes(100, 2)).await;
    // A sender who announced a file but sent nothing is not listed.
    let idle = Sender::start(&app, photos["id"].as_str().unwrap(), "Idle", None).await;
    assert_eq!(idle.announce(&app, "never.txt", 100).await.status, 200);

    // Newest first.
    let all = listed(&app, &owner, json!({})).await;
    assert_eq!(
        all.iter()
            .map(|r| r["title"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["Photos", "Inbox"]
    );
    assert_eq!(all[0]["drops"].as_array().unwrap().len(), 1, "{}", all[0]);
    let under_work = listed(&app, &owner, json!({ "folder": "/Work" })).await;
    assert_eq!(under_work.len(), 1);
    assert_eq!(under_work[0]["id"], inbox["id"]);
    assert_eq!(
        listed(&app, &owner, json!({ "folder": "/Elsewhere" }))
            .await
            .len(),
        0
    );

    // Trash one, delete one, move one out of the folder.
    let ids: Vec<(String, Value)> = one(&app, &owner, &inbox["id"]).await["drops"][0]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["fileName"].as_str().unwrap().to_string(), f["id"].clone()))
        .collect();
    let id_of = |name: &str| ids.iter().find(|(n, _)| n == name).unwrap().1.clone();
    let trashed = app
        .call(&owner, "/trash-files", Some(json!([{ "id": id_of("a.txt") }])))
        .await;
    assert_eq!(trashed.status, 200, "{}", trashed.body);
    let deleted = app
        .call(&owner, "/delete-files", Some(json!([{ "id": id_of("b.txt") }])))
        .await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    let moved = app
        .call(
            &owner,
            "/move-files",
            Some(json!({ "fileIds": [id_of("c.txt")], "folder": "/Elsewhere" })),
        )
        .await;
    assert_eq!(moved.status, 200, "{}", moved.body);

    let whole = one(&app, &owner, &inbox["id"]).await;
    assert_eq!(file_names(&whole), ["c.txt", "d.txt"]);
    assert_eq!(whole["receivedBytes"], 200);
    let within = listed(&app, &owner, json!({ "folder": "/Work/Inbox/" })).await;
    assert_eq!(file_names(&within[0]), ["d.txt"]);
    assert_eq!(within[0]["receivedBytes"], 100);

    // Restored from the trash, it is there again.
    let restored = app
        .call(&owner, "/restore-files", Some(json!([{ "id": id_of("a.txt") }])))
        .await;
    assert_eq!(restored.status, 200, "{}", restored.body);
    assert_eq!(
        file_names(&one(&app, &owner, &inbox["id"]).await),
        ["a.txt", "c.txt", "d.txt"]
    );
}

#[tokio::test]
async fn accept_types_and_files_per_sender_are_kept_by_the_routes() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let request = create(
        &app,
        &owner,
        json!({ "title": "Designs", "acceptTypes": [".PDF", "image", ".pdf"], "maxFilesPerSender": 2 }),
    )
    .await;
    assert_eq!(request["acceptTypes"], json!([".pdf", "Image"]));
    assert_eq!(request["maxFilesPerSender"], 2);
    let id = request["id"].as_str().unwrap();
    let sender = Sender::start(&app, id, "Dee", None).await;
    let refused = sender.announce(&app, "notes.txt", 10).await;
    refused.assert_bad_field("type_not_accepted", "fileName");
    assert!(
        refused.body["error"].as_str().unwrap().contains(".pdf, Image"),
        "{}",
        refused.body
    );
    sender.send(&app, "plan.pdf", b"%PDF-1.4 not really").await;
    sender.send(&app, "photo.JPG", &bytes(300, 4)).await;
    sender
        .announce(&app, "third.png", 10)
        .await
        .assert_bad_field("too_many_files", "fileName");
    // A new visit may send again.
    let next = Sender::start(&app, id, "Dee", None).await;
    next.send(&app, "third.png", &bytes(10, 5)).await;
    let page = reqwest::get(request["url"].as_str().unwrap())
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains(r#"accept=".pdf,image/*""#), "{page}");
}

#[tokio::test]
async fn a_large_file_sent_in_parts_resumes_where_it_stopped() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let request = create(&app, &owner, json!({ "title": "Footage" })).await;
    let sender = Sender::start(&app, request["id"].as_str().unwrap(), "Eve", None).await;
    let large = noise(64 * 1024 * 1024 + 10, 9);
    let added = sender.announce(&app, "take1.mov", large.len()).await;
    assert_eq!(added.status, 200, "{}", added.body);
    let first = &added.body["parts"]["signedParts"][0];
    assert_eq!(first["partNumber"], 1);
    assert!(
        put(first["url"].as_str().unwrap(), large[..64 * 1024 * 1024].to_vec())
            .await
            .is_success()
    );
    // Recording before every part is there is refused, and says which are missing.
    sender
        .finish_file(&app, &added.body["arrivalId"])
        .await
        .assert_error(409, "parts_missing");

    // The page opened again announces the same file: the part sent is kept.
    let again = sender.announce(&app, "take1.mov", large.len()).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.body["arrivalId"], added.body["arrivalId"]);
    assert_eq!(again.body["parts"]["resumed"], true);
    assert_eq!(
        again.body["parts"]["stored"],
        json!([{ "partNumber": 1, "size": 64 * 1024 * 1024 }])
    );
    let signed = call(
        &app,
        "/sign-request-parts",
        json!({ "token": sender.token, "arrivalId": added.body["arrivalId"], "partNumbers": [2] }),
    )
    .await;
    assert_eq!(signed.status, 200, "{}", signed.body);
    assert_eq!(signed.body["parts"][0]["size"], 10);
    assert!(
        put(
            signed.body["parts"][0]["url"].as_str().unwrap(),
            large[64 * 1024 * 1024..].to_vec()
        )
        .await
        .is_success()
    );
    let finished = sender.finish_file(&app, &added.body["arrivalId"]).await;
    assert_eq!(finished.status, 200, "{}", finished.body);
    let file = &one(&app, &owner, &request["id"]).await["drops"][0]["files"][0];
    assert_eq!(file["type"], "Video");
    assert!(app.download(&owner, file["id"].as_str().unwrap()).await == large);
}

#[tokio::test]
async fn bad_input_is_a_400_naming_the_field() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let bad = [
        (json!({}), "missing_field", "title"),
        (json!({ "title": "  " }), "invalid_field", "title"),
        (json!({ "title": "x".repeat(201) }), "invalid_field", "title"),
        (
            json!({ "title": "ok", "message": "m".repeat(2001) }),
            "invalid_field",
            "message",
        ),
        (
            json!({ "title": "ok", "maxBytes": 0 }),
            "invalid_field",
            "maxBytes",
        ),
        (
            json!({ "title": "ok", "expireTime": "2001-01-01T00:00:00Z" }),
            "invalid_field",
            "expireTime",
        ),
        (
            json!({ "title": "ok", "expireTime": "soon" }),
            "invalid_field",
            "expireTime",
        ),
        (
            json!({ "title": "ok", "folder": "no-slash" }),
            "invalid_field",
            "folder",
        ),
        (json!({ "title": "ok", "folder": "/" }), "invalid_field", "folder"),
        (
            json!({ "title": "ok", "folder": "/a", "folderId": uuid::Uuid::new_v4() }),
            "invalid_field",
            "folderId",
        ),
        (
            json!({ "title": "ok", "acceptTypes": [] }),
            "invalid_field",
            "acceptTypes",
        ),
        (
            json!({ "title": "ok", "acceptTypes": ["movies"] }),
            "invalid_field",
            "acceptTypes",
        ),
        (
            json!({ "title": "ok", "acceptTypes": [".p/f"] }),
            "invalid_field",
            "acceptTypes",
        ),
        (
            json!({ "title": "ok", "maxFilesPerSender": 0 }),
            "invalid_field",
            "maxFilesPerSender",
        ),
        (json!({ "title": "a\u{202e}b" }), "invalid_field", "title"),
    ];
    for (body, code, field) in bad {
        let reply = app.call(&owner, "/create-file-request", Some(body.clone())).await;
        assert_eq!(reply.status, 400, "{body}: {}", reply.body);
        assert_eq!(
            (
                reply.body["code"].as_str().unwrap(),
                reply.body["field"].as_str().unwrap()
            ),
            (code, field),
            "{body}: {}",
            reply.body
        );
    }
    let ids: Vec<String> = (0..51).map(|_| uuid::Uuid::new_v4().to_string()).collect();
    app.call(
        &owner,
        "/select-file-requests",
        Some(json!({ "requestIds": ids })),
    )
    .await
    .assert_bad_field("invalid_field", "requestIds");
    app.call(
        &owner,
        "/set-file-request-open",
        Some(json!({ "requestId": uuid::Uuid::new_v4() })),
    )
    .await
    .assert_bad_field("missing_field", "open");

    let request = create(&app, &owner, json!({ "title": "Open" })).await;
    let id = request["id"].as_str().unwrap();
    for (body, field) in [
        (json!({ "requestId": id, "senderName": "" }), "senderName"),
        (
            json!({ "requestId": id, "senderName": "n".repeat(101) }),
            "senderName",
        ),
        (
            json!({ "requestId": id, "senderName": "Al", "note": "n".repeat(2001) }),
            "note",
        ),
        (json!({ "requestId": "x", "senderName": "Al" }), "requestId"),
    ] {
        let reply = call(&app, "/start-request-drop", body.clone()).await;
        assert_eq!(reply.status, 400, "{body}: {}", reply.body);
        assert_eq!(reply.body["field"], field, "{body}: {}", reply.body);
    }
    call(
        &app,
        "/start-request-drop",
        json!({ "requestId": uuid::Uuid::new_v4(), "senderName": "Al" }),
    )
    .await
    .assert_error(404, "request_not_found");
    let sender = Sender::start(&app, id, "Al", None).await;
    for (body, field) in [
        (
            json!({ "token": "forged", "fileName": "a.txt", "fileSize": 1 }),
            "token",
        ),
        (
            json!({ "token": sender.token, "fileName": "../a.txt", "fileSize": 1 }),
            "fileName",
        ),
        (
            json!({ "token": sender.token, "fileName": "a.txt", "fileSize": -1 }),
            "fileSize",
        ),
    ] {
        let reply = call(&app, "/add-request-file", body.clone()).await;
        assert_eq!(reply.status, 400, "{body}: {}", reply.body);
        assert_eq!(reply.body["field"], field, "{body}: {}", reply.body);
    }
    call(
        &app,
        "/finish-request-file",
        json!({ "token": sender.token, "arrivalId": uuid::Uuid::new_v4() }),
    )
    .await
    .assert_error(404, "arrival_not_found");
    // Recording a file whose bytes never came.
    let added = sender.announce(&app, "a.txt", 5).await;
    sender
        .finish_file(&app, &added.body["arrivalId"])
        .await
        .assert_bad_field("object_not_found", "objectKey");
}

#[tokio::test]
async fn another_users_requests_behave_as_if_they_do_not_exist() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let other = app.user(Some("Pro")).await;
    let request = create(&app, &owner, json!({ "title": "Mine", "folder": "/Mine" })).await;
    let sender = Sender::start(&app, request["id"].as_str().unwrap(), "Fay", None).await;
    sender.send(&app, "f.txt", &bytes(10, 1)).await;

    assert!(
        listed(&app, &other, json!({ "requestIds": [request["id"]] }))
            .await
            .is_empty()
    );
    assert!(listed(&app, &other, json!({})).await.is_empty());
    app.call(
        &other,
        "/set-file-request-open",
        Some(json!({ "requestId": request["id"], "open": false })),
    )
    .await
    .assert_error(404, "request_not_found");
    app.call(
        &other,
        "/set-file-request-open",
        Some(json!({ "requestId": uuid::Uuid::new_v4(), "open": false })),
    )
    .await
    .assert_error(404, "request_not_found");
    app.call(
        &other,
        "/create-file-request",
        Some(json!({ "title": "Theirs", "folderId": request["folder"]["id"] })),
    )
    .await
    .assert_error(404, "folder_not_found");
    assert!(
        app.wait_events(
            &other,
            json!({ "since": "2000-01-01T00:00:00Z", "kinds": ["drop"] }),
            0
        )
        .await
        .is_empty()
    );
    // Still open for its senders.
    assert_eq!(one(&app, &owner, &request["id"]).await["open"], true);
}

#[tokio::test]
async fn the_sweep_finishes_a_drop_its_sender_left_and_writes_its_one_drop_event() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let request = create(&app, &owner, json!({ "title": "Left open" })).await;
    let sender = Sender::start(&app, request["id"].as_str().unwrap(), "Gus", Some("bye")).await;
    sender.send(&app, "only.txt", &bytes(10, 1)).await;
    // Recent: left alone.
    assert!(app.admin(&["sweep"]).contains("finished 0 idle drops"));
    // An hour and more since its last file arrived, with nothing under way: finished.
    sqlx::query("update files set created_at = now() - interval '2 hours' where user_id = $1")
        .bind(owner.id)
        .execute(&mut app.db().await)
        .await
        .unwrap();
    let out = app.admin(&["sweep"]);
    assert!(out.contains("finished 1 idle drops"), "{out}");
    assert!(app.admin(&["sweep"]).contains("finished 0 idle drops"));
    let events = app
        .wait_events(
            &owner,
            json!({ "since": "2000-01-01T00:00:00Z", "kinds": ["drop"] }),
            1,
        )
        .await;
    assert_eq!(events[0]["sender"]["name"], "Gus");
    assert_eq!(events[0]["note"], "bye");
    assert_eq!(events[0]["files"][0]["fileName"], "only.txt");
    let listed = one(&app, &owner, &request["id"]).await;
    let finish_time = listed["drops"][0]["finishTime"].clone();
    assert!(finish_time.is_string(), "{listed}");
    // The sender saying so afterwards changes nothing.
    let finished = sender.finish(&app).await;
    assert_eq!(finished.status, 200, "{}", finished.body);
    assert_eq!(finished.body["finishTime"], finish_time);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let events = app
        .wait_events(
            &owner,
            json!({ "since": "2000-01-01T00:00:00Z", "kinds": ["drop"] }),
            1,
        )
        .await;
    assert_eq!(events.len(), 1);
}

#[tokio::test]
async fn on_arrival_runs_a_job_on_each_file_a_request_takes_under_the_owners_minutes() {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let owner = app.user(Some("Pro")).await;
    let request = create(
        &app,
        &owner,
        json!({ "title": "Checked", "onArrival": { "jobType": "checksum", "options": { "algorithm": "sha256" } } }),
    )
    .await;
    assert_eq!(
        request["onArrival"],
        json!({ "jobType": "checksum", "options": { "algorithm": "sha256" } })
    );
    let sender = Sender::start(&app, request["id"].as_str().unwrap(), "Hal", None).await;
    let sent = bytes(5000, 7);
    sender.send(&app, "data.bin", &sent).await;
    let listed = one(&app, &owner, &request["id"]).await;
    let file = &listed["drops"][0]["files"][0];
    let job = app.wait_job(&owner, &file["jobId"]).await;
    assert_done(&job);
    assert_eq!(job["jobType"], "checksum");
    let digest = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&sent));
    assert_eq!(job["result"]["checksums"][0]["digest"], digest, "{job}");
    assert_eq!(job["result"]["checksums"][0]["fileId"], file["id"]);

    // A type that does not take the file starts nothing.
    let pictures = create(
        &app,
        &owner,
        json!({ "title": "Pictures", "onArrival": { "jobType": "convert", "options": { "format": "jpg" } } }),
    )
    .await;
    let sender = Sender::start(&app, pictures["id"].as_str().unwrap(), "Ivy", None).await;
    sender.send(&app, "notes.txt", b"not a picture").await;
    let listed = one(&app, &owner, &pictures["id"]).await;
    assert!(listed["drops"][0]["files"][0].get("jobId").is_none(), "{listed}");

    for on_arrival in [
        json!({ "jobType": "join" }),
        json!({ "jobType": "readMetadata" }),
        json!({ "jobType": "checksum", "options": { "algorithm": "crc" } }),
    ] {
        app.call(
            &owner,
            "/create-file-request",
            Some(json!({ "title": "x", "onArrival": on_arrival })),
        )
        .await
        .assert_bad_field("invalid_field", "onArrival");
    }
    let unknown = app
        .call(
            &owner,
            "/create-file-request",
            Some(json!({ "title": "x", "onArrival": { "jobType": "nope" } })),
        )
        .await;
    assert_eq!(unknown.status, 400, "{}", unknown.body);
    assert!(
        unknown.body["field"].as_str().unwrap().starts_with("onArrival"),
        "{}",
        unknown.body
    );
}

/// What anonymous senders can hold of the owner's storage is bounded and given back: files
/// announced and not sent hold at most `DRIVE_REQUEST_PENDING_BYTES` (and 100 files) of a
/// request without `maxBytes`, a file sent in parts holds its room a day after its last part
/// URLs, not a week, closing the request gives the room back at once, and a refusal never tells
/// a sender how much room the owner has.
#[tokio::test]
async fn anonymous_senders_hold_little_for_long_and_closing_the_request_gives_it_back() {
    let app = TestApp::spawn_with(&[
        ("DRIVE_QUOTA_PRO_BYTES", "200000000"),
        ("DRIVE_REQUEST_PENDING_BYTES", "100000000"),
    ])
    .await;
    let owner = app.user(Some("Pro")).await;
    let request = create(&app, &owner, json!({ "title": "No maxBytes" })).await;
    let id = request["id"].as_str().unwrap();
    let sender = Sender::start(&app, id, "Anonymous", None).await;
    // 70 MB in parts (above the form's 64 MiB), announced and never sent.
    let held = sender.announce(&app, "big.bin", 70_000_000).await;
    assert_eq!(held.status, 200, "{}", held.body);
    assert!(held.body["parts"].is_object(), "{}", held.body);
    let until: chrono::DateTime<chrono::Utc> =
        sqlx::query_scalar("select expires_at from upload_reservations where request_id = $1")
            .bind(uuid::Uuid::parse_str(id).unwrap())
            .fetch_one(&mut app.db().await)
            .await
            .unwrap();
    assert!(
        until < chrono::Utc::now() + chrono::TimeDelta::hours(26),
        "an announcement holds the owner's room until {until}"
    );
    // 40 MB more would pass what senders may hold unsent, though the owner has room for it.
    let refused = sender.announce(&app, "more.bin", 40_000_000).await;
    refused.assert_bad_field("request_full", "fileSize");
    // Past the owner's free space, the refusal is the same, word for word: no numbers.
    let over = sender.announce(&app, "huge.bin", 150_000_000).await;
    over.assert_bad_field("request_full", "fileSize");
    assert_eq!(over.body, refused.body);
    assert!(
        !over.body["error"]
            .as_str()
            .unwrap()
            .chars()
            .any(|c| c.is_ascii_digit()),
        "{}",
        over.body
    );

    // The owner cannot upload 150 MB while the sender holds 70; closing the request frees it.
    let upload = |size: i64| json!({ "type": "Other", "fileName": "mine.bin", "fileSize": size, "objectKey": owner.key("mine.bin") });
    app.call(&owner, "/create-multipart-upload", Some(upload(150_000_000)))
        .await
        .assert_bad_field("storage_limit_reached", "fileSize");
    let closed = app
        .call(
            &owner,
            "/set-file-request-open",
            Some(json!({ "requestId": id, "open": false })),
        )
        .await;
    assert_eq!(closed.status, 200, "{}", closed.body);
    let mine = app
        .call(&owner, "/create-multipart-upload", Some(upload(150_000_000)))
        .await;
    assert_eq!(
        mine.status, 200,
        "closing the request gave nothing back: {}",
        mine.body
    );

    // A hundred files announced and not sent are the most a request's senders may hold.
    let request = create(&app, &owner, json!({ "title": "Many small" })).await;
    let sender = Sender::start(&app, request["id"].as_str().unwrap(), "Many", None).await;
    for n in 0..100 {
        let added = sender.announce(&app, &format!("{n}.txt"), 10).await;
        assert_eq!(added.status, 200, "{}", added.body);
    }
    sender
        .announce(&app, "one-more.txt", 10)
        .await
        .assert_bad_field("request_full", "fileSize");
}

/// A request's `onArrival` job works within the request's `maxBytes`: an archive an anonymous
/// sender drops, unzipped on arrival, makes no more than the room the request has left (here the
/// unzip sees at once that it would not fit, and makes nothing), and what such a job makes counts
/// against later senders.
#[tokio::test]
async fn an_on_arrival_unzip_makes_no_more_than_the_requests_max_bytes() {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let owner = app.user(Some("Pro")).await;
    let request = create(
        &app,
        &owner,
        json!({ "title": "Archives", "maxBytes": 30_000, "onArrival": { "jobType": "unzip" } }),
    )
    .await;
    let id = request["id"].as_str().unwrap();
    let unzipped = |name: &str, entries: u8| {
        let app = &app;
        let owner = &owner;
        let request = &request;
        let name = name.to_string();
        async move {
            let zipped = zip_of_zeros(entries);
            let sender = Sender::start(app, request["id"].as_str().unwrap(), &name, None).await;
            sender.send(app, &format!("{name}.zip"), &zipped).await;
            let listed = one(app, owner, &request["id"]).await;
            let drop = listed["drops"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["senderName"] == name.as_str())
                .cloned()
                .unwrap_or_else(|| panic!("no drop of {name}: {listed}"));
            (
                zipped.len(),
                app.wait_job(owner, &drop["files"][0]["jobId"]).await,
            )
        }
    };
    // Ten entries of 5,000 bytes that deflate to almost nothing: 50,000 bytes once unzipped.
    let (first, job) = unzipped("bomb", 10).await;
    assert_eq!(job["state"], "failed", "{job}");
    assert_eq!(job["files"], json!([]), "{job}");
    // Three entries fit (15,000 bytes), and count against the request from then on.
    let (second, job) = unzipped("fits", 3).await;
    assert_eq!(job["state"], "done", "{job}");
    let room = 30_000 - first - second - 15_000;
    let later = Sender::start(&app, id, "Later", None).await;
    later
        .announce(&app, "more.bin", room + 1)
        .await
        .assert_bad_field("request_full", "fileSize");
    let fits = later.announce(&app, "less.bin", room).await;
    assert_eq!(fits.status, 200, "{}", fits.body);
}

/// A zip of `entries` entries of 5,000 equal bytes each, deflated.
fn zip_of_zeros(entries: u8) -> Vec<u8> {
    use std::io::Write;
    let mut zipped = std::io::Cursor::new(Vec::new());
    let mut writer = zip::ZipWriter::new(&mut zipped);
    for n in 0..entries {
        writer
            .start_file(format!("{n}.bin"), zip::write::SimpleFileOptions::default())
            .unwrap();
        writer.write_all(&[n; 5000]).unwrap();
    }
    writer.finish().unwrap();
    zipped.into_inner()
}
