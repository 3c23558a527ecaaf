//! The agent interface as clients actually speak to it: a2a-java's empty strings for unset
//! fields, a task working from the start, every state the protocol names as a `ListTasks`
//! filter, a blocking `SendMessage` that answers early saying why, and refusals that say what
//! was wrong.

use std::time::{Duration, Instant};

use drive_tests::provider::FakeChat;
use drive_tests::*;
use serde_json::{Value, json};

use crate::agent::{call, error_code, rpc, task_of, text_message};

/// `SendMessage` params as a2a-java 1.x writes them for a new message: ProtoJSON with every
/// field present, the unset strings empty.
fn as_a2a_java_sends(text: &str, return_immediately: bool) -> Value {
    json!({
        "message": {
            "messageId": uuid::Uuid::new_v4().to_string(),
            "contextId": "",
            "taskId": "",
            "role": "ROLE_USER",
            "parts": [{ "text": text }],
            "metadata": {},
            "extensions": [],
            "referenceTaskIds": []
        },
        "configuration": {
            "acceptedOutputModes": [],
            "returnImmediately": return_immediately
        },
        "metadata": {}
    })
}

#[tokio::test]
async fn empty_strings_are_unset_and_a_task_is_working_from_the_start() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let model = FakeChat::scripted(
        vec![call("reply", json!({ "text": "done" }))],
        Duration::from_secs(3),
    )
    .await;
    app.start_worker(&[
        ("DRIVE_AGENT_MODEL_URL", &model.url),
        ("DRIVE_AGENT_MODEL", "scripted"),
    ])
    .await;
    let token = user.api_token.as_str();

    // As a2a-java sends a new message: a task, not -32001, and working at once.
    let sent = rpc(&app, token, "SendMessage", as_a2a_java_sends("hello", true)).await;
    let task = task_of(&sent);
    assert_eq!(task["status"]["state"], "TASK_STATE_WORKING", "{sent}");
    assert!(
        uuid::Uuid::parse_str(task["contextId"].as_str().unwrap()).is_ok(),
        "{task}"
    );
    let listed = rpc(
        &app,
        token,
        "ListTasks",
        json!({ "status": "TASK_STATE_WORKING", "contextId": "" }),
    )
    .await;
    assert_eq!(listed["result"]["tasks"][0]["id"], task["id"], "{listed}");
    // Blocking, as a2a-java sends it by default: answered at the end.
    let blocking = rpc(&app, token, "SendMessage", as_a2a_java_sends("again", false)).await;
    assert_eq!(
        task_of(&blocking)["status"]["state"],
        "TASK_STATE_COMPLETED",
        "{blocking}"
    );

    // Every state the protocol names filters; those no drive task takes give an empty page.
    for state in [
        "TASK_STATE_SUBMITTED",
        "TASK_STATE_INPUT_REQUIRED",
        "TASK_STATE_AUTH_REQUIRED",
        "TASK_STATE_REJECTED",
    ] {
        let page = rpc(&app, token, "ListTasks", json!({ "status": state })).await;
        assert_eq!(page["result"]["tasks"], json!([]), "{state}: {page}");
        assert_eq!(page["result"]["totalSize"], 0, "{state}: {page}");
    }
    let completed = rpc(
        &app,
        token,
        "ListTasks",
        json!({ "status": "TASK_STATE_COMPLETED" }),
    )
    .await;
    assert!(
        completed["result"]["totalSize"].as_i64().unwrap() >= 1,
        "{completed}"
    );
    let unknown = rpc(
        &app,
        token,
        "ListTasks",
        json!({ "status": "TASK_STATE_SLEEPING" }),
    )
    .await;
    assert_eq!(error_code(&unknown), -32602, "{unknown}");

    // A contextId is any uuid; anything else is refused saying so.
    let mut bad = text_message("hi");
    bad["contextId"] = json!("ctx-from-elsewhere");
    let refused = rpc(&app, token, "SendMessage", json!({ "message": bad })).await;
    assert_eq!(error_code(&refused), -32602, "{refused}");
    assert_eq!(
        refused["error"]["message"], "message.contextId: must be a uuid",
        "{refused}"
    );
    let mut made_up = text_message("hi");
    made_up["contextId"] = json!(uuid::Uuid::new_v4().to_string());
    let taken = rpc(
        &app,
        token,
        "SendMessage",
        json!({ "message": made_up, "configuration": { "returnImmediately": true } }),
    )
    .await;
    assert_eq!(task_of(&taken)["contextId"], made_up["contextId"], "{taken}");
}

