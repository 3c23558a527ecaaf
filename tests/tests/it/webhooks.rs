//! Drive-event webhooks over real HTTPS: an account's events POSTed to its endpoint (a local
//! https receiver whose authority the drive is told to trust), signed, once each and in order,
//! retried after a failure without skipping ahead; links refused unless https on the public
//! internet; no redirect followed; another account's subscription as absent as a made-up one;
//! the signing secret sealed at rest and in no log.

use std::time::Duration;

use drive_tests::receiver::{Receiver, Reply as Planned};
use drive_tests::*;
use serde_json::{Value, json};

/// A receiver, an app trusting it (with a worker to deliver, when `worker`), and an account.
async fn delivering(worker: bool) -> (Receiver, TestApp, TestUser) {
    let receiver = Receiver::start().await;
    let mut app = TestApp::spawn_with(&receiver.trust()).await;
    if worker {
        app.start_worker(&receiver.trust()).await;
    }
    let user = app.user(Some("Pro")).await;
    (receiver, app, user)
}

async fn subscribe(app: &TestApp, user: &TestUser, body: Value) -> (String, String) {
    let made = app.call(user, "/create-event-subscription", Some(body)).await;
    assert_eq!(made.status, 200, "create-event-subscription: {}", made.body);
    let id = made.body["subscription"]["id"].as_str().unwrap().to_string();
    let secret = made.body["secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_"), "{}", made.body);
    (id, secret)
}

async fn listed(app: &TestApp, user: &TestUser) -> Vec<Value> {
    let list = app.call(user, "/select-event-subscriptions", None).await;
    assert_eq!(list.status, 200, "{}", list.body);
    list.body["subscriptions"].as_array().unwrap().clone()
}

#[tokio::test]
async fn events_reach_the_endpoint_signed_once_each_in_order_and_only_the_kinds_asked() {
    let (receiver, app, user) = delivering(true).await;
    // An event before the subscription is not sent.
    app.upload(&user, "before.txt", "Text", "text/plain", bytes(10, 0))
        .await;
    app.wait_events(&user, json!({ "kinds": ["file"] }), 1).await;

    let (id, secret) = subscribe(
        &app,
        &user,
        json!({ "url": format!("{}/hooks/drive", receiver.url), "kinds": ["file", "file"] }),
    )
    .await;
    let mut uploaded = Vec::new();
    for n in 1..=3 {
        uploaded.push(
            app.upload(&user, &format!("{n}.txt"), "Text", "text/plain", bytes(10, n))
                .await,
        );
    }
    // A job's end is a `job` event, which this subscription did not ask for.
    let a = uploaded[0];
    app.run_job(&user, json!({ "jobType": "checksum", "fileIds": [a] }))
        .await;
    let received = receiver.wait_for(3, Duration::from_secs(20)).await;

    let feed = app
        .wait_events(
            &user,
            json!({ "kinds": ["file"], "since": "2000-01-01T00:00:00Z" }),
            4,
        )
        .await;
    let sent: Vec<Value> = received.iter().map(|r| r.json()).collect();
    assert_eq!(sent, feed[1..], "the POSTs are the feed's events, in its order");
    for (post, file) in received.iter().zip(&uploaded) {
        assert_eq!(post.path, "/hooks/drive");
        assert_eq!(post.answered, 200);
        assert_eq!(post.json()["file"]["id"], file.to_string());
        let header = |name: &str| post.headers.get(name).cloned().unwrap_or_default();
        assert_eq!(header("content-type"), "application/json");
        assert_eq!(header("x-drive-event-id"), post.json()["id"].as_str().unwrap());
        assert_eq!(header("x-drive-event-kind"), "file");
        assert_eq!(header("x-drive-subscription-id"), id);
        let timestamp = header("x-drive-timestamp");
        let age = chrono::Utc::now().timestamp() - timestamp.parse::<i64>().unwrap();
        assert!((0..60).contains(&age), "timestamp {timestamp}");
        assert!(header("x-drive-signature").starts_with("sha256="));
        assert!(post.signed_by(&secret), "{post:?}");
        assert!(!post.signed_by("whsec_other"));
    }
    // Nothing more comes: no duplicate, and not the job's event.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(receiver.received().len(), 3, "{:?}", receiver.received());

    let subscriptions = listed(&app, &user).await;
    assert_eq!(subscriptions.len(), 1);
    let subscription = &subscriptions[0];
    assert_eq!(subscription["id"], id.as_str());
    assert_eq!(subscription["kinds"], json!(["file"]));
    assert_eq!(subscription["state"], "active");
    assert_eq!(subscription["failures"], 0);
    assert!(subscription["lastDeliveryTime"].is_string(), "{subscription}");
    assert!(
        subscription.get("secret").is_none(),
        "the secret is shown again: {subscription}"
    );

    // Deleted, it sends nothing more.
    let deleted = app
        .call(
            &user,
            "/delete-event-subscription",
            Some(json!({ "subscriptionId": id })),
        )
        .await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    assert_eq!(deleted.body["deleted"], id.as_str());
    app.upload(&user, "after.txt", "Text", "text/plain", bytes(10, 9))
        .await;
    app.wait_events(
        &user,
        json!({ "kinds": ["file"], "since": "2000-01-01T00:00:00Z" }),
        5,
    )
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(receiver.received().len(), 3);
    assert!(listed(&app, &user).await.is_empty());
}

