//! The drive event feed: oldest first, cursor paging that never repeats or skips, filters.

use std::collections::HashSet;

use drive_core::id::{EventId, FileId, JobId};
use drive_tests::*;
use serde_json::{Value, json};

async fn feed(app: &TestApp, user: &TestUser, body: Option<Value>) -> Reply {
    let reply = app.call(user, "/select-drive-events", body).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply
}

/// Waits until `n` events are in the feed. An event shows once every transaction that began
/// before it has ended (tests share the database server, so that can take a moment); once shown
/// it stays, so checks after this see every event written so far.
async fn settled(app: &TestApp, user: &TestUser, n: usize) {
    app.wait_events(user, json!({ "since": "2000-01-01T00:00:00Z", "limit": 100 }), n)
        .await;
}

fn file_ids(reply: &Reply) -> Vec<FileId> {
    reply.body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["file"]["id"].as_str().unwrap().parse().unwrap())
        .collect()
}

#[tokio::test]
async fn each_upload_adds_a_file_event_oldest_first_and_the_cursor_goes_on_from_there() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let mut uploaded = Vec::new();
    for n in 0..3 {
        uploaded.push(
            app.upload(&user, &format!("{n}.txt"), "Text", "text/plain", bytes(10, n))
                .await,
        );
    }
    settled(&app, &user, 3).await;
    let first = feed(&app, &user, None).await;
    assert_eq!(file_ids(&first), uploaded);
    assert_eq!(first.body["more"], false);
    let event = &first.body["events"][0];
    assert_eq!(event["kind"], "file");
    assert!(event["id"].as_str().unwrap().parse::<EventId>().is_ok());
    assert!(
        event["time"]
            .as_str()
            .unwrap()
            .parse::<chrono::DateTime<chrono::Utc>>()
            .is_ok()
    );
    assert_eq!(event["file"]["fileName"], "0.txt");
    assert_eq!(event["file"]["fileSize"], 10);

    let cursor = first.body["nextCursor"].clone();
    assert!(file_ids(&feed(&app, &user, Some(json!({ "since": cursor }))).await).is_empty());
    let fourth = app
        .upload(&user, "3.txt", "Text", "text/plain", bytes(10, 3))
        .await;
    settled(&app, &user, 4).await;
    let next = feed(&app, &user, Some(json!({ "since": cursor }))).await;
    assert_eq!(file_ids(&next), [fourth]);
}

#[tokio::test]
async fn paging_never_repeats_or_skips_an_event_while_others_are_inserted() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let uploads = async {
        let mut ids = Vec::new();
        for batch in 0..8u8 {
            let names: Vec<String> = (0..8).map(|n| format!("{batch}-{n}.txt")).collect();
            let round = names
                .iter()
                .map(|name| app.upload(&user, name, "Text", "text/plain", bytes(10, batch)));
            ids.extend(futures::future::join_all(round).await);
        }
        ids
    };
    let done = std::sync::atomic::AtomicBool::new(false);
    let uploads = async {
        let ids = uploads.await;
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        ids
    };
    let reader = async {
        let mut seen = Vec::new();
        let mut since = json!("2000-01-01T00:00:00Z");
        // Page while uploads go on, then until every upload has shown (bounded).
        for _ in 0..2000 {
            let page = feed(&app, &user, Some(json!({ "limit": 7, "since": since }))).await;
            seen.extend(file_ids(&page));
            since = page.body["nextCursor"].clone();
            if done.load(std::sync::atomic::Ordering::SeqCst) && seen.len() >= 64 {
                break;
            }
            if page.body["more"] == false {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        }
        // One more page: nothing may follow the last event.
        let last = feed(&app, &user, Some(json!({ "since": since }))).await;
        seen.extend(file_ids(&last));
        seen
    };
    let (uploaded, seen) = tokio::join!(uploads, reader);
    let unique: HashSet<&FileId> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "an event was handed out twice");
    assert_eq!(
        unique,
        uploaded.iter().collect::<HashSet<_>>(),
        "an event was skipped"
    );
}

