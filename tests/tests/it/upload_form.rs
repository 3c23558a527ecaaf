//! The presigned form upload and `/insert-file`.

use drive_tests::*;
use serde_json::{Value, json};

fn input(user: &TestUser, name: &str, size: usize, mime: &str) -> Value {
    json!({ "type": "Text", "fileName": name, "fileSize": size, "objectKey": user.key(name), "mimeType": mime })
}

async fn insert(app: &TestApp, user: &TestUser, input: &Value) -> Reply {
    let mut body = input.clone();
    body["isPublic"] = json!(false);
    body["creator"] = json!({ "id": user.id });
    app.call(user, "/insert-file", Some(body)).await
}

#[tokio::test]
async fn a_form_upload_is_recorded_private_and_listed() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let data = bytes(5000, 7);
    let mut body = input(&user, "notes.txt", data.len(), "text/plain");
    let urls = app.call(&user, "/generate-file-urls", Some(body.clone())).await;
    assert_eq!(urls.status, 200, "{}", urls.body);
    assert_eq!(urls.body["downloadUrl"], Value::Null);
    for field in [
        "key",
        "policy",
        "x-amz-signature",
        "Content-Type",
        "Content-Disposition",
        "Cache-Control",
    ] {
        assert!(
            urls.body["uploadForm"][field].is_string(),
            "form lacks {field}: {}",
            urls.body
        );
    }
    assert!(
        post_form(&urls.body, data.clone(), "text/plain")
            .await
            .is_success()
    );

    // isPublic true is ignored: a users/ file is always inserted private.
    body["isPublic"] = json!(true);
    body["creator"] = json!({ "id": user.id });
    let inserted = app.call(&user, "/insert-file", Some(body)).await;
    assert_eq!(inserted.status, 200, "{}", inserted.body);
    let id = inserted.body["id"].as_str().unwrap();

    let listed = app.call(&user, "/select-user-files", None).await;
    let files = listed.body.as_array().unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0]["id"], id);
    assert_eq!(files[0]["fileName"], "notes.txt");
    assert_eq!(files[0]["fileSize"], 5000);
    assert_eq!(files[0]["mimeType"], "text/plain");
    assert_eq!(files[0]["type"], "Text");
    assert_eq!(files[0]["isPublic"], false);
    assert_eq!(files[0]["downloadUrl"], Value::Null);

    let link = app
        .call(&user, "/generate-download-url", Some(json!({ "id": id })))
        .await;
    let (status, got) = get(link.body["downloadUrl"].as_str().unwrap()).await;
    assert_eq!((status.as_u16(), got), (200, data));
}

#[tokio::test]
async fn the_form_refuses_a_body_one_byte_off() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let body = input(&user, "exact.bin", 1000, "application/octet-stream");
    let urls = app.call(&user, "/generate-file-urls", Some(body.clone())).await;
    assert!(
        !post_form(&urls.body, bytes(1001, 1), "application/octet-stream")
            .await
            .is_success()
    );
    assert!(
        !post_form(&urls.body, bytes(999, 1), "application/octet-stream")
            .await
            .is_success()
    );
    // Nothing was stored, so nothing can be inserted.
    insert(&app, &user, &body)
        .await
        .assert_bad_field("object_not_found", "objectKey");
    assert!(
        post_form(&urls.body, bytes(1000, 1), "application/octet-stream")
            .await
            .is_success()
    );
}

#[tokio::test]
async fn the_form_refuses_another_content_type() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let body = input(&user, "page.html", 100, "text/plain");
    let mut urls = app.call(&user, "/generate-file-urls", Some(body)).await;
    urls.body["uploadForm"]["Content-Type"] = json!("text/html");
    assert!(
        !post_form(&urls.body, bytes(100, 1), "text/html")
            .await
            .is_success()
    );
}

#[tokio::test]
async fn insert_rejects_a_size_that_differs_from_the_stored_object() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let mut body = input(&user, "a.bin", 100, "application/octet-stream");
    let urls = app.call(&user, "/generate-file-urls", Some(body.clone())).await;
    assert!(
        post_form(&urls.body, bytes(100, 1), "application/octet-stream")
            .await
            .is_success()
    );
    body["fileSize"] = json!(101);
    insert(&app, &user, &body)
        .await
        .assert_bad_field("size_mismatch", "fileSize");
    assert_eq!(
        app.call(&user, "/select-user-files", None)
            .await
            .body
            .as_array()
            .unwrap()
            .len(),
        0
    );
}

