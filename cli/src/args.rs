//! The command line itself: every command, its arguments and their help, as clap reads them.
//! `main.rs` dispatches each to the module that does it.

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use uuid::Uuid;

use crate::config;

mod edits;
mod jobs;
mod search;
pub use edits::{FolderCommand, ShareArgs, SignInsArgs};
pub use jobs::{JobsCommand, RulesCommand, TemplatesCommand};
pub use search::SearchArgs;

#[derive(Parser)]
#[command(
    name = "drive",
    version,
    about = "Command-line client of the Drive file service"
)]
pub struct Cli {
    /// Config file [default: $HOME/.config/drive/config.json]
    #[arg(long, global = true, env = "DRIVE_CONFIG", value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Print one JSON document on stdout instead of text, and no progress bars
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Sign in with an API token and save it, with the session it buys, in the config file
    Login {
        /// The API token
        #[arg(long, env = "DRIVE_API_TOKEN", hide_env_values = true)]
        token: String,
        /// The service's base URL
        #[arg(long, default_value = config::DEFAULT_URL)]
        url: String,
        /// The application id sent as X-Drive-App
        #[arg(long, default_value = config::DEFAULT_APP)]
        app: String,
    },
    /// Upload files and folders (recursively); files the drive already has are not sent again
    Upload {
        /// Files, and folders whose files (at any depth) go up
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
    /// List the library, newest first
    List,
    /// Print a fresh download link (permanent for a public file, 6 hours for a private one)
    Link {
        /// The file's id, as `drive list` shows it
        id: Uuid,
    },
    /// Move files to the trash
    Trash {
        /// File ids, as `drive list` shows them
        #[arg(required = true, value_name = "ID")]
        ids: Vec<Uuid>,
    },
    /// Bring files back from the trash
    Restore {
        /// File ids, as `drive list` shows them
        #[arg(required = true, value_name = "ID")]
        ids: Vec<Uuid>,
    },
    /// Delete files for good, with their stored bytes
    Delete {
        /// File ids, as `drive list` shows them
        #[arg(required = true, value_name = "ID")]
        ids: Vec<Uuid>,
    },
    /// Make a file public: anyone with its permanent link can fetch it
    Public {
        /// The file's id
        id: Uuid,
    },
    /// Make a file private: only 6-hour links reach it
    Private {
        /// The file's id
        id: Uuid,
    },
    /// Show storage used, the plan's limit and what is left
    Usage,
    /// Have files read for searching inside them (a readForSearch job)
    ReadForSearch {
        /// File ids, as `drive list` shows them
        #[arg(required = true, value_name = "ID")]
        ids: Vec<Uuid>,
    },
    /// Read a file: a picture as a JPEG (--out), a video's frame, a PDF's pages, a text file's
    /// piece, what is said in audio and videos you have had read
    Read {
        /// The file's id
        id: Uuid,
        /// Seconds into a video or audio
        #[arg(long)]
        at: Option<f64>,
        /// First and last PDF page (at most 20 at once)
        #[arg(long)]
        from_page: Option<u32>,
        #[arg(long)]
        to_page: Option<u32>,
        /// Byte offset into a text file (`next offset` of the previous read)
        #[arg(long)]
        offset: Option<u64>,
        /// Where to write the picture or frame (a JPEG)
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Make captions of videos or audio you have had read (a captions job)
    Captions {
        /// File ids, as `drive list` shows them
        #[arg(required = true, value_name = "ID")]
        ids: Vec<Uuid>,
        /// srt, vtt or txt
        #[arg(long, default_value = "srt")]
        format: String,
    },
    /// Put a picture on a track or a playlist as its cover (without --image: take it off)
    Cover {
        /// A track's file id
        #[arg(long, conflicts_with = "playlist", required_unless_present = "playlist")]
        track: Option<Uuid>,
        /// A playlist's id
        #[arg(long)]
        playlist: Option<Uuid>,
        /// One of your pictures
        #[arg(long)]
        image: Option<Uuid>,
    },
    /// Set a video's thumbnail: a picture, or the frame at a moment (neither: its own poster)
    Thumbnail {
        /// The video's file id
        video: Uuid,
        /// One of your pictures
        #[arg(long)]
        image: Option<Uuid>,
        /// A moment of the video, in seconds or like 1:05
        #[arg(long)]
        at: Option<String>,
    },
    /// Have the drive fetch a link into your drive (an import job)
    Import {
        /// An http or https link on the public internet
        url: String,
        /// The new file's name (default: the link's last part)
        #[arg(long)]
        name: Option<String>,
        /// Where it lands, like /Downloads (default: the top)
        #[arg(long)]
        folder: Option<String>,
    },
    /// Move files to a folder (made on the way; / is the top)
    Mv {
        #[arg(required = true, value_name = "ID")]
        ids: Vec<Uuid>,
        /// The folder, like /Clients/Acme
        #[arg(long)]
        to: String,
    },
    /// Put tags on files (or take them off with --remove)
    Tag {
        #[arg(required = true, value_name = "ID")]
        ids: Vec<Uuid>,
        /// Tags, comma-separated (1 to 20)
        #[arg(long, value_delimiter = ',', required = true)]
        tags: Vec<String>,
        #[arg(long)]
        remove: bool,
    },
    /// Set a file's description ("" clears it)
    Describe { id: Uuid, description: String },
    /// Rename a file (no other file in its folder may have the name)
    Rename { id: Uuid, name: String },
    /// Copy files into a folder (made on the way; / is the top): new private files, counted
    /// against your storage
    Cp {
        #[arg(required = true, value_name = "ID")]
        ids: Vec<Uuid>,
        /// The folder, like /Clients/Acme
        #[arg(long)]
        to: String,
    },
    /// Folders: move or rename one with all in it, or delete one (its files go to the trash)
    #[command(subcommand)]
    Folder(FolderCommand),
    /// Delete a tag: it comes off every file
    DeleteTag { tag: String },
    /// Share files, or a folder (what is in it and below it, now and later), with people by
    /// handle: they may see them, never change them
    Share(ShareArgs),
    /// Take back shares, from some people (--with) or from everyone
    Unshare(ShareArgs),
    /// What you share, and with whom
    Shares,
    /// The files others share with you, newest first
    Shared,
    /// Your display name, and whether owners see when you open their shared files
    Profile {
        #[arg(long)]
        display_name: Option<String>,
        /// true or false
        #[arg(long)]
        show_views: Option<bool>,
    },
    /// Where you are signed in to the app (browsers that signed in with your password)
    SignIns(SignInsArgs),
    /// Your folders, playlists, galleries and tags
    Collections,
    /// Playlists: audio and video in order
    #[command(subcommand)]
    Playlist(CollectionCommand),
    /// Galleries: pictures, featured ones first
    #[command(subcommand)]
    Gallery(CollectionCommand),
    /// A ZIP of files, a gallery or a playlist, built by a job beside the first file
    Archive {
        #[arg(value_name = "ID", required_unless_present_any = ["gallery", "playlist"])]
        ids: Vec<Uuid>,
        #[arg(long, conflicts_with_all = ["ids", "playlist"])]
        gallery: Option<Uuid>,
        #[arg(long, conflicts_with_all = ["ids", "gallery"])]
        playlist: Option<Uuid>,
        /// The archive's name (.zip is added) [default: Archive]
        #[arg(long)]
        title: Option<String>,
    },
    /// Who opened your files: the files opened most, or these files
    Views {
        #[arg(value_name = "ID")]
        ids: Vec<Uuid>,
        /// A date, like 2026-11-01 [default: 30 days ago]
        #[arg(long)]
        since: Option<String>,
        /// 1 to 100 [default: 25]
        #[arg(long)]
        limit: Option<u32>,
    },
    /// File jobs: create (with --wait to follow one to its end), list, cancel, retry
    #[command(subcommand)]
    Jobs(JobsCommand),
    /// Pipelines kept under a name, to run on files: drive jobs create --template ID FILE...
    #[command(subcommand)]
    Templates(TemplatesCommand),
    /// Jobs run on every file that lands in a folder: add, list, pause, resume, remove
    #[command(subcommand)]
    Rules(RulesCommand),
    /// Print a shell completion script: drive completions bash > /etc/bash_completion.d/drive
    Completions { shell: clap_complete::Shell },
    /// What happened in your drive, oldest first; --follow prints events as they happen
    Events {
        /// A cursor printed before (nextCursor) or an ISO 8601 time [default: 24 hours ago, or
        /// with --follow where the last follow stopped]
        #[arg(long)]
        since: Option<String>,
        /// Only these kinds: drop, note, view, file, generation, job (and a mirror's trashed, restored, deleted, moved, renamed, access)
        #[arg(long, value_delimiter = ',')]
        kinds: Vec<String>,
        /// Events a page, 1 to 100 [default: 50]
        #[arg(long)]
        limit: Option<u32>,
        /// Keep printing events as they happen (until interrupted), keeping the cursor in the
        /// config file; with --json, one event a line
        #[arg(long)]
        follow: bool,
    },
    /// Draw an image from a prompt; it is saved privately to your drive
    Generate {
        /// What to draw (1 to 4000 characters)
        #[arg(required_unless_present = "status")]
        prompt: Option<String>,
        /// gptImage2 (default), nanoBanana, imagen4Fast, seedream4, flux2Pro, fluxKreaDev or
        /// nanoBananaPro (Pro plan)
        #[arg(long)]
        model: Option<String>,
        /// 1:1 (default), 3:2, 2:3, 16:9, 9:16, 4:3 or 3:4
        #[arg(long)]
        aspect_ratio: Option<String>,
        /// low, medium or high (gptImage2 only; medium and high on the Pro plan)
        #[arg(long)]
        quality: Option<String>,
        /// Wait until the image is saved and print it (or why it failed)
        #[arg(long)]
        wait: bool,
        /// Show where an earlier generation stands instead of starting one
        #[arg(long, value_name = "GENERATION_ID", conflicts_with_all = ["prompt", "wait"])]
        status: Option<Uuid>,
    },
    /// File requests: links anyone can send you files through, without an account
    #[command(subcommand)]
    Request(RequestCommand),
    /// Reviews: links to watch a video or track and leave notes at its moments
    #[command(subcommand)]
    Review(ReviewCommand),
    /// Ask the drive's agent to do something (it works your drive as your API token) and print its reply
    Ask {
        /// What to do, in your words
        text: String,
        /// Go on with an earlier conversation (the id `drive ask` printed)
        #[arg(long)]
        context: Option<String>,
    },
    /// Your agent tasks (those this token started): the ones working or waiting for something, and
    /// how the others ended; stop one
    #[command(subcommand)]
    Agents(AgentCommand),
    /// Webhooks: every drive event of the kinds you choose POSTed to an https endpoint, signed
    #[command(subcommand)]
    Webhook(WebhookCommand),
    /// The apps you let in through the drive's OAuth sign-in, and what each may do
    #[command(subcommand)]
    Connections(ConnectionCommand),
    /// Search your library by what files are (every filter of /search-files) and, with
    /// --query, inside the files you have had read: what is written or said in them
    Search(Box<SearchArgs>),
}

#[derive(Subcommand)]
pub enum CollectionCommand {
    /// Make one with these files, in order
    Create {
        title: String,
        #[arg(value_name = "FILE_ID")]
        ids: Vec<Uuid>,
        /// Public: only your own files go in, and anyone with the link may see it
        #[arg(long)]
        public: bool,
        /// Galleries: which of the files go up front
        #[arg(long, value_delimiter = ',')]
        featured: Vec<Uuid>,
        /// Galleries: a description
        #[arg(long)]
        description: Option<String>,
    },
    /// Add files at the end
    Add {
        id: Uuid,
        #[arg(required = true, value_name = "FILE_ID")]
        ids: Vec<Uuid>,
        /// Galleries: which of the new files go up front
        #[arg(long, value_delimiter = ',')]
        featured: Vec<Uuid>,
    },
    /// Put these files first, in this order
    Reorder {
        id: Uuid,
        #[arg(required = true, value_name = "FILE_ID")]
        ids: Vec<Uuid>,
    },
    /// Give it another title (galleries: and description, "" clears it)
    Rename {
        id: Uuid,
        title: String,
        #[arg(long)]
        description: Option<String>,
    },
    /// Take files out of it; they stay in the drive
    Remove {
        id: Uuid,
        #[arg(required = true, value_name = "FILE_ID")]
        ids: Vec<Uuid>,
    },
    /// Delete it; its files stay in the drive
    Delete { id: Uuid },
}

#[derive(Subcommand)]
pub enum RequestCommand {
    /// Make a request; prints the link to share
    Create {
        /// What you ask for (1 to 200 characters)
        title: String,
        /// Shown to whoever opens the link (up to 2000 characters)
        #[arg(long)]
        message: Option<String>,
        /// Where arrivals land, like /Clients/Acme (default: a new folder named for the request)
        #[arg(long)]
        folder: Option<String>,
        /// When it stops taking files (ISO 8601, like 2026-12-31T23:59:00Z)
        #[arg(long)]
        expires: Option<chrono::DateTime<chrono::Utc>>,
        /// Most bytes it takes from everyone together
        #[arg(long)]
        max_bytes: Option<u64>,
        /// What it takes: extensions (.pdf) and kinds (Video, Audio, Image, Pdf, Text, Archive)
        #[arg(long, value_delimiter = ',')]
        accept: Option<Vec<String>>,
        /// Most files one sender may send
        #[arg(long)]
        max_files_per_sender: Option<u32>,
        /// A job type run on each file that arrives (like checksum or proxy)
        #[arg(long)]
        on_arrival: Option<String>,
        /// Its settings as JSON, like '{"height":720}'
        #[arg(long, requires = "on_arrival")]
        on_arrival_options: Option<String>,
    },
    /// List your requests with what arrived, newest first
    List {
        /// Only requests dropping into this folder or one inside it
        #[arg(long)]
        folder: Option<String>,
    },
    /// Take files again (a request past its expiry stays closed)
    Open { id: Uuid },
    /// Stop taking files
    Close { id: Uuid },
    /// Delete a request: its link stops working; what arrived stays
    Delete { id: Uuid },
}

#[derive(Subcommand)]
pub enum WebhookCommand {
    /// Send events to an https endpoint on the public internet; prints the signing secret
    Add {
        url: String,
        /// Only these kinds: drop, note, view, file, generation, job, and a mirror's trashed, restored, deleted, moved, renamed, access [default: the first six]
        #[arg(long, value_delimiter = ',')]
        kinds: Vec<String>,
    },
    /// List your webhooks and how their deliveries go
    List,
    /// Stop sending events to one
    Remove { id: Uuid },
}

#[derive(Subcommand)]
pub enum AgentCommand {
    /// The account's tasks, the latest change first, each with where it stands (what a waiting one waits for)
    List {
        /// Only the tasks standing so
        #[arg(long, value_parser = ["working", "waiting", "completed", "failed", "canceled"])]
        state: Option<String>,
    },
    /// Stop a working or waiting task (A2A CancelTask)
    Stop {
        /// The task's id, as `drive agents list` shows it
        id: Uuid,
    },
}

#[derive(Subcommand)]
pub enum ConnectionCommand {
    /// List the apps you let in, newest first
    List,
    /// End an app's access: its token stops at once
    Revoke {
        /// The connection's id, as `drive connections list` shows it
        id: Uuid,
    },
}

#[derive(Subcommand)]
pub enum ReviewCommand {
    /// Make a review of a video or track; prints the link to share
    Create {
        /// The file's id, as `drive list` shows it
        file_id: Uuid,
        /// Its title (default: the file's name)
        #[arg(long)]
        title: Option<String>,
    },
    /// Your reviews, each with its notes in the order of the timeline
    List {
        /// Only reviews of this file
        #[arg(long)]
        file: Option<Uuid>,
    },
    /// Answer a note
    Reply { note_id: Uuid, text: String },
    /// Mark a note dealt with (or, with --undo, not)
    Resolve {
        note_id: Uuid,
        #[arg(long)]
        undo: bool,
    },
    /// Close a review's link: it takes no more notes; you keep its notes
    Close { id: Uuid },
}
