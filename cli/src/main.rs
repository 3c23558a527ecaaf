//! `drive`: the command-line client of the Drive file service.
//!
//! `drive login --token API_TOKEN` keeps the token and a session in a config file; the other
//! commands use it. Text output is for people; `--json` prints one JSON document for scripts.

mod artwork;
mod client;
mod commands;
mod config;
mod events;
mod generate;
mod imports;
mod jobs;
mod local;
mod organize;
mod output;
mod progress;
mod reading;
mod records;
mod requests;
mod reviews;
mod transfer;
mod upload;
mod version;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};
use uuid::Uuid;

use crate::client::Client;
use crate::commands::Batch;

#[derive(Parser)]
#[command(
    name = "drive",
    version,
    about = "Command-line client of the Drive file service"
)]
struct Cli {
    /// Config file [default: $HOME/.config/drive/config.json]
    #[arg(long, global = true, env = "DRIVE_CONFIG", value_name = "PATH")]
    config: Option<PathBuf>,
    /// Print one JSON document on stdout instead of text, and no progress bars
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
    /// File jobs: create (with --wait to follow one to its end), list, cancel
    #[command(subcommand)]
    Jobs(JobsCommand),
    /// Print a shell completion script: drive completions bash > /etc/bash_completion.d/drive
    Completions { shell: clap_complete::Shell },
    /// What happened in your drive, oldest first; --follow prints events as they happen
    Events {
        /// A cursor printed before (nextCursor) or an ISO 8601 time [default: 24 hours ago, or
        /// with --follow where the last follow stopped]
        #[arg(long)]
        since: Option<String>,
        /// Only these kinds: drop, note, view, file, generation, job
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
    /// Search your library by what files are (every filter of /search-files) and, with
    /// --query, inside the files you have had read: what is written or said in them
    Search(Box<SearchArgs>),
}

#[derive(clap::Args)]
struct SearchArgs {
    /// What is said, seen or written inside files (at most 500 characters)
    #[arg(long)]
    query: Option<String>,
    /// Words in names, descriptions, tags, titles, artists, albums, genres (also finds folders)
    #[arg(long)]
    text: Option<String>,
    /// Kinds, comma-separated: Video, Audio, Image, Pdf, Text, Archive, Other
    #[arg(long, value_delimiter = ',')]
    types: Vec<String>,
    /// Tags every file must carry, comma-separated
    #[arg(long, value_delimiter = ',')]
    tags: Vec<String>,
    /// A folder (and the folders inside it), like /Photos
    #[arg(long)]
    folder: Option<String>,
    /// Only public files
    #[arg(long, conflicts_with = "private")]
    public: bool,
    /// Only private files
    #[arg(long)]
    private: bool,
    #[arg(long, value_name = "TIME")]
    uploaded_after: Option<String>,
    #[arg(long, value_name = "TIME")]
    uploaded_before: Option<String>,
    /// When a photo was taken
    #[arg(long, value_name = "TIME")]
    taken_after: Option<String>,
    #[arg(long, value_name = "TIME")]
    taken_before: Option<String>,
    /// Seconds
    #[arg(long)]
    min_duration: Option<f64>,
    #[arg(long)]
    max_duration: Option<f64>,
    /// Bytes
    #[arg(long)]
    min_size: Option<i64>,
    #[arg(long)]
    max_size: Option<i64>,
    /// Beats a minute
    #[arg(long)]
    min_tempo: Option<f64>,
    #[arg(long)]
    max_tempo: Option<f64>,
    /// A musical key, like "F# minor"
    #[arg(long)]
    key: Option<String>,
    /// Where a photo was taken: south,west,north,east in degrees
    #[arg(long, value_delimiter = ',', num_args = 4, value_names = ["SOUTH", "WEST", "NORTH", "EAST"])]
    within: Vec<f64>,
    /// newest, oldest, largest, smallest or name [default: newest]
    #[arg(long)]
    sort: Option<String>,
    /// Files (1 to 200; moments up to 50 with --query)
    #[arg(long)]
    limit: Option<u32>,
    #[arg(long)]
    offset: Option<u32>,
}

impl SearchArgs {
    /// The `/search-files` body: only the filters given.
    fn body(&self) -> serde_json::Value {
        let mut body = serde_json::Map::new();
        let mut put = |name: &str, value: serde_json::Value| {
            if !value.is_null() {
                body.insert(name.to_string(), value);
            }
        };
        use serde_json::json;
        put("query", json!(self.query));
        put("text", json!(self.text));
        put(
            "types",
            if self.types.is_empty() {
                json!(null)
            } else {
                json!(self.types)
            },
        );
        put(
            "tags",
            if self.tags.is_empty() {
                json!(null)
            } else {
                json!(self.tags)
            },
        );
        put("folder", json!(self.folder));
        put(
            "isPublic",
            if self.public {
                json!(true)
            } else if self.private {
                json!(false)
            } else {
                json!(null)
            },
        );
        put("uploadedAfter", json!(self.uploaded_after));
        put("uploadedBefore", json!(self.uploaded_before));
        put("takenAfter", json!(self.taken_after));
        put("takenBefore", json!(self.taken_before));
        put("minDuration", json!(self.min_duration));
        put("maxDuration", json!(self.max_duration));
        put("minSize", json!(self.min_size));
        put("maxSize", json!(self.max_size));
        put("minTempo", json!(self.min_tempo));
        put("maxTempo", json!(self.max_tempo));
        put("key", json!(self.key));
        if let [south, west, north, east] = self.within[..] {
            put(
                "within",
                json!({ "south": south, "west": west, "north": north, "east": east }),
            );
        }
        put("sort", json!(self.sort));
        put("limit", json!(self.limit));
        put("offset", json!(self.offset));
        serde_json::Value::Object(body)
    }
}

#[derive(Subcommand)]
enum CollectionCommand {
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
}

#[derive(Subcommand)]
enum JobsCommand {
    /// Start a job on files (in order); prints it, or with --wait follows it to its end
    Create {
        /// The job type, like proxy, convert, zip, checksum (see the README's table)
        job_type: String,
        /// The files it works on, in order
        file_ids: Vec<String>,
        /// A setting, name=value (repeatable): --set height=720 --set format=webm
        #[arg(long = "set", value_name = "NAME=VALUE")]
        settings: Vec<String>,
        /// All the settings as one JSON object (--set values go over it)
        #[arg(long)]
        options: Option<String>,
        /// Where results land, like /Exports (default: beside the first file)
        #[arg(long)]
        folder: Option<String>,
        /// Check the settings and print the estimate without starting anything
        #[arg(long, conflicts_with = "wait")]
        dry_run: bool,
        /// Follow the job to its end with a progress bar, then list what it made
        #[arg(long)]
        wait: bool,
    },
    /// Your jobs, newest first, and this month's job minutes
    List {
        /// Jobs to show, 1 to 100 [default: 25]
        #[arg(long)]
        limit: Option<u32>,
    },
    /// Stop a job (a queued one at once, a running one within a heartbeat)
    Cancel { id: Uuid },
}

#[derive(Subcommand)]
enum RequestCommand {
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
}

#[derive(Subcommand)]
enum ReviewCommand {
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
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> Result<()> {
    let config_path = match cli.config {
        Some(path) => path,
        None => config::default_path()?,
    };
    let json = cli.json;
    let signed_in = || Client::new(config_path.clone(), config::load(&config_path)?);
    // Once a day, beside any command of someone signed in.
    let check = match cli.command {
        Command::Login { .. } | Command::Completions { .. } => None,
        _ => config::load(&config_path)
            .ok()
            .and_then(|config| version::start(&config_path, &config)),
    };
    let done = command(cli.command, &config_path, json, signed_in).await;
    version::finish(check).await;
    done
}

async fn command(
    command: Command,
    config_path: &std::path::Path,
    json: bool,
    signed_in: impl Fn() -> Result<Client>,
) -> Result<()> {
    match command {
        Command::Login { token, url, app } => commands::login(config_path, token, &url, app, json).await,
        Command::Upload { paths } => upload::run(&signed_in()?, &paths, json).await,
        Command::List => commands::list(&signed_in()?, json).await,
        Command::Link { id } => commands::link(&signed_in()?, id, json).await,
        Command::Trash { ids } => commands::batch(&signed_in()?, Batch::Trash, &ids, json).await,
        Command::Restore { ids } => commands::batch(&signed_in()?, Batch::Restore, &ids, json).await,
        Command::Delete { ids } => commands::batch(&signed_in()?, Batch::Delete, &ids, json).await,
        Command::Public { id } => commands::set_access(&signed_in()?, id, true, json).await,
        Command::Private { id } => commands::set_access(&signed_in()?, id, false, json).await,
        Command::Usage => commands::usage(&signed_in()?, json).await,
        Command::ReadForSearch { ids } => reading::read_for_search(&signed_in()?, &ids, json).await,
        Command::Read {
            id,
            at,
            from_page,
            to_page,
            offset,
            out,
        } => {
            let body = reading::ReadBody {
                file_id: id,
                at,
                from_page,
                to_page,
                offset,
            };
            reading::read(&signed_in()?, &body, out.as_deref(), json).await
        }
        Command::Captions { ids, format } => reading::captions(&signed_in()?, &ids, &format, json).await,
        Command::Cover {
            track,
            playlist,
            image,
        } => {
            let on = match (track, playlist) {
                (Some(track), _) => artwork::Covered::Track(track),
                (None, Some(playlist)) => artwork::Covered::Playlist(playlist),
                (None, None) => anyhow::bail!("give --track or --playlist"),
            };
            artwork::cover(&signed_in()?, on, image, json).await
        }
        Command::Thumbnail { video, image, at } => {
            artwork::thumbnail(&signed_in()?, video, image, at.as_deref(), json).await
        }
        Command::Import { url, name, folder } => {
            imports::run(&signed_in()?, &url, name.as_deref(), folder.as_deref(), json).await
        }
        Command::Mv { ids, to } => organize::move_files(&signed_in()?, &strings(&ids), &to, json).await,
        Command::Tag { ids, tags, remove } => {
            organize::tag(&signed_in()?, &strings(&ids), &tags, remove, json).await
        }
        Command::Describe { id, description } => {
            organize::describe(&signed_in()?, &id.to_string(), &description, json).await
        }
        Command::Collections => organize::collections(&signed_in()?, json).await,
        Command::Playlist(command) => {
            collection(&signed_in()?, organize::Kind::Playlist, command, json).await
        }
        Command::Gallery(command) => collection(&signed_in()?, organize::Kind::Gallery, command, json).await,
        Command::Archive {
            ids,
            gallery,
            playlist,
            title,
        } => {
            let source = match (gallery, playlist) {
                (Some(gallery), _) => serde_json::json!({ "galleryId": gallery }),
                (None, Some(playlist)) => serde_json::json!({ "playlistId": playlist }),
                (None, None) => serde_json::json!({ "fileIds": strings(&ids) }),
            };
            organize::archive(&signed_in()?, source, title.as_deref(), json).await
        }
        Command::Views { ids, since, limit } => {
            organize::views(&signed_in()?, &strings(&ids), since.as_deref(), limit, json).await
        }
        Command::Jobs(command) => {
            let client = signed_in()?;
            match command {
                JobsCommand::Create {
                    job_type,
                    file_ids,
                    settings,
                    options,
                    folder,
                    dry_run,
                    wait,
                } => {
                    let new = jobs::NewJob {
                        job_type: &job_type,
                        files: &file_ids,
                        options: options.as_deref(),
                        settings: &settings,
                        folder: folder.as_deref(),
                        dry_run,
                    };
                    jobs::create(&client, &new, wait, json).await
                }
                JobsCommand::List { limit } => jobs::list(&client, limit, json).await,
                JobsCommand::Cancel { id } => jobs::cancel(&client, &id.to_string(), json).await,
            }
        }
        Command::Completions { shell } => {
            clap_complete::generate(
                shell,
                &mut <Cli as clap::CommandFactory>::command(),
                "drive",
                &mut std::io::stdout(),
            );
            Ok(())
        }
        Command::Events {
            since,
            kinds,
            limit,
            follow,
        } => {
            let query = events::Query {
                since: since.as_deref(),
                kinds: &kinds,
                limit,
            };
            events::run(&signed_in()?, &query, follow, json).await
        }
        Command::Generate {
            prompt,
            model,
            aspect_ratio,
            quality,
            wait,
            status,
        } => {
            let client = signed_in()?;
            match (status, prompt) {
                (Some(id), _) => generate::status(&client, &id.to_string(), json).await,
                (None, Some(prompt)) => {
                    let ask = generate::Ask {
                        prompt: &prompt,
                        model: model.as_deref(),
                        aspect_ratio: aspect_ratio.as_deref(),
                        quality: quality.as_deref(),
                    };
                    generate::run(&client, &ask, wait, json).await
                }
                (None, None) => anyhow::bail!("give a prompt, or --status GENERATION_ID"),
            }
        }
        Command::Request(command) => {
            let client = signed_in()?;
            match command {
                RequestCommand::Create {
                    title,
                    message,
                    folder,
                    expires,
                    max_bytes,
                    accept,
                    max_files_per_sender,
                    on_arrival,
                    on_arrival_options,
                } => {
                    let on_arrival = requests::on_arrival(on_arrival, on_arrival_options.as_deref())?;
                    let request = requests::NewRequest {
                        title,
                        message,
                        folder,
                        expire_time: expires,
                        max_bytes,
                        accept_types: accept,
                        max_files_per_sender,
                        on_arrival,
                    };
                    requests::create(&client, &request, json).await
                }
                RequestCommand::List { folder } => requests::list(&client, folder.as_deref(), json).await,
                RequestCommand::Open { id } => requests::set_open(&client, id, true, json).await,
                RequestCommand::Close { id } => requests::set_open(&client, id, false, json).await,
            }
        }
        Command::Review(command) => {
            let client = signed_in()?;
            match command {
                ReviewCommand::Create { file_id, title } => {
                    reviews::create(&client, file_id, title.as_deref(), json).await
                }
                ReviewCommand::List { file } => reviews::list(&client, file, json).await,
                ReviewCommand::Reply { note_id, text } => reviews::reply(&client, note_id, &text, json).await,
                ReviewCommand::Resolve { note_id, undo } => {
                    reviews::resolve(&client, note_id, !undo, json).await
                }
            }
        }
        Command::Search(search) => reading::search(&signed_in()?, search.body(), json).await,
    }
}

fn strings(ids: &[Uuid]) -> Vec<String> {
    ids.iter().map(Uuid::to_string).collect()
}

async fn collection(
    client: &Client,
    kind: organize::Kind,
    command: CollectionCommand,
    json: bool,
) -> Result<()> {
    match command {
        CollectionCommand::Create {
            title,
            ids,
            public,
            featured,
            description,
        } => {
            let made = organize::Made {
                title: &title,
                ids: &strings(&ids),
                featured: &strings(&featured),
                description: description.as_deref(),
                public,
            };
            organize::create(client, kind, &made, json).await
        }
        CollectionCommand::Add { id, ids, featured } => {
            organize::add(
                client,
                kind,
                &id.to_string(),
                &strings(&ids),
                &strings(&featured),
                json,
            )
            .await
        }
        CollectionCommand::Reorder { id, ids } => {
            organize::reorder(client, kind, &id.to_string(), &strings(&ids), json).await
        }
    }
}
