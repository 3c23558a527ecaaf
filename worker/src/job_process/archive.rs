//! zip and unzip, streamed: a zip's entries are read from the store and written into a
//! multipart upload part by part; an unzip reads the archive with ranged GETs and streams each
//! entry into an object of its own. Neither holds more than a part in memory. Folders are
//! looked up and made by the supervisor, on request.

use std::collections::{HashMap, HashSet};
use std::io::{self, Read, Write};

use chrono::{DateTime, Datelike, Timelike, Utc};
use drive_domain::file::free_variant;
use drive_domain::file::{FileKind, FileName, safe_name};
use drive_domain::folder::FolderPath;
use drive_domain::id::FolderId;
use drive_domain::job::Zip;
use drive_domain::rows::FileRow;
use serde_json::json;
use zip::write::FullFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use crate::job_process::context::JobContext;
use crate::job_process::objects::{ObjectReader, ResultWriter, is_server_side};
use crate::protocol::{JobError, JobResult};

const MIB: u64 = 1024 * 1024;

/// Unzip refuses archives beyond these: more entries, more bytes unpacked, or an entry that
/// unpacks to more than this many times its packed size (a zip bomb).
const MAX_ENTRIES: usize = 10_000;
const MAX_UNPACKED_BYTES: u64 = 1024 * 1024 * MIB;
const MAX_RATIO: u64 = 1_000;

pub fn zip(context: &JobContext, settings: &Zip) -> JobResult<serde_json::Value> {
    let inputs = context.inputs()?;
    let source = context.folder_path(context.job.source_folder_id)?;
    let stem = match (&settings.name, &source) {
        (Some(name), _) => name.clone(),
        (None, Some(path)) => path.rsplit('/').next().unwrap_or("Archive").to_string(),
        (None, None) => "Archive".to_string(),
    };
    let name = format!("{stem}.zip");
    let entries = entry_names(context, &inputs, source.as_deref())?;
    let folder_id = context.folder_id();
    if let Some(saved) = context.saved(0)? {
        return Ok(json!({ "entries": inputs.len(), "bytes": saved.file_size }));
    }
    let total: u64 = inputs.iter().map(|f| f.file_size as u64).sum();
    let writer = ResultWriter::new(context, 0, &name, folder_id, total + total / 100);
    let mut zip = ZipWriter::new_stream(writer);
    let mut done = 0u64;
    for (file, entry) in inputs.iter().zip(&entries) {
        let options = FullFileOptions::default()
            .compression_method(compression_for(file.kind))
            .large_file(file.file_size as u64 >= u32::MAX as u64);
        let options = modified(options, file.modified_time.unwrap_or(file.created_at))?;
        zip.start_file(entry.as_str(), options).map_err(zip_write_error)?;
        let copied = copy_with_progress(&mut context.read(file)?, &mut zip, |n| {
            context.progress((done + n) as f32 / total.max(1) as f32);
        })?;
        if copied != file.file_size as u64 {
            return Err(JobError::Server(format!(
                "the store handed over {copied} of {}'s {} bytes",
                file.file_name, file.file_size
            )));
        }
        done += copied;
    }
    let writer = zip.finish().map_err(zip_write_error)?;
    let saved = writer.into_inner().finish()?;
    Ok(json!({ "entries": inputs.len(), "bytes": saved.file_size }))
}

/// An entry dated as its file: the modified time the uploader gave, else when it was recorded.
/// Written twice, as unzippers read one or the other: the DOS date and time (UTC, to two
/// seconds, 1980 to 2107; outside that range the zip's default) and the extended timestamp
/// field (0x5455: the second, UTC, as a 32-bit Unix time).
fn modified<'k, 'n>(
    options: FullFileOptions<'k, 'n>,
    time: DateTime<Utc>,
) -> JobResult<FullFileOptions<'k, 'n>> {
    let dos = zip::DateTime::from_date_and_time(
        u16::try_from(time.year()).unwrap_or(0),
        time.month() as u8,
        time.day() as u8,
        time.hour() as u8,
        time.minute() as u8,
        time.second() as u8,
    );
    let mut options = match dos {
        Ok(dos) => options.last_modified_time(dos),
        Err(_) => options,
    };
    if let Ok(unix) = u32::try_from(time.timestamp()) {
        let mut field = vec![1u8];
        field.extend_from_slice(&unix.to_le_bytes());
        options
            .add_extra_field(0x5455, field, false)
            .map_err(zip_write_error)?;
    }
    Ok(options)
}

