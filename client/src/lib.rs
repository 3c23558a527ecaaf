//! The client library of the Drive file service, shared by the `drive` CLI, the `drive-mcp`
//! tool server and the worker's agent: the session (exchanged for the API token, renewed a
//! minute before it ends and once more when a call is refused with 401), the two headers every
//! call carries, the service's error body as an error type ([`ApiError`]), every route they
//! call typed, one method a route, grouped by family ([`files`], [`jobs`], [`generations`],
//! [`search`], [`reading`], [`organize`], [`requests`], [`reviews`], [`events`],
//! [`connections`]), the waits for a job's or a generation's end, and uploads streamed from
//! disk that resume ([`upload`]); behind the `tools` feature, the one catalogue of tools for
//! models ([`tools`]). No route is named outside this crate.

pub mod agent;
pub mod config;
pub mod connections;
pub mod edits;
pub mod events;
pub mod files;
pub mod generations;
pub mod jobs;
pub mod local;
pub mod organize;
pub mod reading;
pub mod records;
pub mod requests;
pub mod reviews;
pub mod rules;
pub mod search;
pub mod sharing;
pub mod sign_ins;
pub mod spool;
pub mod templates;
#[cfg(feature = "tools")]
pub mod tools;
mod transfer;
pub mod upload;
pub mod version;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use chrono::{TimeDelta, Utc};
use reqwest::{Response, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::Mutex;
use uuid::Uuid;

use crate::config::{Config, Session};

pub use crate::transfer::FORM_UPLOAD_LIMIT;

const APP_HEADER: &str = "X-Drive-App";

/// The service's error body, `{ error, code, field?, retryable }`.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct ApiError {
    pub error: String,
    pub code: String,
    pub field: Option<String>,
    #[serde(default)]
    pub retryable: bool,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "{} ({}, field {field})", self.error, self.code),
            None => write!(f, "{} ({})", self.error, self.code),
        }
    }
}

impl std::error::Error for ApiError {}

/// Whether `err` is the service answering with `code`.
pub fn has_code(err: &anyhow::Error, code: &str) -> bool {
    err.downcast_ref::<ApiError>().is_some_and(|e| e.code == code)
}

/// The HTTP client shared by every call, to the service and to storage alike.
pub fn http_client() -> Result<reqwest::Client> {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        .user_agent(concat!("drive-client/", env!("CARGO_PKG_VERSION")))
        .build()
        .context("setting up HTTP")
}

/// The drive's OAuth issuer, as its authorization-server metadata (RFC 8414) at `base_url`
/// names it: the drive's public site URL, which differs from `base_url` when this reaches the
/// drive another way than its users do (behind a proxy).
pub async fn oauth_issuer(base_url: &str) -> Result<String> {
    let url = format!("{base_url}/.well-known/oauth-authorization-server");
    let metadata: serde_json::Value = http_client()?
        .get(&url)
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .and_then(Response::error_for_status)
        .with_context(|| format!("reading {url}"))?
        .json()
        .await
        .with_context(|| format!("reading {url}"))?;
    metadata["issuer"]
        .as_str()
        .map(str::to_string)
        .with_context(|| format!("{url} names no issuer"))
}

/// Buys a session with the API token at `{base_url}/exchange-token`.
pub async fn exchange(http: &reqwest::Client, base_url: &str, api_token: &str) -> Result<Session> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Grant {
        gel_token: String,
        expires_in: i64,
        user_id: Uuid,
    }
    // Counted from before the request, so the session is never thought to last longer than it does.
    let asked_at = Utc::now();
    let url = format!("{base_url}/exchange-token");
    let response = http
        .post(&url)
        .bearer_auth(api_token)
        .send()
        .await
        .with_context(|| format!("reaching {url}"))?;
    let grant: Grant = read(response, "/exchange-token").await?;
    Ok(Session {
        gel_token: grant.gel_token,
        expires_at: asked_at + TimeDelta::seconds(grant.expires_in),
        user_id: grant.user_id,
    })
}

pub struct Client {
    http: reqwest::Client,
    /// Where the session is kept between runs (the CLI's config file); `None` keeps it in
    /// memory only (the tool server over HTTP, one client per caller's token).
    config_path: Option<PathBuf>,
    base_url: String,
    app_id: String,
    /// The config, whose session is renewed under this lock so that concurrent calls
    /// (uploads run 20 at a time) exchange the token once, not once each.
    config: Mutex<Config>,
}

impl Client {
    /// A client that keeps its session in the config file at `config_path`.
    pub fn new(config_path: PathBuf, config: Config) -> Result<Client> {
        Client::build(Some(config_path), config)
    }

