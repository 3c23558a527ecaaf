//! Files after upload: links, listing, public and private, trash, deletion and usage.

use drive_core::id::FileId;
use drive_tests::*;
use serde_json::{Value, json};

async fn link(app: &TestApp, user: Option<&TestUser>, id: FileId) -> Reply {
    let session = user.map(|u| u.session.as_str());
    let app_id = user.map(|_| APP_ID);
    app.send(
        session,
        app_id,
        "/generate-download-url",
        Some(json!({ "id": id })),
    )
    .await
}

fn ids(reply: &Reply, field: &str) -> Vec<FileId> {
    let list = if field.is_empty() {
        &reply.body
    } else {
        &reply.body[field]
    };
    list.as_array()
        .unwrap_or_else(|| panic!("no list in {}", reply.body))
        .iter()
        .map(|v| {
            v.as_str()
                .unwrap_or_else(|| v["id"].as_str().unwrap())
                .parse()
                .unwrap()
        })
        .collect()
}

fn refs(ids: &[FileId]) -> Value {
    json!(ids.iter().map(|id| json!({ "id": id })).collect::<Vec<_>>())
}

#[tokio::test]
async fn a_private_file_is_reached_through_a_six_hour_link() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let id = app
        .upload(&user, "été 1.txt", "Text", "text/plain", bytes(300, 1))
        .await;
    let reply = link(&app, Some(&user), id).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["id"], id.to_string());
    assert_eq!(reply.body["fileName"], "été 1.txt");
    assert_eq!(reply.body["isPublic"], false);
    let url = reply.body["downloadUrl"].as_str().unwrap();
    assert!(url.contains("X-Amz-Expires=21600"), "{url}");
    let response = reqwest::get(url).await.unwrap();
    assert_eq!(response.status(), 200);
    let disposition = response.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        disposition.contains("filename*=UTF-8''%C3%A9t%C3%A9%201.txt"),
        "{disposition}"
    );
    assert_eq!(response.bytes().await.unwrap().to_vec(), bytes(300, 1));

    // Without a token a private file is 400; its id might as well not exist.
    link(&app, None, id)
        .await
        .assert_bad_field("sign_in_required", "Authorization");
    link(&app, None, FileId::random())
        .await
        .assert_bad_field("sign_in_required", "Authorization");
    link(&app, Some(&user), FileId::random())
        .await
        .assert_error(403, "file_not_found");
    app.call(&user, "/generate-download-url", Some(json!({})))
        .await
        .assert_bad_field("missing_field", "id");
}

#[tokio::test]
async fn toggling_access_moves_the_file_between_buckets_and_links() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let data = bytes(2000, 5);
    let id = app
        .upload(&user, "photo.jpg", "Image", "image/jpeg", data.clone())
        .await;
    let private_url = link(&app, Some(&user), id).await.body["downloadUrl"]
        .as_str()
        .unwrap()
        .to_string();

    let public = app
        .call(&user, "/toggle-file-access", Some(json!({ "id": id })))
        .await;
    assert_eq!(public.status, 200, "{}", public.body);
    assert_eq!(public.body["isPublic"], true);
    let public_url = public.body["downloadUrl"].as_str().unwrap().to_string();
    // The permanent link names the file on the API, which counts the open and sends the reader
    // on to the object.
    assert_eq!(public_url, format!("{}/p/{id}", app.url));
    // It works for anyone; the object left the private bucket.
    assert_eq!(get(&public_url).await, (reqwest::StatusCode::OK, data.clone()));
    assert_eq!(get(&private_url).await.0, 404);
    let anonymous = link(&app, None, id).await;
    assert_eq!(anonymous.status, 200, "{}", anonymous.body);
    assert_eq!(anonymous.body["downloadUrl"], public_url.as_str());
    let listed = app.call(&user, "/select-user-files", None).await;
    assert_eq!(listed.body[0]["isPublic"], true);
    assert_eq!(listed.body[0]["downloadUrl"], public_url.as_str());

    let private = app
        .call(&user, "/toggle-file-access", Some(json!({ "id": id })))
        .await;
    assert_eq!(private.body["isPublic"], false);
    assert_eq!(private.body["downloadUrl"], Value::Null);
    assert!(!get(&public_url).await.0.is_success());
    link(&app, None, id)
        .await
        .assert_bad_field("sign_in_required", "Authorization");
    let fresh = link(&app, Some(&user), id).await;
    assert_eq!(get(fresh.body["downloadUrl"].as_str().unwrap()).await.1, data);

    // Public again: the same link works again, as the file's, not the object's.
    let again = app
        .call(&user, "/toggle-file-access", Some(json!({ "id": id })))
        .await;
    assert_eq!(again.body["downloadUrl"], public_url.as_str());
    assert_eq!(get(&public_url).await, (reqwest::StatusCode::OK, data));
}

