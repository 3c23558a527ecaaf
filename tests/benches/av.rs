//! Audio and video jobs against the `ffmpeg` command line with the same codec settings on the
//! same input (`scripts/bench av`), and metadata reading against `ffprobe`.
//!
//! The peer runs three ways: on a local file; on the same object read from the store through a
//! download link (as the job reads it); and that, with its result then put back in the store
//! by `curl` through a presigned PUT (as the job stores its result). The job reads its input
//! from the store over HTTP (ranged reads) and writes its result back. "Job run" is the job's
//! own `startTime` → `endTime`; the ratios are job run / each peer reading from the store,
//! each figure the median of five runs taken in turns with the others'.

use std::path::{Path, PathBuf};

use drive_tests::bench::{
    add_file, link, middle, put_link, reading_seconds, timed, timed_job, timed_median, timed_script,
};
use drive_tests::{TestApp, env};
use serde_json::{Value, json};

/// The encodings `media::av::jobs` uses, as `ffmpeg` options.
const H264: &[&str] = &[
    "-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-pix_fmt", "yuv420p",
];
const AAC: &[&str] = &["-c:a", "aac", "-b:a", "160k", "-ar", "48000", "-ac", "2"];
const FASTSTART: &[&str] = &["-movflags", "+faststart"];

fn ffmpeg_args<'a>(
    before_input: &[&'a str],
    input: &'a str,
    rest: &[&[&'a str]],
    output: &'a str,
) -> Vec<&'a str> {
    let mut args = vec!["-v", "error", "-y", "-threads", "0"];
    args.extend_from_slice(before_input);
    args.extend(["-i", input]);
    for part in rest {
        args.extend_from_slice(part);
    }
    args.push(output);
    args
}

/// Each case is run in five rounds, the peers (0: local, 1: from the store, 2: from the store
/// and PUT back) and the job (3) taking turns in these orders, so that a machine that slows
/// down or speeds up over minutes (this one does) weighs on them alike, and none always runs
/// first or right after another's writes to the store; each figure is the median of its five
/// runs (with three, the same ratio moved by ±0.05 between runs of the benchmark here).
const ORDERS: [[usize; 4]; 5] = [
    [0, 1, 2, 3],
    [3, 2, 1, 0],
    [1, 3, 0, 2],
    [2, 0, 3, 1],
    [3, 0, 2, 1],
];

/// The peer reading from the store, then putting its result (`$1`) back through a presigned
/// PUT (`$2`); the rest are `ffmpeg`'s arguments.
const PUT_BACK: &str = "out=$1; put=$2; shift 2; ffmpeg \"$@\"; curl -sf -T \"$out\" \"$put\"";

fn row(what: &str, local: f64, stored: f64, stored_and_put: f64, own: f64, end_to_end: f64) {
    println!(
        "| {what} | {local:.2} s | {stored:.2} s | {stored_and_put:.2} s | {own:.2} s | {end_to_end:.2} s | {:.2} | {:.2} |",
        own / stored,
        own / stored_and_put
    );
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let dir = PathBuf::from(env("DRIVE_BENCH_DIR"));
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let mut app = TestApp::spawn_with(&[("DRIVE_JOB_MINUTES_PRO", "100000")]).await;
    app.start_worker(&[("DRIVE_WORKER_CONCURRENCY", "1")]).await;
    let user = app.user(Some("Pro")).await;

    // 10 s of 1080p25 H.264 with a little noise (so the encoders have work), and stereo AAC;
    // a minute of stereo WAV.
    let clip = dir.join("clip.mp4");
    timed(
        "ffmpeg",
        &[
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=1920x1080:rate=25,noise=alls=12:allf=t",
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=440:sample_rate=48000",
            "-t",
            "10",
            "-ac",
            "2",
            "-c:v",
            "libx264",
            "-preset",
            "fast",
            "-crf",
            "20",
            "-pix_fmt",
            "yuv420p",
            "-c:a",
            "aac",
            &s(&clip),
        ],
    );
    let song = dir.join("song.wav");
    timed(
        "ffmpeg",
        &[
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=330:sample_rate=48000:duration=60",
            "-ac",
            "2",
            &s(&song),
        ],
    );
    let clip_id = add_file(&app, &user, &clip, "Video", "video/mp4").await;
    let song_id = add_file(&app, &user, &song, "Audio", "audio/wav").await;
    let clip_reading = reading_seconds(&app, clip_id).await;
    let song_reading = reading_seconds(&app, song_id).await;

    println!(
        "| job (same settings as the peer) | `ffmpeg`, local file | `ffmpeg`, same object from the store | that, and its result PUT to the store | job run | end to end | ratio to the store read | ratio to the store read and write |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let (clip_s, out) = (s(&clip), dir.join("out"));
    let out_mp4 = format!("{}.mp4", s(&out));
    let cases: Vec<(&str, Vec<String>, Value)> = vec![
        (
            "proxy 720 of 1080p",
            owned(ffmpeg_args(
                &[],
                &clip_s,
                &[
                    &["-vf", "scale=-2:'min(720,trunc(ih/2)*2)'"],
                    H264,
                    AAC,
                    FASTSTART,
                ],
                &out_mp4,
            )),
            json!({ "jobType": "proxy", "fileIds": [clip_id], "options": { "height": 720 } }),
        ),
        (
            "convert → mp4 HEVC",
            owned(ffmpeg_args(
                &[],
                &clip_s,
                &[
                    &[
                        "-c:v",
                        "libx265",
                        "-preset",
                        "veryfast",
                        "-crf",
                        "28",
                        "-pix_fmt",
                        "yuv420p",
                        "-x265-params",
                        "log-level=error",
                    ],
                    AAC,
                    FASTSTART,
                ],
                &out_mp4,
            )),
            json!({ "jobType": "convert", "fileIds": [clip_id], "options": { "format": "mp4", "codec": "hevc" } }),
        ),
        (
            "convert → webm (VP9, Opus)",
            owned(ffmpeg_args(
                &[],
                &clip_s,
                &[
                    &[
                        "-c:v",
                        "libvpx-vp9",
                        "-crf",
                        "32",
                        "-b:v",
                        "0",
                        "-deadline",
                        "realtime",
                        "-cpu-used",
                        "8",
                        "-row-mt",
                        "1",
                        "-pix_fmt",
                        "yuv420p",
                    ],
                    &["-c:a", "libopus", "-b:a", "128k", "-ar", "48000", "-ac", "2"],
                ],
                &format!("{}.webm", s(&out)),
            )),
            json!({ "jobType": "convert", "fileIds": [clip_id], "options": { "format": "webm" } }),
        ),
        (
            "reframe 9:16",
            owned(ffmpeg_args(
                &[],
                &clip_s,
                &[
                    &[
                        "-vf",
                        "crop='trunc(min(iw,ih*9/16)/2)*2':'trunc(min(ih,iw/(9/16))/2)*2',setsar=1",
                    ],
                    H264,
                    AAC,
                    FASTSTART,
                ],
                &out_mp4,
            )),
            json!({ "jobType": "reframe", "fileIds": [clip_id], "options": { "aspect": "9:16" } }),
        ),
        (
            "cut 2–8 s, exact",
            owned(ffmpeg_args(
                &["-ss", "2", "-to", "8"],
                &clip_s,
                &[H264, AAC, FASTSTART],
                &out_mp4,
            )),
            json!({ "jobType": "cut", "fileIds": [clip_id], "options": { "start": 2, "end": 8, "exact": true } }),
        ),
        (
            "gif, 5 s at 480 px, 12 fps",
            owned(ffmpeg_args(
                &["-ss", "1", "-t", "5"],
                &clip_s,
                &[&[
                    "-vf",
                    "fps=12,scale=480:-2:flags=lanczos,split[a][b];[a]palettegen=stats_mode=diff[p];[b][p]paletteuse=dither=bayer:bayer_scale=3",
                ]],
                &format!("{}.gif", s(&out)),
            )),
            json!({ "jobType": "gif", "fileIds": [clip_id], "options": { "start": 1, "length": 5, "width": 480, "fps": 12 } }),
        ),
        (
            "extractAudio → mp3",
            owned(ffmpeg_args(
                &[],
                &clip_s,
                &[&[
                    "-vn",
                    "-c:a",
                    "libmp3lame",
                    "-b:a",
                    "192k",
                    "-ar",
                    "48000",
                    "-ac",
                    "2",
                ]],
                &format!("{}.mp3", s(&out)),
            )),
            json!({ "jobType": "extractAudio", "fileIds": [clip_id], "options": { "format": "mp3" } }),
        ),
        (
            "convert 60 s WAV → flac",
            owned(ffmpeg_args(
                &[],
                &s(&song),
                &[&["-c:a", "flac", "-sample_fmt", "s16", "-ar", "48000", "-ac", "2"]],
                &format!("{}.flac", s(&out)),
            )),
            json!({ "jobType": "convert", "fileIds": [song_id], "options": { "format": "flac" } }),
        ),
    ];
    let clip_url = link(&app, &user, clip_id).await;
    let song_url = link(&app, &user, song_id).await;
    let put = put_link(&app, "bench/peer-result").await;
    // DRIVE_BENCH_ONLY=reframe runs only the cases whose name holds that word.
    let only = std::env::var("DRIVE_BENCH_ONLY").unwrap_or_default();
    for (what, args, body) in cases.into_iter().filter(|(what, ..)| what.contains(&only)) {
        let local: Vec<&str> = args.iter().map(String::as_str).collect();
        // The same command reading the same object from the store, as the job does.
        let from_store: Vec<&str> = args
            .iter()
            .map(|a| match a.as_str() {
                a if a == clip_s => clip_url.as_str(),
                a if a == s(&song) => song_url.as_str(),
                a => a,
            })
            .collect();
        let output = *from_store.last().expect("the output path");
        let mut put_back = vec![output, put.as_str()];
        put_back.extend(&from_store);
        let mut figures: [Vec<f64>; 5] = Default::default();
        for order in ORDERS {
            for turn in order {
                match turn {
                    0 => figures[0].push(timed("ffmpeg", &local)),
                    1 => figures[1].push(timed("ffmpeg", &from_store)),
                    2 => figures[2].push(timed_script(PUT_BACK, &put_back)),
                    _ => {
                        let (own, e2e, _) = timed_job(&app, &user, body.clone()).await;
                        figures[3].push(own);
                        figures[4].push(e2e);
                    }
                }
            }
        }
        // Each round's figures too, to see how far the machine drifts between rounds.
        for round in 0..ORDERS.len() {
            eprintln!(
                "{what}, round {}: {}",
                round + 1,
                figures
                    .iter()
                    .map(|f| format!("{:.2}", f[round]))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
        let [local, stored, stored_and_put, own, e2e] = figures.map(middle);
        row(what, local, stored, stored_and_put, own, e2e);
    }

    println!();
    println!(
        "| reading a new file (readMetadata job) | `ffprobe -show_format -show_streams` | job run | ratio |"
    );
    println!("|---|---|---|---|");
    for (what, path, seconds) in [
        ("10 s 1080p video (+ its poster)", &clip, clip_reading),
        ("60 s WAV", &song, song_reading),
    ] {
        let probe = timed_median(
            "ffprobe",
            &["-v", "error", "-show_format", "-show_streams", &s(path)],
        );
        println!(
            "| {what} | {probe:.3} s | {seconds:.3} s | {:.1} |",
            seconds / probe
        );
    }
}

fn owned(args: Vec<&str>) -> Vec<String> {
    args.into_iter().map(String::from).collect()
}
