//! Two users: another user's ids behave exactly like ids that do not exist, on every route.

use drive_core::id::FileId;
use drive_tests::*;
use serde_json::json;

#[tokio::test]
async fn another_users_files_cannot_be_seen_or_touched_through_any_route() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let stranger = app.user(Some("Pro")).await;
    let file = app
        .upload(&owner, "secret.txt", "Text", "text/plain", bytes(64, 1))
        .await;
    let trashed = app
        .upload(&owner, "old.txt", "Text", "text/plain", bytes(64, 2))
        .await;
    app.call(&owner, "/trash-files", Some(json!([{ "id": trashed }])))
        .await;
    let missing = FileId::random();

    for id in [file, missing] {
        let one = json!({ "id": id });
        let many = json!([{ "id": id }]);
        app.call(&stranger, "/generate-download-url", Some(one.clone()))
            .await
            .assert_error(403, "file_not_found");
        app.call(&stranger, "/toggle-file-access", Some(one))
            .await
            .assert_error(404, "file_not_found");
        assert_eq!(
            app.call(&stranger, "/trash-files", Some(many.clone())).await.body,
            json!({ "trashed": [] })
        );
        assert_eq!(
            app.call(&stranger, "/delete-files", Some(many)).await.body,
            json!({ "deleted": [] })
        );
    }
    let restore = app
        .call(&stranger, "/restore-files", Some(json!([{ "id": trashed }])))
        .await;
    assert_eq!(restore.body, json!({ "restored": [] }));
    assert_eq!(
        app.call(&stranger, "/select-user-files", None).await.body,
        json!([])
    );
    assert_eq!(
        app.call(&stranger, "/select-trashed-files", None).await.body,
        json!([])
    );
    assert_eq!(
        app.call(&stranger, "/purge-trashed-files", None).await.body,
        json!({ "deleted": [] })
    );
    let usage = app.call(&stranger, "/get-user-storage-usage", None).await;
    assert_eq!(
        (usage.body["usedBytes"].as_i64(), usage.body["objects"].as_i64()),
        (Some(0), Some(0))
    );

    // Recording the owner's object as the stranger's is refused by key.
    let steal = json!({
        "type": "Text", "fileName": "mine.txt", "fileSize": 64,
        "objectKey": format!("users/{}/x/secret.txt", owner.id), "creator": { "id": stranger.id },
    });
    app.call(&stranger, "/insert-file", Some(steal))
        .await
        .assert_bad_field("invalid_field", "objectKey");

    // The owner still has everything as it was.
    let listed = app.call(&owner, "/select-user-files", None).await;
    assert_eq!(listed.body.as_array().unwrap().len(), 1);
    assert_eq!(listed.body[0]["isPublic"], false);
    assert_eq!(
        app.call(&owner, "/select-trashed-files", None)
            .await
            .body
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let link = app
        .call(&owner, "/generate-download-url", Some(json!({ "id": file })))
        .await;
    assert_eq!(
        get(link.body["downloadUrl"].as_str().unwrap()).await.1,
        bytes(64, 1)
    );
}

#[tokio::test]
async fn a_public_file_of_another_user_can_be_fetched_but_not_changed() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let stranger = app.user(Some("Pro")).await;
    let file = app
        .upload(&owner, "shared.txt", "Text", "text/plain", bytes(64, 1))
        .await;
    app.call(&owner, "/toggle-file-access", Some(json!({ "id": file })))
        .await;

    let link = app
        .call(&stranger, "/generate-download-url", Some(json!({ "id": file })))
        .await;
    assert_eq!(link.status, 200, "{}", link.body);
    assert_eq!(
        get(link.body["downloadUrl"].as_str().unwrap()).await.1,
        bytes(64, 1)
    );
    app.call(&stranger, "/toggle-file-access", Some(json!({ "id": file })))
        .await
        .assert_error(404, "file_not_found");
    assert_eq!(
        app.call(&stranger, "/select-user-files", None).await.body,
        json!([])
    );
}
