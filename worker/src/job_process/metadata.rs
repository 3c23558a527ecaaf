//! readMetadata: what a new audio, video or picture file is, read by FFmpeg from the store
//! (and a photo's EXIF from its first megabyte), stored (by the supervisor) where
//! `/search-files` filters on it; with its artwork (a poster, cover art, a picture's thumbnail).
//! A file that cannot be read gets its failure recorded and the job ends done: nothing to
//! retry. The machine's failures are retried like any job's. One process reads the files of
//! several readings of one account, claimed together by its supervisor, and ends them together.

use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{DateTime, NaiveDateTime, Utc};
use drive_domain::file::{FileKind, is_own_thumbnail};
use drive_domain::id::FileId;
use drive_domain::metadata::{Location, Metadata, Mode, MusicalKey};
use drive_domain::rows::FileRow;
use drive_media::analysis::Analyzer;
use drive_media::av::Input;
use drive_media::av::sound::mono_samples;
use drive_media::av::{AvError, pictures};
use drive_media::picture::taken;
use drive_media::picture::{Convert, PictureFormat, convert};
use serde_json::json;

use crate::job_process::context::JobContext;
use crate::protocol::{JobError, JobResult, MetadataRead};

/// Bytes of a photo read for its EXIF.
const EXIF_HEAD: u64 = 1024 * 1024;

/// How long a process goes on to its next input: readings in a slot hold back the next job of
/// another lane (and a bulk job held still for them must then run as long before it is held again). It ends with the reading under way when the time is up.
const READING_TIME: Duration = Duration::from_millis(200);

/// Reads the inputs in order, each the file of one reading (a burst of an account's uploads is
/// read in one process), for up to [`READING_TIME`], and ends those it read together; the
/// supervisor hands the rest back. A file that cannot be read ends its own reading; a failure
/// of the machine's ends the process, and the supervisor tries the readings again, each alone.
pub fn read(context: &JobContext) -> JobResult<()> {
    let started = Instant::now();
    let inputs = context.inputs()?;
    let mut readings = Vec::with_capacity(inputs.len());
    for (done, file) in inputs.iter().enumerate() {
        if done > 0 && started.elapsed() >= READING_TIME {
            break;
        }
        let outcome = read_one(context, file);
        readings.push(match outcome {
            Ok(read) => read,
            Err(JobError::Input(why)) => MetadataRead {
                file_id: file.id,
                metadata: Err(why.clone()),
                outcome: Err(why),
            },
            Err(server) => return Err(server),
        });
        context.progress((done + 1) as f32 / inputs.len() as f32);
    }
    context.end_readings(readings)
}

fn read_one(context: &JobContext, file: &FileRow) -> JobResult<MetadataRead> {
    let head = if file.kind == FileKind::Image {
        let len = EXIF_HEAD.min(file.file_size.max(0) as u64);
        context.read_span(file, 0, len)?
    } else {
        Vec::new()
    };
    let location = context.location(file)?;
    match facts(file.kind, &location, &head) {
        Ok(metadata) => {
            let artwork = artwork(context, file, &location, Some(&metadata))?;
            Ok(MetadataRead {
                file_id: file.id,
                metadata: Ok(metadata),
                outcome: Ok(json!({ "read": true, "artworkId": artwork })),
            })
        }
        Err(AvError::Input(why)) => {
            // A picture FFmpeg cannot read may still decode as picture jobs decode it (HEIC).
            let artwork = artwork(context, file, &location, None)?;
            Ok(MetadataRead {
                file_id: file.id,
                outcome: Ok(json!({ "read": false, "error": why, "artworkId": artwork })),
                metadata: Err(why),
            })
        }
        Err(machine) => Err(machine.into()),
    }
}

/// A video's poster (its frame at a tenth of the way in, at most a second), the cover art an
/// audio file carries, or a picture's thumbnail, saved as a derivative of the file: made once
/// here, so a grid of a library shows small pictures without ever sending the large ones.
fn artwork(
    context: &JobContext,
    file: &FileRow,
    location: &str,
    metadata: Option<&Metadata>,
) -> JobResult<Option<FileId>> {
    let path = context.dir.join("artwork");
    let made = match (file.kind, metadata) {
        (FileKind::Image, _) => thumbnail(context, file, &path)?,
        (kind, Some(metadata)) => match make_artwork(kind, location, metadata, &path) {
            Ok(made) => made,
            // A poster that cannot be made (no frame decodes) is no reason to fail the reading.
            Err(AvError::Input(_)) => None,
            Err(machine) => return Err(machine.into()),
        },
        (_, None) => None,
    };
    let Some(name) = made else {
        return Ok(None);
    };
    let saved = context.save_derivative(file, &path, name)?;
    let _ = std::fs::remove_file(&path);
    Ok(saved.map(|row| row.id))
}