#[tokio::test]
async fn filters_narrow_the_feed_and_bad_ones_are_refused() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let file = app
        .upload(&user, "a.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    settled(&app, &user, 1).await;
    let count = |reply: Reply| reply.body["events"].as_array().unwrap().len();

    assert_eq!(
        count(feed(&app, &user, Some(json!({ "kinds": ["file"] }))).await),
        1
    );
    assert_eq!(
        count(feed(&app, &user, Some(json!({ "kinds": ["view", "job"] }))).await),
        0
    );
    // fileId means views of that file; an upload is not a view.
    assert_eq!(count(feed(&app, &user, Some(json!({ "fileId": file }))).await), 0);
    assert_eq!(
        count(feed(&app, &user, Some(json!({ "jobId": JobId::random() }))).await),
        0
    );
    let an_hour_ago = (chrono::Utc::now() - chrono::TimeDelta::hours(1)).to_rfc3339();
    let in_an_hour = (chrono::Utc::now() + chrono::TimeDelta::hours(1)).to_rfc3339();
    assert_eq!(
        count(feed(&app, &user, Some(json!({ "since": an_hour_ago }))).await),
        1
    );
    assert_eq!(
        count(feed(&app, &user, Some(json!({ "since": in_an_hour }))).await),
        0
    );
    // Events older than the default window of 24 hours are left out.
    sqlx::query("update drive_events set time = now() - interval '25 hours'")
        .execute(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(count(feed(&app, &user, None).await), 0);
    let two_days_ago = (chrono::Utc::now() - chrono::TimeDelta::hours(48)).to_rfc3339();
    assert_eq!(
        count(feed(&app, &user, Some(json!({ "since": two_days_ago }))).await),
        1
    );

    for (body, field) in [
        (json!({ "limit": 0 }), "limit"),
        (json!({ "limit": 101 }), "limit"),
        (json!({ "kinds": [] }), "kinds"),
        (json!({ "kinds": ["bogus"] }), "kinds"),
        (json!({ "since": "last tuesday" }), "since"),
        (json!({ "requestId": "nope" }), "requestId"),
    ] {
        app.call(&user, "/select-drive-events", Some(body))
            .await
            .assert_bad_field("invalid_field", field);
    }
}

#[tokio::test]
async fn a_user_sees_only_their_own_events() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let stranger = app.user(Some("Pro")).await;
    app.upload(&owner, "a.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    settled(&app, &owner, 1).await;
    let theirs = feed(&app, &stranger, None).await;
    assert_eq!(theirs.body["events"], json!([]));
}

#[tokio::test]
async fn events_page_in_transaction_order_by_number_not_by_text() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    // Transaction ids 9 and 10: as text "10" sorts before "9"; the feed must not.
    for (xid, name) in [("10", "second"), ("9", "first")] {
        sqlx::query(
            "insert into drive_events (id, user_id, kind, subject_id, xid, fields)
             values (gen_random_uuid(), $1, 'file', gen_random_uuid(), $2::text::xid8, jsonb_build_object('file', jsonb_build_object('fileName', $3::text)))",
        )
        .bind(user.id)
        .bind(xid)
        .bind(name)
        .execute(&mut app.db().await)
        .await
        .unwrap();
    }
    let first = feed(&app, &user, Some(json!({ "limit": 1 }))).await;
    assert_eq!(first.body["events"][0]["file"]["fileName"], "first");
    let second = feed(
        &app,
        &user,
        Some(json!({ "limit": 1, "since": first.body["nextCursor"] })),
    )
    .await;
    assert_eq!(second.body["events"][0]["file"]["fileName"], "second");
}

/// The cursor past every event the user has now.
async fn cursor_now(app: &TestApp, user: &TestUser) -> String {
    let reply = feed(app, user, Some(json!({ "limit": 100 }))).await;
    reply.body["nextCursor"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_waiting_follower_hears_of_a_new_event_within_a_second() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let since = cursor_now(&app, &user).await;
    let started = std::time::Instant::now();
    let follower = app.call_in_background(
        &user,
        "/select-drive-events",
        json!({ "since": since, "wait": 20 }),
    );
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert!(
        !follower.is_finished(),
        "the follower answered before anything happened"
    );
    let id = app
        .upload(&user, "late.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    let recorded = std::time::Instant::now();
    let (answered, page) = follower.await.unwrap();
    assert_eq!(page["events"][0]["kind"], "file", "{page}");
    assert_eq!(page["events"][0]["file"]["id"], id.to_string());
    let after = answered.saturating_duration_since(recorded);
    assert!(
        after < std::time::Duration::from_secs(1),
        "answered {after:?} after the event"
    );
    assert!(answered - started >= std::time::Duration::from_millis(1500));

    // A wait over nothing new ends empty, with a cursor to go on from.
    let since = page["nextCursor"].as_str().unwrap();
    let start = std::time::Instant::now();
    let reply = feed(&app, &user, Some(json!({ "since": since, "wait": 1 }))).await;
    assert!(start.elapsed() >= std::time::Duration::from_secs(1));
    assert_eq!(reply.body["events"], json!([]));
    assert!(reply.body["nextCursor"].is_string());
    // With events already there, a wait answers at once.
    let start = std::time::Instant::now();
    let reply = feed(
        &app,
        &user,
        Some(json!({ "since": "2000-01-01T00:00:00Z", "wait": 30 })),
    )
    .await;
    assert_eq!(reply.body["events"].as_array().unwrap().len(), 1);
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
    for wait in [json!(61), json!(-1), json!("soon")] {
        let reply = app
            .call(&user, "/select-drive-events", Some(json!({ "wait": wait })))
            .await;
        reply.assert_bad_field(reply.body["code"].as_str().unwrap_or(""), "wait");
    }
}

#[tokio::test]
async fn a_hundred_idle_followers_hold_no_database_connection_each() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let other = app.user(Some("Pro")).await;
    let since = cursor_now(&app, &user).await;
    let followers: Vec<_> = (0..100)
        .map(|_| {
            app.call_in_background(
                &user,
                "/select-drive-events",
                json!({ "since": since, "wait": 30 }),
            )
        })
        .collect();
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    assert!(
        followers.iter().all(|f| !f.is_finished()),
        "the followers are waiting"
    );
    let mut db = app.db().await;
    let connections: i64 =
        sqlx::query_scalar("select count(*) from pg_stat_activity where datname = current_database()")
            .fetch_one(&mut db)
            .await
            .unwrap();
    // The API's pool holds at most 20, its listener one, and this check one.
    assert!(
        connections <= 22,
        "{connections} connections for 100 waiting followers"
    );
    // Someone else's event wakes none of them; others are served meanwhile.
    let start = std::time::Instant::now();
    app.upload(&other, "theirs.txt", "Text", "text/plain", bytes(10, 2))
        .await;
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(
        followers.iter().all(|f| !f.is_finished()),
        "another account's event woke a follower"
    );
    let id = app
        .upload(&user, "mine.txt", "Text", "text/plain", bytes(10, 3))
        .await;
    let recorded = std::time::Instant::now();
    for follower in followers {
        let (_, page) = follower.await.unwrap();
        assert_eq!(page["events"][0]["file"]["id"], id.to_string(), "{page}");
    }
    assert!(
        recorded.elapsed() < std::time::Duration::from_secs(3),
        "{:?}",
        recorded.elapsed()
    );
}