#[tokio::test]
async fn the_library_lists_newest_first_without_trashed_files() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let mut uploaded = Vec::new();
    for n in 0..3 {
        uploaded.push(
            app.upload(&user, &format!("f{n}.txt"), "Text", "text/plain", bytes(10, n))
                .await,
        );
    }
    let listed = app.call(&user, "/select-user-files", None).await;
    assert_eq!(ids(&listed, ""), [uploaded[2], uploaded[1], uploaded[0]]);

    let trashed = app.call(&user, "/trash-files", Some(refs(&[uploaded[1]]))).await;
    assert_eq!(ids(&trashed, "trashed"), [uploaded[1]]);
    assert_eq!(
        ids(&app.call(&user, "/select-user-files", None).await, ""),
        [uploaded[2], uploaded[0]]
    );
}

#[tokio::test]
async fn trash_restore_and_purge_follow_the_file_state_table() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let a = app
        .upload(&user, "a.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    let b = app
        .upload(&user, "b.txt", "Text", "text/plain", bytes(20, 2))
        .await;
    let c = app
        .upload(&user, "c.txt", "Text", "text/plain", bytes(30, 3))
        .await;
    let b_url = link(&app, Some(&user), b).await.body["downloadUrl"]
        .as_str()
        .unwrap()
        .to_string();

    // recorded → trashed; trashing again changes nothing.
    let trashed = app.call(&user, "/trash-files", Some(refs(&[a, b]))).await;
    assert_eq!(ids(&trashed, "trashed").len(), 2);
    assert_eq!(
        ids(
            &app.call(&user, "/trash-files", Some(refs(&[a]))).await,
            "trashed"
        ),
        Vec::<FileId>::new()
    );
    let trash = app.call(&user, "/select-trashed-files", None).await;
    let mut in_trash = ids(&trash, "");
    in_trash.sort();
    let mut expected = vec![a, b];
    expected.sort();
    assert_eq!(in_trash, expected);
    assert!(trash.body[0]["trashTime"].is_string());
    link(&app, Some(&user), a)
        .await
        .assert_error(403, "file_not_found");

    // trashed → recorded.
    let restored = app.call(&user, "/restore-files", Some(refs(&[a, c]))).await;
    assert_eq!(ids(&restored, "restored"), [a]);
    assert_eq!(link(&app, Some(&user), a).await.status, 200);

    // trashed → deleted, for good, bytes and all.
    let purged = app.call(&user, "/purge-trashed-files", None).await;
    assert_eq!(purged.status, 200, "{}", purged.body);
    assert_eq!(ids(&purged, "deleted"), [b]);
    assert_eq!(
        ids(&app.call(&user, "/select-trashed-files", None).await, ""),
        Vec::<FileId>::new()
    );
    assert_eq!(get(&b_url).await.0, 404);
    app.call(&user, "/restore-files", Some(refs(&[b]))).await;
    assert_eq!(
        ids(&app.call(&user, "/select-user-files", None).await, ""),
        [c, a]
    );
}

