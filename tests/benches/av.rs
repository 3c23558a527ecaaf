//! Audio and video jobs against the `ffmpeg` command line with the same codec settings on the
//! same input (`scripts/bench av`), and metadata reading against `ffprobe`.
//!
//! The peer runs three ways: on a local file; on the same object read from the store through a
//! download link (as the job reads it); and that, with its result then put back in the store
//! by `curl` through a presigned PUT (as the job stores its result). The job reads its input
//! from the store over HTTP (ranged reads) and writes its result back. "Job run" is the job's
//! own `startTime` → `endTime`; the ratios are job run / each peer reading from the store,
//! each figure the median of five runs taken in turns with the others'. A peer is one command,
//! but where the job makes two passes: for a loudness change `ffmpeg` measures (ebur128), then
//! applies the gain it found; for a split it finds the silences (silencedetect), then cuts
//! each piece out.

use std::path::{Path, PathBuf};
use std::process::Command;

use drive_tests::bench::{
    add_file, link, middle, put_link, reading_seconds, timed, timed_job, timed_median, timed_script,
};
use drive_tests::media::{duration, ffprobe_file};
use drive_tests::{TestApp, env};
use serde_json::{Value, json};

/// The font and text burnIn draws with (the worker's default font).
const FONT: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
const CAPTION: &str = "Drive benchmark";

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

/// Makes `seconds` of H.264 at `size` (25 fps) with a little noise, so the encoders have work,
/// and the AAC sound of `tone` (a lavfi `sine`) in `channels`.
fn noisy_video(path: &Path, size: &str, seconds: u32, tone: &str, channels: &str) {
    let picture = format!("testsrc2=size={size}:rate=25,noise=alls=12:allf=t");
    let seconds = seconds.to_string();
    #[rustfmt::skip]
    let args = [
        "-v", "error", "-y",
        "-f", "lavfi", "-i", &picture,
        "-f", "lavfi", "-i", tone,
        "-t", &seconds, "-ac", channels,
        "-c:v", "libx264", "-preset", "fast", "-crf", "20", "-pix_fmt", "yuv420p", "-c:a", "aac",
        path.to_str().unwrap(),
    ];
    timed("ffmpeg", &args);
}

/// Makes a minute of a 330 Hz tone through `filters` as stereo 16-bit WAV.
fn minute_of_tone(path: &Path, filters: &str) {
    #[rustfmt::skip]
    let args = [
        "-v", "error", "-y",
        "-f", "lavfi", "-i", "sine=frequency=330:sample_rate=48000:duration=60",
        "-af", filters, "-ac", "2",
        path.to_str().unwrap(),
    ];
    timed("ffmpeg", &args);
}

/// Runs a peer's `ffmpeg` commands one after another and, when `put` is given, PUTs each file
/// they write to it (as the job stores each result); answers the wall time of it all.
fn timed_peer(steps: &[Vec<&str>], put: Option<&str>) -> f64 {
    steps
        .iter()
        .map(|args| {
            let output = *args.last().expect("a command names its output");
            match put {
                Some(put) if output != "-" => {
                    let mut script_args = vec![output, put];
                    script_args.extend(args);
                    timed_script(PUT_BACK, &script_args)
                }
                _ => timed("ffmpeg", args),
            }
        })
        .sum()
}

/// What `ffmpeg` reports on its standard error when run with `args`.
fn ffmpeg_report(args: &[&str]) -> String {
    let out = Command::new("ffmpeg").args(args).output().unwrap();
    let report = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{report}");
    report
}

/// The integrated loudness (LUFS) `ffmpeg`'s ebur128 filter reports at the end of `args`'s run.
fn integrated_loudness(args: &[&str]) -> f64 {
    let report = ffmpeg_report(args);
    report
        .lines()
        .filter_map(|line| line.trim().strip_prefix("I:"))
        .next_back()
        .and_then(|value| value.trim().trim_end_matches("LUFS").trim().parse().ok())
        .unwrap_or_else(|| panic!("no integrated loudness in {report}"))
}

