//! The public pages in a real browser (headless Chromium through ChromeDriver): what a person
//! without an account sees and does. Screenshots land in the screenshots folder
//! (`drive_tests::browser::screenshots`).

use std::io::Write;

use drive_tests::browser::Browser;
use drive_tests::*;
use fantoccini::Locator;
use serde_json::json;
use sha2::{Digest, Sha256};

#[tokio::test]
async fn a_sender_sends_two_files_through_the_request_page_and_the_owner_sees_them_arrive() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let created = app
        .call(
            &owner,
            "/create-file-request",
            Some(json!({ "title": "Wedding photos", "message": "Your best shots, please.", "folder": "/Wedding" })),
        )
        .await;
    assert_eq!(created.status, 200, "{}", created.body);
    let request = created.body;

    // One file small enough for a form, one over 64 MiB, sent in parts.
    let folder = tempfile::tempdir().unwrap();
    let small = folder.path().join("toast.txt");
    std::fs::write(&small, bytes(200_000, 3)).unwrap();
    let large = folder.path().join("ceremony.mp4");
    let mut file = std::fs::File::create(&large).unwrap();
    for n in 0..65 {
        file.write_all(&noise(1024 * 1024, n)).unwrap();
    }
    drop(file);
    let large_digest = hex::encode(Sha256::digest(std::fs::read(&large).unwrap()));

    let browser = Browser::start().await;
    let page = &browser.client;
    page.goto(request["url"].as_str().unwrap()).await.unwrap();
    assert_eq!(
        page.find(Locator::Css("h1")).await.unwrap().text().await.unwrap(),
        "Wedding photos"
    );
    page.find(Locator::Css("#senderName"))
        .await
        .unwrap()
        .send_keys("Grace Hopper")
        .await
        .unwrap();
    page.find(Locator::Css("#note"))
        .await
        .unwrap()
        .send_keys("From the back row.")
        .await
        .unwrap();
    let picker = page.find(Locator::Css("#files")).await.unwrap();
    picker
        .send_keys(&format!("{}\n{}", small.display(), large.display()))
        .await
        .unwrap();
    browser.wait_for_text("#list", "ceremony.mp4", 10).await;
    page.find(Locator::Css("#sendButton"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser.wait_for_text("#status", "Sent 2 files", 180).await;
    let shot = browser.screenshot("request-page").await;
    assert!(
        std::fs::metadata(&shot).unwrap().len() > 10_000,
        "{}",
        shot.display()
    );

    // The owner sees both in the request's folder, whole, and one drop event.
    let listed = app
        .call(
            &owner,
            "/select-file-requests",
            Some(json!({ "requestIds": [request["id"]] })),
        )
        .await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    let drop_entry = &listed.body["requests"][0]["drops"][0];
    assert_eq!(drop_entry["senderName"], "Grace Hopper");
    assert_eq!(drop_entry["note"], "From the back row.");
    let files = drop_entry["files"].as_array().unwrap();
    assert_eq!(files.len(), 2, "{drop_entry}");
    let large_entry = files.iter().find(|f| f["fileName"] == "ceremony.mp4").unwrap();
    assert_eq!(large_entry["fileSize"], 65 * 1024 * 1024);
    let stored = app.download(&owner, large_entry["id"].as_str().unwrap()).await;
    assert_eq!(hex::encode(Sha256::digest(&stored)), large_digest);
    let events = app
        .wait_events(
            &owner,
            json!({ "since": "2000-01-01T00:00:00Z", "kinds": ["drop"] }),
            1,
        )
        .await;
    assert_eq!(events[0]["sender"]["name"], "Grace Hopper");
    assert_eq!(events[0]["files"].as_array().unwrap().len(), 2);
    let found = app
        .call(&owner, "/search-files", Some(json!({ "folder": "/Wedding" })))
        .await;
    assert_eq!(found.body["files"].as_array().unwrap().len(), 2, "{}", found.body);

    // Closed, the page says so and offers no form.
    let closed = app
        .call(
            &owner,
            "/set-file-request-open",
            Some(json!({ "requestId": request["id"], "open": false })),
        )
        .await;
    assert_eq!(closed.status, 200);
    page.refresh().await.unwrap();
    browser.wait_for_text("#closed", "closed", 10).await;
    assert!(page.find(Locator::Css("#send")).await.is_err());
    browser.screenshot("request-page-closed").await;
    browser.close().await;
}

/// A number the page's script answers.
async fn number(browser: &Browser, script: &str) -> f64 {
    browser
        .client
        .execute(script, vec![])
        .await
        .unwrap()
        .as_f64()
        .unwrap_or(f64::NAN)
}

#[tokio::test]
async fn a_reviewer_plays_the_video_leaves_a_note_at_a_moment_replies_and_the_owner_gets_both_note_events() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let video = app
        .upload(
            &owner,
            "trailer.webm",
            "Video",
            "video/webm",
            crate::reviews::webm(),
        )
        .await;
    let made = app
        .call(
            &owner,
            "/create-file-review",
            Some(json!({ "fileId": video, "title": "Trailer, cut 2" })),
        )
        .await;
    assert_eq!(made.status, 200, "{}", made.body);
    let review = made.body;

    let browser = Browser::start().await;
    let page = &browser.client;
    page.goto(review["url"].as_str().unwrap()).await.unwrap();
    assert_eq!(
        page.find(Locator::Css("h1")).await.unwrap().text().await.unwrap(),
        "Trailer, cut 2"
    );
    // It plays: the clock moves.
    page.execute(
        "const p = document.getElementById('player'); p.muted = true; p.play();",
        vec![],
    )
    .await
    .unwrap();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    while number(&browser, "return document.getElementById('player').currentTime").await < 0.5 {
        if tokio::time::Instant::now() > deadline {
            let state = page
                .execute(
                    "const p = document.getElementById('player'); return [p.src, p.readyState, p.networkState, \
                     p.error && p.error.code, p.error && p.error.message, document.getElementById('status').textContent, \
                     performance.getEntriesByType('resource').map((e) => e.name + ' ' + e.responseStatus)];",
                    vec![],
                )
                .await
                .unwrap();
            panic!("the video never played: {state}");
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    page.execute(
        "const p = document.getElementById('player'); p.pause(); p.currentTime = 1.5;",
        vec![],
    )
    .await
    .unwrap();
    browser.wait_for_text("#noteAt", "0:01", 10).await;
    page.find(Locator::Css("#reviewerName"))
        .await
        .unwrap()
        .send_keys("Margaret")
        .await
        .unwrap();
    page.find(Locator::Css("#noteText"))
        .await
        .unwrap()
        .send_keys("The title card flickers.")
        .await
        .unwrap();
    page.find(Locator::Css("#noteButton"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser.wait_for_text("#status", "Note left at 0:01", 10).await;
    browser
        .wait_for_text("#notes", "The title card flickers.", 10)
        .await;

    page.find(Locator::Css("#notes .replyButton"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    page.find(Locator::Css("#notes .reply input"))
        .await
        .unwrap()
        .send_keys("Seen it twice.")
        .await
        .unwrap();
    page.find(Locator::Css("#notes .reply button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser.wait_for_text("#notes", "Seen it twice.", 10).await;

    // A note's time seeks the player there.
    page.execute("document.getElementById('player').currentTime = 0;", vec![])
        .await
        .unwrap();
    page.find(Locator::Css("#notes .at"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while (number(&browser, "return document.getElementById('player').currentTime").await - 1.5).abs() > 0.6 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the note's time did not seek"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    page.execute("document.getElementById('player').pause();", vec![])
        .await
        .unwrap();
    let shot = browser.screenshot("review-page").await;
    assert!(
        std::fs::metadata(&shot).unwrap().len() > 10_000,
        "{}",
        shot.display()
    );
    browser.close().await;

    let events = app
        .wait_events(
            &owner,
            json!({ "since": "2000-01-01T00:00:00Z", "kinds": ["note"] }),
            2,
        )
        .await;
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0]["reviewer"]["name"], "Margaret");
    assert_eq!(events[0]["text"], "The title card flickers.");
    assert!(
        (events[0]["seconds"].as_f64().unwrap() - 1.5).abs() < 0.1,
        "{}",
        events[0]
    );
    assert_eq!(events[1]["text"], "Seen it twice.");
    assert_eq!(events[1]["replyTo"], events[0]["noteId"]);
    assert_eq!(events[1]["review"]["id"], review["id"]);
}

#[tokio::test]
async fn the_review_page_shows_the_notes_a_page_at_a_time_and_marks_the_owners_replies() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let video = app
        .upload(&owner, "cut.webm", "Video", "video/webm", crate::reviews::webm())
        .await;
    let made = app
        .call(&owner, "/create-file-review", Some(json!({ "fileId": video })))
        .await;
    assert_eq!(made.status, 200, "{}", made.body);
    let review = made.body;
    // One more note than the page asks for at a time (100), from two names (100 is one's most).
    let mut first = None;
    for n in 0..101 {
        let name = if n % 2 == 0 { "Ana" } else { "Ben" };
        let left = drive_tests::senders::call(
            &app,
            "/add-review-note",
            json!({ "reviewId": review["id"], "reviewerName": name, "text": format!("note {n}"), "seconds": n as f64 * 0.01 }),
        )
        .await;
        assert_eq!(left.status, 200, "{}", left.body);
        first.get_or_insert(left.body["id"].clone());
    }
    let replied = app
        .call(
            &owner,
            "/reply-to-review-note",
            Some(json!({ "noteId": first, "text": "On it." })),
        )
        .await;
    assert_eq!(replied.status, 200, "{}", replied.body);

    let browser = Browser::start().await;
    let page = &browser.client;
    page.goto(review["url"].as_str().unwrap()).await.unwrap();
    browser
        .wait_for_text(
            "#notes .replies",
            &format!("{} (owner): On it.", owner.handle),
            10,
        )
        .await;
    let shown = "return document.querySelectorAll('#notes > li').length";
    assert_eq!(number(&browser, shown).await, 100.0);
    assert!(!hidden(&browser, "moreNotes").await);
    page.find(Locator::Css("#moreNotes"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser.wait_for_text("#notes", "note 100", 10).await;
    assert_eq!(number(&browser, shown).await, 101.0);
    assert!(hidden(&browser, "moreNotes").await);
    browser.close().await;
}

/// Whether the element with this id is hidden.
async fn hidden(browser: &Browser, id: &str) -> bool {
    browser
        .client
        .execute(&format!("return document.getElementById('{id}').hidden"), vec![])
        .await
        .unwrap()
        .as_bool()
        .unwrap()
}
