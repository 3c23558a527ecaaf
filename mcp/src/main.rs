//! `drive-mcp`: the Drive MCP tool server. Seven tools (see `tools`) over stdio, for a client
//! that starts the server itself, or over streamable HTTP, for clients that reach it by URL;
//! both on the drive client library the `drive` CLI uses.

mod callers;
mod tools;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use clap::{Parser, Subcommand};
use drive_client::version::{self, Program};
use drive_client::{Client, config};
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::callers::Callers;
use crate::tools::DriveTools;

#[derive(Parser)]
#[command(name = "drive-mcp", version, about = "The Drive MCP tool server")]
struct Args {
    #[command(subcommand)]
    transport: Transport,
}

#[derive(Subcommand)]
enum Transport {
    /// Serve one account over stdin and stdout. The account is DRIVE_API_TOKEN's (with
    /// DRIVE_URL), or else the one `drive login` signed in (its config file).
    Stdio {
        /// The `drive` CLI's config file.
        #[arg(long, env = "DRIVE_CONFIG")]
        config: Option<PathBuf>,
        #[arg(long, env = "DRIVE_API_TOKEN", hide_env_values = true)]
        token: Option<String>,
        #[arg(long, env = "DRIVE_URL", default_value = config::DEFAULT_URL)]
        url: String,
        #[arg(long, env = "DRIVE_APP", default_value = config::DEFAULT_APP)]
        app: String,
    },
    /// Serve streamable HTTP at /mcp. Every request carries its caller's drive API token as
    /// `Authorization: Bearer` (its own, or one an app got through the drive's OAuth sign-in,
    /// which /.well-known/oauth-protected-resource points clients to); the server holds no
    /// credential of its own.
    Http {
        #[arg(long, env = "DRIVE_MCP_LISTEN", default_value = "127.0.0.1:8090")]
        listen: SocketAddr,
        /// The URL clients reach this server by, when not http://LISTEN (behind a proxy).
        #[arg(long, env = "DRIVE_MCP_URL")]
        public_url: Option<String>,
        #[arg(long, env = "DRIVE_URL", default_value = config::DEFAULT_URL)]
        url: String,
        #[arg(long, env = "DRIVE_APP", default_value = config::DEFAULT_APP)]
        app: String,
        /// A host name clients reach this server by, beyond the loopback names (repeat for
        /// more). Requests naming any other host are refused, against DNS rebinding.
        #[arg(long = "allowed-host", env = "DRIVE_MCP_ALLOWED_HOSTS", value_delimiter = ',')]
        allowed_hosts: Vec<String>,
    },
}

#[tokio::main]
async fn main() -> Result<()> {
    match Args::parse().transport {
        Transport::Stdio {
            config,
            token,
            url,
            app,
        } => {
            let (client, config_path) = match token {
                Some(token) => (Client::in_memory(&url, &app, &token)?, None),
                None => {
                    let path = match config {
                        Some(path) => path,
                        None => config::default_path()?,
                    };
                    (Client::new(path.clone(), config::load(&path)?)?, Some(path))
                }
            };
            check_version_daily(config_path, client.base_url().to_string());
            serve_stdio(client).await
        }
        Transport::Http {
            listen,
            public_url,
            url,
            app,
            allowed_hosts,
        } => {
            let base_url = url.trim_end_matches('/').to_string();
            check_version_daily(None, base_url.clone());
            let resource = Resource {
                public_url,
                drive_url: base_url.clone(),
                issuer: tokio::sync::OnceCell::new(),
            };
            serve_http(
                listen,
                Callers::by_token(&base_url, &app),
                resource,
                allowed_hosts,
            )
            .await
        }
    }
}

async fn serve_stdio(client: Client) -> Result<()> {
    let tools = DriveTools::local(Arc::new(Callers::One(Arc::new(client))));
    let running = tools
        .serve(rmcp::transport::stdio())
        .await
        .context("starting the MCP session on stdio")?;
    running.waiting().await.context("serving on stdio")?;
    Ok(())
}

/// Base64 grows bytes by a third; the rest of the message is small.
const MOST_REQUEST_BYTES: usize = (drive_client::spool::MOST_BYTES as usize).div_ceil(3) * 4 + 1024 * 1024;

/// This server as an OAuth-protected resource (RFC 9728): where it is, and the drive that
/// signs its callers in.
struct Resource {
    /// Where clients reach this server; `None`: `http://` the address it listens on.
    public_url: Option<String>,
    /// The drive this server calls.
    drive_url: String,
    /// The drive's issuer, as its own metadata names it, read once it answers: clients check
    /// the authorization server named here against the issuer, and behind a proxy the drive's
    /// site URL is not `drive_url`.
    issuer: tokio::sync::OnceCell<String>,
}

