//! Sharing with people, with three accounts: A shares with B; C is a stranger to it all. B sees
//! what A shared (listed, searched with and without `query`, read, downloaded), a shared
//! folder's new file too, is named in A's views until B turns that off, and can change nothing;
//! C gets exactly what an unknown id gets; A takes it back.

use drive_core::id::FileId;
use drive_tests::*;
use serde_json::{Value, json};

async fn ok(app: &TestApp, user: &TestUser, route: &str, body: Value) -> Value {
    let reply = app.call(user, route, Some(body)).await;
    assert_eq!(reply.status, 200, "{route}: {}", reply.body);
    reply.body
}

fn ids(files: &Value, at: &str) -> Vec<String> {
    files
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.pointer(at).unwrap().as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn what_a_shares_reaches_b_and_never_c_until_a_takes_it_back() {
    let mut app = TestApp::spawn().await;
    let (a, b, c) = (
        app.user(Some("Pro")).await,
        app.user(Some("Pro")).await,
        app.user(Some("Pro")).await,
    );
    app.start_worker(&[]).await;
    let notes = app
        .upload(
            &a,
            "notes.txt",
            "Text",
            "text/plain",
            b"the quarterly numbers are up".to_vec(),
        )
        .await;
    let read = app
        .run_job(&a, json!({ "jobType": "readForSearch", "fileIds": [notes] }))
        .await;
    assert_done(&read);
    let song = app
        .upload(&a, "song.mp3", "Audio", "audio/mpeg", bytes(64, 1))
        .await;
    let private = app
        .upload(&a, "private.txt", "Text", "text/plain", bytes(64, 2))
        .await;

    // Refusals: a handle nobody has, one's own, someone else's files.
    app.call(
        &a,
        "/share-files",
        Some(json!({ "fileIds": [notes], "handles": ["nobody-here"] })),
    )
    .await
    .assert_bad_field("handle_not_found", "handles");
    app.call(
        &a,
        "/share-files",
        Some(json!({ "fileIds": [notes], "handles": [a.handle] })),
    )
    .await
    .assert_bad_field("invalid_field", "handles");
    let foreign = app
        .call(
            &c,
            "/share-files",
            Some(json!({ "fileIds": [notes], "handles": [b.handle] })),
        )
        .await;
    foreign.assert_error(404, "file_not_found");
    let many: Vec<String> = (0..51).map(|n| format!("h{n}")).collect();
    app.call(
        &a,
        "/share-files",
        Some(json!({ "fileIds": [notes], "handles": many })),
    )
    .await
    .assert_bad_field("invalid_field", "handles");

    let shared = ok(
        &app,
        &a,
        "/share-files",
        json!({ "fileIds": [notes, song], "handles": [b.handle] }),
    )
    .await;
    assert_eq!(shared["shares"].as_array().unwrap().len(), 2, "{shared}");
    assert_eq!(shared["shares"][0]["handle"], b.handle);
    let again = ok(
        &app,
        &a,
        "/share-files",
        json!({ "fileIds": [notes], "handles": [b.handle] }),
    )
    .await;
    let of_notes = shared["shares"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["file"]["id"] == notes.to_string())
        .unwrap();
    assert_eq!(
        again["shares"][0]["id"], of_notes["id"],
        "sharing again changes nothing"
    );
    let mine = ok(&app, &a, "/select-file-shares", json!({})).await;
    assert_eq!(mine["shares"].as_array().unwrap().len(), 2);

    // B lists, downloads, reads and finds them; C gets what an unknown id gets.
    let with_b = ok(&app, &b, "/select-shared-files", json!({})).await;
    let mut listed = ids(&with_b["files"], "/file/id");
    listed.sort();
    let mut expected = vec![notes.to_string(), song.to_string()];
    expected.sort();
    assert_eq!(listed, expected);
    assert_eq!(with_b["files"][0]["owner"]["handle"], a.handle);
    assert_eq!(
        ok(&app, &c, "/select-shared-files", json!({})).await["files"],
        json!([])
    );
    assert_eq!(
        app.download(&b, &notes.to_string()).await,
        b"the quarterly numbers are up"
    );
    let unknown = uuid::Uuid::new_v4();
    for (route, field) in [("/generate-download-url", "id"), ("/read-file", "fileId")] {
        let stranger = app.call(&c, route, Some(json!({ field: notes }))).await;
        let nothing = app.call(&c, route, Some(json!({ field: unknown }))).await;
        assert_eq!(
            (stranger.status, &stranger.body),
            (nothing.status, &nothing.body),
            "{route}"
        );
        let unshared = app.call(&b, route, Some(json!({ field: private }))).await;
        assert_eq!(
            (unshared.status, &unshared.body),
            (nothing.status, &nothing.body),
            "{route}"
        );
    }
    let opened = ok(&app, &b, "/read-file", json!({ "fileId": notes })).await;
    assert!(opened["text"].as_str().unwrap().contains("quarterly"), "{opened}");
    let found = ok(&app, &b, "/search-files", json!({ "shared": "only" })).await;
    let mut found_ids = ids(&found["files"], "/id");
    found_ids.sort();
    assert_eq!(found_ids, expected);
    assert!(
        found["files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["owner"] == a.handle)
    );
    let own_only = ok(&app, &b, "/search-files", json!({ "text": "notes" })).await;
    assert_eq!(own_only["files"], json!([]), "B's own search is B's own");
    let inside = ok(
        &app,
        &b,
        "/search-files",
        json!({ "query": "quarterly numbers", "shared": "include" }),
    )
    .await;
    assert_eq!(inside["moments"][0]["fileId"], notes.to_string(), "{inside}");
    assert_eq!(inside["files"][0]["owner"], a.handle);
    for body in [
        json!({ "shared": "include" }),
        json!({ "query": "quarterly numbers", "shared": "include" }),
    ] {
        let strange = ok(&app, &c, "/search-files", body).await;
        assert_eq!(strange["files"], json!([]), "{strange}");
    }
    // A limited token of B's with `read` reaches them too.
    let limited: Value = serde_json::from_str(&app.admin(&[
        "create-token",
        "--handle",
        &b.handle,
        "--json",
        "--scope",
        "read",
    ]))
    .unwrap();
    let session = app.exchange(limited["apiToken"].as_str().unwrap()).await.body["gelToken"]
        .as_str()
        .unwrap()
        .to_string();
    let link = app
        .send(
            Some(&session),
            Some(APP_ID),
            "/generate-download-url",
            Some(json!({ "id": song })),
        )
        .await;
    assert_eq!(link.status, 200, "{}", link.body);

    // B can change nothing of A's: each answers as for a file that is not there.
    for (route, body) in [
        ("/rename-file", json!({ "fileId": notes, "fileName": "mine.txt" })),
        ("/move-files", json!({ "fileIds": [notes], "folder": "/Mine" })),
        ("/tag-files", json!({ "fileIds": [notes], "tags": ["mine"] })),
        (
            "/share-files",
            json!({ "fileIds": [notes], "handles": [c.handle] }),
        ),
        ("/copy-files", json!({ "fileIds": [notes], "folder": "/" })),
    ] {
        app.call(&b, route, Some(body))
            .await
            .assert_error(404, "file_not_found");
    }
    let trashed = ok(&app, &b, "/trash-files", json!([{ "id": notes }])).await;
    assert_eq!(trashed["trashed"], json!([]));
    let deleted = ok(&app, &b, "/delete-files", json!([{ "id": notes }])).await;
    assert_eq!(deleted["deleted"], json!([]));
    assert_eq!(
        app.download(&a, &notes.to_string()).await,
        b"the quarterly numbers are up"
    );

    // B's private playlist takes A's shared track; a public one only B's own.
    let playlist = ok(
        &app,
        &b,
        "/create-playlist",
        json!({ "title": "Mix", "fileIds": [song] }),
    )
    .await;
    assert_eq!(playlist["fileIds"], json!([song]));
    let public = ok(
        &app,
        &b,
        "/create-playlist",
        json!({ "title": "Out", "fileIds": [song], "isPublic": true }),
    )
    .await;
    assert_eq!(public["skipped"], json!([song]));

    // B's open names B in A's views and `view` event, until B turns it off.
    ok(&app, &b, "/update-profile", json!({ "displayName": "Bea" })).await;
    let views = ok(&app, &a, "/select-file-views", json!({ "fileIds": [notes] })).await;
    assert_eq!(views["files"][0]["viewers"][0]["handle"], b.handle, "{views}");
    assert_eq!(views["files"][0]["viewers"][0]["displayName"], "Bea");
    let seen = app.wait_events(&a, json!({ "kinds": ["view"] }), 1).await;
    assert_eq!(seen[0]["viewer"]["handle"], b.handle, "{seen:?}");
    let profile = ok(&app, &b, "/update-profile", json!({ "showViews": false })).await;
    assert_eq!(profile["showViews"], false);
    let views = ok(&app, &a, "/select-file-views", json!({ "fileIds": [notes] })).await;
    assert_eq!(views["files"][0]["viewers"], json!([]), "{views}");
    assert!(views["files"][0]["views"].as_i64().unwrap() >= 1, "still counted");

    // A takes one back from B: B's next call is refused, as for an unknown id.
    let taken = ok(
        &app,
        &a,
        "/unshare-files",
        json!({ "fileIds": [notes], "handles": [b.handle] }),
    )
    .await;
    assert_eq!(taken["shares"].as_array().unwrap().len(), 1);
    let refused = app
        .call(&b, "/generate-download-url", Some(json!({ "id": notes })))
        .await;
    refused.assert_error(403, "file_not_found");
    assert_eq!(
        ids(
            &ok(&app, &b, "/select-shared-files", json!({})).await["files"],
            "/file/id"
        ),
        [song.to_string()]
    );

    // Both feeds tell of it when asked.
    let told = app
        .wait_events(&a, json!({ "kinds": ["shared", "unshared"] }), 3)
        .await;
    let kinds: Vec<&str> = told.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["shared", "shared", "unshared"]);
    assert_eq!(told[0]["with"]["handle"], b.handle);
    let told = app
        .wait_events(&b, json!({ "kinds": ["shared", "unshared"] }), 3)
        .await;
    assert_eq!(told[0]["owner"]["handle"], a.handle);
}

#[tokio::test]
async fn a_shared_folder_covers_the_files_that_land_in_it_later() {
    let app = TestApp::spawn().await;
    let (a, b) = (app.user(Some("Pro")).await, app.user(Some("Pro")).await);
    let first = app
        .upload(&a, "first.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    ok(
        &app,
        &a,
        "/move-files",
        json!({ "fileIds": [first], "folder": "/Family/2026" }),
    )
    .await;
    let collections = ok(&app, &a, "/select-collections", json!({})).await;
    let family = collections["folders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "/Family/")
        .unwrap()["id"]
        .clone();
    let shared = ok(
        &app,
        &a,
        "/share-files",
        json!({ "folderId": family, "handles": [b.handle] }),
    )
    .await;
    assert_eq!(shared["shares"][0]["folder"]["path"], "/Family/");
    app.call(
        &b,
        "/share-files",
        Some(json!({ "folderId": family, "handles": [a.handle] })),
    )
    .await
    .assert_error(404, "folder_not_found");

    let later = app
        .upload(&a, "later.txt", "Text", "text/plain", bytes(10, 2))
        .await;
    ok(
        &app,
        &a,
        "/move-files",
        json!({ "fileIds": [later], "folder": "/Family/2026/Summer" }),
    )
    .await;
    let outside: FileId = app
        .upload(&a, "outside.txt", "Text", "text/plain", bytes(10, 3))
        .await;
    let with_b = ok(&app, &b, "/select-shared-files", json!({ "limit": 1 })).await;
    assert_eq!(with_b["files"].as_array().unwrap().len(), 1);
    let next = ok(
        &app,
        &b,
        "/select-shared-files",
        json!({ "limit": 1, "cursor": with_b["nextCursor"] }),
    )
    .await;
    let mut seen = vec![
        with_b["files"][0]["file"]["id"].clone(),
        next["files"][0]["file"]["id"].clone(),
    ];
    seen.sort_by_key(|v| v.to_string());
    let mut expected = vec![json!(first), json!(later)];
    expected.sort_by_key(|v| v.to_string());
    assert_eq!(
        seen, expected,
        "newest first, paged; the file outside the folder is not there"
    );
    assert_eq!(next["nextCursor"], Value::Null);
    assert_eq!(app.download(&b, &later.to_string()).await, bytes(10, 2));
    app.call(&b, "/generate-download-url", Some(json!({ "id": outside })))
        .await
        .assert_error(403, "file_not_found");

    // Moved out of the folder, a file is no longer shared; unshared, the folder is not.
    ok(
        &app,
        &a,
        "/move-files",
        json!({ "fileIds": [later], "folder": "/" }),
    )
    .await;
    app.call(&b, "/generate-download-url", Some(json!({ "id": later })))
        .await
        .assert_error(403, "file_not_found");
    ok(&app, &a, "/unshare-files", json!({ "folderId": family })).await;
    assert_eq!(
        ok(&app, &b, "/select-shared-files", json!({})).await["files"],
        json!([])
    );
}
