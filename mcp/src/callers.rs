//! Whose drive a tool call works on. Over stdio, the one account the server was started for.
//! Over HTTP, the caller's: each request carries the caller's drive API token as
//! `Authorization: Bearer`, and the server keeps no credential of its own; a client (and so a
//! session) is kept per token, so a caller's calls do not each buy a session.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use drive_client::Client;
use rmcp::RoleServer;
use rmcp::service::RequestContext;
use sha2::{Digest, Sha256};

use drive_client::tools::Failure;

/// Past this many callers the kept clients are dropped and made again as needed.
const MOST_KEPT: usize = 1024;

pub enum Callers {
    One(Arc<Client>),
    ByToken {
        base_url: String,
        app_id: String,
        /// By the token's SHA-256, so no token is kept as a key.
        clients: Mutex<HashMap<[u8; 32], Arc<Client>>>,
    },
}

impl Callers {
    pub fn by_token(base_url: &str, app_id: &str) -> Callers {
        Callers::ByToken {
            base_url: base_url.to_string(),
            app_id: app_id.to_string(),
            clients: Mutex::new(HashMap::new()),
        }
    }

    pub fn client(&self, context: &RequestContext<RoleServer>) -> Result<Arc<Client>, Failure> {
        let (base_url, app_id, clients) = match self {
            Callers::One(client) => return Ok(client.clone()),
            Callers::ByToken {
                base_url,
                app_id,
                clients,
            } => (base_url, app_id, clients),
        };
        let token = bearer(context).ok_or_else(|| {
            Failure::new("This call carried no drive API token.")
                .next("Send it with every request as the header Authorization: Bearer API_TOKEN.")
        })?;
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut clients = clients.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(client) = clients.get(&key) {
            return Ok(client.clone());
        }
        if clients.len() >= MOST_KEPT {
            clients.clear();
        }
        let client = Client::in_memory(base_url, app_id, token)
            .map(Arc::new)
            .map_err(|e| Failure::new(format!("{e:#}")))?;
        clients.insert(key, client.clone());
        Ok(client)
    }
}

/// The bearer token of the HTTP request that carried this call.
pub fn bearer(context: &RequestContext<RoleServer>) -> Option<&str> {
    let parts = context.extensions.get::<http::request::Parts>()?;
    bearer_of(&parts.headers)
}

pub fn bearer_of(headers: &http::HeaderMap) -> Option<&str> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}