impl Resource {
    fn origin(&self, listening: SocketAddr) -> String {
        match &self.public_url {
            Some(url) => url.trim_end_matches('/').to_string(),
            None => format!("http://{listening}"),
        }
    }

    /// The `WWW-Authenticate` challenge of a request without a token.
    fn challenge(&self, listening: SocketAddr) -> String {
        let origin = self.origin(listening);
        format!(r#"Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp""#)
    }

    async fn authorization_server(&self) -> String {
        let issuer = self
            .issuer
            .get_or_try_init(|| drive_client::oauth_issuer(&self.drive_url))
            .await;
        match issuer {
            Ok(issuer) => issuer.clone(),
            Err(e) => {
                eprintln!(
                    "drive-mcp: naming {} as the authorization server for now: {e:#}",
                    self.drive_url
                );
                self.drive_url.clone()
            }
        }
    }

    async fn metadata(&self, listening: SocketAddr) -> serde_json::Value {
        serde_json::json!({
            "resource": format!("{}/mcp", self.origin(listening)),
            "authorization_servers": [self.authorization_server().await],
            "scopes_supported": ["read", "write", "delete"],
            "bearer_methods_supported": ["header"],
            "resource_name": "Drive tools",
        })
    }
}

async fn serve_http(
    listen: SocketAddr,
    callers: Callers,
    resource: Resource,
    allowed_hosts: Vec<String>,
) -> Result<()> {
    let stop = CancellationToken::new();
    // Every tool answers once, so a plain JSON answer serves where an event stream would only
    // add framing (clients that ask for a stream on GET still get one).
    let mut config = StreamableHttpServerConfig::default()
        .with_json_response(true)
        .with_max_request_body_bytes(MOST_REQUEST_BYTES)
        .with_cancellation_token(stop.child_token());
    if !allowed_hosts.is_empty() {
        let mut hosts = vec![
            "localhost".to_string(),
            "127.0.0.1".to_string(),
            "::1".to_string(),
        ];
        hosts.extend(allowed_hosts);
        config = config.with_allowed_hosts(hosts);
    }
    let callers = Arc::new(callers);
    let service = StreamableHttpService::new(
        move || Ok(DriveTools::remote(callers.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("listening on {listen}"))?;
    let listening = listener.local_addr()?;
    let challenge = Arc::new(resource.challenge(listening));
    let resource = Arc::new(resource);
    let described = axum::routing::get(move || async move { axum::Json(resource.metadata(listening).await) });
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn_with_state(challenge, require_token))
        // Clients read it before they have a token: outside the layer.
        .route("/.well-known/oauth-protected-resource/mcp", described.clone())
        .route("/.well-known/oauth-protected-resource", described);
    eprintln!("drive-mcp: serving MCP at http://{listening}/mcp");
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown_signal().await;
            stop.cancel();
        })
        .await
        .context("serving HTTP")
}

/// Refuses a request without a bearer token before the MCP layer reads it, the way an
/// OAuth-protected resource does (401 with `WWW-Authenticate: Bearer` naming the resource's
/// metadata, from which a client finds the drive's sign-in).
async fn require_token(
    axum::extract::State(challenge): axum::extract::State<Arc<String>>,
    request: Request,
    next: Next,
) -> Response {
    if callers::bearer_of(request.headers()).is_some() {
        return next.run(request).await;
    }
    let body = serde_json::json!({
        "error": "Send your drive API token (or one from the drive's OAuth sign-in) as the header Authorization: Bearer TOKEN",
        "code": "unauthorized",
        "retryable": false,
    });
    (
        http::StatusCode::UNAUTHORIZED,
        [(http::header::WWW_AUTHENTICATE, challenge.as_str())],
        axum::Json(body),
    )
        .into_response()
}

async fn shutdown_signal() {
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .expect("installing the SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate.recv() => {}
    }
}

/// The spec's daily version check, beside the serving: never in its way, said on stderr
/// (which MCP clients keep as the server's log).
fn check_version_daily(config_path: Option<PathBuf>, base_url: String) {
    tokio::spawn(async move {
        loop {
            if let Some(check) = version::start(Program::ToolServer, config_path.as_deref(), &base_url) {
                check.finish(Duration::from_secs(30)).await;
            }
            tokio::time::sleep(Duration::from_secs(24 * 60 * 60)).await;
        }
    });
}
