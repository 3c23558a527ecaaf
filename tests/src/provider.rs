//! A stand-in for a hosted model's API, for the third parties the tests cannot reach: a local
//! HTTP server speaking OpenAI's chat completions wire format (`POST …/chat/completions`,
//! `{ choices: [{ message: { role, content, tool_calls } }] }`), answering each request with the
//! next of the turns the test wrote and keeping what it was sent. The drive's real adapter is
//! what is under test.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// One request the server was sent.
#[derive(Debug, Clone)]
pub struct Sent {
    pub path: String,
    pub authorization: Option<String>,
    pub body: Value,
}

pub struct FakeChat {
    /// The API's base, like `http://127.0.0.1:41234/v1`.
    pub url: String,
    sent: Arc<Mutex<Vec<Sent>>>,
    server: tokio::task::JoinHandle<()>,
}

impl FakeChat {
    /// A server on a free loopback port whose assistant always answers `content`.
    pub async fn start(content: &str) -> FakeChat {
        FakeChat::scripted(
            vec![json!({ "role": "assistant", "content": content })],
            Duration::ZERO,
        )
        .await
    }

    /// A server answering its requests with `messages` in turn (assistant messages, tool calls
    /// and all; the last again once they run out), each after `delay`: a model whose turns the
    /// test wrote.
    pub async fn scripted(messages: Vec<Value>, delay: Duration) -> FakeChat {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let sent = Arc::new(Mutex::new(Vec::new()));
        let answers: Arc<Vec<String>> = Arc::new(
            messages
                .into_iter()
                .map(|message| {
                    json!({
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "model": "test",
                        "choices": [{ "index": 0, "finish_reason": "stop", "message": message }],
                    })
                    .to_string()
                })
                .collect(),
        );
        let record = sent.clone();
        let server = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (record, answers) = (record.clone(), answers.clone());
                tokio::spawn(async move {
                    let (read, mut write) = stream.into_split();
                    let mut read = BufReader::new(read);
                    // Requests one after another on the connection (keep-alive).
                    while let Some(request) = read_request(&mut read).await {
                        let turn = {
                            let mut record = record.lock().unwrap();
                            record.push(request);
                            record.len() - 1
                        };
                        tokio::time::sleep(delay).await;
                        let answer = &answers[turn.min(answers.len() - 1)];
                        let response = format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{answer}",
                            answer.len()
                        );
                        if write.write_all(response.as_bytes()).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
        FakeChat { url, sent, server }
    }

    /// What it was sent, in order.
    pub fn sent(&self) -> Vec<Sent> {
        self.sent.lock().unwrap().clone()
    }
}

impl Drop for FakeChat {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn read_request(read: &mut BufReader<tokio::net::tcp::OwnedReadHalf>) -> Option<Sent> {
    let mut line = String::new();
    read.read_line(&mut line).await.ok().filter(|&n| n > 0)?;
    let path = line.split_whitespace().nth(1)?.to_string();
    let (mut length, mut authorization) = (0, None);
    loop {
        line.clear();
        read.read_line(&mut line).await.ok().filter(|&n| n > 0)?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().ok()?,
            "authorization" => authorization = Some(value.trim().to_string()),
            _ => {}
        }
    }
    let mut body = vec![0; length];
    read.read_exact(&mut body).await.ok()?;
    Some(Sent {
        path,
        authorization,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}
