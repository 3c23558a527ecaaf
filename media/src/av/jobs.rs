//! Each audio and video job type as a filter graph and an encoding, written to a local file.
//! The worker hands in store locations and output paths and uploads what comes out.
//!
//! Encodings: H.264 (libx264, preset veryfast, CRF 23) or HEVC (libx265, CRF 28) with AAC in
//! mp4 and mov, VP9 with Opus in webm; audio at 48 kHz stereo: MP3 192 kb/s, AAC 192 kb/s,
//! 16-bit WAV, FLAC, Vorbis 192 kb/s.

use std::path::Path;

use ffmpeg::util::format::{Pixel, Sample, sample};

use super::encode::{AudioEncoding, Target, VideoEncoding, Written, remux, transcode};
use super::probe::Probe;
use super::source::Source;
use super::{AvError, Input, ffmpeg};

/// Every sound the jobs make, and every loudness they measure, runs at this rate.
pub(super) const RATE: u32 = 48_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VideoFormat {
    Mp4,
    Webm,
    Mov,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VideoCodec {
    H264,
    Hevc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AudioFormat {
    Mp3,
    M4a,
    Wav,
    Flac,
    Ogg,
}

impl VideoFormat {
    pub fn extension(self) -> &'static str {
        match self {
            VideoFormat::Mp4 => "mp4",
            VideoFormat::Webm => "webm",
            VideoFormat::Mov => "mov",
        }
    }

    fn muxer(self) -> &'static str {
        match self {
            VideoFormat::Mp4 => "mp4",
            VideoFormat::Webm => "webm",
            VideoFormat::Mov => "mov",
        }
    }
}

impl AudioFormat {
    pub fn extension(self) -> &'static str {
        match self {
            AudioFormat::Mp3 => "mp3",
            AudioFormat::M4a => "m4a",
            AudioFormat::Wav => "wav",
            AudioFormat::Flac => "flac",
            AudioFormat::Ogg => "ogg",
        }
    }

    fn muxer(self) -> &'static str {
        match self {
            AudioFormat::Mp3 => "mp3",
            AudioFormat::M4a => "ipod",
            AudioFormat::Wav => "wav",
            AudioFormat::Flac => "flac",
            AudioFormat::Ogg => "ogg",
        }
    }

    fn encoding(self) -> AudioEncoding {
        let (encoder, format, bit_rate) = match self {
            AudioFormat::Mp3 => ("libmp3lame", Sample::I16(sample::Type::Planar), Some(192_000)),
            AudioFormat::M4a => ("aac", Sample::F32(sample::Type::Planar), Some(192_000)),
            AudioFormat::Wav => ("pcm_s16le", Sample::I16(sample::Type::Packed), None),
            AudioFormat::Flac => ("flac", Sample::I16(sample::Type::Packed), None),
            AudioFormat::Ogg => ("libvorbis", Sample::F32(sample::Type::Planar), Some(192_000)),
        };
        AudioEncoding {
            encoder,
            format,
            rate: RATE,
            bit_rate,
        }
    }

    /// The format a file named with `extension` is written back in, for jobs that keep it.
    pub fn of_extension(extension: &str) -> Option<AudioFormat> {
        Some(match extension.to_ascii_lowercase().as_str() {
            "mp3" => AudioFormat::Mp3,
            "m4a" | "aac" | "mp4" => AudioFormat::M4a,
            "wav" => AudioFormat::Wav,
            "flac" => AudioFormat::Flac,
            "ogg" | "oga" | "opus" => AudioFormat::Ogg,
            _ => return None,
        })
    }
}

