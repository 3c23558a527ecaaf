//! `scripts/bench agent`: what the agent interface costs, on the real stack in release builds.
//!
//! - JSON-RPC overhead: `GetTask` and `ListTasks` (page of 50 of 60 tasks) at `/a2a` from 8
//!   clients at once, 2,000 calls each, p50 and p99, beside the REST route
//!   `/get-user-storage-usage` under the same load (the drive's lightest authenticated route:
//!   what any call pays) and `GetTask`'s SQL run straight against PostgreSQL (its floor).
//! - The local model (`drive-llm`, Qwen2.5-Coder-1.5B-Instruct): reading a prompt of fresh
//!   tokens, and generating 128 tokens after a prompt it has already read, in tokens per second;
//!   then the whole task "zip every PDF in /invoices and give me a link" through `SendMessage`
//!   to a completed task with a working zip, in seconds. Three rounds each; median and spread.

use std::time::{Duration, Instant};

use drive_tests::local_model::LocalModel;
use drive_tests::media::text_pdf;
use drive_tests::{TestApp, TestUser};
use futures::{StreamExt, stream};
use serde_json::{Value, json};

const CLIENTS: usize = 8;
const CALLS: usize = 2000;
const TASKS: usize = 60;
const ROUNDS: usize = 3;

async fn rpc(http: &reqwest::Client, app: &TestApp, token: &str, method: &str, params: Value) -> Value {
    let body: Value = http
        .post(format!("{}/a2a", app.url))
        .bearer_auth(token)
        .header("A2A-Version", "1.0")
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(body["error"].is_null(), "{method}: {body}");
    body
}

/// `CALLS` calls of `make`, `CLIENTS` at a time: p50 and p99 in milliseconds.
async fn load<F: Future<Output = ()>>(mut make: impl FnMut() -> F) -> (f64, f64) {
    let mut samples: Vec<Duration> = stream::iter(0..CALLS)
        .map(|_| {
            let call = make();
            async move {
                let start = Instant::now();
                call.await;
                start.elapsed()
            }
        })
        .buffer_unordered(CLIENTS)
        .collect()
        .await;
    samples.sort();
    let at =
        |q: f64| samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)].as_secs_f64() * 1e3;
    (at(0.5), at(0.99))
}

async fn overhead(app: &TestApp, user: &TestUser) {
    let http = reqwest::Client::new();
    let token = user.api_token.as_str();
    let mut ids = Vec::new();
    for _ in 0..TASKS {
        let sent = rpc(
            &http,
            app,
            token,
            "SendMessage",
            json!({ "message": { "messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER",
                    "parts": [{ "text": "hello" }] }, "configuration": { "returnImmediately": true } }),
        )
        .await;
        let id = sent["result"]["task"]["id"].as_str().unwrap().to_string();
        // Ended, so the token's ten-at-once limit does not stop the seeding.
        rpc(&http, app, token, "CancelTask", json!({ "id": id })).await;
        ids.push(id);
    }
    let pool = sqlx::PgPool::connect(&app.database_url).await.unwrap();
    let token_id: uuid::Uuid = sqlx::query_scalar("select token_id from agent_tasks limit 1")
        .fetch_one(&pool)
        .await
        .unwrap();
    let mut n = 0;
    let mut next = || {
        n += 1;
        ids[n % ids.len()].clone()
    };
    println!("JSON-RPC at /a2a, {CLIENTS} clients, {CALLS} calls each, ms:");
    println!("| call | p50 | p99 |");
    println!("|---|---|---|");
    for round in 0..2 {
        let get = load(|| {
            let id = next();
            let http = &http;
            async move {
                rpc(http, app, token, "GetTask", json!({ "id": id })).await;
            }
        })
        .await;
        let list = load(|| {
            let http = &http;
            async move {
                let page = rpc(http, app, token, "ListTasks", json!({ "pageSize": 50 })).await;
                assert_eq!(page["result"]["tasks"].as_array().unwrap().len(), 50);
            }
        })
        .await;
        let rest = load(|| async {
            let usage = app.call(user, "/get-user-storage-usage", None).await;
            assert_eq!(usage.status, 200);
        })
        .await;
        let sql = load(|| {
            let id: uuid::Uuid = next().parse().unwrap();
            let pool = &pool;
            async move {
                let row: Option<(uuid::Uuid, Value)> =
                    sqlx::query_as("select id, history from agent_tasks where id = $1 and token_id = $2")
                        .bind(id)
                        .bind(token_id)
                        .fetch_optional(pool)
                        .await
                        .unwrap();
                assert!(row.is_some());
            }
        })
        .await;
        if round == 0 {
            continue; // warm-up
        }
        for (name, (p50, p99)) in [
            ("GetTask", get),
            ("ListTasks (50 of 60)", list),
            ("REST /get-user-storage-usage", rest),
            ("GetTask's SQL, straight", sql),
        ] {
            println!("| {name} | {p50:.2} | {p99:.2} |");
        }
    }
}

