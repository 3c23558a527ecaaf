//! Stand-ins for the image providers the tests cannot reach, on one loopback server, each
//! speaking its provider's wire format as its public documentation gives it: paths, key
//! headers, request fields, answers, error bodies and, for Black Forest Labs and fal, the
//! asynchronous task polled until it is ready. The drive's real adapters are what is under
//! test; the server checks what they send and keeps every request.
//!
//! A prompt steers an answer: one containing `refuse` is refused the provider's way, one
//! containing `hold` keeps a polled task pending until [`FakeProviders::release`], one
//! containing `elsewhere` has Black Forest Labs and fal answer task links on a subdomain of the
//! name they were called by, and OpenAI takes five seconds over one containing `slow`.
//!
//! The server is also an HTTP proxy of sorts: a request in absolute form (`GET
//! http://api.bfl.test/…`, a client told `HTTP_PROXY` is this server) is answered like any
//! other, so providers can be named as on the internet; [`FakeProviders::seen`] tells which
//! name each request was for and what headers it carried.

use std::collections::HashMap;
use std::io::Cursor;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use serde_json::{Value, json};

use crate::TestApp;

/// The keys the stand-ins take, one per provider.
pub const OPENAI_KEY: &str = "sk-test-openai";
pub const GEMINI_KEY: &str = "test-gemini-key";
pub const MODELARK_KEY: &str = "test-modelark-key";
pub const BFL_KEY: &str = "test-bfl-key";
pub const FAL_KEY: &str = "test-fal-key";

/// One request the server was sent.
#[derive(Debug, Clone)]
pub struct Sent {
    pub method: String,
    pub path: String,
    pub body: Value,
}

/// One request as it reached the server: the host it was for, without a port (the absolute
/// URI's, else the `Host` header's), and every header.
#[derive(Debug, Clone)]
pub struct Seen {
    pub host: String,
    pub path: String,
    pub headers: HeaderMap,
}

#[derive(Default)]
struct Shared {
    url: String,
    /// What every stand-in draws (base64 for the answers that carry it).
    picture: Vec<u8>,
    picture_base64: String,
    /// When each OpenAI answer was handed over (for the benchmark).
    answered: Mutex<Vec<chrono::DateTime<chrono::Utc>>>,
    sent: Mutex<Vec<Sent>>,
    seen: Mutex<Vec<Seen>>,
    /// Polls answered per task, and each task's prompt.
    polls: Mutex<HashMap<String, u32>>,
    prompts: Mutex<HashMap<String, String>>,
    released: AtomicBool,
}

