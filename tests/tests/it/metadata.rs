//! Metadata on insert: every new audio, video and picture file is read by the worker farm
//! (a `readMetadata` job of the drive's own), and what it finds shows in `/search-files` and
//! filters it. Inputs are made here with `ffmpeg` and by hand (a photo's EXIF).

use std::io::Cursor;
use std::time::Duration;

use drive_tests::media::{ffmpeg, video_of};
use drive_tests::*;
use exif::experimental::Writer;
use exif::{Field, In, Rational, Tag, Value as ExifValue};
use image::{ImageFormat, RgbImage};
use serde_json::{Value, json};

async fn with_worker() -> (TestApp, TestUser) {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    (app, user)
}

async fn ids_found(app: &TestApp, user: &TestUser, filters: Value) -> Vec<String> {
    let found = app.call(user, "/search-files", Some(filters.clone())).await;
    assert_eq!(found.status, 200, "{filters}: {}", found.body);
    found.body["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["id"].as_str().expect("id").to_string())
        .collect()
}

fn approx(value: &Value, expected: f64, tolerance: f64) -> bool {
    value.as_f64().is_some_and(|v| (v - expected).abs() <= tolerance)
}

#[tokio::test]
async fn a_tagged_track_shows_its_tags_duration_and_cover_art() {
    let (app, user) = with_worker().await;
    let cover = {
        let mut png = Vec::new();
        RgbImage::from_pixel(64, 64, image::Rgb([200, 30, 30]))
            .write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cover.png");
        std::fs::write(&path, png).unwrap();
        (dir, path)
    };
    let track = ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=440:sample_rate=44100:duration=3",
            "-i",
            cover.1.to_str().unwrap(),
            "-map",
            "0:a",
            "-map",
            "1:v",
            "-c:a",
            "libmp3lame",
            "-c:v",
            "png",
            "-disposition:v",
            "attached_pic",
            "-id3v2_version",
            "3",
            "-metadata",
            "title=Ocean Drive",
            "-metadata",
            "artist=Duke Dumont; Lulu",
            "-metadata",
            "album=Blase Boys Club",
            "-metadata",
            "genre=House",
            "-metadata",
            "TBPM=118",
            "-metadata",
            "TKEY=Am",
        ],
        "mp3",
    );
    let id = app.upload(&user, "ocean.mp3", "Audio", "audio/mpeg", track).await;
    let file = app.reading(&user, id).await;
    assert_eq!(file["metadataState"], "read", "{file}");
    assert_eq!(file["title"], "Ocean Drive");
    assert_eq!(file["artists"], json!(["Duke Dumont", "Lulu"]));
    assert_eq!(file["album"], "Blase Boys Club");
    assert_eq!(file["genre"], "House");
    assert!(approx(&file["duration"], 3.0, 0.1), "{file}");
    assert_eq!(file["tempo"], 118.0);
    assert_eq!(file["key"], "A minor");
    assert_eq!(file["audioCodec"], "mp3");

    // The cover art is a file of its own: reachable, never listed.
    let artwork = file["artworkId"].as_str().expect("cover art was extracted");
    let bytes = app.download(&user, artwork).await;
    let picture = image::load_from_memory(&bytes).expect("the cover decodes");
    assert_eq!((picture.width(), picture.height()), (64, 64));
    let listed = app.call(&user, "/select-user-files", None).await;
    assert!(!listed.body.to_string().contains(artwork), "{}", listed.body);

    // What was read filters the search.
    let id = id.to_string();
    assert_eq!(
        ids_found(&app, &user, json!({ "text": "dumont ocean" })).await,
        vec![id.clone()]
    );
    assert_eq!(
        ids_found(&app, &user, json!({ "minTempo": 117, "maxTempo": 119 })).await,
        vec![id.clone()]
    );
    assert_eq!(
        ids_found(&app, &user, json!({ "key": "Am" })).await,
        vec![id.clone()]
    );
    assert!(
        ids_found(&app, &user, json!({ "minDuration": 10 }))
            .await
            .is_empty()
    );

    // The reading is the drive's own work: not listed among the caller's jobs, no minutes.
    let jobs = app.call(&user, "/select-file-jobs", Some(json!({}))).await;
    assert_eq!(jobs.body["jobs"], json!([]), "{}", jobs.body);
    let refused = app
        .call(
            &user,
            "/create-file-job",
            Some(json!({ "jobType": "readMetadata", "fileIds": [id] })),
        )
        .await;
    refused.assert_bad_field("invalid_field", "jobType");
}

