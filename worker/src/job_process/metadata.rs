//! readMetadata: what a new audio, video or picture file is, read by FFmpeg from the store
//! (and a photo's EXIF from its first megabyte), stored (by the supervisor) where
//! `/search-files` filters on it.
//! A file that cannot be read gets its failure recorded and the job ends done: nothing to
//! retry. The machine's failures are retried like any job's.

use std::path::Path;

use chrono::{DateTime, NaiveDateTime, Utc};
use drive_domain::file::FileKind;
use drive_domain::id::FileId;
use drive_domain::metadata::{Location, Metadata, Mode, MusicalKey};
use drive_domain::rows::FileRow;
use drive_media::analysis::Analyzer;
use drive_media::av::Input;
use drive_media::av::sound::mono_samples;
use drive_media::av::{AvError, pictures};
use drive_media::picture::PictureFormat;
use drive_media::picture::taken;
use serde_json::json;

use crate::job_process::context::JobContext;
use crate::protocol::{JobError, JobResult};

/// Bytes of a photo read for its EXIF.
const EXIF_HEAD: u64 = 1024 * 1024;

pub fn read(context: &JobContext) -> JobResult<serde_json::Value> {
    let inputs = context.inputs()?;
    let file = inputs
        .first()
        .ok_or_else(|| JobError::Input("the file is gone".to_string()))?;
    let head = if file.kind == FileKind::Image {
        let len = EXIF_HEAD.min(file.file_size.max(0) as u64);
        context.read_span(file, 0, len)?
    } else {
        Vec::new()
    };
    let location = context.location(file)?;
    let kind = file.kind;
    match facts(kind, &location, &head) {
        Ok(metadata) => {
            let artwork = artwork(context, file, &location, &metadata)?;
            context.store_metadata(metadata)?;
            Ok(json!({ "read": true, "artworkId": artwork }))
        }
        Err(AvError::Input(why)) => {
            context.metadata_unreadable(&why)?;
            Ok(json!({ "read": false, "error": why }))
        }
        Err(machine) => Err(machine.into()),
    }
}

/// A video's poster (its frame at a tenth of the way in, at most a second) or the cover art
/// an audio file carries, saved as a derivative of the file.
fn artwork(
    context: &JobContext,
    file: &FileRow,
    location: &str,
    metadata: &Metadata,
) -> JobResult<Option<FileId>> {
    let path = context.dir.join("artwork");
    let name = match make_artwork(file.kind, location, metadata, &path) {
        Ok(Some(name)) => name,
        Ok(None) => return Ok(None),
        // A poster that cannot be made (no frame decodes) is no reason to fail the reading.
        Err(AvError::Input(_)) => return Ok(None),
        Err(machine) => return Err(machine.into()),
    };
    let saved = context.save_derivative(file, &path, name)?;
    let _ = std::fs::remove_file(&path);
    Ok(saved.map(|row| row.id))
}

/// Writes the artwork to `path`; answers the name it is saved under.
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