/// What a video is written as: the settings above, the sound (when there is any) to match.
fn video_target<'a>(path: &'a Path, format: VideoFormat, codec: VideoCodec, sound: bool) -> Target<'a> {
    let yuv = Pixel::YUV420P;
    let video = match (format, codec) {
        (VideoFormat::Webm, _) => VideoEncoding {
            encoder: "libvpx-vp9",
            pixel: yuv,
            options: vec![
                ("crf", "32".into()),
                ("b", "0".into()),
                ("deadline", "realtime".into()),
                ("cpu-used", "8".into()),
                ("row-mt", "1".into()),
            ],
            bit_rate: None,
        },
        (_, VideoCodec::H264) => VideoEncoding {
            encoder: "libx264",
            pixel: yuv,
            options: vec![("preset", "veryfast".into()), ("crf", "23".into())],
            bit_rate: None,
        },
        (_, VideoCodec::Hevc) => VideoEncoding {
            encoder: "libx265",
            pixel: yuv,
            options: vec![
                ("preset", "veryfast".into()),
                ("crf", "28".into()),
                ("x265-params", "log-level=error".into()),
            ],
            bit_rate: None,
        },
    };
    let audio = sound.then_some(match format {
        VideoFormat::Webm => AudioEncoding {
            encoder: "libopus",
            format: Sample::F32(sample::Type::Packed),
            rate: RATE,
            bit_rate: Some(128_000),
        },
        _ => AudioEncoding {
            encoder: "aac",
            format: Sample::F32(sample::Type::Planar),
            rate: RATE,
            bit_rate: Some(160_000),
        },
    });
    Target {
        path,
        muxer: format.muxer(),
        video: Some(video),
        audio,
    }
}

fn audio_target(path: &Path, format: AudioFormat) -> Target<'_> {
    Target {
        path,
        muxer: format.muxer(),
        video: None,
        audio: Some(format.encoding()),
    }
}

/// A graph that passes input 0's picture through `video` (filters, comma separated; empty
/// for none) and, when it has sound, its sound through `audio`.
fn single(video: &str, audio: Option<&str>) -> String {
    let chain = |f: &str| {
        if f.is_empty() {
            "null".to_string()
        } else {
            f.to_string()
        }
    };
    let mut spec = format!("[v0]{}[vout]", chain(video));
    if let Some(audio) = audio {
        let audio = if audio.is_empty() { "anull" } else { audio };
        spec.push_str(&format!(";[a0]{audio}[aout]"));
    }
    spec
}

fn sound_of(probe: &Probe) -> bool {
    probe.audio_codec.is_some()
}

fn needs_picture(probe: &Probe) -> Result<(), AvError> {
    if probe.video_codec.is_none() {
        return Err(AvError::Input("it has no picture".to_string()));
    }
    Ok(())
}

/// How a cut or a loudness change writes a file back in the form it came in.
pub enum Form {
    Video(VideoFormat),
    Audio(AudioFormat),
}

impl Form {
    pub fn extension(&self) -> &'static str {
        match self {
            Form::Video(f) => f.extension(),
            Form::Audio(f) => f.extension(),
        }
    }

    fn muxer(&self) -> &'static str {
        match self {
            Form::Video(f) => f.muxer(),
            Form::Audio(f) => f.muxer(),
        }
    }
}

/// A span of a video or audio file. Without `exact` and fades the streams are copied from
/// the keyframe at or before `start` (fast, no loss); otherwise re-encoded from `start`
/// exactly, with the sound faded in and out over the given seconds.
#[allow(clippy::too_many_arguments)]
pub fn cut(
    location: &str,
    form: &Form,
    start: f64,
    end: Option<f64>,
    exact: bool,
    fade_in: f64,
    fade_out: f64,
    path: &Path,
    progress: &mut dyn FnMut(f64),
) -> Result<(), AvError> {
    let input = Input {
        location: location.to_string(),
        start,
        end,
    };
    let muxer = form.muxer();
    if !exact && fade_in == 0.0 && fade_out == 0.0 {
        return remux(&input, path, muxer, true, progress);
    }
    let source = input.open()?;
    let info = source.probe();
    let length = end.or(info.duration).map(|e| e - start).unwrap_or(0.0);
    let mut fades = Vec::new();
    if fade_in > 0.0 {
        fades.push(format!("afade=t=in:st=0:d={fade_in}"));
    }
    if fade_out > 0.0 {
        fades.push(format!(
            "afade=t=out:st={:.3}:d={fade_out}",
            (length - fade_out).max(0.0)
        ));
    }
    let fades = fades.join(",");
    let (spec, target) = match form {
        Form::Video(format) => (
            single("", sound_of(&info).then_some(fades.as_str())),
            video_target(path, *format, VideoCodec::H264, sound_of(&info)),
        ),
        Form::Audio(format) => (
            format!("[a0]{}[aout]", if fades.is_empty() { "anull" } else { &fades }),
            audio_target(path, *format),
        ),
    };
    transcode(vec![source], &spec, &target, progress).map(|_| ())
}

