//! Media made and read back with the `ffmpeg` and `ffprobe` commands (installed by
//! `scripts/lib.sh`): inputs for the audio and video tests, and an independent check of what
//! the drive wrote.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Runs `ffmpeg` with `args`, writing a file with `extension`; answers its bytes.
pub fn ffmpeg(args: &[&str], extension: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join(format!("made.{extension}"));
    let out = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y"])
        .args(args)
        .arg(&path)
        .output()
        .expect("ffmpeg runs");
    assert!(
        out.status.success(),
        "ffmpeg {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(&path).expect("ffmpeg wrote its output")
}

/// An mp4 of `seconds` of the lavfi video `source` (its size and rate in it, like
/// `testsrc2=size=320x240:rate=25`): H.264 with a keyframe every 25 frames, and a 440 Hz tone in
/// AAC; `extra` goes before the output (`-metadata title=…`).
pub fn video_of(source: &str, seconds: f64, extra: &[&str]) -> Vec<u8> {
    let seconds = seconds.to_string();
    let mut args = vec![
        "-f",
        "lavfi",
        "-i",
        source,
        "-f",
        "lavfi",
        "-i",
        "sine=frequency=440:sample_rate=48000",
        "-t",
        &seconds,
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-pix_fmt",
        "yuv420p",
        "-g",
        "25",
        "-c:a",
        "aac",
    ];
    args.extend(extra);
    ffmpeg(&args, "mp4")
}

/// `ffprobe -show_format -show_streams` of `bytes` saved with `extension`, as JSON.
pub fn ffprobe(bytes: &[u8], extension: &str) -> Value {
    ffprobe_with(bytes, extension, &[])
}

/// [`ffprobe`] with `extra` options before the input (like `-count_frames`).
pub fn ffprobe_with(bytes: &[u8], extension: &str, extra: &[&str]) -> Value {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join(format!("probed.{extension}"));
    std::fs::write(&path, bytes).expect("write the file to probe");
    ffprobe_file(&path, extra)
}

/// `ffprobe -show_format -show_streams` of the file at `path`, `extra` before it, as JSON.
pub fn ffprobe_file(path: &Path, extra: &[&str]) -> Value {
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-show_format", "-show_streams", "-of", "json"])
        .args(extra)
        .arg(path)
        .output()
        .expect("ffprobe runs");
    assert!(
        out.status.success(),
        "ffprobe on {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("ffprobe writes JSON")
}

/// The container's duration in seconds.
pub fn duration(probe: &Value) -> f64 {
    probe["format"]["duration"]
        .as_str()
        .and_then(|d| d.parse().ok())
        .unwrap_or_else(|| panic!("no duration in {probe}"))
}

/// The first stream of `kind` (`video` or `audio`).
pub fn stream<'a>(probe: &'a Value, kind: &str) -> &'a Value {
    probe["streams"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["codec_type"] == kind))
        .unwrap_or_else(|| panic!("no {kind} stream in {probe}"))
}
