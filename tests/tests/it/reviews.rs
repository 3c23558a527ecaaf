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

/// `name` in full-width letters and digits (`ｕｓｅｒ－…`), which look like the plain ones.
fn full_width(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            '!'..='~' => char::from_u32(c as u32 - 0x21 + 0xFF01).unwrap(),
            c => c,
        })
        .collect()
}

/// Sends the notes (each a body for `/add-review-note`) 16 at a time: the status and body of each.
async fn leave_all(app: &TestApp, bodies: Vec<Value>) -> Vec<(u16, Value)> {
    use futures::StreamExt;
    futures::stream::iter(bodies)
        .map(|body| async move {
            let left = call(app, "/add-review-note", body).await;
            (left.status.as_u16(), left.body)
        })
        .buffer_unordered(16)
        .collect()
        .await
}

#[tokio::test]
async fn a_review_takes_500_notes_100_a_name_none_under_the_owners_handle_and_opens_a_page_at_a_time() {
    // Far more calls than a reader of a page makes: the address's limit is not what is tested.
    let app = TestApp::spawn_with(&[("DRIVE_RATE_ANONYMOUS_PER_MINUTE", "100000")]).await;
    let owner = app.user(Some("Pro")).await;
    let video = app.upload(&owner, "v.webm", "Video", "video/webm", webm()).await;
    let review = create(&app, &owner, json!({ "fileId": video })).await;
    let id = review["id"].as_str().unwrap();
    let at = |n: usize| (n % 7) as f64 * 0.5;

    // The owner's handle, in any spelling, is not a reviewer's name: their replies are signed with it.
    let first = note(
        &app,
        json!({ "reviewId": id, "reviewerName": "Kim", "text": "note 0", "seconds": at(0) }),
    )
    .await;
    let handle = owner.handle.as_str();
    for name in [
        handle.to_string(),
        handle.to_uppercase(),
        format!("@{}", handle.replace('-', " ")),
        full_width(handle),
    ] {
        for body in [
            json!({ "reviewId": id, "reviewerName": name, "text": "I made this", "seconds": 1 }),
            json!({ "reviewId": id, "reviewerName": name, "text": "Agreed", "replyTo": first["id"] }),
        ] {
            call(&app, "/add-review-note", body)
                .await
                .assert_bad_field("invalid_field", "reviewerName");
        }
    }

    // One name writes 100 notes and replies on a review, however it is spelled and however
    // many are sent at once.
    let kim: Vec<Value> = (1..110)
        .map(|n| {
            let name = if n % 2 == 0 { "KIM" } else { "kim." };
            json!({ "reviewId": id, "reviewerName": name, "text": format!("note {n}"), "seconds": at(n) })
        })
        .collect();
    let answers = leave_all(&app, kim).await;
    let taken = answers.iter().filter(|(status, _)| *status == 200).count();
    assert_eq!(taken, 99, "with note 0, Kim has 100");
    for (status, body) in answers.iter().filter(|(status, _)| *status != 200) {
        assert_eq!(*status, 400, "{body}");
        assert_eq!(body["code"], "too_many_notes", "{body}");
        assert_eq!(body["field"], "reviewerName", "{body}");
        assert_eq!(body["retryable"], false, "{body}");
    }
    let kims: Vec<Value> = answers
        .into_iter()
        .filter(|(status, _)| *status == 200)
        .map(|(_, body)| body)
        .chain([first])
        .collect();

    // Three more names take 100 notes each, and a fourth answers each of Kim's notes: 500,
    // the most a review takes from reviewers.
    let mut bodies = Vec::new();
    for name in ["Lou", "Ann", "Cy"] {
        bodies.extend((0..100).map(|n| {
            json!({ "reviewId": id, "reviewerName": name, "text": format!("{name} {n}"), "seconds": at(n) })
        }));
    }
    bodies.extend(
        kims.iter().map(
            |k| json!({ "reviewId": id, "reviewerName": "Bo", "text": "Seconded.", "replyTo": k["id"] }),
        ),
    );
    for (status, body) in leave_all(&app, bodies).await {
        assert_eq!(status, 200, "{body}");
    }
    for body in [
        json!({ "reviewId": id, "reviewerName": "Dee", "text": "one more", "seconds": 1 }),
        json!({ "reviewId": id, "reviewerName": "Dee", "text": "one more", "replyTo": kims[0]["id"] }),
    ] {
        call(&app, "/add-review-note", body)
            .await
            .assert_bad_field("too_many_notes", "reviewId");
    }
    // The owner's replies are not the reviewers' to count.
    let answered = app
        .call(
            &owner,
            "/reply-to-review-note",
            Some(json!({ "noteId": kims[0]["id"], "text": "Fixed." })),
        )
        .await;
    assert_eq!(answered.status, 200, "{}", answered.body);

    // The review opens 50 notes at a time by default, each with all its replies; walked with
    // the cursor 100 at a time, it is every note once, in the order of the timeline.
    let opened = call(&app, "/open-review", json!({ "reviewId": id })).await;
    assert_eq!(opened.status, 200, "{}", opened.body);
    assert_eq!(opened.body["notes"].as_array().unwrap().len(), 50);
    assert!(opened.body["nextCursor"].is_string(), "{}", opened.body);
    let mut notes: Vec<Value> = Vec::new();
    let mut cursor = Value::Null;
    let mut pages = 0;
    loop {
        let page = call(
            &app,
            "/open-review",
            json!({ "reviewId": id, "cursor": cursor, "limit": 100 }),
        )
        .await;
        assert_eq!(page.status, 200, "{}", page.body);
        pages += 1;
        notes.extend(page.body["notes"].as_array().unwrap().iter().cloned());
        cursor = page.body["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(pages, 4, "400 notes, 100 a page");
    assert_eq!(notes.len(), 400);
    let mut ids: Vec<&str> = notes.iter().map(|n| n["id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 400, "no note twice");
    let seconds: Vec<f64> = notes.iter().map(|n| n["seconds"].as_f64().unwrap()).collect();
    assert!(seconds.is_sorted(), "in the order of the timeline");
    for note in &notes {
        let replies = note["replies"].as_array().unwrap();
        if kims.iter().any(|k| k["id"] == note["id"]) {
            assert_eq!(
                replies[0]["reviewer"],
                json!({ "name": "Bo", "owner": false }),
                "{note}"
            );
        } else {
            assert!(replies.is_empty(), "{note}");
        }
    }
    let with_owner = notes.iter().find(|n| n["id"] == kims[0]["id"]).unwrap();
    assert_eq!(
        with_owner["replies"][1]["reviewer"],
        json!({ "name": owner.handle, "owner": true })
    );

    // A cursor is a note of this review: not a reply, not another's.
    let reply = &with_owner["replies"][0]["id"];
    for cursor in [reply.clone(), json!(uuid::Uuid::new_v4())] {
        call(&app, "/open-review", json!({ "reviewId": id, "cursor": cursor }))
            .await
            .assert_bad_field("invalid_field", "cursor");
    }
    for limit in [0, 101] {
        let page = call(&app, "/open-review", json!({ "reviewId": id, "limit": limit })).await;
        assert_eq!(page.status, 400, "{}", page.body);
        assert_eq!(page.body["field"], "limit", "{}", page.body);
    }

    // The owner's listing still has every note.
    let listed = reviews(&app, &owner, json!({ "reviewIds": [id] })).await;
    assert_eq!(listed[0]["notes"].as_array().unwrap().len(), 400);
}
