//! The audio and video pipelines on local files made here with the `ffmpeg` command line,
//! their results read back with `ffprobe`. (The worker runs the same functions on presigned
//! URLs; the end-to-end job tests cover that path.)

use std::path::{Path, PathBuf};
use std::process::Command;

use drive_media::av::jobs::{self, AudioFormat, Form, VideoCodec, VideoFormat};
use drive_media::av::sound;
use drive_media::av::{pictures, probe};
use serde_json::Value;

fn make(dir: &Path, name: &str, args: &[&str]) -> String {
    let path = dir.join(name);
    let status = Command::new("ffmpeg")
        .args(["-v", "error", "-y"])
        .args(args)
        .arg(&path)
        .status()
        .expect("ffmpeg runs");
    assert!(status.success(), "ffmpeg made {name}");
    path.to_string_lossy().into_owned()
}

fn clip(dir: &Path, name: &str, size: &str, seconds: &str) -> String {
    make(
        dir,
        name,
        &[
            "-f",
            "lavfi",
            "-i",
            &format!("testsrc2=size={size}:rate=25"),
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=440:sample_rate=48000",
            "-t",
            seconds,
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-g",
            "25",
            "-pix_fmt",
            "yuv420p",
            "-c:a",
            "aac",
        ],
    )
}

fn ffprobe(path: &Path) -> Value {
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-show_format", "-show_streams", "-of", "json"])
        .arg(path)
        .output()
        .expect("ffprobe runs");
    assert!(out.status.success(), "ffprobe {}", path.display());
    serde_json::from_slice(&out.stdout).expect("ffprobe writes JSON")
}

fn duration(probe: &Value) -> f64 {
    probe["format"]["duration"]
        .as_str()
        .expect("a duration")
        .parse()
        .expect("a number")
}

fn stream<'a>(probe: &'a Value, kind: &str) -> &'a Value {
    probe["streams"]
        .as_array()
        .expect("streams")
        .iter()
        .find(|s| s["codec_type"] == kind)
        .unwrap_or_else(|| panic!("no {kind} stream in {probe}"))
}

