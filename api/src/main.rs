//! `drive-api`: the API server and its operator commands.
//!
//! - `drive-api serve` applies pending migrations, makes the buckets if missing, and serves.
//! - `drive-api migrate` only applies migrations.
//! - `drive-api admin create-user --handle NAME --plan Pro` makes an account and prints its
//!   first API token; `admin create-token` and `admin revoke-token` manage tokens.

use std::future::IntoFuture;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, Result};
use chrono::{TimeDelta, Utc};
use clap::{Parser, Subcommand};
use drive_api::follow::Follow;
use drive_api::limits::RateLimits;
use drive_api::moment_index::MomentIndex;
use drive_api::reader::Reader;
use drive_api::state::{AppState, Settings};
use drive_core::db::{self, sign_ins, users};
use drive_core::id::{TokenId, UserId};
use drive_core::plan::Plan;
use drive_core::queue::{Doorbell, QueueConfig};
use drive_core::scope::Scope;
use drive_core::storage::{DEFAULT_SITE_URL, Storage, StorageConfig};
use drive_core::{config, maintenance, multipart};
use tokio::signal::unix::{SignalKind, signal};

#[derive(Parser)]
#[command(
    name = "drive-api",
    version,
    about = "Drive's API server and operator commands"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Migrate, then serve the API on DRIVE_LISTEN.
    Serve,
    /// Apply pending database migrations.
    Migrate,
    /// Accounts and tokens.
    #[command(subcommand)]
    Admin(Admin),
}

#[derive(Subcommand)]
enum Admin {
    /// Make an account and print its first API token (shown once).
    CreateUser {
        #[arg(long)]
        handle: String,
        /// Intro, Basic or Pro; leave out for an account with no plan.
        #[arg(long, value_parser = parse_plan)]
        plan: Option<Plan>,
        /// Print JSON: { userId, tokenId, apiToken }.
        #[arg(long)]
        json: bool,
    },
    /// Print a new API token for an existing account.
    CreateToken {
        #[arg(long)]
        handle: String,
        #[arg(long, default_value = "admin")]
        label: String,
        /// Limit the token to a scope (read, write, delete); repeat for more. Leave out for a
        /// token with every scope.
        #[arg(long = "scope", value_parser = parse_scope)]
        scopes: Vec<Scope>,
        #[arg(long)]
        json: bool,
    },
    /// Print a link that lets its holder set the account's password (once, within `--days`)
    /// and sign in to the app.
    Invite {
        #[arg(long)]
        handle: String,
        #[arg(long, default_value_t = 7)]
        days: u16,
        /// Print JSON: { userId, invitation, link }.
        #[arg(long)]
        json: bool,
    },
    /// Revoke an API token by id; its sessions end at once.
    RevokeToken { token_id: TokenId },
    /// Abort multipart uploads idle for 7 days, remove objects whose deletion is queued, and
    /// forget sessions that expired over a day ago.
    Sweep {
        /// Abort uploads idle for this many seconds instead of 7 days.
        #[arg(long)]
        idle_seconds: Option<i64>,
    },
}

fn parse_scope(s: &str) -> Result<Scope, String> {
    Scope::parse(s).ok_or_else(|| format!("{s:?} is not a scope: use read, write or delete"))
}

fn parse_plan(s: &str) -> Result<Plan, String> {
    Plan::parse(s).ok_or_else(|| format!("{s:?} is not a plan: use Intro, Basic or Pro"))
}

#[tokio::main]
async fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("DRIVE_LOG").unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let pool = db::connect(&config::database_url()?)
        .await
        .context("connecting to PostgreSQL (DRIVE_DATABASE_URL)")?;
    match cli.command {
        Command::Migrate => migrate(&pool).await,
        Command::Serve => {
            migrate(&pool).await?;
            serve(pool).await
        }
        Command::Admin(admin) => run_admin(&pool, admin).await,
    }
}

async fn migrate(pool: &db::PgPool) -> Result<()> {
    db::MIGRATOR.run(pool).await.context("applying migrations")
}

