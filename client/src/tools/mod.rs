//! One catalogue of tools for models, served to MCP clients by `drive-mcp` and to the agent's
//! model by the worker: each tool's name, description, typed arguments (their JSON Schema
//! generated, subschemas inlined so every model provider takes them), its typed answer where it
//! has one, and the function that runs it through the client as the caller's token (so a tool
//! can never do more than its credential allows). What differs between hosts goes through
//! [`Effects`]: the agent attaches links to its reply and asks the user before trashing; an MCP
//! client is answered directly ([`Direct`]). Each host serves the tools it names.

mod choosing;
mod failure;
mod library;
mod making;

use std::future::Future;

use anyhow::Result;
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::Client;
use crate::files::Batch;
use crate::records::FileRecord;

pub use self::choosing::{Selection, done};
pub use self::failure::Failure;

/// Every tool of the catalogue. Two pairs share a name, each host serving one of the pair:
/// the library's `list_files` and `restore_files` (pages of the library, ids) for MCP clients,
/// and the agent's (files chosen by words, folder or types) for its model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// `upload_file` from a path on the host's machine.
    UploadLocalFile,
    /// `upload_file` from bytes sent as base64.
    UploadSentFile,
    GetDownloadLink,
    ListLibrary,
    RemoveFiles,
    RestoreFiles,
    SetFileAccess,
    GetStorageUsage,
    FindFiles,
    GetLink,
    ZipFiles,
    MoveFiles,
    TagFiles,
    TrashFiles,
    RestoreNamed,
    AskForFiles,
    ShareForReview,
    MakeImage,
    RunTemplate,
}

/// What a tool may do, as MCP's annotations say it; `None` is left unsaid.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hints {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

/// A tool that reads only the caller's drive.
const READS: Hints = Hints {
    read_only: Some(true),
    destructive: None,
    idempotent: None,
    open_world: Some(false),
};

/// A tool that changes the drive, and may be called again to the same end.
const CHANGES: Hints = Hints {
    read_only: Some(false),
    destructive: Some(false),
    idempotent: Some(true),
    open_world: Some(false),
};

impl Tool {
    /// The library's tools, as the spec names them (`upload_file` is either of two, by host).
    pub const LIBRARY: [Tool; 6] = [
        Tool::GetDownloadLink,
        Tool::ListLibrary,
        Tool::RemoveFiles,
        Tool::RestoreFiles,
        Tool::SetFileAccess,
        Tool::GetStorageUsage,
    ];

    /// The tools an MCP client gets beside the library's: a job template run on files.
    pub const MCP_EXTRA: [Tool; 1] = [Tool::RunTemplate];

