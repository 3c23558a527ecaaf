//! Audio and video jobs. FFmpeg reads each input straight from the store through a presigned
//! URL (ranged requests as it seeks, never the whole file at once); results are written to
//! the job's work folder and saved beside the first input, each at its own position so a
//! retried job replaces nothing and duplicates nothing.

use std::path::{Path, PathBuf};

use drive_domain::file::{FileKind, stem};
use drive_domain::job::{
    self, BurnIn, CaptionFormat, ContactSheet, Cut, Gif, Join, Loudness, MAX_STILLS, PictureFormat, Proxy,
    Reframe, Shrink, Split, Stills, VideoThumbnail,
};
use drive_domain::rows::FileRow;
use drive_media::av::jobs::{self as av, AudioFormat, Form, VideoCodec, VideoFormat};
use drive_media::av::sound;
use drive_media::av::{AvError, pictures};
use serde_json::json;

use crate::job_process::context::JobContext;
use crate::job_process::pictures::format_of;
use crate::job_process::reading::captions;
use crate::protocol::{JobError, JobResult, Request};

/// What one input made: local files and the names they are saved under.
type Made = Vec<(PathBuf, String)>;

/// The extension of a file's name, lower case ("" without one).
fn extension(name: &str) -> String {
    Path::new(name)
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}

/// The form a cut or loudness change writes a file back in: its own container where it is
/// one of ours, mp4 or m4a otherwise.
fn form_of(file: &FileRow) -> Form {
    let ext = extension(&file.file_name);
    match file.kind {
        FileKind::Video => Form::Video(match ext.as_str() {
            "webm" => VideoFormat::Webm,
            "mov" => VideoFormat::Mov,
            _ => VideoFormat::Mp4,
        }),
        _ => Form::Audio(AudioFormat::of_extension(&ext).unwrap_or(AudioFormat::M4a)),
    }
}

pub fn audio_format(format: job::AudioFormat) -> AudioFormat {
    match format {
        job::AudioFormat::Mp3 => AudioFormat::Mp3,
        job::AudioFormat::M4a => AudioFormat::M4a,
        job::AudioFormat::Wav => AudioFormat::Wav,
        job::AudioFormat::Flac => AudioFormat::Flac,
        job::AudioFormat::Ogg => AudioFormat::Ogg,
    }
}

fn video_format(format: job::VideoFormat) -> VideoFormat {
    match format {
        job::VideoFormat::Mp4 => VideoFormat::Mp4,
        job::VideoFormat::Webm => VideoFormat::Webm,
        job::VideoFormat::Mov => VideoFormat::Mov,
    }
}

