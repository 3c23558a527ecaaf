//! The agent interface over real HTTP: A2A 1.0 JSON-RPC at `/a2a` with an API token as bearer,
//! the agent card, every error row, tasks run by the farm with a scripted model (a local server
//! speaking OpenAI's chat completions with tool calls, the drive's real adapter under test)
//! calling the drive's routes as the task's token; paging, conversations, per-token visibility
//! and cancel; the account owner's view of every task (`/select-agent-tasks`, `/stop-agent-task`).

use std::time::Duration;

use drive_tests::oauth::OAuthClient;
use drive_tests::provider::FakeChat;
use drive_tests::*;
use serde_json::{Value, json};

/// POSTs a JSON-RPC call to `/a2a` as `token` with `A2A-Version: 1.0`; answers the HTTP status
/// and the body.
pub(crate) async fn rpc(app: &TestApp, token: &str, method: &str, params: Value) -> Value {
    let response = reqwest::Client::new()
        .post(format!("{}/a2a", app.url))
        .bearer_auth(token)
        .header("A2A-Version", "1.0")
        .json(&json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "JSON-RPC answers go out as 200");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["id"], 7, "{body}");
    body
}

/// The error's code, having checked its shape: `ErrorInfo` in `data` for the A2A codes.
pub(crate) fn error_code(body: &Value) -> i64 {
    let error = &body["error"];
    assert!(body.get("result").is_none(), "{body}");
    let code = error["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("no error: {body}"));
    assert!(error["message"].is_string(), "{body}");
    if (-32099..=-32001).contains(&code) {
        let info = &error["data"][0];
        assert_eq!(
            info["@type"], "type.googleapis.com/google.rpc.ErrorInfo",
            "{body}"
        );
        assert_eq!(info["domain"], "a2a-protocol.org", "{body}");
        assert!(info["reason"].is_string(), "{body}");
    }
    code
}

pub(crate) fn text_message(text: &str) -> Value {
    json!({ "messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER", "parts": [{ "text": text }] })
}

/// The last message of the model's `turn`th request (whoever said it).
fn last_sent(model: &FakeChat, turn: usize) -> Value {
    let sent = model.sent();
    sent[turn].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone()
}

/// What the model was told its call came to: the last message of its `turn`th request.
pub(crate) fn told(model: &FakeChat, turn: usize) -> Value {
    let last = last_sent(model, turn);
    assert_eq!(last["role"], "tool", "{last}");
    serde_json::from_str(last["content"].as_str().unwrap()).unwrap()
}

/// An assistant turn calling `name` with `arguments`.
pub(crate) fn call(name: &str, arguments: Value) -> Value {
    json!({ "role": "assistant", "content": null, "tool_calls": [{
        "id": format!("call-{}", uuid::Uuid::new_v4().simple()), "type": "function",
        "function": { "name": name, "arguments": arguments.to_string() }
    }] })
}

#[tokio::test]
async fn the_agent_card_says_where_and_how_to_call() {
    let app = TestApp::spawn().await;
    let response = reqwest::get(format!("{}/.well-known/agent-card.json", app.url))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["cache-control"]
            .to_str()
            .unwrap()
            .contains("max-age")
    );
    let card: Value = response.json().await.unwrap();
    for field in [
        "name",
        "description",
        "version",
        "capabilities",
        "skills",
        "defaultInputModes",
        "defaultOutputModes",
    ] {
        assert!(!card[field].is_null(), "{field}: {card}");
    }
    let interface = &card["supportedInterfaces"][0];
    assert_eq!(interface["url"], format!("{}/a2a", app.url));
    assert_eq!(interface["protocolBinding"], "JSONRPC");
    assert_eq!(interface["protocolVersion"], "1.0");
    assert_eq!(card["capabilities"]["streaming"], false);
    assert_eq!(card["capabilities"]["pushNotifications"], true);
    assert_eq!(
        card["securitySchemes"]["apiToken"]["httpAuthSecurityScheme"]["scheme"],
        "Bearer"
    );
    assert_eq!(
        card["securityRequirements"][0]["schemes"]["apiToken"]["list"],
        json!([])
    );
}

