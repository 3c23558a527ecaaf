//! `/search-files` by metadata. Metadata is seeded through `store_metadata`, the path
//! extraction writes by.

use chrono::{TimeZone, Utc};
use drive_core::db::search::store_metadata;
use drive_core::id::FileId;
use drive_core::metadata::{Location, Metadata, MusicalKey};
use drive_tests::*;
use serde_json::{Value, json};

async fn search(app: &TestApp, user: &TestUser, body: Value) -> Value {
    let reply = app.call(user, "/search-files", Some(body)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body
}

async fn found(app: &TestApp, user: &TestUser, body: Value) -> Vec<FileId> {
    let answer = search(app, user, body).await;
    answer["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().parse().unwrap())
        .collect()
}

async fn sorted(app: &TestApp, user: &TestUser, body: Value) -> Vec<FileId> {
    let mut ids = found(app, user, body).await;
    ids.sort();
    ids
}

fn set(ids: &[FileId]) -> Vec<FileId> {
    let mut ids = ids.to_vec();
    ids.sort();
    ids
}

async fn seed(app: &TestApp, id: FileId, metadata: Metadata) {
    let pool = sqlx::PgPool::connect(&app.database_url).await.unwrap();
    store_metadata(&pool, id, &metadata).await.unwrap();
}

/// A small library: two tracks, a video, two photos and a document, with metadata.
struct Library {
    track: FileId,
    other_track: FileId,
    video: FileId,
    beach: FileId,
    fiji: FileId,
    notes: FileId,
}

async fn library(app: &TestApp, user: &TestUser) -> Library {
    let up = |name: &'static str, kind: &'static str, size: usize| async move {
        app.upload(user, name, kind, "application/octet-stream", bytes(size, 1))
            .await
    };
    let lib = Library {
        track: up("01.mp3", "Audio", 300).await,
        other_track: up("02.flac", "Audio", 3000).await,
        video: up("clip.mp4", "Video", 5000).await,
        beach: up("IMG_1.jpg", "Image", 800).await,
        fiji: up("IMG_2.jpg", "Image", 900).await,
        notes: up("Notes on Sunsets.txt", "Text", 100).await,
    };
    seed(
        app,
        lib.track,
        Metadata {
            title: Some("Blue Monday".into()),
            artists: vec!["New Order".into()],
            album: Some("Power, Corruption & Lies".into()),
            genre: Some("Synth-pop".into()),
            duration_seconds: Some(449.0),
            tempo_bpm: Some(130.0),
            key: MusicalKey::parse("Db minor"),
            ..Metadata::default()
        },
    )
    .await;
    seed(
        app,
        lib.other_track,
        Metadata {
            title: Some("Slow Song".into()),
            artists: vec!["Someone Else".into()],
            duration_seconds: Some(200.0),
            tempo_bpm: Some(70.0),
            key: MusicalKey::parse("C# major"),
            ..Metadata::default()
        },
    )
    .await;
    seed(
        app,
        lib.video,
        Metadata {
            title: Some("Beach day".into()),
            duration_seconds: Some(30.0),
            taken_time: Some(Utc.with_ymd_and_hms(2024, 7, 1, 12, 0, 0).unwrap()),
            ..Metadata::default()
        },
    )
    .await;
    seed(
        app,
        lib.beach,
        Metadata {
            taken_time: Some(Utc.with_ymd_and_hms(2025, 8, 15, 9, 0, 0).unwrap()),
            location: Some(Location {
                latitude: 43.3,
                longitude: 5.4,
            }), // Marseille
            ..Metadata::default()
        },
    )
    .await;
    seed(
        app,
        lib.fiji,
        Metadata {
            taken_time: Some(Utc.with_ymd_and_hms(2026, 1, 2, 9, 0, 0).unwrap()),
            location: Some(Location {
                latitude: -17.7,
                longitude: 178.1,
            }), // Fiji, by the antimeridian
            ..Metadata::default()
        },
    )
    .await;
    lib
}

#[tokio::test]
async fn text_needs_every_word_somewhere_in_a_files_words() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let lib = library(&app, &user).await;
    app.call(
        &user,
        "/update-file-description",
        Some(json!({ "fileId": lib.beach, "description": "Calanques at dawn" })),
    )
    .await;
    app.call(
        &user,
        "/tag-files",
        Some(json!({ "fileIds": [lib.fiji], "tags": ["Honeymoon"] })),
    )
    .await;

    assert_eq!(
        found(&app, &user, json!({ "text": "blue MONDAY" })).await,
        [lib.track]
    );
    assert_eq!(
        found(&app, &user, json!({ "text": "new order" })).await,
        [lib.track]
    );
    assert_eq!(
        found(&app, &user, json!({ "text": "corruption synth" })).await,
        [lib.track]
    );
    assert_eq!(
        found(&app, &user, json!({ "text": "calanques" })).await,
        [lib.beach]
    );
    assert_eq!(
        found(&app, &user, json!({ "text": "honeymoon" })).await,
        [lib.fiji]
    );
    let untag = json!({ "fileIds": [lib.fiji], "tags": ["honeymoon"], "action": "remove" });
    app.call(&user, "/tag-files", Some(untag)).await;
    assert!(
        found(&app, &user, json!({ "text": "honeymoon" }))
            .await
            .is_empty(),
        "a removed tag is no longer a word of the file"
    );
    assert_eq!(
        found(&app, &user, json!({ "text": "sunsets notes" })).await,
        [lib.notes]
    );
    assert_eq!(
        sorted(&app, &user, json!({ "text": "beach" })).await,
        set(&[lib.video])
    );
    assert!(
        found(&app, &user, json!({ "text": "blue tuesday" }))
            .await
            .is_empty()
    );
    assert!(
        found(&app, &user, json!({ "text": "100%" })).await.is_empty(),
        "% is a character, not a wildcard"
    );

    // Trashed files are not found.
    app.call(&user, "/trash-files", Some(json!([{ "id": lib.track }])))
        .await;
    assert!(
        found(&app, &user, json!({ "text": "blue monday" }))
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn every_metadata_filter_narrows_the_result() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let lib = library(&app, &user).await;
    let all = [
        lib.track,
        lib.other_track,
        lib.video,
        lib.beach,
        lib.fiji,
        lib.notes,
    ];
    assert_eq!(sorted(&app, &user, json!(null)).await, set(&all));

    assert_eq!(
        sorted(&app, &user, json!({ "types": ["Audio", "Video"] })).await,
        set(&[lib.track, lib.other_track, lib.video])
    );
    assert_eq!(
        sorted(&app, &user, json!({ "minDuration": 100, "maxDuration": 300 })).await,
        set(&[lib.other_track])
    );
    assert_eq!(
        sorted(&app, &user, json!({ "minSize": 800, "maxSize": 3000 })).await,
        set(&[lib.other_track, lib.beach, lib.fiji])
    );
    assert_eq!(
        sorted(&app, &user, json!({ "minTempo": 100 })).await,
        set(&[lib.track])
    );
    assert_eq!(
        sorted(&app, &user, json!({ "maxTempo": 100 })).await,
        set(&[lib.other_track])
    );
    // C# and Db are one key; without a mode either matches.
    assert_eq!(
        sorted(&app, &user, json!({ "key": "C#" })).await,
        set(&[lib.track, lib.other_track])
    );
    assert_eq!(
        sorted(&app, &user, json!({ "key": "c# minor" })).await,
        set(&[lib.track])
    );
    assert_eq!(
        sorted(&app, &user, json!({ "key": "Dbmaj" })).await,
        set(&[lib.other_track])
    );
    assert_eq!(
        sorted(&app, &user, json!({ "takenAfter": "2025-01-01T00:00:00Z" })).await,
        set(&[lib.beach, lib.fiji])
    );
    assert_eq!(
        sorted(&app, &user, json!({ "takenBefore": "2025-01-01T00:00:00Z" })).await,
        set(&[lib.video])
    );
    let europe = json!({ "south": 35, "west": -10, "north": 60, "east": 30 });
    assert_eq!(found(&app, &user, json!({ "within": europe })).await, [lib.beach]);
    // West past east: the box wraps across the antimeridian.
    let pacific = json!({ "south": -30, "west": 170, "north": 0, "east": -170 });
    assert_eq!(found(&app, &user, json!({ "within": pacific })).await, [lib.fiji]);
    let not_wrapping = json!({ "south": -30, "west": -170, "north": 0, "east": 170 });
    assert!(
        found(&app, &user, json!({ "within": not_wrapping }))
            .await
            .is_empty()
    );

    app.call(&user, "/toggle-file-access", Some(json!({ "id": lib.notes })))
        .await;
    let public = search(&app, &user, json!({ "isPublic": true })).await;
    assert_eq!(public["files"][0]["id"], json!(lib.notes));
    assert_eq!(
        public["files"][0]["downloadUrl"],
        json!(format!("{}/p/{}", app.url, lib.notes)),
        "a public file's permanent link"
    );
    assert_eq!(public["files"].as_array().unwrap().len(), 1);

    app.call(
        &user,
        "/tag-files",
        Some(json!({ "fileIds": [lib.beach, lib.fiji], "tags": ["Trip"] })),
    )
    .await;
    app.call(
        &user,
        "/tag-files",
        Some(json!({ "fileIds": [lib.fiji], "tags": ["Best"] })),
    )
    .await;
    assert_eq!(
        sorted(&app, &user, json!({ "tags": ["trip"] })).await,
        set(&[lib.beach, lib.fiji])
    );
    assert_eq!(
        found(&app, &user, json!({ "tags": ["TRIP", "best"] })).await,
        [lib.fiji]
    );

    app.call(
        &user,
        "/move-files",
        Some(json!({ "fileIds": [lib.beach], "folder": "/Photos/2025" })),
    )
    .await;
    app.call(
        &user,
        "/move-files",
        Some(json!({ "fileIds": [lib.fiji], "folder": "/Photos" })),
    )
    .await;
    assert_eq!(
        sorted(&app, &user, json!({ "folder": "/Photos" })).await,
        set(&[lib.beach, lib.fiji])
    );
    let in_2025 = search(&app, &user, json!({ "folder": "/Photos/2025/" })).await;
    assert_eq!(in_2025["files"][0]["folder"], "/Photos/2025/");
    assert_eq!(in_2025["files"].as_array().unwrap().len(), 1);

    let uploaded_window = json!({ "uploadedAfter": (Utc::now() - chrono::TimeDelta::hours(1)).to_rfc3339(), "uploadedBefore": Utc::now().to_rfc3339() });
    assert_eq!(found(&app, &user, uploaded_window).await.len(), 6);
    assert!(
        found(&app, &user, json!({ "uploadedBefore": "2020-01-01T00:00:00Z" }))
            .await
            .is_empty()
    );

    // A result carries the metadata it was found by.
    let track = search(&app, &user, json!({ "text": "blue monday" })).await["files"][0].clone();
    assert_eq!(track["title"], "Blue Monday");
    assert_eq!(track["artists"], json!(["New Order"]));
    assert_eq!(
        (
            track["duration"].clone(),
            track["tempo"].clone(),
            track["key"].clone()
        ),
        (json!(449.0), json!(130.0), json!("C# minor"))
    );
    assert_eq!(track["folder"], "/");
}

#[tokio::test]
async fn sorts_and_pages_with_next_offset() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let lib = library(&app, &user).await;
    assert_eq!(
        found(&app, &user, json!({ "sort": "largest", "limit": 2 })).await,
        [lib.video, lib.other_track]
    );
    assert_eq!(
        found(&app, &user, json!({ "sort": "smallest", "limit": 1 })).await,
        [lib.notes]
    );
    assert_eq!(
        found(&app, &user, json!({ "sort": "name", "limit": 2 })).await,
        [lib.track, lib.other_track]
    );
    assert_eq!(
        found(&app, &user, json!({ "sort": "oldest", "limit": 1 })).await,
        [lib.track]
    );
    assert_eq!(found(&app, &user, json!({ "limit": 1 })).await, [lib.notes]);

    let mut seen = Vec::new();
    let mut offset = json!(0);
    while !offset.is_null() {
        let page = search(
            &app,
            &user,
            json!({ "sort": "name", "limit": 4, "offset": offset }),
        )
        .await;
        seen.extend(
            page["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["fileName"].as_str().unwrap().to_string()),
        );
        offset = page["nextOffset"].clone();
    }
    assert_eq!(
        seen,
        [
            "01.mp3",
            "02.flac",
            "clip.mp4",
            "IMG_1.jpg",
            "IMG_2.jpg",
            "Notes on Sunsets.txt"
        ]
    );
}

/// Every page of `body` walked by `nextCursor`, `between` run after the first; the ids found.
async fn walked<F: AsyncFnMut()>(app: &TestApp, user: &TestUser, body: Value, mut between: F) -> Vec<FileId> {
    let (mut ids, mut cursor, mut pages) = (Vec::new(), Value::Null, 0);
    loop {
        let mut asked = body.clone();
        asked["cursor"] = cursor;
        let page = search(app, user, asked).await;
        let files = page["files"].as_array().unwrap();
        ids.extend(
            files
                .iter()
                .map(|f| f["id"].as_str().unwrap().parse::<FileId>().unwrap()),
        );
        assert!(pages == 0 || page["nextOffset"].is_null(), "{page}");
        cursor = page["nextCursor"].clone();
        pages += 1;
        if cursor.is_null() {
            return ids;
        }
        assert_eq!(
            files.len() as u64,
            body["limit"].as_u64().unwrap(),
            "a full page before the last"
        );
        if pages == 1 {
            between().await;
        }
    }
}

#[tokio::test]
async fn a_cursor_walks_every_sort_ties_and_all_and_files_coming_or_going_shift_nothing() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let lib = library(&app, &user).await;
    // Ties in every sort: copies made together share one upload time, and each has its
    // source's name and size; one more in a folder below, for a folder's walk by name.
    for (files, folder) in [
        (vec![lib.track, lib.notes, lib.beach], "/Copies"),
        (vec![lib.track], "/Copies/Deeper"),
    ] {
        let copied = app
            .call(
                &user,
                "/copy-files",
                Some(json!({ "fileIds": files, "folder": folder })),
            )
            .await;
        assert_eq!(copied.status, 200, "{}", copied.body);
    }
    for sort in ["newest", "oldest", "largest", "smallest", "name"] {
        let whole = found(&app, &user, json!({ "sort": sort, "limit": 200 })).await;
        assert_eq!(whole.len(), 10);
        for limit in [1, 3] {
            let walk = walked(&app, &user, json!({ "sort": sort, "limit": limit }), async || {}).await;
            assert_eq!(walk, whole, "{sort} by {limit}");
        }
    }
    let in_copies = json!({ "folder": "/Copies", "sort": "name", "limit": 1 });
    let whole = found(&app, &user, json!({ "folder": "/Copies", "sort": "name" })).await;
    assert_eq!(whole.len(), 4);
    assert_eq!(walked(&app, &user, in_copies, async || {}).await, whole);

    // A file uploaded after the first page is newer than its cursor, and one trashed further on
    // is simply not there: the rest come once each.
    let before = found(&app, &user, json!({ "limit": 200 })).await;
    let gone = before[5];
    let walk = walked(&app, &user, json!({ "limit": 2 }), async || {
        app.upload(&user, "late.txt", "Text", "text/plain", bytes(10, 9))
            .await;
        let trashed = app
            .call(&user, "/trash-files", Some(json!([{ "id": gone }])))
            .await;
        assert_eq!(trashed.status, 200, "{}", trashed.body);
    })
    .await;
    let expected: Vec<FileId> = before.iter().copied().filter(|id| *id != gone).collect();
    assert_eq!(walk, expected);

    // A cursor goes with its own sort, alone, and only as the service made it.
    let newest = search(&app, &user, json!({ "limit": 1 })).await["nextCursor"].clone();
    let id = lib.track;
    for body in [
        json!({ "cursor": "nonsense" }),
        json!({ "cursor": "" }),
        json!({ "cursor": format!("n{id}.soon") }),
        json!({ "cursor": format!("n{id}.-8000000000000000000") }),
        json!({ "cursor": format!("l{id}.99999999999999999999") }),
        json!({ "cursor": format!("a{id}.") }),
        json!({ "cursor": format!("x{id}.1") }),
        json!({ "cursor": newest, "sort": "name" }),
        json!({ "cursor": newest, "offset": 0 }),
    ] {
        app.call(&user, "/search-files", Some(body))
            .await
            .assert_bad_field("invalid_field", "cursor");
    }
    // With `query` the answer is one page: a cursor, like `sort` and `offset`, does not apply.
    let inside = search(&app, &user, json!({ "cursor": "anything", "query": "monday" })).await;
    assert!(
        inside["moments"].is_array() && inside["nextCursor"].is_null(),
        "{inside}"
    );
}

#[tokio::test]
async fn text_also_finds_folders_by_name_the_exact_one_first() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let file = app
        .upload(&user, "a.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    for folder in [
        "/Archive/Old Holidays",
        "/Holidays/2026",
        "/Work/Holidays",
        "/Holidays",
    ] {
        app.call(
            &user,
            "/move-files",
            Some(json!({ "fileIds": [file], "folder": folder })),
        )
        .await;
    }
    let answer = search(&app, &user, json!({ "text": "holidays" })).await;
    let paths: Vec<&str> = answer["folders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["/Holidays/", "/Work/Holidays/", "/Archive/Old Holidays/"]);
    assert_eq!(answer["folders"][0]["name"], "Holidays");
    assert_eq!(answer["folders"][0]["fileCount"], 1);

    // Every word in the path, one in the folder's own name.
    let nested = search(&app, &user, json!({ "text": "holidays 2026" })).await;
    assert_eq!(nested["folders"][0]["path"], "/Holidays/2026/");
    assert_eq!(nested["folders"].as_array().unwrap().len(), 1);
    let inside = search(&app, &user, json!({ "text": "holidays", "folder": "/Work" })).await;
    assert_eq!(inside["folders"][0]["path"], "/Work/Holidays/");
    assert_eq!(inside["folders"].as_array().unwrap().len(), 1);
    // Only on the first page, and only when nothing narrows files by what they are.
    assert!(
        search(&app, &user, json!({ "text": "holidays", "offset": 1 }))
            .await
            .get("folders")
            .is_none()
    );
    assert!(
        search(&app, &user, json!({ "text": "holidays", "types": ["Text"] }))
            .await
            .get("folders")
            .is_none()
    );
    assert!(search(&app, &user, json!({})).await.get("folders").is_none());
}

#[tokio::test]
async fn bad_filters_are_refused_naming_the_field_and_others_files_never_show() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let stranger = app.user(Some("Pro")).await;
    library(&app, &user).await;
    for (body, field) in [
        (json!({ "limit": 0 }), "limit"),
        (json!({ "limit": 201 }), "limit"),
        (json!({ "offset": -1 }), "offset"),
        (json!({ "minSize": -1 }), "minSize"),
        (json!({ "maxDuration": -0.5 }), "maxDuration"),
        (json!({ "minTempo": "fast" }), "minTempo"),
        (json!({ "key": "H minor" }), "key"),
        (json!({ "types": ["Hologram"] }), "types"),
        (json!({ "sort": "random" }), "sort"),
        (json!({ "uploadedAfter": "yesterday" }), "uploadedAfter"),
        (json!({ "folder": "Photos" }), "folder"),
        (json!({ "text": "x".repeat(501) }), "text"),
        (
            json!({ "within": { "south": -91, "west": 0, "north": 0, "east": 0 } }),
            "within.south",
        ),
        (
            json!({ "within": { "south": 0, "west": 0, "north": 0, "east": 181 } }),
            "within.east",
        ),
        (json!({ "query": "x".repeat(501) }), "query"),
        (json!({ "fileName": "" }), "fileName"),
        (json!({ "fileName": "a/b.txt" }), "fileName"),
    ] {
        app.call(&user, "/search-files", Some(body))
            .await
            .assert_bad_field("invalid_field", field);
    }
    app.call(
        &user,
        "/search-files",
        Some(json!({ "within": { "south": 0, "west": 0, "north": 1 } })),
    )
    .await
    .assert_bad_field("missing_field", "within.east");
    assert_eq!(search(&app, &stranger, json!(null)).await["files"], json!([]));
    assert_eq!(
        search(&app, &stranger, json!({ "text": "blue" })).await["files"],
        json!([])
    );
}