#[tokio::test]
async fn a_resent_insert_answers_the_same_file_and_records_one_event() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let body = input(&user, "twice.txt", 10, "text/plain");
    let urls = app.call(&user, "/generate-file-urls", Some(body.clone())).await;
    assert!(
        post_form(&urls.body, bytes(10, 1), "text/plain")
            .await
            .is_success()
    );
    let first = insert(&app, &user, &body).await;
    let second = insert(&app, &user, &body).await;
    assert_eq!(first.status, 200);
    assert_eq!(first.body["id"], second.body["id"]);
    assert_eq!(
        app.call(&user, "/select-user-files", None)
            .await
            .body
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let events: Vec<(String, Value)> =
        sqlx::query_as("select kind, fields from drive_events where user_id = $1")
            .bind(user.id)
            .fetch_all(&mut app.db().await)
            .await
            .unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].0, "file");
    assert_eq!(events[0].1["file"]["id"], first.body["id"]);
    assert_eq!(events[0].1["file"]["fileName"], "twice.txt");

    // The key is taken now: no new upload may be signed over the recorded file.
    app.call(&user, "/generate-file-urls", Some(body))
        .await
        .assert_error(409, "object_key_taken");
}

#[tokio::test]
async fn object_keys_must_be_the_callers_own() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let other = app.user(Some("Pro")).await;
    let mut body = input(&user, "a.txt", 10, "text/plain");
    body["objectKey"] = json!(other.key("a.txt"));
    app.call(&user, "/generate-file-urls", Some(body.clone()))
        .await
        .assert_bad_field("invalid_field", "objectKey");
    app.call(&user, "/create-multipart-upload", Some(body.clone()))
        .await
        .assert_bad_field("invalid_field", "objectKey");
    insert(&app, &user, &body)
        .await
        .assert_bad_field("invalid_field", "objectKey");
    body["objectKey"] = json!("elsewhere/a.txt");
    app.call(&user, "/generate-file-urls", Some(body))
        .await
        .assert_bad_field("invalid_field", "objectKey");
}

#[tokio::test]
async fn creator_must_be_the_caller() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let body = input(&user, "a.txt", 10, "text/plain");
    let urls = app.call(&user, "/generate-file-urls", Some(body.clone())).await;
    assert!(
        post_form(&urls.body, bytes(10, 1), "text/plain")
            .await
            .is_success()
    );
    let mut forged = body.clone();
    forged["creator"] = json!({ "id": uuid::Uuid::new_v4() });
    app.call(&user, "/insert-file", Some(forged))
        .await
        .assert_bad_field("invalid_field", "creator.id");
}

#[tokio::test]
async fn upload_inputs_are_validated_field_by_field() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let good = input(&user, "a.txt", 10, "text/plain");
    // The insert takes the same input plus its own fields, and names fields the same way.
    for route in ["/generate-file-urls", "/create-multipart-upload", "/insert-file"] {
        for field in ["type", "fileName", "fileSize", "objectKey"] {
            let mut body = good.clone();
            body.as_object_mut().unwrap().remove(field);
            app.call(&user, route, Some(body))
                .await
                .assert_bad_field("missing_field", field);
        }
        let cases = [
            ("type", json!("Hologram")),
            ("fileName", json!("")),
            ("fileName", json!("a/b")),
            ("fileName", json!("tab\there")),
            ("fileSize", json!(-1)),
            ("fileSize", json!("ten")),
            ("fileSize", json!(2_199_023_255_553_i64)),
            ("mimeType", json!("not a type")),
            ("objectKey", json!(format!("users/{}/../x", user.id))),
        ];
        for (field, value) in cases {
            let mut body = good.clone();
            body[field] = value.clone();
            let reply = app.call(&user, route, Some(body)).await;
            reply.assert_bad_field("invalid_field", field);
        }
    }
    for (field, value) in [("modifiedTime", json!("yesterday")), ("creator", json!("me"))] {
        let mut body = good.clone();
        body[field] = value;
        app.call(&user, "/insert-file", Some(body))
            .await
            .assert_bad_field("invalid_field", field);
    }
    // The form tops out at 5 GiB; a bigger file must go multipart.
    let mut big = good.clone();
    big["fileSize"] = json!(6_i64 * 1024 * 1024 * 1024);
    app.call(&user, "/generate-file-urls", Some(big))
        .await
        .assert_bad_field("invalid_field", "fileSize");
}

