//! Reading what is inside audio, videos, pictures and PDFs (readForSearch), end to end on
//! media made here: speech spoken by espeak-ng read into timed `speech` moments by the local
//! Whisper model, printed words read by OCR from a scanned page (a PNG and a HEIC) and from the
//! image-only pages of a PDF, a PDF's text layer; found by `/search-files`' `query`, read back by `/read-file`
//! (`said`), written out by the captions job in its three formats and burned into a video; and
//! `visual` moments from a describing model (a local stand-in speaking OpenAI's wire format).

use base64::Engine;
use drive_core::id::FileId;
use drive_tests::media::{duration, ffmpeg, ffprobe, heif, scanned_page, speak, stream, text_pdf, video_of};
use drive_tests::provider::FakeChat;
use drive_tests::{TestApp, TestUser, assert_done, made};
use serde_json::{Value, json};

use crate::farm::{WorkerMetrics, assert_series};

/// Two sentences; the second shares no word with [`VEHICLE`], which means the same as the first.
const BRAKES: &str = "The garage replaced the worn brake pads on my car this morning.";
const CAKE: &str = "Tomorrow we will bake a chocolate cake for the birthday party.";
const VEHICLE: &str = "vehicle repair";

async fn app_with_worker() -> (TestApp, TestUser) {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    (app, user)
}

async fn read_for_search(app: &TestApp, user: &TestUser, ids: &[FileId]) -> Value {
    let job = app
        .run_job(user, json!({ "jobType": "readForSearch", "fileIds": ids }))
        .await;
    assert_done(&job);
    job
}

async fn search(app: &TestApp, user: &TestUser, query: &str) -> Vec<Value> {
    let found = app
        .call(user, "/search-files", Some(json!({ "query": query })))
        .await;
    assert_eq!(found.status, 200, "{}", found.body);
    found.body["moments"].as_array().expect("moments").clone()
}

async fn read_file(app: &TestApp, user: &TestUser, body: Value) -> Value {
    let read = app.call(user, "/read-file", Some(body)).await;
    assert_eq!(read.status, 200, "{}", read.body);
    read.body
}

/// Lower-case words without punctuation.
fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric())
                .collect::<String>()
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// The share of `spoken`'s words that are among `heard`'s.
fn heard_share(spoken: &str, heard: &str) -> f64 {
    let heard = words(heard);
    let spoken = words(spoken);
    spoken.iter().filter(|w| heard.contains(w)).count() as f64 / spoken.len() as f64
}

fn texts(said: &[Value]) -> Vec<String> {
    said.iter()
        .map(|s| s["text"].as_str().expect("text").to_string())
        .collect()
}

/// `hh:mm:ss,mmm` or `hh:mm:ss.mmm` as seconds.
fn seconds(clock: &str) -> f64 {
    let (hms, ms) = clock.split_at(8);
    let parts: Vec<f64> = hms.split(':').map(|p| p.parse().expect("a number")).collect();
    parts[0] * 3600.0 + parts[1] * 60.0 + parts[2] + ms[1..].parse::<f64>().expect("ms") / 1000.0
}

/// SubRip or WebVTT cues: (start, end, text).
fn parse_cues(captions: &str, vtt: bool) -> Vec<(f64, f64, String)> {
    let body = if vtt {
        captions
            .strip_prefix("WEBVTT\n\n")
            .unwrap_or_else(|| panic!("a WebVTT header: {captions:?}"))
    } else {
        captions
    };
    body.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .enumerate()
        .map(|(n, block)| {
            let mut lines = block.lines();
            if !vtt {
                assert_eq!(lines.next(), Some((n + 1).to_string().as_str()), "{captions}");
            }
            let timing = lines.next().expect("a timing line");
            let (start, end) = timing.split_once(" --> ").expect("an arrow");
            let separator = if vtt { '.' } else { ',' };
            assert_eq!(start.chars().nth(8), Some(separator), "{timing}");
            let text = lines.collect::<Vec<_>>().join("\n");
            (seconds(start), seconds(end), text)
        })
        .collect()
}