#[tokio::test]
async fn a_folder_in_name_order_pages_across_its_subfolders_and_tags_and_short_words_narrow() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let lib = library(&app, &user).await;
    for (files, folder) in [
        (vec![lib.track, lib.other_track, lib.fiji], "/Photos/2025"),
        (vec![lib.video], "/Photos/2025/July"),
        (vec![lib.beach], "/Photos"),
        (vec![lib.notes], "/Photographs"),
    ] {
        app.call(
            &user,
            "/move-files",
            Some(json!({ "fileIds": files, "folder": folder })),
        )
        .await;
    }
    // Each folder of the subtree gives its own first files in name order; a page is taken from
    // all of them together, however deep the offset reaches into one folder.
    let in_name_order = [lib.track, lib.other_track, lib.video, lib.beach, lib.fiji];
    assert_eq!(
        found(&app, &user, json!({ "folder": "/Photos", "sort": "name" })).await,
        in_name_order
    );
    for (offset, id) in in_name_order.iter().enumerate() {
        let page = search(
            &app,
            &user,
            json!({ "folder": "/Photos", "sort": "name", "limit": 1, "offset": offset }),
        )
        .await;
        assert_eq!(page["files"][0]["id"], json!(id), "{page}");
        assert_eq!(page["files"].as_array().unwrap().len(), 1);
        assert_eq!(page["nextOffset"].is_null(), offset == 4, "{page}");
    }
    assert_eq!(
        found(
            &app,
            &user,
            json!({ "folder": "/Photos", "sort": "name", "limit": 2, "offset": 3 })
        )
        .await,
        [lib.beach, lib.fiji]
    );
    assert_eq!(
        found(
            &app,
            &user,
            json!({ "folder": "/Photos", "sort": "name", "types": ["Image"] })
        )
        .await,
        [lib.beach, lib.fiji]
    );

    app.call(
        &user,
        "/tag-files",
        Some(json!({ "fileIds": [lib.beach, lib.fiji, lib.track], "tags": ["Trip"] })),
    )
    .await;
    app.call(
        &user,
        "/tag-files",
        Some(json!({ "fileIds": [lib.fiji, lib.track], "tags": ["Best"] })),
    )
    .await;
    app.call(
        &user,
        "/tag-files",
        Some(json!({ "fileIds": [lib.fiji], "tags": ["Rare"] })),
    )
    .await;
    assert_eq!(
        sorted(&app, &user, json!({ "tags": ["best"] })).await,
        set(&[lib.fiji, lib.track])
    );
    assert_eq!(
        found(&app, &user, json!({ "tags": ["trip", "BEST", "rare"] })).await,
        [lib.fiji]
    );
    assert_eq!(
        found(
            &app,
            &user,
            json!({ "tags": ["trip", "best"], "folder": "/Photos", "sort": "name" })
        )
        .await,
        [lib.track, lib.fiji]
    );
    assert!(
        found(&app, &user, json!({ "tags": ["trip", "nobody's tag"] }))
            .await
            .is_empty(),
        "a name that is no tag of the caller's matches no file"
    );

    // Words too short for the trigram index still narrow, alone or beside longer ones.
    assert_eq!(found(&app, &user, json!({ "text": "01" })).await, [lib.track]);
    assert_eq!(
        found(&app, &user, json!({ "text": "blue 01" })).await,
        [lib.track]
    );
    assert!(found(&app, &user, json!({ "text": "blue 02" })).await.is_empty());
}