/// Median and spread.
fn spread(mut figures: Vec<f64>) -> String {
    figures.sort_by(f64::total_cmp);
    format!(
        "{:.1} ({:.1}–{:.1})",
        figures[figures.len() / 2],
        figures[0],
        figures[figures.len() - 1]
    )
}

async fn completion(
    http: &reqwest::Client,
    model: &LocalModel,
    messages: Value,
    max_tokens: u64,
) -> (Value, f64) {
    let start = Instant::now();
    let answer: Value = http
        .post(format!("{}/chat/completions", model.url))
        .json(&json!({ "model": "local", "messages": messages, "max_tokens": max_tokens }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    (answer["usage"].clone(), start.elapsed().as_secs_f64())
}

async fn local_model(app: &mut TestApp) {
    let model = LocalModel::start().await;
    let http = reqwest::Client::new();
    let text = "Drive keeps files in folders, with tags, playlists and galleries, and runs jobs on them \
        next to the store: zips, conversions, checksums and more. "
        .repeat(12);
    let (mut reading, mut generating) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        // A prompt it has not read (its start differs from the last), answered with one token.
        let messages =
            json!([{ "role": "user", "content": format!("Round {round}-{}. {text}", uuid::Uuid::new_v4()) }]);
        let (usage, seconds) = completion(&http, &model, messages.clone(), 1).await;
        reading.push(usage["prompt_tokens"].as_f64().unwrap() / seconds);
        // The same prompt again (read already but for its last token): 128 tokens generated.
        let (usage, seconds) = completion(&http, &model, messages, 128).await;
        generating.push(usage["completion_tokens"].as_f64().unwrap() / seconds);
    }
    println!();
    println!(
        "the local model (drive-llm: Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 1 thread generating, all reading):"
    );
    println!("| figure | median (min–max) |");
    println!("|---|---|");
    println!("| reading a prompt, tokens/s | {} |", spread(reading));
    println!("| generating, tokens/s | {} |", spread(generating));

    app.start_worker(&[
        ("DRIVE_AGENT_MODEL_URL", model.url.as_str()),
        ("DRIVE_AGENT_MODEL", "qwen2.5-coder-1.5b-instruct"),
        ("DRIVE_AGENT_TIMEOUT_SECONDS", "600"),
    ])
    .await;
    let mut took = Vec::new();
    for _ in 0..ROUNDS {
        let user = app.user(Some("Pro")).await;
        for month in ["january", "february", "march"] {
            let id = app
                .upload(
                    &user,
                    &format!("invoice-{month}.pdf"),
                    "Pdf",
                    "application/pdf",
                    text_pdf(&[vec![format!("Invoice for {month}")]]),
                )
                .await;
            let moved = app
                .call(
                    &user,
                    "/move-files",
                    Some(json!({ "fileIds": [id], "folder": "/invoices" })),
                )
                .await;
            assert_eq!(moved.status, 200);
        }
        let start = Instant::now();
        let sent = rpc(
            &http,
            app,
            &user.api_token,
            "SendMessage",
            json!({ "message": { "messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER",
                    "parts": [{ "text": "zip every PDF in /invoices and give me a link" }] } }),
        )
        .await;
        let seconds = start.elapsed().as_secs_f64();
        let task = &sent["result"]["task"];
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
        let linked = task["status"]["message"]["parts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["filename"].as_str().is_some_and(|n| n.ends_with(".zip")));
        assert!(linked, "no zip linked: {task}");
        took.push(seconds);
    }
    println!(
        "| \"zip every PDF in /invoices and give me a link\", s to a linked zip | {} |",
        spread(took)
    );
}

#[tokio::main]
async fn main() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    overhead(&app, &user).await;
    local_model(&mut app).await;
}