#[tokio::test]
async fn a_video_shows_its_size_codecs_place_time_and_poster() {
    let (app, user) = with_worker().await;
    let video = video_of(
        "testsrc2=size=320x240:rate=25",
        2.0,
        &[
            "-metadata",
            "title=Harbour at dusk",
            "-metadata",
            "creation_time=2024-05-01T18:30:00Z",
            "-metadata",
            "location=+59.9139+010.7522/",
        ],
    );
    let id = app
        .upload(&user, "harbour.mp4", "Video", "video/mp4", video)
        .await;
    let file = app.reading(&user, id).await;
    assert_eq!(file["metadataState"], "read", "{file}");
    assert_eq!(
        (file["width"].clone(), file["height"].clone()),
        (json!(320), json!(240))
    );
    assert_eq!(file["videoCodec"], "h264");
    assert_eq!(file["audioCodec"], "aac");
    assert!(approx(&file["duration"], 2.0, 0.1), "{file}");
    assert_eq!(file["title"], "Harbour at dusk");
    assert_eq!(file["takenTime"], "2024-05-01T18:30:00Z");
    assert!(approx(&file["location"]["latitude"], 59.9139, 1e-6), "{file}");
    assert!(approx(&file["location"]["longitude"], 10.7522, 1e-6), "{file}");

    let poster = file["artworkId"].as_str().expect("a poster was made");
    let picture = image::load_from_memory(&app.download(&user, poster).await).expect("the poster decodes");
    assert_eq!((picture.width(), picture.height()), (320, 240));

    let id = id.to_string();
    let oslo = json!({ "within": { "south": 59.0, "west": 10.0, "north": 60.5, "east": 11.0 } });
    assert_eq!(ids_found(&app, &user, oslo).await, vec![id.clone()]);
    let may = json!({ "takenAfter": "2024-05-01T00:00:00Z", "takenBefore": "2024-05-02T00:00:00Z" });
    assert_eq!(ids_found(&app, &user, may).await, vec![id.clone()]);

    // What a job makes is read like an upload.
    let job = app
        .run_job(
            &user,
            json!({ "jobType": "extractAudio", "fileIds": [id], "options": { "format": "flac" } }),
        )
        .await;
    assert_done(&job);
    let (sound, name) = made(&job).remove(0);
    assert_eq!(name, "harbour.flac");
    let sound = app.reading(&user, sound.parse().unwrap()).await;
    assert_eq!(sound["metadataState"], "read", "{sound}");
    assert_eq!(sound["audioCodec"], "flac");
    assert!(approx(&sound["duration"], 2.0, 0.1), "{sound}");
}

#[tokio::test]
async fn an_untagged_track_gets_its_tempo_measured_and_a_soundprint() {
    let (app, user) = with_worker().await;
    // A click every half second (120 BPM) for 20 s, nothing in the tags.
    let clicks = ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            "aevalsrc='if(lt(mod(t,0.5),0.012),0.8*sin(2*PI*1000*t),0)':s=44100:d=20",
            "-c:a",
            "pcm_s16le",
        ],
        "wav",
    );
    let id = app
        .upload(&user, "clicks.wav", "Audio", "audio/wav", clicks)
        .await;
    let file = app.reading(&user, id).await;
    assert_eq!(file["metadataState"], "read", "{file}");
    assert!(approx(&file["tempo"], 120.0, 2.0), "tempo {}", file["tempo"]);
    assert!(approx(&file["duration"], 20.0, 0.05), "{file}");
    assert!(file["artworkId"].is_null(), "{file}");

    let mut db = app.db().await;
    let frames: Option<i32> =
        sqlx::query_scalar("select array_length(soundprint, 1) from files where id = $1")
            .bind(id)
            .fetch_one(&mut db)
            .await
            .unwrap();
    // Frames of about 124 ms over 20 s.
    assert!(frames.is_some_and(|n| (100..=200).contains(&n)), "{frames:?}");
}

