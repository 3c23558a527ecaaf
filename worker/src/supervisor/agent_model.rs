//! The agent's model: any server speaking OpenAI's chat completions with tool calls (OpenAI
//! itself, vLLM, Ollama, llama.cpp's server…), told which tools there are and made to call
//! one each turn (`tool_choice: required`): a small model left free to answer in prose
//! answers in prose, while one held to calls works through them.

use drive_core::config::ConfigError;
use serde_json::{Value, json};

use crate::supervisor::chat::{Chat, Names};

/// The most of an answer read.
const MAX_ANSWER_BYTES: usize = 4 << 20;

#[derive(Clone, Debug)]
pub struct Model {
    chat: Chat,
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
        let names = Names {
            url: "DRIVE_AGENT_MODEL_URL",
            model: "DRIVE_AGENT_MODEL",
            key: "DRIVE_AGENT_API_KEY",
            timeout: "DRIVE_AGENT_TIMEOUT_SECONDS",
        };
        Ok(Chat::from_environment(names, "gpt-4o-mini", 120.0)?.map(|chat| Model { chat }))
    }

    /// The model's next turn in `messages`, with `tools` to call.
    pub async fn turn(&self, messages: &[Value], tools: &Value) -> Result<Turn, String> {
        let body = json!({
            "messages": messages,
            "tools": tools,
            "tool_choice": "required",
            "temperature": 0,
        });
        let message = self.chat.complete(body, MAX_ANSWER_BYTES).await?;
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
