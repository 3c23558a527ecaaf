//! Views: opens by anyone but the owner are counted, once a day each in the feed, and answered
//! by `/select-file-views`.

use drive_core::id::FileId;
use drive_tests::*;
use serde_json::{Value, json};

async fn open(app: &TestApp, user: Option<&TestUser>, id: FileId) {
    let reply = app
        .send(
            user.map(|u| u.session.as_str()),
            user.map(|_| APP_ID),
            "/generate-download-url",
            Some(json!({ "id": id })),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}

async fn views(app: &TestApp, user: &TestUser, body: Value) -> Value {
    let reply = app.call(user, "/select-file-views", Some(body)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body
}

async fn public_file(app: &TestApp, user: &TestUser, name: &str) -> FileId {
    let id = app.upload(user, name, "Text", "text/plain", bytes(10, 1)).await;
    app.call(user, "/toggle-file-access", Some(json!({ "id": id })))
        .await;
    id
}

#[tokio::test]
async fn opens_by_others_are_counted_and_each_viewer_makes_one_event_a_day() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let reader = app.user(Some("Pro")).await;
    let file = public_file(&app, &owner, "post.txt").await;
    open(&app, Some(&owner), file).await; // the owner's own open is no view
    open(&app, Some(&reader), file).await;
    open(&app, Some(&reader), file).await;
    open(&app, None, file).await;
    open(&app, None, file).await;

    let all = views(&app, &owner, json!(null)).await;
    let since = (chrono::Utc::now() - chrono::TimeDelta::days(30))
        .date_naive()
        .to_string();
    assert_eq!(all["since"], since);
    let entry = &all["files"][0];
    assert_eq!(
        (
            entry["id"].clone(),
            entry["fileName"].clone(),
            entry["isPublic"].clone()
        ),
        (json!(file), json!("post.txt"), json!(true))
    );
    assert_eq!(
        (entry["views"].clone(), entry["allViews"].clone()),
        (json!(4), json!(4))
    );
    assert!(entry["lastViewTime"].is_string());
    assert_eq!(
        entry["viewers"],
        json!([]),
        "nobody is named: the file was shared with no one"
    );

    let events = app
        .wait_events(&owner, json!({ "kinds": ["view"], "fileId": file }), 2)
        .await;
    assert_eq!(
        events.len(),
        2,
        "one event for the signed-in reader and one for anonymous readers today"
    );
    for event in &events {
        assert_eq!(
            (event["viewer"].clone(), event["file"]["id"].clone()),
            (Value::Null, json!(file))
        );
    }
}

/// Opens a public file's permanent link as a browser would (no token unless `user`), answers
/// the status and the bytes it leads to.
async fn follow(app: &TestApp, user: Option<&TestUser>, link: &str) -> (u16, Vec<u8>) {
    let mut request = app.http.get(link);
    if let Some(user) = user {
        request = request.bearer_auth(&user.session).header("X-Drive-App", APP_ID);
    }
    let reply = request.send().await.expect("open the link");
    (reply.status().as_u16(), reply.bytes().await.unwrap().to_vec())
}

#[tokio::test]
async fn opens_through_the_permanent_public_link_are_counted_too() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let data = bytes(3000, 9);
    let file = app
        .upload(&owner, "poster.png", "Image", "image/png", data.clone())
        .await;
    let public = app
        .call(&owner, "/toggle-file-access", Some(json!({ "id": file })))
        .await;
    let link = public.body["downloadUrl"].as_str().unwrap().to_string();

    // The link answers a redirect to the object, and a browser lands on the bytes.
    let redirect = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(&link)
        .send()
        .await
        .unwrap();
    assert_eq!(redirect.status(), 307);
    let target = redirect.headers()["location"].to_str().unwrap();
    assert!(target.contains(&app.public_bucket), "{target}");
    assert_eq!(follow(&app, None, &link).await, (200, data.clone()));
    assert_eq!(
        follow(&app, Some(&owner), &link).await,
        (200, data.clone()),
        "the owner's own open"
    );

    let entry = &views(&app, &owner, json!({ "fileIds": [file] })).await["files"][0];
    assert_eq!(
        (entry["views"].clone(), entry["allViews"].clone()),
        (json!(2), json!(2)),
        "two anonymous opens (the redirect and the browser), not the owner's"
    );
    let feed = app
        .wait_events(&owner, json!({ "kinds": ["view"], "fileId": file }), 1)
        .await;
    assert_eq!(
        feed.len(),
        1,
        "one view event a day for the anonymous viewers: {feed:?}"
    );

    // A private, trashed or unknown file's link answers 404 and counts nothing.
    app.call(&owner, "/toggle-file-access", Some(json!({ "id": file })))
        .await;
    assert_eq!(follow(&app, None, &link).await.0, 404);
    assert_eq!(
        follow(&app, None, &format!("{}/p/{}", app.url, FileId::random()))
            .await
            .0,
        404
    );
    assert_eq!(
        follow(&app, None, &format!("{}/p/not-an-id", app.url)).await.0,
        404
    );
    let other = public_file(&app, &owner, "gone.txt").await;
    let gone = app
        .call(&owner, "/trash-files", Some(json!([{ "id": other }])))
        .await;
    assert_eq!(gone.status, 200, "{}", gone.body);
    assert_eq!(follow(&app, None, &format!("{}/p/{other}", app.url)).await.0, 404);
    let after = &views(&app, &owner, json!({ "fileIds": [file] })).await["files"][0];
    assert_eq!(after["allViews"], json!(2));
}