/// The longer edge of a picture's thumbnail, in pixels: a grid cell on a dense screen.
const THUMBNAIL_EDGE: u32 = 320;

/// Writes a picture's thumbnail to `path` (decoded as every picture job decodes: HEIC, AVIF and
/// camera RAW too, turned upright, never enlarged); answers the name it is saved under. A small
/// picture a browser shows is its own thumbnail; one that cannot be decoded, or is past what a
/// job may download, has none.
fn thumbnail(context: &JobContext, file: &FileRow, path: &Path) -> JobResult<Option<&'static str>> {
    if is_own_thumbnail(&file.mime_type, file.file_size) {
        return Ok(None);
    }
    let source = match context.download(file, 0) {
        Ok(source) => source,
        Err(JobError::Input(_)) => return Ok(None),
        Err(machine) => return Err(machine),
    };
    let shrunk = Convert {
        format: PictureFormat::Jpg,
        max_edge: Some(THUMBNAIL_EDGE),
    };
    let made = convert(&source, path, &shrunk);
    let _ = std::fs::remove_file(&source);
    Ok(made.ok().map(|_| "thumbnail.jpg"))
}

/// Writes the artwork of a video or a track to `path`; answers the name it is saved under.
fn make_artwork(
    kind: FileKind,
    location: &str,
    metadata: &Metadata,
    path: &Path,
) -> Result<Option<&'static str>, AvError> {
    match kind {
        FileKind::Video if metadata.video_codec.is_some() => {
            let at = metadata.duration_seconds.map_or(0.0, |d| (d / 10.0).min(1.0));
            let frame = pictures::frame_at(location, at)?;
            pictures::save(&frame, PictureFormat::Jpg, path)?;
            Ok(Some("poster.jpg"))
        }
        FileKind::Audio => Ok(pictures::cover_art(location, path)?.map(|ext| match ext {
            "png" => "cover.png",
            _ => "cover.jpg",
        })),
        _ => Ok(None),
    }
}

/// Rate the sound is decoded at for analysis: the analyzer works below 11 kHz.
const ANALYSIS_RATE: u32 = 22_050;

fn facts(kind: FileKind, location: &str, head: &[u8]) -> Result<Metadata, AvError> {
    let source = Input::whole(location).open()?;
    let probed = source.probe();
    // Tempo, key and soundprint come from the sound of audio files: tags win for tempo and key.
    let heard = if kind == FileKind::Audio {
        let mut analyzer = Analyzer::new(ANALYSIS_RATE);
        mono_samples(source, ANALYSIS_RATE, &mut |s| analyzer.push(s), &mut |_| {})?;
        Some(analyzer.finish())
    } else {
        None
    };
    let measured_key = heard
        .as_ref()
        .and_then(|h| h.key)
        .map(|(pitch, major)| MusicalKey {
            pitch,
            mode: Some(if major { Mode::Major } else { Mode::Minor }),
        });
    let photo = taken::read(head);
    let recorded = photo
        .time
        .as_deref()
        .or(probed.recorded.as_deref())
        .and_then(parse_time);
    let place = photo.place.or(probed.location);
    Ok(Metadata {
        title: probed.title,
        artists: probed.artists,
        album: probed.album,
        genre: probed.genre,
        taken_time: recorded,
        duration_seconds: probed.duration.filter(|_| kind != FileKind::Image),
        tempo_bpm: probed.tempo.or(heard.as_ref().and_then(|h| h.tempo_bpm)),
        key: probed.key.as_deref().and_then(MusicalKey::parse).or(measured_key),
        location: place.map(|(latitude, longitude)| Location { latitude, longitude }),
        width: probed.width.and_then(|w| i32::try_from(w).ok()),
        height: probed.height.and_then(|h| i32::try_from(h).ok()),
        video_codec: probed.video_codec.filter(|_| kind != FileKind::Image),
        audio_codec: probed.audio_codec,
        // Stored as the bits they are: a code is 32 bits, Postgres has no unsigned integer.
        soundprint: heard.map(|h| h.soundprint.into_iter().map(|code| code as i32).collect()),
    })
}

/// Times as containers and cameras write them: RFC 3339 (`2024-05-01T10:20:30.000000Z`),
/// or without an offset (taken as UTC).
fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Some(t.with_timezone(&Utc));
    }
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f")
        .ok()
        .map(|t| t.and_utc())
}