/// The streams copied as they are, without the container's and streams' tags or cover art.
pub fn strip(location: &str, form: &Form, path: &Path, progress: &mut dyn FnMut(f64)) -> Result<(), AvError> {
    let muxer = form.muxer();
    remux(&Input::whole(location), path, muxer, false, progress)
}

/// A lighter copy to edit with: `height` lines (never enlarged), H.264 in mp4.
pub fn proxy(
    location: &str,
    height: u32,
    path: &Path,
    progress: &mut dyn FnMut(f64),
) -> Result<Written, AvError> {
    let scale = format!("scale=-2:'min({height},trunc(ih/2)*2)'");
    h264_mp4(location, &scale, path, progress)
}

/// A video re-encoded as `format` with `codec`: its picture through `video_filters` and its
/// sound (if any) through `audio_filters` (each comma separated; empty for none).
pub fn encode_video(
    location: &str,
    video_filters: &str,
    audio_filters: &str,
    format: VideoFormat,
    codec: VideoCodec,
    path: &Path,
    progress: &mut dyn FnMut(f64),
) -> Result<Written, AvError> {
    let source = Input::whole(location).open()?;
    let info = source.probe();
    needs_picture(&info)?;
    let spec = single(video_filters, sound_of(&info).then_some(audio_filters));
    transcode(
        vec![source],
        &spec,
        &video_target(path, format, codec, sound_of(&info)),
        progress,
    )
}

/// A video's picture through `video_filters` into the usual H.264 mp4, its sound kept.
fn h264_mp4(
    location: &str,
    video_filters: &str,
    path: &Path,
    progress: &mut dyn FnMut(f64),
) -> Result<Written, AvError> {
    let (format, codec) = (VideoFormat::Mp4, VideoCodec::H264);
    encode_video(location, video_filters, "", format, codec, path, progress)
}

/// The sound of an audio or video file in `format`; `filters` (comma separated) on the way.
pub fn convert_audio(
    location: &str,
    format: AudioFormat,
    filters: &str,
    path: &Path,
    progress: &mut dyn FnMut(f64),
) -> Result<Written, AvError> {
    let spec = format!("[a0]{}[aout]", if filters.is_empty() { "anull" } else { filters });
    transcode(
        vec![Input::whole(location).open()?],
        &spec,
        &audio_target(path, format),
        progress,
    )
}

/// The video re-encoded to land at or under `target_bytes`: the bit rate the size allows
/// over the duration (less the sound's and the container's share), then lowered in
/// proportion and tried again if a pass still overshoots.
pub fn shrink(
    location: &str,
    target_bytes: u64,
    path: &Path,
    progress: &mut dyn FnMut(f64),
) -> Result<Written, AvError> {
    let opened = Input::whole(location).open()?;
    let info = opened.probe();
    let mut first = Some(opened);
    needs_picture(&info)?;
    let duration = info.duration.ok_or_else(|| {
        AvError::Input("its duration is unknown, so no bit rate can be worked out".to_string())
    })?;
    let sound = sound_of(&info);
    let audio_rate = if sound { 64_000.0 } else { 0.0 };
    // 3 % for the container's own bytes.
    let mut video_rate = target_bytes as f64 * 8.0 * 0.97 / duration - audio_rate;
    for attempt in 0..4 {
        if video_rate < 20_000.0 {
            return Err(AvError::Input(format!(
                "{} is too small for {duration:.0} seconds of video",
                human_bytes(target_bytes)
            )));
        }
        let mut target = video_target(path, VideoFormat::Mp4, VideoCodec::H264, sound);
        if let Some(v) = target.video.as_mut() {
            v.options = vec![("preset", "veryfast".into())];
            v.bit_rate = Some(video_rate as usize);
        }
        if let Some(a) = target.audio.as_mut() {
            a.bit_rate = Some(audio_rate as usize);
        }
        let spec = single("", sound.then_some(""));
        // The first pass reads the source the probe opened; later ones open it anew.
        let pass = match first.take() {
            Some(opened) => opened,
            None => Input::whole(location).open()?,
        };
        let written = transcode(vec![pass], &spec, &target, &mut |p| {
            progress((f64::from(attempt) + p) / 4.0)
        })?;
        let size = std::fs::metadata(path)
            .map_err(|e| AvError::machine("reading the result's size", e))?
            .len();
        if size <= target_bytes {
            progress(1.0);
            return Ok(written);
        }
        video_rate *= target_bytes as f64 / size as f64 * 0.95;
    }
    Err(AvError::Input(format!(
        "it could not be brought under {}",
        human_bytes(target_bytes)
    )))
}

