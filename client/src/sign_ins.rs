//! People's sign-ins to the app, typed: where the account is signed in, and ending one or all.

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::json;
use uuid::Uuid;

use crate::Client;

/// A browser's sign-in, as `/select-sign-ins` answers it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignIn {
    pub sign_in_id: Uuid,
    pub user_agent: Option<String>,
    pub address: Option<String>,
    pub create_time: DateTime<Utc>,
    pub last_use_time: Option<DateTime<Utc>>,
    pub current: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignIns {
    pub sign_ins: Vec<SignIn>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ended {
    pub ended: u64,
}

impl Client {
    /// `/select-sign-ins`: the account's live sign-ins, the latest used first.
    pub async fn sign_ins(&self) -> Result<SignIns> {
        self.post("/select-sign-ins", &json!({})).await
    }

    /// `/end-sign-ins`: one sign-in, or (`None`) every one of the account's.
    pub async fn end_sign_ins(&self, one: Option<Uuid>) -> Result<Ended> {
        let body = match one {
            Some(id) => json!({ "signInId": id }),
            None => json!({}),
        };
        self.post("/end-sign-ins", &body).await
    }
}
