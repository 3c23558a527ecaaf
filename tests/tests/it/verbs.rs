//! The everyday verbs over real HTTP: renaming and copying files, moving, renaming and deleting
//! folders, renaming, emptying out and deleting playlists and galleries, deleting tags and file
//! requests, closing reviews; with the hostile cases (bad names, a folder into itself, names
//! taken, another account's ids, too many ids) and the events a mirror follows.

use std::io::Read;

use drive_core::id::FileId;
use drive_tests::senders::Sender;
use drive_tests::*;
use serde_json::{Value, json};

async fn ok(app: &TestApp, user: &TestUser, route: &str, body: Value) -> Value {
    let reply = app.call(user, route, Some(body)).await;
    assert_eq!(reply.status, 200, "{route}: {}", reply.body);
    reply.body
}

async fn text_file(app: &TestApp, user: &TestUser, name: &str, seed: u8) -> FileId {
    app.upload(user, name, "Text", "text/plain", bytes(100, seed))
        .await
}

/// The `Content-Disposition` a link downloads with (redirects followed).
async fn disposition(url: &str) -> String {
    let response = reqwest::get(url).await.unwrap();
    assert_eq!(response.status(), 200, "{url}");
    response.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .to_string()
}

/// The caller's folders by path (`/a/b/`), from `/select-collections`.
async fn folder_paths(app: &TestApp, user: &TestUser) -> Vec<String> {
    let collections = ok(app, user, "/select-collections", json!({})).await;
    collections["folders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

async fn folder_id(app: &TestApp, user: &TestUser, path: &str) -> Value {
    let collections = ok(app, user, "/select-collections", json!({})).await;
    collections["folders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("no folder {path}: {collections}"))["id"]
        .clone()
}

/// Where a file sits, by its record's `folderId`, as a path (`/` for the top).
async fn path_of(app: &TestApp, user: &TestUser, file: FileId, trashed: bool) -> String {
    let route = if trashed {
        "/select-trashed-files"
    } else {
        "/select-user-files"
    };
    let listed = app.call(user, route, None).await.body;
    let record = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == file.to_string())
        .unwrap_or_else(|| panic!("{file} is not in {route}: {listed}"))
        .clone();
    if record["folderId"].is_null() {
        return "/".to_string();
    }
    let collections = ok(app, user, "/select-collections", json!({})).await;
    collections["folders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == record["folderId"])
        .unwrap()["path"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn a_file_is_renamed_and_its_links_download_under_the_new_name() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let other = app.user(Some("Pro")).await;
    let notes = text_file(&app, &user, "notes.txt", 1).await;
    let taken = text_file(&app, &user, "Plans.txt", 2).await;

    let renamed = ok(
        &app,
        &user,
        "/rename-file",
        json!({ "fileId": notes, "fileName": "minutes.txt" }),
    )
    .await;
    assert_eq!(renamed["fileName"], "minutes.txt");
    assert_eq!(renamed["id"], notes.to_string());
    let link = ok(&app, &user, "/generate-download-url", json!({ "id": notes })).await;
    let private = disposition(link["downloadUrl"].as_str().unwrap()).await;
    assert!(private.contains("minutes.txt"), "{private}");

    // A public file's object is stored again under its new name: its permanent link says it.
    let public = ok(&app, &user, "/toggle-file-access", json!({ "id": taken })).await;
    let permanent = public["downloadUrl"].as_str().unwrap().to_string();
    assert!(disposition(&permanent).await.contains("Plans.txt"));
    ok(
        &app,
        &user,
        "/rename-file",
        json!({ "fileId": taken, "fileName": "plans 2027.txt" }),
    )
    .await;
    let after = disposition(&permanent).await;
    assert!(
        after.contains("plans%202027.txt") || after.contains("plans 2027.txt"),
        "{after}"
    );
    assert_eq!(app.download(&user, &taken.to_string()).await, bytes(100, 2));

    // Names as an upload's rules have them; each refusal names the field.
    let long = "a".repeat(256);
    for bad in [
        "a/b.txt",
        "..",
        ".",
        "back\\slash",
        "bell\u{7}.txt",
        "",
        "   ",
        long.as_str(),
    ] {
        app.call(
            &user,
            "/rename-file",
            Some(json!({ "fileId": notes, "fileName": bad })),
        )
        .await
        .assert_bad_field("invalid_field", "fileName");
    }
    // Another file in the folder has the name, case aside: 409 naming the path.
    let clash = app
        .call(
            &user,
            "/rename-file",
            Some(json!({ "fileId": notes, "fileName": "PLANS 2027.TXT" })),
        )
        .await;
    let body = clash.assert_error(409, "file_name_taken");
    assert!(
        body["error"].as_str().unwrap().contains("/PLANS 2027.TXT"),
        "{body}"
    );
    // Another account's file is as unknown as no file; a trashed one is restored first.
    let unknown = app
        .call(
            &user,
            "/rename-file",
            Some(json!({ "fileId": uuid::Uuid::new_v4(), "fileName": "x.txt" })),
        )
        .await;
    unknown.assert_error(404, "file_not_found");
    let foreign = app
        .call(
            &other,
            "/rename-file",
            Some(json!({ "fileId": notes, "fileName": "x.txt" })),
        )
        .await;
    assert_eq!(foreign.body, unknown.body);
    ok(&app, &user, "/trash-files", json!([{ "id": notes }])).await;
    app.call(
        &user,
        "/rename-file",
        Some(json!({ "fileId": notes, "fileName": "x.txt" })),
    )
    .await
    .assert_bad_field("file_trashed", "fileId");

    // The feed tells a mirror, when it asks for the kind; the contract's six stay as they were.
    let events = app
        .wait_events(&user, json!({ "kinds": ["renamed", "access", "trashed"] }), 4)
        .await;
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["renamed", "access", "renamed", "trashed"], "{events:?}");
    assert_eq!(events[0]["fromName"], "notes.txt");
    assert_eq!(events[0]["file"]["fileName"], "minutes.txt");
    let plain = ok(&app, &user, "/select-drive-events", json!({})).await;
    let contract = ["drop", "note", "view", "file", "generation", "job"];
    assert!(
        plain["events"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| contract.contains(&e["kind"].as_str().unwrap())),
        "{plain}"
    );
}

#[tokio::test]
async fn files_are_copied_with_their_own_bytes_and_what_is_known_of_them() {
    let mut app = TestApp::spawn_with(&[("DRIVE_QUOTA_PRO_BYTES", "1000")]).await;
    let user = app.user(Some("Pro")).await;
    let other = app.user(Some("Pro")).await;
    let report = text_file(&app, &user, "report.txt", 3).await;
    ok(
        &app,
        &user,
        "/tag-files",
        json!({ "fileIds": [report], "tags": ["Q3"] }),
    )
    .await;
    ok(
        &app,
        &user,
        "/update-file-description",
        json!({ "fileId": report, "description": "the third quarter" }),
    )
    .await;
    app.start_worker(&[]).await;
    let checksum = app
        .run_job(&user, json!({ "jobType": "checksum", "fileIds": [report] }))
        .await;
    assert_done(&checksum);

    let copied = ok(
        &app,
        &user,
        "/copy-files",
        json!({ "fileIds": [report], "folder": "/Copies" }),
    )
    .await;
    let copy = &copied["copies"][0];
    assert_eq!(copy["from"], report.to_string());
    assert_eq!(copy["file"]["fileName"], "report.txt");
    assert_eq!(copy["file"]["isPublic"], false);
    assert_eq!(copied["folder"]["path"], "/Copies/");
    assert_eq!(copy["file"]["folderId"], copied["folder"]["id"]);
    let copy_id: FileId = copy["file"]["id"].as_str().unwrap().parse().unwrap();
    assert_ne!(copy_id, report);
    // Bytes of its own, under a key of its own; what is known of the source came along.
    assert_eq!(app.download(&user, &copy_id.to_string()).await, bytes(100, 3));
    assert_ne!(app.object_key(copy_id).await, app.object_key(report).await);
    let found = ok(&app, &user, "/search-files", json!({ "tags": ["q3"] })).await;
    let ids: Vec<&str> = found["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&copy_id.to_string().as_str()), "{found}");
    let described: Option<String> = sqlx::query_scalar("select description from files where id = $1")
        .bind(copy_id)
        .fetch_one(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(described.as_deref(), Some("the third quarter"));
    // Its digest came along: a checksum of the copy is answered at once, with no job run.
    let answered = ok(
        &app,
        &user,
        "/create-file-job",
        json!({ "jobType": "checksum", "fileIds": [copy_id] }),
    )
    .await;
    let answered = &answered["job"];
    assert_eq!(answered["state"], "done", "{answered}");
    assert_eq!(
        answered["result"]["checksums"][0]["digest"],
        checksum["result"]["checksums"][0]["digest"]
    );
    // Deleting the source leaves the copy whole.
    ok(&app, &user, "/delete-files", json!([{ "id": report }])).await;
    assert_eq!(app.download(&user, &copy_id.to_string()).await, bytes(100, 3));

    // Beside a file of its name, a copy is numbered.
    let again = ok(
        &app,
        &user,
        "/copy-files",
        json!({ "fileIds": [copy_id], "folderId": copied["folder"]["id"] }),
    )
    .await;
    assert_eq!(again["copies"][0]["file"]["fileName"], "report (2).txt");
    // Copies count against the storage limit: with 700 of 1000 bytes used, a copy of 500 and
    // one of 100 do not fit, and neither is made.
    let big = app
        .upload(
            &user,
            "big.bin",
            "Other",
            "application/octet-stream",
            bytes(500, 5),
        )
        .await;
    let usage = ok(&app, &user, "/get-user-storage-usage", json!({})).await;
    assert_eq!(usage["usedBytes"], 700, "{usage}");
    app.call(
        &user,
        "/copy-files",
        Some(json!({ "fileIds": [copy_id, big], "folder": "/" })),
    )
    .await
    .assert_bad_field("storage_limit_reached", "fileIds");
    assert_eq!(
        ok(&app, &user, "/get-user-storage-usage", json!({})).await["usedBytes"],
        700
    );
    assert_eq!(
        app.call(&user, "/select-user-files", None)
            .await
            .body
            .as_array()
            .unwrap()
            .len(),
        3
    );

    // Another account's ids are unknown ids; 0 or 501 ids and a missing folder are refused.
    let foreign = app
        .call(
            &other,
            "/copy-files",
            Some(json!({ "fileIds": [copy_id], "folder": "/" })),
        )
        .await;
    foreign.assert_error(404, "file_not_found");
    let unknown = app
        .call(
            &other,
            "/copy-files",
            Some(json!({ "fileIds": [uuid::Uuid::new_v4()], "folder": "/" })),
        )
        .await;
    assert_eq!(foreign.body, unknown.body);
    let many: Vec<String> = (0..501).map(|_| uuid::Uuid::new_v4().to_string()).collect();
    app.call(
        &user,
        "/copy-files",
        Some(json!({ "fileIds": many, "folder": "/" })),
    )
    .await
    .assert_bad_field("invalid_field", "fileIds");
    app.call(
        &user,
        "/copy-files",
        Some(json!({ "fileIds": [], "folder": "/" })),
    )
    .await
    .assert_bad_field("invalid_field", "fileIds");
    app.call(&user, "/copy-files", Some(json!({ "fileIds": [copy_id] })))
        .await
        .assert_bad_field("missing_field", "folder");
    app.call(
        &user,
        "/copy-files",
        Some(json!({ "fileIds": [copy_id], "folder": "/a/../b" })),
    )
    .await
    .assert_bad_field("invalid_field", "folder");
}

#[tokio::test]
async fn folders_move_and_rename_with_everything_in_them() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let other = app.user(Some("Pro")).await;
    let deep = text_file(&app, &user, "deep.txt", 4).await;
    let top = text_file(&app, &user, "top.txt", 5).await;
    ok(
        &app,
        &user,
        "/move-files",
        json!({ "fileIds": [deep], "folder": "/Work/2026/Q1" }),
    )
    .await;
    ok(
        &app,
        &user,
        "/move-files",
        json!({ "fileIds": [top], "folder": "/Work" }),
    )
    .await;
    let work = folder_id(&app, &user, "/Work/").await;
    let q1 = folder_id(&app, &user, "/Work/2026/Q1/").await;

    let moved = ok(
        &app,
        &user,
        "/move-folder",
        json!({ "folderId": work, "path": "/Archive/Old work" }),
    )
    .await;
    assert_eq!(moved["folder"]["path"], "/Archive/Old work/");
    assert_eq!(moved["folder"]["id"], work, "a folder keeps its id");
    assert_eq!(moved["from"], "/Work/");
    let mut paths = folder_paths(&app, &user).await;
    paths.sort();
    assert_eq!(
        paths,
        [
            "/Archive/",
            "/Archive/Old work/",
            "/Archive/Old work/2026/",
            "/Archive/Old work/2026/Q1/"
        ]
    );
    assert_eq!(
        path_of(&app, &user, deep, false).await,
        "/Archive/Old work/2026/Q1/"
    );
    assert_eq!(path_of(&app, &user, top, false).await, "/Archive/Old work/");
    assert_eq!(folder_id(&app, &user, "/Archive/Old work/2026/Q1/").await, q1);
    // A rename is a move to another last name.
    ok(
        &app,
        &user,
        "/move-folder",
        json!({ "folderId": q1, "path": "/Archive/Old work/2026/First quarter" }),
    )
    .await;
    assert_eq!(
        path_of(&app, &user, deep, false).await,
        "/Archive/Old work/2026/First quarter/"
    );

    // Into itself, to the top, onto a folder that is there, too deep, bad paths: refused.
    for path in ["/Archive/Old work/Inside", "/Archive/Old work", "/"] {
        let body = json!({ "folderId": work, "path": path });
        if path == "/Archive/Old work" {
            // Where it is already: nothing to do.
            assert_eq!(
                ok(&app, &user, "/move-folder", body).await["folder"]["path"],
                "/Archive/Old work/"
            );
            continue;
        }
        app.call(&user, "/move-folder", Some(body))
            .await
            .assert_bad_field("invalid_field", "path");
    }
    ok(
        &app,
        &user,
        "/move-files",
        json!({ "fileIds": [top], "folder": "/Taken/2026" }),
    )
    .await;
    let clash = app
        .call(
            &user,
            "/move-folder",
            Some(json!({ "folderId": work, "path": "/Taken" })),
        )
        .await;
    let body = clash.assert_error(409, "folder_path_taken");
    assert!(
        body["error"].as_str().unwrap().contains("/Taken/ is taken"),
        "{body}"
    );
    // It holds folders two levels down: at 31 levels they would be 33 deep.
    let deep_path: String = (1..=31).map(|n| format!("/{n}")).collect();
    app.call(
        &user,
        "/move-folder",
        Some(json!({ "folderId": work, "path": deep_path })),
    )
    .await
    .assert_bad_field("invalid_field", "path");
    for bad in ["Archive", "/a//b", "/a/../b", "/a/\u{7}"] {
        app.call(
            &user,
            "/move-folder",
            Some(json!({ "folderId": work, "path": bad })),
        )
        .await
        .assert_bad_field("invalid_field", "path");
    }
    // Another account's folder is an unknown folder.
    let foreign = app
        .call(
            &other,
            "/move-folder",
            Some(json!({ "folderId": work, "path": "/Mine" })),
        )
        .await;
    foreign.assert_error(404, "folder_not_found");
    let unknown = app
        .call(
            &other,
            "/move-folder",
            Some(json!({ "folderId": uuid::Uuid::new_v4(), "path": "/Mine" })),
        )
        .await;
    assert_eq!(foreign.body, unknown.body);

    let events = app.wait_events(&user, json!({ "kinds": ["moved"] }), 5).await;
    let folder_moves: Vec<(&Value, &Value)> = events
        .iter()
        .filter(|e| e.get("folder").is_some())
        .map(|e| (&e["fromPath"], &e["folder"]["path"]))
        .collect();
    assert_eq!(
        folder_moves,
        [
            (&json!("/Work"), &json!("/Archive/Old work")),
            (
                &json!("/Archive/Old work/2026/Q1"),
                &json!("/Archive/Old work/2026/First quarter")
            )
        ]
    );
    let file_moves: Vec<&Value> = events
        .iter()
        .filter_map(|e| e.get("file"))
        .map(|f| &f["id"])
        .collect();
    assert_eq!(file_moves, [&json!(deep), &json!(top), &json!(top)], "{events:?}");
}

#[tokio::test]
async fn a_deleted_folder_sends_its_files_to_the_trash_and_a_restore_puts_them_back() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let other = app.user(Some("Pro")).await;
    let plain = text_file(&app, &user, "plain.txt", 6).await;
    let shown = text_file(&app, &user, "shown.txt", 7).await;
    let gone_before = text_file(&app, &user, "before.txt", 8).await;
    ok(
        &app,
        &user,
        "/move-files",
        json!({ "fileIds": [plain, gone_before], "folder": "/Project" }),
    )
    .await;
    ok(
        &app,
        &user,
        "/move-files",
        json!({ "fileIds": [shown], "folder": "/Project/Public" }),
    )
    .await;
    let public = ok(&app, &user, "/toggle-file-access", json!({ "id": shown })).await;
    let permanent = public["downloadUrl"].as_str().unwrap().to_string();
    ok(&app, &user, "/trash-files", json!([{ "id": gone_before }])).await;
    let project = folder_id(&app, &user, "/Project/").await;

    let foreign = app
        .call(&other, "/delete-folder", Some(json!({ "folderId": project })))
        .await;
    foreign.assert_error(404, "folder_not_found");

    let deleted = ok(&app, &user, "/delete-folder", json!({ "folderId": project })).await;
    assert_eq!(deleted["deleted"]["path"], "/Project/");
    let mut trashed: Vec<String> = serde_json::from_value(deleted["trashed"].clone()).unwrap();
    trashed.sort();
    let mut expected = vec![plain.to_string(), shown.to_string()];
    expected.sort();
    assert_eq!(trashed, expected, "only the files it sent to the trash");
    assert!(folder_paths(&app, &user).await.is_empty());
    assert_eq!(
        reqwest::get(&permanent).await.unwrap().status(),
        404,
        "a trashed file is never public"
    );
    let trash = app.call(&user, "/select-trashed-files", None).await.body;
    assert_eq!(trash.as_array().unwrap().len(), 3);
    assert!(
        app.call(&user, "/select-user-files", None)
            .await
            .body
            .as_array()
            .unwrap()
            .is_empty()
    );

    // Restored, each goes back where it sat, the folders made again; the public one public.
    ok(
        &app,
        &user,
        "/restore-files",
        json!([{ "id": plain }, { "id": shown }, { "id": gone_before }]),
    )
    .await;
    assert_eq!(path_of(&app, &user, plain, false).await, "/Project/");
    assert_eq!(path_of(&app, &user, gone_before, false).await, "/Project/");
    assert_eq!(path_of(&app, &user, shown, false).await, "/Project/Public/");
    assert_eq!(reqwest::get(&permanent).await.unwrap().status(), 200);

    // A folder a file request drops into stays, and says why.
    let project = folder_id(&app, &user, "/Project/").await;
    ok(
        &app,
        &user,
        "/create-file-request",
        json!({ "title": "Invoices", "folder": "/Project/Inbox" }),
    )
    .await;
    let in_use = app
        .call(&user, "/delete-folder", Some(json!({ "folderId": project })))
        .await;
    let body = in_use.assert_error(409, "folder_in_use");
    assert!(body["error"].as_str().unwrap().contains("Invoices"), "{body}");

    let events = app
        .wait_events(&user, json!({ "kinds": ["trashed", "restored", "deleted"] }), 7)
        .await;
    let told: Vec<(&str, Option<&str>)> = events
        .iter()
        .map(|e| {
            (
                e["kind"].as_str().unwrap(),
                e.get("folder").map(|f| f["path"].as_str().unwrap()),
            )
        })
        .collect();
    assert_eq!(
        told,
        [
            ("trashed", None),
            ("trashed", None),
            ("trashed", None),
            ("deleted", Some("/Project")),
            ("restored", None),
            ("restored", None),
            ("restored", None)
        ],
        "{events:?}"
    );
}

#[tokio::test]
async fn playlists_and_galleries_are_renamed_emptied_out_and_deleted() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let other = app.user(Some("Pro")).await;
    let song = app
        .upload(&user, "a.mp3", "Audio", "audio/mpeg", bytes(64, 1))
        .await;
    let clip = app
        .upload(&user, "b.mp4", "Video", "video/mp4", bytes(64, 2))
        .await;
    let photo = app
        .upload(&user, "c.jpg", "Image", "image/jpeg", bytes(64, 3))
        .await;
    let playlist = ok(
        &app,
        &user,
        "/create-playlist",
        json!({ "title": "Road", "fileIds": [song, clip] }),
    )
    .await;
    let gallery = ok(
        &app,
        &user,
        "/create-gallery",
        json!({ "title": "Trip", "description": "Summer", "fileIds": [photo] }),
    )
    .await;
    let (pid, gid) = (playlist["id"].clone(), gallery["id"].clone());

    let renamed = ok(
        &app,
        &user,
        "/rename-playlist",
        json!({ "playlistId": pid, "title": " Road 2026 " }),
    )
    .await;
    assert_eq!(
        renamed,
        json!({ "id": pid, "title": "Road 2026", "isPublic": false, "fileCount": 2 })
    );
    let removed = ok(
        &app,
        &user,
        "/remove-from-playlist",
        json!({ "playlistId": pid, "fileIds": [song, photo] }),
    )
    .await;
    assert_eq!(removed["removed"], json!([song]));
    assert_eq!(removed["fileCount"], 1);
    ok(
        &app,
        &user,
        "/rename-gallery",
        json!({ "galleryId": gid, "title": "Trip", "description": "" }),
    )
    .await;
    let collections = ok(&app, &user, "/select-collections", json!({})).await;
    assert_eq!(collections["galleries"][0]["description"], Value::Null);
    assert_eq!(collections["playlists"][0]["title"], "Road 2026");
    ok(
        &app,
        &user,
        "/remove-from-gallery",
        json!({ "galleryId": gid, "fileIds": [photo] }),
    )
    .await;

    // Another account's collections are unknown ones; a title is 1 to 200 characters.
    for (route, body) in [
        ("/rename-playlist", json!({ "playlistId": pid, "title": "Mine" })),
        (
            "/remove-from-playlist",
            json!({ "playlistId": pid, "fileIds": [song] }),
        ),
        ("/delete-playlist", json!({ "playlistId": pid })),
    ] {
        app.call(&other, route, Some(body))
            .await
            .assert_error(404, "playlist_not_found");
    }
    app.call(&other, "/delete-gallery", Some(json!({ "galleryId": gid })))
        .await
        .assert_error(404, "gallery_not_found");
    app.call(
        &user,
        "/rename-playlist",
        Some(json!({ "playlistId": pid, "title": "x".repeat(201) })),
    )
    .await
    .assert_bad_field("invalid_field", "title");
    // A playlist's id is not a gallery's.
    app.call(&user, "/delete-gallery", Some(json!({ "galleryId": pid })))
        .await
        .assert_error(404, "gallery_not_found");

    assert_eq!(
        ok(&app, &user, "/delete-playlist", json!({ "playlistId": pid })).await["deleted"],
        pid
    );
    assert_eq!(
        ok(&app, &user, "/delete-gallery", json!({ "galleryId": gid })).await["deleted"],
        gid
    );
    let collections = ok(&app, &user, "/select-collections", json!({})).await;
    assert_eq!(collections["playlists"], json!([]));
    assert_eq!(collections["galleries"], json!([]));
    assert_eq!(
        app.call(&user, "/select-user-files", None)
            .await
            .body
            .as_array()
            .unwrap()
            .len(),
        3
    );
    app.call(&user, "/delete-playlist", Some(json!({ "playlistId": pid })))
        .await
        .assert_error(404, "playlist_not_found");
}

#[tokio::test]
async fn tags_and_file_requests_are_deleted_and_reviews_closed_keeping_what_came_of_them() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let other = app.user(Some("Pro")).await;
    let file = text_file(&app, &user, "tagged.txt", 9).await;
    let tagged = ok(
        &app,
        &user,
        "/tag-files",
        json!({ "fileIds": [file], "tags": ["Urgent"] }),
    )
    .await;
    let tag = tagged["tags"][0]["id"].clone();
    app.call(&other, "/delete-tag", Some(json!({ "tagId": tag })))
        .await
        .assert_error(404, "tag_not_found");
    assert_eq!(
        ok(&app, &user, "/delete-tag", json!({ "tagId": tag })).await["deleted"],
        tag
    );
    let found = ok(&app, &user, "/search-files", json!({ "tags": ["urgent"] })).await;
    assert_eq!(found["files"], json!([]), "the tag came off its file");
    assert_eq!(
        ok(&app, &user, "/select-collections", json!({})).await["tags"],
        json!([])
    );

    // A request's arrivals stay as files when it goes; its link stops working.
    let request = ok(&app, &user, "/create-file-request", json!({ "title": "Photos" })).await;
    let request_id = request["id"].as_str().unwrap().to_string();
    let sender = Sender::start(&app, &request_id, "Ann", None).await;
    sender.send(&app, "arrived.txt", b"from ann").await;
    app.call(
        &other,
        "/delete-file-request",
        Some(json!({ "requestId": request_id })),
    )
    .await
    .assert_error(404, "request_not_found");
    ok(
        &app,
        &user,
        "/delete-file-request",
        json!({ "requestId": request_id }),
    )
    .await;
    let files = app.call(&user, "/select-user-files", None).await.body;
    assert!(
        files
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["fileName"] == "arrived.txt"),
        "{files}"
    );
    assert_eq!(
        ok(&app, &user, "/select-file-requests", json!({})).await["requests"],
        json!([])
    );
    let late = senders::call(
        &app,
        "/start-request-drop",
        json!({ "requestId": request_id, "senderName": "Bo" }),
    )
    .await;
    late.assert_error(404, "request_not_found");
    let page = reqwest::get(format!("{}/requests/{request_id}", app.url))
        .await
        .unwrap();
    assert_eq!(page.status(), 404);

    // A closed review's page says it is closed and takes no note; the owner keeps its notes.
    let video = app
        .upload(&user, "cut.mp4", "Video", "video/mp4", bytes(64, 4))
        .await;
    let review = ok(&app, &user, "/create-file-review", json!({ "fileId": video })).await;
    let review_id = review["id"].clone();
    let note = json!({ "reviewId": review_id, "reviewerName": "Cy", "text": "Too long", "seconds": 1.0 });
    assert_eq!(
        senders::call(&app, "/add-review-note", note.clone()).await.status,
        200
    );
    app.call(
        &other,
        "/close-file-review",
        Some(json!({ "reviewId": review_id })),
    )
    .await
    .assert_error(404, "review_not_found");
    let closed = ok(
        &app,
        &user,
        "/close-file-review",
        json!({ "reviewId": review_id }),
    )
    .await;
    let again = ok(
        &app,
        &user,
        "/close-file-review",
        json!({ "reviewId": review_id }),
    )
    .await;
    assert_eq!(closed, again, "closing again answers when it closed");
    senders::call(&app, "/open-review", json!({ "reviewId": review_id }))
        .await
        .assert_error(403, "review_closed");
    senders::call(&app, "/add-review-note", note)
        .await
        .assert_error(403, "review_closed");
    let page = reqwest::get(review["url"].as_str().unwrap()).await.unwrap();
    assert_eq!(page.status(), 403);
    assert!(page.text().await.unwrap().contains("This review is closed"));
    let listed = ok(&app, &user, "/select-file-reviews", json!({})).await;
    assert_eq!(listed["reviews"][0]["closeTime"], closed["closeTime"]);
    assert_eq!(listed["reviews"][0]["notes"][0]["text"], "Too long");
}