#[tokio::test]
async fn delete_removes_recorded_and_trashed_files_with_their_objects() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let a = app
        .upload(&user, "a.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    let b = app
        .upload(&user, "b.txt", "Text", "text/plain", bytes(20, 2))
        .await;
    let keep = app
        .upload(&user, "keep.txt", "Text", "text/plain", bytes(30, 3))
        .await;
    let urls = [
        link(&app, Some(&user), a).await.body["downloadUrl"]
            .as_str()
            .unwrap()
            .to_string(),
        link(&app, Some(&user), b).await.body["downloadUrl"]
            .as_str()
            .unwrap()
            .to_string(),
    ];
    app.call(&user, "/trash-files", Some(refs(&[b]))).await;

    let deleted = app
        .call(&user, "/delete-files", Some(refs(&[a, b, FileId::random()])))
        .await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    let mut gone = ids(&deleted, "deleted");
    gone.sort();
    let mut expected = vec![a, b];
    expected.sort();
    assert_eq!(gone, expected);
    for url in &urls {
        assert_eq!(get(url).await.0, 404, "object still stored");
    }
    assert_eq!(
        ids(&app.call(&user, "/select-user-files", None).await, ""),
        [keep]
    );
    let queued: i64 = sqlx::query_scalar("select count(*) from object_deletions")
        .fetch_one(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(queued, 0, "removed objects stay queued");
}

#[tokio::test]
async fn batch_routes_take_one_to_a_hundred_files() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let hundred: Vec<FileId> = (0..100).map(|_| FileId::random()).collect();
    let hundred_one: Vec<FileId> = (0..101).map(|_| FileId::random()).collect();
    for route in ["/trash-files", "/delete-files"] {
        app.call(&user, route, Some(json!([])))
            .await
            .assert_bad_field("invalid_field", "body");
        app.call(&user, route, Some(refs(&hundred_one)))
            .await
            .assert_bad_field("invalid_field", "body");
        assert_eq!(app.call(&user, route, Some(refs(&hundred))).await.status, 200);
    }
    app.call(&user, "/restore-files", Some(json!([])))
        .await
        .assert_bad_field("invalid_field", "body");
    assert_eq!(
        app.call(&user, "/restore-files", Some(refs(&hundred_one)))
            .await
            .status,
        200
    );
    app.call(&user, "/trash-files", Some(json!([{ "id": "nope" }])))
        .await
        .assert_bad_field("invalid_field", "id");
    app.call(&user, "/trash-files", Some(json!({ "id": FileId::random() })))
        .await
        .assert_bad_field("invalid_field", "body");
}

#[tokio::test]
async fn storage_usage_counts_bytes_and_objects_by_bucket_and_kind() {
    let app = TestApp::spawn_with(&[("DRIVE_QUOTA_BASIC_BYTES", "100000")]).await;
    let user = app.user(Some("Basic")).await;
    app.upload(&user, "a.txt", "Text", "text/plain", bytes(100, 1))
        .await;
    let trashed = app
        .upload(&user, "b.txt", "Text", "text/plain", bytes(50, 1))
        .await;
    let image = app
        .upload(&user, "c.png", "Image", "image/png", bytes(200, 1))
        .await;
    app.call(&user, "/toggle-file-access", Some(json!({ "id": image })))
        .await;
    app.call(&user, "/trash-files", Some(refs(&[trashed]))).await;

    let usage = app.call(&user, "/get-user-storage-usage", None).await;
    assert_eq!(usage.status, 200, "{}", usage.body);
    let u = &usage.body;
    assert_eq!(u["plan"], "Basic");
    assert_eq!(u["usedBytes"], 350);
    assert_eq!(u["objects"], 3);
    assert_eq!(u["limitBytes"], 100000);
    assert_eq!(u["remainingBytes"], 100000 - 350);
    assert_eq!(u["buckets"]["private"], json!({ "bytes": 150, "objects": 2 }));
    assert_eq!(u["buckets"]["public"], json!({ "bytes": 200, "objects": 1 }));
    assert_eq!(u["kinds"]["Text"], json!({ "bytes": 150, "objects": 2 }));
    assert_eq!(u["kinds"]["Image"], json!({ "bytes": 200, "objects": 1 }));
    assert_eq!(u["kinds"]["Video"], json!({ "bytes": 0, "objects": 0 }));
}