async fn captions_of(app: &TestApp, user: &TestUser, file: FileId, format: &str) -> (String, String) {
    let job = app
        .run_job(
            user,
            json!({ "jobType": "captions", "fileIds": [file], "options": { "format": format } }),
        )
        .await;
    assert_done(&job);
    let (id, name) = made(&job).into_iter().next().expect("a captions file");
    let bytes = app.download(user, &id).await;
    (name, String::from_utf8(bytes).expect("captions are UTF-8"))
}

#[tokio::test]
async fn spoken_words_are_read_into_timed_moments_found_by_words_and_by_meaning() {
    let (app, user) = app_with_worker().await;
    let wav = speak(&format!("{BRAKES} {CAKE}"));
    let length = duration(&ffprobe(&wav, "wav"));
    let talk = app.upload(&user, "talk.wav", "Audio", "audio/wav", wav).await;

    // Before it is read there is nothing to read, and no captions to make.
    let before = read_file(&app, &user, json!({ "fileId": talk })).await;
    assert!(before.get("said").is_none(), "{before}");
    assert!(before["note"].as_str().unwrap().contains("read"), "{before}");
    app.call(
        &user,
        "/create-file-job",
        Some(json!({ "jobType": "captions", "fileIds": [talk] })),
    )
    .await
    .assert_bad_field("invalid_field", "fileIds");

    let job = read_for_search(&app, &user, &[talk]).await;
    assert!(
        job["result"]["files"][0]["moments"].as_u64().unwrap() >= 1,
        "{job}"
    );

    // What is said, with times inside the clip.
    let answer = read_file(&app, &user, json!({ "fileId": talk })).await;
    let said = answer["said"].as_array().expect("said").clone();
    assert!(answer.get("nextAt").is_none(), "{answer}");
    let heard = texts(&said).join(" ");
    for sentence in [BRAKES, CAKE] {
        assert!(heard_share(sentence, &heard) >= 0.8, "{sentence:?} in {heard:?}");
    }
    let mut last_end = 0.0;
    for s in &said {
        let (at, until) = (s["at"].as_f64().unwrap(), s["until"].as_f64().unwrap());
        assert!(
            at >= last_end - 0.01 && at <= until && until <= length + 0.05,
            "{answer} ({length} s)"
        );
        last_end = until;
    }
    // Read from later on: only what is said after.
    let late = read_file(&app, &user, json!({ "fileId": talk, "at": length + 1.0 })).await;
    assert_eq!(late["said"], json!([]), "{late}");

    // Found by its words, and by what it means with none of them.
    let found = search(&app, &user, "brake pads").await;
    let top = &found[0];
    assert_eq!(top["fileId"], json!(talk));
    assert_eq!(top["entryType"], "speech");
    assert!(
        words(top["text"].as_str().unwrap()).contains(&"brake".to_string()),
        "{top}"
    );
    assert!(top["at"].as_f64().unwrap() >= 0.0 && top["until"].as_f64().unwrap() <= length + 0.05);
    assert!(words(VEHICLE).iter().all(|w| !words(BRAKES).contains(w)));
    let found = search(&app, &user, VEHICLE).await;
    assert!(
        words(found[0]["text"].as_str().unwrap()).contains(&"garage".to_string()),
        "{VEHICLE:?} found {found:?}"
    );

    // Captions in the three formats: their cues are what was said, when it was said.
    let times: Vec<(f64, f64)> = said
        .iter()
        .map(|s| (s["at"].as_f64().unwrap(), s["until"].as_f64().unwrap()))
        .collect();
    for (format, vtt) in [("srt", false), ("vtt", true)] {
        let (name, captions) = captions_of(&app, &user, talk, format).await;
        assert_eq!(name, format!("talk.{format}"));
        let cues = parse_cues(&captions, vtt);
        assert_eq!(cues.len(), said.len(), "{captions}");
        for ((start, end, text), ((at, until), said)) in cues.iter().zip(times.iter().zip(texts(&said))) {
            assert!((start - at).abs() < 0.002, "{captions}");
            assert!((end - until.max(at + 0.5)).abs() < 0.002, "{captions}");
            assert_eq!(text, &said);
        }
    }
    let (name, plain) = captions_of(&app, &user, talk, "txt").await;
    assert_eq!(name, "talk.txt");
    assert_eq!(plain.lines().collect::<Vec<_>>(), texts(&said), "{plain}");

    // Another account finds nothing in it, cannot read it and cannot caption it.
    let other = app.user(Some("Pro")).await;
    assert!(search(&app, &other, "brake pads").await.is_empty());
    app.call(&other, "/read-file", Some(json!({ "fileId": talk })))
        .await
        .assert_error(404, "file_not_found");
    let theirs = app
        .call(
            &other,
            "/create-file-job",
            Some(json!({ "jobType": "captions", "fileIds": [talk] })),
        )
        .await;
    assert_eq!(theirs.status, 404, "{}", theirs.body);
}

