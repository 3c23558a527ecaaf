//! Playlists, galleries and `/select-collections`.

use drive_core::id::{CollectionId, FileId};
use drive_tests::*;
use serde_json::{Value, json};

async fn ok(app: &TestApp, user: &TestUser, route: &str, body: Value) -> Value {
    let reply = app.call(user, route, Some(body)).await;
    assert_eq!(reply.status, 200, "{route}: {}", reply.body);
    reply.body
}

async fn file(app: &TestApp, user: &TestUser, name: &str, kind: &str) -> FileId {
    let mime = match kind {
        "Audio" => "audio/mpeg",
        "Video" => "video/mp4",
        "Image" => "image/jpeg",
        _ => "text/plain",
    };
    app.upload(user, name, kind, mime, bytes(10, name.len() as u8))
        .await
}

fn ids(value: &Value) -> Vec<FileId> {
    serde_json::from_value(value.clone()).unwrap()
}

#[tokio::test]
async fn playlists_take_audio_and_video_the_caller_can_see_in_order() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let other = app.user(Some("Pro")).await;
    let song = file(&app, &user, "song.mp3", "Audio").await;
    let clip = file(&app, &user, "clip.mp4", "Video").await;
    let photo = file(&app, &user, "photo.jpg", "Image").await;
    let trashed = file(&app, &user, "old.mp3", "Audio").await;
    app.call(&user, "/trash-files", Some(json!([{ "id": trashed }])))
        .await;
    let shared = file(&app, &other, "shared.mp3", "Audio").await;
    app.call(&other, "/toggle-file-access", Some(json!({ "id": shared })))
        .await;
    let hidden = file(&app, &other, "hidden.mp3", "Audio").await;
    let missing = FileId::random();

    let given = json!([clip, photo, shared, hidden, song, trashed, missing, clip]);
    let private = ok(
        &app,
        &user,
        "/create-playlist",
        json!({ "title": "Mix", "fileIds": given }),
    )
    .await;
    assert_eq!(ids(&private["fileIds"]), [clip, shared, song]);
    assert_eq!(ids(&private["skipped"]), [photo, hidden, trashed, missing]);
    assert_eq!(
        (
            private["title"].clone(),
            private["isPublic"].clone(),
            private["fileCount"].clone()
        ),
        (json!("Mix"), json!(false), json!(3))
    );
    assert!(private.get("featuredCount").is_none());

    // A public playlist takes only the caller's own.
    let public = ok(
        &app,
        &user,
        "/create-playlist",
        json!({ "title": "Out", "fileIds": given, "isPublic": true }),
    )
    .await;
    assert_eq!(ids(&public["fileIds"]), [clip, song]);
    let added = ok(
        &app,
        &user,
        "/add-to-playlist",
        json!({ "playlistId": public["id"], "fileIds": [shared, song] }),
    )
    .await;
    assert_eq!(ids(&added["fileIds"]), [clip, song]);
    assert_eq!(ids(&added["skipped"]), [shared]);
}

#[tokio::test]
async fn adding_appends_keeps_what_is_in_and_reordering_puts_named_files_first() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let mut songs = Vec::new();
    for n in 0..5 {
        songs.push(file(&app, &user, &format!("{n}.mp3"), "Audio").await);
    }
    let list = ok(
        &app,
        &user,
        "/create-playlist",
        json!({ "title": "L", "fileIds": [songs[0], songs[1]] }),
    )
    .await;
    let id = list["id"].clone();
    let added = ok(
        &app,
        &user,
        "/add-to-playlist",
        json!({ "playlistId": id, "fileIds": [songs[2], songs[0], songs[3]] }),
    )
    .await;
    assert_eq!(ids(&added["fileIds"]), [songs[0], songs[1], songs[2], songs[3]]);

    let reordered = ok(
        &app,
        &user,
        "/reorder-playlist",
        json!({ "playlistId": id, "fileIds": [songs[3], FileId::random(), songs[1]] }),
    )
    .await;
    assert_eq!(
        reordered,
        json!({ "id": id, "title": "L", "isPublic": false, "fileCount": 4 })
    );
    let now = ok(
        &app,
        &user,
        "/add-to-playlist",
        json!({ "playlistId": id, "fileIds": [songs[4]] }),
    )
    .await;
    assert_eq!(
        ids(&now["fileIds"]),
        [songs[3], songs[1], songs[0], songs[2], songs[4]]
    );
}

