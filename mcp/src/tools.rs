//! The seven tools of the spec, each a call or two of the client library: upload a file and
//! get its link, a fresh link, the library newest first, trash or delete, restore, public or
//! private, and storage usage. Inputs and outputs are typed, so every tool declares both JSON
//! Schemas; failures come back as tool errors carrying the drive's sentence and what to do next.

use std::path::PathBuf;
use std::sync::Arc;

use chrono::{DateTime, SecondsFormat, TimeDelta, Utc};
use drive_client::Client;
use drive_client::files::Batch;
use drive_client::local::LocalFile;
use drive_client::records::{FileRecord, StorageUsage};
use drive_client::spool::{self, SpoolError};
use drive_client::upload::{self, Progress, UploadStatus};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{Json, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::callers::Callers;
use crate::explain::Failure;

/// How long `/generate-download-url`'s link to a private file works.
const PRIVATE_LINK_LIFETIME: TimeDelta = TimeDelta::hours(6);
const DEFAULT_PAGE: usize = 50;
const LARGEST_PAGE: usize = 200;
const MOST_IDS: usize = 100;

/// A file of the drive, as every tool answers it: the drive's record, and how long its link works.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct File {
    #[serde(flatten)]
    pub record: FileRecord,
    /// When `downloadUrl` stops working; null for a public file's permanent link or no link.
    pub link_expires_at: Option<DateTime<Utc>>,
}

