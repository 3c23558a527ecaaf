//! `/import-from-url` over real HTTP: a link fetched by the farm into the drive, whole, and
//! links into private ranges refused with nothing fetched. Every server here is on 127.0.0.1;
//! the other ranges are refused by the address filter before any connection is tried (the
//! `drive-fetch` crate's tests check each range through a resolver they control).

use std::sync::Arc;

use drive_tests::origin::{Answer, Origin};
use drive_tests::*;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The tests' own loopback server, which the drive may fetch from only when told.
const ALLOW_LOOPBACK: (&str, &str) = ("DRIVE_FETCH_ALLOW_HOSTS", "127.0.0.1");

async fn import(app: &TestApp, user: &TestUser, body: Value) -> Value {
    let made = app.call(user, "/import-from-url", Some(body)).await;
    assert_eq!(made.status, 200, "import-from-url: {}", made.body);
    made.body["job"].clone()
}

#[tokio::test]
async fn a_link_is_fetched_into_the_drive_in_parts_and_whole() {
    let large = Arc::new(noise(70 * 1024 * 1024, 11));
    let origin = Origin::start(vec![
        ("/media/Big%20Clip.mp4", Answer::Bytes(large.clone())),
        ("/stream/take.mp4", Answer::Unsized(large.clone())),
        ("/notes.txt", Answer::Bytes(Arc::new(b"hello from afar".to_vec()))),
    ])
    .await;
    let mut app = TestApp::spawn_with(&[ALLOW_LOOPBACK]).await;
    app.start_worker(&[ALLOW_LOOPBACK]).await;
    let user = app.user(Some("Pro")).await;

    let job = import(
        &app,
        &user,
        json!({ "url": format!("{}/media/Big%20Clip.mp4", origin.url) }),
    )
    .await;
    assert_eq!(job["jobType"], "import");
    let done = app.wait_job(&user, &job["id"]).await;
    assert_done(&done);
    assert_eq!(names(&done), ["Big Clip.mp4"]);
    let (id, _) = made(&done).remove(0);
    let stored = app.download(&user, &id).await;
    assert_eq!(
        hex::encode(Sha256::digest(&stored)),
        hex::encode(Sha256::digest(large.as_slice()))
    );
    assert_eq!(done["result"]["bytes"], large.len() as u64);

    // Of a size its server does not say: read to the end of the connection, every byte stored.
    let job = import(
        &app,
        &user,
        json!({ "url": format!("{}/stream/take.mp4", origin.url) }),
    )
    .await;
    let done = app.wait_job(&user, &job["id"]).await;
    assert_done(&done);
    let stored = app.download(&user, &made(&done)[0].0).await;
    assert_eq!(
        hex::encode(Sha256::digest(&stored)),
        hex::encode(Sha256::digest(large.as_slice()))
    );

    let job = import(
        &app,
        &user,
        json!({ "url": format!("{}/notes.txt", origin.url), "fileName": "greeting.txt", "folder": "/Imports" }),
    )
    .await;
    let done = app.wait_job(&user, &job["id"]).await;
    assert_done(&done);
    assert_eq!(names(&done), ["greeting.txt"]);
    let found = app
        .call(&user, "/search-files", Some(json!({ "folder": "/Imports" })))
        .await;
    assert_eq!(
        found.body["files"][0]["fileName"], "greeting.txt",
        "{}",
        found.body
    );
    assert_eq!(app.download(&user, &made(&done)[0].0).await, b"hello from afar");
    assert_eq!(
        origin.requests(),
        ["/media/Big%20Clip.mp4", "/stream/take.mp4", "/notes.txt"]
    );

    // A link that answers an error fails the job with the reason, and makes nothing.
    let job = import(&app, &user, json!({ "url": format!("{}/gone", origin.url) })).await;
    let failed = app.wait_job(&user, &job["id"]).await;
    assert_eq!(failed["state"], "failed", "{failed}");
    assert!(failed["error"].as_str().unwrap().contains("404"), "{failed}");
    assert!(made(&failed).is_empty());
}