    /// The coarse tools that choose files by words, a folder or types, and make things to share.
    pub const CHOOSING: [Tool; 11] = [
        Tool::FindFiles,
        Tool::GetLink,
        Tool::ZipFiles,
        Tool::MoveFiles,
        Tool::TagFiles,
        Tool::TrashFiles,
        Tool::RestoreNamed,
        Tool::AskForFiles,
        Tool::ShareForReview,
        Tool::MakeImage,
        Tool::RunTemplate,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Tool::UploadLocalFile | Tool::UploadSentFile => "upload_file",
            Tool::GetDownloadLink => "get_download_link",
            Tool::ListLibrary | Tool::FindFiles => "list_files",
            Tool::RemoveFiles => "remove_files",
            Tool::RestoreFiles | Tool::RestoreNamed => "restore_files",
            Tool::SetFileAccess => "set_file_access",
            Tool::GetStorageUsage => "get_storage_usage",
            Tool::GetLink => "get_link",
            Tool::ZipFiles => "zip_files",
            Tool::MoveFiles => "move_files",
            Tool::TagFiles => "tag_files",
            Tool::TrashFiles => "trash_files",
            Tool::AskForFiles => "ask_for_files",
            Tool::ShareForReview => "share_for_review",
            Tool::MakeImage => "make_image",
            Tool::RunTemplate => "run_template",
        }
    }

    /// A short title for people.
    pub fn title(self) -> &'static str {
        match self {
            Tool::UploadLocalFile | Tool::UploadSentFile => "Upload a file",
            Tool::GetDownloadLink => "Get a download link",
            Tool::ListLibrary | Tool::FindFiles => "List files",
            Tool::RemoveFiles => "Trash or delete files",
            Tool::RestoreFiles | Tool::RestoreNamed => "Restore files",
            Tool::SetFileAccess => "Make a file public or private",
            Tool::GetStorageUsage => "Storage usage",
            Tool::GetLink => "Link a file",
            Tool::ZipFiles => "Zip files",
            Tool::MoveFiles => "Move files",
            Tool::TagFiles => "Tag files",
            Tool::TrashFiles => "Trash files",
            Tool::AskForFiles => "Ask for files",
            Tool::ShareForReview => "Share for review",
            Tool::MakeImage => "Make an image",
            Tool::RunTemplate => "Run a template",
        }
    }

    /// What the model is told the tool does.
    pub fn description(self) -> &'static str {
        match self {
            Tool::UploadLocalFile => {
                "Uploads a file from this machine to the drive (privately) and answers it with a 6-hour \
                 download link. Sending a file the drive already has (same name, size and modified time) \
                 sends nothing and answers the stored file. Storage left is checked first. Files over \
                 64 MiB go in parts; if an upload is cut off, calling again picks up the parts already stored."
            }
            Tool::UploadSentFile => {
                "Uploads a file sent as base64 (at most 100 MiB of bytes) to the drive (privately) and \
                 answers it with a 6-hour download link. Sending a file the drive already has (same name, \
                 size and modified time) stores nothing and answers the stored file. Storage left is \
                 checked first. Files over 64 MiB go to storage in parts, picked up again if cut off."
            }
            Tool::GetDownloadLink => {
                "A fresh download link for a file: a private file's works for 6 hours, a public file's is permanent."
            }
            Tool::ListLibrary => {
                "The files in the drive, newest first, a page at a time (the trash is not listed). Public \
                 files carry their permanent link; get a private file's with get_download_link."
            }
            Tool::RemoveFiles => {
                "Moves files to the trash (the default), or deletes them for good with `permanently`: \
                 deleted files cannot be brought back."
            }
            Tool::RestoreFiles => "Brings trashed files back to the library, public again if they were.",
            Tool::SetFileAccess => {
                "Makes a file public (anyone with its permanent link can download it) or private (only \
                 6-hour links work). Asking for what it already is changes nothing."
            }
            Tool::GetStorageUsage => "Storage used, the plan's limit and what is left, in bytes.",
            Tool::FindFiles => {
                "Lists the user's files, newest first, narrowed by words in their names, a folder or types. \
                 Gives each file's id, name, type, size, folder and upload time."
            }
            Tool::GetLink => {
                "Makes a link to download one file (valid 6 hours for a private file) and attaches it to \
                 your reply: the newest file whose name has these words, in this folder if given."
            }
            Tool::ZipFiles => {
                "Puts every file of a folder (or only those of some types) into one new zip file and \
                 attaches a link to download it to your reply. Waits until the zip is made."
            }
            Tool::MoveFiles => {
                "Moves every file of a folder (or only those of some types, or with some words in their \
                 names) to another folder, made if needed."
            }
            Tool::TagFiles => {
                "Adds a tag to every file of a folder (or only those of some types, or with some words in \
                 their names)."
            }
            Tool::TrashFiles => {
                "Proposes to move files (of a folder, of some types, or with some words in their names) to \
                 the trash. Nothing moves now: the user must confirm in their next message, with the words \
                 this tool gives you. Put those words in your reply."
            }
            Tool::RestoreNamed => "Brings files back from the trash: those with these words in their names.",
            Tool::AskForFiles => {
                "Makes a file request: a link anyone can send files to, without an account; what they send \
                 lands in a folder. Attaches the link to your reply."
            }
            Tool::ShareForReview => {
                "Makes a review of a video or track: a link where anyone can watch it and leave notes at its \
                 moments. The newest video or track whose name has these words. Attaches the link to your reply."
            }
            Tool::MakeImage => {
                "Draws an image from a description and saves it to the drive; waits for it (up to 3 \
                 minutes) and attaches a link to it to your reply."
            }
            Tool::RunTemplate => {
                "Runs one of the user's job templates (a chain of file jobs kept under a name, like \
                 'pictures to a book') on the files chosen by a folder, types or words in their names; \
                 waits for it (up to 3 minutes) and attaches links to what it made to your reply."
            }
        }
    }

    pub fn hints(self) -> Hints {
        match self {
            Tool::GetDownloadLink | Tool::ListLibrary | Tool::GetStorageUsage | Tool::FindFiles => READS,
            Tool::RemoveFiles => Hints {
                destructive: Some(true),
                ..CHANGES
            },
            Tool::TrashFiles => Hints {
                destructive: Some(true),
                idempotent: Some(false),
                ..CHANGES
            },
            Tool::UploadLocalFile
            | Tool::UploadSentFile
            | Tool::RestoreFiles
            | Tool::SetFileAccess
            | Tool::GetLink
            | Tool::MoveFiles
            | Tool::TagFiles
            | Tool::RestoreNamed => CHANGES,
            Tool::ZipFiles
            | Tool::AskForFiles
            | Tool::ShareForReview
            | Tool::MakeImage
            | Tool::RunTemplate => Hints {
                idempotent: Some(false),
                ..CHANGES
            },
        }
    }

    /// The JSON Schema of its arguments.
    pub fn input_schema(self) -> Map<String, Value> {
        match self {
            Tool::UploadLocalFile => input::<library::LocalUpload>(),
            Tool::UploadSentFile => input::<library::SentUpload>(),
            Tool::GetDownloadLink => input::<library::FileId>(),
            Tool::ListLibrary => input::<library::Page>(),
            Tool::RemoveFiles => input::<library::Removal>(),
            Tool::RestoreFiles => input::<library::Restoration>(),
            Tool::SetFileAccess => input::<library::Access>(),
            Tool::GetStorageUsage => input::<library::Nothing>(),
            Tool::FindFiles => input::<choosing::FindFiles>(),
            Tool::GetLink => input::<choosing::GetLink>(),
            Tool::ZipFiles => input::<choosing::ZipFiles>(),
            Tool::MoveFiles => input::<choosing::MoveFiles>(),
            Tool::TagFiles => input::<choosing::TagFiles>(),
            Tool::TrashFiles => input::<choosing::Selection>(),
            Tool::RestoreNamed => input::<choosing::RestoreNamed>(),
            Tool::AskForFiles => input::<making::AskForFiles>(),
            Tool::ShareForReview => input::<making::ShareForReview>(),
            Tool::MakeImage => input::<making::MakeImage>(),
            Tool::RunTemplate => input::<making::RunTemplate>(),
        }
    }

    /// The JSON Schema of its answer, for the tools whose answer is typed.
    pub fn output_schema(self) -> Option<Map<String, Value>> {
        Some(match self {
            Tool::UploadLocalFile | Tool::UploadSentFile => output::<library::UploadAnswer>(),
            Tool::GetDownloadLink | Tool::SetFileAccess => output::<library::File>(),
            Tool::ListLibrary => output::<library::Listing>(),
            Tool::RemoveFiles => output::<library::Removed>(),
            Tool::RestoreFiles => output::<library::Restored>(),
            Tool::GetStorageUsage => output::<library::Usage>(),
            Tool::RunTemplate => output::<making::TemplateRun>(),
            _ => return None,
        })
    }

    /// Runs the tool with `arguments` as the client's token; its answer, or why it failed
    /// (arguments that do not fit its schema, the drive's refusal, ...).
    pub async fn run<E: Effects>(self, client: &Client, effects: &mut E, arguments: Value) -> Result<Value> {
        match self {
            Tool::UploadLocalFile => answer(library::upload_local_file(client, parse(arguments)?).await),
            Tool::UploadSentFile => answer(library::upload_sent_file(client, parse(arguments)?).await),
            Tool::GetDownloadLink => answer(library::get_download_link(client, parse(arguments)?).await),
            Tool::ListLibrary => answer(library::list_library(client, parse(arguments)?).await),
            Tool::RemoveFiles => answer(library::remove_files(client, parse(arguments)?).await),
            Tool::RestoreFiles => answer(library::restore_files(client, parse(arguments)?).await),
            Tool::SetFileAccess => answer(library::set_file_access(client, parse(arguments)?).await),
            Tool::GetStorageUsage => answer(library::get_storage_usage(client, parse(arguments)?).await),
            Tool::FindFiles => choosing::find_files(client, parse(arguments)?).await,
            Tool::GetLink => choosing::get_link(client, effects, parse(arguments)?).await,
            Tool::ZipFiles => choosing::zip_files(client, effects, parse(arguments)?).await,
            Tool::MoveFiles => choosing::move_files(client, parse(arguments)?).await,
            Tool::TagFiles => choosing::tag_files(client, parse(arguments)?).await,
            Tool::TrashFiles => choosing::trash_files(client, effects, parse(arguments)?).await,
            Tool::RestoreNamed => choosing::restore_named(client, parse(arguments)?).await,
            Tool::AskForFiles => making::ask_for_files(client, effects, parse(arguments)?).await,
            Tool::ShareForReview => making::share_for_review(client, effects, parse(arguments)?).await,
            Tool::MakeImage => making::make_image(client, effects, parse(arguments)?).await,
            Tool::RunTemplate => making::run_template(client, effects, parse(arguments)?).await,
        }
    }
}

