//! A server speaking OpenAI's chat completions (OpenAI itself, or vLLM, Ollama, llama.cpp's
//! server…), as the worker's supervisor calls one: to describe pictures (`vision`) and as the
//! agent's model (`agent`). Its key is a credential: only the supervisor holds it.

use std::time::Duration;

use drive_core::config::{self, ConfigError};
use serde_json::Value;

/// The environment variables that configure one use.
pub struct Names {
    /// The API's base, like `https://api.openai.com/v1`; unset: none configured.
    pub url: &'static str,
    pub model: &'static str,
    /// Sent as a bearer token when set.
    pub key: &'static str,
    /// The longest one call may take, in seconds.
    pub timeout: &'static str,
}

#[derive(Clone)]
pub struct Chat {
    http: reqwest::Client,
    /// The base + `/chat/completions`.
    endpoint: String,
    model: String,
    key: Option<String>,
}

impl std::fmt::Debug for Chat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chat")
            .field("endpoint", &self.endpoint)
            .field("model", &self.model)
            .field("key", &self.key.as_ref().map(|_| "(hidden)"))
            .finish()
    }
}

impl Chat {
    /// The server `names` configure, if any, with `model` and `timeout` (seconds) by default.
    pub fn from_environment(names: Names, model: &str, timeout: f64) -> Result<Option<Chat>, ConfigError> {
        let Some(base) = std::env::var(names.url).ok().filter(|u| !u.is_empty()) else {
            return Ok(None);
        };
        let timeout = config::parsed_or(names.timeout, timeout)?;
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs_f64(timeout))
            // A server answers where it is asked; a redirect is not followed anywhere.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| config::invalid(names.url, e.to_string()))?;
        Ok(Some(Chat {
            http,
            endpoint: format!("{}/chat/completions", base.trim_end_matches('/')),
            model: config::or(names.model, model),
            key: std::env::var(names.key).ok().filter(|k| !k.is_empty()),
        }))
    }

    /// POSTs `body` with this server's `model`; answers the first choice's message, or why not
    /// (an answer over `max_answer` bytes included).
    pub async fn complete(&self, mut body: Value, max_answer: usize) -> Result<Value, String> {
        body["model"] = Value::String(self.model.clone());
        let mut request = self.http.post(&self.endpoint).json(&body);
        if let Some(key) = &self.key {
            request = request.bearer_auth(key);
        }
        let response = request
            .send()
            .await
            .map_err(|e| format!("it did not answer: {e}"))?;
        let status = response.status();
        let answer = drive_fetch::read_capped(response, max_answer)
            .await
            .map_err(|e| format!("reading its answer: {e}"))?;
        if !status.is_success() {
            let said = String::from_utf8_lossy(&answer[..answer.len().min(300)]).into_owned();
            return Err(format!("it answered {status}: {said}"));
        }
        let answer: Value =
            serde_json::from_slice(&answer).map_err(|e| format!("its answer is not JSON: {e}"))?;
        let message = answer["choices"][0]["message"].clone();
        if !message.is_object() {
            return Err("its answer has no choices[0].message".into());
        }
        Ok(message)
    }
}