/// Whisper and the embedding model are loaded by the worker the first time a job needs each
/// and kept: the next recording's job and a text file's use them as loaded, and hear and find
/// what they did.
#[tokio::test]
async fn a_worker_loads_its_speech_and_embedding_models_once_for_all_its_jobs() {
    let mut app = TestApp::spawn().await;
    let metrics = WorkerMetrics::new();
    let address_file = metrics.address_file();
    app.start_worker_alone(&[
        ("DRIVE_WORKER_METRICS_LISTEN", "127.0.0.1:0"),
        ("DRIVE_WORKER_METRICS_ADDRESS_FILE", &address_file),
    ])
    .await;
    let user = app.user(Some("Pro")).await;
    let loads = |model: &str| format!("drive_worker_model_loads_total{{model=\"{model}\"}}");
    let before = metrics.scrape().await;
    assert!(
        !before.contains(&loads("speech")) && !before.contains(&loads("embedding")),
        "{before}"
    );

    for (name, first, second) in [("talk.wav", BRAKES, CAKE), ("again.wav", CAKE, BRAKES)] {
        let talk = app
            .upload(
                &user,
                name,
                "Audio",
                "audio/wav",
                speak(&format!("{first} {second}")),
            )
            .await;
        read_for_search(&app, &user, &[talk]).await;
        let answer = read_file(&app, &user, json!({ "fileId": talk })).await;
        let heard = texts(answer["said"].as_array().expect("said")).join(" ");
        for sentence in [first, second] {
            assert!(heard_share(sentence, &heard) >= 0.8, "{sentence:?} in {heard:?}");
        }
    }
    let note = app
        .upload(
            &user,
            "note.txt",
            "Text",
            "text/plain",
            b"The lighthouse keeper rows out at dawn.".to_vec(),
        )
        .await;
    read_for_search(&app, &user, &[note]).await;
    let found = search(&app, &user, "a boat at sunrise").await;
    assert_eq!(found[0]["fileId"], json!(note), "{found:?}");
    let found = search(&app, &user, "dessert for a celebration").await;
    assert!(found[0]["text"].as_str().unwrap().contains("cake"), "{found:?}");

    let after = metrics.scrape().await;
    assert_series(&after, &loads("speech"), 1.0);
    assert_series(&after, &loads("embedding"), 1.0);
}

/// Pixels of `frame` (a `/read-file` JPEG) in its bottom third that are far from the solid
/// blue the test video shows.
fn marked_pixels(answer: &Value) -> usize {
    let data = answer["image"]["data"].as_str().expect("a frame");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .expect("base64");
    let frame = image::load_from_memory(&bytes).expect("a JPEG").into_rgb8();
    let top = frame.height() * 2 / 3;
    frame
        .enumerate_pixels()
        .filter(|(_, y, p)| *y >= top && (p[0] > 120 || p[1] > 120))
        .count()
}

