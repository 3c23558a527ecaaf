//! The agent's model: any server speaking OpenAI's chat completions with tool calls (OpenAI
//! itself, vLLM, Ollama, llama.cpp's server…), told which tools there are and made to call
//! one each turn (`tool_choice: required`): a small model left free to answer in prose
//! answers in prose, while one held to calls works through them.

use std::time::Duration;

use drive_core::config::{self, ConfigError};
use serde_json::{Value, json};

/// The most of an answer read.
const MAX_ANSWER_BYTES: usize = 4 << 20;

#[derive(Clone)]
pub struct Model {
    http: reqwest::Client,
    /// `DRIVE_AGENT_MODEL_URL` + `/chat/completions`.
    endpoint: String,
    name: String,
    key: Option<String>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("endpoint", &self.endpoint)
            .field("name", &self.name)
            .field("key", &self.key.as_ref().map(|_| "(hidden)"))
            .finish()
    }
}

/// One tool call the model asked for.
#[derive(Debug, Clone)]
pub struct Call {
    pub id: String,
    pub name: String,
    /// The arguments as the model wrote them (JSON, or not).
    pub arguments: String,
}

/// What the model said in a turn: the assistant message to keep in the conversation, and the
/// calls in it.
#[derive(Debug)]
pub struct Turn {
    pub message: Value,
    pub calls: Vec<Call>,
    pub text: Option<String>,
}

impl Model {
    /// `DRIVE_AGENT_MODEL_URL` (the API's base, like `https://api.openai.com/v1`; unset: no
    /// model, and tasks fail saying so), `DRIVE_AGENT_MODEL` (default `gpt-4o-mini`),
    /// `DRIVE_AGENT_API_KEY` (sent as a bearer token when set), `DRIVE_AGENT_TIMEOUT_SECONDS`
    /// (default 120: one turn).
    pub fn from_environment() -> Result<Option<Model>, ConfigError> {
        let Some(base) = std::env::var("DRIVE_AGENT_MODEL_URL")
            .ok()
            .filter(|u| !u.is_empty())
        else {
            return Ok(None);
        };
        let timeout = config::parsed_or("DRIVE_AGENT_TIMEOUT_SECONDS", 120.0)?;
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs_f64(timeout))
            // A model answers where it is asked; a redirect is not followed anywhere.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| config::invalid("DRIVE_AGENT_MODEL_URL", e.to_string()))?;
        Ok(Some(Model {
            http,
            endpoint: format!("{}/chat/completions", base.trim_end_matches('/')),
            name: config::or("DRIVE_AGENT_MODEL", "gpt-4o-mini"),
            key: std::env::var("DRIVE_AGENT_API_KEY")
                .ok()
                .filter(|k| !k.is_empty()),
        }))
    }

    /// The model's next turn in `messages`, with `tools` to call.
    pub async fn turn(&self, messages: &[Value], tools: &Value) -> Result<Turn, String> {
        let body = json!({
            "model": self.name,
            "messages": messages,
            "tools": tools,
            "tool_choice": "required",
            "temperature": 0,
        });
        let mut request = self.http.post(&self.endpoint).json(&body);
        if let Some(key) = &self.key {
            request = request.bearer_auth(key);
        }
        let mut response = request
            .send()
            .await
            .map_err(|e| format!("the model did not answer: {e}"))?;
        let status = response.status();
        let mut bytes = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| format!("reading the model's answer: {e}"))?
        {
            if bytes.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err("the model's answer is too large".into());
            }
            bytes.extend_from_slice(&chunk);
        }
        if !status.is_success() {
            let said = String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned();
            return Err(format!("the model answered {status}: {said}"));
        }
        let answer: Value =
            serde_json::from_slice(&bytes).map_err(|e| format!("the model's answer is not JSON: {e}"))?;
        let message = answer["choices"][0]["message"].clone();
        if !message.is_object() {
            return Err("the model's answer has no message".into());
        }
        let calls = message["tool_calls"]
            .as_array()
            .map(|calls| {
                calls
                    .iter()
                    .map(|c| Call {
                        id: c["id"].as_str().unwrap_or_default().to_string(),
                        name: c["function"]["name"].as_str().unwrap_or_default().to_string(),
                        arguments: c["function"]["arguments"].as_str().unwrap_or("{}").to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let text = message["content"]
            .as_str()
            .filter(|t| !t.trim().is_empty())
            .map(str::to_string);
        Ok(Turn { message, calls, text })
    }
}
