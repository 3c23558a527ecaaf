//! Tags and descriptions.

use drive_core::id::{FileId, TagId};
use drive_tests::*;
use serde_json::{Value, json};

/// The tags on a file, as stored.
async fn tags_of(app: &TestApp, file: FileId) -> Vec<String> {
    sqlx::query_scalar(
        "select t.text from file_tags ft join tags t on t.id = ft.tag_id where ft.file_id = $1 order by t.text",
    )
    .bind(file)
    .fetch_all(&mut app.db().await)
    .await
    .unwrap()
}

async fn ok(app: &TestApp, user: &TestUser, route: &str, body: Value) -> Value {
    let reply = app.call(user, route, Some(body)).await;
    assert_eq!(reply.status, 200, "{route}: {}", reply.body);
    reply.body
}

#[tokio::test]
async fn tags_fold_case_and_keep_the_first_spelling() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let a = app
        .upload(&user, "a.jpg", "Image", "image/jpeg", bytes(10, 1))
        .await;
    let b = app
        .upload(&user, "b.jpg", "Image", "image/jpeg", bytes(10, 2))
        .await;

    let first = ok(
        &app,
        &user,
        "/tag-files",
        json!({ "fileIds": [a], "tags": ["Beach", " sunset "] }),
    )
    .await;
    assert_eq!(first["updated"], json!([a]));
    assert_eq!(first["tags"][0]["text"], "Beach");
    assert_eq!(first["tags"][1]["text"], "sunset");
    let beach = first["tags"][0]["id"].clone();

    let second = ok(
        &app,
        &user,
        "/tag-files",
        json!({ "fileIds": [a, b], "tags": ["BEACH", "beach"] }),
    )
    .await;
    assert_eq!(second["tags"], json!([{ "id": beach, "text": "Beach" }]));
    assert_eq!(tags_of(&app, a).await, ["Beach", "sunset"]);
    assert_eq!(tags_of(&app, b).await, ["Beach"]);

    let removed = ok(
        &app,
        &user,
        "/tag-files",
        json!({ "fileIds": [a], "tags": ["SUNSET", "never made"], "action": "remove" }),
    )
    .await;
    assert_eq!(
        removed["tags"].as_array().unwrap().len(),
        1,
        "removing makes no tag"
    );
    assert_eq!(tags_of(&app, a).await, ["Beach"]);

    ok(
        &app,
        &user,
        "/update-file-tags",
        json!({ "fileIds": [a, b], "tagId": beach, "action": "remove" }),
    )
    .await;
    assert!(tags_of(&app, b).await.is_empty());
    let added = ok(
        &app,
        &user,
        "/update-file-tags",
        json!({ "fileIds": [b], "tagId": beach, "action": "add" }),
    )
    .await;
    assert_eq!(added["tag"]["text"], "Beach");
    assert_eq!(tags_of(&app, b).await, ["Beach"]);
}

#[tokio::test]
async fn tag_inputs_are_validated() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let file = app
        .upload(&user, "a.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    let call = |body: Value| app.call(&user, "/tag-files", Some(body));
    let many: Vec<String> = (0..21).map(|n| format!("t{n}")).collect();
    call(json!({ "fileIds": [file], "tags": [] }))
        .await
        .assert_bad_field("invalid_field", "tags");
    call(json!({ "fileIds": [file], "tags": many }))
        .await
        .assert_bad_field("invalid_field", "tags");
    call(json!({ "fileIds": [file], "tags": ["ok", "  "] }))
        .await
        .assert_bad_field("invalid_field", "tags");
    call(json!({ "fileIds": [file], "tags": ["x".repeat(101)] }))
        .await
        .assert_bad_field("invalid_field", "tags");
    call(json!({ "fileIds": [], "tags": ["a"] }))
        .await
        .assert_bad_field("invalid_field", "fileIds");
    call(json!({ "fileIds": [file], "tags": ["a"], "action": "toggle" }))
        .await
        .assert_bad_field("invalid_field", "action");
    call(json!({ "tags": ["a"] }))
        .await
        .assert_bad_field("missing_field", "fileIds");
    app.call(
        &user,
        "/update-file-tags",
        Some(json!({ "fileIds": [file], "tagId": TagId::random() })),
    )
    .await
    .assert_bad_field("missing_field", "action");
}

#[tokio::test]
async fn descriptions_are_set_and_cleared() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let file = app
        .upload(&user, "a.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    let set = ok(
        &app,
        &user,
        "/update-file-description",
        json!({ "fileId": file, "description": "Our first trip" }),
    )
    .await;
    assert_eq!(set, json!({ "id": file, "description": "Our first trip" }));
    let cleared = ok(
        &app,
        &user,
        "/update-file-description",
        json!({ "fileId": file, "description": "" }),
    )
    .await;
    assert_eq!(cleared["description"], Value::Null);
    let stored: Option<String> = sqlx::query_scalar("select description from files where id = $1")
        .bind(file)
        .fetch_one(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(stored, None);
    app.call(
        &user,
        "/update-file-description",
        Some(json!({ "fileId": file, "description": "x".repeat(5001) })),
    )
    .await
    .assert_bad_field("invalid_field", "description");
    app.call(&user, "/update-file-description", Some(json!({ "fileId": file })))
        .await
        .assert_bad_field("missing_field", "description");
}

#[tokio::test]
async fn another_users_files_and_tags_behave_like_missing_ones() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let stranger = app.user(Some("Pro")).await;
    let file = app
        .upload(&owner, "a.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    let theirs = app
        .upload(&stranger, "b.txt", "Text", "text/plain", bytes(10, 2))
        .await;
    let tag = ok(
        &app,
        &owner,
        "/tag-files",
        json!({ "fileIds": [file], "tags": ["mine"] }),
    )
    .await["tags"][0]["id"]
        .clone();

    for id in [file, FileId::random()] {
        app.call(
            &stranger,
            "/tag-files",
            Some(json!({ "fileIds": [id], "tags": ["x"] })),
        )
        .await
        .assert_error(404, "file_not_found");
        app.call(
            &stranger,
            "/update-file-description",
            Some(json!({ "fileId": id, "description": "x" })),
        )
        .await
        .assert_error(404, "file_not_found");
    }
    for id in [tag.clone(), json!(FileId::random())] {
        app.call(
            &stranger,
            "/update-file-tags",
            Some(json!({ "fileIds": [theirs], "tagId": id, "action": "add" })),
        )
        .await
        .assert_error(404, "tag_not_found");
    }
    // A mixed list tags only the caller's own file, with the caller's own tag of that name.
    let mixed = ok(
        &app,
        &stranger,
        "/tag-files",
        json!({ "fileIds": [file, theirs], "tags": ["mine"] }),
    )
    .await;
    assert_eq!(mixed["updated"], json!([theirs]));
    assert_ne!(mixed["tags"][0]["id"], tag);
    assert_eq!(tags_of(&app, file).await, ["mine"]);
}
