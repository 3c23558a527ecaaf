//! Reviews over real HTTP: the owner's routes, the two routes the review page calls with no
//! account, the edit list, `note` events, and isolation.

use drive_tests::media::ffmpeg;
use drive_tests::senders::call;
use drive_tests::*;
use serde_json::{Value, json};

/// A 3-second WebM (VP8) a browser plays.
pub fn webm() -> Vec<u8> {
    ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            "testsrc=size=320x240:rate=25:duration=3",
            "-c:v",
            "libvpx",
            "-b:v",
            "300k",
        ],
        "webm",
    )
}

async fn create(app: &TestApp, user: &TestUser, body: Value) -> Value {
    let made = app.call(user, "/create-file-review", Some(body)).await;
    assert_eq!(made.status, 200, "create-file-review: {}", made.body);
    made.body
}

async fn note(app: &TestApp, body: Value) -> Value {
    let left = call(app, "/add-review-note", body).await;
    assert_eq!(left.status, 200, "add-review-note: {}", left.body);
    left.body
}

async fn reviews(app: &TestApp, user: &TestUser, body: Value) -> Vec<Value> {
    let listed = app.call(user, "/select-file-reviews", Some(body)).await;
    assert_eq!(listed.status, 200, "select-file-reviews: {}", listed.body);
    listed.body["reviews"].as_array().unwrap().clone()
}

