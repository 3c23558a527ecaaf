//! `drive`: the command-line client of the Drive file service.
//!
//! `drive login --token API_TOKEN` keeps the token and a session in a config file; the other
//! commands use it. Text output is for people; `--json` prints one JSON document for scripts.

mod agent;
mod args;
mod artwork;
mod commands;
mod connections;
mod edits;
mod events;
mod generate;
mod imports;
mod jobs;
mod organize;
mod output;
mod progress;
mod reading;
mod requests;
mod reviews;
mod rules;
mod sharing;
mod sign_ins;
mod upload;
mod webhooks;

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::Parser;

use crate::args::{
    AgentCommand, Cli, CollectionCommand, Command, ConnectionCommand, FolderCommand, JobsCommand,
    RequestCommand, ReviewCommand, RulesCommand, TemplatesCommand, WebhookCommand,
};
use drive_client::files::Batch;
use drive_client::generations::NewImage;
use drive_client::organize::{ArchiveOf, CollectionKind, Covered, Import, ViewsQuery};
use drive_client::reading::ReadQuery;
use drive_client::requests::NewRequest;
use drive_client::version::{self, Program};
use drive_client::{Client, config};

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
            .and_then(|config| version::start(Program::Cli, Some(&config_path), &config.base_url)),
    };
    let done = command(cli.command, &config_path, json, signed_in).await;
    if let Some(check) = check {
        check.finish(Duration::from_millis(300)).await;
    }
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
            let query = ReadQuery {
                file_id: id,
                at,
                from_page,
                to_page,
                offset,
            };
            reading::read(&signed_in()?, &query, out.as_deref(), json).await
        }
        Command::Captions { ids, format } => reading::captions(&signed_in()?, &ids, &format, json).await,
        Command::Cover {
            track,
            playlist,
            image,
        } => {
            let on = match (track, playlist) {
                (Some(track), _) => Covered::Track(track),
                (None, Some(playlist)) => Covered::Playlist(playlist),
                (None, None) => anyhow::bail!("give --track or --playlist"),
            };
            artwork::cover(&signed_in()?, on, image, json).await
        }
        Command::Thumbnail { video, image, at } => {
            artwork::thumbnail(&signed_in()?, video, image, at.as_deref(), json).await
        }
        Command::Import { url, name, folder } => {
            let import = Import {
                url,
                file_name: name,
                folder,
            };
            imports::run(&signed_in()?, &import, json).await
        }
        Command::Mv { ids, to } => organize::move_files(&signed_in()?, &ids, &to, json).await,
        Command::Tag { ids, tags, remove } => organize::tag(&signed_in()?, &ids, &tags, remove, json).await,
        Command::Describe { id, description } => {
            organize::describe(&signed_in()?, id, &description, json).await
        }
        Command::Collections => organize::collections(&signed_in()?, json).await,
        Command::Rename { id, name } => edits::rename(&signed_in()?, id, &name, json).await,
        Command::Cp { ids, to } => edits::copy(&signed_in()?, &ids, &to, json).await,
        Command::Folder(command) => match command {
            FolderCommand::Mv { from, to } => edits::move_folder(&signed_in()?, &from, &to, json).await,
            FolderCommand::Rm { path } => edits::delete_folder(&signed_in()?, &path, json).await,
        },
        Command::DeleteTag { tag } => edits::delete_tag(&signed_in()?, &tag, json).await,
        Command::Share(args) => sharing::share(&signed_in()?, &args, json).await,
        Command::Unshare(args) => sharing::unshare(&signed_in()?, &args, json).await,
        Command::Shares => sharing::shares(&signed_in()?, json).await,
        Command::Shared => sharing::shared(&signed_in()?, json).await,
        Command::Profile {
            display_name,
            show_views,
        } => sharing::profile(&signed_in()?, display_name.as_deref(), show_views, json).await,
        Command::SignIns(args) => sign_ins::sign_ins(&signed_in()?, args.end, args.end_all, json).await,
        Command::Playlist(command) => {
            collection(&signed_in()?, CollectionKind::Playlist, command, json).await
        }
        Command::Gallery(command) => collection(&signed_in()?, CollectionKind::Gallery, command, json).await,
        Command::Archive {
            ids,
            gallery,
            playlist,
            title,
        } => {
            let of = match (gallery, playlist) {
                (Some(gallery), _) => ArchiveOf::Gallery(gallery),
                (None, Some(playlist)) => ArchiveOf::Playlist(playlist),
                (None, None) => ArchiveOf::Files(ids),
            };
            organize::archive(&signed_in()?, &of, title.as_deref(), json).await
        }
        Command::Views { ids, since, limit } => {
            let query = ViewsQuery {
                file_ids: (!ids.is_empty()).then_some(ids),
                since,
                limit,
            };
            organize::views(&signed_in()?, &query, json).await
        }
        Command::Jobs(command) => {
            let client = signed_in()?;
            match command {
                JobsCommand::Create {
                    job_type,
                    file_ids,
                    steps,
                    template,
                    idempotency_key,
                    notify_url,
                    client_metadata,
                    settings,
                    options,
                    folder,
                    dry_run,
                    wait,
                } => {
                    let asked = jobs::Asked {
                        job_type: &job_type,
                        files: &file_ids,
                        steps: steps.as_deref(),
                        template,
                        idempotency_key: idempotency_key.as_deref(),
                        notify_url: notify_url.as_deref(),
                        client_metadata: client_metadata.as_deref(),
                        options: options.as_deref(),
                        settings: &settings,
                        folder: folder.as_deref(),
                        dry_run,
                    };
                    jobs::create(&client, &asked, wait, json).await
                }
                JobsCommand::List { limit } => jobs::list(&client, limit, json).await,
                JobsCommand::Cancel { id } => jobs::cancel(&client, id, json).await,
                JobsCommand::Retry { id, wait } => jobs::retry(&client, id, wait, json).await,
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
                (Some(id), _) => generate::status(&client, id, json).await,
                (None, Some(prompt)) => {
                    let image = NewImage {
                        prompt,
                        model,
                        aspect_ratio,
                        quality,
                    };
                    generate::run(&client, &image, wait, json).await
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
                    let request = NewRequest {
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
                RequestCommand::Delete { id } => edits::delete_request(&client, id, json).await,
            }
        }
        Command::Ask { text, context } => agent::ask(&signed_in()?, &text, context.as_deref(), json).await,
        Command::Agents(command) => {
            let client = signed_in()?;
            match command {
                AgentCommand::List { state } => agent::list(&client, state.as_deref(), json).await,
                AgentCommand::Stop { id } => agent::stop(&client, id, json).await,
            }
        }
        Command::Templates(command) => {
            let client = signed_in()?;
            match command {
                TemplatesCommand::Create { name, steps } => {
                    jobs::create_template(&client, &name, &steps, json).await
                }
                TemplatesCommand::List => jobs::templates(&client, json).await,
                TemplatesCommand::Remove { id } => jobs::remove_template(&client, id, json).await,
            }
        }
        Command::Rules(command) => {
            let client = signed_in()?;
            match command {
                RulesCommand::Add {
                    folder,
                    job_type,
                    settings,
                    options,
                    steps,
                    template,
                    results_folder,
                    backfill,
                    dry_run,
                } => {
                    let asked = rules::Asked {
                        folder: &folder,
                        job_type: job_type.as_deref(),
                        settings: &settings,
                        options: options.as_deref(),
                        steps: steps.as_deref(),
                        template,
                        results_folder,
                        backfill,
                        dry_run,
                    };
                    rules::add(&client, asked, json).await
                }
                RulesCommand::List => rules::list(&client, json).await,
                RulesCommand::Pause { id } => rules::pause(&client, id, true, json).await,
                RulesCommand::Resume { id } => rules::pause(&client, id, false, json).await,
                RulesCommand::Remove { id } => rules::remove(&client, id, json).await,
            }
        }
        Command::Webhook(command) => {
            let client = signed_in()?;
            match command {
                WebhookCommand::Add { url, kinds } => webhooks::add(&client, &url, &kinds, json).await,
                WebhookCommand::List => webhooks::list(&client, json).await,
                WebhookCommand::Remove { id } => webhooks::remove(&client, id, json).await,
            }
        }
        Command::Connections(command) => {
            let client = signed_in()?;
            match command {
                ConnectionCommand::List => connections::list(&client, json).await,
                ConnectionCommand::Revoke { id } => connections::revoke(&client, id, json).await,
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
                ReviewCommand::Close { id } => edits::close_review(&client, id, json).await,
            }
        }
        Command::Search(search) => reading::search(&signed_in()?, &search.query(), json).await,
    }
}

async fn collection(
    client: &Client,
    kind: CollectionKind,
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
                ids: &ids,
                featured: &featured,
                description: description.as_deref(),
                public,
            };
            organize::create(client, kind, &made, json).await
        }
        CollectionCommand::Add { id, ids, featured } => {
            organize::add(client, kind, id, &ids, &featured, json).await
        }
        CollectionCommand::Reorder { id, ids } => organize::reorder(client, kind, id, &ids, json).await,
        CollectionCommand::Rename {
            id,
            title,
            description,
        } => edits::rename_collection(client, kind, id, &title, description.as_deref(), json).await,
        CollectionCommand::Remove { id, ids } => edits::remove(client, kind, id, &ids, json).await,
        CollectionCommand::Delete { id } => edits::delete_collection(client, kind, id, json).await,
    }
}