/// A JPEG whose EXIF says it was taken at `time` at `north`, `east` (degrees; negative for
/// south and west).
fn photo_with_exif(time: &str, north: f64, east: f64) -> Vec<u8> {
    let dms = |degrees: f64| {
        let d = degrees.abs();
        let whole = d.floor();
        let minutes = (d - whole) * 60.0;
        vec![
            Rational {
                num: whole as u32,
                denom: 1,
            },
            Rational {
                num: minutes.floor() as u32,
                denom: 1,
            },
            Rational {
                num: ((minutes - minutes.floor()) * 60.0 * 1000.0).round() as u32,
                denom: 1000,
            },
        ]
    };
    let fields = [
        Field {
            tag: Tag::DateTimeOriginal,
            ifd_num: In::PRIMARY,
            value: ExifValue::Ascii(vec![time.as_bytes().to_vec()]),
        },
        Field {
            tag: Tag::GPSLatitudeRef,
            ifd_num: In::PRIMARY,
            value: ExifValue::Ascii(vec![if north < 0.0 { b"S".to_vec() } else { b"N".to_vec() }]),
        },
        Field {
            tag: Tag::GPSLatitude,
            ifd_num: In::PRIMARY,
            value: ExifValue::Rational(dms(north)),
        },
        Field {
            tag: Tag::GPSLongitudeRef,
            ifd_num: In::PRIMARY,
            value: ExifValue::Ascii(vec![if east < 0.0 { b"W".to_vec() } else { b"E".to_vec() }]),
        },
        Field {
            tag: Tag::GPSLongitude,
            ifd_num: In::PRIMARY,
            value: ExifValue::Rational(dms(east)),
        },
    ];
    let mut writer = Writer::new();
    for field in &fields {
        writer.push_field(field);
    }
    let mut tiff = Cursor::new(Vec::new());
    writer.write(&mut tiff, false).expect("write EXIF");
    let tiff = tiff.into_inner();

    let mut jpeg = Vec::new();
    RgbImage::from_pixel(96, 64, image::Rgb([40, 120, 200]))
        .write_to(&mut Cursor::new(&mut jpeg), ImageFormat::Jpeg)
        .unwrap();
    // An APP1 segment right after the start of image: "Exif\0\0" and the TIFF structure.
    let mut segment = b"Exif\0\0".to_vec();
    segment.extend_from_slice(&tiff);
    let mut out = jpeg[..2].to_vec();
    out.extend_from_slice(&[0xFF, 0xE1]);
    out.extend_from_slice(&((segment.len() + 2) as u16).to_be_bytes());
    out.extend_from_slice(&segment);
    out.extend_from_slice(&jpeg[2..]);
    out
}

#[tokio::test]
async fn a_photo_is_found_by_where_and_when_its_exif_says() {
    let (app, user) = with_worker().await;
    // Taveuni, Fiji: just west of the antimeridian.
    let photo = photo_with_exif("2023:08:14 07:45:10", -16.8, 179.95);
    let id = app
        .upload(&user, "sunrise.jpg", "Image", "image/jpeg", photo)
        .await;
    let file = app.reading(&user, id).await;
    assert_eq!(file["metadataState"], "read", "{file}");
    assert_eq!(file["takenTime"], "2023-08-14T07:45:10Z");
    assert!(approx(&file["location"]["latitude"], -16.8, 1e-4), "{file}");
    assert!(approx(&file["location"]["longitude"], 179.95, 1e-4), "{file}");
    assert_eq!(
        (file["width"].clone(), file["height"].clone()),
        (json!(96), json!(64))
    );
    assert!(file["duration"].is_null(), "a photo has no duration: {file}");

    let id = id.to_string();
    let across = json!({ "within": { "south": -17.5, "west": 179.5, "north": -16.0, "east": -179.5 } });
    assert_eq!(ids_found(&app, &user, across).await, vec![id]);
    let elsewhere = json!({ "within": { "south": 40.0, "west": 0.0, "north": 50.0, "east": 10.0 } });
    assert!(ids_found(&app, &user, elsewhere).await.is_empty());
}