#[tokio::test]
async fn a_failed_delivery_is_tried_again_after_2_then_10_seconds_and_nothing_overtakes_it() {
    let (receiver, app, user) = delivering(true).await;
    receiver.plan(vec![Planned::Status(500), Planned::Status(503)]);
    subscribe(&app, &user, json!({ "url": format!("{}/in", receiver.url) })).await;
    let first = app
        .upload(&user, "first.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    let second = app
        .upload(&user, "second.txt", "Text", "text/plain", bytes(10, 2))
        .await;

    let failing = receiver.wait_for(2, Duration::from_secs(20)).await;
    let subscription = listed(&app, &user).await.remove(0);
    assert!(subscription["failures"].as_i64().unwrap() >= 1, "{subscription}");
    assert!(
        subscription["lastError"].as_str().unwrap().contains("50"),
        "{subscription}"
    );
    assert!(subscription["firstFailureTime"].is_string(), "{subscription}");

    let received = receiver.wait_for(4, Duration::from_secs(30)).await;
    assert_eq!(received.len(), 4, "{received:?}");
    let files: Vec<String> = received
        .iter()
        .map(|r| r.json()["file"]["id"].as_str().unwrap().to_string())
        .collect();
    // The first event three times (500, 503, taken), then the second: never ahead of it.
    assert_eq!(files, [first, first, first, second].map(|f| f.to_string()));
    assert_eq!(
        received.iter().map(|r| r.answered).collect::<Vec<_>>(),
        [500, 503, 200, 200]
    );
    let id = |r: &drive_tests::receiver::Received| r.headers["x-drive-event-id"].clone();
    assert_eq!(id(&failing[0]), id(&received[2]), "a retry is the same event");
    let gap = |a: usize, b: usize| received[b].at - received[a].at;
    assert!(
        gap(0, 1) >= Duration::from_millis(1900),
        "first retry after {:?}",
        gap(0, 1)
    );
    assert!(
        gap(1, 2) >= Duration::from_millis(9900),
        "second retry after {:?}",
        gap(1, 2)
    );
    assert!(
        gap(1, 2) < Duration::from_secs(14),
        "second retry after {:?}",
        gap(1, 2)
    );

    let subscription = listed(&app, &user).await.remove(0);
    assert_eq!(subscription["failures"], 0, "{subscription}");
    assert!(subscription["lastError"].is_null(), "{subscription}");
}

#[tokio::test]
async fn a_redirect_is_not_followed() {
    let (receiver, app, user) = delivering(true).await;
    receiver.plan(vec![Planned::Redirect(format!("{}/elsewhere", receiver.url))]);
    subscribe(&app, &user, json!({ "url": format!("{}/in", receiver.url) })).await;
    app.upload(&user, "a.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    let received = receiver.wait_for(1, Duration::from_secs(20)).await;
    assert_eq!(received[0].answered, 302);
    // Noted as a failure (the note follows the answer by a moment).
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let subscription = loop {
        let subscription = listed(&app, &user).await.remove(0);
        if subscription["failures"] == 1 || std::time::Instant::now() > deadline {
            break subscription;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(subscription["failures"], 1, "{subscription}");
    let why = subscription["lastError"].as_str().unwrap();
    assert!(
        why.contains("302") && why.contains("not followed"),
        "{subscription}"
    );
    // The retry after 2 s comes to the subscribed link again, never to where it pointed.
    let received = receiver.wait_for(2, Duration::from_secs(10)).await;
    assert!(received.iter().all(|r| r.path == "/in"), "{received:?}");
    assert_eq!(received[1].answered, 200);
}

#[tokio::test]
async fn a_webhook_link_must_be_https_on_the_public_internet() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    for url in [
        "https://127.0.0.1:9/hook",
        "https://10.1.2.3/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/hook",
        "https://192.168.0.1/hook",
        "ftp://93.184.215.14/hook",
        "not a link",
    ] {
        let refused = app
            .call(&user, "/create-event-subscription", Some(json!({ "url": url })))
            .await;
        assert_eq!(refused.status, 400, "{url}: {}", refused.body);
        refused.assert_bad_field("url_refused", "url");
    }
    // Even where loopback is allowed (the tests' receivers), plain http is not.
    let receiver = Receiver::start().await;
    let app = TestApp::spawn_with(&receiver.trust()).await;
    let user = app.user(Some("Pro")).await;
    let http = app
        .call(
            &user,
            "/create-event-subscription",
            Some(json!({ "url": "http://127.0.0.1:9/hook" })),
        )
        .await;
    http.assert_bad_field("url_refused", "url");
    assert!(
        http.body["error"].as_str().unwrap().contains("https"),
        "{}",
        http.body
    );
    for (body, field) in [
        (
            json!({ "url": receiver.url, "kinds": ["file", "sneeze"] }),
            "kinds",
        ),
        (json!({ "url": receiver.url, "kinds": [] }), "kinds"),
        (json!({ "kinds": ["file"] }), "url"),
        (json!({ "url": "x".repeat(2001) }), "url"),
    ] {
        let refused = app
            .call(&user, "/create-event-subscription", Some(body.clone()))
            .await;
        assert_eq!(refused.status, 400, "{body}: {}", refused.body);
        assert_eq!(refused.body["field"], field, "{body}: {}", refused.body);
    }
    // Ten at most.
    for n in 0..10 {
        subscribe(&app, &user, json!({ "url": format!("{}/{n}", receiver.url) })).await;
    }
    let eleventh = app
        .call(
            &user,
            "/create-event-subscription",
            Some(json!({ "url": receiver.url })),
        )
        .await;
    eleventh.assert_error(403, "subscription_limit_reached");
    assert_eq!(listed(&app, &user).await.len(), 10);
}

#[tokio::test]
async fn another_accounts_subscription_is_as_absent_as_a_made_up_one() {
    let receiver = Receiver::start().await;
    let app = TestApp::spawn_with(&receiver.trust()).await;
    let owner = app.user(Some("Pro")).await;
    let other = app.user(Some("Pro")).await;
    let (id, _) = subscribe(&app, &owner, json!({ "url": receiver.url })).await;
    let theirs = app
        .call(
            &other,
            "/delete-event-subscription",
            Some(json!({ "subscriptionId": id })),
        )
        .await;
    let made_up = app
        .call(
            &other,
            "/delete-event-subscription",
            Some(json!({ "subscriptionId": uuid::Uuid::new_v4() })),
        )
        .await;
    theirs.assert_error(404, "subscription_not_found");
    assert_eq!(theirs.body, made_up.body);
    assert!(listed(&app, &other).await.is_empty());
    assert_eq!(listed(&app, &owner).await.len(), 1, "another account deleted it");
}

#[tokio::test]
async fn the_signing_secret_is_sealed_at_rest_and_in_no_log() {
    let (receiver, app, user) = delivering(true).await;
    let (id, secret) = subscribe(&app, &user, json!({ "url": receiver.url })).await;
    app.upload(&user, "a.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    receiver.wait_for(1, Duration::from_secs(20)).await;

    let mut db = app.db().await;
    let row: (Vec<u8>, String) = sqlx::query_as(
        "select secret_sealed, row_to_json(s)::text from event_subscriptions s where id = $1::uuid",
    )
    .bind(&id)
    .fetch_one(&mut db)
    .await
    .unwrap();
    let (sealed, whole_row) = row;
    let bare = secret.trim_start_matches("whsec_");
    assert!(!whole_row.contains(bare), "the row holds the secret: {whole_row}");
    assert!(!sealed.windows(bare.len()).any(|w| w == bare.as_bytes()));
    assert!(
        sealed.len() >= secret.len() + 24 + 16,
        "sealed is nonce, text and tag"
    );
    let logs = format!("{}{}", app.log(), app.worker_logs());
    assert!(!logs.contains(bare), "a log holds the secret");
}

#[tokio::test]
async fn events_recorded_while_no_worker_runs_are_sent_in_order_once_one_starts() {
    let (receiver, mut app, user) = delivering(false).await;
    subscribe(&app, &user, json!({ "url": receiver.url, "kinds": ["file"] })).await;
    let mut uploaded = Vec::new();
    for n in 0..4 {
        uploaded.push(
            app.upload(&user, &format!("{n}.txt"), "Text", "text/plain", bytes(10, n))
                .await
                .to_string(),
        );
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(receiver.received().is_empty());
    app.start_worker(&receiver.trust()).await;
    let received = receiver.wait_for(4, Duration::from_secs(20)).await;
    let files: Vec<String> = received
        .iter()
        .map(|r| r.json()["file"]["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(files, uploaded);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(receiver.received().len(), 4, "an event was sent twice");
}