#[tokio::test]
async fn reviewers_leave_notes_and_replies_the_owner_answers_resolves_and_gets_note_events() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let video = app
        .upload(&owner, "cut-3.webm", "Video", "video/webm", webm())
        .await;
    let review = create(
        &app,
        &owner,
        json!({ "fileId": video, "title": "Cut 3, first pass" }),
    )
    .await;
    let id = review["id"].as_str().unwrap();
    assert_eq!(review["url"], format!("{}/reviews/{id}", app.url));
    assert_eq!(review["file"]["fileName"], "cut-3.webm");
    assert_eq!(review["notes"], json!([]));

    // The page opens it: a link that plays the file, and the notes so far.
    let opened = call(&app, "/open-review", json!({ "reviewId": id })).await;
    assert_eq!(opened.status, 200, "{}", opened.body);
    assert_eq!(opened.body["type"], "Video");
    let (status, played) = get(opened.body["mediaUrl"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    assert_eq!(played.len(), app.download(&owner, &video.to_string()).await.len());

    let late = note(
        &app,
        json!({ "reviewId": id, "reviewerName": "Kim", "text": "Cut earlier here.", "seconds": 2.25 }),
    )
    .await;
    let early = note(
        &app,
        json!({ "reviewId": id, "reviewerName": "Lou", "text": "Logo too small", "seconds": 0.5 }),
    )
    .await;
    assert_eq!(late["timecode"], "00:00:02.250");
    let answered = note(
        &app,
        json!({ "reviewId": id, "reviewerName": "Lou", "text": "Agreed.", "replyTo": late["id"] }),
    )
    .await;
    assert_eq!(answered["id"], late["id"]);
    assert_eq!(answered["replies"][0]["text"], "Agreed.");

    // The owner answers and resolves; the edit list is in the order of the timeline.
    let reply = app
        .call(
            &owner,
            "/reply-to-review-note",
            Some(json!({ "noteId": late["id"], "text": "Done in cut 4." })),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.body["reviewer"],
        json!({ "name": owner.handle, "owner": true })
    );
    for resolved in [true, false, true] {
        let set = app
            .call(
                &owner,
                "/set-review-note-resolved",
                Some(json!({ "noteId": late["id"], "resolved": resolved })),
            )
            .await;
        assert_eq!(set.status, 200, "{}", set.body);
        assert_eq!(set.body["resolved"], resolved);
        assert_eq!(set.body["resolvedTime"].is_string(), resolved);
    }
    let listed = reviews(&app, &owner, json!({})).await;
    assert_eq!(listed.len(), 1);
    let notes = listed[0]["notes"].as_array().unwrap();
    let texts: Vec<&str> = notes.iter().map(|n| n["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["Logo too small", "Cut earlier here."]);
    assert_eq!(notes[1]["resolved"], true);
    assert_eq!(notes[1]["reviewer"], json!({ "name": "Kim", "owner": false }));
    let replies: Vec<&str> = notes[1]["replies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["text"].as_str().unwrap())
        .collect();
    assert_eq!(replies, ["Agreed.", "Done in cut 4."]);
    assert_eq!(notes[0]["id"], early["id"]);
    assert_eq!(reviews(&app, &owner, json!({ "fileId": video })).await.len(), 1);
    assert_eq!(
        reviews(&app, &owner, json!({ "fileId": uuid::Uuid::new_v4() }))
            .await
            .len(),
        0
    );

    // Each reviewer's note and reply is a note event; the owner's own reply is not.
    let events = app
        .wait_events(
            &owner,
            json!({ "since": "2000-01-01T00:00:00Z", "kinds": ["note"], "reviewId": id }),
            3,
        )
        .await;
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(events[0]["reviewer"]["name"], "Kim");
    assert_eq!(events[0]["text"], "Cut earlier here.");
    assert_eq!(events[0]["seconds"], 2.25);
    assert_eq!(events[0]["replyTo"], Value::Null);
    assert_eq!(events[0]["review"]["id"], id);
    assert_eq!(events[0]["file"]["id"], video.to_string());
    assert_eq!(events[2]["replyTo"], late["id"]);
    assert_eq!(events[2]["seconds"], 2.25);
}

#[tokio::test]
async fn bad_input_is_a_400_naming_the_field_and_others_reviews_do_not_exist() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let other = app.user(Some("Pro")).await;
    let video = app.upload(&owner, "v.webm", "Video", "video/webm", webm()).await;
    let text = app
        .upload(&owner, "t.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    app.call(&owner, "/create-file-review", Some(json!({ "fileId": text })))
        .await
        .assert_bad_field("invalid_field", "fileId");
    app.call(
        &owner,
        "/create-file-review",
        Some(json!({ "fileId": video, "title": "" })),
    )
    .await
    .assert_bad_field("invalid_field", "title");
    app.call(&other, "/create-file-review", Some(json!({ "fileId": video })))
        .await
        .assert_error(404, "file_not_found");
    let review = create(&app, &owner, json!({ "fileId": video })).await;
    assert_eq!(review["title"], "v.webm");
    let id = review["id"].clone();
    let first = note(
        &app,
        json!({ "reviewId": id, "reviewerName": "Al", "text": "ok", "seconds": 1 }),
    )
    .await;
    for (body, field) in [
        (
            json!({ "reviewId": id, "reviewerName": "", "text": "x", "seconds": 1 }),
            "reviewerName",
        ),
        (
            json!({ "reviewId": id, "reviewerName": "Al", "text": " ", "seconds": 1 }),
            "text",
        ),
        (
            json!({ "reviewId": id, "reviewerName": "Al", "text": "x".repeat(2001), "seconds": 1 }),
            "text",
        ),
        (
            json!({ "reviewId": id, "reviewerName": "Al", "text": "x" }),
            "seconds",
        ),
        (
            json!({ "reviewId": id, "reviewerName": "Al", "text": "x", "seconds": -1 }),
            "seconds",
        ),
        (
            json!({ "reviewId": id, "reviewerName": "Al", "text": "x", "seconds": 1e9 }),
            "seconds",
        ),
        (
            json!({ "reviewId": id, "reviewerName": "Al", "text": "x", "seconds": 1, "replyTo": first["id"] }),
            "seconds",
        ),
        (
            json!({ "reviewId": "nope", "reviewerName": "Al", "text": "x", "seconds": 1 }),
            "reviewId",
        ),
    ] {
        let reply = call(&app, "/add-review-note", body.clone()).await;
        assert_eq!(reply.status, 400, "{body}: {}", reply.body);
        assert_eq!(reply.body["field"], field, "{body}: {}", reply.body);
    }
    // A reply to a note that is not there: as any id that is not there, 404.
    call(
        &app,
        "/add-review-note",
        json!({ "reviewId": id, "reviewerName": "Al", "text": "x", "replyTo": uuid::Uuid::new_v4() }),
    )
    .await
    .assert_error(404, "note_not_found");
    // A reply to a reply is refused: replies answer notes.
    let answered = note(
        &app,
        json!({ "reviewId": id, "reviewerName": "Bo", "text": "yes", "replyTo": first["id"] }),
    )
    .await;
    let reply_id = answered["replies"][0]["id"].clone();
    call(
        &app,
        "/add-review-note",
        json!({ "reviewId": id, "reviewerName": "Al", "text": "x", "replyTo": reply_id }),
    )
    .await
    .assert_bad_field("invalid_field", "replyTo");

    // Another user's ids behave like ids that do not exist.
    assert!(
        reviews(&app, &other, json!({ "reviewIds": [id] }))
            .await
            .is_empty()
    );
    for route in ["/reply-to-review-note", "/set-review-note-resolved"] {
        for note_id in [first["id"].clone(), json!(uuid::Uuid::new_v4())] {
            let body = json!({ "noteId": note_id, "text": "mine", "resolved": true });
            app.call(&other, route, Some(body))
                .await
                .assert_error(404, "note_not_found");
        }
    }
    app.call(
        &owner,
        "/set-review-note-resolved",
        Some(json!({ "noteId": reply_id, "resolved": true })),
    )
    .await
    .assert_error(404, "note_not_found");
    call(&app, "/open-review", json!({ "reviewId": uuid::Uuid::new_v4() }))
        .await
        .assert_error(404, "review_not_found");

    // A trashed file's review is gone until it is restored; deleted, gone for good.
    let trashed = app
        .call(&owner, "/trash-files", Some(json!([{ "id": video }])))
        .await;
    assert_eq!(trashed.status, 200);
    call(&app, "/open-review", json!({ "reviewId": id }))
        .await
        .assert_error(404, "review_not_found");
    let page = reqwest::get(review["url"].as_str().unwrap()).await.unwrap();
    assert_eq!(page.status(), 404);
    let restored = app
        .call(&owner, "/restore-files", Some(json!([{ "id": video }])))
        .await;
    assert_eq!(restored.status, 200);
    assert_eq!(
        call(&app, "/open-review", json!({ "reviewId": id })).await.status,
        200
    );
    let deleted = app
        .call(&owner, "/delete-files", Some(json!([{ "id": video }])))
        .await;
    assert_eq!(deleted.status, 200);
    assert!(reviews(&app, &owner, json!({})).await.is_empty());
}