#[tokio::test]
async fn a_file_is_found_by_its_exact_name_and_size_as_a_client_looks_for_one_it_stored() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let stranger = app.user(Some("Pro")).await;
    let name = "Report (final) ü #2.pdf";
    let wanted = app
        .upload(&user, name, "Pdf", "application/pdf", bytes(120, 1))
        .await;
    let bigger = app
        .upload(&user, name, "Pdf", "application/pdf", bytes(121, 2))
        .await;
    app.upload(
        &user,
        "report (final) ü #2.pdf",
        "Pdf",
        "application/pdf",
        bytes(120, 3),
    )
    .await;
    app.upload(
        &user,
        "Report (final) ü #2.pdf.bak",
        "Other",
        "application/octet-stream",
        bytes(120, 4),
    )
    .await;
    app.upload(&stranger, name, "Pdf", "application/pdf", bytes(120, 5))
        .await;

    // The whole name, case and all: not a word of it, not another case, not a longer name.
    assert_eq!(
        sorted(&app, &user, json!({ "fileName": name })).await,
        set(&[wanted, bigger])
    );
    let exact = json!({ "fileName": name, "minSize": 120, "maxSize": 120 });
    let answer = search(&app, &user, exact.clone()).await;
    assert_eq!(answer["files"].as_array().unwrap().len(), 1, "{answer}");
    let file = &answer["files"][0];
    assert_eq!(file["id"], wanted.to_string());
    assert_eq!(file["fileName"], name);
    assert!(file["modifiedTime"].is_string() || file["modifiedTime"].is_null());
    assert_eq!(file["folder"], "/");
    assert_eq!(file["folderId"], Value::Null, "at the top");
    assert_eq!(
        found(&app, &stranger, json!({ "fileName": "nothing.pdf" })).await,
        []
    );

    // A file in a folder carries its folder's id, as the file's own record does.
    let moved = app
        .call(
            &user,
            "/move-files",
            Some(json!({ "fileIds": [wanted], "folder": "/Reports" })),
        )
        .await;
    assert_eq!(moved.status, 200, "{}", moved.body);
    let record = app
        .call(&user, "/generate-download-url", Some(json!({ "id": wanted })))
        .await;
    let answer = search(&app, &user, exact).await;
    assert_eq!(answer["files"][0]["folder"], "/Reports/");
    assert_eq!(
        answer["files"][0]["folderId"], record.body["folderId"],
        "{}",
        record.body
    );
    assert!(answer["files"][0]["folderId"].is_string());
}