#[tokio::test]
async fn every_error_row_answers_its_code() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let token = &user.api_token;
    let http = reqwest::Client::new();
    let post = |body: String, version: Option<&'static str>, content_type: &'static str| {
        let mut request = http
            .post(format!("{}/a2a/", app.url))
            .bearer_auth(token)
            .header("Content-Type", content_type)
            .body(body);
        if let Some(version) = version {
            request = request.header("A2A-Version", version);
        }
        async move {
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), 200);
            response.json::<Value>().await.unwrap()
        }
    };
    let json = "application/json";
    assert_eq!(
        error_code(&post("{not json".into(), Some("1.0"), json).await),
        -32700
    );
    assert_eq!(error_code(&post("[1]".into(), Some("1.0"), json).await), -32600);
    assert_eq!(
        error_code(
            &post(
                r#"{"jsonrpc":"1.0","id":1,"method":"GetTask"}"#.into(),
                Some("1.0"),
                json
            )
            .await
        ),
        -32600
    );
    let get = r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}"#;
    for version in [None, Some("99.0"), Some("0.3")] {
        let body = post(get.into(), version, json).await;
        assert_eq!(error_code(&body), -32009, "{version:?}: {body}");
        assert_eq!(body["error"]["data"][0]["reason"], "VERSION_NOT_SUPPORTED");
    }
    assert_eq!(
        error_code(&post(get.into(), Some("1.0.2"), json).await),
        -32001,
        "a patch version speaks 1.0"
    );
    assert_eq!(
        error_code(&post(get.into(), Some("1.0"), "text/plain").await),
        -32005
    );
    // A part of a media type the agent does not take is -32005 naming it, and the card names
    // what it takes; a file of a type the drive knows, or stated as any bytes, is taken.
    let card: Value = reqwest::get(format!("{}/.well-known/agent-card.json", app.url))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let modes = card["defaultInputModes"].as_array().unwrap();
    for taken in [
        "text/plain",
        "application/json",
        "application/pdf",
        "application/octet-stream",
    ] {
        assert!(modes.contains(&json!(taken)), "{taken}: {modes:?}");
    }
    assert!(!modes.contains(&json!("application/x-unsupported-tck-type")));
    let odd = json!({ "message": { "messageId": "m-odd", "role": "ROLE_USER", "parts": [
        { "text": "keep this" },
        { "raw": "dGNr", "mediaType": "application/x-unsupported-tck-type" }
    ] } });
    let refused = rpc(&app, token, "SendMessage", odd).await;
    assert_eq!(error_code(&refused), -32005, "{refused}");
    assert_eq!(
        refused["error"]["data"][0]["reason"],
        "CONTENT_TYPE_NOT_SUPPORTED"
    );
    assert_eq!(
        refused["error"]["data"][0]["metadata"]["mediaType"],
        "application/x-unsupported-tck-type"
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("message.parts[1]"),
        "{refused}"
    );
    let image_as_text = json!({ "message": { "messageId": "m-img", "role": "ROLE_USER",
        "parts": [{ "text": "a", "mediaType": "image/png" }] } });
    assert_eq!(
        error_code(&rpc(&app, token, "SendMessage", image_as_text).await),
        -32005
    );
    let listed = rpc(&app, token, "ListTasks", json!({})).await;
    assert_eq!(listed["result"]["tasks"], json!([]), "no task was made: {listed}");

    assert_eq!(
        error_code(&rpc(&app, token, "NonExistentMethod", json!({})).await),
        -32601
    );
    let missing = rpc(&app, token, "SendMessage", json!({})).await;
    assert_eq!(error_code(&missing), -32602);
    assert!(
        missing["error"]["message"].as_str().unwrap().contains("message"),
        "{missing}"
    );
    let two_kinds = rpc(
        &app,
        token,
        "SendMessage",
        json!({ "message": { "messageId": "m", "role": "ROLE_USER", "parts": [{ "text": "a", "url": "https://example.com/" }] } }),
    )
    .await;
    assert_eq!(error_code(&two_kinds), -32602);
    assert_eq!(
        two_kinds["error"]["data"][0]["fieldViolations"][0]["field"],
        "message.parts[0]"
    );
    let bad_role =
        json!({ "message": { "messageId": "m", "role": "ROLE_AGENT", "parts": [{ "text": "a" }] } });
    assert_eq!(
        error_code(&rpc(&app, token, "SendMessage", bad_role).await),
        -32602
    );
    let page = rpc(&app, token, "ListTasks", json!({ "pageSize": 101 })).await;
    assert_eq!(error_code(&page), -32602);
    assert_eq!(
        error_code(&rpc(&app, token, "ListTasks", json!({ "pageToken": "nope" })).await),
        -32602
    );
    assert_eq!(
        error_code(&rpc(&app, token, "GetTask", json!({ "id": "x", "historyLength": -1 })).await),
        -32602
    );

    let unknown = uuid::Uuid::new_v4().to_string();
    let not_found = rpc(&app, token, "GetTask", json!({ "id": unknown })).await;
    assert_eq!(error_code(&not_found), -32001);
    assert_eq!(not_found["error"]["data"][0]["reason"], "TASK_NOT_FOUND");
    assert_eq!(
        not_found["error"]["data"][0]["metadata"]["taskId"],
        unknown.as_str()
    );
    assert_eq!(
        error_code(&rpc(&app, token, "CancelTask", json!({ "id": unknown })).await),
        -32001
    );
    let follow_up = json!({ "message": { "messageId": "m", "role": "ROLE_USER", "taskId": unknown, "parts": [{ "text": "a" }] } });
    assert_eq!(
        error_code(&rpc(&app, token, "SendMessage", follow_up).await),
        -32001
    );
    assert_eq!(
        error_code(&rpc(&app, token, "SendStreamingMessage", json!({})).await),
        -32004
    );
    assert_eq!(
        error_code(&rpc(&app, token, "SubscribeToTask", json!({ "id": unknown })).await),
        -32004
    );
    assert_eq!(
        error_code(&rpc(&app, token, "GetExtendedAgentCard", json!({})).await),
        -32004
    );
    for method in [
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
    ] {
        assert_eq!(
            error_code(&rpc(&app, token, method, json!({ "taskId": unknown, "id": "x" })).await),
            -32001,
            "{method}"
        );
    }

    // No token, or a made-up one: HTTP 401 before anything is read.
    let refused = http
        .post(format!("{}/a2a", app.url))
        .header("A2A-Version", "1.0")
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "ListTasks" }))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    assert_eq!(refused.headers()["www-authenticate"], "Bearer");
    let made_up = http
        .post(format!("{}/a2a", app.url))
        .bearer_auth("drive_api_madeup")
        .header("A2A-Version", "1.0")
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "ListTasks" }))
        .send()
        .await
        .unwrap();
    assert_eq!(made_up.status(), 401);
}

