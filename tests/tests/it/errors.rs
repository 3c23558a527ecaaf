//! The error body on every failure: bad bodies, routes and methods that do not exist, bodies
//! over the limit, a storage outage; integers out of range, text the database cannot hold, and
//! names and keys the drive would not show as given.

use drive_tests::proxy::TcpProxy;
use drive_tests::*;
use serde_json::json;

async fn raw(app: &TestApp, user: &TestUser, route: &str, content_type: &str, body: &str) -> Reply {
    let response = app
        .http
        .post(format!("{}{route}", app.url))
        .bearer_auth(&user.session)
        .header("X-Drive-App", APP_ID)
        .header("Content-Type", content_type)
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    Reply::read(response).await
}

#[tokio::test]
async fn malformed_bodies_answer_400_naming_the_field() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    raw(
        &app,
        &user,
        "/generate-download-url",
        "application/json",
        "{\"id\": ",
    )
    .await
    .assert_bad_field("invalid_json", "body");
    let trailing = format!("{{\"id\": \"{}\"}} trailing", uuid::Uuid::new_v4());
    raw(
        &app,
        &user,
        "/generate-download-url",
        "application/json",
        &trailing,
    )
    .await
    .assert_bad_field("invalid_json", "body");
    raw(&app, &user, "/generate-download-url", "text/plain", "{}")
        .await
        .assert_bad_field("invalid_content_type", "Content-Type");
    raw(
        &app,
        &user,
        "/generate-download-url",
        "application/json",
        "{\"id\": 12}",
    )
    .await
    .assert_bad_field("invalid_field", "id");
    let reply = raw(&app, &user, "/generate-download-url", "application/json", "{}").await;
    reply.assert_bad_field("missing_field", "id");
    assert_eq!(reply.body["retryable"], false);
    // A route whose body is optional takes none at all; a body of only a line end is no JSON
    // (Schemathesis found it read as none).
    let none = raw(&app, &user, "/select-drive-events", "application/json", "").await;
    assert_eq!(none.status, 200, "{}", none.body);
    raw(&app, &user, "/select-drive-events", "application/json", "\r")
        .await
        .assert_bad_field("invalid_json", "body");
}

#[tokio::test]
async fn a_storage_outage_answers_502_retryable() {
    let proxy = TcpProxy::start(&env("DRIVE_S3_ENDPOINT")).await;
    let app = TestApp::spawn_with(&[("DRIVE_S3_ENDPOINT", &proxy.endpoint)]).await;
    let user = app.user(Some("Pro")).await;
    let file = app
        .upload(&user, "a.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    let key = user.key("b.txt");
    let input = json!({ "type": "Text", "fileName": "b.txt", "fileSize": 10, "objectKey": key });
    let urls = app.call(&user, "/generate-file-urls", Some(input.clone())).await;
    assert!(
        post_form(&urls.body, bytes(10, 2), "application/octet-stream")
            .await
            .is_success()
    );

    proxy.take_down();
    let insert = app.call(&user, "/insert-file", Some(input)).await;
    insert.assert_error(502, "storage_unavailable");
    assert_eq!(insert.body["retryable"], true);
    let toggle = app
        .call(&user, "/toggle-file-access", Some(json!({ "id": file })))
        .await;
    toggle.assert_error(502, "storage_unavailable");
    // Nothing changed while storage was away.
    let listed = app.call(&user, "/select-user-files", None).await;
    assert_eq!(listed.body.as_array().unwrap().len(), 1);
    assert_eq!(listed.body[0]["isPublic"], false);
}

#[tokio::test]
async fn every_failure_carries_the_error_body() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    raw(&app, &user, "/no-such-route", "application/json", "{}")
        .await
        .assert_error(404, "unknown_route");
    let get = app
        .http
        .get(format!("{}/search-files", app.url))
        .bearer_auth(&user.session)
        .header("X-Drive-App", APP_ID)
        .send()
        .await
        .unwrap();
    Reply::read(get).await.assert_error(405, "method_not_allowed");
    // A public link whose id is not even text.
    let link = app.http.get(format!("{}/p/%FF", app.url)).send().await.unwrap();
    Reply::read(link).await.assert_error(404, "file_not_found");
    // Just over the 2 MiB limit: a list of file references, which has no count limit of its own.
    let reference = format!("{{\"id\": \"{}\"}}", uuid::Uuid::new_v4());
    let big = format!("[{}]", vec![reference; 2 * 1024 * 1024 / 40].join(","));
    assert!(big.len() > 2 * 1024 * 1024);
    // On a connection of its own: the drive answers before reading the whole body and closes
    // the connection, which a pooled client could otherwise pick for the next request (through
    // the scaled-out suite's balancer it did, failing that request).
    let refused = reqwest::Client::new()
        .post(format!("{}/restore-files", app.url))
        .bearer_auth(&user.session)
        .header("X-Drive-App", APP_ID)
        .header("Content-Type", "application/json")
        .body(big)
        .send()
        .await
        .unwrap();
    Reply::read(refused).await.assert_error(413, "body_too_large");
    // An item of a list is named by the list; where it stands goes in the sentence.
    let reply = raw(
        &app,
        &user,
        "/select-drive-events",
        "application/json",
        r#"{"kinds": ["file", "sculpture"]}"#,
    )
    .await;
    reply.assert_bad_field("invalid_field", "kinds");
    assert!(
        reply.body["error"].as_str().unwrap().contains("item 2"),
        "{}",
        reply.body
    );
}