#[tokio::test]
async fn a_file_that_cannot_be_read_records_why_once() {
    let (app, user) = with_worker().await;
    let junk: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let id = app.upload(&user, "broken.mp4", "Video", "video/mp4", junk).await;
    let file = app.reading(&user, id).await;
    assert_eq!(file["metadataState"], "failed", "{file}");
    let error = file["metadataError"].as_str().expect("a reason");
    assert!(error.contains("could not be read"), "{error}");
    assert!(file["duration"].is_null());

    // Read once, not retried: one readMetadata job, ended.
    let job = app.reading_job(id, Duration::from_secs(20)).await;
    assert_eq!(job, ("done".to_string(), 1));

    // Files nobody reads are left alone.
    let text = app
        .upload(&user, "notes.txt", "Text", "text/plain", b"hello".to_vec())
        .await;
    let found = app
        .call(&user, "/search-files", Some(json!({ "text": "notes" })))
        .await;
    let notes = &found.body["files"][0];
    assert_eq!(notes["id"], text.to_string(), "{}", found.body);
    assert!(notes["metadataState"].is_null(), "{notes}");
}

/// The drive's own work is capped per account: past `DRIVE_MAX_QUEUED_READINGS` readings
/// waiting, a new file's reading is deferred (no job row), and once the account's readings
/// drain every deferred one is queued and run: a flood of arrivals cannot grow the queue
/// without bound, and no file is left unread.
#[tokio::test]
async fn readings_past_an_accounts_cap_wait_outside_the_queue_and_all_run() {
    let cap = [("DRIVE_MAX_QUEUED_READINGS", "3")];
    let mut app = TestApp::spawn_with(&cap).await;
    let user = app.user(Some("Pro")).await;
    let mut ids = Vec::new();
    for n in 0..8u8 {
        let mut png = Vec::new();
        RgbImage::from_pixel(16 + u32::from(n), 16, image::Rgb([n * 20, 10, 10]))
            .write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
            .unwrap();
        ids.push(
            app.upload(&user, &format!("{n}.png"), "Image", "image/png", png)
                .await,
        );
    }
    // No worker yet: three readings queued, five deferred.
    let mut db = app.db().await;
    let (queued, deferred): (i64, i64) = sqlx::query_as(
        "select (select count(*) from file_jobs where user_id = $1 and job_type = 'readMetadata'),
                (select count(*) from deferred_readings where user_id = $1)",
    )
    .bind(user.id)
    .fetch_one(&mut db)
    .await
    .unwrap();
    assert_eq!((queued, deferred), (3, 5));

    app.start_worker(&cap).await;
    for id in &ids {
        let file = app.reading(&user, *id).await;
        assert_eq!(file["metadataState"], "read", "{file}");
        assert_eq!(file["width"].as_u64().map(|w| w >= 16), Some(true), "{file}");
        // The metadata is stored while its job runs; the job's row ends a moment later.
        let job = app.reading_job(*id, Duration::from_secs(20)).await;
        assert_eq!(job, ("done".to_string(), 1), "{id}");
    }
    let (jobs, left): (i64, i64) = sqlx::query_as(
        "select (select count(*) from file_jobs where user_id = $1 and job_type = 'readMetadata' and state = 'done'),
                (select count(*) from deferred_readings where user_id = $1)",
    )
    .bind(user.id)
    .fetch_one(&mut db)
    .await
    .unwrap();
    assert_eq!((jobs, left), (8, 0), "each file read once");
}

/// The files of the metadata test of a burst: name, kind, media type and bytes. Among them a
/// picture large enough to get a thumbnail, a video (a poster), tracks whose tempo, key and
/// soundprint are measured, and a file nothing can read.
fn burst_of_files() -> Vec<(&'static str, &'static str, &'static str, Vec<u8>)> {
    let mut large = Vec::new();
    let noisy = noise(400 * 300 * 3, 11);
    RgbImage::from_raw(400, 300, noisy)
        .unwrap()
        .write_to(&mut Cursor::new(&mut large), ImageFormat::Png)
        .unwrap();
    let junk: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let tone = "sine=frequency=440:sample_rate=44100:duration=3";
    vec![
        (
            "sunrise.jpg",
            "Image",
            "image/jpeg",
            photo_with_exif("2023:08:14 07:45:10", -16.8, 179.95),
        ),
        ("large.png", "Image", "image/png", large),
        (
            "harbour.mp4",
            "Video",
            "video/mp4",
            video_of(
                "testsrc2=size=320x240:rate=25",
                1.0,
                &[
                    "-metadata",
                    "title=Harbour at dusk",
                    "-metadata",
                    "location=+59.9139+010.7522/",
                ],
            ),
        ),
        (
            "tone.wav",
            "Audio",
            "audio/wav",
            ffmpeg(&["-f", "lavfi", "-i", tone], "wav"),
        ),
        (
            "song.mp3",
            "Audio",
            "audio/mpeg",
            ffmpeg(
                &[
                    "-f",
                    "lavfi",
                    "-i",
                    tone,
                    "-c:a",
                    "libmp3lame",
                    "-metadata",
                    "title=Ocean Drive",
                    "-metadata",
                    "artist=Duke Dumont",
                ],
                "mp3",
            ),
        ),
        ("broken.mp4", "Video", "video/mp4", junk),
    ]
}