/// Starts a worker whose agent's model is `model`.
async fn with_model(app: &mut TestApp, model: &FakeChat) {
    app.start_worker(&[
        ("DRIVE_AGENT_MODEL_URL", &model.url),
        ("DRIVE_AGENT_MODEL", "scripted"),
    ])
    .await;
}

/// The task in a `SendMessage` answer, checked to be one.
pub(crate) fn task_of(body: &Value) -> Value {
    let task = body["result"]["task"].clone();
    assert!(task["id"].is_string(), "{body}");
    task
}

#[tokio::test]
async fn a_task_finds_and_links_files_as_its_token_and_replies() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let invoice = app
        .upload(
            &user,
            "march.pdf",
            "Pdf",
            "application/pdf",
            b"%PDF-1.4 march".to_vec(),
        )
        .await;
    let moved = app
        .call(
            &user,
            "/move-files",
            Some(json!({ "fileIds": [invoice], "folder": "/invoices" })),
        )
        .await;
    assert_eq!(moved.status, 200, "{}", moved.body);
    let model = FakeChat::scripted(
        vec![
            call("list_files", json!({ "folder": "/invoices", "types": ["Pdf"] })),
            call("get_link", json!({ "text": "march", "folder": "/invoices" })),
            call("reply", json!({ "text": "Here is the March invoice." })),
        ],
        Duration::ZERO,
    )
    .await;
    with_model(&mut app, &model).await;

    let answer = rpc(
        &app,
        &user.api_token,
        "SendMessage",
        json!({ "message": text_message("Give me a link to the March invoice") }),
    )
    .await;
    let task = task_of(&answer);
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{answer}");
    let reply = &task["status"]["message"];
    assert_eq!(reply["role"], "ROLE_AGENT");
    // The text as the model wrote it, then the link its get_link made, attached by the drive.
    assert_eq!(reply["parts"][0], json!({ "text": "Here is the March invoice." }));
    let link = &reply["parts"][1];
    assert_eq!(link["filename"], "march.pdf", "{reply}");
    assert_eq!(link["mediaType"], "application/pdf", "{reply}");
    assert_eq!(reply["parts"].as_array().unwrap().len(), 2, "{reply}");
    let (status, bytes) = get(link["url"].as_str().unwrap()).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(bytes, b"%PDF-1.4 march");
    assert_eq!(reply["taskId"], task["id"]);
    assert_eq!(reply["contextId"], task["contextId"]);
    assert_eq!(task["artifacts"][0]["name"], "Reply");
    assert_eq!(task["artifacts"][0]["parts"], reply["parts"]);
    let history = task["history"].as_array().unwrap();
    assert_eq!(history.len(), 2, "{task}");
    assert_eq!(history[0]["role"], "ROLE_USER");
    assert_eq!(history[1], *reply);
    let stamp = task["status"]["timestamp"].as_str().unwrap();
    assert!(stamp.ends_with('Z') && stamp.contains('.'), "{stamp}");

    // The model was told the tools, made to call one, and given what the drive answered.
    let sent = model.sent();
    assert_eq!(sent.len(), 3, "{sent:?}");
    let first = &sent[0].body;
    assert_eq!(first["model"], "scripted");
    assert_eq!(first["tool_choice"], "required");
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "list_files",
            "get_link",
            "zip_files",
            "move_files",
            "tag_files",
            "trash_files",
            "restore_files",
            "ask_for_files",
            "share_for_review",
            "make_image",
            "run_template",
            "run_job",
            "wait_for",
            "reply"
        ]
    );
    assert_eq!(first["messages"][0]["role"], "system");
    assert_eq!(
        first["messages"].as_array().unwrap().last().unwrap()["content"],
        "Give me a link to the March invoice"
    );
    let listed = sent[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(listed["role"], "tool");
    let listed: Value = serde_json::from_str(listed["content"].as_str().unwrap()).unwrap();
    assert_eq!(listed["files"][0]["id"], invoice.to_string(), "{listed}");
    assert_eq!(listed["files"][0]["name"], "march.pdf");
    assert_eq!(listed["files"][0]["folder"], "/invoices/");
    let linked = sent[2].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    // The model is told the link is attached, not given it to copy.
    let linked: Value = serde_json::from_str(linked["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        linked,
        json!({ "fileName": "march.pdf", "link": "attached to your reply as march.pdf" })
    );

    let got = rpc(
        &app,
        &user.api_token,
        "GetTask",
        json!({ "id": task["id"], "historyLength": 1 }),
    )
    .await;
    assert_eq!(got["result"]["id"], task["id"]);
    assert_eq!(got["result"]["history"], json!([reply]));
    // The task's session ended with it.
    let sessions: i64 = sqlx::query_scalar("select count(*) from sessions where user_id = $1")
        .bind(user.id)
        .fetch_one(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(sessions, 1, "only the test's own session is left");
}

#[tokio::test]
async fn tasks_are_their_tokens_paged_newest_first_and_a_context_is_one_conversation() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let model = FakeChat::scripted(vec![call("reply", json!({ "text": "done" }))], Duration::ZERO).await;
    with_model(&mut app, &model).await;
    let token = &user.api_token;
    let send = |message: Value| rpc(&app, token, "SendMessage", json!({ "message": message }));
    let first = task_of(&send(text_message("first question")).await);
    let mut follow = text_message("second question");
    follow["contextId"] = first["contextId"].clone();
    let second = task_of(&send(follow).await);
    assert_eq!(second["contextId"], first["contextId"]);
    assert_ne!(second["id"], first["id"]);
    let third = task_of(&send(text_message("elsewhere")).await);
    assert_ne!(third["contextId"], first["contextId"]);
    // The second task's model read the first task's question and answer first.
    let conversation: Vec<(String, String)> = model.sent()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected = [
        ("user", "first question"),
        ("assistant", "done"),
        ("user", "second question"),
    ];
    assert_eq!(
        conversation,
        expected.map(|(r, c)| (r.to_string(), c.to_string()))
    );

    // Newest first, two a page.
    let page = rpc(&app, token, "ListTasks", json!({ "pageSize": 2 })).await;
    let result = &page["result"];
    assert_eq!(result["totalSize"], 3, "{page}");
    assert_eq!(result["pageSize"], 2);
    let ids: Vec<&Value> = result["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["id"])
        .collect();
    assert_eq!(ids, [&third["id"], &second["id"]]);
    assert!(
        result["tasks"][0].get("artifacts").is_none(),
        "artifacts only when asked"
    );
    let next = result["nextPageToken"].as_str().unwrap();
    assert!(!next.is_empty());
    let rest = rpc(
        &app,
        token,
        "ListTasks",
        json!({ "page_size": 2, "page_token": next, "include_artifacts": true }),
    )
    .await;
    assert_eq!(rest["result"]["tasks"].as_array().unwrap().len(), 1);
    assert_eq!(rest["result"]["tasks"][0]["id"], first["id"]);
    assert_eq!(rest["result"]["tasks"][0]["artifacts"][0]["name"], "Reply");
    assert_eq!(rest["result"]["nextPageToken"], "");
    let context = rpc(
        &app,
        token,
        "ListTasks",
        json!({ "contextId": first["contextId"], "historyLength": 0 }),
    )
    .await;
    assert_eq!(context["result"]["totalSize"], 2);
    assert!(
        context["result"]["tasks"][0].get("history").is_none(),
        "{context}"
    );
    let failed = rpc(&app, token, "ListTasks", json!({ "status": "TASK_STATE_FAILED" })).await;
    assert_eq!(
        failed["result"],
        json!({ "tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0 })
    );

    // Ended tasks are not picked up again, nor canceled.
    let mut again = text_message("more");
    again["taskId"] = first["id"].clone();
    assert_eq!(error_code(&send(again).await), -32004);
    let cancel = rpc(&app, token, "CancelTask", json!({ "id": first["id"] })).await;
    assert_eq!(error_code(&cancel), -32002);
    assert_eq!(cancel["error"]["data"][0]["reason"], "TASK_NOT_CANCELABLE");

    // Another token of the same account sees none of them.
    let other: Value =
        serde_json::from_str(&app.admin(&["create-token", "--handle", &user.handle, "--json"])).unwrap();
    let other = other["apiToken"].as_str().unwrap();
    assert_eq!(
        error_code(&rpc(&app, other, "GetTask", json!({ "id": first["id"] })).await),
        -32001
    );
    assert_eq!(
        error_code(&rpc(&app, other, "CancelTask", json!({ "id": first["id"] })).await),
        -32001
    );
    let theirs = rpc(&app, other, "ListTasks", json!({})).await;
    assert_eq!(theirs["result"]["totalSize"], 0, "{theirs}");
    let mut borrowed = text_message("into their conversation");
    borrowed["taskId"] = first["id"].clone();
    assert_eq!(
        error_code(&rpc(&app, other, "SendMessage", json!({ "message": borrowed })).await),
        -32001
    );
}

#[tokio::test]
async fn a_task_returned_at_once_can_be_canceled_mid_call_and_its_calls_stop() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    // Each turn of the model takes 4 s: the cancel comes while the first is under way.
    let model = FakeChat::scripted(
        vec![
            call("list_files", json!({})),
            call("reply", json!({ "text": "too late" })),
        ],
        Duration::from_secs(4),
    )
    .await;
    with_model(&mut app, &model).await;
    let token = &user.api_token;
    let started = std::time::Instant::now();
    let answer = rpc(
        &app,
        token,
        "SendMessage",
        json!({ "message": text_message("list my files"), "configuration": { "returnImmediately": true } }),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "answered after {:?}",
        started.elapsed()
    );
    let task = task_of(&answer);
    assert_eq!(
        task["status"]["state"], "TASK_STATE_WORKING",
        "accepted work is working: {task}"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while model.sent().is_empty() {
        assert!(std::time::Instant::now() < deadline, "the model was never asked");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let working = rpc(&app, token, "GetTask", json!({ "id": task["id"] })).await;
    assert_eq!(
        working["result"]["status"]["state"], "TASK_STATE_WORKING",
        "{working}"
    );
    let canceled = rpc(&app, token, "CancelTask", json!({ "id": task["id"] })).await;
    assert_eq!(
        canceled["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{canceled}"
    );
    // The model's answer comes after the cancel: nothing follows from it.
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(model.sent().len(), 1, "the canceled task went on");
    let after = rpc(&app, token, "GetTask", json!({ "id": task["id"] })).await;
    assert_eq!(
        after["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{after}"
    );
    assert_eq!(
        error_code(&rpc(&app, token, "CancelTask", json!({ "id": task["id"] })).await),
        -32002
    );
}

#[tokio::test]
async fn a_token_has_at_most_ten_tasks_under_way() {
    // No worker: every task stays submitted.
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let send = || {
        rpc(
            &app,
            &user.api_token,
            "SendMessage",
            json!({ "message": text_message("wait"), "configuration": { "returnImmediately": true } }),
        )
    };
    let mut first = None;
    for _ in 0..10 {
        let task = task_of(&send().await);
        first.get_or_insert(task["id"].clone());
    }
    let eleventh = send().await;
    assert_eq!(error_code(&eleventh), -32000, "{eleventh}");
    assert!(
        eleventh["error"]["message"]
            .as_str()
            .unwrap()
            .contains("under way"),
        "{eleventh}"
    );
    // Another token of the account has its own ten; a canceled task makes room.
    let other: Value =
        serde_json::from_str(&app.admin(&["create-token", "--handle", &user.handle, "--json"])).unwrap();
    let other = other["apiToken"].as_str().unwrap();
    let theirs = rpc(
        &app,
        other,
        "SendMessage",
        json!({ "message": text_message("mine"), "configuration": { "returnImmediately": true } }),
    )
    .await;
    task_of(&theirs);
    let canceled = rpc(
        &app,
        &user.api_token,
        "CancelTask",
        json!({ "id": first.unwrap() }),
    )
    .await;
    assert_eq!(
        canceled["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{canceled}"
    );
    task_of(&send().await);
}

/// Through A2A a task is its token's alone; the account's owner sees them all, whichever token
/// or app started them, each saying what started it, and stops any that has not ended. An app's
/// token may not, and another account's task is one that does not exist.
#[tokio::test]
async fn the_owner_sees_and_stops_every_task_of_the_account_and_an_app_cannot() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let stranger = app.user(Some("Pro")).await;
    let made: Value =
        serde_json::from_str(&app.admin(&["create-token", "--handle", &user.handle, "--json"])).unwrap();
    let second = made["apiToken"].as_str().unwrap().to_string();
    let client = OAuthClient::register(&app, "Helper app", "https://app.example/cb").await;
    let app_token = client
        .connect(&app, &user.api_token, &["read", "write", "delete"])
        .await;
    // No worker runs: every task stays working.
    let ask = |token: String, text: &'static str| {
        let app = &app;
        async move {
            let answer = rpc(
                app,
                &token,
                "SendMessage",
                json!({ "message": text_message(text), "configuration": { "returnImmediately": true } }),
            )
            .await;
            task_of(&answer)["id"].as_str().unwrap().to_string()
        }
    };
    let own = ask(user.api_token.clone(), "first, from the account's token").await;
    let by_second = ask(second.clone(), "second, from another token").await;
    let by_app = ask(app_token.clone(), "third, from an app").await;
    let theirs = ask(stranger.api_token.clone(), "someone else's").await;

    let listed = app.call(&user, "/select-agent-tasks", None).await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    let tasks = listed.body["tasks"].as_array().unwrap();
    let ids: Vec<&str> = tasks.iter().map(|t| t["taskId"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [&by_app, &by_second, &own],
        "the latest first, none of another account's"
    );
    assert_eq!(tasks[0]["startedWith"], "app", "{}", listed.body);
    assert_eq!(tasks[0]["startedBy"], "Helper app");
    assert_eq!(tasks[1]["startedWith"], "token");
    assert_eq!(tasks[2]["asked"], "first, from the account's token");
    assert!(
        tasks
            .iter()
            .all(|t| t["state"] == "working" && t["waitingFor"].is_null()),
        "{}",
        listed.body
    );
    assert_eq!(listed.body["nextCursor"], Value::Null);

    // A page at a time, nothing repeated or skipped.
    let first = app
        .call(&user, "/select-agent-tasks", Some(json!({ "limit": 2 })))
        .await;
    let cursor = first.body["nextCursor"].as_str().unwrap().to_string();
    let rest = app
        .call(
            &user,
            "/select-agent-tasks",
            Some(json!({ "limit": 2, "cursor": cursor })),
        )
        .await;
    assert_eq!(rest.body["tasks"][0]["taskId"], own, "{}", rest.body);
    assert_eq!(rest.body["tasks"].as_array().unwrap().len(), 1);
    assert_eq!(rest.body["nextCursor"], Value::Null);
    let waiting = app
        .call(&user, "/select-agent-tasks", Some(json!({ "state": "waiting" })))
        .await;
    assert_eq!(waiting.body["tasks"], json!([]), "{}", waiting.body);
    for (body, field) in [
        (json!({ "state": "asleep" }), "state"),
        (json!({ "cursor": "not a cursor" }), "cursor"),
        (json!({ "limit": 0 }), "limit"),
    ] {
        let refused = app.call(&user, "/select-agent-tasks", Some(body)).await;
        assert_eq!(refused.status, 400, "{}", refused.body);
        assert_eq!(refused.body["field"], field, "{}", refused.body);
    }

    // An app, even with every scope, sees and stops none of them.
    let app_session = app.exchange(&app_token).await.body["gelToken"]
        .as_str()
        .unwrap()
        .to_string();
    for (route, body) in [
        ("/select-agent-tasks", json!({})),
        ("/stop-agent-task", json!({ "taskId": own })),
    ] {
        app.send(Some(&app_session), Some(APP_ID), route, Some(body))
            .await
            .assert_error(403, "insufficient_scope");
    }

    // The owner stops the other token's task: canceled for that token too.
    for missing in [theirs.clone(), uuid::Uuid::new_v4().to_string()] {
        app.call(&user, "/stop-agent-task", Some(json!({ "taskId": missing })))
            .await
            .assert_error(404, "task_not_found");
    }
    let stopped = app
        .call(&user, "/stop-agent-task", Some(json!({ "taskId": by_second })))
        .await;
    assert_eq!(stopped.status, 200, "{}", stopped.body);
    assert_eq!(stopped.body["state"], "canceled");
    let seen = rpc(&app, &second, "GetTask", json!({ "id": by_second })).await;
    assert_eq!(seen["result"]["status"]["state"], "TASK_STATE_CANCELED", "{seen}");
    app.call(&user, "/stop-agent-task", Some(json!({ "taskId": by_second })))
        .await
        .assert_error(409, "task_ended");
    let canceled = app
        .call(&user, "/select-agent-tasks", Some(json!({ "state": "canceled" })))
        .await;
    assert_eq!(
        canceled.body["tasks"][0]["taskId"], by_second,
        "{}",
        canceled.body
    );
    assert_eq!(canceled.body["tasks"].as_array().unwrap().len(), 1);
    // The stranger's task was not touched.
    let untouched = rpc(&app, &stranger.api_token, "GetTask", json!({ "id": theirs })).await;
    assert_eq!(untouched["result"]["status"]["state"], "TASK_STATE_WORKING");

    // A session is taken at /a2a only from the drive's app, as the token it was exchanged for.
    let list_as_session = |app_header: bool| {
        let mut request = reqwest::Client::new()
            .post(format!("{}/a2a", app.url))
            .bearer_auth(&user.session)
            .header("A2A-Version", "1.0")
            .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {} }));
        if app_header {
            request = request.header("X-Drive-App", APP_ID);
        }
        request.send()
    };
    let refused = list_as_session(false).await.unwrap();
    assert_eq!(refused.status(), 401);
    let listed: Value = list_as_session(true).await.unwrap().json().await.unwrap();
    let tasks = listed["result"]["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1, "{listed}");
    assert_eq!(tasks[0]["id"], own, "the session's token's own task");
}

#[tokio::test]
async fn without_a_model_a_task_fails_saying_so() {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    let answer = rpc(
        &app,
        &user.api_token,
        "SendMessage",
        json!({ "message": text_message("hello") }),
    )
    .await;
    let task = task_of(&answer);
    assert_eq!(task["status"]["state"], "TASK_STATE_FAILED", "{answer}");
    let why = task["status"]["message"]["parts"][0]["text"].as_str().unwrap();
    assert!(why.contains("DRIVE_AGENT_MODEL_URL"), "{why}");
    assert!(
        task.get("artifacts").is_none() || task["artifacts"] == json!([]),
        "{task}"
    );
}

#[tokio::test]
async fn the_python_a2a_sdk_drives_a_task_end_to_end() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    app.upload(
        &user,
        "march.pdf",
        "Pdf",
        "application/pdf",
        b"%PDF-1.4 march".to_vec(),
    )
    .await;
    let model = FakeChat::scripted(
        vec![
            call("get_link", json!({ "text": "march" })),
            call("reply", json!({ "text": "Here it is." })),
        ],
        Duration::ZERO,
    )
    .await;
    with_model(&mut app, &model).await;

    // The official client (PyPI a2a-sdk, installed by the scripts), from outside: it resolves
    // the card, picks the JSON-RPC interface of protocol 1.0, and parses every answer strictly.
    let script = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("a2a/drive_task.py");
    let output = tokio::process::Command::new(env("DRIVE_A2A_PYTHON"))
        .arg(script)
        .args([
            app.url.as_str(),
            user.api_token.as_str(),
            "Give me a link to the March invoice",
        ])
        .output()
        .await
        .expect("run the a2a-sdk client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: Value = serde_json::from_str(stdout.trim()).expect("the script's JSON");
    let sent = &seen["sent"];
    assert_eq!(sent["status"]["state"], "TASK_STATE_COMPLETED", "{seen}");
    let parts = &sent["status"]["message"]["parts"];
    assert_eq!(parts[0]["text"], "Here it is.", "{seen}");
    assert_eq!(parts[1]["filename"], "march.pdf", "{seen}");
    let (status, bytes) = get(parts[1]["url"].as_str().unwrap()).await;
    assert_eq!(
        (status.as_u16(), bytes.as_slice()),
        (200, b"%PDF-1.4 march".as_slice())
    );
    assert_eq!(seen["got"]["id"], sent["id"]);
    assert_eq!(seen["got"]["history"].as_array().unwrap().len(), 1, "{seen}");
    assert_eq!(seen["listed"], json!([sent["id"]]));
    assert_eq!(seen["unknown"], "TaskNotFoundError");
    assert_eq!(seen["cancel"], "TaskNotCancelableError");
}

#[tokio::test]
async fn raw_parts_are_saved_and_url_parts_imported_once_and_the_agent_is_told_what_became_of_them() {
    use base64::Engine;
    use drive_tests::origin::{Answer, Origin};
    let origin = Origin::start(vec![(
        "/report.pdf",
        Answer::Bytes(std::sync::Arc::new(b"%PDF-1.4 report".to_vec())),
    )])
    .await;
    let loopback = ("DRIVE_FETCH_ALLOW_HOSTS", "127.0.0.1");
    let mut app = TestApp::spawn_with(&[loopback]).await;
    let user = app.user(Some("Pro")).await;
    let model = FakeChat::scripted(
        vec![call("reply", json!({ "text": "Got them." }))],
        Duration::ZERO,
    )
    .await;
    app.start_worker(&[
        loopback,
        ("DRIVE_AGENT_MODEL_URL", &model.url),
        ("DRIVE_AGENT_MODEL", "scripted"),
    ])
    .await;

    // A bad raw part is refused before any task is made.
    let refused = rpc(
        &app,
        &user.api_token,
        "SendMessage",
        json!({ "message": { "messageId": "m0", "role": "ROLE_USER", "parts": [{ "raw": "not base64!" }] } }),
    )
    .await;
    assert_eq!(error_code(&refused), -32602);
    assert_eq!(
        refused["error"]["data"][0]["fieldViolations"][0]["field"],
        "message.parts[0]"
    );

    let raw = base64::engine::general_purpose::STANDARD.encode(b"remember the milk");
    let sent = rpc(
        &app,
        &user.api_token,
        "SendMessage",
        json!({ "message": { "messageId": "m1", "role": "ROLE_USER", "parts": [
            { "text": "Keep these" },
            { "raw": raw, "filename": "note.txt", "mediaType": "text/plain" },
            { "url": format!("{}/report.pdf", origin.url), "filename": "report.pdf" },
            { "url": "https://10.1.2.3/inside.pdf" },
            { "data": { "priority": "high" } }
        ] } }),
    )
    .await;
    let task = task_of(&sent);
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{sent}");

    // The files are the token's, private, with the bytes sent.
    let library = app.call(&user, "/select-user-files", None).await;
    let files = library.body.as_array().unwrap().clone();
    let named = |name: &str| {
        files
            .iter()
            .find(|f| f["fileName"] == name)
            .unwrap_or_else(|| panic!("{name} is not in the drive: {files:?}"))
            .clone()
    };
    let (note, report) = (named("note.txt"), named("report.pdf"));
    assert_eq!(note["isPublic"], false);
    for (file, bytes) in [
        (&note, b"remember the milk".as_slice()),
        (&report, b"%PDF-1.4 report".as_slice()),
    ] {
        let link = app
            .call(&user, "/generate-download-url", Some(json!({ "id": file["id"] })))
            .await;
        let (status, got) = get(link.body["downloadUrl"].as_str().unwrap()).await;
        assert_eq!((status.as_u16(), got.as_slice()), (200, bytes));
    }
    assert_eq!(files.len(), 2, "nothing else came in: {files:?}");

    // The model read what became of each part.
    let told = model.sent()[0].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(told.starts_with("Keep these\n"), "{told}");
    assert!(
        told.contains(&format!(
            "(Attached note.txt: saved in the drive as note.txt (id {}).)",
            note["id"].as_str().unwrap()
        )),
        "{told}"
    );
    assert!(
        told.contains(&format!(
            "(Attached report.pdf: saved in the drive as report.pdf (id {}).)",
            report["id"].as_str().unwrap()
        )),
        "{told}"
    );
    assert!(
        told.contains("(Attached https://10.1.2.3/inside.pdf: it could not be brought into the drive:"),
        "{told}"
    );
    assert!(told.contains(r#"(A data part: {"priority":"high"})"#), "{told}");
    // Written once in the task's row, so a task taken over does not bring them in again.
    let attachments: Value = sqlx::query_scalar("select attachments from agent_tasks where id = $1::uuid")
        .bind(task["id"].as_str().unwrap())
        .fetch_one(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(attachments["1"]["saved"]["fileName"], "note.txt", "{attachments}");
    assert!(attachments["3"]["error"].is_string(), "{attachments}");
    assert!(
        attachments.get("0").is_none() && attachments.get("4").is_none(),
        "{attachments}"
    );
}

/// The text of the last message the model was sent in its `n`th call.
fn last_text(model: &FakeChat, n: usize) -> String {
    last_sent(model, n)["content"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn files_are_moved_and_tagged_and_trashed_only_when_the_next_message_confirms_then_restored() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let token = user.api_token.as_str();
    let mut old = Vec::new();
    for name in ["old-a.txt", "old-b.txt"] {
        old.push(
            app.upload(&user, name, "Text", "text/plain", name.as_bytes().to_vec())
                .await,
        );
    }
    let keep = app
        .upload(&user, "keep.txt", "Text", "text/plain", b"keep".to_vec())
        .await;
    let model = FakeChat::scripted(
        vec![
            // Task 1: move the old files, tag them, propose them for the trash.
            call("move_files", json!({ "text": "old", "to": "/attic" })),
            call("tag_files", json!({ "folder": "/attic", "tag": "stale" })),
            call("trash_files", json!({ "folder": "/attic" })),
            call("reply", json!({ "text": "Answer with the words to trash them." })),
            // Task 2: words that do not confirm. Task 3: proposed again; task 4 confirms it;
            // task 5 brings one back.
            call("reply", json!({ "text": "Nothing moved." })),
            call("trash_files", json!({ "folder": "/attic" })),
            call("reply", json!({ "text": "Answer with the words." })),
            call("reply", json!({ "text": "Trashed." })),
            call("restore_files", json!({ "text": "old-b" })),
            call("reply", json!({ "text": "Restored." })),
        ],
        Duration::ZERO,
    )
    .await;
    with_model(&mut app, &model).await;
    let send = |text: &str, context: Option<&Value>| {
        let mut message = text_message(text);
        if let Some(context) = context {
            message["contextId"] = context.clone();
        }
        rpc(&app, token, "SendMessage", json!({ "message": message }))
    };

    let first = task_of(&send("tidy away my old files", None).await);
    assert_eq!(first["status"]["state"], "TASK_STATE_COMPLETED", "{first}");
    let found = app
        .call(&user, "/search-files", Some(json!({ "limit": 10 })))
        .await;
    let listed = found.body["files"].as_array().unwrap();
    for id in &old {
        let file = listed.iter().find(|f| f["id"] == id.to_string()).unwrap();
        assert_eq!(file["folder"], "/attic/", "{file}");
        assert_eq!(file["tags"], json!(["stale"]), "{file}");
    }
    let kept = listed.iter().find(|f| f["id"] == keep.to_string()).unwrap();
    assert_eq!(
        (&kept["folder"], &kept["tags"]),
        (&json!("/"), &json!([])),
        "{kept}"
    );
    // The proposal trashed nothing; its words came back to the model.
    assert_eq!(listed.len(), 3);
    let proposed = told(&model, 3);
    assert_eq!(proposed["trashed"], "nothing yet", "{proposed}");
    let phrase = proposed["confirmWith"].as_str().unwrap().to_string();
    assert!(phrase.starts_with("confirm "), "{proposed}");
    let mut names: Vec<&str> = proposed["wouldTrash"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["old-a.txt", "old-b.txt"]);

    // Words that do not confirm move nothing.
    let context = first["contextId"].clone();
    let second = task_of(&send("yes please, do it", Some(&context)).await);
    assert_eq!(second["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(
        last_text(&model, 4).contains("nothing was moved to the trash"),
        "{}",
        last_text(&model, 4)
    );
    let trash = app.call(&user, "/select-trashed-files", None).await;
    assert_eq!(trash.body, json!([]));

    // A proposal is only the next message's to confirm: proposed again, then confirmed.
    send("trash the attic then", Some(&context)).await;
    let proposed = told(&model, 6);
    let phrase = proposed["confirmWith"].as_str().unwrap().to_string();
    let fourth = task_of(&send(&format!("OK, {phrase}"), Some(&context)).await);
    assert_eq!(fourth["status"]["state"], "TASK_STATE_COMPLETED");
    let confirmed = last_text(&model, 7);
    assert!(
        confirmed.contains(&format!(
            "(The user confirmed with '{phrase}': 2 file(s) were moved to the trash:"
        )),
        "{confirmed}"
    );
    let trashed = app.call(&user, "/select-trashed-files", None).await;
    let mut ids: Vec<&str> = trashed
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    ids.sort();
    let mut expected: Vec<String> = old.iter().map(|id| id.to_string()).collect();
    expected.sort();
    assert_eq!(ids, expected, "exactly the proposed files");

    // Brought back by name; the same words again confirm nothing now.
    let fifth = task_of(&send("bring back old-b", Some(&context)).await);
    assert_eq!(fifth["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(told(&model, 9), json!({ "restored": ["old-b.txt"] }));
    send(&phrase, Some(&context)).await;
    let trashed = app.call(&user, "/select-trashed-files", None).await;
    assert_eq!(trashed.body.as_array().unwrap().len(), 1, "{}", trashed.body);
    assert_eq!(trashed.body[0]["fileName"], "old-a.txt");
}