fn out(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

#[test]
fn proxy_scales_down_and_never_up() {
    let dir = tempfile::tempdir().unwrap();
    let big = clip(dir.path(), "big.mp4", "640x480", "1");
    let result = out(dir.path(), "p.mp4");
    let written = jobs::proxy(&big, 360, &result, &mut |_| {}).unwrap();
    assert_eq!((written.width, written.height), (480, 360));
    let probed = ffprobe(&result);
    assert_eq!(stream(&probed, "video")["height"], 360);
    assert_eq!(stream(&probed, "video")["codec_name"], "h264");
    assert_eq!(stream(&probed, "audio")["codec_name"], "aac");
    assert!((duration(&probed) - 1.0).abs() < 0.1, "{}", duration(&probed));

    let small = out(dir.path(), "s.mp4");
    jobs::proxy(&big, 1080, &small, &mut |_| {}).unwrap();
    assert_eq!(stream(&ffprobe(&small), "video")["height"], 480);
}

#[test]
fn cuts_are_exact_or_fast_and_fades_keep_the_length() {
    let dir = tempfile::tempdir().unwrap();
    let video = clip(dir.path(), "v.mp4", "320x240", "4");
    let exact = out(dir.path(), "exact.mp4");
    jobs::cut(
        &video,
        &Form::Video(VideoFormat::Mp4),
        1.2,
        Some(2.6),
        true,
        0.0,
        0.0,
        &exact,
        &mut |_| {},
    )
    .unwrap();
    let d = duration(&ffprobe(&exact));
    assert!((d - 1.4).abs() <= 0.05, "exact cut lasts {d}");

    let fast = out(dir.path(), "fast.mp4");
    jobs::cut(
        &video,
        &Form::Video(VideoFormat::Mp4),
        1.2,
        Some(2.6),
        false,
        0.0,
        0.0,
        &fast,
        &mut |_| {},
    )
    .unwrap();
    let d = duration(&ffprobe(&fast));
    // From the keyframe at 1.0 s.
    assert!((1.3..=1.8).contains(&d), "fast cut lasts {d}");

    let song = make(
        dir.path(),
        "a.wav",
        &[
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=440:sample_rate=48000",
            "-t",
            "5",
        ],
    );
    let faded = out(dir.path(), "faded.mp3");
    jobs::cut(
        &song,
        &Form::Audio(AudioFormat::Mp3),
        1.0,
        Some(4.0),
        true,
        1.0,
        1.0,
        &faded,
        &mut |_| {},
    )
    .unwrap();
    let probed = ffprobe(&faded);
    assert_eq!(stream(&probed, "audio")["codec_name"], "mp3");
    assert!((duration(&probed) - 3.0).abs() < 0.06, "{}", duration(&probed));
}

#[test]
fn gifs_have_the_width_rate_and_length_asked() {
    let dir = tempfile::tempdir().unwrap();
    let video = clip(dir.path(), "v.mp4", "320x240", "3");
    let gif = out(dir.path(), "g.gif");
    jobs::gif(&video, 0.5, 2.0, 160, 10, &gif, &mut |_| {}).unwrap();
    let probed = ffprobe(&gif);
    let picture = stream(&probed, "video");
    assert_eq!(picture["codec_name"], "gif");
    assert_eq!(picture["width"], 160);
    assert_eq!(picture["r_frame_rate"], "10/1");
    assert!((duration(&probed) - 2.0).abs() < 0.15, "{}", duration(&probed));
}

#[test]
fn loudness_is_measured_and_set_within_one_lu() {
    let dir = tempfile::tempdir().unwrap();
    let quiet = make(
        dir.path(),
        "q.wav",
        &[
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=440:sample_rate=48000",
            "-af",
            "volume=0.05",
            "-t",
            "6",
        ],
    );
    let (measured, peak) = sound::measure_loudness(&quiet, &mut |_| {}).unwrap();
    assert!(measured < -30.0, "{measured}");
    let louder = out(dir.path(), "l.wav");
    let filters = sound::loudness_filters(measured, peak, -16.0);
    jobs::convert_audio(&quiet, AudioFormat::Wav, &filters, &louder, &mut |_| {}).unwrap();
    let (after, _) = sound::measure_loudness(&louder.to_string_lossy(), &mut |_| {}).unwrap();
    assert!((after + 16.0).abs() <= 1.0, "{after} LUFS");
}

#[test]
fn sound_is_split_at_silences() {
    let dir = tempfile::tempdir().unwrap();
    let pieces = make(
        dir.path(),
        "pieces.wav",
        &[
            "-f",
            "lavfi",
            "-i",
            "aevalsrc='if(lt(mod(t,2.5),1),0.5*sin(2*PI*440*t),0)':s=48000:d=6",
        ],
    );
    let segments = sound::sound_segments(&pieces, 1.0, -40.0, &mut |_| {}).unwrap();
    assert_eq!(segments.len(), 3, "{segments:?}");
    for (n, (start, end)) in segments.iter().enumerate() {
        assert!((start - n as f64 * 2.5).abs() < 0.02, "{segments:?}");
        assert!((end - start - 1.0).abs() < 0.02, "{segments:?}");
    }
}

#[test]
fn joins_fit_later_videos_into_the_first_and_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let first = clip(dir.path(), "a.mp4", "320x240", "1");
    let second = clip(dir.path(), "b.mp4", "640x360", "2");
    let joined = out(dir.path(), "j.mp4");
    jobs::join_videos(&[first, second], &joined, &mut |_| {}).unwrap();
    let probed = ffprobe(&joined);
    assert_eq!(stream(&probed, "video")["width"], 320);
    assert_eq!(stream(&probed, "video")["height"], 240);
    assert!((duration(&probed) - 3.0).abs() < 0.15, "{}", duration(&probed));
}

#[test]
fn stills_probes_reframes_and_strips() {
    let dir = tempfile::tempdir().unwrap();
    let video = make(
        dir.path(),
        "tagged.mp4",
        &[
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=320x240:rate=25",
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=440:sample_rate=48000",
            "-t",
            "2",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-c:a",
            "aac",
            "-metadata",
            "title=Secret",
            "-metadata",
            "location=+48.8584+002.2945/",
        ],
    );
    let info = probe::probe(&video).unwrap();
    assert_eq!(info.title.as_deref(), Some("Secret"));
    assert_eq!(info.location, Some((48.8584, 2.2945)));
    assert_eq!((info.width, info.height), (Some(320), Some(240)));
    assert_eq!(info.video_codec.as_deref(), Some("h264"));

    let still = pictures::frame_at(&video, 1.0).unwrap();
    assert_eq!(still.dimensions(), (320, 240));

    let turned = out(dir.path(), "r.mp4");
    jobs::reframe(&video, Some((9, 16)), Some(90), &turned, &mut |_| {}).unwrap();
    let probed = ffprobe(&turned);
    // Turned to 240x320, then cropped to 9:16 from the middle: 180x320.
    assert_eq!(stream(&probed, "video")["width"], 180);
    assert_eq!(stream(&probed, "video")["height"], 320);

    let stripped = out(dir.path(), "s.mp4");
    jobs::strip(&video, &Form::Video(VideoFormat::Mp4), &stripped, &mut |_| {}).unwrap();
    let probed = ffprobe(&stripped);
    assert!(probed["format"]["tags"]["title"].is_null(), "{probed}");
    assert!((duration(&probed) - 2.0).abs() < 0.1);

    let webm = out(dir.path(), "c.webm");
    jobs::encode_video(
        &video,
        "",
        "",
        VideoFormat::Webm,
        VideoCodec::H264,
        &webm,
        &mut |_| {},
    )
    .unwrap();
    let probed = ffprobe(&webm);
    assert_eq!(stream(&probed, "video")["codec_name"], "vp9");
    assert_eq!(stream(&probed, "audio")["codec_name"], "opus");
}

