//! The agent's tools that make things (A2A over real HTTP, a scripted model, the drive's real
//! routes, a worker running the jobs and drawing the image through a stand-in provider): a file
//! request, a review, an image and jobs, each attached to the reply as a link that works.

use std::time::Duration;

use drive_tests::image_providers::FakeProviders;
use drive_tests::provider::FakeChat;
use drive_tests::*;
use serde_json::json;

use crate::agent::{call, rpc, task_of, text_message, told};

#[tokio::test]
async fn the_agent_asks_for_files_shares_a_review_draws_an_image_and_runs_jobs() {
    let fake = FakeProviders::start().await;
    let environment = fake.environment();
    let mut pairs: Vec<(&str, &str)> = environment
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mut app = TestApp::spawn_with(&pairs).await;
    let user = app.user(Some("Pro")).await;
    let video = app
        .upload(&user, "cut-3.webm", "Video", "video/webm", crate::reviews::webm())
        .await;
    let moved = app
        .call(
            &user,
            "/move-files",
            Some(json!({ "fileIds": [video], "folder": "/edits" })),
        )
        .await;
    assert_eq!(moved.status, 200, "{}", moved.body);

    let model = FakeChat::scripted(
        vec![
            call(
                "ask_for_files",
                json!({ "title": "Slides for the offsite", "folder": "/inbox/slides", "days": 7 }),
            ),
            call("share_for_review", json!({ "text": "cut 3", "title": "Cut 3 first pass" })),
            call("make_image", json!({ "prompt": "a lighthouse at dusk", "aspectRatio": "3:2" })),
            // Stills need moments: the model is told, and asks again with them.
            call("run_job", json!({ "job": "stills", "folder": "/edits", "types": ["Video"] })),
            call(
                "run_job",
                json!({ "job": "stills", "folder": "/edits", "types": ["Video"], "options": { "moments": [0.2, 0.6] } }),
            ),
            // Nothing in /edits is a PDF: the model is told, and goes on.
            call("run_job", json!({ "job": "splitPdf", "folder": "/edits" })),
            call("run_job", json!({ "job": "zip", "folder": "/edits" })),
            call("reply", json!({ "text": "Done." })),
        ],
        Duration::ZERO,
    )
    .await;
    pairs.extend([
        ("DRIVE_AGENT_MODEL_URL", model.url.as_str()),
        ("DRIVE_AGENT_MODEL", "scripted"),
    ]);
    app.start_worker(&pairs).await;

    let answer = rpc(
        &app,
        &user.api_token,
        "SendMessage",
        json!({ "message": text_message("Set up the offsite: slides request, review of cut 3, a poster, stills") }),
    )
    .await;
    let task = task_of(&answer);
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{answer}");
    let parts = task["status"]["message"]["parts"].as_array().unwrap().clone();
    assert_eq!(parts[0], json!({ "text": "Done." }));

    // The request: its page attached, its files landing where asked, taking files for 7 days.
    assert_eq!(
        parts[1]["filename"], "file request: Slides for the offsite",
        "{parts:?}"
    );
    assert_eq!(parts[1]["mediaType"], "text/html");
    let requests = app.call(&user, "/select-file-requests", Some(json!({}))).await;
    let request = &requests.body["requests"][0];
    assert_eq!(request["title"], "Slides for the offsite", "{}", requests.body);
    assert_eq!(request["folder"]["path"], "/inbox/slides/");
    assert_eq!(parts[1]["url"], request["url"]);
    let expires: chrono::DateTime<chrono::Utc> = request["expireTime"].as_str().unwrap().parse().unwrap();
    let days = (expires - chrono::Utc::now()).num_hours() as f64 / 24.0;
    assert!((6.9..=7.0).contains(&days), "{days}");
    let (status, page) = get(parts[1]["url"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    assert!(String::from_utf8_lossy(&page).contains("Slides for the offsite"));

    // The review of the video whose name has the words, titled as asked.
    assert_eq!(parts[2]["filename"], "review: Cut 3 first pass", "{parts:?}");
    let reviews = app.call(&user, "/select-file-reviews", Some(json!({}))).await;
    let review = &reviews.body["reviews"][0];
    assert_eq!(review["file"]["id"], video.to_string(), "{}", reviews.body);
    assert_eq!(parts[2]["url"], review["url"]);
    assert_eq!(told(&model, 2)["file"], "cut-3.webm");

    // The image, drawn and saved, its link working.
    let drawn = told(&model, 3);
    assert!(drawn["fileName"].is_string(), "{drawn}");
    assert_eq!(parts[3]["filename"], drawn["fileName"], "{parts:?}");
    assert!(
        parts[3]["mediaType"].as_str().unwrap().starts_with("image/"),
        "{parts:?}"
    );
    let (status, image) = get(parts[3]["url"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    assert!(!image.is_empty());

    // The stills job ran on the one video, and every still it made is attached.
    let unset = told(&model, 4);
    assert!(unset["error"].as_str().unwrap().contains("options"), "{unset}");
    let stills = told(&model, 5);
    let job = &stills["jobs"][0];
    assert_eq!(stills["jobs"].as_array().map(Vec::len), Some(1), "{stills}");
    assert_eq!(job["inputs"], json!(["cut-3.webm"]), "{stills}");
    assert_eq!(job["state"], "done", "{stills}");
    let made = job["made"].as_array().unwrap();
    assert_eq!(made.len(), 2, "{stills}");
    assert_eq!(parts.len(), 4 + made.len(), "{parts:?}");
    for (part, name) in parts[4..].iter().zip(made) {
        assert_eq!(part["filename"], *name);
        let (status, bytes) = get(part["url"].as_str().unwrap()).await;
        assert_eq!(status, 200);
        assert!(!bytes.is_empty());
    }
    let listed = app.call(&user, "/select-file-jobs", Some(json!({}))).await;
    assert_eq!(
        listed.body["jobs"].as_array().unwrap().len(),
        1,
        "one job started: {}",
        listed.body
    );

    // What no file fits, and a zip, are refused with why.
    let refused = told(&model, 6);
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("no file there is one splitPdf takes"),
        "{refused}"
    );
    let zip = told(&model, 7);
    assert!(zip["error"].as_str().unwrap().contains("zip_files"), "{zip}");
}

#[tokio::test]
async fn the_agent_runs_one_of_the_user_s_templates_on_the_files_it_chooses() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let video = app
        .upload(&user, "cut-3.webm", "Video", "video/webm", crate::reviews::webm())
        .await;
    let moved = app
        .call(
            &user,
            "/move-files",
            Some(json!({ "fileIds": [video], "folder": "/edits" })),
        )
        .await;
    assert_eq!(moved.status, 200, "{}", moved.body);
    let kept = app
        .call(
            &user,
            "/create-job-template",
            Some(json!({ "name": "Poster frame", "steps": [
                { "jobType": "stills", "options": { "at": 0.2 } },
                { "jobType": "convert", "options": { "format": "png", "maxEdge": 64 } },
            ] })),
        )
        .await;
    assert_eq!(kept.status, 200, "{}", kept.body);
    let model = FakeChat::scripted(
        vec![
            call(
                "run_template",
                json!({ "template": "no such", "folder": "/edits" }),
            ),
            call(
                "run_template",
                json!({ "template": "poster frame", "folder": "/edits", "types": ["Video"] }),
            ),
            call("reply", json!({ "text": "Here it is." })),
        ],
        Duration::ZERO,
    )
    .await;
    app.start_worker(&[
        ("DRIVE_AGENT_MODEL_URL", model.url.as_str()),
        ("DRIVE_AGENT_MODEL", "scripted"),
    ])
    .await;
    let answer = rpc(
        &app,
        &user.api_token,
        "SendMessage",
        json!({ "message": text_message("Make the poster frame of my edits") }),
    )
    .await;
    let task = task_of(&answer);
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{answer}");
    // An unknown name is told with the names there are; the template's file is attached.
    let unknown = told(&model, 1);
    assert!(
        unknown["error"].as_str().unwrap().contains("Poster frame"),
        "{unknown}"
    );
    let ran = told(&model, 2);
    assert_eq!(ran["template"], "Poster frame", "{ran}");
    let parts = task["status"]["message"]["parts"].as_array().unwrap().clone();
    assert_eq!(parts.len(), 2, "{parts:?}");
    assert!(
        parts[1]["filename"].as_str().unwrap().ends_with(".png"),
        "{parts:?}"
    );
    let (status, bytes) = get(parts[1]["url"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    assert!(bytes.starts_with(b"\x89PNG"));
}
