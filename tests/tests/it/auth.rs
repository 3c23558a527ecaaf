//! Sign-in: API tokens, session exchange, the application header and plans.

use drive_tests::*;
use serde_json::json;

#[tokio::test]
async fn an_api_token_is_exchanged_for_a_one_day_session() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Basic")).await;
    let grant = app.exchange(&user.api_token).await;
    assert_eq!(grant.status, 200, "{}", grant.body);
    assert_eq!(grant.body["expiresIn"], 86400);
    assert_eq!(grant.body["userId"], user.id.to_string());
    let session = grant.body["gelToken"].as_str().unwrap();
    assert_ne!(session, user.api_token);
    let listed = app
        .send(Some(session), Some(APP_ID), "/select-user-files", None)
        .await;
    assert_eq!(listed.status, 200, "{}", listed.body);
}

#[tokio::test]
async fn the_api_token_itself_cannot_call_the_file_service() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Basic")).await;
    app.send(Some(&user.api_token), Some(APP_ID), "/select-user-files", None)
        .await
        .assert_error(401, "unauthorized");
}

#[tokio::test]
async fn calls_without_a_session_are_401() {
    let app = TestApp::spawn().await;
    app.send(None, Some(APP_ID), "/select-user-files", None)
        .await
        .assert_error(401, "unauthorized");
    app.send(
        Some("drive_session_made_up"),
        Some(APP_ID),
        "/select-user-files",
        None,
    )
    .await
    .assert_error(401, "unauthorized");
    let bad = app.exchange("drive_api_made_up").await;
    bad.assert_error(401, "unauthorized");
}

#[tokio::test]
async fn an_expired_session_is_401_session_expired() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Basic")).await;
    // Time travel: the session ran out a second ago.
    sqlx::query("update sessions set expires_at = now() - interval '1 second'")
        .execute(&mut app.db().await)
        .await
        .unwrap();
    app.call(&user, "/select-user-files", None)
        .await
        .assert_error(401, "session_expired");
    let renewed = app.exchange(&user.api_token).await;
    assert_eq!(renewed.status, 200);
    let session = renewed.body["gelToken"].as_str().unwrap();
    assert_eq!(
        app.send(Some(session), Some(APP_ID), "/select-user-files", None)
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn the_application_header_is_required_and_checked() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Basic")).await;
    app.send(Some(&user.session), None, "/select-user-files", None)
        .await
        .assert_bad_field("missing_field", "X-Drive-App");
    app.send(
        Some(&user.session),
        Some("some-other-app"),
        "/select-user-files",
        None,
    )
    .await
    .assert_error(403, "app_not_allowed");
}

#[tokio::test]
async fn a_revoked_token_can_neither_exchange_nor_use_its_sessions() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Basic")).await;
    let out = app.admin(&["revoke-token", &user.token_id]);
    assert!(out.contains("revoked"), "{out}");
    app.exchange(&user.api_token)
        .await
        .assert_error(401, "unauthorized");
    app.call(&user, "/select-user-files", None)
        .await
        .assert_error(401, "unauthorized");
    // A second token for the same account works.
    let again = app.admin(&["create-token", "--handle", &user.handle, "--json"]);
    let token: serde_json::Value = serde_json::from_str(&again).unwrap();
    assert_eq!(
        app.exchange(token["apiToken"].as_str().unwrap()).await.status,
        200
    );
}

#[tokio::test]
async fn an_account_without_a_plan_may_not_add_files() {
    let app = TestApp::spawn().await;
    let user = app.user(None).await;
    let input = json!({
        "type": "Text", "fileName": "a.txt", "fileSize": 3, "objectKey": user.key("a.txt"),
    });
    app.call(&user, "/generate-file-urls", Some(input.clone()))
        .await
        .assert_error(403, "no_plan");
    app.call(&user, "/create-multipart-upload", Some(input))
        .await
        .assert_error(403, "no_plan");
    // Reading what is there needs no plan.
    assert_eq!(app.call(&user, "/select-user-files", None).await.status, 200);
    let usage = app.call(&user, "/get-user-storage-usage", None).await;
    assert_eq!(usage.body["plan"], serde_json::Value::Null);
    assert_eq!(usage.body["limitBytes"], 0);
}

#[tokio::test]
async fn a_session_of_a_token_revoked_behind_the_api_is_refused_at_once() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    assert_eq!(app.call(&user, "/select-user-files", None).await.status, 200);
    // Revoked by hand in the database, with no session ended alongside.
    sqlx::query("update api_tokens set revoked_at = now()")
        .execute(&mut app.db().await)
        .await
        .unwrap();
    app.call(&user, "/select-user-files", None)
        .await
        .assert_error(401, "unauthorized");
}

#[tokio::test]
async fn the_sweep_forgets_sessions_expired_over_a_day_ago() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let recent = app.exchange(&user.api_token).await;
    assert_eq!(recent.status, 200);
    sqlx::query("update sessions set expires_at = now() - interval '2 days' where token_hash <> (select token_hash from sessions order by expires_at desc limit 1)")
        .execute(&mut app.db().await)
        .await
        .unwrap();
    let out = app.admin(&["sweep"]);
    assert!(out.contains("forgot 1 sessions"), "{out}");
    let left: i64 = sqlx::query_scalar("select count(*) from sessions")
        .fetch_one(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(left, 1, "the live session stays");
}

#[tokio::test]
async fn sign_in_and_anonymous_links_are_rate_limited_per_address() {
    let app = TestApp::spawn_with(&[
        ("DRIVE_RATE_SIGN_IN_PER_MINUTE", "3"),
        ("DRIVE_RATE_ANONYMOUS_PER_MINUTE", "4"),
    ])
    .await;
    // Counts are per minute: a minute boundary between the calls would reset them, so start
    // well clear of one.
    let second = chrono::Utc::now().timestamp() % 60;
    if second > 45 {
        tokio::time::sleep(std::time::Duration::from_secs((61 - second) as u64)).await;
    }
    // The harness signs in once for the user.
    let user = app.user(Some("Pro")).await;
    // Three sign-ins a minute from this address: the harness's, then two more.
    for _ in 0..2 {
        assert_eq!(app.exchange("drive_api_made_up").await.status, 401);
    }
    let limited = app.exchange(&user.api_token).await;
    let body = limited.assert_error(429, "rate_limited");
    assert_eq!(body["retryable"], true);

    let id = app
        .upload(&user, "p.txt", "Text", "text/plain", bytes(5, 1))
        .await;
    app.call(&user, "/toggle-file-access", Some(json!({ "id": id })))
        .await;
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let link = browser.get(format!("{}/p/{id}", app.url)).send().await.unwrap();
        statuses.push(link.status().as_u16());
    }
    let anonymous = app
        .send(
            None,
            Some(APP_ID),
            "/generate-download-url",
            Some(json!({ "id": id })),
        )
        .await;
    assert_eq!(anonymous.status, 200, "{}", anonymous.body);
    assert_eq!(statuses, [307, 307, 307]);
    let fifth = app
        .send(
            None,
            Some(APP_ID),
            "/generate-download-url",
            Some(json!({ "id": id })),
        )
        .await;
    fifth.assert_error(429, "rate_limited");
    // Signed-in calls are not counted against the address.
    let signed_in = app
        .call(&user, "/generate-download-url", Some(json!({ "id": id })))
        .await;
    assert_eq!(signed_in.status, 200, "{}", signed_in.body);
}