impl File {
    fn from_record(record: FileRecord) -> File {
        // A private file's link is made fresh by the call that answered it.
        let link_expires_at =
            (record.download_url.is_some() && !record.is_public).then(|| Utc::now() + PRIVATE_LINK_LIFETIME);
        File {
            record,
            link_expires_at,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct LocalUpload {
    /// The file to upload, on the machine this server runs on. Best given absolute; a
    /// relative path is taken from the server's working folder.
    pub path: PathBuf,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SentUpload {
    /// The file's name in the drive, such as `report.pdf`.
    pub file_name: String,
    /// The file's bytes, base64-encoded (standard alphabet, padded). At most 100 MiB of bytes.
    pub content_base64: String,
    /// When the file was last modified (RFC 3339). Give it, so that sending the same file
    /// again answers the stored one instead of storing it twice; without it, now is taken.
    pub modified_time: Option<DateTime<Utc>>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UploadAnswer {
    /// `uploaded`; `resumed` (an interrupted upload of it was picked up); `recovered` (its
    /// bytes were stored by an interrupted upload and are now recorded); `alreadyStored` (the
    /// drive has a file of the same name, size and modified time: nothing was sent);
    /// `inTrash` (it has one in the trash: restore it with restore_files).
    pub status: UploadStatus,
    pub file: File,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct FileId {
    /// The file's id (a UUID), as list_files or upload_file answer it.
    pub id: Uuid,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Page {
    /// How many files to answer, 1 to 200 (50 when not given).
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<usize>,
    /// The `nextCursor` of the previous page, to go on where it ended.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Listing {
    /// Newest first.
    pub files: Vec<File>,
    /// Pass it as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Removal {
    /// The files' ids, 1 to 100.
    #[schemars(length(min = 1, max = 100))]
    pub ids: Vec<Uuid>,
    /// False (the default) moves the files to the trash, from where restore_files brings them
    /// back. True deletes them for good: their bytes are gone and cannot be recovered.
    #[serde(default)]
    pub permanently: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Removed {
    /// The files trashed (or deleted, when `permanently`).
    pub ids: Vec<Uuid>,
    /// Ids passed over: not in the library (already in the trash?) or not the caller's.
    pub not_found: Vec<Uuid>,
    pub permanently: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Restoration {
    /// The trashed files' ids, 1 to 100.
    #[schemars(length(min = 1, max = 100))]
    pub ids: Vec<Uuid>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Restored {
    /// The files brought back to the library.
    pub ids: Vec<Uuid>,
    /// Ids passed over: not in the trash.
    pub not_found: Vec<Uuid>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Access {
    /// The file's id.
    pub id: Uuid,
    /// True: anyone with its permanent link can download it. False: only 6-hour links work.
    pub public: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// The plan, or null for an account without one.
    pub plan: Option<String>,
    pub used_bytes: u64,
    pub limit_bytes: u64,
    pub remaining_bytes: u64,
    /// Files stored, the trash included.
    pub files: u64,
}

impl From<StorageUsage> for Usage {
    fn from(usage: StorageUsage) -> Usage {
        Usage {
            plan: usage.plan,
            used_bytes: usage.used_bytes,
            limit_bytes: usage.limit_bytes,
            remaining_bytes: usage.remaining_bytes,
            files: usage.objects,
        }
    }
}

/// The tool server; one per MCP session.
#[derive(Clone)]
pub struct DriveTools {
    callers: Arc<Callers>,
    tool_router: ToolRouter<DriveTools>,
}

impl DriveTools {
    /// Over stdio: `upload_file` takes a local path.
    pub fn local(callers: Arc<Callers>) -> DriveTools {
        DriveTools {
            callers,
            tool_router: DriveTools::common_tools() + DriveTools::local_upload(),
        }
    }

    /// Over HTTP: `upload_file` takes the bytes, base64-encoded.
    pub fn remote(callers: Arc<Callers>) -> DriveTools {
        DriveTools {
            callers,
            tool_router: DriveTools::common_tools() + DriveTools::sent_upload(),
        }
    }

    async fn upload(&self, client: &Client, file: &LocalFile) -> Result<Json<UploadAnswer>, Failure> {
        let nothing: Progress = Arc::new(|_| {});
        let uploaded = upload::upload(client, file, &nothing).await?;
        let record = if uploaded.status == UploadStatus::InTrash {
            let trash = client.trash_listing().await?;
            trash.into_iter().find(|f| f.id == uploaded.id)
        } else {
            Some(client.download_link(uploaded.id).await?)
        };
        let record = record.ok_or_else(|| {
            Failure::new("the uploaded file vanished before its link was made; call list_files")
        })?;
        Ok(Json(UploadAnswer {
            status: uploaded.status,
            file: File::from_record(record),
        }))
    }
}

#[tool_router(router = local_upload)]
impl DriveTools {
    /// Uploads a file from this machine to the drive (privately) and answers it with a 6-hour
    /// download link. Sending a file the drive already has (same name, size and modified
    /// time) sends nothing and answers the stored file. Storage left is checked first. Files
    /// over 64 MiB go in parts; if an upload is cut off, calling again picks up the parts
    /// already stored.
    #[tool(
        name = "upload_file",
        annotations(
            title = "Upload a file",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn upload_local_file(
        &self,
        Parameters(input): Parameters<LocalUpload>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<UploadAnswer>, Failure> {
        let client = self.callers.client(&context)?;
        let file = LocalFile::open(&input.path).map_err(|e| {
            Failure::new(format!("{e:#}")).next("Give the path of a file this server can read.")
        })?;
        self.upload(&client, &file).await
    }
}

#[tool_router(router = sent_upload)]
impl DriveTools {
    /// Uploads a file sent as base64 (at most 100 MiB of bytes) to the drive (privately) and
    /// answers it with a 6-hour download link. Sending a file the drive already has (same
    /// name, size and modified time) stores nothing and answers the stored file. Storage left
    /// is checked first. Files over 64 MiB go to storage in parts, picked up again if cut off.
    #[tool(
        name = "upload_file",
        annotations(
            title = "Upload a file",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn upload_sent_file(
        &self,
        Parameters(input): Parameters<SentUpload>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<UploadAnswer>, Failure> {
        let client = self.callers.client(&context)?;
        let spooled = spool::decode(input.content_base64).await.map_err(explain_spool)?;
        let file = spooled
            .as_file(&input.file_name, input.modified_time)
            .map_err(explain_spool)?;
        self.upload(&client, &file).await
    }
}

/// A sent file that could not be spooled, as the tool's caller is told it.
fn explain_spool(e: SpoolError) -> Failure {
    match e {
        SpoolError::TooLarge => Failure::new(format!("contentBase64 {e}."))
            .next("Upload larger files with the drive CLI, or run this server over stdio and pass a path."),
        SpoolError::NotBase64(_) => Failure::new(format!("contentBase64: {e}."))
            .next("Send the file's bytes in standard base64 with padding, no line breaks."),
        SpoolError::BadName => Failure::new(format!("fileName: {e}.")),
        SpoolError::Io(_) => Failure::new(format!("{e}")),
    }
}

#[tool_router(router = common_tools)]
impl DriveTools {
    /// A fresh download link for a file: a private file's works for 6 hours, a public file's
    /// is permanent.
    #[tool(annotations(title = "Get a download link", read_only_hint = true, open_world_hint = false))]
    async fn get_download_link(
        &self,
        Parameters(input): Parameters<FileId>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<File>, Failure> {
        let client = self.callers.client(&context)?;
        Ok(Json(File::from_record(client.download_link(input.id).await?)))
    }

    /// The files in the drive, newest first, a page at a time (the trash is not listed).
    /// Public files carry their permanent link; get a private file's with get_download_link.
    #[tool(annotations(title = "List files", read_only_hint = true, open_world_hint = false))]
    async fn list_files(
        &self,
        Parameters(input): Parameters<Page>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<Listing>, Failure> {
        let limit = input.limit.unwrap_or(DEFAULT_PAGE);
        if !(1..=LARGEST_PAGE).contains(&limit) {
            return Err(Failure::new(format!(
                "limit must be 1 to {LARGEST_PAGE}, not {limit}"
            )));
        }
        let start = match &input.cursor {
            Some(cursor) => Some(Cursor::parse(cursor)?),
            None => None,
        };
        let client = self.callers.client(&context)?;
        let library = client.library().await?;
        let from = start.map_or(0, |cursor| cursor.position_in(&library));
        let page: Vec<FileRecord> = library.iter().skip(from).take(limit).cloned().collect();
        let next_cursor = (from + page.len() < library.len())
            .then(|| page.last().map(Cursor::after))
            .flatten();
        Ok(Json(Listing {
            files: page.into_iter().map(File::from_record).collect(),
            next_cursor,
        }))
    }

    /// Moves files to the trash (the default), or deletes them for good with `permanently`:
    /// deleted files cannot be brought back.
    #[tool(annotations(
        title = "Trash or delete files",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn remove_files(
        &self,
        Parameters(input): Parameters<Removal>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<Removed>, Failure> {
        check_ids(&input.ids)?;
        let client = self.callers.client(&context)?;
        let batch = if input.permanently {
            Batch::Delete
        } else {
            Batch::Trash
        };
        let outcome = client.batch(batch, &input.ids).await?;
        Ok(Json(Removed {
            ids: outcome.done,
            not_found: outcome.skipped,
            permanently: input.permanently,
        }))
    }

    /// Brings trashed files back to the library, public again if they were.
    #[tool(annotations(
        title = "Restore files",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn restore_files(
        &self,
        Parameters(input): Parameters<Restoration>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<Restored>, Failure> {
        check_ids(&input.ids)?;
        let client = self.callers.client(&context)?;
        let outcome = client.batch(Batch::Restore, &input.ids).await?;
        Ok(Json(Restored {
            ids: outcome.done,
            not_found: outcome.skipped,
        }))
    }

    /// Makes a file public (anyone with its permanent link can download it) or private (only
    /// 6-hour links work). Asking for what it already is changes nothing.
    #[tool(annotations(
        title = "Make a file public or private",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn set_file_access(
        &self,
        Parameters(input): Parameters<Access>,
        context: RequestContext<RoleServer>,
    ) -> Result<Json<File>, Failure> {
        let client = self.callers.client(&context)?;
        let (_, file) = client.set_access(input.id, input.public).await?.ok_or_else(|| {
            Failure::new(format!(
                "No file in the library has id {} (file_not_found).",
                input.id
            ))
            .next("Find the id with list_files; a trashed file must be restored with restore_files first.")
        })?;
        Ok(Json(File::from_record(file)))
    }

    /// Storage used, the plan's limit and what is left, in bytes.
    #[tool(annotations(title = "Storage usage", read_only_hint = true, open_world_hint = false))]
    async fn get_storage_usage(&self, context: RequestContext<RoleServer>) -> Result<Json<Usage>, Failure> {
        let client = self.callers.client(&context)?;
        Ok(Json(client.storage_usage().await?.into()))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for DriveTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("drive-mcp", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Tools for the user's Drive: upload_file stores a file and answers its link; \
                 list_files pages through the library newest first; get_download_link makes a \
                 fresh link; set_file_access makes a file public or private; remove_files trashes \
                 (or, with permanently, deletes for good); restore_files brings trashed files \
                 back; get_storage_usage says what is used and left.",
            )
    }
}

fn check_ids(ids: &[Uuid]) -> Result<(), Failure> {
    if ids.is_empty() || ids.len() > MOST_IDS {
        return Err(Failure::new(format!(
            "ids must hold 1 to {MOST_IDS} ids, not {}",
            ids.len()
        )));
    }
    Ok(())
}

/// Where a page of list_files ended: the last file's upload time and id. The next page starts
/// after that file, or, when it has left the library since, at the first file older than it.
struct Cursor {
    insert_time: DateTime<Utc>,
    id: Uuid,
}

impl Cursor {
    fn after(record: &FileRecord) -> String {
        let time = record.insert_time.to_rfc3339_opts(SecondsFormat::Micros, true);
        format!("{time}_{}", record.id)
    }

    fn parse(text: &str) -> Result<Cursor, Failure> {
        let unreadable = || {
            Failure::new("cursor is not one list_files answered")
                .next("Pass the nextCursor of the previous page, or no cursor to start over.")
        };
        let (time, id) = text.split_once('_').ok_or_else(unreadable)?;
        Ok(Cursor {
            insert_time: time.parse().map_err(|_| unreadable())?,
            id: id.parse().map_err(|_| unreadable())?,
        })
    }

    fn position_in(&self, library: &[FileRecord]) -> usize {
        match library.iter().position(|f| f.id == self.id) {
            Some(index) => index + 1,
            None => library
                .iter()
                .position(|f| f.insert_time < self.insert_time)
                .unwrap_or(library.len()),
        }
    }
}