#[tokio::test]
async fn a_video_s_speech_is_read_shown_with_its_frames_and_burned_in_as_captions() {
    let (app, user) = app_with_worker().await;
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("speech.wav");
    std::fs::write(&wav, speak(BRAKES)).unwrap();
    let video = ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            "color=c=blue:s=640x360:r=25",
            "-i",
            wav.to_str().unwrap(),
            "-shortest",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-pix_fmt",
            "yuv420p",
            "-c:a",
            "aac",
        ],
        "mp4",
    );
    let length = duration(&ffprobe(&video, "mp4"));
    let clip = app.upload(&user, "clip.mp4", "Video", "video/mp4", video).await;

    // Burned-in captions need what was read.
    app.call(
        &user,
        "/create-file-job",
        Some(json!({ "jobType": "burnIn", "fileIds": [clip], "options": { "captions": true } })),
    )
    .await
    .assert_bad_field("invalid_field", "fileIds");

    read_for_search(&app, &user, &[clip]).await;
    let found = search(&app, &user, "brake pads").await;
    assert_eq!(found[0]["fileId"], json!(clip));
    assert_eq!(found[0]["entryType"], "speech");

    // A frame comes with what is said from there on.
    let answer = read_file(&app, &user, json!({ "fileId": clip, "at": 0.5 })).await;
    assert_eq!(answer["at"], 0.5);
    let heard = texts(answer["said"].as_array().expect("said")).join(" ");
    assert!(heard_share(BRAKES, &heard) >= 0.8, "{heard:?}");
    let plain_frame = marked_pixels(&answer);

    let job = app
        .run_job(
            &user,
            json!({ "jobType": "burnIn", "fileIds": [clip], "options": { "captions": true } }),
        )
        .await;
    assert_done(&job);
    let (captioned, name) = made(&job).into_iter().next().expect("a video");
    assert_eq!(name, "clip captioned.mp4");
    let bytes = app.download(&user, &captioned).await;
    let probe = ffprobe(&bytes, "mp4");
    assert_eq!(stream(&probe, "video")["width"], 640);
    assert!((duration(&probe) - length).abs() < 0.2, "{probe}");

    // The captions are drawn at the bottom while the sentence is said.
    let speaking = answer["said"][0]["at"].as_f64().unwrap() + 0.5;
    let frame = read_file(&app, &user, json!({ "fileId": captioned, "at": speaking })).await;
    assert!(
        marked_pixels(&frame) > plain_frame + 500,
        "{} marked pixels against {plain_frame}",
        marked_pixels(&frame)
    );
}

#[tokio::test]
async fn printed_words_in_a_scan_and_in_pdf_pages_are_found_with_their_page() {
    let (app, user) = app_with_worker().await;
    let scan = app
        .upload(
            &user,
            "letter.png",
            "Image",
            "image/png",
            scanned_page(&[
                "Dear Margaret,",
                "the heating engineer will visit the office",
                "on Friday between nine and eleven.",
            ]),
        )
        .await;
    // An image-only PDF, made by the drive from two scanned pages.
    let cover = app
        .upload(
            &user,
            "cover.png",
            "Image",
            "image/png",
            scanned_page(&["Quarterly report", "Sales grew in the northern region."]),
        )
        .await;
    let keeper = app
        .upload(
            &user,
            "keeper.png",
            "Image",
            "image/png",
            scanned_page(&["The lighthouse keeper painted", "the old tower bright red."]),
        )
        .await;
    let job = app
        .run_job(
            &user,
            json!({ "jobType": "makePdf", "fileIds": [cover, keeper], "options": { "pageSize": "a4" } }),
        )
        .await;
    assert_done(&job);
    let scanned_pdf: FileId = made(&job)[0].0.parse().unwrap();
    // A PDF with a text layer, the words on its third page.
    let pages: Vec<Vec<String>> = [
        vec!["Contents"],
        vec!["Terms and conditions apply."],
        vec!["Invoice number 4471 is due", "for the accountant in March."],
    ]
    .iter()
    .map(|lines| lines.iter().map(|l| l.to_string()).collect())
    .collect();
    let typed = app
        .upload(&user, "typed.pdf", "Pdf", "application/pdf", text_pdf(&pages))
        .await;

    // A phone's photo of a page: HEIC, read as every picture job reads it.
    let photo = app
        .upload(
            &user,
            "memo.heic",
            "Image",
            "image/heic",
            heif(
                &scanned_page(&["The gardener planted", "seven walnut trees."]),
                false,
            ),
        )
        .await;

    let job = read_for_search(&app, &user, &[scan, scanned_pdf, typed, photo]).await;
    assert_eq!(job["result"]["files"].as_array().unwrap().len(), 4, "{job}");

    for (query, file, page, word) in [
        ("heating engineer", scan, Value::Null, "engineer"),
        ("lighthouse keeper", scanned_pdf, json!(2), "lighthouse"),
        ("northern region sales", scanned_pdf, json!(1), "northern"),
        ("invoice accountant", typed, json!(3), "invoice"),
        ("walnut trees gardener", photo, Value::Null, "walnut"),
    ] {
        let found = search(&app, &user, query).await;
        let top = found.first().unwrap_or_else(|| panic!("{query:?} found nothing"));
        assert_eq!(
            (&top["fileId"], &top["page"], &top["entryType"]),
            (&json!(file), &page, &json!("text")),
            "{query:?}: {found:?}"
        );
        assert!(
            words(top["text"].as_str().unwrap()).contains(&word.to_string()),
            "{top}"
        );
    }
}

