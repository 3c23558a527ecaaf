//! A2A push notifications over real HTTP: the four config methods (kept per task, at most five,
//! the same id replacing, another token's task absent, links checked), their secrets sealed at
//! rest and in no log, and each status change POSTed by a real worker to a local https receiver
//! with the config's token and Authorization, retried after 2 s and 10 s unless a newer status
//! is there to send instead.

use std::time::Duration;

use drive_tests::provider::FakeChat;
use drive_tests::receiver::{Receiver, Reply};
use drive_tests::*;
use serde_json::{Value, json};

use super::agent::{call, error_code, rpc, task_of, text_message};

/// A task of `token`'s that waits (no worker runs it).
async fn waiting_task(app: &TestApp, token: &str) -> String {
    let sent = rpc(
        app,
        token,
        "SendMessage",
        json!({ "message": text_message("hello"), "configuration": { "returnImmediately": true } }),
    )
    .await;
    task_of(&sent)["id"].as_str().unwrap().to_string()
}

/// A task of `token`'s sent with a push config to `url`, answered at once.
async fn slow_task(app: &TestApp, token: &str, url: &str) -> String {
    let sent = rpc(
        app,
        token,
        "SendMessage",
        json!({ "message": text_message("slow"), "configuration": {
            "returnImmediately": true, "taskPushNotificationConfig": { "url": url } } }),
    )
    .await;
    task_of(&sent)["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn configs_are_kept_per_task_replaced_by_id_listed_deleted_and_checked() {
    let receiver = Receiver::start().await;
    let app = TestApp::spawn_with(&receiver.trust()).await;
    let user = app.user(Some("Pro")).await;
    let token = user.api_token.as_str();
    let task = waiting_task(&app, token).await;
    let create = |params: Value| rpc(&app, token, "CreateTaskPushNotificationConfig", params);

    let made = create(json!({
        "taskId": task, "id": "a", "url": format!("{}/hooks/a", receiver.url), "token": "tok-a",
        "authentication": { "scheme": "Bearer", "credentials": "cred-a" }
    }))
    .await;
    // The secrets are taken, never answered back.
    assert_eq!(
        made["result"],
        json!({ "id": "a", "taskId": task, "url": format!("{}/hooks/a", receiver.url),
                "authentication": { "scheme": "Bearer" } })
    );
    let unnamed = create(json!({ "task_id": task, "url": receiver.url })).await;
    let generated = unnamed["result"]["id"].as_str().unwrap().to_string();
    assert!(uuid::Uuid::parse_str(&generated).is_ok(), "{unnamed}");
    // The same id replaces.
    let replaced =
        create(json!({ "taskId": task, "id": "a", "url": format!("{}/hooks/a2", receiver.url) })).await;
    assert_eq!(replaced["result"]["url"], format!("{}/hooks/a2", receiver.url));
    assert!(replaced["result"].get("authentication").is_none(), "{replaced}");
    for id in ["b", "c", "d"] {
        let made = create(json!({ "taskId": task, "id": id, "url": receiver.url })).await;
        assert_eq!(made["result"]["id"], id, "{made}");
    }
    // Five: a sixth id is refused, an existing one still replaces.
    let sixth = create(json!({ "taskId": task, "id": "e", "url": receiver.url })).await;
    assert_eq!(error_code(&sixth), -32602);
    assert_eq!(
        sixth["error"]["data"][0]["fieldViolations"][0]["field"], "id",
        "{sixth}"
    );
    let again = create(json!({ "taskId": task, "id": "d", "url": format!("{}/d", receiver.url) })).await;
    assert_eq!(again["result"]["url"], format!("{}/d", receiver.url), "{again}");

    let got = rpc(
        &app,
        token,
        "GetTaskPushNotificationConfig",
        json!({ "taskId": task, "id": "a" }),
    )
    .await;
    assert_eq!(got["result"]["url"], format!("{}/hooks/a2", receiver.url));
    let first = rpc(
        &app,
        token,
        "ListTaskPushNotificationConfigs",
        json!({ "taskId": task, "pageSize": 3 }),
    )
    .await;
    let ids = |page: &Value| -> Vec<String> {
        page["result"]["configs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap().to_string())
            .collect()
    };
    let mut expected = [
        "a".to_string(),
        "b".into(),
        "c".into(),
        "d".into(),
        generated.clone(),
    ];
    expected.sort();
    assert_eq!(ids(&first), expected[..3]);
    let token_next = first["result"]["nextPageToken"].as_str().unwrap();
    assert!(!token_next.is_empty(), "{first}");
    let second = rpc(
        &app,
        token,
        "ListTaskPushNotificationConfigs",
        json!({ "task_id": task, "page_size": 3, "page_token": token_next }),
    )
    .await;
    assert_eq!(ids(&second), expected[3..]);
    assert_eq!(second["result"]["nextPageToken"], "");

    // Deleting is idempotent; what is deleted is not found.
    for _ in 0..2 {
        let deleted = rpc(
            &app,
            token,
            "DeleteTaskPushNotificationConfig",
            json!({ "taskId": task, "id": "a" }),
        )
        .await;
        assert_eq!(deleted["result"], json!({}), "{deleted}");
    }
    let gone = rpc(
        &app,
        token,
        "GetTaskPushNotificationConfig",
        json!({ "taskId": task, "id": "a" }),
    )
    .await;
    assert_eq!(error_code(&gone), -32001);

    // Links: https, public (the receiver is allowed only by the test's setting), well formed.
    for (url, why) in [
        ("http://example.com/hook", "https"),
        ("https://10.0.0.7/hook", "private"),
        ("https://[::1]/hook", "loopback"),
        ("not a link", "not a link"),
        ("", "empty"),
    ] {
        let refused = create(json!({ "taskId": task, "id": "x", "url": url })).await;
        assert_eq!(error_code(&refused), -32602, "{why}: {refused}");
        assert_eq!(
            refused["error"]["data"][0]["fieldViolations"][0]["field"], "url",
            "{why}"
        );
    }
    let bad_scheme =
        create(json!({ "taskId": task, "url": receiver.url, "authentication": { "scheme": "Bea rer" } }))
            .await;
    assert_eq!(
        bad_scheme["error"]["data"][0]["fieldViolations"][0]["field"], "authentication.scheme",
        "{bad_scheme}"
    );
    let bad_token = create(json!({ "taskId": task, "url": receiver.url, "token": "line\nbreak" })).await;
    assert_eq!(
        bad_token["error"]["data"][0]["fieldViolations"][0]["field"], "token",
        "{bad_token}"
    );
    let no_task = create(json!({ "url": receiver.url })).await;
    assert_eq!(
        no_task["error"]["data"][0]["fieldViolations"][0]["field"], "taskId",
        "{no_task}"
    );

    // Another token of the same account: the task is not there for it.
    let other: Value =
        serde_json::from_str(&app.admin(&["create-token", "--handle", &user.handle, "--json"])).unwrap();
    let other = other["apiToken"].as_str().unwrap();
    for (method, params) in [
        (
            "CreateTaskPushNotificationConfig",
            json!({ "taskId": task, "url": receiver.url }),
        ),
        (
            "GetTaskPushNotificationConfig",
            json!({ "taskId": task, "id": "b" }),
        ),
        ("ListTaskPushNotificationConfigs", json!({ "taskId": task })),
        (
            "DeleteTaskPushNotificationConfig",
            json!({ "taskId": task, "id": "b" }),
        ),
    ] {
        assert_eq!(
            error_code(&rpc(&app, other, method, params).await),
            -32001,
            "{method}"
        );
    }
    let still = rpc(
        &app,
        token,
        "GetTaskPushNotificationConfig",
        json!({ "taskId": task, "id": "b" }),
    )
    .await;
    assert_eq!(still["result"]["id"], "b", "another token deleted it");
}

#[tokio::test]
async fn each_status_change_is_posted_with_the_token_and_authorization_which_are_sealed_at_rest() {
    let receiver = Receiver::start().await;
    let mut app = TestApp::spawn_with(&receiver.trust()).await;
    let user = app.user(Some("Pro")).await;
    let model = FakeChat::scripted(
        vec![call("reply", json!({ "text": "All done." }))],
        Duration::from_secs(1),
    )
    .await;
    let mut environment = receiver.trust().to_vec();
    environment.extend([
        ("DRIVE_AGENT_MODEL_URL", model.url.as_str()),
        ("DRIVE_AGENT_MODEL", "scripted"),
    ]);
    app.start_worker(&environment).await;

    // A config sent with the first message hears every change from the first.
    let sent = rpc(
        &app,
        &user.api_token,
        "SendMessage",
        json!({
            "message": text_message("tidy up"),
            "configuration": { "taskPushNotificationConfig": {
                "id": "mine", "url": format!("{}/a2a-hook", receiver.url), "token": "notify-token-7f3a",
                "authentication": { "scheme": "Bearer", "credentials": "receiver-credential-91c2" }
            } }
        }),
    )
    .await;
    let task = task_of(&sent);
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{sent}");
    let received = receiver.wait_for(2, Duration::from_secs(20)).await;
    let states: Vec<Value> = received
        .iter()
        .map(|r| r.json()["task"]["status"]["state"].clone())
        .collect();
    assert_eq!(states, ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);
    for post in &received {
        assert_eq!(post.path, "/a2a-hook");
        assert_eq!(post.headers["x-a2a-notification-token"], "notify-token-7f3a");
        assert_eq!(post.headers["authorization"], "Bearer receiver-credential-91c2");
        assert_eq!(post.headers["content-type"], "application/json");
        // The contract's body: `{ task }`, the whole task without its history.
        let pushed = &post.json()["task"];
        assert_eq!(pushed["id"], task["id"]);
        assert_eq!(pushed["contextId"], task["contextId"]);
        assert!(pushed.get("history").is_none(), "{pushed}");
        assert_eq!(post.json().as_object().unwrap().len(), 1, "one key, task");
    }
    assert!(
        received[0].json()["task"].get("artifacts").is_none(),
        "no reply yet"
    );
    let completed = received[1].json();
    let mut whole = task.clone();
    whole.as_object_mut().unwrap().remove("history");
    assert_eq!(
        completed["task"], whole,
        "the task as SendMessage answered it, its Reply artifact included, without its history"
    );
    assert_eq!(completed["task"]["artifacts"][0]["name"], "Reply", "{completed}");
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(receiver.received().len(), 2, "each change once");

    let mut db = app.db().await;
    let (token, credentials, row): (Vec<u8>, Vec<u8>, String) = sqlx::query_as(
        "select token_sealed, credentials_sealed, row_to_json(c)::text from agent_push_configs c where task_id = $1::uuid",
    )
    .bind(task["id"].as_str().unwrap())
    .fetch_one(&mut db)
    .await
    .unwrap();
    for secret in ["notify-token-7f3a", "receiver-credential-91c2"] {
        assert!(!row.contains(secret), "the row holds {secret}: {row}");
        assert!(!token.windows(secret.len()).any(|w| w == secret.as_bytes()));
        assert!(!credentials.windows(secret.len()).any(|w| w == secret.as_bytes()));
        let logs = format!("{}{}", app.log(), app.worker_logs());
        assert!(!logs.contains(secret), "a log holds {secret}");
    }
}

#[tokio::test]
async fn a_refused_notification_is_retried_after_2_and_10_seconds_unless_a_newer_status_came() {
    let receiver = Receiver::start().await;
    let mut app = TestApp::spawn_with(&receiver.trust()).await;
    let user = app.user(Some("Pro")).await;
    let token = user.api_token.as_str();
    // A model that takes its time: the task stays working until it is canceled.
    let model = FakeChat::scripted(
        vec![call("reply", json!({ "text": "late" }))],
        Duration::from_secs(120),
    )
    .await;
    let mut environment = receiver.trust().to_vec();
    environment.extend([
        ("DRIVE_AGENT_MODEL_URL", model.url.as_str()),
        ("DRIVE_AGENT_MODEL", "scripted"),
    ]);
    // Refused twice, taken the third time: 2 s, then 10 s apart.
    receiver.plan(vec![Reply::Status(500), Reply::Status(503)]);
    let first = slow_task(&app, token, &format!("{}/retried", receiver.url)).await;
    app.start_worker(&environment).await;
    let tries = receiver.wait_for(3, Duration::from_secs(30)).await;
    assert!(tries.iter().all(|t| t.path == "/retried"), "{tries:?}");
    assert!(
        tries
            .iter()
            .all(|t| t.json()["task"]["status"]["state"] == "TASK_STATE_WORKING")
    );
    assert_eq!(
        tries.iter().map(|t| t.answered).collect::<Vec<_>>(),
        [500, 503, 200]
    );
    let gaps = [tries[1].at - tries[0].at, tries[2].at - tries[1].at];
    assert!(
        gaps[0] >= Duration::from_secs(2) && gaps[0] < Duration::from_secs(4),
        "{gaps:?}"
    );
    assert!(
        gaps[1] >= Duration::from_secs(10) && gaps[1] < Duration::from_secs(12),
        "{gaps:?}"
    );
    assert_eq!(
        rpc(&app, token, "CancelTask", json!({ "id": first })).await["result"]["status"]["state"],
        "TASK_STATE_CANCELED"
    );
    let canceled = receiver.wait_for(4, Duration::from_secs(10)).await;
    assert_eq!(
        canceled[3].json()["task"]["status"]["state"],
        "TASK_STATE_CANCELED"
    );

    // Refused, then the task changes again before the retry: the newer status is sent instead,
    // and the stale one never again.
    receiver.plan(vec![Reply::Status(500)]);
    let second = slow_task(&app, token, &format!("{}/newer", receiver.url)).await;
    let refused = receiver.wait_for(5, Duration::from_secs(10)).await;
    assert_eq!(refused[4].path, "/newer");
    assert_eq!(refused[4].answered, 500);
    rpc(&app, token, "CancelTask", json!({ "id": second })).await;
    let after = receiver.wait_for(6, Duration::from_secs(10)).await;
    assert_eq!(after[5].json()["task"]["status"]["state"], "TASK_STATE_CANCELED");
    assert_eq!(after[5].answered, 200);
    tokio::time::sleep(Duration::from_secs(12)).await;
    let all = receiver.received();
    assert_eq!(
        all.len(),
        6,
        "the stale WORKING was sent again: {:?}",
        all.last().map(|r| r.json())
    );
}