#[tokio::test]
async fn since_counts_from_a_day_and_the_busiest_files_come_first() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let old = public_file(&app, &owner, "old.txt").await;
    let busy = public_file(&app, &owner, "busy.txt").await;
    let quiet = public_file(&app, &owner, "quiet.txt").await;
    let never = public_file(&app, &owner, "never.txt").await;
    open(&app, None, old).await;
    sqlx::query("update file_views set day = current_date - 40")
        .execute(&mut app.db().await)
        .await
        .unwrap();
    for _ in 0..3 {
        open(&app, None, busy).await;
    }
    open(&app, None, quiet).await;

    let top = views(&app, &owner, json!({})).await;
    let order: Vec<&str> = top["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["fileName"].as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        ["busy.txt", "quiet.txt"],
        "unopened and long-ago files are left out"
    );
    assert_eq!(
        views(&app, &owner, json!({ "limit": 1 })).await["files"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let named = views(&app, &owner, json!({ "fileIds": [old, never] })).await;
    let by_id = |id: FileId| {
        named["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == json!(id))
            .unwrap()
            .clone()
    };
    assert_eq!(
        (by_id(old)["views"].clone(), by_id(old)["allViews"].clone()),
        (json!(0), json!(1))
    );
    assert_eq!(
        (
            by_id(never)["views"].clone(),
            by_id(never)["lastViewTime"].clone()
        ),
        (json!(0), Value::Null)
    );
    let forty_five = (chrono::Utc::now() - chrono::TimeDelta::days(45))
        .date_naive()
        .to_string();
    let longer = views(&app, &owner, json!({ "since": forty_five })).await;
    assert_eq!(longer["files"].as_array().unwrap().len(), 3);

    app.call(
        &owner,
        "/move-files",
        Some(json!({ "fileIds": [quiet], "folder": "/blog" })),
    )
    .await;
    let in_folder = views(&app, &owner, json!({ "folder": "/blog" })).await;
    assert_eq!(in_folder["files"].as_array().unwrap().len(), 1);
    assert_eq!(in_folder["files"][0]["id"], json!(quiet));
}

#[tokio::test]
async fn bad_inputs_are_refused_and_others_files_are_not_answered() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let stranger = app.user(Some("Pro")).await;
    let file = public_file(&app, &owner, "a.txt").await;
    open(&app, Some(&stranger), file).await;
    let many: Vec<FileId> = (0..101).map(|_| FileId::random()).collect();
    for (body, field) in [
        (json!({ "fileIds": [] }), "fileIds"),
        (json!({ "fileIds": many }), "fileIds"),
        (json!({ "limit": 0 }), "limit"),
        (json!({ "limit": 101 }), "limit"),
        (json!({ "since": "yesterday" }), "since"),
        (json!({ "folder": "nope" }), "folder"),
    ] {
        app.call(&owner, "/select-file-views", Some(body))
            .await
            .assert_bad_field("invalid_field", field);
    }
    assert_eq!(
        views(&app, &stranger, json!({ "fileIds": [file] })).await["files"],
        json!([])
    );
    assert_eq!(views(&app, &stranger, json!(null)).await["files"], json!([]));
}