/// Runs `make` on each input, with progress from the media clock, and saves what it made.
fn each_input(
    context: &JobContext,
    make: impl Fn(&FileRow, &str, &Path, &mut dyn FnMut(f64)) -> Result<Made, AvError>,
) -> JobResult<serde_json::Value> {
    let inputs = context.inputs()?;
    let count = inputs.len() as f64;
    // The input each result handed over is made from, in the order handed over.
    let mut froms = Vec::new();
    for (index, file) in inputs.iter().enumerate() {
        let location = context.location(file)?;
        let dir = context.dir.join(format!("input-{index}"));
        std::fs::create_dir_all(&dir)?;
        let made = make(file, &location, &dir, &mut |done| {
            context.progress(((index as f64 + done) / count) as f32);
        })
        .map_err(|e| JobError::from(e).in_file(&file.file_name))?;
        if made.len() > MAX_STILLS {
            return Err(JobError::Input(format!(
                "{} would make {} files; a job makes at most {MAX_STILLS} from one input",
                file.file_name,
                made.len()
            )));
        }
        for (k, (path, name)) in made.iter().enumerate() {
            let position = (index * MAX_STILLS + k) as i32;
            context.save_ahead(position, path, name, context.folder_id())?;
            froms.push(file.id);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    let files: Vec<_> = froms
        .into_iter()
        .zip(context.saved_ahead()?)
        .map(|(from, saved)| json!({ "fileId": saved.id, "from": from }))
        .collect();
    Ok(json!({ "files": files }))
}

fn one(dir: &Path, name: String) -> (PathBuf, String) {
    (dir.join("result"), name)
}

pub fn cut(context: &JobContext, c: &Cut) -> JobResult<serde_json::Value> {
    each_input(context, |file, location, dir, progress| {
        let form = form_of(file);
        let (path, name) = one(dir, format!("{} cut.{}", stem(&file.file_name), form.extension()));
        av::cut(
            location,
            &form,
            c.start.0,
            c.end.map(|e| e.0),
            c.exact,
            c.fade_in.0,
            c.fade_out.0,
            &path,
            progress,
        )?;
        Ok(vec![(path, name)])
    })
}

pub fn proxy(context: &JobContext, p: &Proxy) -> JobResult<serde_json::Value> {
    each_input(context, |file, location, dir, progress| {
        let made = one(dir, format!("{} proxy.mp4", stem(&file.file_name)));
        av::proxy(location, p.height, &made.0, progress)?;
        Ok(vec![made])
    })
}

/// Convert of videos or audio (pictures go to [`crate::job_process::pictures::convert`]).
pub fn convert(context: &JobContext, settings: &job::Convert) -> JobResult<serde_json::Value> {
    each_input(context, |file, location, dir, progress| {
        let name = |extension: &str| format!("{}.{extension}", stem(&file.file_name));
        let made = match (settings.format.video(), settings.format.audio()) {
            (Some(video), _) => {
                let (format, codec) = (
                    video_format(video),
                    match settings.codec.unwrap_or_default() {
                        job::VideoCodec::H264 => VideoCodec::H264,
                        job::VideoCodec::Hevc => VideoCodec::Hevc,
                    },
                );
                let made = one(dir, name(format.extension()));
                av::encode_video(location, "", "", format, codec, &made.0, progress)?;
                made
            }
            (None, Some(audio)) => {
                let format = audio_format(audio);
                let made = one(dir, name(format.extension()));
                av::convert_audio(location, format, "", &made.0, progress)?;
                made
            }
            (None, None) => {
                return Err(AvError::Machine(format!(
                    "{:?} is not a video or audio format",
                    settings.format
                )));
            }
        };
        Ok(vec![made])
    })
}

pub fn shrink(context: &JobContext, s: &Shrink) -> JobResult<serde_json::Value> {
    each_input(context, |file, location, dir, progress| {
        let made = one(dir, format!("{} shrunk.mp4", stem(&file.file_name)));
        av::shrink(location, (s.target_mb * 1e6) as u64, &made.0, progress)?;
        Ok(vec![made])
    })
}

pub fn reframe(context: &JobContext, r: &Reframe) -> JobResult<serde_json::Value> {
    each_input(context, |file, location, dir, progress| {
        let made = one(dir, format!("{} reframed.mp4", stem(&file.file_name)));
        av::reframe(
            location,
            r.aspect.map(job::Aspect::ratio),
            r.rotate,
            &made.0,
            progress,
        )?;
        Ok(vec![made])
    })
}

pub fn gif(context: &JobContext, g: &Gif) -> JobResult<serde_json::Value> {
    each_input(context, |file, location, dir, progress| {
        let made = one(dir, format!("{}.gif", stem(&file.file_name)));
        av::gif(location, g.start.0, g.length.0, g.width, g.fps, &made.0, progress)?;
        Ok(vec![made])
    })
}

pub fn burn_in(context: &JobContext, b: &BurnIn) -> JobResult<serde_json::Value> {
    // What is said in each input, as SubRip, asked of the supervisor before FFmpeg starts.
    let mut captions = Vec::new();
    if b.captions {
        for file in context.inputs()? {
            let said = captions::said_in(context, &file)?;
            captions.push((file.id, captions::cues(CaptionFormat::Srt, &said)));
        }
    }
    each_input(context, |file, location, dir, progress| {
        let made = one(dir, format!("{} captioned.mp4", stem(&file.file_name)));
        let srt = match captions.iter().find(|(id, _)| *id == file.id) {
            Some((_, cues)) => {
                let path = dir.join("captions.srt");
                std::fs::write(&path, cues)
                    .map_err(|e| AvError::Machine(format!("writing the captions: {e}")))?;
                Some(path)
            }
            None => None,
        };
        av::burn_in(
            location,
            b.timecode,
            b.text.as_deref(),
            srt.as_deref(),
            &context.font,
            &made.0,
            progress,
        )?;
        Ok(vec![made])
    })
}

pub fn extract_audio(context: &JobContext, e: &job::ExtractAudio) -> JobResult<serde_json::Value> {
    each_input(context, |file, location, dir, progress| {
        let format = audio_format(e.format);
        let made = one(dir, format!("{}.{}", stem(&file.file_name), format.extension()));
        av::convert_audio(location, format, "", &made.0, progress)?;
        Ok(vec![made])
    })
}

pub fn loudness(context: &JobContext, l: &Loudness) -> JobResult<serde_json::Value> {
    each_input(context, |file, location, dir, progress| {
        let form = form_of(file);
        let made = one(
            dir,
            format!("{} {} LUFS.{}", stem(&file.file_name), l.target, form.extension()),
        );
        let (measured, peak) = sound::measure_loudness(location, &mut |p| progress(p / 2.0))?;
        let filters = sound::loudness_filters(measured, peak, f64::from(l.target));
        let mut second_half = |p: f64| progress(0.5 + p / 2.0);
        match form {
            Form::Audio(format) => av::convert_audio(location, format, &filters, &made.0, &mut second_half)?,
            Form::Video(format) => av::encode_video(
                location,
                "",
                &filters,
                format,
                VideoCodec::H264,
                &made.0,
                &mut second_half,
            )?,
        };
        Ok(vec![made])
    })
}

pub fn split(context: &JobContext, s: &Split) -> JobResult<serde_json::Value> {
    each_input(context, |file, location, dir, progress| {
        let segments = sound::sound_segments(location, s.silence.0, s.threshold, &mut |p| progress(p / 2.0))?;
        if segments.is_empty() {
            return Err(AvError::Input(
                "it is silent throughout at that threshold".to_string(),
            ));
        }
        let form = form_of(file);
        let count = segments.len() as f64;
        let mut made = Vec::with_capacity(segments.len());
        for (n, (start, end)) in segments.into_iter().enumerate() {
            let path = dir.join(format!("part-{n}"));
            av::cut(
                location,
                &form,
                start,
                Some(end),
                true,
                0.0,
                0.0,
                &path,
                &mut |p| progress(0.5 + (n as f64 + p) / count / 2.0),
            )?;
            made.push((
                path,
                format!("{} part {}.{}", stem(&file.file_name), n + 1, form.extension()),
            ));
        }
        Ok(made)
    })
}

/// stripMetadata: pictures through [`crate::job_process::pictures::strip_metadata`]; videos and audio
/// (inputs are of one kind) with their streams copied and the tags and cover art left behind.
pub fn strip_metadata(context: &JobContext) -> JobResult<serde_json::Value> {
    if context.inputs()?.first().map(|file| file.kind) == Some(FileKind::Image) {
        return crate::job_process::pictures::strip_metadata(context);
    }
    each_input(context, |file, location, dir, progress| {
        let form = form_of(file);
        let made = one(
            dir,
            format!("{} stripped.{}", stem(&file.file_name), form.extension()),
        );
        av::strip(location, &form, &made.0, progress)?;
        Ok(vec![made])
    })
}

/// The moments a stills job asks for, in seconds.
fn moments(s: &Stills, duration: Option<f64>) -> Result<Vec<f64>, AvError> {
    if let Some(at) = s.at {
        return Ok(vec![at.0]);
    }
    if let Some(list) = &s.moments {
        return Ok(list.iter().map(|m| m.0).collect());
    }
    let every = s.every.map(|e| e.0).unwrap_or(1.0);
    let duration = duration.ok_or_else(|| AvError::Input("its duration is unknown".to_string()))?;
    let count = (duration / every).ceil() as usize;
    if count > MAX_STILLS {
        return Err(AvError::Input(format!(
            "every {every} s over {duration:.0} s makes {count} stills; at most {MAX_STILLS}"
        )));
    }
    Ok((0..count).map(|n| n as f64 * every).collect())
}

pub fn stills(context: &JobContext, s: &Stills) -> JobResult<serde_json::Value> {
    let format = format_of(s.format);
    each_input(context, |file, location, dir, progress| {
        let info = drive_media::av::probe::probe(location)?;
        let moments = moments(s, info.duration)?;
        let count = moments.len() as f64;
        let mut made = Vec::with_capacity(moments.len());
        for (n, at) in moments.into_iter().enumerate() {
            let picture = pictures::frame_at(location, at)?;
            let path = dir.join(format!("still-{n}"));
            pictures::save(&picture, format, &path)?;
            made.push((
                path,
                format!("{} still {}.{}", stem(&file.file_name), n + 1, format.extension()),
            ));
            progress((n + 1) as f64 / count);
        }
        Ok(made)
    })
}

/// A video's frame at `at`, saved as art extracted from it (`frame {at}.jpg`) and shown as its
/// thumbnail.
pub fn video_thumbnail(context: &JobContext, t: &VideoThumbnail) -> JobResult<serde_json::Value> {
    let video = context.inputs()?.remove(0);
    let location = context.location(&video)?;
    let info = drive_media::av::probe::probe(&location)?;
    if let Some(duration) = info.duration
        && t.at.0 >= duration
    {
        return Err(JobError::Input(format!(
            "at ({}) is past the video's end ({duration:.3} s)",
            t.at.0
        )));
    }
    let picture = pictures::frame_at(&location, t.at.0)?;
    let path = context.dir.join("thumbnail.jpg");
    pictures::save(&picture, format_of(PictureFormat::Jpg), &path)?;
    let name = format!("frame {:.3}.jpg", t.at.0);
    let saved = context
        .save_derivative(&video, &path, &name)?
        .ok_or_else(|| JobError::Input("the account has no room left for the thumbnail".to_string()))?;
    let _ = std::fs::remove_file(&path);
    context.ask::<()>(&Request::SetArtwork {
        of: video.id,
        artwork: saved.id,
    })?;
    Ok(json!({ "fileId": video.id, "artworkId": saved.id, "at": t.at.0 }))
}

/// A sheet of evenly spaced frames per video, or one sheet of all the pictures given.
pub fn contact_sheet(context: &JobContext, c: &ContactSheet) -> JobResult<serde_json::Value> {
    const CELL_WIDTH: u32 = 320;
    let inputs = context.inputs()?;
    if inputs.first().map(|file| file.kind) != Some(FileKind::Image) {
        return each_input(context, |file, location, dir, progress| {
            let info = drive_media::av::probe::probe(location)?;
            let duration = info
                .duration
                .ok_or_else(|| AvError::Input("its duration is unknown".to_string()))?;
            let mut cells = Vec::with_capacity(c.count as usize);
            for n in 0..c.count {
                let at = (f64::from(n) + 0.5) * duration / f64::from(c.count);
                cells.push(pictures::cell(&pictures::frame_at(location, at)?, CELL_WIDTH));
                progress(f64::from(n + 1) / f64::from(c.count));
            }
            let made = one(dir, format!("{} sheet.jpg", stem(&file.file_name)));
            pictures::save(
                &pictures::contact_sheet(&cells, c.columns),
                format_of(job::PictureFormat::Jpg),
                &made.0,
            )?;
            Ok(vec![made])
        });
    }
    if let Some(saved) = context.saved(0)? {
        return Ok(json!({ "files": [{ "fileId": saved.id }] }));
    }
    let mut cells = Vec::with_capacity(inputs.len());
    for (index, file) in inputs.iter().enumerate() {
        let path = context.download(file, index)?;
        // Decoded as every picture job decodes (HEIC, AVIF and camera RAW included), upright.
        let picture = drive_media::picture::upright_rgb(&path)
            .map_err(|e| JobError::from(e).in_file(&file.file_name))?;
        cells.push(pictures::cell(&picture, CELL_WIDTH));
        let _ = std::fs::remove_file(&path);
        context.progress((index + 1) as f32 / inputs.len() as f32);
    }
    let path = context.dir.join("sheet");
    pictures::save(
        &pictures::contact_sheet(&cells, c.columns),
        format_of(job::PictureFormat::Jpg),
        &path,
    )?;
    let name = format!("{} sheet.jpg", stem(&inputs[0].file_name));
    let saved = context.save(0, &path, &name, context.folder_id())?;
    Ok(json!({ "files": [{ "fileId": saved.id }] }))
}

pub fn join(context: &JobContext, j: &Join) -> JobResult<serde_json::Value> {
    let inputs = context.inputs()?;
    if let Some(saved) = context.saved(0)? {
        return Ok(json!({ "files": [{ "fileId": saved.id }] }));
    }
    let mut locations = Vec::with_capacity(inputs.len());
    for file in &inputs {
        locations.push(context.location(file)?);
    }
    let path = context.dir.join("joined");
    let mut progress = |done: f64| context.progress(done as f32);
    let name = if inputs[0].kind == FileKind::Video {
        av::join_videos(&locations, &path, &mut progress)?;
        format!("{} joined.mp4", stem(&inputs[0].file_name))
    } else {
        let format = audio_format(j.format.unwrap_or(job::AudioFormat::Mp3));
        av::join_audio(&locations, format, &path, &mut progress)?;
        format!("{} joined.{}", stem(&inputs[0].file_name), format.extension())
    };
    let saved = context.save(0, &path, &name, context.folder_id())?;
    Ok(json!({ "files": [{ "fileId": saved.id }] }))
}