#[tokio::test]
async fn concurrent_adds_keep_each_others_files() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let mut songs = Vec::new();
    for n in 0..12 {
        songs.push(file(&app, &user, &format!("{n}.mp3"), "Audio").await);
    }
    let id = ok(&app, &user, "/create-playlist", json!({ "title": "Busy" })).await["id"].clone();
    let adds = songs.chunks(2).map(|pair| {
        app.call(
            &user,
            "/add-to-playlist",
            Some(json!({ "playlistId": id, "fileIds": pair })),
        )
    });
    for reply in futures::future::join_all(adds).await {
        assert_eq!(reply.status, 200, "{}", reply.body);
    }
    let last = ok(
        &app,
        &user,
        "/add-to-playlist",
        json!({ "playlistId": id, "fileIds": [songs[0]] }),
    )
    .await;
    let mut held = ids(&last["fileIds"]);
    assert_eq!(held.len(), 12);
    held.sort();
    songs.sort();
    assert_eq!(held, songs);
    let positions: Vec<i64> = sqlx::query_scalar("select position from collection_items order by position")
        .fetch_all(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(
        positions,
        (1..=12).collect::<Vec<i64>>(),
        "every file has its own place"
    );
}

#[tokio::test]
async fn galleries_take_images_with_featured_ones_up_front() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let mut photos = Vec::new();
    for n in 0..5 {
        photos.push(file(&app, &user, &format!("{n}.jpg"), "Image").await);
    }
    let song = file(&app, &user, "song.mp3", "Audio").await;
    let gallery = ok(
        &app,
        &user,
        "/create-gallery",
        json!({ "title": "Trip", "description": "Summer", "fileIds": [photos[0], photos[1], song, photos[2]], "featuredIds": [photos[2]] }),
    )
    .await;
    assert_eq!(ids(&gallery["fileIds"]), [photos[2], photos[0], photos[1]]);
    assert_eq!(ids(&gallery["skipped"]), [song]);
    assert_eq!(
        (gallery["description"].clone(), gallery["featuredCount"].clone()),
        (json!("Summer"), json!(1))
    );
    let id = gallery["id"].clone();

    let added = ok(
        &app,
        &user,
        "/add-to-gallery",
        json!({ "galleryId": id, "fileIds": [photos[3], photos[4]], "featuredIds": [photos[4]] }),
    )
    .await;
    assert_eq!(
        ids(&added["fileIds"]),
        [photos[2], photos[4], photos[0], photos[1], photos[3]]
    );

    // Without featuredIds featuring stays; with it, named images are featured exactly as listed.
    ok(
        &app,
        &user,
        "/reorder-gallery",
        json!({ "galleryId": id, "fileIds": [photos[1], photos[4]] }),
    )
    .await;
    let now = ok(
        &app,
        &user,
        "/add-to-gallery",
        json!({ "galleryId": id, "fileIds": [photos[0]] }),
    )
    .await;
    assert_eq!(
        ids(&now["fileIds"]),
        [photos[4], photos[2], photos[1], photos[0], photos[3]]
    );
    ok(
        &app,
        &user,
        "/reorder-gallery",
        json!({ "galleryId": id, "fileIds": [photos[1], photos[4]], "featuredIds": [photos[1]] }),
    )
    .await;
    let now = ok(
        &app,
        &user,
        "/add-to-gallery",
        json!({ "galleryId": id, "fileIds": [photos[0]] }),
    )
    .await;
    assert_eq!(
        ids(&now["fileIds"]),
        [photos[1], photos[2], photos[4], photos[0], photos[3]]
    );
    assert_eq!(now["featuredCount"], 2);
}

