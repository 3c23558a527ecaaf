//! The agent interface from a client: one A2A 1.0 JSON-RPC call at `/a2a`, signed in with the
//! API token itself (the agent's tasks belong to the token, not to a session).

use anyhow::{Context, Result, anyhow};
use serde_json::{Value, json};

use crate::Client;

impl Client {
    /// Calls `method` with `params`; answers its `result`, or its error as an error.
    pub async fn a2a(&self, method: &str, params: Value) -> Result<Value> {
        let token = self.config.lock().await.api_token.clone();
        let url = format!("{}/a2a", self.base_url);
        let response = self
            .http
            .post(&url)
            .bearer_auth(token)
            .header("A2A-Version", "1.0")
            .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }))
            .send()
            .await
            .with_context(|| format!("reaching {url}"))?;
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        if !status.is_success() {
            // Refused before the call was read (a token that is not valid): the drive's error body.
            return Err(match serde_json::from_str::<crate::ApiError>(&text) {
                Ok(error) => error.into(),
                Err(_) => anyhow!(
                    "{method} answered {status}: {}",
                    text.chars().take(300).collect::<String>()
                ),
            });
        }
        let answer: Value =
            serde_json::from_str(&text).with_context(|| format!("reading the answer of {method}"))?;
        match answer.get("error") {
            Some(error) => Err(anyhow!(
                "{} (error {})",
                error["message"].as_str().unwrap_or("the agent refused"),
                error["code"]
            )),
            None => Ok(answer["result"].clone()),
        }
    }
}