/// Reads `DRIVE_LISTEN` (default `127.0.0.1:8080`), `DRIVE_METRICS_LISTEN` (where `/metrics`
/// is served; unset: nowhere) and the queue's settings (Redis is connected at start, so a
/// wrong address is found before a doorbell is rung).
async fn serve(pool: db::PgPool) -> Result<()> {
    let listen: SocketAddr = config::parsed_or("DRIVE_LISTEN", SocketAddr::from(([127, 0, 0, 1], 8080)))?;
    let metrics_listen: Option<SocketAddr> = config::parsed_optional("DRIVE_METRICS_LISTEN")?;
    // Loaded while the rest starts: reading the model takes a moment.
    let models = config::models();
    let cache_bytes = config::parsed_or("DRIVE_SEARCH_CACHE_BYTES", 1usize << 30)?;
    let moments = tokio::task::spawn_blocking(move || MomentIndex::load(&models, cache_bytes));
    let queue_config = QueueConfig::from_environment()?;
    // The cap on an account's waiting metadata readings: a bad value refuses the start.
    drive_core::db::jobs::reading_cap()?;
    let doorbell = Doorbell::connect(&queue_config).await?;
    let redis = redis::Client::open(queue_config.redis_url.as_str())?
        .get_connection_manager()
        .await
        .context("connecting to Redis")?;
    let limits = RateLimits::new(redis, &queue_config.name)?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("binding {listen}"))?;
    let address = listener.local_addr()?;
    let metrics_listener = match metrics_listen {
        Some(listen) => Some(
            tokio::net::TcpListener::bind(listen)
                .await
                .with_context(|| format!("binding the metrics address {listen} (DRIVE_METRICS_LISTEN)"))?,
        ),
        None => None,
    };

    // Readers run as this process's user: not dumpable, it keeps its environment (the store's
    // keys, the database's URL) and memory from them (`/proc/PID/environ`, ptrace).
    // SAFETY: prctl on this process.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0) } != 0 {
        anyhow::bail!(
            "could not make the API non-dumpable: {}",
            std::io::Error::last_os_error()
        );
    }
    let storage = Storage::new(StorageConfig::from_environment(&format!("http://{address}"))?);
    storage.ensure_buckets().await.context("preparing the buckets")?;
    let moments = moments.await?.with_context(|| {
        format!(
            "loading the embedding model from {} (DRIVE_MODELS; scripts/lib.sh's ensure_models installs it)",
            config::models().display()
        )
    })?;
    let state = AppState {
        db: pool,
        storage,
        doorbell,
        limits,
        reader: Arc::new(Reader::from_environment()?),
        settings: Arc::new(Settings::from_environment()?),
        moments: Arc::new(moments),
        follow: Arc::new(
            Follow::start(&config::database_url()?)
                .await
                .context("listening for drive events (PostgreSQL LISTEN)")?,
        ),
        metrics: Arc::default(),
    };
    // Scripts and tests read the addresses from stdout: the metrics' first when served, then
    // always, last, the API's.
    if let Some(metrics) = &metrics_listener {
        println!("metrics on http://{}", metrics.local_addr()?);
    }
    println!("listening on http://{address}");
    tracing::info!(%address, version = drive_api::API_VERSION, "serving");
    // On Ctrl-C or SIGTERM (what container runtimes send): both listeners stop taking requests
    // and finish the ones in flight.
    let mut terminate = signal(SignalKind::terminate()).context("installing a SIGTERM handler")?;
    let (stop, stopping) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
        }
        let _ = stop.send(true);
    });
    let stopped = |mut stopping: tokio::sync::watch::Receiver<bool>| async move {
        let _ = stopping.wait_for(|stop| *stop).await;
    };
    let metrics = metrics_listener.map(|listener| {
        axum::serve(listener, drive_api::metrics_app(state.clone()))
            .with_graceful_shutdown(stopped(stopping.clone()))
            .into_future()
    });
    // Peer addresses for the per-address rate limits.
    let app = drive_api::app(state).into_make_service_with_connect_info::<SocketAddr>();
    let public = axum::serve(listener, app)
        .with_graceful_shutdown(stopped(stopping))
        .into_future();
    match metrics {
        Some(metrics) => {
            tokio::try_join!(public, metrics)?;
        }
        None => public.await?,
    }
    Ok(())
}