/// Each of an account's files as its reading recorded it, by name: every metadata column
/// (the soundprint too), the artwork it got (names and sizes), and its reading's end.
async fn recorded_readings(app: &TestApp, user: &TestUser) -> Vec<Value> {
    let mut db = app.db().await;
    sqlx::query_scalar(
        "select json_build_object(
                    'name', f.file_name, 'title', f.title, 'artists', f.artists, 'album', f.album,
                    'genre', f.genre, 'taken', f.taken_time, 'duration', f.duration_seconds,
                    'tempo', f.tempo_bpm, 'key', array[f.key_pitch::text, f.key_mode],
                    'place', array[f.latitude, f.longitude], 'size', array[f.width, f.height],
                    'codecs', array[f.video_codec, f.audio_codec], 'soundprint', f.soundprint,
                    'state', f.metadata_state, 'error', f.metadata_error,
                    'artwork', (select array_agg(a.file_name || ' ' || a.file_size order by a.file_name)
                                from files a where a.derivative_of = f.id),
                    'job', array[j.state, j.error], 'read', j.result -> 'read',
                    'readError', j.result -> 'error', 'artworkMade', j.result -> 'artworkId' <> 'null')
         from files f join file_jobs j on j.input_ids = array[f.id] and j.job_type = 'readMetadata'
         where f.user_id = $1 and f.derivative_of is null
         order by f.file_name",
    )
    .bind(user.id)
    .fetch_all(&mut db)
    .await
    .unwrap()
}

/// A burst of uploads is read a batch at a time: an account's readings queued together are
/// claimed together, read in one job process and ended in one transaction. Each file's record
/// is exactly what a reading of it alone writes (the same files, read one at a time by another
/// account), the failure of a file that cannot be read fails no other, and a file trashed
/// before its reading ran fails that reading alone.
#[tokio::test]
async fn a_burst_of_readings_is_read_together_and_records_what_each_would_alone() {
    let mut app = TestApp::spawn().await;
    let together = app.user(Some("Pro")).await;
    let alone = app.user(Some("Pro")).await;
    let files = burst_of_files();

    // No worker yet: every reading of the burst waits in the queue.
    let mut burst = Vec::new();
    for (name, kind, mime, bytes) in &files {
        burst.push(app.upload(&together, name, kind, mime, bytes.clone()).await);
    }
    let gone = app
        .upload(
            &together,
            "gone.jpg",
            "Image",
            "image/jpeg",
            photo_with_exif("2020:01:01 00:00:00", 1.0, 1.0),
        )
        .await;
    let trashed = app
        .call(&together, "/trash-files", Some(json!([{ "id": gone }])))
        .await;
    assert_eq!(trashed.status, 200, "{}", trashed.body);
    app.start_worker(&[]).await;
    for id in &burst {
        app.reading(&together, *id).await;
    }
    for id in burst.iter().chain([&gone]) {
        let job = app.reading_job(*id, Duration::from_secs(30)).await;
        let expected = if *id == gone { "failed" } else { "done" };
        assert_eq!(job, (expected.to_string(), 1), "{id}");
    }

    // Read together: the readings' claims are fewer than the readings, all by one worker.
    let mut db = app.db().await;
    let (readings, claims): (i64, i64) = sqlx::query_as(
        "select count(*), count(distinct started_at) from file_jobs
         where user_id = $1 and job_type = 'readMetadata' and input_ids <> array[$2]",
    )
    .bind(together.id)
    .bind(gone)
    .fetch_one(&mut db)
    .await
    .unwrap();
    assert_eq!(readings, files.len() as i64);
    assert!(
        claims < readings,
        "{readings} readings were claimed {claims} times: none together"
    );

    // The same files, each read alone: uploaded one at a time, each read before the next.
    for (name, kind, mime, bytes) in &files {
        let id = app.upload(&alone, name, kind, mime, bytes.clone()).await;
        app.reading(&alone, id).await;
        app.reading_job(id, Duration::from_secs(30)).await;
    }
    let (read_together, read_alone) = (
        recorded_readings(&app, &together).await,
        recorded_readings(&app, &alone).await,
    );
    let gone_reading = &read_together[1];
    assert_eq!(gone_reading["name"], "gone.jpg");
    assert_eq!(gone_reading["state"], "failed", "{gone_reading}");
    assert!(
        gone_reading["error"]
            .as_str()
            .is_some_and(|e| e.contains("trashed or deleted")),
        "{gone_reading}"
    );
    let read_together: Vec<&Value> = read_together.iter().filter(|r| r["name"] != "gone.jpg").collect();
    assert_eq!(read_together.len(), read_alone.len());
    for (together, alone) in read_together.iter().zip(&read_alone) {
        assert_eq!(*together, alone, "read together, then alone");
    }
    // What the records hold, so that equal is not equally empty.
    let by_name = |name: &str| read_alone.iter().find(|r| r["name"] == name).unwrap().clone();
    assert_eq!(by_name("broken.mp4")["state"], "failed");
    assert_eq!(by_name("broken.mp4")["job"], json!(["done", null]));
    assert_eq!(by_name("broken.mp4")["read"], false);
    assert_eq!(
        by_name("large.png")["artwork"][0]
            .as_str()
            .map(|a| a.starts_with("thumbnail.jpg ")),
        Some(true)
    );
    assert_eq!(
        by_name("harbour.mp4")["artwork"][0]
            .as_str()
            .map(|a| a.starts_with("poster.jpg ")),
        Some(true)
    );
    assert_eq!(by_name("harbour.mp4")["title"], "Harbour at dusk");
    assert_eq!(by_name("song.mp3")["artists"], json!(["Duke Dumont"]));
    assert!(
        by_name("tone.wav")["soundprint"]
            .as_array()
            .is_some_and(|s| !s.is_empty())
    );
    assert!(
        by_name("sunrise.jpg")["taken"].is_string(),
        "{}",
        by_name("sunrise.jpg")
    );
}