/// A tool as an OpenAI-style chat completion takes it: `{ type: function, function: { name,
/// description, parameters } }`, for a host's own tools (typed `T`) as for the catalogue's.
pub fn function<T: JsonSchema>(name: &str, description: &str) -> Value {
    function_of(name, description, input::<T>())
}

impl Tool {
    /// The tool as an OpenAI-style chat completion takes it ([`function`]).
    pub fn function(self) -> Value {
        function_of(self.name(), self.description(), self.input_schema())
    }
}

fn function_of(name: &str, description: &str, parameters: Map<String, Value>) -> Value {
    json!({ "type": "function", "function": {
        "name": name, "description": description, "parameters": parameters
    } })
}

/// The types a file may be of, as tools name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum FileType {
    Video,
    Audio,
    Image,
    Pdf,
    Text,
    Archive,
    Other,
}

impl FileType {
    pub fn as_str(self) -> &'static str {
        match self {
            FileType::Video => "Video",
            FileType::Audio => "Audio",
            FileType::Image => "Image",
            FileType::Pdf => "Pdf",
            FileType::Text => "Text",
            FileType::Archive => "Archive",
            FileType::Other => "Other",
        }
    }
}

/// What differs between the hosts that serve the tools.
pub trait Effects: Send {
    /// A link made for the user: a file's (`name`, its media type), or a page of the drive's.
    /// Answers what the tool's caller is told in its place. `url` is `None` for a file without
    /// one.
    fn link(&mut self, name: &str, url: Option<&str>, media_type: &str) -> Value;