async fn run_admin(pool: &db::PgPool, admin: Admin) -> Result<()> {
    migrate(pool).await?;
    match admin {
        Admin::CreateUser { handle, plan, json } => {
            let user_id = users::create_user(pool, &handle, plan)
                .await
                .with_context(|| format!("creating user {handle:?} (is the handle taken?)"))?;
            let token = users::create_api_token(pool, user_id, "first", &Scope::ALL, None).await?;
            print_token(json, user_id, token);
        }
        Admin::CreateToken {
            handle,
            label,
            scopes,
            json,
        } => {
            let user_id = users::user_id_by_handle(pool, &handle)
                .await?
                .with_context(|| format!("no user has the handle {handle:?}"))?;
            let scopes = if scopes.is_empty() {
                Scope::ALL.to_vec()
            } else {
                Scope::ALL.into_iter().filter(|s| scopes.contains(s)).collect()
            };
            let token = users::create_api_token(pool, user_id, &label, &scopes, None).await?;
            print_token(json, user_id, token);
        }
        Admin::Invite { handle, days, json } => {
            let user_id = users::user_id_by_handle(pool, &handle)
                .await?
                .with_context(|| format!("no user has the handle {handle:?}"))?;
            let invitation = sign_ins::create_invitation(pool, user_id, TimeDelta::days(days.into())).await?;
            let site = config::or("DRIVE_SITE_URL", DEFAULT_SITE_URL);
            // In the fragment: a browser sends no fragment to the drive or in a Referer.
            let link = format!("{}/app/#invite={invitation}", site.trim_end_matches('/'));
            if json {
                println!(
                    "{}",
                    serde_json::json!({ "userId": user_id, "invitation": invitation, "link": link })
                );
            } else {
                println!(
                    "{link}\n(good once, for {days} days: the person sets a password there and signs in)"
                );
            }
        }
        Admin::RevokeToken { token_id } => {
            if !users::revoke_api_token(pool, token_id).await? {
                anyhow::bail!("no live API token has the id {token_id}");
            }
            println!("revoked {token_id}");
        }
        Admin::Sweep { idle_seconds } => {
            let storage = Storage::new(StorageConfig::from_environment(DEFAULT_SITE_URL)?);
            let idle_for = idle_seconds.map_or(multipart::UPLOAD_LIFETIME, TimeDelta::seconds);
            let image_grace = TimeDelta::from_std(drive_core::generation::image_grace()?)?;
            let swept = maintenance::sweep(pool, &storage, idle_for, image_grace, Utc::now()).await;
            println!(
                "aborted {} idle uploads; followed {} rewritten files; removed {} queued objects; removed {} unrecorded uploads; forgot {} sessions; finished {} idle drops; failed {} generations without an image",
                swept.aborted_uploads,
                swept.rewritten_files,
                swept.removed_objects,
                swept.unrecorded_uploads,
                swept.forgotten_sessions,
                swept.finished_drops,
                swept.imageless_generations
            );
            if swept.failures > 0 {
                anyhow::bail!(
                    "{} things could not be swept (logged above); the rest was",
                    swept.failures
                );
            }
        }
    }
    Ok(())
}

fn print_token(json: bool, user_id: UserId, token: users::NewApiToken) {
    if json {
        println!(
            "{}",
            serde_json::json!({ "userId": user_id, "tokenId": token.id, "apiToken": token.secret })
        );
    } else {
        println!(
            "user id:   {user_id}\ntoken id:  {}\nAPI token: {}",
            token.id, token.secret
        );
    }
}
