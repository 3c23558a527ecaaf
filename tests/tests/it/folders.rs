//! Folders: `/move-files` by ids or by folder, to a path or a folder id, and the feed's folder
//! filter.

use drive_core::id::FileId;
use drive_tests::*;
use serde_json::{Value, json};

async fn moved(app: &TestApp, user: &TestUser, body: Value) -> Value {
    let reply = app.call(user, "/move-files", Some(body)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body
}

async fn folder_of(app: &TestApp, file: FileId) -> Option<String> {
    sqlx::query_scalar("select d.path from files f left join folders d on d.id = f.folder_id where f.id = $1")
        .bind(file)
        .fetch_one(&mut app.db().await)
        .await
        .unwrap()
}

#[tokio::test]
async fn files_move_to_a_path_made_on_the_way_then_by_id_then_to_the_top() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let a = app
        .upload(&user, "a.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    let b = app
        .upload(&user, "b.txt", "Text", "text/plain", bytes(10, 2))
        .await;

    let first = moved(
        &app,
        &user,
        json!({ "fileIds": [a, b], "folder": "/Holidays/2026" }),
    )
    .await;
    let mut ids: Vec<FileId> = serde_json::from_value(first["moved"].clone()).unwrap();
    ids.sort();
    let mut expected = vec![a, b];
    expected.sort();
    assert_eq!(ids, expected);
    assert_eq!(first["folder"]["path"], "/Holidays/2026/");
    assert_eq!(folder_of(&app, a).await.as_deref(), Some("/Holidays/2026"));
    let parents: i64 = sqlx::query_scalar("select count(*) from folders where path = '/Holidays'")
        .fetch_one(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(parents, 1, "the parent folder was made on the way");

    // The same path again finds the same folder; a trailing slash is the same path.
    let again = moved(
        &app,
        &user,
        json!({ "fileIds": [a], "folder": "/Holidays/2026/" }),
    )
    .await;
    assert_eq!(again["folder"]["id"], first["folder"]["id"]);

    let elsewhere = moved(&app, &user, json!({ "fileIds": [b], "folder": "/Work" })).await;
    let back = moved(
        &app,
        &user,
        json!({ "fileIds": [b], "folderId": first["folder"]["id"] }),
    )
    .await;
    assert_eq!(back["folder"]["path"], "/Holidays/2026/");
    let top = moved(&app, &user, json!({ "fileIds": [b], "folderId": null })).await;
    assert_eq!(
        (top["folder"].clone(), folder_of(&app, b).await),
        (Value::Null, None)
    );
    let top = moved(&app, &user, json!({ "fileIds": [a], "folder": "/" })).await;
    assert_eq!(
        (top["folder"].clone(), folder_of(&app, a).await),
        (Value::Null, None)
    );
    assert!(elsewhere["folder"]["id"].is_string());

    // Moving changes nothing about who can see a file.
    let listed = app.call(&user, "/select-user-files", None).await;
    assert!(
        listed
            .body
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["isPublic"] == false)
    );
}

#[tokio::test]
async fn moving_a_folders_files_takes_the_trashed_ones_too() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let a = app
        .upload(&user, "a.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    let b = app
        .upload(&user, "b.txt", "Text", "text/plain", bytes(10, 2))
        .await;
    let c = app
        .upload(&user, "c.txt", "Text", "text/plain", bytes(10, 3))
        .await;
    let from = moved(&app, &user, json!({ "fileIds": [a, b], "folder": "/in" })).await;
    app.call(&user, "/trash-files", Some(json!([{ "id": b }]))).await;

    let all = moved(
        &app,
        &user,
        json!({ "fromFolderId": from["folder"]["id"], "folder": "/out" }),
    )
    .await;
    assert_eq!(all["moved"].as_array().unwrap().len(), 2);
    assert_eq!(folder_of(&app, b).await.as_deref(), Some("/out"));
    assert_eq!(folder_of(&app, c).await, None, "a file outside the folder stayed");
}

#[tokio::test]
async fn folder_depth_stops_at_32_and_bad_moves_are_refused() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let file = app
        .upload(&user, "a.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    let deep = |n: usize| {
        format!(
            "/{}",
            (1..=n).map(|i| format!("l{i}")).collect::<Vec<_>>().join("/")
        )
    };
    let ok = moved(&app, &user, json!({ "fileIds": [file], "folder": deep(32) })).await;
    assert_eq!(ok["folder"]["path"], format!("{}/", deep(32)));
    let call = |body: Value| app.call(&user, "/move-files", Some(body));
    call(json!({ "fileIds": [file], "folder": deep(33) }))
        .await
        .assert_bad_field("invalid_field", "folder");
    call(json!({ "fileIds": [file], "folder": "relative/path" }))
        .await
        .assert_bad_field("invalid_field", "folder");
    call(json!({ "fileIds": [file], "folder": "/a/../b" }))
        .await
        .assert_bad_field("invalid_field", "folder");
    call(json!({ "folder": "/x" }))
        .await
        .assert_bad_field("missing_field", "fileIds");
    call(json!({ "fileIds": [file] }))
        .await
        .assert_bad_field("missing_field", "folder");
    call(json!({ "fileIds": [], "folder": "/x" }))
        .await
        .assert_bad_field("invalid_field", "fileIds");
    let many: Vec<FileId> = (0..501).map(|_| FileId::random()).collect();
    call(json!({ "fileIds": many, "folder": "/x" }))
        .await
        .assert_bad_field("invalid_field", "fileIds");
    call(json!({ "fileIds": [file], "fromFolderId": ok["folder"]["id"], "folder": "/x" }))
        .await
        .assert_bad_field("invalid_field", "fromFolderId");
    call(json!({ "fileIds": [file], "folder": "/x", "folderId": null }))
        .await
        .assert_bad_field("invalid_field", "folderId");
}