#[tokio::test]
async fn integers_are_bounded_where_they_are_read() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    for route in ["/search-files", "/select-file-jobs"] {
        for offset in [i64::MAX, -1] {
            app.call(&user, route, Some(json!({ "offset": offset })))
                .await
                .assert_bad_field("invalid_field", "offset");
        }
        app.call(&user, route, Some(json!({ "limit": i64::MAX })))
            .await
            .assert_bad_field("invalid_field", "limit");
        // The first page still answers.
        let first = app.call(&user, route, Some(json!({ "offset": 0 }))).await;
        assert_eq!(first.status, 200, "{route}: {}", first.body);
    }
    app.call(&user, "/search-files", Some(json!({ "minSize": -1 })))
        .await
        .assert_bad_field("invalid_field", "minSize");
}

#[tokio::test]
async fn text_the_database_cannot_hold_answers_400_naming_the_field() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let file = app
        .upload(&user, "a.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    for (route, body, field) in [
        ("/create-playlist", json!({ "title": "mix\u{0}tape" }), "title"),
        ("/create-playlist", json!({ "title": "mix\u{202E}epat" }), "title"),
        ("/create-gallery", json!({ "title": "red\u{1b}[31m" }), "title"),
        (
            "/create-gallery",
            json!({ "title": "ok", "description": "a\u{0}b" }),
            "description",
        ),
        (
            "/update-file-description",
            json!({ "fileId": file, "description": "a\u{0}b" }),
            "description",
        ),
        (
            "/update-file-description",
            json!({ "fileId": file, "description": "a\u{85}b" }),
            "description",
        ),
        ("/search-files", json!({ "text": "a\u{0}" }), "text"),
        ("/search-files", json!({ "text": "a\u{7f}" }), "text"),
        ("/search-files", json!({ "tags": ["ok", "a\u{0}"] }), "tags"),
        (
            "/tag-files",
            json!({ "fileIds": [file], "tags": ["a\u{2066}b"] }),
            "tags",
        ),
        (
            "/create-archive-request",
            json!({ "fileIds": [file], "title": "a\u{0}" }),
            "title",
        ),
    ] {
        let reply = app.call(&user, route, Some(body.clone())).await;
        assert_eq!(reply.status, 400, "{route} {body}: {}", reply.body);
        reply.assert_bad_field("invalid_field", field);
    }
    // A description may have several lines.
    let described = app
        .call(
            &user,
            "/update-file-description",
            Some(json!({ "fileId": file, "description": "one\n\ttwo" })),
        )
        .await;
    assert_eq!(described.status, 200, "{}", described.body);
    assert_eq!(described.body["description"], "one\n\ttwo");
}

#[tokio::test]
async fn names_and_keys_with_other_spellings_answer_400_naming_the_field() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let upload = |name: &str, key: String| json!({ "type": "Text", "fileName": name, "fileSize": 10, "objectKey": key });
    let id = user.id;
    for key in [
        format!("users/{}/x", id.to_string().to_uppercase()),
        format!("users/{}/x", id.as_uuid().simple()),
        format!("users/{{{id}}}/x"),
    ] {
        app.call(&user, "/generate-file-urls", Some(upload("x", key.clone())))
            .await
            .assert_bad_field("invalid_field", "objectKey");
    }
    for name in [
        "..",
        ".",
        "a\\b",
        "a/b",
        "a\u{7}b",
        "photo\u{202E}gpj.exe",
        "a\u{2067}b",
    ] {
        for route in ["/generate-file-urls", "/create-multipart-upload"] {
            app.call(&user, route, Some(upload(name, user.key("x"))))
                .await
                .assert_bad_field("invalid_field", "fileName");
        }
    }
}
