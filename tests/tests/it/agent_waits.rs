//! Agent tasks that wait (A2A over real HTTP, a scripted model, the drive's real routes): each
//! of the six waits leaves its task working and held by no worker until its event comes, then
//! the task goes on from its `wait_for` call with what happened; the 21st waiting task of an
//! account is refused; a wait ends when what it waits on closes or its time runs out; a waiting
//! task can be canceled.

use std::time::Duration;

use drive_core::id::FileId;
use drive_tests::image_providers::FakeProviders;
use drive_tests::origin::{Answer, Origin};
use drive_tests::provider::FakeChat;
use drive_tests::senders::{Sender, call as anonymous};
use drive_tests::*;
use serde_json::{Value, json};

use crate::agent::{call, rpc, task_of, text_message, told};

/// Sends `text` as `token`, answered at once; the task's id.
async fn send(app: &TestApp, token: &str, text: &str) -> Value {
    let answer = rpc(
        app,
        token,
        "SendMessage",
        json!({ "message": text_message(text), "configuration": { "returnImmediately": true } }),
    )
    .await;
    task_of(&answer)["id"].clone()
}

/// The task `id` once it waits: working, held by no worker, its status saying what it waits for.
async fn waiting(app: &TestApp, token: &str, id: &Value) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let task = rpc(app, token, "GetTask", json!({ "id": id })).await["result"].clone();
        let status = task["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap_or_default();
        if status.starts_with("Waiting for") {
            assert_eq!(task["status"]["state"], "TASK_STATE_WORKING", "{task}");
            let held: Option<uuid::Uuid> =
                sqlx::query_scalar("select leased_by from agent_tasks where id = $1::uuid")
                    .bind(id.as_str().unwrap())
                    .fetch_one(&mut app.db().await)
                    .await
                    .unwrap();
            assert_eq!(held, None, "no worker holds a waiting task");
            return task;
        }
        assert_ne!(task["status"]["state"], "TASK_STATE_FAILED", "{task}");
        assert!(
            tokio::time::Instant::now() < deadline,
            "the task never waited: {task}\n{}",
            app.worker_logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The task `id` once it has ended.
async fn ended(app: &TestApp, token: &str, id: &Value) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let task = rpc(app, token, "GetTask", json!({ "id": id })).await["result"].clone();
        if task["status"]["state"] != "TASK_STATE_WORKING" {
            return task;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the task never ended: {task}\n{}",
            app.worker_logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A task asked `asked` that waits (the model's `turn`th request is the one after the wait);
/// answers its id.
async fn begins_waiting(app: &TestApp, user: &TestUser, model: &FakeChat, turn: usize, asked: &str) -> Value {
    let id = send(app, &user.api_token, asked).await;
    waiting(app, &user.api_token, &id).await;
    // Waiting, it asks the model nothing.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        model.sent().len(),
        turn,
        "the model was asked while the task waited"
    );
    id
}

/// A task asked `asked` that waits, is woken by `happen`, and replies; answers what its wait
/// came to.
async fn waits_for(
    app: &TestApp,
    user: &TestUser,
    model: &FakeChat,
    turn: usize,
    asked: &str,
    happen: impl std::future::Future<Output = ()>,
) -> Value {
    let id = begins_waiting(app, user, model, turn, asked).await;
    happen.await;
    went_on(app, user, model, turn, &id).await
}

/// What the waiting task `id`'s wait came to, once it has gone on and replied.
async fn went_on(app: &TestApp, user: &TestUser, model: &FakeChat, turn: usize, id: &Value) -> Value {
    let task = ended(app, &user.api_token, id).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    assert_eq!(
        task["status"]["message"]["parts"][0]["text"],
        format!("replied {turn}")
    );
    let after = told(model, turn);
    // The conversation went on from the wait_for call: the same messages, then its answer.
    let before = &model.sent()[turn - 1].body["messages"];
    let resumed = &model.sent()[turn].body["messages"];
    let n = before.as_array().unwrap().len();
    assert_eq!(
        resumed.as_array().unwrap()[..n],
        before.as_array().unwrap()[..],
        "resumed as it was"
    );
    assert_eq!(resumed[n]["tool_calls"][0]["function"]["name"], "wait_for");
    assert_eq!(resumed.as_array().unwrap().len(), n + 2);
    after
}

/// A file in the folder /inbox, which then exists.
async fn file_in_inbox(app: &TestApp, user: &TestUser) -> FileId {
    let placed = app
        .upload(user, "readme.txt", "Text", "text/plain", bytes(10, 2))
        .await;
    let moved = app
        .call(
            user,
            "/move-files",
            Some(json!({ "fileIds": [placed], "folder": "/inbox" })),
        )
        .await;
    assert_eq!(moved.status, 200, "{}", moved.body);
    placed
}

#[tokio::test]
async fn each_of_the_six_waits_holds_its_task_until_its_event_then_goes_on_with_what_happened() {
    let fake = FakeProviders::start().await;
    let site = Origin::start(vec![(
        "/scan.pdf",
        Answer::Bytes(b"%PDF-1.4 scan".to_vec().into()),
    )])
    .await;
    let environment = fake.environment();
    let pairs: Vec<(&str, &str)> = environment
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mut app = TestApp::spawn_with(&pairs).await;
    let user = app.user(Some("Pro")).await;
    let reader = app.user(Some("Pro")).await;

    // What the waits wait on: a request, a review, a public file, a folder, and a job and a
    // generation that no worker runs yet.
    let request = app
        .call(
            &user,
            "/create-file-request",
            Some(json!({ "title": "Tax papers", "folder": "/taxes" })),
        )
        .await;
    assert_eq!(request.status, 200, "{}", request.body);
    let request_id = request.body["id"].as_str().unwrap().to_string();
    let video = app
        .upload(&user, "cut-3.webm", "Video", "video/webm", crate::reviews::webm())
        .await;
    let review = app
        .call(
            &user,
            "/create-file-review",
            Some(json!({ "fileId": video, "title": "Cut 3 first pass" })),
        )
        .await;
    assert_eq!(review.status, 200, "{}", review.body);
    let review_id = review.body["id"].as_str().unwrap().to_string();
    let post = app
        .upload(&user, "launch-post.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    app.call(&user, "/toggle-file-access", Some(json!({ "id": post })))
        .await;
    let placed = file_in_inbox(&app, &user).await;
    let job = app
        .create_job(&user, json!({ "jobType": "checksum", "fileIds": [placed] }))
        .await;
    let generation = app
        .call(
            &user,
            "/generate-image",
            Some(json!({ "prompt": "a lighthouse", "model": "flux2Pro" })),
        )
        .await;
    assert_eq!(generation.status, 200, "{}", generation.body);
    let generation_id = generation.body["id"].as_str().unwrap().to_string();

    let mut turns = Vec::new();
    for (n, arguments) in [
        json!({ "for": "files_at_request", "name": "tax" }),
        json!({ "for": "notes_on_review", "name": "cut 3" }),
        json!({ "for": "file_opened", "name": "launch" }),
        json!({ "for": "job_ended", "id": job["id"] }),
        json!({ "for": "image_finished", "id": generation_id }),
        json!({ "for": "files_in_folder", "folder": "/inbox" }),
    ]
    .into_iter()
    .enumerate()
    {
        turns.push(call("wait_for", arguments));
        turns.push(call("reply", json!({ "text": format!("replied {}", 2 * n + 1) })));
    }
    let model = FakeChat::scripted(turns, Duration::ZERO).await;
    let agent = [
        ("DRIVE_AGENT_MODEL_URL", model.url.as_str()),
        ("DRIVE_AGENT_MODEL", "scripted"),
    ];
    // The first worker takes agent tasks and, of jobs, videoThumbnails only, of which this test
    // makes none: the job and the generation wait their turn.
    let mut agent_only = agent.to_vec();
    agent_only.push(("DRIVE_WORKER_JOB_TYPES", "videoThumbnail"));
    app.start_worker(&agent_only).await;

    let dropped = waits_for(&app, &user, &model, 1, "Tell me when tax papers arrive", async {
        let sender = Sender::start(&app, &request_id, "Accountant", Some("for 2026")).await;
        sender.send(&app, "w2.pdf", b"%PDF-1.4 w2").await;
        assert_eq!(sender.finish(&app).await.status, 200);
    })
    .await;
    assert_eq!(
        dropped["waitedFor"], "files sent to the request \"Tax papers\"",
        "{dropped}"
    );
    let drop = &dropped["happened"][0];
    assert_eq!(drop["kind"], "drop", "{dropped}");
    assert_eq!(drop["note"], "for 2026", "{dropped}");
    assert_eq!(drop["files"][0]["fileName"], "w2.pdf", "{dropped}");

    let noted = waits_for(&app, &user, &model, 3, "Tell me what reviewers say on cut 3", async {
        let left = anonymous(
            &app,
            "/add-review-note",
            json!({ "reviewId": review_id, "reviewerName": "Al", "text": "Too dark at the start", "seconds": 1 }),
        )
        .await;
        assert_eq!(left.status, 200, "{}", left.body);
    })
    .await;
    assert_eq!(noted["happened"][0]["kind"], "note", "{noted}");
    assert_eq!(noted["happened"][0]["text"], "Too dark at the start", "{noted}");

    let viewed = waits_for(
        &app,
        &user,
        &model,
        5,
        "Tell me when someone reads the launch post",
        async {
            // The owner's own open is no view, and wakes nothing: the reader's does.
            for opener in [&user, &reader] {
                let opened = app
                    .call(opener, "/generate-download-url", Some(json!({ "id": post })))
                    .await;
                assert_eq!(opened.status, 200, "{}", opened.body);
            }
        },
    )
    .await;
    assert_eq!(viewed["happened"].as_array().unwrap().len(), 1, "{viewed}");
    assert_eq!(viewed["happened"][0]["kind"], "view", "{viewed}");
    assert_eq!(viewed["happened"][0]["file"]["id"], post.to_string(), "{viewed}");

    let stopped = waits_for(&app, &user, &model, 7, "Tell me when the checksum ends", async {
        let canceled = app
            .call(&user, "/cancel-file-job", Some(json!({ "id": job["id"] })))
            .await;
        assert_eq!(canceled.status, 200, "{}", canceled.body);
    })
    .await;
    assert_eq!(stopped["happened"][0]["kind"], "job", "{stopped}");
    assert_eq!(stopped["happened"][0]["job"]["id"], job["id"], "{stopped}");
    assert_eq!(stopped["happened"][0]["job"]["state"], "stopped", "{stopped}");

    // A worker on the drive's queue draws the image (and takes agent tasks too).
    let id = begins_waiting(&app, &user, &model, 9, "Tell me when the lighthouse is drawn").await;
    app.start_worker(&agent).await;
    let drawn = went_on(&app, &user, &model, 9, &id).await;
    assert_eq!(drawn["happened"][0]["kind"], "generation", "{drawn}");
    assert_eq!(drawn["happened"][0]["status"], "done", "{drawn}");

    let landed = waits_for(
        &app,
        &user,
        &model,
        11,
        "Tell me when something lands in my inbox",
        async {
            let imported = app
                .call(
                    &user,
                    "/import-from-url",
                    Some(json!({ "url": format!("{}/scan.pdf", site.url), "folder": "/inbox" })),
                )
                .await;
            assert_eq!(imported.status, 200, "{}", imported.body);
        },
    )
    .await;
    assert_eq!(landed["waitedFor"], "files landing in /inbox", "{landed}");
    let arrived = &landed["happened"][0];
    let name = arrived["file"]["fileName"]
        .as_str()
        .or(arrived["files"][0]["fileName"].as_str());
    assert_eq!(name, Some("scan.pdf"), "{landed}");
}

#[tokio::test]
async fn an_account_has_at_most_twenty_waiting_tasks_and_a_canceled_one_makes_room() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    file_in_inbox(&app, &user).await;
    let wait = || {
        call(
            "wait_for",
            json!({ "for": "files_in_folder", "folder": "/inbox" }),
        )
    };
    let mut turns: Vec<Value> = (0..21).map(|_| wait()).collect();
    turns.push(call("reply", json!({ "text": "I cannot wait for that now." })));
    turns.push(wait());
    let model = FakeChat::scripted(turns, Duration::ZERO).await;
    app.start_worker(&[
        ("DRIVE_AGENT_MODEL_URL", &model.url),
        ("DRIVE_AGENT_MODEL", "scripted"),
    ])
    .await;
    // A token has at most ten tasks under way: three tokens of the one account.
    let mut tokens = vec![user.api_token.clone()];
    for _ in 0..2 {
        let made: Value =
            serde_json::from_str(&app.admin(&["create-token", "--handle", &user.handle, "--json"])).unwrap();
        tokens.push(made["apiToken"].as_str().unwrap().to_string());
    }
    let mut waiting_tasks = Vec::new();
    for n in 0..20 {
        let token = &tokens[n / 10];
        let id = send(&app, token, "Tell me when something lands in my inbox").await;
        waiting(&app, token, &id).await;
        waiting_tasks.push((token.clone(), id));
    }

    let refused = send(&app, &tokens[2], "And tell me too").await;
    let task = ended(&app, &tokens[2], &refused).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    let why = told(&model, 21);
    assert!(
        why["error"].as_str().unwrap().contains("20 tasks waiting"),
        "{why}"
    );

    // Canceled, a waiting task ends at once and no longer counts.
    let (token, id) = &waiting_tasks[0];
    let canceled = rpc(&app, token, "CancelTask", json!({ "id": id })).await;
    assert_eq!(
        canceled["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{canceled}"
    );
    let room = send(&app, &tokens[2], "Now tell me").await;
    waiting(&app, &tokens[2], &room).await;
    let count: i64 = sqlx::query_scalar(
        "select count(*) from agent_waits w join agent_tasks t on t.id = w.task_id
         where w.happened is null and t.state = 'TASK_STATE_WORKING'",
    )
    .fetch_one(&mut app.db().await)
    .await
    .unwrap();
    assert_eq!(count, 20);
}

#[tokio::test]
async fn a_wait_ends_when_what_it_waits_on_closes_or_its_time_runs_out() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let request = app
        .call(
            &user,
            "/create-file-request",
            Some(json!({ "title": "Photos", "folder": "/photos" })),
        )
        .await;
    let request_id = request.body["id"].clone();
    file_in_inbox(&app, &user).await;
    let model = FakeChat::scripted(
        vec![
            call("wait_for", json!({ "for": "files_at_request", "name": "photos" })),
            call("reply", json!({ "text": "The request closed." })),
            call(
                "wait_for",
                json!({ "for": "files_in_folder", "folder": "/inbox", "days": 1 }),
            ),
            call("reply", json!({ "text": "Nothing came." })),
            call(
                "wait_for",
                json!({ "for": "files_in_folder", "folder": "/nowhere" }),
            ),
            call(
                "wait_for",
                json!({ "for": "job_ended", "id": uuid::Uuid::new_v4() }),
            ),
            call("reply", json!({ "text": "There is nothing to wait for." })),
        ],
        Duration::ZERO,
    )
    .await;
    app.start_worker(&[
        ("DRIVE_AGENT_MODEL_URL", &model.url),
        ("DRIVE_AGENT_MODEL", "scripted"),
    ])
    .await;

    let id = send(&app, &user.api_token, "Tell me when photos arrive").await;
    waiting(&app, &user.api_token, &id).await;
    let closed = app
        .call(
            &user,
            "/set-file-request-open",
            Some(json!({ "requestId": request_id, "open": false })),
        )
        .await;
    assert_eq!(closed.status, 200, "{}", closed.body);
    assert_eq!(
        ended(&app, &user.api_token, &id).await["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert_eq!(
        told(&model, 1),
        json!({ "waitedFor": "files sent to the request \"Photos\"", "happened": [], "ended": "what it waited on closed" })
    );

    let id = send(
        &app,
        &user.api_token,
        "Tell me when something lands in my inbox today",
    )
    .await;
    let task = waiting(&app, &user.api_token, &id).await;
    let until: chrono::DateTime<chrono::Utc> =
        sqlx::query_scalar("select until from agent_waits where task_id = $1::uuid")
            .bind(id.as_str().unwrap())
            .fetch_one(&mut app.db().await)
            .await
            .unwrap();
    let day = until - chrono::Utc::now();
    assert!(
        day > chrono::TimeDelta::hours(23) && day <= chrono::TimeDelta::days(1),
        "{until}"
    );
    assert!(
        task["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .contains("/inbox"),
        "{task}"
    );
    // A day later, as far as the wait can tell.
    sqlx::query("update agent_waits set until = now() - interval '1 second' where task_id = $1::uuid")
        .bind(id.as_str().unwrap())
        .execute(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(
        ended(&app, &user.api_token, &id).await["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert_eq!(
        told(&model, 3)["ended"],
        "nothing happened before the wait's time ran out"
    );

    // A folder that does not exist and a job that is not there are nothing to wait on.
    let id = send(&app, &user.api_token, "Wait for nothing").await;
    let task = ended(&app, &user.api_token, &id).await;
    assert_eq!(
        task["status"]["message"]["parts"][0]["text"],
        "There is nothing to wait for."
    );
    assert_eq!(told(&model, 5), json!({ "error": "there is no folder /nowhere" }));
    let missing = told(&model, 6);
    assert!(
        missing["error"].as_str().unwrap().starts_with("there is no job"),
        "{missing}"
    );
}