/// Pictures, audio, video and archives are compressed already: deflating them again costs
/// time and saves nothing.
fn compression_for(kind: FileKind) -> CompressionMethod {
    match kind {
        FileKind::Image | FileKind::Video | FileKind::Audio | FileKind::Archive => CompressionMethod::Stored,
        FileKind::Pdf | FileKind::Text | FileKind::Other => CompressionMethod::Deflated,
    }
}

/// Entry names: a folder's files keep their path below the folder; loose files sit at the
/// top. Two entries with one name get ` (2)`, ` (3)`... Every part of a path goes through
/// [`safe_name`]: names are checked when they enter the drive, but one stored before a rule
/// existed must still never make an entry that climbs out (`..`), splits where an unzipper
/// splits (`\`) or hides what it is (a bidi override).
fn entry_names(context: &JobContext, inputs: &[FileRow], source: Option<&str>) -> JobResult<Vec<String>> {
    let mut taken: HashSet<String> = HashSet::new();
    let mut names = Vec::with_capacity(inputs.len());
    for file in inputs {
        let below = match source {
            Some(source) => context
                .folder_path(file.folder_id)?
                .and_then(|p| {
                    p.strip_prefix(source)
                        .map(|rest| rest.trim_start_matches('/').to_string())
                })
                .unwrap_or_default(),
            None => String::new(),
        };
        let wanted = below
            .split('/')
            .filter(|segment| !segment.is_empty())
            .chain([file.file_name.as_str()])
            .map(safe_name)
            .collect::<Vec<_>>()
            .join("/");
        let name = free_variant(&wanted, |candidate| taken.contains(&candidate.to_lowercase()));
        taken.insert(name.to_lowercase());
        names.push(name);
    }
    Ok(names)
}

fn zip_write_error(e: zip::result::ZipError) -> JobError {
    JobError::Server(format!("writing the zip: {e}"))
}