fn human_bytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// Turned `rotate` degrees clockwise, then cropped from the middle to `aspect` (width,
/// height).
pub fn reframe(
    location: &str,
    aspect: Option<(u32, u32)>,
    rotate: Option<u32>,
    path: &Path,
    progress: &mut dyn FnMut(f64),
) -> Result<Written, AvError> {
    let mut filters = Vec::new();
    match rotate {
        Some(90) => filters.push("transpose=clock".to_string()),
        Some(180) => filters.push("hflip,vflip".to_string()),
        Some(270) => filters.push("transpose=cclock".to_string()),
        _ => {}
    }
    if let Some((w, h)) = aspect {
        let a = format!("{w}/{h}");
        filters.push(format!(
            "crop='trunc(min(iw,ih*{a})/2)*2':'trunc(min(ih,iw/({a}))/2)*2'"
        ));
    }
    filters.push("setsar=1".to_string());
    h264_mp4(location, &filters.join(","), path, progress)
}

/// An animated GIF of `length` seconds from `start`, `width` wide at `fps`, with a palette
/// made for these frames (palettegen over the span, then paletteuse with dithering).
pub fn gif(
    location: &str,
    start: f64,
    length: f64,
    width: u32,
    fps: u32,
    path: &Path,
    progress: &mut dyn FnMut(f64),
) -> Result<Written, AvError> {
    let input = Input {
        location: location.to_string(),
        start,
        end: Some(start + length),
    };
    let spec = format!(
        "[v0]fps={fps},scale={width}:-2:flags=lanczos,split[a][b];[a]palettegen=stats_mode=diff[p];[b][p]paletteuse=dither=bayer:bayer_scale=3[vout]"
    );
    let target = Target {
        path,
        muxer: "gif",
        video: Some(VideoEncoding {
            encoder: "gif",
            pixel: Pixel::PAL8,
            options: Vec::new(),
            bit_rate: None,
        }),
        audio: None,
    };
    transcode(vec![input.open()?], &spec, &target, progress)
}

/// Text, the running time and/or captions drawn over the picture (DejaVu Sans, or `font`). The
/// text is read from a file beside the output, so nothing in it is taken as filter syntax;
/// captions are a SubRip file drawn by libass with the same font, above the text when there is
/// one.
pub fn burn_in(
    location: &str,
    timecode: bool,
    text: Option<&str>,
    captions: Option<&Path>,
    font: &Path,
    path: &Path,
    progress: &mut dyn FnMut(f64),
) -> Result<Written, AvError> {
    let font_file = drawtext_path(font)?;
    let mut filters = Vec::new();
    let style = format!("fontfile='{font_file}':fontcolor=white:box=1:boxcolor=black@0.5:boxborderw=8");
    if let Some(captions) = captions {
        // libass is given a folder holding only the font, beside the output: wherever the
        // font lives, the folder is one the job can read and list.
        let fonts = path.with_extension("fonts");
        let copied = fonts.join(font.file_name().unwrap_or("font.ttf".as_ref()));
        std::fs::create_dir_all(&fonts)
            .and_then(|()| std::fs::copy(font, &copied))
            .map_err(|e| AvError::machine("copying the font for captions", e))?;
        let fonts = drawtext_path(&fonts)?;
        // libass lays captions out on a 288-line canvas: 18 lines high, 12 from the bottom,
        // or 60 (above the text's box) when there is text too.
        let margin = if text.is_some() { 60 } else { 12 };
        filters.push(format!(
            "subtitles=filename='{}':fontsdir='{fonts}':force_style='FontName=DejaVu Sans,FontSize=18,\
             BorderStyle=3,Outline=1,Shadow=0,MarginV={margin}'",
            drawtext_path(captions)?
        ));
    }
    if timecode {
        filters.push(format!(
            "drawtext={style}:fontsize=h/20:x=h/40:y=h/40:text='%{{pts\\:hms}}'"
        ));
    }
    if let Some(text) = text {
        let text_file = path.with_extension("txt");
        std::fs::write(&text_file, text).map_err(|e| AvError::machine("writing the text to draw", e))?;
        filters.push(format!(
            "drawtext={style}:fontsize=h/16:x=(w-text_w)/2:y=h-text_h-h/16:expansion=none:textfile='{}'",
            drawtext_path(&text_file)?
        ));
    }
    h264_mp4(location, &filters.join(","), path, progress)
}

