//! `/set-cover` and `/set-video-thumbnail` over real HTTP: a picture on a track, a playlist and
//! a video, a video's frame taken by a job, taking them off, and what each refuses.

use drive_tests::media::{ffmpeg, scanned_page, video_of};
use drive_tests::*;
use serde_json::{Value, json};

/// The `artworkId` `/search-files` shows for `file`.
async fn artwork(app: &TestApp, user: &TestUser, file: &str, kind: &str) -> Value {
    let found = app
        .call(user, "/search-files", Some(json!({ "types": [kind] })))
        .await;
    assert_eq!(found.status, 200, "{}", found.body);
    found.body["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == file)
        .unwrap_or_else(|| panic!("{file} not found: {}", found.body))["artworkId"]
        .clone()
}

#[tokio::test]
async fn a_picture_goes_on_a_track_and_a_playlist_and_comes_off_again() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let other = app.user(Some("Pro")).await;
    let wav = ffmpeg(&["-f", "lavfi", "-i", "sine=frequency=440:duration=1"], "wav");
    let track = app
        .upload(&user, "tone.wav", "Audio", "audio/wav", wav)
        .await
        .to_string();
    let image = app
        .upload(&user, "art.png", "Image", "image/png", scanned_page(&["ART"]))
        .await
        .to_string();
    let text = app
        .upload(&user, "t.txt", "Text", "text/plain", bytes(5, 1))
        .await
        .to_string();
    let theirs = app
        .upload(&other, "theirs.png", "Image", "image/png", scanned_page(&["X"]))
        .await
        .to_string();

    let set = app
        .call(
            &user,
            "/set-cover",
            Some(json!({ "fileId": track, "imageId": image })),
        )
        .await;
    assert_eq!(set.status, 200, "{}", set.body);
    assert_eq!(set.body, json!({ "id": track, "imageId": image }));
    assert_eq!(artwork(&app, &user, &track, "Audio").await, image);

    let playlist = app
        .call(
            &user,
            "/create-playlist",
            Some(json!({ "title": "Tones", "fileIds": [track] })),
        )
        .await;
    assert_eq!(playlist.status, 200, "{}", playlist.body);
    let playlist_id = playlist.body["id"].clone();
    let set = app
        .call(
            &user,
            "/set-cover",
            Some(json!({ "playlistId": playlist_id, "imageId": image })),
        )
        .await;
    assert_eq!(set.status, 200, "{}", set.body);
    let collections = app.call(&user, "/select-collections", None).await;
    assert_eq!(
        collections.body["playlists"][0]["coverId"],
        image.as_str(),
        "{}",
        collections.body
    );

    // Off again: null.
    let off = app
        .call(
            &user,
            "/set-cover",
            Some(json!({ "playlistId": playlist_id, "imageId": null })),
        )
        .await;
    assert_eq!(off.status, 200, "{}", off.body);
    assert_eq!(
        app.call(&user, "/select-collections", None).await.body["playlists"][0]["coverId"],
        Value::Null
    );
    // Deleting the picture takes it off the track.
    let deleted = app
        .call(&user, "/delete-files", Some(json!([{ "id": image }])))
        .await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    assert_ne!(artwork(&app, &user, &track, "Audio").await, image.as_str());

    // What is refused.
    let refused = |body: Value| {
        let app = &app;
        let user = &user;
        async move { app.call(user, "/set-cover", Some(body)).await }
    };
    refused(json!({ "fileId": track, "imageId": text }))
        .await
        .assert_bad_field("invalid_field", "imageId");
    refused(json!({ "fileId": track, "imageId": theirs }))
        .await
        .assert_error(404, "file_not_found");
    refused(json!({ "fileId": text, "imageId": null }))
        .await
        .assert_bad_field("invalid_field", "fileId");
    refused(json!({ "imageId": null }))
        .await
        .assert_bad_field("missing_field", "fileId");
    refused(json!({ "fileId": track, "playlistId": playlist_id }))
        .await
        .assert_bad_field("invalid_field", "playlistId");
    app.call(
        &other,
        "/set-cover",
        Some(json!({ "playlistId": playlist_id, "imageId": theirs })),
    )
    .await
    .assert_error(404, "playlist_not_found");
    app.call(
        &other,
        "/set-cover",
        Some(json!({ "fileId": track, "imageId": theirs })),
    )
    .await
    .assert_error(404, "file_not_found");
}