#[tokio::test]
async fn a_blocking_send_answers_early_saying_the_task_is_still_working() {
    let mut app = TestApp::spawn_with(&[("DRIVE_AGENT_ANSWER_WITHIN_SECONDS", "2")]).await;
    let user = app.user(Some("Pro")).await;
    // The model takes 8 s: longer than the answer's 2.
    let model = FakeChat::scripted(
        vec![call("reply", json!({ "text": "at last" }))],
        Duration::from_secs(8),
    )
    .await;
    app.start_worker(&[
        ("DRIVE_AGENT_MODEL_URL", &model.url),
        ("DRIVE_AGENT_MODEL", "scripted"),
    ])
    .await;
    let token = user.api_token.as_str();
    let card_url = format!("{}/.well-known/agent-card.json", app.url);
    let served = reqwest::get(&card_url).await.unwrap();
    let etag = served.headers()["etag"].to_str().unwrap().to_string();
    let card: Value = served.json().await.unwrap();
    // The card's ETag: asked again with it, 304 and no body; with another, the card.
    let http = reqwest::Client::new();
    for (given, status) in [
        (etag.clone(), 304),
        (format!("W/{etag}"), 304),
        ("\"other\"".to_string(), 200),
    ] {
        let again = http
            .get(&card_url)
            .header("If-None-Match", &given)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), status, "{given}");
        assert_eq!(again.headers()["etag"].to_str().unwrap(), etag);
        let body = again.bytes().await.unwrap();
        assert_eq!(body.is_empty(), status == 304, "{given}");
    }
    assert!(
        card["description"]
            .as_str()
            .unwrap()
            .contains("after 2 seconds: follow it with GetTask"),
        "{card}"
    );

    let started = Instant::now();
    let answer = rpc(
        &app,
        token,
        "SendMessage",
        json!({ "message": text_message("take your time") }),
    )
    .await;
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(2) && waited < Duration::from_secs(6),
        "{waited:?}"
    );
    let task = task_of(&answer);
    assert_eq!(task["status"]["state"], "TASK_STATE_WORKING", "{answer}");
    let said = task["status"]["message"]["parts"][0]["text"].as_str().unwrap();
    assert!(
        said.starts_with("Still working") && said.contains(task["id"].as_str().unwrap()),
        "{said}"
    );
    assert_eq!(task["status"]["message"]["role"], "ROLE_AGENT");
    // GetTask follows it to its end.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let now = rpc(&app, token, "GetTask", json!({ "id": task["id"] })).await;
        if now["result"]["status"]["state"] == "TASK_STATE_COMPLETED" {
            break;
        }
        assert!(Instant::now() < deadline, "{now}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// The official JavaScript client (npm `@a2a-js/sdk`, installed by the scripts from a pinned
/// lockfile), from outside, run by node: it resolves the card, sends its own message (whose
/// unset `contextId` and `taskId` it writes as it will), follows the task, lists it, and maps two
/// refusals to its own error classes.
#[tokio::test]
async fn the_javascript_a2a_sdk_drives_a_task_end_to_end() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let model = FakeChat::scripted(
        vec![call("reply", json!({ "text": "Hello from the drive." }))],
        Duration::ZERO,
    )
    .await;
    app.start_worker(&[
        ("DRIVE_AGENT_MODEL_URL", &model.url),
        ("DRIVE_AGENT_MODEL", "scripted"),
    ])
    .await;
    let script = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("a2a/drive_task.mjs");
    let output = tokio::process::Command::new("node")
        .arg(script)
        .args([app.url.as_str(), user.api_token.as_str(), "Say hello"])
        .env("NODE_PATH", env("DRIVE_A2A_NODE_PATH"))
        .output()
        .await
        .expect("run the @a2a-js/sdk client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: Value = serde_json::from_str(stdout.trim()).expect("the script's JSON");
    let sent = &seen["sent"];
    assert_eq!(sent["state"], "TASK_STATE_COMPLETED", "{seen}");
    assert_eq!(sent["reply"], "Hello from the drive.", "{seen}");
    assert_eq!(seen["got"]["id"], sent["id"], "{seen}");
    assert_eq!(seen["got"]["history"], 1, "{seen}");
    assert_eq!(seen["listed"], json!([sent["id"]]), "{seen}");
    assert_eq!(seen["unknown"], "TaskNotFoundError", "{seen}");
    assert_eq!(seen["cancel"], "TaskNotCancelableError", "{seen}");
}
