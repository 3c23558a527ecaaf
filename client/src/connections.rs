//! The apps let in through the drive's OAuth sign-in, typed: `/select-connections` and
//! `/revoke-connection`.

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::Client;

/// An app's token, and what it may do.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Connection {
    pub id: Uuid,
    pub client_id: Uuid,
    pub client_name: String,
    pub scopes: Vec<String>,
    pub insert_time: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Connections {
    pub connections: Vec<Connection>,
}

/// The answer of `/revoke-connection`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Revoked {
    pub revoked: bool,
}

impl Client {
    /// `/select-connections`.
    pub async fn connections(&self) -> Result<Connections> {
        self.post_empty("/select-connections").await
    }

    /// `/revoke-connection`: the app's token stops working.
    pub async fn revoke_connection(&self, id: Uuid) -> Result<Revoked> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Body {
            connection_id: Uuid,
        }
        self.post("/revoke-connection", &Body { connection_id: id }).await
    }
}