    /// A client whose session lives as long as it does.
    pub fn in_memory(base_url: &str, app_id: &str, api_token: &str) -> Result<Client> {
        let config = Config {
            base_url: base_url.to_string(),
            app_id: app_id.to_string(),
            api_token: api_token.to_string(),
            session: None,
            events_cursor: None,
        };
        Client::build(None, config)
    }

    /// A client acting through a session someone else made (the worker running an agent task
    /// as its API token, whose secret the drive does not keep): when the session ends, so do
    /// its calls, since there is no token to exchange again.
    pub fn for_session(base_url: &str, app_id: &str, session: Session) -> Result<Client> {
        let config = Config {
            base_url: base_url.to_string(),
            app_id: app_id.to_string(),
            api_token: String::new(),
            session: Some(session),
            events_cursor: None,
        };
        Client::build(None, config)
    }

    fn build(config_path: Option<PathBuf>, config: Config) -> Result<Client> {
        Ok(Client {
            http: http_client()?,
            config_path,
            base_url: config.base_url.trim_end_matches('/').to_string(),
            app_id: config.app_id.clone(),
            config: Mutex::new(config),
        })
    }

    /// For requests to storage, which carry no service credentials.
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// The signed-in user; object keys of new files begin `users/{userId}/`.
    pub async fn user_id(&self) -> Result<Uuid> {
        Ok(self.session().await?.user_id)
    }

    /// Where `drive events --follow` stopped, if it ran before.
    pub async fn events_cursor(&self) -> Option<String> {
        self.config.lock().await.events_cursor.clone()
    }

    /// Keeps the feed's cursor in the config file for the next `drive events --follow`.
    pub async fn keep_events_cursor(&self, cursor: &str) -> Result<()> {
        let mut config = self.config.lock().await;
        config.events_cursor = Some(cursor.to_string());
        self.keep(&config)
    }

    /// POSTs `body` as JSON to `route` and reads the answer.
    pub(crate) async fn post<T: DeserializeOwned>(&self, route: &str, body: &impl Serialize) -> Result<T> {
        let body = serde_json::to_vec(body).context("encoding the request")?;
        read(self.send(route, Some(body)).await?, route).await
    }

    /// POSTs to a route that takes no body.
    pub(crate) async fn post_empty<T: DeserializeOwned>(&self, route: &str) -> Result<T> {
        read(self.send(route, None).await?, route).await
    }

    async fn send(&self, route: &str, body: Option<Vec<u8>>) -> Result<Response> {
        let session = self.session().await?;
        let response = self.request(route, &session, body.clone()).await?;
        if response.status() != StatusCode::UNAUTHORIZED {
            return Ok(response);
        }
        // The session ended early (revoked, or the clock is off): exchange again, once.
        let session = self.session_after_refusal(&session.gel_token).await?;
        self.request(route, &session, body).await
    }

    async fn request(&self, route: &str, session: &Session, body: Option<Vec<u8>>) -> Result<Response> {
        let url = format!("{}{route}", self.base_url);
        let mut request = self
            .http
            .post(&url)
            .bearer_auth(&session.gel_token)
            .header(APP_HEADER, &self.app_id);
        if let Some(body) = body {
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body);
        }
        request.send().await.with_context(|| format!("reaching {url}"))
    }

    /// The current session, renewed first when it ends within a minute.
    async fn session(&self) -> Result<Session> {
        let mut config = self.config.lock().await;
        match &config.session {
            Some(session) if !session.needs_renewal(Utc::now()) => Ok(session.clone()),
            _ => self.renew(&mut config).await,
        }
    }

    /// A session other than `refused`: the one another call already renewed, or a new one.
    async fn session_after_refusal(&self, refused: &str) -> Result<Session> {
        let mut config = self.config.lock().await;
        match &config.session {
            Some(session) if session.gel_token != refused => Ok(session.clone()),
            _ => self.renew(&mut config).await,
        }
    }

    async fn renew(&self, config: &mut Config) -> Result<Session> {
        let session = exchange(&self.http, &self.base_url, &config.api_token).await?;
        config.session = Some(session.clone());
        self.keep(config)?;
        Ok(session)
    }

    fn keep(&self, config: &Config) -> Result<()> {
        match &self.config_path {
            Some(path) => config::save(path, config),
            None => Ok(()),
        }
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }
}

/// The answer of `route`: its JSON on success, otherwise the service's error.
async fn read<T: DeserializeOwned>(response: Response, route: &str) -> Result<T> {
    let status = response.status();
    if status.is_success() {
        return response
            .json()
            .await
            .with_context(|| format!("reading the answer of {route}"));
    }
    let text = response.text().await.unwrap_or_default();
    match serde_json::from_str::<ApiError>(&text) {
        Ok(error) => Err(error.into()),
        Err(_) => Err(anyhow!(
            "{route} answered {status}: {}",
            text.chars().take(300).collect::<String>().trim()
        )),
    }
}
