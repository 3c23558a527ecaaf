//! Describing pictures for `visual` moments: a configured provider speaking OpenAI's chat
//! completions with an image part (OpenAI itself, or any compatible server: vLLM, Ollama,
//! llama.cpp's server…). Off unless `DRIVE_VISION_URL` is set: no describing model ships in a
//! package this drive can install, so none runs by default.
//!
//! The supervisor calls it, never the job process: the provider's key is a credential. The
//! process hands over a JPEG it made (a picture, a video's frame); the supervisor checks its
//! size and the job's count and answers the description.

use base64::Engine;
use drive_core::config::ConfigError;
use serde_json::json;

use crate::protocol::{JobError, JobResult};
use crate::supervisor::chat::{Chat, Names};

/// The largest JPEG sent (the job process makes them at most 1024 px on a side).
pub const MAX_JPEG_BYTES: usize = 2 << 20;

/// The most of an answer read, and the longest description kept (a moment's text).
const MAX_ANSWER_BYTES: usize = 1 << 20;
const MAX_DESCRIPTION_CHARS: usize = 600;

const PROMPT: &str = "Describe what this picture shows in one or two plain sentences, for finding \
    it by searching later: the subjects, the setting and any action. Do not guess who people are.";

#[derive(Clone, Debug)]
pub struct Vision {
    chat: Chat,
}

impl Vision {
    /// `DRIVE_VISION_URL` (the API's base, like `https://api.openai.com/v1`; unset: off),
    /// `DRIVE_VISION_MODEL` (default `gpt-4o-mini`), `DRIVE_VISION_API_KEY` (sent as a bearer
    /// token when set), `DRIVE_VISION_TIMEOUT_SECONDS` (default 60).
    pub fn from_environment() -> Result<Option<Vision>, ConfigError> {
        let names = Names {
            url: "DRIVE_VISION_URL",
            model: "DRIVE_VISION_MODEL",
            key: "DRIVE_VISION_API_KEY",
            timeout: "DRIVE_VISION_TIMEOUT_SECONDS",
        };
        Ok(Chat::from_environment(names, "gpt-4o-mini", 60.0)?.map(|chat| Vision { chat }))
    }

    /// What the picture shows, in a sentence or two; `None` when the model says nothing. A
    /// provider that fails or answers nonsense is the machine's failure: the job is tried again.
    pub async fn describe(&self, jpeg: &[u8]) -> JobResult<Option<String>> {
        let image = base64::engine::general_purpose::STANDARD.encode(jpeg);
        let body = json!({
            "max_tokens": 200,
            "messages": [{
                "role": "user",
                "content": [
                    { "type": "text", "text": PROMPT },
                    { "type": "image_url", "image_url": { "url": format!("data:image/jpeg;base64,{image}") } },
                ],
            }],
        });
        let failed = |why: &dyn std::fmt::Display| JobError::Server(format!("the describing model: {why}"));
        let message = self
            .chat
            .complete(body, MAX_ANSWER_BYTES)
            .await
            .map_err(|e| failed(&e))?;
        let content = message["content"]
            .as_str()
            .ok_or_else(|| failed(&"its answer has no choices[0].message.content"))?;
        Ok(cleaned(content))
    }
}

/// One line of plain text at most [`MAX_DESCRIPTION_CHARS`] long, or `None` for nothing.
fn cleaned(content: &str) -> Option<String> {
    let words: Vec<&str> = content
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect();
    let mut text = String::new();
    for word in words {
        if text.chars().count() + 1 + word.chars().count() > MAX_DESCRIPTION_CHARS {
            break;
        }
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(word);
    }
    Some(text).filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_one_bounded_line() {
        assert_eq!(
            cleaned("  A red\nbicycle.\u{7}\t"),
            Some("A red bicycle.".to_string())
        );
        assert_eq!(cleaned(" \n "), None);
        let long = cleaned(&"word ".repeat(500)).unwrap();
        assert!(long.chars().count() <= MAX_DESCRIPTION_CHARS && long.ends_with("word"));
    }
}