/// Readings read together whose process dies mid-way (killed here, as a crash or the kernel's
/// OOM killer would) fail none of them: each is queued again with its attempt spent, read alone
/// the second time, and every file ends read.
#[tokio::test]
async fn readings_whose_shared_process_dies_are_each_read_again_alone() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    // Tracks long enough (a minute, 5 MB) that measuring their tempo and key takes a while.
    let track = ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=440:sample_rate=44100:duration=60",
        ],
        "wav",
    );
    let mut ids = Vec::new();
    for n in 0..6 {
        ids.push(
            app.upload(
                &user,
                &format!("track-{n}.wav"),
                "Audio",
                "audio/wav",
                track.clone(),
            )
            .await,
        );
    }
    let worker = app.start_worker_alone(&[("DRIVE_WORKER_CONCURRENCY", "1")]).await;
    // Once the six run together and their process reads the first file (over a second: it
    // holds a connection to the store), before it ends any.
    let mut db = app.db().await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let reading = loop {
        let (running, ended): (i64, i64) = sqlx::query_as(
            "select count(*) filter (where state = 'running'), count(*) filter (where ended_at is not null)
             from file_jobs where user_id = $1 and job_type = 'readMetadata'",
        )
        .bind(user.id)
        .fetch_one(&mut db)
        .await
        .unwrap();
        assert_eq!(ended, 0, "a reading ended before its process was killed");
        let connected = app.job_processes(worker).into_iter().find(|pid| {
            std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|fds| {
                fds.flatten().any(|fd| {
                    std::fs::read_link(fd.path()).is_ok_and(|to| to.to_string_lossy().starts_with("socket:"))
                })
            })
        });
        if let (6, Some(pid)) = (running, connected) {
            break pid;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{running} readings running"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    // SAFETY: a signal to a process of this test's worker.
    unsafe { libc::kill(reading as i32, libc::SIGKILL) };
    for id in &ids {
        let file = app.reading(&user, *id).await;
        assert_eq!(file["metadataState"], "read", "{file}");
        assert!(approx(&file["duration"], 60.0, 0.5), "{file}");
        let job = app.reading_job(*id, Duration::from_secs(60)).await;
        assert_eq!(job, ("done".to_string(), 2), "{id}: tried again once, and read");
    }
}