#[tokio::test]
async fn a_configured_describing_model_gives_pictures_and_video_stretches_visual_moments() {
    const SEEN: &str = "A red bicycle leaning against a blue garden wall.";
    let provider = FakeChat::start(SEEN).await;
    let mut app = TestApp::spawn().await;
    app.start_worker(&[
        ("DRIVE_VISION_URL", provider.url.as_str()),
        ("DRIVE_VISION_MODEL", "test-vision"),
        ("DRIVE_VISION_API_KEY", "vision-key"),
    ])
    .await;
    let user = app.user(Some("Pro")).await;
    let mut png = Vec::new();
    image::RgbImage::from_fn(1600, 1200, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, 90])
    })
    .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
    .unwrap();
    let photo = app.upload(&user, "photo.png", "Image", "image/png", png).await;
    let clip = app
        .upload(
            &user,
            "clip.mp4",
            "Video",
            "video/mp4",
            video_of("testsrc2=size=320x240:rate=25", 3.0, &[]),
        )
        .await;
    read_for_search(&app, &user, &[photo, clip]).await;

    // Found by meaning ("bike" is not a word of it), as what was seen: the picture's with no
    // place, the video's over its one stretch.
    let found = search(&app, &user, "bike").await;
    let seen: Vec<&Value> = found.iter().filter(|m| m["entryType"] == "visual").collect();
    assert_eq!(seen.len(), 2, "{found:?}");
    for moment in &seen {
        assert_eq!(moment["text"], SEEN);
    }
    let of = |file: FileId| {
        seen.iter()
            .find(|m| m["fileId"] == json!(file))
            .expect("a moment")
    };
    assert_eq!(
        (&of(photo)["at"], &of(photo)["until"]),
        (&Value::Null, &Value::Null)
    );
    assert_eq!(of(clip)["at"], 0.0);
    assert!(
        (of(clip)["until"].as_f64().unwrap() - 3.0).abs() < 0.1,
        "{}",
        of(clip)
    );

    // The provider was asked twice, as OpenAI's API is, with the key and a small JPEG.
    let sent = provider.sent();
    assert_eq!(sent.len(), 2, "{sent:?}");
    let mut edges = Vec::new();
    for request in &sent {
        assert_eq!(request.path, "/v1/chat/completions");
        assert_eq!(request.authorization.as_deref(), Some("Bearer vision-key"));
        assert_eq!(request.body["model"], "test-vision");
        let url = request.body["messages"][0]["content"][1]["image_url"]["url"]
            .as_str()
            .expect("an image part");
        let data = url
            .strip_prefix("data:image/jpeg;base64,")
            .expect("a JPEG data URL");
        let bytes = base64::engine::general_purpose::STANDARD.decode(data).unwrap();
        let shown = image::load_from_memory_with_format(&bytes, image::ImageFormat::Jpeg).unwrap();
        edges.push((shown.width(), shown.height()));
    }
    edges.sort();
    assert_eq!(edges, [(320, 240), (1024, 768)]);
}