    /// Files a tool chose for the trash (`ids`, and their `names` in the same order): answers
    /// what the caller is told.
    fn trash(
        &mut self,
        client: &Client,
        ids: Vec<Uuid>,
        names: Vec<String>,
    ) -> impl Future<Output = Result<Value>> + Send;

    /// The download link of `file`, as `/generate-download-url` answers it.
    fn file(&mut self, file: &FileRecord) -> Value {
        self.link(&file.file_name, file.download_url.as_deref(), &file.mime_type)
    }

    /// The link to a page of the drive's (a request's, a review's), named `name`.
    fn page(&mut self, url: &str, name: &str) -> Value {
        self.link(name, Some(url), "text/html")
    }
}

/// A host that answers directly: links given back in the answer, files trashed at once.
#[derive(Debug, Default)]
pub struct Direct;

impl Effects for Direct {
    fn link(&mut self, _: &str, url: Option<&str>, _: &str) -> Value {
        json!(url)
    }

    async fn trash(&mut self, client: &Client, ids: Vec<Uuid>, names: Vec<String>) -> Result<Value> {
        let outcome = client.batch(Batch::Trash, &ids).await?;
        let trashed: Vec<&String> = ids
            .iter()
            .zip(&names)
            .filter(|(id, _)| outcome.done.contains(id))
            .map(|(_, name)| name)
            .collect();
        Ok(json!({ "trashed": trashed }))
    }
}