/// A path inside a filter option: only plain characters, so no quoting rules apply.
fn drawtext_path(path: &Path) -> Result<String, AvError> {
    let text = path.to_string_lossy().to_string();
    if text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._- ".contains(c))
    {
        Ok(text)
    } else {
        Err(AvError::Machine(format!(
            "the path {text:?} cannot be given to drawtext"
        )))
    }
}

/// Videos one after another at the first one's size (others fitted inside it, bars around),
/// frame rate and sound; an input without sound is silent for its length.
pub fn join_videos(
    locations: &[String],
    path: &Path,
    progress: &mut dyn FnMut(f64),
) -> Result<Written, AvError> {
    let sources = open_all(locations)?;
    let probes: Vec<Probe> = sources.iter().map(Source::probe).collect();
    for (n, p) in probes.iter().enumerate() {
        if p.video_codec.is_none() {
            return Err(AvError::Input(format!("file {} has no picture", n + 1)));
        }
    }
    let (w, h) = (
        probes[0].width.unwrap_or(1280) / 2 * 2,
        probes[0].height.unwrap_or(720) / 2 * 2,
    );
    let mut parts = Vec::new();
    let mut pads = String::new();
    for (i, p) in probes.iter().enumerate() {
        parts.push(format!(
            "[v{i}]scale={w}:{h}:force_original_aspect_ratio=decrease,pad={w}:{h}:(ow-iw)/2:(oh-ih)/2,setsar=1,fps=30,format=yuv420p[jv{i}]"
        ));
        let sound = if sound_of(p) {
            format!("[a{i}]aformat=sample_rates={RATE}:channel_layouts=stereo[ja{i}]")
        } else {
            format!(
                "anullsrc=r={RATE}:cl=stereo,atrim=duration={:.3}[ja{i}]",
                p.duration.unwrap_or(0.0)
            )
        };
        parts.push(sound);
        pads.push_str(&format!("[jv{i}][ja{i}]"));
    }
    parts.push(format!("{pads}concat=n={}:v=1:a=1[vout][aout]", locations.len()));
    transcode(
        sources,
        &parts.join(";"),
        &video_target(path, VideoFormat::Mp4, VideoCodec::H264, true),
        progress,
    )
}

pub fn join_audio(
    locations: &[String],
    format: AudioFormat,
    path: &Path,
    progress: &mut dyn FnMut(f64),
) -> Result<Written, AvError> {
    let mut spec = String::new();
    for i in 0..locations.len() {
        spec.push_str(&format!(
            "[a{i}]aformat=sample_rates={RATE}:channel_layouts=stereo[ja{i}];"
        ));
    }
    for i in 0..locations.len() {
        spec.push_str(&format!("[ja{i}]"));
    }
    spec.push_str(&format!("concat=n={}:v=0:a=1[aout]", locations.len()));
    transcode(open_all(locations)?, &spec, &audio_target(path, format), progress)
}

fn open_all(locations: &[String]) -> Result<Vec<Source>, AvError> {
    locations.iter().map(|l| Input::whole(l).open()).collect()
}
