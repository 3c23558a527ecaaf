//! The agent from a client: one A2A 1.0 JSON-RPC call at `/a2a`, signed in with the API token
//! itself (the agent's tasks belong to the token, not to a session); and the account's tasks,
//! whichever credential started them, as their owner sees and stops them (`/select-agent-tasks`,
//! `/stop-agent-task`).

use anyhow::{Context, Result, anyhow};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::Client;

/// One of the account's agent tasks, as `/select-agent-tasks` answers it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentTask {
    pub task_id: Uuid,
    pub context_id: Uuid,
    /// working, waiting, completed, failed or canceled.
    pub state: String,
    pub asked: String,
    pub said: Option<String>,
    pub waiting_for: Option<String>,
    pub wait_until: Option<DateTime<Utc>>,
    pub started_by: String,
    /// token, app or signIn.
    pub started_with: String,
    pub create_time: DateTime<Utc>,
    pub status_time: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentTasks {
    pub tasks: Vec<AgentTask>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoppedTask {
    pub task_id: Uuid,
    pub state: String,
    pub status_time: DateTime<Utc>,
}

impl Client {
    /// `/select-agent-tasks`: a page of the account's tasks, the latest status change first;
    /// only those standing `state` when given.
    pub async fn agent_tasks(&self, state: Option<&str>, cursor: Option<&str>) -> Result<AgentTasks> {
        self.post(
            "/select-agent-tasks",
            &json!({ "state": state, "cursor": cursor, "limit": 100 }),
        )
        .await
    }

    /// `/stop-agent-task`: cancels a working or waiting task of the account.
    pub async fn stop_agent_task(&self, id: Uuid) -> Result<StoppedTask> {
        self.post("/stop-agent-task", &json!({ "taskId": id })).await
    }
}

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