#[tokio::test]
async fn a_zip_made_by_the_drive_keeps_each_file_s_modified_time() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let key = user.key("dated.txt");
    let input = json!({
        "type": "Text", "fileName": "dated.txt", "fileSize": 5, "objectKey": key, "mimeType": "text/plain",
    });
    let urls = ok(&app, &user, "/generate-file-urls", input.clone()).await;
    assert!(
        post_form(&urls, b"dated".to_vec(), "text/plain")
            .await
            .is_success()
    );
    let mut insert = input;
    insert["modifiedTime"] = json!("2024-03-05T06:07:08Z");
    let dated = ok(&app, &user, "/insert-file", insert).await["id"].clone();
    let undated = text_file(&app, &user, "undated.txt", 10).await;
    app.start_worker(&[]).await;
    let job = app
        .run_job(&user, json!({ "jobType": "zip", "fileIds": [dated, undated] }))
        .await;
    assert_done(&job);
    let zipped = app.download(&user, job["files"][0]["id"].as_str().unwrap()).await;
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(zipped)).unwrap();
    let mut entry = archive.by_name("dated.txt").unwrap();
    let dos = entry.last_modified().unwrap();
    assert_eq!(
        (
            dos.year(),
            dos.month(),
            dos.day(),
            dos.hour(),
            dos.minute(),
            dos.second()
        ),
        (2024, 3, 5, 6, 7, 8)
    );
    let unix = entry.extra_data_fields().find_map(|field| match field {
        zip::extra_fields::ExtraField::ExtendedTimestamp(t) => t.mod_time(),
        _ => None,
    });
    assert_eq!(unix, Some(1_709_618_828));
    let mut text = String::new();
    entry.read_to_string(&mut text).unwrap();
    assert_eq!(text, "dated");
    drop(entry);
    // One without a modified time is dated when it was recorded: today, not 1980.
    let undated = archive.by_name("undated.txt").unwrap();
    use chrono::Datelike;
    assert_eq!(
        undated.last_modified().unwrap().year() as i32,
        chrono::Utc::now().year()
    );
}