/// Frame `n` of `video` as the `ffmpeg` command decodes it, as RGB.
fn frame_number(video: &str, n: u32) -> Vec<u8> {
    let out = Command::new("ffmpeg")
        .args(["-v", "error", "-i", video, "-vf"])
        .arg(format!("select=eq(n\\,{n})"))
        .args(["-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        .output()
        .expect("ffmpeg runs");
    assert!(
        out.status.success() && !out.stdout.is_empty(),
        "frame {n} of {video}"
    );
    out.stdout
}

fn mean_difference(a: &[u8], b: &[u8]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| f64::from(x.abs_diff(*y)))
        .sum::<f64>()
        / a.len() as f64
}

#[test]
fn a_still_is_the_frame_at_its_moment_whatever_the_frames_skipped_on_the_way() {
    // One keyframe in 8 s and B-frames (veryfast), so every still is reached by decoding from
    // the start, where the frames nothing refers to are skipped: the frame at the moment
    // asked must still be the one shown, whatever its type.
    let dir = tempfile::tempdir().unwrap();
    let video = make(
        dir.path(),
        "long-gop.mp4",
        &[
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=320x240:rate=25",
            "-t",
            "8",
            "-c:v",
            "libx264",
            "-preset",
            "veryfast",
            "-g",
            "250",
            "-pix_fmt",
            "yuv420p",
        ],
    );
    for n in [100, 101, 102, 103, 150, 151] {
        let still = pictures::frame_at(&video, f64::from(n) / 25.0 - 0.001).unwrap();
        let [before, at, after] =
            [n - 1, n, n + 1].map(|m| mean_difference(still.as_raw(), &frame_number(&video, m)));
        assert!(
            at < 2.0 && at < before && at < after,
            "frame {n}: differs by {at:.2} from it, {before:.2} and {after:.2} from its neighbours"
        );
    }
}

#[test]
fn a_file_that_is_not_media_is_the_files_fault() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.mp4");
    std::fs::write(&junk, vec![7u8; 50_000]).unwrap();
    let error = jobs::proxy(
        &junk.to_string_lossy(),
        720,
        &out(dir.path(), "x.mp4"),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(error.is_client_error(), "{error}");
}

#[test]
fn captions_are_burned_in_from_a_subrip_file() {
    let dir = tempfile::tempdir().unwrap();
    // Sound as speech synthesis writes it, 22.05 kHz mono: the result's sound is 48 kHz stereo.
    let input = make(
        dir.path(),
        "blue.mp4",
        &[
            "-f",
            "lavfi",
            "-i",
            "color=c=blue:s=320x240:r=25:d=3",
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=300:sample_rate=22050:duration=3",
            "-c:v",
            "libx264",
            "-pix_fmt",
            "yuv420p",
            "-c:a",
            "aac",
            "-ac",
            "1",
        ],
    );
    let srt = dir.path().join("captions.srt");
    std::fs::write(&srt, "1\n00:00:00,000 --> 00:00:03,000\nHello there.\n\n").unwrap();
    let made = out(dir.path(), "captioned.mp4");
    let font = Path::new("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf");
    jobs::burn_in(&input, false, None, Some(&srt), font, &made, &mut |_| {}).expect("captions are drawn");
    // A frame of the result has light pixels in its bottom third, where the blue had none.
    let frame = dir.path().join("frame.png");
    make(
        dir.path(),
        "frame.png",
        &["-ss", "1", "-i", made.to_str().unwrap(), "-frames:v", "1"],
    );
    let frame = image::open(&frame).unwrap().into_rgb8();
    let light = frame
        .enumerate_pixels()
        .filter(|(_, y, p)| *y > 160 && p[0] > 120)
        .count();
    assert!(light > 100, "{light} light pixels");
}