/// `io::copy` that reports the bytes copied so far every 8 MiB.
pub(crate) fn copy_with_progress(
    reader: &mut impl Read,
    writer: &mut impl Write,
    mut report: impl FnMut(u64),
) -> io::Result<u64> {
    let mut buffer = vec![0u8; 256 * 1024];
    let mut copied = 0u64;
    let mut reported = 0u64;
    loop {
        let n = match reader.read(&mut buffer) {
            Ok(0) => return Ok(copied),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        writer.write_all(&buffer[..n])?;
        copied += n as u64;
        if copied - reported >= 8 * MIB {
            report(copied);
            reported = copied;
        }
    }
}

pub fn unzip(context: &JobContext) -> JobResult<serde_json::Value> {
    let archive = context.inputs()?.remove(0);
    // A pipeline's in-between entries land in no folder: their places are checked as if below
    // one, but none is made.
    let folder_path = match context.makes_files {
        true => context.unzip_folder()?.path,
        false => "/unzipped".to_string(),
    };
    let quota_left = context.quota_left()?;
    let (count, skipped) = {
        let reader = ObjectReader::new(context, &archive);
        let mut zip = ZipArchive::new(reader).map_err(|e| unreadable(&archive, e))?;
        check_bomb(&mut zip, &archive, quota_left)?;
        let (mut count, mut carried) = (0, 0);
        let mut skipped = Vec::new();
        let entries = zip.len();
        // An earlier attempt may have saved entries: one that failed (a retry), or one handed
        // back by a draining worker, whose attempt is not counted but whose progress is kept.
        let may_have_saved = context.job.attempts > 1 || context.job.progress > 0.0;
        // Each entry folder is ensured once, by the supervisor, then known here.
        let mut folders: HashMap<String, Option<FolderId>> = HashMap::new();
        for index in 0..entries {
            let mut entry = zip.by_index(index).map_err(|e| unreadable(&archive, e))?;
            if entry.is_dir() {
                continue;
            }
            // An entry whose name the drive would refuse from an uploader is skipped, and said
            // so in the result, rather than renamed: a renamed file is one nobody asked for,
            // and the rest of the archive is still worth having.
            let (path, file_name) = match entry_place(entry.enclosed_name(), &folder_path) {
                Ok(place) => place,
                Err(why) => {
                    skipped.push(format!("{:?} {why}", shown(entry.name_raw())));
                    continue;
                }
            };
            let position = index as i32;
            // Only an attempt after another can find entries saved: asking spares unpacking
            // them again (the supervisor would answer the file saved anyway).
            if may_have_saved && context.saved(position)?.is_some() {
                count += 1;
                carried += 1;
                continue;
            }
            let folder_id = match folders.get(&path.stored()) {
                _ if !context.makes_files => None,
                Some(known) => *known,
                None => {
                    let made = context.entry_folder(&path.stored())?;
                    folders.insert(path.stored(), made);
                    made
                }
            };
            let file_name = file_name.as_str();
            let declared = entry.size();
            let mut writer = ResultWriter::new(context, position, file_name, folder_id, declared);
            // Never more than the entry says it holds: a lying header is a bomb too.
            let copied = io::copy(&mut (&mut entry).take(declared + 1), &mut writer)
                .map_err(|e| unreadable_entry(file_name, e))?;
            if copied > declared {
                return Err(JobError::Input(format!(
                    "the entry {file_name:?} holds more than its header says"
                )));
            }
            writer.finish_ahead()?;
            count += 1;
            context.progress((index + 1) as f32 / entries as f32);
        }
        if carried > 0 {
            tracing::info!(job.id = %context.job.id, entries = carried, "carried on past entries saved before");
        }
        (count, skipped)
    };
    context.saved_ahead()?;
    Ok(json!({ "entries": count, "skipped": skipped }))
}

/// Where an entry lands: its folder below `folder_path` and its file name, each through the
/// checks the drive makes of names it is given (`enclosed`: the entry's path, `None` when it
/// would climb out of the folder). The error finishes a sentence that begins with the name.
fn entry_place(
    enclosed: Option<std::path::PathBuf>,
    folder_path: &str,
) -> Result<(FolderPath, FileName), String> {
    let inside = enclosed.ok_or("would land outside its folder")?;
    let mut segments: Vec<String> = inside
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let file_name = segments.pop().unwrap_or_default();
    let file_name =
        FileName::try_from(file_name).map_err(|why| format!("cannot be a file name: it {why}"))?;
    let path = std::iter::once(folder_path.to_string())
        .chain(segments)
        .collect::<Vec<_>>()
        .join("/");
    let path = FolderPath::try_from(path).map_err(|why| format!("cannot be a folder: {why}"))?;
    Ok((path, file_name))
}

/// Refuses archives that unpack to too much, before anything is unpacked.
fn check_bomb<R: Read + io::Seek>(
    zip: &mut ZipArchive<R>,
    archive: &FileRow,
    quota_left: i64,
) -> JobResult<()> {
    if zip.len() > MAX_ENTRIES {
        return Err(JobError::Input(format!(
            "the archive has {} entries; unzip takes at most {MAX_ENTRIES}",
            zip.len()
        )));
    }
    let mut unpacked = 0u64;
    for index in 0..zip.len() {
        let entry = zip.by_index_raw(index).map_err(|e| unreadable(archive, e))?;
        let (size, packed) = (entry.size(), entry.compressed_size());
        if size > MIB && size / packed.max(1) > MAX_RATIO {
            return Err(JobError::Input(format!(
                "the entry {:?} unpacks to {size} bytes from {packed}: refused as a zip bomb",
                shown(entry.name_raw())
            )));
        }
        unpacked += size;
    }
    if unpacked > MAX_UNPACKED_BYTES || unpacked as i64 > quota_left {
        return Err(JobError::Input(format!(
            "the archive unpacks to {unpacked} bytes, more than the {} the account has room for",
            quota_left.min(MAX_UNPACKED_BYTES as i64)
        )));
    }
    Ok(())
}

/// An entry's name as stored, for messages (archives need not use UTF-8).
fn shown(raw: &[u8]) -> String {
    String::from_utf8_lossy(raw).into_owned()
}

fn unreadable(archive: &FileRow, e: zip::result::ZipError) -> JobError {
    match e {
        zip::result::ZipError::Io(io) if is_server_side(&io) => {
            JobError::Server(format!("reading {} from the store: {io}", archive.file_name))
        }
        other => JobError::Input(format!(
            "{:?} is not a zip that can be read: {other}",
            archive.file_name
        )),
    }
}

fn unreadable_entry(name: &str, e: io::Error) -> JobError {
    if is_server_side(&e) {
        JobError::Server(format!("the store failed while unpacking {name:?}: {e}"))
    } else {
        JobError::Input(format!("the entry {name:?} could not be unpacked: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_media_is_stored_and_documents_deflated() {
        assert_eq!(compression_for(FileKind::Video), CompressionMethod::Stored);
        assert_eq!(compression_for(FileKind::Text), CompressionMethod::Deflated);
    }
}
