//! `drive-llm`: the agent's local default model, for a drive with no hosted model. It serves
//! Qwen2.5-Coder-1.5B-Instruct (a GGUF file the scripts install from the registry, checksummed;
//! nothing is fetched at run time) through llama.cpp as the one route of OpenAI's API the
//! workers' agent calls, `POST /v1/chat/completions` with tools, on loopback. The workers reach
//! it as they would any such server (`DRIVE_AGENT_MODEL_URL`).
//!
//! A small model left to answer as it likes answers in prose or invents calls; asked for a call
//! (`tool_choice: "required"`, or naming a function) it is started inside a `<tool_call>` and
//! held by a grammar to the JSON of a call of one of the tools given. Answers are greedy (the
//! request's temperature is not used): the same conversation gets the same answer.

mod engine;
mod prompt;

use std::net::SocketAddr;
use std::path::PathBuf;

use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::engine::{Engine, EngineError, EngineSettings, Request};

/// The answer's length when the request does not say.
const DEFAULT_MAX_TOKENS: usize = 512;
/// The largest request body read.
const MAX_BODY: usize = 4 << 20;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        // stdout carries only the address, for whoever started it.
        .with_writer(std::io::stderr)
        .init();
    let listen: SocketAddr = setting("DRIVE_LLM_LISTEN", "127.0.0.1:8091")?;
    let settings = EngineSettings {
        model: std::env::var_os("DRIVE_LLM_MODEL")
            .map(PathBuf::from)
            .unwrap_or_else(default_model),
        context: setting("DRIVE_LLM_CONTEXT", "8192")?,
        threads: setting("DRIVE_LLM_THREADS", "1")?,
        batch_threads: setting(
            "DRIVE_LLM_BATCH_THREADS",
            &std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .to_string(),
        )?,
    };
    let name = settings
        .model
        .parent()
        .and_then(|p| p.file_name())
        .map_or_else(|| "local".to_string(), |n| n.to_string_lossy().into_owned());
    tracing::info!(model = %settings.model.display(), "loading the model");
    let engine = Engine::start(settings)?;
    let app = Router::new()
        .route("/v1/chat/completions", post(chat_completions))
        .route("/health", get(|| async { "ok" }))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(Served { engine, name });
    let listener = tokio::net::TcpListener::bind(listen).await?;
    // What the scripts and tests wait for (a port of 0 picks a free one).
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .expect("a SIGTERM handler");
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        })
        .await?;
    Ok(())
}

/// Where the scripts install the model: `$DRIVE_MODELS/qwen2.5-coder-1.5b-instruct/model.gguf`.
fn default_model() -> PathBuf {
    let models = std::env::var_os("DRIVE_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/drive/models")
        });
    models.join("qwen2.5-coder-1.5b-instruct/model.gguf")
}

fn setting<T: std::str::FromStr>(name: &str, default: &str) -> anyhow::Result<T>
where
    T::Err: std::fmt::Display,
{
    let value = std::env::var(name).unwrap_or_else(|_| default.to_string());
    value
        .parse()
        .map_err(|e| anyhow::anyhow!("{name}={value:?}: {e}"))
}

#[derive(Clone)]
struct Served {
    engine: Engine,
    /// The model's name in answers: its folder's.
    name: String,
}

/// A refusal as OpenAI writes one.
struct Refusal(StatusCode, String, &'static str);

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let body = json!({ "error": { "message": self.1, "type": self.2, "param": null, "code": null } });
        (self.0, Json(body)).into_response()
    }
}

fn invalid(message: impl Into<String>) -> Refusal {
    Refusal(StatusCode::BAD_REQUEST, message.into(), "invalid_request_error")
}

async fn chat_completions(
    State(served): State<Served>,
    body: axum::body::Bytes,
) -> Result<Json<Value>, Refusal> {
    let body: Value =
        serde_json::from_slice(&body).map_err(|e| invalid(format!("the body is not JSON: {e}")))?;
    let messages = body["messages"]
        .as_array()
        .filter(|m| !m.is_empty())
        .ok_or_else(|| invalid("messages must be a non-empty array"))?;
    let tools = match &body["tools"] {
        Value::Null => &Vec::new(),
        Value::Array(tools) => tools,
        _ => return Err(invalid("tools must be an array")),
    };
    let max_tokens = match body.get("max_completion_tokens").or(body.get("max_tokens")) {
        None | Some(Value::Null) => DEFAULT_MAX_TOKENS,
        Some(n) => n
            .as_u64()
            .filter(|n| (1..=32_768).contains(n))
            .ok_or_else(|| invalid("max_tokens must be 1 to 32768"))? as usize,
    };
    let names: Vec<&str> = tools
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    let forced: Option<Vec<&str>> = match &body["tool_choice"] {
        Value::String(s) if s == "required" && !tools.is_empty() => Some(names.clone()),
        Value::Object(choice) => {
            let name = choice
                .get("function")
                .and_then(|f| f["name"].as_str())
                .filter(|n| names.contains(n))
                .ok_or_else(|| invalid("tool_choice must name one of the tools"))?;
            Some(vec![name])
        }
        Value::Null | Value::String(_) => None,
        _ => return Err(invalid("tool_choice must be none, auto, required or a function")),
    };
    let offered = match &body["tool_choice"] {
        Value::String(s) if s == "none" => &Vec::new(),
        _ => tools,
    };
    let mut text = prompt::render(messages, offered).map_err(|e| invalid(e.to_string()))?;
    if forced.is_some() {
        text.push_str(prompt::FORCED_CALL_OPENING);
    }
    let request = Request {
        prompt: text,
        grammar: forced.as_deref().map(prompt::call_grammar),
        max_tokens,
    };
    let started = std::time::Instant::now();
    let completion = served.engine.complete(request).await.map_err(|e| match e {
        EngineError::TooLong { .. } => invalid(e.to_string()),
        _ => Refusal(StatusCode::INTERNAL_SERVER_ERROR, e.to_string(), "server_error"),
    })?;
    let seconds = started.elapsed().as_secs_f64();
    tracing::info!(
        prompt_tokens = completion.prompt_tokens,
        completion_tokens = completion.completion_tokens,
        seconds,
        "answered"
    );
    let written = match forced {
        Some(_) => format!("{}{}</tool_call>", prompt::FORCED_CALL_OPENING, completion.text),
        None => completion.text.clone(),
    };
    let (calls, said) = match offered.is_empty() {
        true => (Vec::new(), written),
        false => prompt::parse_calls(&written),
    };
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(|(name, arguments)| {
            json!({
                "id": format!("call_{}", uuid::Uuid::new_v4().simple()),
                "type": "function",
                "function": { "name": name, "arguments": arguments }
            })
        })
        .collect();
    let finish_reason = match (completion.cut_short, tool_calls.is_empty()) {
        (true, _) => "length",
        (false, false) => "tool_calls",
        (false, true) => "stop",
    };
    let mut message =
        json!({ "role": "assistant", "content": if said.is_empty() { Value::Null } else { said.into() } });
    if !tool_calls.is_empty() {
        message["tool_calls"] = tool_calls.into();
    }
    Ok(Json(json!({
        "id": format!("chatcmpl-{}", uuid::Uuid::new_v4().simple()),
        "object": "chat.completion",
        "created": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        "model": served.name,
        "choices": [{ "index": 0, "message": message, "finish_reason": finish_reason }],
        "usage": {
            "prompt_tokens": completion.prompt_tokens,
            "completion_tokens": completion.completion_tokens,
            "total_tokens": completion.prompt_tokens + completion.completion_tokens
        }
    })))
}