pub struct FakeProviders {
    /// The server's base, like `http://127.0.0.1:41234`.
    pub url: String,
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for FakeProviders {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// The picture every stand-in draws: a real 48×32 PNG.
pub fn picture() -> Vec<u8> {
    let image = image::RgbImage::from_fn(48, 32, |x, y| image::Rgb([x as u8 * 5, y as u8 * 7, 200]));
    let mut png = Vec::new();
    image
        .write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)
        .expect("a PNG encodes");
    png
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

impl FakeProviders {
    /// Stand-ins that draw [`picture`].
    pub async fn start() -> FakeProviders {
        FakeProviders::drawing(picture()).await
    }

    /// Stand-ins that draw `picture`.
    pub async fn drawing(picture: Vec<u8>) -> FakeProviders {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let url = format!("http://{}", listener.local_addr().expect("its address"));
        let shared = Arc::new(Shared {
            url: url.clone(),
            picture_base64: base64(&picture),
            picture,
            ..Shared::default()
        });
        let app = axum::Router::new()
            .route("/openai/v1/images/generations", post(openai))
            .route("/google/v1beta/models/{call}", post(google))
            .route("/modelark/api/v3/images/generations", post(modelark))
            .route("/bfl/v1/flux-2-pro", post(bfl_submit))
            .route("/bfl/v1/get_result", get(bfl_result))
            .route("/fal/fal-ai/flux/krea", post(fal_submit))
            .route("/fal/fal-ai/flux/requests/{id}/status", get(fal_status))
            .route("/fal/fal-ai/flux/requests/{id}", get(fal_response))
            .route("/delivery/{name}", get(delivery))
            .layer(axum::middleware::from_fn_with_state(shared.clone(), see))
            .with_state(shared.clone());
        let server = tokio::spawn(async move {
            axum::serve(listener, app)
                .await
                .expect("the fake providers serve");
        });
        FakeProviders { url, shared, server }
    }

    /// The environment that points every provider of the drive at this server.
    pub fn environment(&self) -> Vec<(String, String)> {
        [
            ("DRIVE_OPENAI_API_KEY", OPENAI_KEY.to_string()),
            ("DRIVE_OPENAI_BASE_URL", format!("{}/openai/v1", self.url)),
            ("DRIVE_GEMINI_API_KEY", GEMINI_KEY.to_string()),
            ("DRIVE_GEMINI_BASE_URL", format!("{}/google/v1beta", self.url)),
            ("DRIVE_MODELARK_API_KEY", MODELARK_KEY.to_string()),
            ("DRIVE_MODELARK_BASE_URL", format!("{}/modelark/api/v3", self.url)),
            ("DRIVE_BFL_API_KEY", BFL_KEY.to_string()),
            ("DRIVE_BFL_BASE_URL", format!("{}/bfl/v1", self.url)),
            ("DRIVE_FAL_API_KEY", FAL_KEY.to_string()),
            ("DRIVE_FAL_BASE_URL", format!("{}/fal", self.url)),
            // Image links (BFL's sample, fal's images) are fetched like any link from outside:
            // this loopback server must be allowed by name.
            ("DRIVE_FETCH_ALLOW_HOSTS", "127.0.0.1".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    /// An app whose every provider is this server, with a worker; `extra` is added to the
    /// environment of both (and wins).
    pub async fn app(&self, extra: &[(&str, &str)]) -> TestApp {
        let mut environment = self.environment();
        environment.retain(|(name, _)| !extra.iter().any(|(k, _)| k == name));
        environment.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let pairs: Vec<(&str, &str)> = environment
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let mut app = TestApp::spawn_with(&pairs).await;
        app.start_worker(&[]).await;
        app
    }

    /// Every request sent so far whose path starts with `prefix`.
    pub fn sent(&self, prefix: &str) -> Vec<Sent> {
        let sent = self.shared.sent.lock().unwrap();
        sent.iter()
            .filter(|s| s.path.starts_with(prefix))
            .cloned()
            .collect()
    }

    /// Every request that reached the server so far, as it came.
    pub fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().unwrap().clone()
    }

    /// When each OpenAI answer was handed over, in order.
    pub fn answered(&self) -> Vec<chrono::DateTime<chrono::Utc>> {
        self.shared.answered.lock().unwrap().clone()
    }

    /// Lets tasks held by a `hold` prompt finish.
    pub fn release(&self) {
        self.shared.released.store(true, Ordering::SeqCst);
    }
}

async fn see(
    State(shared): State<Arc<Shared>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let host = match request.uri().host() {
        Some(host) => host.to_string(),
        None => header(request.headers(), "host")
            .and_then(|h| h.parse::<axum::http::uri::Authority>().ok())
            .map(|authority| authority.host().to_string())
            .unwrap_or_default(),
    };
    shared.seen.lock().unwrap().push(Seen {
        host,
        path: request.uri().path().to_string(),
        headers: request.headers().clone(),
    });
    next.run(request).await
}

/// Where a task's links point: the name this server was called by (`Host`), or for a prompt
/// containing `elsewhere` a subdomain of it (`poll.api.bfl.test` of `api.bfl.test`).
fn task_links_base(shared: &Shared, headers: &HeaderMap, prompt: &str) -> String {
    match header(headers, "host") {
        Some(host) if prompt.contains("elsewhere") => format!("http://poll.{host}"),
        Some(host) => format!("http://{host}"),
        None => shared.url.clone(),
    }
}

fn keep(shared: &Shared, method: &str, path: String, body: &Value) {
    shared.sent.lock().unwrap().push(Sent {
        method: method.to_string(),
        path,
        body: body.clone(),
    });
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn prompt_of(body: &Value) -> String {
    body["prompt"].as_str().unwrap_or_default().to_string()
}

/// OpenAI Images: a bearer key; GPT Image sizes; `data[0].b64_json`; errors as
/// `{ error: { message, type, param, code } }`.
async fn openai(State(shared): State<Arc<Shared>>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    keep(&shared, "POST", "/openai/v1/images/generations".into(), &body);
    let error = |status: StatusCode, kind: &str, param: Value, code: Value, message: &str| {
        let body = json!({ "error": { "message": message, "type": kind, "param": param, "code": code } });
        (status, Json(body)).into_response()
    };
    if header(&headers, "authorization") != Some(&format!("Bearer {OPENAI_KEY}")) {
        return error(
            StatusCode::UNAUTHORIZED,
            "invalid_request_error",
            Value::Null,
            json!("invalid_api_key"),
            "Incorrect API key provided.",
        );
    }
    let size_ok = ["1024x1024", "1536x1024", "1024x1536"].contains(&body["size"].as_str().unwrap_or(""));
    let quality_ok = ["low", "medium", "high", "auto"].contains(&body["quality"].as_str().unwrap_or("auto"));
    if body["model"].as_str().is_none() || !size_ok || !quality_ok || body.get("response_format").is_some() {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            json!("size"),
            Value::Null,
            "Invalid value for a parameter.",
        );
    }
    if prompt_of(&body).contains("slow") {
        tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    }
    if prompt_of(&body).contains("refuse") {
        return error(
            StatusCode::BAD_REQUEST,
            "image_generation_user_error",
            Value::Null,
            json!("moderation_blocked"),
            "Your request was rejected by the safety system.",
        );
    }
    let answer = json!({
        "created": 1_713_833_628,
        "data": [{ "b64_json": shared.picture_base64 }],
        "output_format": "png",
        "size": body["size"],
        "quality": body["quality"],
        "usage": { "total_tokens": 100, "input_tokens": 50, "output_tokens": 50 },
    });
    let answer = Json(answer).into_response();
    shared.answered.lock().unwrap().push(chrono::Utc::now());
    answer
}

/// The Gemini API: `x-goog-api-key`; `{model}:generateContent` answers the picture as an
/// `inlineData` part after a text part, a blocked prompt as `promptFeedback.blockReason` with
/// no candidates (HTTP 200); `{model}:predict` answers `predictions[0].bytesBase64Encoded`,
/// a filtered picture as no predictions.
async fn google(
    State(shared): State<Arc<Shared>>,
    Path(call): Path<String>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    keep(&shared, "POST", format!("/google/v1beta/models/{call}"), &body);
    if header(&headers, "x-goog-api-key") != Some(GEMINI_KEY) {
        let body = json!({ "error": { "code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT" } });
        return (StatusCode::BAD_REQUEST, Json(body)).into_response();
    }
    let Some((model, method)) = call.split_once(':') else {
        return StatusCode::NOT_FOUND.into_response();
    };
    match method {
        "generateContent" if model.starts_with("gemini-") => {
            let prompt = body["contents"][0]["parts"][0]["text"]
                .as_str()
                .unwrap_or_default();
            if body["generationConfig"]["responseModalities"] != json!(["IMAGE"]) {
                let body = json!({ "error": { "code": 400, "message": "responseModalities must ask for IMAGE", "status": "INVALID_ARGUMENT" } });
                return (StatusCode::BAD_REQUEST, Json(body)).into_response();
            }
            if prompt.contains("refuse") {
                return Json(json!({ "promptFeedback": { "blockReason": "SAFETY", "safetyRatings": [] } }))
                    .into_response();
            }
            Json(json!({
                "candidates": [{
                    "content": { "role": "model", "parts": [
                        { "text": "Here is your picture." },
                        { "inlineData": { "mimeType": "image/png", "data": shared.picture_base64.clone() } },
                    ] },
                    "finishReason": "STOP",
                    "index": 0,
                }],
                "modelVersion": model,
            }))
            .into_response()
        }
        "predict" if model.starts_with("imagen-") => {
            let prompt = body["instances"][0]["prompt"].as_str().unwrap_or_default();
            let ratio = body["parameters"]["aspectRatio"].as_str().unwrap_or("1:1");
            if !["1:1", "3:4", "4:3", "9:16", "16:9"].contains(&ratio) {
                let body = json!({ "error": { "code": 400, "message": "Aspect ratio is not supported.", "status": "INVALID_ARGUMENT" } });
                return (StatusCode::BAD_REQUEST, Json(body)).into_response();
            }
            if prompt.contains("refuse") {
                return Json(json!({})).into_response();
            }
            Json(json!({ "predictions": [{ "bytesBase64Encoded": shared.picture_base64.clone(), "mimeType": "image/png" }] }))
                .into_response()
        }
        _ => {
            let body = json!({ "error": { "code": 404, "message": format!("models/{model} is not found"), "status": "NOT_FOUND" } });
            (StatusCode::NOT_FOUND, Json(body)).into_response()
        }
    }
}

/// BytePlus ModelArk: a bearer key; `data[0].b64_json`; errors as `{ error: { code, message,
/// param, type } }`.
async fn modelark(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    keep(
        &shared,
        "POST",
        "/modelark/api/v3/images/generations".into(),
        &body,
    );
    let error = |status: StatusCode, code: &str, message: &str| {
        let body =
            json!({ "error": { "code": code, "message": message, "param": "", "type": "BadRequest" } });
        (status, Json(body)).into_response()
    };
    if header(&headers, "authorization") != Some(&format!("Bearer {MODELARK_KEY}")) {
        return error(
            StatusCode::UNAUTHORIZED,
            "AuthenticationError",
            "The API key is invalid.",
        );
    }
    if body["model"] != "seedream-4-0-250828" {
        return error(
            StatusCode::NOT_FOUND,
            "InvalidEndpointOrModel.NotFound",
            "The model does not exist.",
        );
    }
    if prompt_of(&body).contains("refuse") {
        return error(
            StatusCode::BAD_REQUEST,
            "InputTextSensitiveContentDetected",
            "The request failed because the input text may contain sensitive information.",
        );
    }
    let data = if body["response_format"] == "b64_json" {
        json!({ "b64_json": shared.picture_base64.clone(), "size": body["size"] })
    } else {
        json!({ "url": format!("{}/delivery/seedream.png", shared.url), "size": body["size"] })
    };
    Json(json!({
        "model": body["model"],
        "created": 1_757_469_067,
        "data": [data],
        "usage": { "generated_images": 1, "output_tokens": 16384, "total_tokens": 16384 },
    }))
    .into_response()
}

fn task_id(shared: &Shared, prompt: String) -> String {
    let id = uuid::Uuid::new_v4().to_string();
    shared.prompts.lock().unwrap().insert(id.clone(), prompt);
    id
}

/// How a polled task stands: pending for its first two polls (and while a `hold` prompt is
/// held), then done.
fn ready(shared: &Shared, id: &str) -> Option<bool> {
    let prompt = shared.prompts.lock().unwrap().get(id).cloned()?;
    let mut polls = shared.polls.lock().unwrap();
    let polled = polls.entry(id.to_string()).or_default();
    *polled += 1;
    let held = prompt.contains("hold") && !shared.released.load(Ordering::SeqCst);
    Some(*polled > 2 && !held)
}

/// Black Forest Labs: `x-key`; width and height of at least 64; answers `{ id, polling_url,
/// cost }`; validation errors as FastAPI's `{ detail: [{ loc, msg, type }] }`.
async fn bfl_submit(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    keep(&shared, "POST", "/bfl/v1/flux-2-pro".into(), &body);
    if header(&headers, "x-key") != Some(BFL_KEY) {
        return (
            StatusCode::FORBIDDEN,
            Json(json!({ "detail": "Not authenticated" })),
        )
            .into_response();
    }
    let side_ok = |v: &Value| v.as_u64().is_some_and(|n| n >= 64);
    if !side_ok(&body["width"]) || !side_ok(&body["height"]) {
        let detail = json!({ "detail": [{ "loc": ["body", "width"], "msg": "Input should be greater than or equal to 64", "type": "greater_than_equal" }] });
        return (StatusCode::UNPROCESSABLE_ENTITY, Json(detail)).into_response();
    }
    let id = task_id(&shared, prompt_of(&body));
    let links = task_links_base(&shared, &headers, &prompt_of(&body));
    Json(json!({
        "id": id,
        "polling_url": format!("{links}/bfl/v1/get_result?id={id}"),
        "cost": 3.0,
        "input_mp": 0.0,
        "output_mp": 1.03,
    }))
    .into_response()
}

async fn bfl_result(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let id = query.get("id").cloned().unwrap_or_default();
    keep(
        &shared,
        "GET",
        format!("/bfl/v1/get_result?id={id}"),
        &Value::Null,
    );
    if header(&headers, "x-key") != Some(BFL_KEY) {
        return (
            StatusCode::FORBIDDEN,
            Json(json!({ "detail": "Not authenticated" })),
        )
            .into_response();
    }
    let prompt = shared
        .prompts
        .lock()
        .unwrap()
        .get(&id)
        .cloned()
        .unwrap_or_default();
    let answer = match ready(&shared, &id) {
        None => json!({ "id": id, "status": "Task not found" }),
        Some(false) => json!({ "id": id, "status": "Pending", "result": null, "progress": 0.5 }),
        Some(true) if prompt.contains("refuse") => {
            json!({ "id": id, "status": "Request Moderated", "result": null, "details": { "Moderation Reasons": ["Sexual"] } })
        }
        Some(true) => json!({
            "id": id,
            "status": "Ready",
            "result": { "sample": format!("{}/delivery/{id}.png", shared.url), "prompt": prompt, "seed": 42 },
        }),
    };
    Json(answer).into_response()
}

/// fal's queue: `Authorization: Key …`; answers the request's `status_url` and
/// `response_url` (not under the submitted path); the status is 202 while queued or running
/// and 200 once completed; the result carries the model's error when it failed.
/// fal's answer to a request without its key.
fn fal_refused(headers: &HeaderMap) -> Option<Response> {
    (header(headers, "authorization") != Some(&format!("Key {FAL_KEY}")))
        .then(|| (StatusCode::UNAUTHORIZED, Json(json!({ "detail": "Invalid key" }))).into_response())
}

async fn fal_submit(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    keep(&shared, "POST", "/fal/fal-ai/flux/krea".into(), &body);
    if let Some(refused) = fal_refused(&headers) {
        return refused;
    }
    let id = task_id(&shared, prompt_of(&body));
    let links = task_links_base(&shared, &headers, &prompt_of(&body));
    let base = format!("{links}/fal/fal-ai/flux/requests/{id}");
    Json(json!({
        "status": "IN_QUEUE",
        "request_id": id,
        "response_url": base,
        "status_url": format!("{base}/status"),
        "cancel_url": format!("{base}/cancel"),
        "queue_position": 0,
    }))
    .into_response()
}

async fn fal_status(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    keep(
        &shared,
        "GET",
        format!("/fal/fal-ai/flux/requests/{id}/status"),
        &Value::Null,
    );
    if let Some(refused) = fal_refused(&headers) {
        return refused;
    }
    let response_url = format!("{}/fal/fal-ai/flux/requests/{id}", shared.url);
    match ready(&shared, &id) {
        None => (StatusCode::NOT_FOUND, Json(json!({ "detail": "Request not found" }))).into_response(),
        Some(false) => (
            StatusCode::ACCEPTED,
            Json(json!({ "status": "IN_PROGRESS", "logs": [], "response_url": response_url })),
        )
            .into_response(),
        Some(true) => Json(json!({ "status": "COMPLETED", "logs": null, "metrics": { "inference_time": 1.2 }, "response_url": response_url }))
            .into_response(),
    }
}

async fn fal_response(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    keep(
        &shared,
        "GET",
        format!("/fal/fal-ai/flux/requests/{id}"),
        &Value::Null,
    );
    if let Some(refused) = fal_refused(&headers) {
        return refused;
    }
    let prompt = shared
        .prompts
        .lock()
        .unwrap()
        .get(&id)
        .cloned()
        .unwrap_or_default();
    if prompt.contains("refuse") {
        let detail = json!({ "detail": [{ "loc": ["body", "prompt"], "msg": "The content was flagged by a content checker.", "type": "content_policy_violation" }] });
        return (StatusCode::UNPROCESSABLE_ENTITY, Json(detail)).into_response();
    }
    Json(json!({
        "images": [{ "url": format!("{}/delivery/{id}.png", shared.url), "width": 48, "height": 32, "content_type": "image/png" }],
        "timings": { "inference": 1.2 },
        "seed": 7,
        "has_nsfw_concepts": [false],
        "prompt": prompt,
    }))
    .into_response()
}

/// Where BFL's `result.sample` and fal's `images[0].url` point.
async fn delivery(State(shared): State<Arc<Shared>>, Path(name): Path<String>) -> Response {
    keep(&shared, "GET", format!("/delivery/{name}"), &Value::Null);
    ([("content-type", "image/png")], shared.picture.clone()).into_response()
}

/// The drive's own development stand-in (`drive-image-stand-in`), started on a free loopback
/// port and killed by its PID when dropped.
pub struct StandIn {
    /// Its OpenAI-style base, like `http://127.0.0.1:41234/v1`.
    pub url: String,
    child: std::process::Child,
}

impl StandIn {
    pub fn start() -> StandIn {
        use std::io::BufRead;
        let mut child = std::process::Command::new(crate::bin("drive-image-stand-in"))
            .env("DRIVE_STAND_IN_LISTEN", "127.0.0.1:0")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("start drive-image-stand-in");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("its stdout");
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("its first line");
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("drive-image-stand-in said {line:?}"))
            .to_string();
        StandIn { url, child }
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
