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
mod output;
mod progress;
mod reading;
mod records;
mod requests;
mod reviews;
mod transfer;
mod upload;

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
    /// Search inside the files you have had read: what is written or said in them
    Search {
        /// What to look for, by words and by meaning (at most 500 characters)
        #[arg(long)]
        query: String,
        /// Moments to show at most (up to 50)
        #[arg(long)]
        limit: Option<u32>,
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
    match cli.command {
        Command::Login { token, url, app } => commands::login(&config_path, token, &url, app, json).await,
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
        Command::Search { query, limit } => reading::search(&signed_in()?, &query, limit, json).await,
    }
}