#[tokio::test]
async fn collections_list_folders_playlists_galleries_and_tags_with_counts() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let song = file(&app, &user, "song.mp3", "Audio").await;
    let photo = file(&app, &user, "photo.jpg", "Image").await;
    let gone = file(&app, &user, "gone.jpg", "Image").await;
    ok(
        &app,
        &user,
        "/move-files",
        json!({ "fileIds": [photo, gone], "folder": "/Pictures/2026" }),
    )
    .await;
    ok(
        &app,
        &user,
        "/tag-files",
        json!({ "fileIds": [song, photo, gone], "tags": ["Best"] }),
    )
    .await;
    app.call(&user, "/trash-files", Some(json!([{ "id": gone }])))
        .await;
    let playlist = ok(
        &app,
        &user,
        "/create-playlist",
        json!({ "title": "P", "fileIds": [song], "isPublic": true }),
    )
    .await;
    let gallery = ok(
        &app,
        &user,
        "/create-gallery",
        json!({ "title": "G", "fileIds": [photo], "featuredIds": [photo] }),
    )
    .await;

    let all = ok(&app, &user, "/select-collections", json!(null)).await;
    assert_eq!(all["folders"][0]["path"], "/Pictures/");
    assert_eq!(all["folders"][0]["fileCount"], 0);
    assert_eq!(all["folders"][1]["path"], "/Pictures/2026/");
    assert_eq!(all["folders"][1]["fileCount"], 1, "trashed files are not counted");
    assert_eq!(
        all["playlists"],
        json!([{ "id": playlist["id"], "title": "P", "isPublic": true, "fileCount": 1, "coverId": null, "fileIds": [song] }])
    );
    assert_eq!(
        all["galleries"],
        json!([{ "id": gallery["id"], "title": "G", "description": null, "isPublic": false, "fileCount": 1, "featuredCount": 1, "fileIds": [photo] }])
    );
    assert_eq!(
        all["tags"],
        json!([{ "id": all["tags"][0]["id"], "text": "Best", "fileCount": 2 }])
    );
}

#[tokio::test]
async fn bad_inputs_and_other_users_collections_are_refused() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let stranger = app.user(Some("Pro")).await;
    let song = file(&app, &user, "song.mp3", "Audio").await;
    let playlist = ok(
        &app,
        &user,
        "/create-playlist",
        json!({ "title": "Mine", "fileIds": [song] }),
    )
    .await["id"]
        .clone();
    let gallery = ok(&app, &user, "/create-gallery", json!({ "title": "Mine" })).await["id"].clone();

    let call = |route: &'static str, body: Value| app.call(&user, route, Some(body));
    call("/create-playlist", json!({ "fileIds": [] }))
        .await
        .assert_bad_field("missing_field", "title");
    call("/create-playlist", json!({ "title": "  " }))
        .await
        .assert_bad_field("invalid_field", "title");
    let many: Vec<FileId> = (0..501).map(|_| FileId::random()).collect();
    call("/create-playlist", json!({ "title": "x", "fileIds": many }))
        .await
        .assert_bad_field("invalid_field", "fileIds");
    call(
        "/add-to-playlist",
        json!({ "playlistId": playlist, "fileIds": [] }),
    )
    .await
    .assert_bad_field("invalid_field", "fileIds");
    call(
        "/reorder-playlist",
        json!({ "playlistId": playlist, "fileIds": [] }),
    )
    .await
    .assert_bad_field("invalid_field", "fileIds");
    call(
        "/create-gallery",
        json!({ "title": "x", "description": "d".repeat(2001) }),
    )
    .await
    .assert_bad_field("invalid_field", "description");

    for (route, body) in [
        (
            "/add-to-playlist",
            json!({ "playlistId": playlist, "fileIds": [song] }),
        ),
        (
            "/reorder-playlist",
            json!({ "playlistId": playlist, "fileIds": [song] }),
        ),
        (
            "/add-to-playlist",
            json!({ "playlistId": CollectionId::random(), "fileIds": [song] }),
        ),
    ] {
        app.call(&stranger, route, Some(body))
            .await
            .assert_error(404, "playlist_not_found");
    }
    for (route, body) in [
        (
            "/add-to-gallery",
            json!({ "galleryId": gallery, "fileIds": [song] }),
        ),
        (
            "/reorder-gallery",
            json!({ "galleryId": gallery, "fileIds": [song] }),
        ),
        // A playlist's id is no gallery.
        (
            "/add-to-gallery",
            json!({ "galleryId": playlist, "fileIds": [song] }),
        ),
    ] {
        app.call(&stranger, route, Some(body.clone()))
            .await
            .assert_error(404, "gallery_not_found");
    }
    app.call(
        &user,
        "/add-to-gallery",
        Some(json!({ "galleryId": playlist, "fileIds": [song] })),
    )
    .await
    .assert_error(404, "gallery_not_found");
    // The stranger cannot pull the owner's private file into a playlist of theirs.
    let theirs = ok(
        &app,
        &stranger,
        "/create-playlist",
        json!({ "title": "T", "fileIds": [song] }),
    )
    .await;
    assert_eq!(ids(&theirs["skipped"]), [song]);
    let nothing = ok(&app, &stranger, "/select-collections", json!(null)).await;
    assert_eq!(nothing["galleries"], json!([]));
    assert_eq!(nothing["playlists"].as_array().unwrap().len(), 1);
}