/// The spans of sound between the silences `ffmpeg`'s silencedetect filter reports over
/// `args`'s run, in seconds (the last one ends at `length`).
fn sound_spans(args: &[&str], length: f64) -> Vec<(f64, f64)> {
    let report = ffmpeg_report(args);
    let after = |line: &str, key: &str| -> Option<f64> {
        let rest = &line[line.find(key)? + key.len()..];
        rest.split_whitespace().next()?.parse().ok()
    };
    let (mut spans, mut start) = (Vec::new(), 0.0);
    for line in report.lines() {
        if let Some(quiet) = after(line, "silence_start: ") {
            if quiet > start {
                spans.push((start, quiet));
            }
            start = length;
        } else if let Some(loud) = after(line, "silence_end: ") {
            start = loud;
        }
    }
    if start < length {
        spans.push((start, length));
    }
    spans
}

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
    noisy_video(
        &clip,
        "1920x1080",
        10,
        "sine=frequency=440:sample_rate=48000",
        "2",
    );
    let song = dir.join("song.wav");
    minute_of_tone(&song, "anull");
    // A minute of a tone sounding 7 s in every 10, for a split.
    let gaps = dir.join("gaps.wav");
    minute_of_tone(&gaps, "volume='if(lt(mod(t,10),7),1,0)':eval=frame");
    // A second video of another size and shape (4:3) and a mono 44.1 kHz sound, for a join.
    let other = dir.join("other.mp4");
    noisy_video(&other, "1280x960", 5, "sine=frequency=550:sample_rate=44100", "1");
    let clip_id = add_file(&app, &user, &clip, "Video", "video/mp4").await;
    let song_id = add_file(&app, &user, &song, "Audio", "audio/wav").await;
    let other_id = add_file(&app, &user, &other, "Video", "video/mp4").await;
    let clip_reading = reading_seconds(&app, clip_id).await;
    let song_reading = reading_seconds(&app, song_id).await;
    let gaps_id = add_file(&app, &user, &gaps, "Audio", "audio/wav").await;
    reading_seconds(&app, other_id).await;
    reading_seconds(&app, gaps_id).await;

    println!(
        "| job (same settings as the peer) | `ffmpeg`, local file | `ffmpeg`, same object from the store | that, and its result PUT to the store | job run | end to end | ratio to the store read | ratio to the store read and write |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let (clip_s, other_s, song_s, gaps_s) = (s(&clip), s(&other), s(&song), s(&gaps));
    let out = dir.join("out");
    let out_mp4 = format!("{}.mp4", s(&out));
    // shrink to 5 MB: the bit rates the job works out from the size and the duration
    // (3 % for the container, 64 kb/s for the sound; x264 given 1.5× as its maximum).
    let video_rate = (5e6 * 8.0 * 0.97 / duration(&ffprobe_file(&clip, &[])) - 64_000.0) as u64;
    let (rate, max_rate) = (video_rate.to_string(), (video_rate * 3 / 2).to_string());
    // burnIn: the filters the job draws with (DejaVu Sans, the text read from a file).
    let caption = dir.join("caption.txt");
    std::fs::write(&caption, CAPTION).unwrap();
    let style = format!("fontfile='{FONT}':fontcolor=white:box=1:boxcolor=black@0.5:boxborderw=8");
    let burn_in = format!(
        "drawtext={style}:fontsize=h/20:x=h/40:y=h/40:text='%{{pts\\:hms}}',drawtext={style}:fontsize=h/16:x=(w-text_w)/2:y=h-text_h-h/16:expansion=none:textfile='{}'",
        s(&caption)
    );
    // join: the second video fitted into the first's size, both at 30 fps, sound at 48 kHz.
    let fit = |i: usize| {
        format!(
            "[{i}:v]scale=1920:1080:force_original_aspect_ratio=decrease,pad=1920:1080:(ow-iw)/2:(oh-ih)/2,setsar=1,fps=30,format=yuv420p[jv{i}];[{i}:a]aformat=sample_rates=48000:channel_layouts=stereo[ja{i}]"
        )
    };
    let join = format!(
        "{};{};[jv0][ja0][jv1][ja1]concat=n=2:v=1:a=1[vout][aout]",
        fit(0),
        fit(1)
    );
    // loudness to -14 LUFS: the peer measures (ffmpeg's ebur128), then sets the gain it found.
    let measure = [
        "-hide_banner",
        "-nostats",
        "-threads",
        "0",
        "-i",
        &song_s,
        "-af",
        "ebur128=framelog=verbose",
        "-f",
        "null",
        "-",
    ];
    let volume = format!("volume={:.3}dB", -14.0 - integrated_loudness(&measure));
    // split at silences of 1 s under -40 dB (the job's defaults): the peer finds them
    // (silencedetect), then cuts each piece out exactly, into 16-bit WAV.
    let detect = [
        "-hide_banner",
        "-nostats",
        "-threads",
        "0",
        "-i",
        &gaps_s,
        "-af",
        "silencedetect=n=-40dB:d=1",
        "-f",
        "null",
        "-",
    ];
    let mut split = vec![owned(detect.to_vec())];
    for (n, (start, end)) in sound_spans(&detect, 60.0).into_iter().enumerate() {
        let (start, end) = (format!("{start:.3}"), format!("{end:.3}"));
        split.push(owned(ffmpeg_args(
            &["-ss", &start, "-to", &end],
            &gaps_s,
            &[&["-c:a", "pcm_s16le", "-ar", "48000", "-ac", "2"]],
            &format!("{}-{n}.wav", s(&out)),
        )));
    }
    let cases: Vec<(&str, Vec<Vec<String>>, Value)> = vec![
        (
            "proxy 720 of 1080p",
            vec![owned(ffmpeg_args(
                &[],
                &clip_s,
                &[
                    &["-vf", "scale=-2:'min(720,trunc(ih/2)*2)'"],
                    H264,
                    AAC,
                    FASTSTART,
                ],
                &out_mp4,
            ))],
            json!({ "jobType": "proxy", "fileIds": [clip_id], "options": { "height": 720 } }),
        ),
        (
            "convert → mp4 HEVC",
            vec![owned(ffmpeg_args(
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
            ))],
            json!({ "jobType": "convert", "fileIds": [clip_id], "options": { "format": "mp4", "codec": "hevc" } }),
        ),
        (
            "convert → webm (VP9, Opus)",
            vec![owned(ffmpeg_args(
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
            ))],
            json!({ "jobType": "convert", "fileIds": [clip_id], "options": { "format": "webm" } }),
        ),
        (
            "reframe 9:16",
            vec![owned(ffmpeg_args(
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
            ))],
            json!({ "jobType": "reframe", "fileIds": [clip_id], "options": { "aspect": "9:16" } }),
        ),
        (
            "cut 2–8 s, exact",
            vec![owned(ffmpeg_args(
                &["-ss", "2", "-to", "8"],
                &clip_s,
                &[H264, AAC, FASTSTART],
                &out_mp4,
            ))],
            json!({ "jobType": "cut", "fileIds": [clip_id], "options": { "start": 2, "end": 8, "exact": true } }),
        ),
        (
            "gif, 5 s at 480 px, 12 fps",
            vec![owned(ffmpeg_args(
                &["-ss", "1", "-t", "5"],
                &clip_s,
                &[&[
                    "-vf",
                    "fps=12,scale=480:-2:flags=lanczos,split[a][b];[a]palettegen=stats_mode=diff[p];[b][p]paletteuse=dither=bayer:bayer_scale=3",
                ]],
                &format!("{}.gif", s(&out)),
            ))],
            json!({ "jobType": "gif", "fileIds": [clip_id], "options": { "start": 1, "length": 5, "width": 480, "fps": 12 } }),
        ),
        (
            "extractAudio → mp3",
            vec![owned(ffmpeg_args(
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
            ))],
            json!({ "jobType": "extractAudio", "fileIds": [clip_id], "options": { "format": "mp3" } }),
        ),
        (
            "convert 60 s WAV → flac",
            vec![owned(ffmpeg_args(
                &[],
                &s(&song),
                &[&["-c:a", "flac", "-sample_fmt", "s16", "-ar", "48000", "-ac", "2"]],
                &format!("{}.flac", s(&out)),
            ))],
            json!({ "jobType": "convert", "fileIds": [song_id], "options": { "format": "flac" } }),
        ),
        (
            "shrink to 5 MB",
            vec![owned(ffmpeg_args(
                &[],
                &clip_s,
                &[
                    &[
                        "-c:v", "libx264", "-preset", "veryfast", "-b:v", &rate, "-maxrate", &max_rate,
                        "-pix_fmt", "yuv420p",
                    ],
                    &["-c:a", "aac", "-b:a", "64k", "-ar", "48000", "-ac", "2"],
                    FASTSTART,
                ],
                &out_mp4,
            ))],
            json!({ "jobType": "shrink", "fileIds": [clip_id], "options": { "targetMB": 5 } }),
        ),
        (
            "burnIn, timecode and text",
            vec![owned(ffmpeg_args(
                &[],
                &clip_s,
                &[&["-vf", &burn_in], H264, AAC, FASTSTART],
                &out_mp4,
            ))],
            json!({ "jobType": "burnIn", "fileIds": [clip_id], "options": { "timecode": true, "text": CAPTION } }),
        ),
        (
            "join 1080p and 4:3 960p",
            vec![owned(ffmpeg_args(
                &[],
                &clip_s,
                &[
                    &[
                        "-threads",
                        "0",
                        "-i",
                        &other_s,
                        "-filter_complex",
                        &join,
                        "-map",
                        "[vout]",
                        "-map",
                        "[aout]",
                    ],
                    H264,
                    AAC,
                    FASTSTART,
                ],
                &out_mp4,
            ))],
            json!({ "jobType": "join", "fileIds": [clip_id, other_id] }),
        ),
        (
            "loudness of 60 s WAV to -14 LUFS",
            vec![
                owned(measure.to_vec()),
                owned(ffmpeg_args(
                    &[],
                    &song_s,
                    &[&["-af", &volume, "-c:a", "pcm_s16le", "-ar", "48000", "-ac", "2"]],
                    &format!("{}.wav", s(&out)),
                )),
            ],
            json!({ "jobType": "loudness", "fileIds": [song_id], "options": { "target": -14 } }),
        ),
        (
            "split 60 s WAV at its silences",
            split,
            json!({ "jobType": "split", "fileIds": [gaps_id] }),
        ),
    ];
    // Each local input and a link to the same object in the store.
    let links = [
        (clip_s.clone(), link(&app, &user, clip_id).await),
        (other_s.clone(), link(&app, &user, other_id).await),
        (song_s.clone(), link(&app, &user, song_id).await),
        (gaps_s.clone(), link(&app, &user, gaps_id).await),
    ];
    let put = put_link(&app, "bench/peer-result").await;
    // DRIVE_BENCH_ONLY=reframe,gif runs only the cases whose name holds one of those words.
    let only = std::env::var("DRIVE_BENCH_ONLY").unwrap_or_default();
    let chosen = |what: &str| only.split(',').any(|word| what.contains(word));
    for (what, steps, body) in cases.into_iter().filter(|(what, ..)| chosen(what)) {
        let local: Vec<Vec<&str>> = steps
            .iter()
            .map(|args| args.iter().map(String::as_str).collect())
            .collect();
        // The same commands reading the same objects from the store, as the job does.
        let from_store: Vec<Vec<&str>> = local
            .iter()
            .map(|args| {
                args.iter()
                    .map(|&a| {
                        links
                            .iter()
                            .find(|(path, _)| path == a)
                            .map_or(a, |(_, url)| url.as_str())
                    })
                    .collect()
            })
            .collect();
        let mut figures: [Vec<f64>; 5] = Default::default();
        let mut made = 0;
        for order in ORDERS {
            for turn in order {
                match turn {
                    0 => figures[0].push(timed_peer(&local, None)),
                    1 => figures[1].push(timed_peer(&from_store, None)),
                    2 => figures[2].push(timed_peer(&from_store, Some(&put))),
                    _ => {
                        let (own, e2e, job) = timed_job(&app, &user, body.clone()).await;
                        figures[3].push(own);
                        figures[4].push(e2e);
                        made = job["result"]["files"].as_array().map_or(0, Vec::len);
                    }
                }
            }
        }
        eprintln!(
            "{what}: the job made {made} file(s); the peer runs {} command(s)",
            steps.len()
        );
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