#[tokio::test]
async fn the_quota_is_checked_when_an_upload_is_signed_and_again_at_insert() {
    // Basic holds 1000 bytes here, Intro 500.
    let app = TestApp::spawn_with(&[
        ("DRIVE_QUOTA_BASIC_BYTES", "1000"),
        ("DRIVE_QUOTA_INTRO_BYTES", "500"),
    ])
    .await;
    let user = app.user(Some("Basic")).await;
    let too_big = input(&user, "big.bin", 1001, "application/octet-stream");
    app.call(&user, "/generate-file-urls", Some(too_big.clone()))
        .await
        .assert_bad_field("storage_limit_reached", "fileSize");
    app.call(&user, "/create-multipart-upload", Some(too_big))
        .await
        .assert_bad_field("storage_limit_reached", "fileSize");

    // An upload signed and stored but not yet recorded holds its 600 bytes: a second of 600
    // is refused before it is sent.
    let first = input(&user, "one.bin", 600, "application/octet-stream");
    let second = input(&user, "two.bin", 600, "application/octet-stream");
    let sign_and_send = |body: Value| async {
        let urls = app.call(&user, "/generate-file-urls", Some(body)).await;
        assert_eq!(urls.status, 200, "{}", urls.body);
        assert!(
            post_form(&urls.body, bytes(600, 2), "application/octet-stream")
                .await
                .is_success()
        );
    };
    sign_and_send(first.clone()).await;
    app.call(&user, "/generate-file-urls", Some(second.clone()))
        .await
        .assert_bad_field("storage_limit_reached", "fileSize");
    assert_eq!(insert(&app, &user, &first).await.status, 200);
    let usage = app.call(&user, "/get-user-storage-usage", None).await;
    assert_eq!(usage.body["usedBytes"], 600);
    assert_eq!(usage.body["remainingBytes"], 400);

    // Deleting frees the room (trashing does not: the trash still occupies storage).
    let first_id = app.call(&user, "/select-user-files", None).await.body[0]["id"].clone();
    app.call(&user, "/trash-files", Some(json!([{ "id": first_id }])))
        .await;
    app.call(&user, "/generate-file-urls", Some(second.clone()))
        .await
        .assert_bad_field("storage_limit_reached", "fileSize");
    app.call(&user, "/delete-files", Some(json!([{ "id": first_id }])))
        .await;
    sign_and_send(second.clone()).await;
    assert_eq!(insert(&app, &user, &second).await.status, 200);

    // The insert checks again: a plan that shrank since the upload was signed refuses it.
    let third = input(&user, "three.bin", 300, "application/octet-stream");
    let urls = app.call(&user, "/generate-file-urls", Some(third.clone())).await;
    assert_eq!(urls.status, 200, "{}", urls.body);
    assert!(
        post_form(&urls.body, bytes(300, 3), "application/octet-stream")
            .await
            .is_success()
    );
    sqlx::query("update users set plan = 'Intro' where id = $1")
        .bind(user.id)
        .execute(&mut app.db().await)
        .await
        .unwrap();
    insert(&app, &user, &third)
        .await
        .assert_bad_field("storage_limit_reached", "fileSize");
    let usage = app.call(&user, "/get-user-storage-usage", None).await;
    assert_eq!(usage.body["usedBytes"], 600);
}

#[tokio::test]
async fn concurrent_uploads_never_pass_the_quota_together() {
    let app = TestApp::spawn_with(&[("DRIVE_QUOTA_INTRO_BYTES", "1000")]).await;
    let user = app.user(Some("Intro")).await;
    let inputs: Vec<Value> = (0..8)
        .map(|n| input(&user, &format!("{n}.bin"), 300, "application/octet-stream"))
        .collect();
    let signed = futures::future::join_all(
        inputs
            .iter()
            .map(|body| app.call(&user, "/generate-file-urls", Some(body.clone()))),
    )
    .await;
    let mut accepted = Vec::new();
    for (n, (body, urls)) in inputs.iter().zip(&signed).enumerate() {
        if urls.status == 200 {
            assert!(
                post_form(&urls.body, bytes(300, n as u8), "application/octet-stream")
                    .await
                    .is_success()
            );
            accepted.push(body);
        } else {
            urls.assert_bad_field("storage_limit_reached", "fileSize");
        }
    }
    assert_eq!(accepted.len(), 3, "1000 bytes hold three files of 300");
    for reply in futures::future::join_all(accepted.iter().map(|body| insert(&app, &user, body))).await {
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
    let usage = app.call(&user, "/get-user-storage-usage", None).await;
    assert_eq!(usage.body["usedBytes"], 900);
}