#[tokio::test]
async fn links_into_private_ranges_are_refused_at_once_and_nothing_is_fetched() {
    let origin = Origin::start(vec![("/secret", Answer::Bytes(Arc::new(b"internal".to_vec())))]).await;
    // No allowance: the drive as it runs in service.
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let port = origin.port;
    for link in [
        format!("http://127.0.0.1:{port}/secret"),
        format!("http://[::1]:{port}/secret"),
        // A name that resolves to loopback.
        format!("http://localhost:{port}/secret"),
        // Metadata, private and shared ranges: refused by the address itself, never sent.
        "http://169.254.169.254/latest/meta-data/".to_string(),
        "http://10.0.0.1/file".to_string(),
        "http://[fd00::1]/file".to_string(),
        "http://0.0.0.0/file".to_string(),
        "file:///etc/passwd".to_string(),
        "ftp://example.com/file".to_string(),
        "not a link".to_string(),
    ] {
        let refused = app
            .call(&user, "/import-from-url", Some(json!({ "url": link })))
            .await;
        refused.assert_bad_field("url_refused", "url");
    }
    assert!(origin.requests().is_empty(), "fetched: {:?}", origin.requests());
    let long = format!("https://example.com/{}", "a".repeat(2100));
    app.call(&user, "/import-from-url", Some(json!({ "url": long })))
        .await
        .assert_bad_field("invalid_field", "url");
    app.call(&user, "/import-from-url", Some(json!({})))
        .await
        .assert_bad_field("missing_field", "url");
    app.call(
        &user,
        "/create-file-job",
        Some(json!({ "jobType": "import", "options": { "url": "https://example.com/a", "name": "a" } })),
    )
    .await
    .assert_bad_field("invalid_field", "jobType");
}

#[tokio::test]
async fn a_redirect_into_loopback_is_refused_and_nothing_behind_it_is_fetched() {
    let inside = Origin::start(vec![("/secret", Answer::Bytes(Arc::new(b"internal".to_vec())))]).await;
    // The allowed server (reached as 127.0.0.1) sends the fetch on to a name for loopback.
    let outside = Origin::start(vec![(
        "/go",
        Answer::Redirect(format!("http://localhost:{}/secret", inside.port)),
    )])
    .await;
    let mut app = TestApp::spawn_with(&[ALLOW_LOOPBACK]).await;
    app.start_worker(&[ALLOW_LOOPBACK]).await;
    let user = app.user(Some("Pro")).await;
    let job = import(&app, &user, json!({ "url": format!("{}/go", outside.url) })).await;
    let failed = app.wait_job(&user, &job["id"]).await;
    assert_eq!(failed["state"], "failed", "{failed}");
    assert!(
        failed["error"]
            .as_str()
            .unwrap()
            .contains("not on the public internet"),
        "{failed}"
    );
    assert_eq!(outside.requests(), ["/go"]);
    assert!(
        inside.requests().is_empty(),
        "fetched behind the redirect: {:?}",
        inside.requests()
    );
    assert!(made(&failed).is_empty());
}

#[tokio::test]
async fn an_import_past_the_room_left_fails_and_keeps_nothing() {
    let origin = Origin::start(vec![("/big.bin", Answer::Bytes(Arc::new(bytes(300_000, 2))))]).await;
    let quota = ("DRIVE_QUOTA_BASIC_BYTES", "200000");
    let mut app = TestApp::spawn_with(&[ALLOW_LOOPBACK, quota]).await;
    app.start_worker(&[ALLOW_LOOPBACK, quota]).await;
    let user = app.user(Some("Basic")).await;
    let job = import(&app, &user, json!({ "url": format!("{}/big.bin", origin.url) })).await;
    let failed = app.wait_job(&user, &job["id"]).await;
    assert_eq!(failed["state"], "failed", "{failed}");
    assert!(failed["error"].as_str().unwrap().contains("room"), "{failed}");
    let usage = app.call(&user, "/get-user-storage-usage", None).await;
    assert_eq!(usage.body["usedBytes"], 0, "{}", usage.body);
}