/// `arguments` as the tool's typed input.
fn parse<T: DeserializeOwned>(arguments: Value) -> Result<T> {
    // A call without arguments is a call with none.
    let arguments = match arguments {
        Value::Null => Value::Object(Map::new()),
        arguments => arguments,
    };
    serde_json::from_value(arguments)
        .map_err(|e| Failure::new(format!("the arguments do not fit the tool: {e}")).into())
}

fn answer<T: serde::Serialize>(outcome: Result<T>) -> Result<Value> {
    Ok(serde_json::to_value(outcome?)?)
}

/// The schema of `T` as arguments: JSON Schema 2020-12, every subschema inlined.
fn input<T: JsonSchema>() -> Map<String, Value> {
    object(
        SchemaSettings::draft2020_12()
            .with(|s| s.inline_subschemas = true)
            .into_generator()
            .into_root_schema_for::<T>(),
    )
}

/// The schema of `T` as an answer: what its `Serialize` writes, without the type's own title
/// and description (the tool's are what a caller reads).
fn output<T: JsonSchema>() -> Map<String, Value> {
    let mut schema = object(
        SchemaSettings::draft2020_12()
            .for_serialize()
            .with(|s| s.inline_subschemas = true)
            .into_generator()
            .into_root_schema_for::<T>(),
    );
    schema.remove("title");
    schema.remove("description");
    schema
}

fn object(schema: Schema) -> Map<String, Value> {
    // A root schema for a struct is always an object.
    schema.as_object().cloned().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every tool a host offers: the two uploads, the library's and the choosing ones.
    fn every() -> impl Iterator<Item = Tool> {
        [Tool::UploadLocalFile, Tool::UploadSentFile]
            .into_iter()
            .chain(Tool::LIBRARY)
            .chain(Tool::MCP_EXTRA)
            .chain(Tool::CHOOSING)
    }

    #[test]
    fn every_schema_is_an_object_with_nothing_to_look_up_elsewhere() {
        for tool in every() {
            let input = Value::Object(tool.input_schema());
            assert_eq!(input["type"], "object", "{}: {input}", tool.name());
            let schemas = std::iter::once(input).chain(tool.output_schema().map(Value::Object));
            for schema in schemas {
                let text = schema.to_string();
                assert!(
                    !text.contains("$ref") && !text.contains("$defs"),
                    "{}: {text}",
                    tool.name()
                );
            }
        }
    }

    #[test]
    fn a_selection_offers_the_file_types_by_name() {
        let schema = Value::Object(Tool::TrashFiles.input_schema());
        let types = &schema["properties"]["types"];
        assert!(types.to_string().contains("\"Archive\""), "{schema}");
        let required = Value::Object(Tool::MoveFiles.input_schema())["required"].clone();
        assert_eq!(required, json!(["to"]));
    }

    #[test]
    fn each_host_names_each_of_its_tools_once() {
        let library = [Tool::UploadSentFile]
            .into_iter()
            .chain(Tool::LIBRARY)
            .chain(Tool::MCP_EXTRA);
        for host in [library.collect::<Vec<_>>(), Tool::CHOOSING.to_vec()] {
            let mut names: Vec<&str> = host.iter().map(|t| t.name()).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), host.len(), "{names:?}");
        }
    }
}
