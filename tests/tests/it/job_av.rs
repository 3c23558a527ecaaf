//! Audio and video jobs end to end: cut, proxy, convert, shrink, reframe, gif, burnIn, join,
//! stills, contactSheet, extractAudio, loudness, split and stripMetadata run by a real worker
//! on inputs made here with the `ffmpeg` command, their results probed with `ffprobe`; damaged
//! videos; and every setting's 400.

use std::path::Path;
use std::process::Command;

use drive_core::id::FileId;
use drive_tests::media::{duration, ffmpeg, ffprobe as probe, ffprobe_with as probe_with, video_of};
use drive_tests::proxy::TcpProxy;
use drive_tests::scratch::Scratch;
use drive_tests::*;
use image::{Rgb, RgbImage};
use serde_json::{Value, json};

fn text(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

// ---- making inputs ----

/// An mp4 of `seconds` of a moving test picture of `size` (like "320x240"); see [`video_of`].
fn video(size: &str, seconds: f64, extra: &[&str]) -> Vec<u8> {
    video_of(&format!("testsrc2=size={size}:rate=25"), seconds, extra)
}

/// `seconds` of a 440 Hz tone (stereo, 48 kHz) through the audio filters `filters`, in the
/// format `ext` says; `extra` goes before the output.
fn tone(seconds: f64, filters: &str, ext: &str, extra: &[&str]) -> Vec<u8> {
    let seconds = seconds.to_string();
    let mut args = vec![
        "-f",
        "lavfi",
        "-i",
        "sine=frequency=440:sample_rate=48000",
        "-t",
        &seconds,
        "-ac",
        "2",
    ];
    if !filters.is_empty() {
        args.extend(["-af", filters]);
    }
    args.extend(extra);
    ffmpeg(&args, ext)
}

// ---- reading results ----

/// A number ffprobe writes as a string, like a duration.
fn number(value: &Value) -> f64 {
    value
        .as_str()
        .and_then(|s| s.parse().ok())
        .or_else(|| value.as_f64())
        .unwrap_or_else(|| panic!("not a number: {value}"))
}

fn streams<'a>(probe: &'a Value, kind: &str) -> Vec<&'a Value> {
    probe["streams"]
        .as_array()
        .expect("streams")
        .iter()
        .filter(|s| s["codec_type"] == kind)
        .collect()
}

#[track_caller]
fn video_stream(probe: &Value) -> &Value {
    let found = streams(probe, "video");
    assert_eq!(found.len(), 1, "one video stream: {probe}");
    found[0]
}

#[track_caller]
fn audio_stream(probe: &Value) -> &Value {
    let found = streams(probe, "audio");
    assert_eq!(found.len(), 1, "one audio stream: {probe}");
    found[0]
}

/// A video stream's (width, height).
fn size(stream: &Value) -> (u64, u64) {
    (
        stream["width"].as_u64().expect("width"),
        stream["height"].as_u64().expect("height"),
    )
}