#[tokio::test]
async fn a_videos_thumbnail_is_a_picture_or_a_frame_taken_by_a_job() {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    let video = app
        .upload(
            &user,
            "clip.mp4",
            "Video",
            "video/mp4",
            video_of("testsrc2=size=320x240:rate=25", 3.0, &[]),
        )
        .await
        .to_string();
    let image = app
        .upload(
            &user,
            "poster.png",
            "Image",
            "image/png",
            scanned_page(&["POSTER"]),
        )
        .await
        .to_string();

    let set = app
        .call(
            &user,
            "/set-video-thumbnail",
            Some(json!({ "fileId": video, "imageId": image })),
        )
        .await;
    assert_eq!(set.status, 200, "{}", set.body);
    assert_eq!(artwork(&app, &user, &video, "Video").await, image);

    let framed = app
        .call(
            &user,
            "/set-video-thumbnail",
            Some(json!({ "fileId": video, "at": "0:01.5" })),
        )
        .await;
    assert_eq!(framed.status, 200, "{}", framed.body);
    assert_eq!(framed.body["imageId"], Value::Null);
    let job = &framed.body["job"]["job"];
    assert_eq!(job["jobType"], "videoThumbnail");
    let done = app.wait_job(&user, &job["id"]).await;
    assert_done(&done);
    let frame = done["result"]["artworkId"].clone();
    assert_eq!(artwork(&app, &user, &video, "Video").await, frame);
    let link = app
        .call(&user, "/generate-download-url", Some(json!({ "id": frame })))
        .await;
    assert_eq!(link.status, 200, "{}", link.body);
    let (status, jpeg) = get(link.body["downloadUrl"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    let picture = image::load_from_memory(&jpeg).expect("a picture");
    assert_eq!((picture.width(), picture.height()), (320, 240));
    // The frame is extracted art: never listed.
    let listed = app.call(&user, "/select-user-files", None).await;
    assert!(
        !listed.body.as_array().unwrap().iter().any(|f| f["id"] == frame),
        "{}",
        listed.body
    );

    // Past the end the job fails and the thumbnail stays.
    let late = app
        .call(
            &user,
            "/set-video-thumbnail",
            Some(json!({ "fileId": video, "at": 60 })),
        )
        .await;
    let failed = app.wait_job(&user, &late.body["job"]["job"]["id"]).await;
    assert_eq!(failed["state"], "failed", "{failed}");
    assert!(
        failed["error"].as_str().unwrap().contains("past the video's end"),
        "{failed}"
    );
    assert_eq!(artwork(&app, &user, &video, "Video").await, frame);

    // Neither: back to the poster extracted from the video.
    let cleared = app
        .call(&user, "/set-video-thumbnail", Some(json!({ "fileId": video })))
        .await;
    assert_eq!(cleared.status, 200, "{}", cleared.body);
    assert_ne!(artwork(&app, &user, &video, "Video").await, frame);

    app.call(
        &user,
        "/set-video-thumbnail",
        Some(json!({ "fileId": video, "at": -1 })),
    )
    .await
    .assert_bad_field("invalid_field", "at");
    app.call(
        &user,
        "/set-video-thumbnail",
        Some(json!({ "fileId": video, "at": 1, "imageId": image })),
    )
    .await
    .assert_bad_field("invalid_field", "at");
    app.call(
        &user,
        "/set-video-thumbnail",
        Some(json!({ "fileId": image, "at": 1 })),
    )
    .await
    .assert_bad_field("invalid_field", "fileId");
    app.call(
        &user,
        "/create-file-job",
        Some(json!({ "jobType": "videoThumbnail", "fileIds": [video], "options": { "at": 1 } })),
    )
    .await
    .assert_bad_field("invalid_field", "jobType");
}
