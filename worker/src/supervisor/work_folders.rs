//! Each job's work folder, `DRIVE_JOB_WORK_DIR/<job id>`, where its process keeps what it
//! downloads and writes: how much it holds (the disk limit is watched at each heartbeat) and its
//! removal once the process is gone.

use std::path::Path;

use drive_core::id::JobId;

/// Bytes in job `id`'s work folder under `root` (0 when it does not exist).
pub fn size(root: &Path, id: JobId) -> u64 {
    folder_size(&root.join(id.to_string()))
}

/// Removes job `id`'s work folder under `root`, if any.
pub fn remove(root: &Path, id: JobId) {
    let dir = root.join(id.to_string());
    if let Err(e) = std::fs::remove_dir_all(&dir)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(job.id = %id, "removing {}: {e}", dir.display());
    }
}

fn folder_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => folder_size(&entry.path()),
            _ => entry.metadata().map_or(0, |m| m.len()),
        })
        .sum()
}
