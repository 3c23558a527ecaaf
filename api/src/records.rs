//! Shapes shared by several routes: the file reference, and the records core defines.

pub use drive_core::records::{FileRecord, FolderRef};
use serde::Deserialize;
use utoipa::ToSchema;
use uuid::Uuid;

/// Names one file.
#[derive(Debug, Deserialize, ToSchema)]
pub struct FileRef {
    pub id: Uuid,
}