#[tokio::test]
async fn another_users_files_and_folders_behave_like_missing_ones() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let stranger = app.user(Some("Pro")).await;
    let file = app
        .upload(&owner, "a.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    let theirs = app
        .upload(&stranger, "s.txt", "Text", "text/plain", bytes(10, 2))
        .await;
    let folder =
        moved(&app, &owner, json!({ "fileIds": [file], "folder": "/private" })).await["folder"]["id"].clone();

    for id in [file, FileId::random()] {
        app.call(
            &stranger,
            "/move-files",
            Some(json!({ "fileIds": [id], "folder": "/mine" })),
        )
        .await
        .assert_error(404, "file_not_found");
    }
    for id in [folder.clone(), json!(FileId::random())] {
        app.call(
            &stranger,
            "/move-files",
            Some(json!({ "fileIds": [theirs], "folderId": id })),
        )
        .await
        .assert_error(404, "folder_not_found");
        app.call(
            &stranger,
            "/move-files",
            Some(json!({ "fromFolderId": id, "folder": "/mine" })),
        )
        .await
        .assert_error(404, "folder_not_found");
    }
    // A mixed list moves only the caller's own file, and the refused call made no folder.
    let mixed = moved(
        &app,
        &stranger,
        json!({ "fileIds": [file, theirs], "folder": "/mine" }),
    )
    .await;
    assert_eq!(mixed["moved"], json!([theirs]));
    assert_eq!(folder_of(&app, file).await.as_deref(), Some("/private"));
    let made: i64 = sqlx::query_scalar("select count(*) from folders where user_id = $1")
        .bind(stranger.id)
        .fetch_one(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(made, 1);
}

#[tokio::test]
async fn the_feed_narrows_to_events_about_files_in_a_folder_and_below() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let deep = app
        .upload(&user, "deep.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    let near = app
        .upload(&user, "near.txt", "Text", "text/plain", bytes(10, 2))
        .await;
    let other = app
        .upload(&user, "other.txt", "Text", "text/plain", bytes(10, 3))
        .await;
    moved(&app, &user, json!({ "fileIds": [deep], "folder": "/a/b" })).await;
    moved(&app, &user, json!({ "fileIds": [near], "folder": "/a" })).await;
    // A sibling whose name starts the same is not inside /a.
    moved(&app, &user, json!({ "fileIds": [other], "folder": "/ab" })).await;

    let files_in = |folder: &'static str| {
        let app = &app;
        let user = &user;
        async move {
            let since = "2000-01-01T00:00:00Z";
            app.wait_events(user, json!({ "since": since }), 3).await;
            let reply = app
                .call(
                    user,
                    "/select-drive-events",
                    Some(json!({ "since": since, "folder": folder })),
                )
                .await;
            assert_eq!(reply.status, 200, "{}", reply.body);
            let mut ids: Vec<FileId> = reply.body["events"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["file"]["id"].as_str().unwrap().parse().unwrap())
                .collect();
            ids.sort();
            ids
        }
    };
    let mut both = vec![deep, near];
    both.sort();
    assert_eq!(files_in("/a").await, both);
    assert_eq!(files_in("/a/b/").await, [deep]);
    assert_eq!(files_in("/ab").await, [other]);
    assert_eq!(files_in("/nowhere").await, Vec::<FileId>::new());
    assert_eq!(files_in("/").await.len(), 3);
}