/// The container's tags, lower-cased keys (empty when it has none).
fn tags(probe: &Value) -> Vec<(String, String)> {
    probe["format"]["tags"]
        .as_object()
        .map(|tags| {
            tags.iter()
                .map(|(k, v)| (k.to_ascii_lowercase(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// Runs ffmpeg on `bytes` (a `*.EXT`) into the null muxer and answers its stderr.
fn analyse(bytes: &[u8], ext: &str, before: &[&str], filters: &str) -> String {
    let scratch = Scratch::new();
    let input = scratch.file(bytes, ext);
    let run = Command::new("ffmpeg")
        .args(["-hide_banner", "-nostdin", "-nostats"])
        .args(before)
        .arg("-i")
        .arg(&input)
        .args(["-vn", "-af", filters, "-f", "null", "-"])
        .output()
        .expect("run ffmpeg");
    let stderr = String::from_utf8_lossy(&run.stderr).to_string();
    assert!(run.status.success(), "ffmpeg {filters} failed: {stderr}");
    stderr
}

/// Integrated loudness in LUFS, from the ebur128 filter's summary.
fn loudness_lufs(bytes: &[u8], ext: &str) -> f64 {
    let stderr = analyse(bytes, ext, &[], "ebur128");
    let summary = stderr.rsplit("Summary:").next().expect("a summary");
    summary
        .lines()
        .map(str::trim)
        .find_map(|line| line.strip_prefix("I:"))
        .and_then(|rest| rest.trim().trim_end_matches("LUFS").trim().parse().ok())
        .unwrap_or_else(|| panic!("no integrated loudness in {summary}"))
}

/// The mean volume in dB of `length` seconds of sound from `start`.
fn mean_volume(bytes: &[u8], ext: &str, start: f64, length: f64) -> f64 {
    let (start, length) = (start.to_string(), length.to_string());
    let stderr = analyse(bytes, ext, &["-ss", &start, "-t", &length], "volumedetect");
    stderr
        .lines()
        .find_map(|line| line.split("mean_volume:").nth(1))
        .and_then(|rest| rest.trim().trim_end_matches("dB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no mean volume in {stderr}"))
}

/// The frame shown `at` seconds into a video, as a picture.
fn frame(bytes: &[u8], ext: &str, at: f64) -> RgbImage {
    let scratch = Scratch::new();
    let input = scratch.file(bytes, ext);
    let out = scratch.path("frame.png");
    let at = at.to_string();
    let run = Command::new("ffmpeg")
        .args([
            "-hide_banner",
            "-nostdin",
            "-loglevel",
            "error",
            "-y",
            "-ss",
            &at,
            "-i",
        ])
        .arg(&input)
        .args(["-frames:v", "1"])
        .arg(&out)
        .output()
        .expect("run ffmpeg");
    assert!(
        run.status.success() && out.exists(),
        "no frame at {at} s: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    image::open(text(&out)).expect("decode the frame").into_rgb8()
}

/// The mean difference of two same-sized pictures, per channel (0 to 255).
fn difference(a: &RgbImage, b: &RgbImage) -> f64 {
    assert_eq!(a.dimensions(), b.dimensions());
    let total: u64 = a
        .as_raw()
        .iter()
        .zip(b.as_raw())
        .map(|(x, y)| u64::from(x.abs_diff(*y)))
        .sum();
    total as f64 / a.as_raw().len() as f64
}

fn brightness(p: &Rgb<u8>) -> u32 {
    p.0.iter().map(|&c| u32::from(c)).sum::<u32>() / 3
}

/// The mean brightness of the rectangle (x, y, w, h).
fn mean_brightness(picture: &RgbImage, (x, y, w, h): (u32, u32, u32, u32)) -> f64 {
    let mut sum = 0u64;
    for i in x..x + w {
        for j in y..y + h {
            sum += u64::from(brightness(picture.get_pixel(i, j)));
        }
    }
    sum as f64 / f64::from(w * h)
}

/// How many pixels of the rectangle (x, y, w, h) are near white.
fn bright_pixels(picture: &RgbImage, (x, y, w, h): (u32, u32, u32, u32)) -> usize {
    (x..x + w)
        .flat_map(|i| (y..y + h).map(move |j| (i, j)))
        .filter(|&(i, j)| picture.get_pixel(i, j).0.iter().all(|&c| c > 200))
        .count()
}

#[track_caller]
fn assert_near(actual: f64, expected: f64, tolerance: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= tolerance,
        "{what}: {actual} is not within {tolerance} of {expected}"
    );
}

/// Asserts a job failed with a readable error of its own (naming `file` when given) and made
/// nothing.
#[track_caller]
fn assert_failed(job: &Value, file: Option<&str>) -> String {
    assert_eq!(job["state"], "failed", "{job}");
    let error = job["error"].as_str().unwrap_or_default().to_string();
    assert!(!error.trim().is_empty(), "{job}");
    for panic_text in ["panicked", "RUST_BACKTRACE", "unwrap", "thread '"] {
        assert!(!error.contains(panic_text), "{error:?}");
    }
    if let Some(file) = file {
        assert!(error.contains(file), "{error:?} does not name {file}");
    }
    assert_eq!(made(job).len(), 0, "{job}");
    error
}

fn extension(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or_default()
}

/// The bytes of every file a job made, with their extensions.
async fn results(app: &TestApp, user: &TestUser, job: &Value) -> Vec<(Vec<u8>, String)> {
    let mut out = Vec::new();
    for (id, name) in made(job) {
        out.push((app.download(user, &id).await, extension(&name).to_string()));
    }
    out
}

/// The only file a job made, with its extension.
async fn result(app: &TestApp, user: &TestUser, job: &Value) -> (Vec<u8>, String) {
    assert_done(job);
    let mut all = results(app, user, job).await;
    assert_eq!(all.len(), 1, "one file made: {job}");
    all.remove(0)
}

/// Uploads a video, a piece of audio or a picture with the kind and MIME type its name says.
async fn media(app: &TestApp, user: &TestUser, name: &str, bytes: Vec<u8>) -> FileId {
    let (kind, mime) = match extension(name) {
        "mp4" => ("Video", "video/mp4"),
        "mov" => ("Video", "video/quicktime"),
        "webm" => ("Video", "video/webm"),
        "wav" => ("Audio", "audio/wav"),
        "mp3" => ("Audio", "audio/mpeg"),
        "m4a" => ("Audio", "audio/mp4"),
        "flac" => ("Audio", "audio/flac"),
        "png" => ("Image", "image/png"),
        "jpg" => ("Image", "image/jpeg"),
        other => panic!("no kind for .{other}"),
    };
    app.upload(user, name, kind, mime, bytes).await
}

async fn with_worker() -> (TestApp, TestUser) {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    (app, user)
}

/// Queues every job first (the worker runs two at a time), then waits for each.
async fn run_all(app: &TestApp, user: &TestUser, bodies: Vec<Value>) -> Vec<Value> {
    let mut queued = Vec::new();
    for body in bodies {
        queued.push(app.create_job(user, body).await);
    }
    let mut ended = Vec::new();
    for job in &queued {
        ended.push(app.wait_job(user, &job["id"]).await);
    }
    ended
}

// ---- cut ----

#[tokio::test]
async fn cut_keeps_the_span_asked_fast_exact_and_with_fades() {
    let (app, user) = with_worker().await;
    // 6 s, a keyframe every second.
    let input = video("320x240", 6.0, &[]);
    let clip = media(&app, &user, "clip.mp4", input.clone()).await;
    let sound = tone(5.0, "", "wav", &[]);
    let song = media(&app, &user, "tone.wav", sound).await;

    let jobs = run_all(
        &app,
        &user,
        vec![
            json!({ "jobType": "cut", "fileIds": [clip], "options": { "start": 1.5, "end": 3.5 } }),
            json!({ "jobType": "cut", "fileIds": [clip], "options": { "start": "0:01.5", "end": "0:03.5", "exact": true } }),
            json!({
                "jobType": "cut", "fileIds": [song],
                "options": { "start": 1, "end": "0:03.5", "fadeIn": 0.5, "fadeOut": 0.5 },
            }),
        ],
    )
    .await;

    // Two cuts of one clip get names of their own, in the order they finish (scaled out, the
    // second may finish first).
    let mut cut = [names(&jobs[0]), names(&jobs[1])].concat();
    cut.sort();
    assert_eq!(cut, ["clip cut (2).mp4", "clip cut.mp4"]);
    // Fast: streams copied from the keyframe before the start.
    let (fast, ext) = result(&app, &user, &jobs[0]).await;
    assert_eq!(ext, "mp4");
    let info = probe(&fast, "mp4");
    assert_near(duration(&info), 2.0, 1.0, "fast cut duration");
    assert_eq!(video_stream(&info)["codec_name"], "h264");
    assert_eq!(size(video_stream(&info)), (320, 240));
    assert_eq!(audio_stream(&info)["codec_name"], "aac");

    // Exact: to the frame.
    let (exact, _) = result(&app, &user, &jobs[1]).await;
    // The job keeps clock forms as seconds.
    assert_eq!(
        (
            jobs[1]["options"]["start"].as_f64(),
            jobs[1]["options"]["end"].as_f64()
        ),
        (Some(1.5), Some(3.5)),
        "{}",
        jobs[1]
    );
    let info = probe(&exact, "mp4");
    assert_near(duration(&info), 2.0, 1.0 / 25.0 + 0.03, "exact cut duration");
    let frames = number(&video_stream(&info)["nb_frames"]);
    assert_near(frames, 50.0, 1.0, "exact cut frames");
    assert_eq!(size(video_stream(&info)), (320, 240));
    // It starts on the picture at 1.5 s, not on the keyframe at 1 s.
    let first = frame(&exact, "mp4", 0.0);
    let (at_start, at_keyframe) = (frame(&input, "mp4", 1.5), frame(&input, "mp4", 1.0));
    let (to_start, to_keyframe) = (difference(&first, &at_start), difference(&first, &at_keyframe));
    assert!(
        to_start * 2.0 < to_keyframe,
        "the first frame is {to_start} from 1.5 s and {to_keyframe} from 1 s"
    );

    // Audio, in its own container, faded in and out.
    let (cut, ext) = result(&app, &user, &jobs[2]).await;
    assert_eq!(names(&jobs[2]), ["tone cut.wav"]);
    assert_eq!(jobs[2]["files"][0]["type"], "Audio", "{}", jobs[2]);
    let info = probe(&cut, &ext);
    assert!(
        info["format"]["format_name"].as_str().unwrap().contains("wav"),
        "{info}"
    );
    assert_near(duration(&info), 2.5, 0.05, "audio cut duration");
    let middle = mean_volume(&cut, "wav", 1.0, 0.2);
    let opening = mean_volume(&cut, "wav", 0.0, 0.05);
    let ending = mean_volume(&cut, "wav", 2.44, 0.05);
    assert!(middle > -30.0, "the middle is at {middle} dB");
    assert!(
        opening < middle - 10.0,
        "fade in: {opening} dB against {middle} dB"
    );
    assert!(
        ending < middle - 10.0,
        "fade out: {ending} dB against {middle} dB"
    );
}

// ---- proxy and convert ----

#[tokio::test]
async fn proxy_lowers_tall_videos_and_never_enlarges() {
    let (app, user) = with_worker().await;
    let small = media(&app, &user, "small.mp4", video("640x360", 1.0, &[])).await;
    let big = media(&app, &user, "big.mp4", video("1920x1080", 1.0, &[])).await;
    let jobs = run_all(
        &app,
        &user,
        vec![
            json!({ "jobType": "proxy", "fileIds": [small], "options": { "height": 720 } }),
            json!({ "jobType": "proxy", "fileIds": [big], "options": { "height": 720 } }),
            json!({ "jobType": "proxy", "fileIds": [big] }),
        ],
    )
    .await;

    for (job, name, expected) in [
        (&jobs[0], "small proxy.mp4", (640, 360)),
        (&jobs[1], "big proxy.mp4", (1280, 720)),
        (&jobs[2], "big proxy (2).mp4", (1920, 1080)),
    ] {
        let (bytes, ext) = result(&app, &user, job).await;
        assert_eq!(names(job), [name]);
        assert_eq!(job["files"][0]["type"], "Video", "{job}");
        let info = probe(&bytes, &ext);
        assert!(
            info["format"]["format_name"].as_str().unwrap().contains("mp4"),
            "{info}"
        );
        assert_eq!(video_stream(&info)["codec_name"], "h264", "{name}");
        assert_eq!(size(video_stream(&info)), expected, "{name}");
        assert_near(duration(&info), 1.0, 0.15, name);
    }
    assert_eq!(jobs[2]["options"]["height"], 1080, "the default: {}", jobs[2]);
}

#[tokio::test]
async fn convert_writes_the_container_and_codecs_asked() {
    let (app, user) = with_worker().await;
    let clip = media(&app, &user, "clip.mp4", video("320x240", 2.0, &[])).await;
    let song = media(&app, &user, "song.wav", tone(2.0, "", "wav", &[])).await;
    let jobs = run_all(
        &app,
        &user,
        vec![
            json!({ "jobType": "convert", "fileIds": [clip], "options": { "format": "webm" } }),
            json!({ "jobType": "convert", "fileIds": [clip], "options": { "format": "mov", "codec": "hevc" } }),
            json!({ "jobType": "convert", "fileIds": [song], "options": { "format": "flac" } }),
            json!({ "jobType": "convert", "fileIds": [song], "options": { "format": "mp3" } }),
        ],
    )
    .await;

    let (webm, ext) = result(&app, &user, &jobs[0]).await;
    assert_eq!(names(&jobs[0]), ["clip.webm"]);
    assert_eq!(jobs[0]["files"][0]["type"], "Video", "{}", jobs[0]);
    let info = probe(&webm, &ext);
    assert!(
        info["format"]["format_name"].as_str().unwrap().contains("webm"),
        "{info}"
    );
    assert_eq!(video_stream(&info)["codec_name"], "vp9");
    assert_eq!(audio_stream(&info)["codec_name"], "opus");
    assert_eq!(size(video_stream(&info)), (320, 240));
    assert_near(duration(&info), 2.0, 0.15, "webm duration");

    let (mov, ext) = result(&app, &user, &jobs[1]).await;
    assert_eq!(names(&jobs[1]), ["clip.mov"]);
    let info = probe(&mov, &ext);
    assert!(
        info["format"]["format_name"].as_str().unwrap().contains("mov"),
        "{info}"
    );
    assert_eq!(video_stream(&info)["codec_name"], "hevc");
    assert_eq!(size(video_stream(&info)), (320, 240));
    assert_near(duration(&info), 2.0, 0.15, "mov duration");

    for (job, name, format, codec) in [
        (&jobs[2], "song.flac", "flac", "flac"),
        (&jobs[3], "song.mp3", "mp3", "mp3"),
    ] {
        let (bytes, ext) = result(&app, &user, job).await;
        assert_eq!(names(job), [name]);
        assert_eq!(job["files"][0]["type"], "Audio", "{job}");
        let info = probe(&bytes, &ext);
        assert_eq!(info["format"]["format_name"], format, "{info}");
        assert_eq!(audio_stream(&info)["codec_name"], codec);
        assert_eq!(streams(&info, "video").len(), 0, "{info}");
        assert_near(duration(&info), 2.0, 0.1, name);
    }
}

// ---- shrink ----

#[tokio::test]
async fn shrink_lands_under_the_target_or_fails_when_it_cannot() {
    let (app, user) = with_worker().await;
    // Noise every frame, nearly lossless: several megabytes for 4 seconds.
    let heavy = video(
        "640x360",
        4.0,
        &["-vf", "noise=alls=40:allf=t", "-crf", "8", "-b:a", "192k"],
    );
    assert!(heavy.len() > 1_000_000, "the input is only {} bytes", heavy.len());
    let heavy_id = media(&app, &user, "heavy.mp4", heavy).await;
    // 12 s in 0.1 MB leaves too little for the picture.
    let long = media(&app, &user, "long.mp4", video("160x120", 12.0, &[])).await;
    let jobs = run_all(
        &app,
        &user,
        vec![
            json!({ "jobType": "shrink", "fileIds": [heavy_id], "options": { "targetMB": 0.2 } }),
            json!({ "jobType": "shrink", "fileIds": [long], "options": { "targetMB": 0.1 } }),
        ],
    )
    .await;

    let (small, ext) = result(&app, &user, &jobs[0]).await;
    assert_eq!(ext, "mp4", "{}", jobs[0]);
    assert!(small.len() <= 200_000, "{} bytes", small.len());
    assert_eq!(jobs[0]["files"][0]["fileSize"], json!(small.len()));
    let info = probe(&small, "mp4");
    assert_eq!(video_stream(&info)["codec_name"], "h264");
    assert_eq!(size(video_stream(&info)), (640, 360));
    assert_near(duration(&info), 4.0, 0.2, "shrunk duration");

    let error = assert_failed(&jobs[1], Some("long.mp4"));
    assert!(error.contains("too small"), "{error:?}");
}

// ---- reframe, gif, burnIn ----

#[tokio::test]
async fn reframe_crops_the_middle_and_rotates_clockwise() {
    let (app, user) = with_worker().await;
    // Black with its left half white.
    let half = video_of(
        "color=c=black:size=640x360:rate=25,drawbox=x=0:y=0:w=320:h=360:color=white:t=fill",
        1.0,
        &[],
    );
    let clip = media(&app, &user, "half.mp4", half).await;
    let jobs = run_all(
        &app,
        &user,
        vec![
            json!({ "jobType": "reframe", "fileIds": [clip], "options": { "aspect": "9:16" } }),
            json!({ "jobType": "reframe", "fileIds": [clip], "options": { "rotate": 90 } }),
        ],
    )
    .await;

    let (tall, ext) = result(&app, &user, &jobs[0]).await;
    assert_eq!(ext, "mp4", "{}", jobs[0]);
    let info = probe(&tall, "mp4");
    let (w, h) = size(video_stream(&info));
    assert_eq!(h, 360, "{info}");
    assert!(w % 2 == 0 && (200..=204).contains(&w), "{w}x{h}");
    assert_near(duration(&info), 1.0, 0.15, "reframed duration");
    // From the middle: the white edge runs down the middle of the crop.
    let picture = frame(&tall, "mp4", 0.5);
    let (w, h) = picture.dimensions();
    assert!(
        mean_brightness(&picture, (2, 0, 20, h)) > 200.0,
        "the left is white"
    );
    assert!(
        mean_brightness(&picture, (w - 22, 0, 20, h)) < 50.0,
        "the right is black"
    );

    let (turned, _) = result(&app, &user, &jobs[1]).await;
    let info = probe(&turned, "mp4");
    assert_eq!(size(video_stream(&info)), (360, 640), "{info}");
    // Clockwise: the left goes to the top.
    let picture = frame(&turned, "mp4", 0.5);
    assert_eq!(picture.dimensions(), (360, 640));
    assert!(
        mean_brightness(&picture, (0, 20, 360, 200)) > 200.0,
        "the top is white"
    );
    assert!(
        mean_brightness(&picture, (0, 420, 360, 200)) < 50.0,
        "the bottom is black"
    );
}

#[tokio::test]
async fn gif_and_burn_in_make_what_was_asked() {
    let (app, user) = with_worker().await;
    let clip = media(&app, &user, "clip.mp4", video("320x240", 4.0, &[])).await;
    let plain_bytes = video_of("color=c=0x203040:size=320x240:rate=25", 2.0, &[]);
    let plain = media(&app, &user, "plain.mp4", plain_bytes.clone()).await;
    let jobs = run_all(
        &app,
        &user,
        vec![
            json!({ "jobType": "gif", "fileIds": [clip], "options": { "start": 1, "length": 2, "width": 200, "fps": 10 } }),
            json!({ "jobType": "burnIn", "fileIds": [plain], "options": { "text": "DRIVE TEST", "timecode": true } }),
        ],
    )
    .await;

    let (gif, ext) = result(&app, &user, &jobs[0]).await;
    assert_eq!(ext, "gif", "{}", jobs[0]);
    assert_eq!(&gif[..4], b"GIF8");
    let info = probe_with(&gif, "gif", &["-count_frames"]);
    let stream = video_stream(&info);
    assert_eq!(stream["codec_name"], "gif");
    assert_eq!(size(stream), (200, 150));
    assert_eq!(stream["r_frame_rate"], "10/1", "{info}");
    assert_near(number(&stream["nb_read_frames"]), 20.0, 1.0, "gif frames");
    assert_near(duration(&info), 2.0, 0.15, "gif duration");

    let (burnt, ext) = result(&app, &user, &jobs[1]).await;
    assert_eq!(ext, "mp4", "{}", jobs[1]);
    let info = probe(&burnt, "mp4");
    assert_eq!(video_stream(&info)["codec_name"], "h264");
    assert_eq!(size(video_stream(&info)), (320, 240));
    assert_near(duration(&info), 2.0, 0.15, "burnt-in duration");
    // Text at the bottom and the time at the top left, over a picture otherwise unchanged.
    let (before, after) = (frame(&plain_bytes, "mp4", 1.0), frame(&burnt, "mp4", 1.0));
    let bottom = (0, 180, 320, 60);
    let top_left = (0, 0, 160, 60);
    let middle = (60, 90, 200, 60);
    assert_eq!(
        bright_pixels(&before, bottom) + bright_pixels(&before, top_left),
        0
    );
    assert!(bright_pixels(&after, bottom) > 30, "no text at the bottom");
    assert!(
        bright_pixels(&after, top_left) > 30,
        "no timecode at the top left"
    );
    assert_eq!(bright_pixels(&after, middle), 0, "something drawn in the middle");
}

// ---- join ----

#[tokio::test]
async fn join_puts_videos_or_audio_end_to_end() {
    let (app, user) = with_worker().await;
    let first = media(&app, &user, "first.mp4", video("320x240", 2.0, &[])).await;
    let second = media(&app, &user, "second.mp4", video("640x360", 2.0, &[])).await;
    let one = media(&app, &user, "one.wav", tone(1.0, "", "wav", &[])).await;
    let two = media(&app, &user, "two.mp3", tone(1.5, "", "mp3", &[])).await;
    let jobs = run_all(
        &app,
        &user,
        vec![
            json!({ "jobType": "join", "fileIds": [first, second] }),
            json!({ "jobType": "join", "fileIds": [one, two], "options": { "format": "flac" } }),
        ],
    )
    .await;

    let (joined, ext) = result(&app, &user, &jobs[0]).await;
    assert_eq!(ext, "mp4", "{}", jobs[0]);
    let info = probe(&joined, "mp4");
    assert_eq!(video_stream(&info)["codec_name"], "h264");
    assert_eq!(size(video_stream(&info)), (320, 240), "the first one's size");
    assert_eq!(streams(&info, "audio").len(), 1, "{info}");
    assert_near(duration(&info), 4.0, 0.2, "joined video duration");

    let (joined, ext) = result(&app, &user, &jobs[1]).await;
    assert_eq!(ext, "flac", "{}", jobs[1]);
    assert_eq!(jobs[1]["files"][0]["type"], "Audio", "{}", jobs[1]);
    let info = probe(&joined, "flac");
    assert_eq!(audio_stream(&info)["codec_name"], "flac");
    // An mp3 starts and ends with a little padding.
    assert_near(duration(&info), 2.5, 0.1, "joined audio duration");
}

// ---- stills and contact sheets ----

#[tokio::test]
async fn stills_and_contact_sheets_take_pictures_of_a_video() {
    let (app, user) = with_worker().await;
    let clip = media(&app, &user, "clip.mp4", video("320x240", 3.0, &[])).await;
    let gradient = |shade: u8| {
        let picture = RgbImage::from_fn(200, 100, |x, _| Rgb([shade, (x * 255 / 200) as u8, 64]));
        let mut out = Vec::new();
        image::DynamicImage::ImageRgb8(picture)
            .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
            .expect("encode PNG");
        out
    };
    let mut pictures = Vec::new();
    for n in 0..3u8 {
        pictures.push(media(&app, &user, &format!("p{n}.png"), gradient(n * 100)).await);
    }
    let jobs = run_all(
        &app,
        &user,
        vec![
            json!({ "jobType": "stills", "fileIds": [clip], "options": { "moments": ["0:01", 2.5] } }),
            json!({ "jobType": "stills", "fileIds": [clip], "options": { "every": 1, "format": "png" } }),
            json!({ "jobType": "contactSheet", "fileIds": [clip], "options": { "count": 6, "columns": 3 } }),
            json!({ "jobType": "contactSheet", "fileIds": pictures, "options": { "columns": 2 } }),
        ],
    )
    .await;

    assert_done(&jobs[0]);
    let stills = results(&app, &user, &jobs[0]).await;
    assert_eq!(stills.len(), 2, "{}", jobs[0]);
    let mut decoded = Vec::new();
    for (bytes, ext) in &stills {
        assert_eq!(ext, "jpg", "{}", jobs[0]);
        assert_eq!(image::guess_format(bytes).ok(), Some(image::ImageFormat::Jpeg));
        let picture = image::load_from_memory(bytes)
            .expect("a still decodes")
            .into_rgb8();
        assert_eq!(picture.dimensions(), (320, 240));
        decoded.push(picture);
    }
    assert!(
        difference(&decoded[0], &decoded[1]) > 1.0,
        "two moments, two pictures"
    );

    assert_done(&jobs[1]);
    let every = results(&app, &user, &jobs[1]).await;
    assert_eq!(every.len(), 3, "a still at 0, 1 and 2 s: {}", jobs[1]);
    for (bytes, ext) in &every {
        assert_eq!(ext, "png", "{}", jobs[1]);
        assert_eq!(image::guess_format(bytes).ok(), Some(image::ImageFormat::Png));
        let picture = image::load_from_memory(bytes).expect("a still decodes");
        assert_eq!((picture.width(), picture.height()), (320, 240));
    }

    // Six 4:3 frames in three columns: two rows, about twice as wide as high.
    let (sheet, ext) = result(&app, &user, &jobs[2]).await;
    assert_eq!(ext, "jpg", "{}", jobs[2]);
    assert_eq!(image::guess_format(&sheet).ok(), Some(image::ImageFormat::Jpeg));
    let sheet = image::load_from_memory(&sheet).expect("the sheet decodes");
    let ratio = f64::from(sheet.width()) / f64::from(sheet.height());
    assert!(
        (1.6..=2.4).contains(&ratio),
        "{}x{}",
        sheet.width(),
        sheet.height()
    );

    // Three 2:1 pictures in two columns: two rows, about twice as wide as high.
    let (sheet, ext) = result(&app, &user, &jobs[3]).await;
    assert_eq!(ext, "jpg", "{}", jobs[3]);
    let sheet = image::load_from_memory(&sheet).expect("the sheet decodes");
    let ratio = f64::from(sheet.width()) / f64::from(sheet.height());
    assert!(
        (1.6..=2.4).contains(&ratio),
        "{}x{}",
        sheet.width(),
        sheet.height()
    );
}

// ---- sound ----

#[tokio::test]
async fn extract_audio_loudness_and_split_work_on_the_sound() {
    let (app, user) = with_worker().await;
    let clip = media(&app, &user, "clip.mp4", video("320x240", 3.0, &[])).await;
    let quiet_bytes = tone(6.0, "volume=0.05", "wav", &[]);
    let before = loudness_lufs(&quiet_bytes, "wav");
    assert!(before < -40.0, "the input is at {before} LUFS");
    let quiet = media(&app, &user, "quiet.wav", quiet_bytes).await;
    // 1 s of tone, 1.5 s of silence, 1 s of tone, 1.5 s of silence, 1 s of tone.
    let pieces = media(
        &app,
        &user,
        "pieces.wav",
        tone(6.0, "volume='if(lt(mod(t,2.5),1),1,0)':eval=frame", "wav", &[]),
    )
    .await;
    let jobs = run_all(
        &app,
        &user,
        vec![
            json!({ "jobType": "extractAudio", "fileIds": [clip], "options": { "format": "m4a" } }),
            json!({ "jobType": "loudness", "fileIds": [quiet], "options": { "target": -16 } }),
            json!({ "jobType": "split", "fileIds": [pieces] }),
        ],
    )
    .await;

    let (sound, ext) = result(&app, &user, &jobs[0]).await;
    assert_eq!(names(&jobs[0]), ["clip.m4a"]);
    assert_eq!(jobs[0]["files"][0]["type"], "Audio", "{}", jobs[0]);
    let info = probe(&sound, &ext);
    assert_eq!(streams(&info, "video").len(), 0, "audio only: {info}");
    assert_eq!(audio_stream(&info)["codec_name"], "aac");
    assert_near(duration(&info), 3.0, 0.1, "extracted audio duration");

    let (louder, ext) = result(&app, &user, &jobs[1]).await;
    assert_eq!(ext, "wav", "{}", jobs[1]);
    let info = probe(&louder, "wav");
    assert!(
        info["format"]["format_name"].as_str().unwrap().contains("wav"),
        "{info}"
    );
    assert_near(duration(&info), 6.0, 0.1, "loudness duration");
    let after = loudness_lufs(&louder, "wav");
    assert_near(after, -16.0, 1.0, "integrated loudness");

    assert_done(&jobs[2]);
    let parts = results(&app, &user, &jobs[2]).await;
    assert_eq!(parts.len(), 3, "{}", jobs[2]);
    for (n, (bytes, ext)) in parts.iter().enumerate() {
        assert_eq!(ext, "wav", "{}", jobs[2]);
        let length = duration(&probe(bytes, ext));
        assert_near(length, 1.0, 0.2, &format!("part {}", n + 1));
        assert!(
            mean_volume(bytes, ext, 0.0, length) > -30.0,
            "part {} is sound",
            n + 1
        );
    }
}

// ---- stripMetadata ----

#[tokio::test]
async fn strip_metadata_drops_the_tags_and_copies_the_streams() {
    let (app, user) = with_worker().await;
    let song_bytes = tone(
        2.0,
        "",
        "mp3",
        &["-metadata", "title=Secret", "-metadata", "artist=Someone"],
    );
    let clip_bytes = video("320x240", 2.0, &["-metadata", "title=Secret"]);
    for (bytes, ext) in [(&song_bytes, "mp3"), (&clip_bytes, "mp4")] {
        let tags = tags(&probe(bytes, ext));
        assert!(tags.contains(&("title".into(), "Secret".into())), "{tags:?}");
    }
    let song = media(&app, &user, "song.mp3", song_bytes.clone()).await;
    let clip = media(&app, &user, "clip.mp4", clip_bytes.clone()).await;
    let jobs = run_all(
        &app,
        &user,
        vec![
            json!({ "jobType": "stripMetadata", "fileIds": [song] }),
            json!({ "jobType": "stripMetadata", "fileIds": [clip] }),
        ],
    )
    .await;

    for (job, input, ext) in [(&jobs[0], &song_bytes, "mp3"), (&jobs[1], &clip_bytes, "mp4")] {
        let (bytes, got) = result(&app, &user, job).await;
        assert_eq!(got, ext, "{job}");
        let (before, after) = (probe(input, ext), probe(&bytes, ext));
        let tags = tags(&after);
        for key in ["title", "artist"] {
            assert!(tags.iter().all(|(k, _)| k != key), "{key} left: {tags:?}");
        }
        assert!(tags.iter().all(|(_, v)| !v.contains("Secret")), "{tags:?}");
        // The same streams, copied.
        let codecs = |info: &Value| {
            info["streams"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| (s["codec_type"].clone(), s["codec_name"].clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(codecs(&after), codecs(&before), "{ext}");
        assert_near(duration(&after), duration(&before), 0.1, ext);
    }
    let (bytes, _) = result(&app, &user, &jobs[1]).await;
    let info = probe(&bytes, "mp4");
    assert_eq!(size(video_stream(&info)), (320, 240));
    assert_eq!(
        number(&video_stream(&info)["nb_frames"]),
        number(&video_stream(&probe(&clip_bytes, "mp4"))["nb_frames"]),
        "every frame copied"
    );
}

// ---- damaged inputs ----

#[tokio::test]
async fn damaged_videos_fail_their_jobs_cleanly_while_others_finish() {
    let (app, user) = with_worker().await;
    let good = video("320x240", 2.0, &[]);
    let random = media(&app, &user, "random.mp4", noise(50_000, 3)).await;
    // Its index (moov) is written last: the first half has none.
    let truncated = media(&app, &user, "truncated.mp4", good[..good.len() / 2].to_vec()).await;
    let fine = media(&app, &user, "fine.mp4", good).await;
    let jobs = run_all(
        &app,
        &user,
        vec![
            json!({ "jobType": "proxy", "fileIds": [random], "options": { "height": 720 } }),
            json!({ "jobType": "cut", "fileIds": [truncated], "options": { "start": 0.5 } }),
            json!({ "jobType": "proxy", "fileIds": [truncated], "options": { "height": 720 } }),
            json!({ "jobType": "proxy", "fileIds": [fine], "options": { "height": 720 } }),
        ],
    )
    .await;

    assert_failed(&jobs[0], Some("random.mp4"));
    assert_failed(&jobs[1], Some("truncated.mp4"));
    assert_failed(&jobs[2], Some("truncated.mp4"));
    let (bytes, _) = result(&app, &user, &jobs[3]).await;
    assert_eq!(names(&jobs[3]), ["fine proxy.mp4"]);
    let info = probe(&bytes, "mp4");
    assert_eq!(size(video_stream(&info)), (320, 240));
    assert_near(duration(&info), 2.0, 0.15, "the good job's duration");
}

// ---- files that name other resources ----

/// Uploads whose bytes tell FFmpeg to fetch something else: an HLS playlist, an ffconcat
/// list and a DASH manifest whose segment template expands to an image sequence
/// (`img000.png`, `img001.png`…). Each is named like a video, so it is read on insert and can
/// be given to convert and proxy. The playlist and the manifest name a loopback server of the
/// test's own, which must record no request. The list names a relative file (FFmpeg's concat
/// refuses URLs by itself but resolves a plain name against the list's own URL, another object
/// of the store), so the worker also reaches the store through a proxy that notes every
/// request: nothing but each file's own object may be read.
#[tokio::test]
async fn files_that_name_other_resources_are_refused_and_nothing_else_is_fetched() {
    let store = TcpProxy::start(&env("DRIVE_S3_ENDPOINT")).await;
    let mut app = TestApp::spawn().await;
    app.start_worker(&[("DRIVE_S3_ENDPOINT", &store.endpoint)]).await;
    let user = app.user(Some("Pro")).await;
    // The server the files name: it forwards to the store, so a fetch would even succeed.
    let canary = TcpProxy::start(&env("DRIVE_S3_ENDPOINT")).await;
    let elsewhere = &canary.endpoint;
    let hostile = [
        (
            "playlist.mp4",
            format!(
                "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n{elsewhere}/canary.ts\n#EXT-X-ENDLIST\n"
            ),
        ),
        (
            "list.mp4",
            "ffconcat version 1.0\nfile 'canary.mp4'\n".to_string(),
        ),
        (
            "sequence.mp4",
            format!(
                r#"<?xml version="1.0"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" type="static" mediaPresentationDuration="PT3S" minBufferTime="PT1S">
<Period><AdaptationSet mimeType="video/mp4"><Representation id="v" bandwidth="1000">
<SegmentTemplate timescale="1" duration="1" media="{elsewhere}/img$Number%03d$.png"/>
</Representation></AdaptationSet></Period></MPD>
"#
            ),
        ),
    ];
    let mut ids = Vec::new();
    for (name, text) in &hostile {
        ids.push(media(&app, &user, name, text.clone().into_bytes()).await);
    }
    let mut bodies = Vec::new();
    for id in &ids {
        bodies.push(json!({ "jobType": "convert", "fileIds": [id], "options": { "format": "mov" } }));
        bodies.push(json!({ "jobType": "proxy", "fileIds": [id] }));
    }
    let jobs = run_all(&app, &user, bodies).await;

    let mut readings = Vec::new();
    for id in &ids {
        readings.push(app.reading(&user, *id).await);
    }

    assert_eq!(
        canary.requests(),
        Vec::<String>::new(),
        "FFmpeg fetched what the files named"
    );
    // Each file was read from the store, and nothing else: no segment, listed file or image.
    let keys: Vec<String> = sqlx::query_scalar("select object_key from files where id = any($1)")
        .bind(&ids)
        .fetch_all(&mut app.db().await)
        .await
        .unwrap();
    let objects: Vec<String> = keys
        .iter()
        .map(|key| format!("/{}/{key}", app.private_bucket))
        .collect();
    let requests = store.requests();
    let paths: Vec<&str> = requests
        .iter()
        .filter_map(|r| r.split([' ', '?']).nth(1))
        .collect();
    for object in &objects {
        assert!(
            paths.contains(&object.as_str()),
            "{object} was never read: {requests:#?}"
        );
    }
    let others: Vec<&&str> = paths
        .iter()
        .filter(|path| !objects.iter().any(|o| o == *path))
        .collect();
    assert!(
        others.is_empty(),
        "FFmpeg fetched what the files named: {others:#?}"
    );

    // Each reading and job failed as the file's fault, at once, never retried as the machine's.
    let refused = "not one the drive opens";
    for ((name, _), file) in hostile.iter().zip(&readings) {
        assert_eq!(file["metadataState"], "failed", "{file}");
        let why = file["metadataError"].as_str().expect("a reason");
        assert!(why.contains(refused), "{name}: {why}");
    }
    for (job, (name, _)) in jobs.iter().zip(hostile.iter().flat_map(|h| [h, h])) {
        let error = assert_failed(job, Some(name));
        assert!(error.contains(refused), "{error}");
    }
    let attempts: Vec<i32> = sqlx::query_scalar("select attempts from file_jobs where input_ids && $1")
        .bind(&ids)
        .fetch_all(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(attempts, vec![1; 9]);
}

// ---- settings ----

#[tokio::test]
async fn every_audio_and_video_setting_is_checked_with_a_400_naming_it() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    // The API goes by the kind recorded at upload; nothing is read before the job runs.
    let clip = app
        .upload(&user, "clip.mp4", "Video", "video/mp4", bytes(2000, 1))
        .await;
    let song = app
        .upload(&user, "song.mp3", "Audio", "audio/mpeg", bytes(2000, 2))
        .await;
    let photo = app
        .upload(&user, "photo.png", "Image", "image/png", bytes(2000, 3))
        .await;

    let cases = [
        ("cut", clip, json!({ "start": 3, "end": 2 }), "options.end"),
        (
            "cut",
            clip,
            json!({ "start": "0:03", "end": "0:03" }),
            "options.end",
        ),
        ("cut", song, json!({ "fadeIn": 11 }), "options.fadeIn"),
        ("cut", song, json!({ "fadeOut": 10.5 }), "options.fadeOut"),
        ("cut", photo, json!({}), "fileIds"),
        ("proxy", clip, json!({ "height": 480 }), "options.height"),
        ("proxy", song, json!({}), "fileIds"),
        ("convert", clip, json!({ "format": "mp3" }), "fileIds"),
        ("convert", song, json!({ "format": "mp4" }), "fileIds"),
        ("convert", photo, json!({ "format": "webm" }), "fileIds"),
        (
            "convert",
            clip,
            json!({ "format": "webm", "codec": "h264" }),
            "options.codec",
        ),
        (
            "convert",
            song,
            json!({ "format": "flac", "codec": "hevc" }),
            "options.codec",
        ),
        ("shrink", clip, json!({ "targetMB": 0.05 }), "options.targetMB"),
        (
            "shrink",
            clip,
            json!({ "targetMB": 2_000_000 }),
            "options.targetMB",
        ),
        ("reframe", clip, json!({ "rotate": 45 }), "options.rotate"),
        ("reframe", clip, json!({}), "options.aspect"),
        ("reframe", clip, json!({ "aspect": "3:2" }), "options.aspect"),
        ("gif", clip, json!({ "length": 16 }), "options.length"),
        ("gif", clip, json!({ "width": 100 }), "options.width"),
        ("gif", clip, json!({ "width": 961 }), "options.width"),
        ("gif", clip, json!({ "fps": 4 }), "options.fps"),
        ("gif", clip, json!({ "fps": 25 }), "options.fps"),
        ("burnIn", clip, json!({}), "options.text"),
        ("burnIn", clip, json!({ "text": "" }), "options.text"),
        ("burnIn", clip, json!({ "text": "x".repeat(201) }), "options.text"),
        // Captions of a video not read yet: the file is at fault.
        (
            "burnIn",
            clip,
            json!({ "timecode": true, "captions": true }),
            "fileIds",
        ),
        ("stills", clip, json!({}), "options.at"),
        ("stills", clip, json!({ "at": 1, "every": 2 }), "options.at"),
        (
            "stills",
            clip,
            json!({ "at": 1, "format": "gif" }),
            "options.format",
        ),
        ("contactSheet", clip, json!({ "count": 1 }), "options.count"),
        ("contactSheet", clip, json!({ "columns": 13 }), "options.columns"),
        ("extractAudio", clip, json!({ "format": "ogg" }), "options.format"),
        ("extractAudio", song, json!({}), "fileIds"),
        ("loudness", song, json!({ "target": -20 }), "options.target"),
        ("split", song, json!({ "silence": 0.05 }), "options.silence"),
        ("split", song, json!({ "threshold": -5 }), "options.threshold"),
        ("split", clip, json!({}), "fileIds"),
        ("stripMetadata", song, json!({ "keep": "all" }), "options.keep"),
    ];
    for (job_type, file, options, field) in cases {
        let reply = app
            .call(
                &user,
                "/create-file-job",
                Some(json!({ "jobType": job_type, "fileIds": [file], "options": options })),
            )
            .await;
        assert_eq!(
            (reply.status.as_u16(), reply.body["field"].clone()),
            (400, json!(field)),
            "{job_type} {options}: {}",
            reply.body
        );
        reply.assert_bad_field("invalid_field", field);
    }

    // Joins: one kind throughout, and a format only for audio (and not ogg).
    let clip_two = app
        .upload(&user, "two.mp4", "Video", "video/mp4", bytes(2000, 4))
        .await;
    let song_two = app
        .upload(&user, "two.mp3", "Audio", "audio/mpeg", bytes(2000, 5))
        .await;
    for (ids, options, field) in [
        (json!([clip, song]), json!({}), "fileIds"),
        (json!([song, song_two, clip]), json!({}), "fileIds"),
        (
            json!([clip, clip_two]),
            json!({ "format": "mp3" }),
            "options.format",
        ),
        (
            json!([song, song_two]),
            json!({ "format": "ogg" }),
            "options.format",
        ),
        (json!([clip]), json!({}), "fileIds"),
    ] {
        let reply = app
            .call(
                &user,
                "/create-file-job",
                Some(json!({ "jobType": "join", "fileIds": ids, "options": options })),
            )
            .await;
        assert_eq!(
            (reply.status.as_u16(), reply.body["field"].clone()),
            (400, json!(field)),
            "join {ids} {options}: {}",
            reply.body
        );
    }

    // Times are seconds or clock forms.
    let dry = app
        .call(
            &user,
            "/create-file-job",
            Some(json!({
                "jobType": "cut", "fileIds": [clip], "dryRun": true,
                "options": { "start": "1:02:03.5", "end": 4000 },
            })),
        )
        .await;
    assert_eq!(dry.status, 200, "{}", dry.body);
    assert_eq!(dry.body["dryRun"], true, "{}", dry.body);
    for start in [json!("1:75"), json!("soon"), json!(-1)] {
        app.call(
            &user,
            "/create-file-job",
            Some(json!({ "jobType": "cut", "fileIds": [clip], "options": { "start": start } })),
        )
        .await
        .assert_bad_field("invalid_field", "options.start");
    }

    // Refused requests leave no job behind.
    let listed = app.call(&user, "/select-file-jobs", None).await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert_eq!(listed.body["jobs"], json!([]));
}
