//! Shapes shared by several routes: the file reference, and the records core defines.

use drive_core::id::FileId;
pub use drive_core::records::{FileRecord, FolderRef};
use serde::Deserialize;
use utoipa::ToSchema;

/// Names one file.
#[derive(Debug, Deserialize, ToSchema)]
pub struct FileRef {
    pub id: FileId,
}
