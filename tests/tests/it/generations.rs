//! Image generation end to end: `/generate-image` and `/select-generations` over real HTTP, the
//! farm calling each provider's stand-in in its real wire format (`image_providers`), the
//! image saved as a file of the caller's, the `generation` event, the plan's rules, every row
//! of the state table, and a worker killed mid-generation.

use std::time::Duration;

use drive_tests::image_providers::{FakeProviders, picture};
use drive_tests::*;
use serde_json::{Value, json};

async fn generate(app: &TestApp, user: &TestUser, body: Value) -> Value {
    let started = app.call(user, "/generate-image", Some(body)).await;
    assert_eq!(started.status, 200, "generate-image: {}", started.body);
    started.body
}

async fn generation(app: &TestApp, user: &TestUser, id: &Value) -> Value {
    let found = app
        .call(user, "/select-generations", Some(json!({ "ids": [id] })))
        .await;
    assert_eq!(found.status, 200, "select-generations: {}", found.body);
    found.body["generations"][0].clone()
}

/// Polls until the generation is no longer working.
async fn ended(app: &TestApp, user: &TestUser, id: &Value) -> Value {
    until(app, user, id, |g| g["status"] != "working").await
}

/// Polls until the generation is `status`.
async fn ended_as(app: &TestApp, user: &TestUser, id: &Value, status: &str) -> Value {
    until(app, user, id, |g| g["status"] == status).await
}

async fn until(app: &TestApp, user: &TestUser, id: &Value, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let generation = generation(app, user, id).await;
        if done(&generation) {
            return generation;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not there yet: {generation}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn generation_events(app: &TestApp, user: &TestUser, id: &Value, n: usize) -> Vec<Value> {
    app.wait_events(user, json!({ "kinds": ["generation"], "generationId": id }), n)
        .await
}

#[tokio::test]
async fn every_model_draws_through_its_provider_and_the_image_is_saved_privately() {
    let fake = FakeProviders::start().await;
    let app = fake.app(&[]).await;
    let user = app.user(Some("Pro")).await;
    let cases = [
        ("gptImage2", "2:3"),
        ("nanoBanana", "16:9"),
        ("imagen4Fast", "9:16"),
        ("seedream4", "16:9"),
        ("flux2Pro", "3:2"),
        ("fluxKreaDev", "4:3"),
        ("nanoBananaPro", "1:1"),
    ];
    let mut stored = 0;
    for (model, ratio) in cases {
        let prompt = format!("A lighthouse at dusk drawn by {model}");
        let started = generate(
            &app,
            &user,
            json!({ "prompt": prompt, "model": model, "aspectRatio": ratio }),
        )
        .await;
        assert_eq!(started["model"], model);
        assert_eq!(started["aspectRatio"], ratio);
        // Quality is GPT Image's alone, medium by default on Pro.
        let quality = if model == "gptImage2" {
            json!("medium")
        } else {
            Value::Null
        };
        assert_eq!(started["quality"], quality, "{started}");

        let done = ended(&app, &user, &started["id"]).await;
        assert_eq!(done["status"], "done", "{model}: {done}");
        assert_eq!(done["error"], Value::Null);
        assert_eq!(done["model"], model);
        assert_eq!(done["prompt"], prompt);
        assert!(done.get("trashed").is_none(), "{done}");
        let image = &done["image"];
        assert_eq!(image["type"], "Image");
        assert_eq!(image["mimeType"], "image/png");
        assert_eq!(image["isPublic"], false);
        assert_eq!(image["fileName"], format!("{prompt}.png"));
        let (status, bytes) = get(image["downloadUrl"].as_str().expect("a download link")).await;
        assert_eq!(status, 200);
        assert_eq!(bytes, picture(), "{model}'s image is stored whole");
        stored += bytes.len() as u64;

        let events = generation_events(&app, &user, &started["id"], 1).await;
        assert_eq!(events.len(), 1, "one event: {events:?}");
        assert_eq!(events[0]["status"], "done");
        assert_eq!(events[0]["prompt"], prompt);
        assert_eq!(events[0]["error"], Value::Null);
        assert_eq!(events[0]["image"]["id"], image["id"]);
        // A generated image is announced by its generation, not as a `file` event.
        let files = app
            .call(&user, "/select-drive-events", Some(json!({ "kinds": ["file"] })))
            .await;
        assert_eq!(files.body["events"], json!([]), "{}", files.body);

        // An ordinary file: listed, its metadata read, counted in storage.
        let id: drive_core::id::FileId = serde_json::from_value(image["id"].clone()).unwrap();
        let read = app.reading(&user, id).await;
        assert_eq!(read["metadataState"], "read", "{read}");
    }
    let usage = app.call(&user, "/get-user-storage-usage", None).await;
    assert_eq!(usage.body["usedBytes"], stored, "{}", usage.body);

    // What each adapter sent, as each provider's documentation asks.
    let openai = &fake.sent("/openai/")[0].body;
    assert_eq!(openai["size"], "1024x1536");
    assert_eq!(openai["quality"], "medium");
    assert_eq!(openai["n"], 1);
    let google = fake.sent("/google/");
    assert_eq!(
        google[0].path,
        "/google/v1beta/models/gemini-2.5-flash-image:generateContent"
    );
    assert_eq!(
        google[0].body["generationConfig"]["imageConfig"]["aspectRatio"],
        "16:9"
    );
    assert_eq!(
        google[1].path,
        "/google/v1beta/models/imagen-4.0-fast-generate-001:predict"
    );
    assert_eq!(
        google[1].body["parameters"],
        json!({ "sampleCount": 1, "aspectRatio": "9:16" })
    );
    assert_eq!(
        google[2].path,
        "/google/v1beta/models/gemini-3-pro-image:generateContent"
    );
    let seedream = &fake.sent("/modelark/")[0].body;
    assert_eq!(seedream["size"], "2560x1440");
    assert_eq!(seedream["watermark"], false);
    let bfl = &fake.sent("/bfl/v1/flux-2-pro")[0].body;
    let (w, h) = (bfl["width"].as_u64().unwrap(), bfl["height"].as_u64().unwrap());
    assert!(
        w % 32 == 0 && h % 32 == 0 && (w as f64 / h as f64 - 1.5).abs() < 0.05,
        "{bfl}"
    );
    assert!(
        fake.sent("/bfl/v1/get_result").len() >= 3,
        "the task was polled until ready"
    );
    let fal = &fake.sent("/fal/fal-ai/flux/krea")[0].body;
    let size = &fal["image_size"];
    let (w, h) = (size["width"].as_u64().unwrap(), size["height"].as_u64().unwrap());
    assert!((w as f64 / h as f64 - 4.0 / 3.0).abs() < 0.05, "{fal}");
    assert_eq!(
        fake.sent("/delivery/").len(),
        2,
        "BFL's and fal's images fetched by link"
    );
}

#[tokio::test]
async fn a_provider_s_refusal_fails_the_generation_in_its_own_words() {
    let fake = FakeProviders::start().await;
    let app = fake.app(&[]).await;
    let user = app.user(Some("Pro")).await;
    let cases = [
        ("gptImage2", "rejected by the safety system"),
        ("nanoBanana", "blocked (SAFETY)"),
        ("imagen4Fast", "no picture"),
        ("seedream4", "input text may contain sensitive information"),
        ("flux2Pro", "Request Moderated"),
        ("fluxKreaDev", "flagged by a content checker"),
    ];
    for (model, said) in cases {
        let prompt = format!("please refuse this, {model}");
        let started = generate(&app, &user, json!({ "prompt": prompt, "model": model })).await;
        let failed = ended(&app, &user, &started["id"]).await;
        assert_eq!(failed["status"], "failed", "{failed}");
        let error = failed["error"].as_str().expect("an error");
        assert!(error.contains(said), "{model}: {error}");
        assert_eq!(failed["image"], Value::Null);
        let events = generation_events(&app, &user, &started["id"], 1).await;
        assert_eq!(events[0]["status"], "failed");
        assert_eq!(events[0]["error"], error);
        assert_eq!(events[0]["image"], Value::Null);
    }
    // Nothing was stored for them.
    let usage = app.call(&user, "/get-user-storage-usage", None).await;
    assert_eq!(usage.body["usedBytes"], 0, "{}", usage.body);
}

#[tokio::test]
async fn a_provider_that_does_not_answer_in_time_fails_the_generation() {
    let fake = FakeProviders::start().await;
    let app = fake.app(&[("DRIVE_GENERATION_TIMEOUT_SECONDS", "1")]).await;
    let user = app.user(Some("Pro")).await;
    let started = generate(&app, &user, json!({ "prompt": "a slow snail" })).await;
    let failed = ended(&app, &user, &started["id"]).await;
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["error"], "OpenAI: it did not answer in time");
    assert_eq!(
        generation_events(&app, &user, &started["id"], 1).await[0]["status"],
        "failed"
    );
}

#[tokio::test]
async fn bad_requests_are_refused_naming_the_field() {
    let fake = FakeProviders::start().await;
    let app = fake.app(&[]).await;
    let user = app.user(Some("Pro")).await;
    let long = "a".repeat(4001);
    let rows = [
        (json!({}), "prompt"),
        (json!({ "prompt": "" }), "prompt"),
        (json!({ "prompt": "   " }), "prompt"),
        (json!({ "prompt": long }), "prompt"),
        (json!({ "prompt": "bell \u{7}" }), "prompt"),
        (json!({ "prompt": 7 }), "prompt"),
        (json!({ "prompt": "x", "model": "dallE" }), "model"),
        (json!({ "prompt": "x", "aspectRatio": "5:4" }), "aspectRatio"),
        (json!({ "prompt": "x", "aspectRatio": "16:9" }), "aspectRatio"),
        (
            json!({ "prompt": "x", "model": "imagen4Fast", "aspectRatio": "3:2" }),
            "aspectRatio",
        ),
        (json!({ "prompt": "x", "quality": "ultra" }), "quality"),
        (
            json!({ "prompt": "x", "model": "flux2Pro", "quality": "high" }),
            "quality",
        ),
    ];
    for (body, field) in rows {
        let reply = app.call(&user, "/generate-image", Some(body.clone())).await;
        assert_eq!(reply.status, 400, "{body}: {}", reply.body);
        reply.assert_bad_field(reply.body["code"].as_str().unwrap(), field);
    }
    // The longest prompt is taken.
    generate(&app, &user, json!({ "prompt": "a".repeat(4000) })).await;

    let too_many: Vec<String> = (0..21).map(|_| uuid::Uuid::new_v4().to_string()).collect();
    for body in [
        json!({}),
        json!({ "ids": [] }),
        json!({ "ids": too_many }),
        json!({ "ids": ["nope"] }),
    ] {
        let reply = app.call(&user, "/select-generations", Some(body.clone())).await;
        assert_eq!(reply.status, 400, "{body}: {}", reply.body);
        reply.assert_bad_field(reply.body["code"].as_str().unwrap(), "ids");
    }
}

#[tokio::test]
async fn the_plan_decides_what_may_be_generated() {
    let fake = FakeProviders::start().await;
    // Only OpenAI and Black Forest Labs are set up on this drive.
    let mut environment: Vec<(String, String)> = fake
        .environment()
        .into_iter()
        .filter(|(k, _)| !k.contains("GEMINI") && !k.contains("MODELARK") && !k.contains("FAL"))
        .collect();
    environment.push(("DRIVE_IMAGES_BASIC".into(), "2".into()));
    environment.push(("DRIVE_QUOTA_INTRO_BYTES".into(), "1000".into()));
    let pairs: Vec<(&str, &str)> = environment
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mut app = TestApp::spawn_with(&pairs).await;
    app.start_worker(&[]).await;

    let nobody = app.user(None).await;
    let reply = app
        .call(&nobody, "/generate-image", Some(json!({ "prompt": "a cat" })))
        .await;
    reply.assert_error(403, "no_plan");

    let basic = app.user(Some("Basic")).await;
    for body in [
        json!({ "prompt": "a cat", "model": "nanoBananaPro" }),
        json!({ "prompt": "a cat", "quality": "medium" }),
        json!({ "prompt": "a cat", "quality": "high" }),
    ] {
        let reply = app.call(&basic, "/generate-image", Some(body.clone())).await;
        reply.assert_error(403, "pro_only");
    }
    let reply = app
        .call(
            &basic,
            "/generate-image",
            Some(json!({ "prompt": "a cat", "model": "nanoBanana" })),
        )
        .await;
    let body = reply.assert_error(502, "generator_unavailable");
    assert_eq!(body["retryable"], true);
    assert!(
        body["error"].as_str().unwrap().contains("DRIVE_GEMINI_API_KEY"),
        "{body}"
    );

    // Basic draws at low quality by default; a failed generation is not counted.
    let started = generate(&app, &basic, json!({ "prompt": "a cat" })).await;
    assert_eq!(started["quality"], "low");
    assert_eq!(ended(&app, &basic, &started["id"]).await["status"], "done");
    assert_eq!(fake_quality(&fake, 0), "low");
    let refused = generate(
        &app,
        &basic,
        json!({ "prompt": "refuse a cat", "model": "flux2Pro" }),
    )
    .await;
    assert_eq!(ended(&app, &basic, &refused["id"]).await["status"], "failed");
    generate(&app, &basic, json!({ "prompt": "a dog", "quality": "low" })).await;
    let reply = app
        .call(&basic, "/generate-image", Some(json!({ "prompt": "a third" })))
        .await;
    let body = reply.assert_error(403, "no_images_left");
    assert_eq!(body["retryable"], false);

    // A full drive takes no new image.
    let intro = app.user(Some("Intro")).await;
    app.upload(&intro, "filler.txt", "Text", "text/plain", bytes(1000, 1))
        .await;
    let reply = app
        .call(&intro, "/generate-image", Some(json!({ "prompt": "a cat" })))
        .await;
    reply.assert_error(403, "storage_full");

    let pro = app.user(Some("Pro")).await;
    let started = generate(&app, &pro, json!({ "prompt": "a fine cat", "quality": "high" })).await;
    assert_eq!(started["quality"], "high");
    assert_eq!(ended(&app, &pro, &started["id"]).await["status"], "done");
}

fn fake_quality(fake: &FakeProviders, n: usize) -> String {
    fake.sent("/openai/")[n].body["quality"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn concurrent_requests_never_spend_more_than_the_allowance() {
    let fake = FakeProviders::start().await;
    let app = fake.app(&[("DRIVE_IMAGES_BASIC", "3")]).await;
    let user = app.user(Some("Basic")).await;
    let replies = futures::future::join_all((0..12).map(|n| {
        app.call(
            &user,
            "/generate-image",
            Some(json!({ "prompt": format!("picture {n}") })),
        )
    }))
    .await;
    let taken = replies.iter().filter(|r| r.status == 200).count();
    let refused = replies
        .iter()
        .filter(|r| r.status == 403 && r.body["code"] == "no_images_left")
        .count();
    assert_eq!(
        (taken, refused),
        (3, 9),
        "{:?}",
        replies.iter().map(|r| &r.body).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn a_trashed_image_keeps_its_generation_done_and_one_deleted_for_good_fails_it() {
    let fake = FakeProviders::start().await;
    let app = fake
        .app(&[
            ("DRIVE_GENERATION_IMAGE_GRACE_SECONDS", "1"),
            ("DRIVE_SWEEP_INTERVAL_SECONDS", "0.5"),
        ])
        .await;
    let user = app.user(Some("Pro")).await;
    let started = generate(
        &app,
        &user,
        json!({ "prompt": "an orange", "model": "seedream4" }),
    )
    .await;
    let done = ended(&app, &user, &started["id"]).await;
    assert_eq!(done["status"], "done");
    let file = done["image"]["id"].clone();

    let trashed = app
        .call(&user, "/trash-files", Some(json!([{ "id": file }])))
        .await;
    assert_eq!(trashed.status, 200, "{}", trashed.body);
    let seen = generation(&app, &user, &started["id"]).await;
    assert_eq!(seen["status"], "done");
    assert_eq!(seen["trashed"], true);
    assert_eq!(seen["image"]["id"], file);
    assert_eq!(seen["image"]["downloadUrl"], Value::Null);
    // The sweep leaves a trashed image's generation alone.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(generation(&app, &user, &started["id"]).await["status"], "done");

    let restored = app
        .call(&user, "/restore-files", Some(json!([{ "id": file }])))
        .await;
    assert_eq!(restored.status, 200, "{}", restored.body);
    let seen = generation(&app, &user, &started["id"]).await;
    assert!(seen.get("trashed").is_none(), "{seen}");
    assert!(seen["image"]["downloadUrl"].is_string(), "{seen}");

    let deleted = app
        .call(&user, "/delete-files", Some(json!([{ "id": file }])))
        .await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    let failed = ended_as(&app, &user, &started["id"], "failed").await;
    assert_eq!(failed["error"], "the image was deleted for good");
    assert_eq!(failed["image"], Value::Null);
    let events = generation_events(&app, &user, &started["id"], 2).await;
    assert_eq!(events[0]["status"], "done");
    assert_eq!(events[1]["status"], "failed");
    assert_eq!(events[1]["error"], "the image was deleted for good");
}

#[tokio::test]
async fn a_generation_whose_image_was_never_saved_is_failed_15_minutes_on() {
    let fake = FakeProviders::start().await;
    let environment = fake.environment();
    let pairs: Vec<(&str, &str)> = environment
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    // No worker: the generation stays working.
    let app = TestApp::spawn_with(&pairs).await;
    let user = app.user(Some("Pro")).await;
    let recent = generate(&app, &user, json!({ "prompt": "a pear" })).await;
    let stale = generate(&app, &user, json!({ "prompt": "an apple" })).await;
    // Both succeeded at the provider, one 14 minutes ago and one 16, and neither was saved.
    let mut db = app.db().await;
    for (started, minutes) in [(&recent, 14), (&stale, 16)] {
        sqlx::query(&format!(
            "update image_generations set succeeded_at = now() - interval '{minutes} minutes', image_type = 'image/png'
             where id = $1::uuid"
        ))
        .bind(started["id"].as_str().unwrap())
        .execute(&mut db)
        .await
        .unwrap();
    }
    let swept = app.admin(&["sweep"]);
    assert!(swept.contains("failed 1 generations without an image"), "{swept}");
    assert_eq!(generation(&app, &user, &recent["id"]).await["status"], "working");
    let failed = generation(&app, &user, &stale["id"]).await;
    assert_eq!(failed["status"], "failed");
    assert_eq!(
        failed["error"],
        "the image was made but could not be saved to the drive"
    );
    let events = generation_events(&app, &user, &stale["id"], 1).await;
    assert_eq!(events[0]["status"], "failed");
}

#[tokio::test]
async fn a_worker_killed_mid_generation_is_replaced_and_the_provider_is_paid_once() {
    let fake = FakeProviders::start().await;
    let mut app = fake.app(&[]).await;
    let user = app.user(Some("Pro")).await;
    let started = generate(
        &app,
        &user,
        json!({ "prompt": "hold a kite", "model": "flux2Pro" }),
    )
    .await;
    // The task is submitted and being polled when the worker dies.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while fake.sent("/bfl/v1/get_result").len() < 3 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the task was never polled"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    app.kill_worker(0);
    app.start_worker(&[]).await;
    fake.release();
    let done = ended(&app, &user, &started["id"]).await;
    assert_eq!(done["status"], "done", "{done}");
    assert_eq!(
        fake.sent("/bfl/v1/flux-2-pro").len(),
        1,
        "submitted once, however many workers"
    );
    let (_, bytes) = get(done["image"]["downloadUrl"].as_str().unwrap()).await;
    assert_eq!(bytes, picture());
    let listed = app.call(&user, "/select-user-files", None).await;
    assert_eq!(
        listed.body.as_array().map(Vec::len),
        Some(1),
        "saved once: {}",
        listed.body
    );
    assert_eq!(generation_events(&app, &user, &started["id"], 1).await.len(), 1);
}

#[tokio::test]
async fn another_account_s_generations_are_as_if_they_did_not_exist() {
    let fake = FakeProviders::start().await;
    let app = fake.app(&[]).await;
    let owner = app.user(Some("Pro")).await;
    let other = app.user(Some("Pro")).await;
    let started = generate(&app, &owner, json!({ "prompt": "a secret garden" })).await;
    assert_eq!(ended(&app, &owner, &started["id"]).await["status"], "done");
    let seen = app
        .call(
            &other,
            "/select-generations",
            Some(json!({ "ids": [started["id"]] })),
        )
        .await;
    assert_eq!(seen.status, 200);
    assert_eq!(seen.body, json!({ "generations": [] }));
    let nobody = app
        .call(
            &other,
            "/select-generations",
            Some(json!({ "ids": [uuid::Uuid::new_v4()] })),
        )
        .await;
    assert_eq!(nobody.body, seen.body);
    let events = app
        .call(
            &other,
            "/select-drive-events",
            Some(json!({ "generationId": started["id"] })),
        )
        .await;
    assert_eq!(events.body["events"], json!([]));
}

#[tokio::test]
async fn a_provider_s_model_name_can_be_changed_without_a_release() {
    let fake = FakeProviders::start().await;
    let app = fake
        .app(&[("DRIVE_NANO_BANANA_MODEL", "gemini-3.1-flash-image")])
        .await;
    let user = app.user(Some("Pro")).await;
    let started = generate(&app, &user, json!({ "prompt": "a kite", "model": "nanoBanana" })).await;
    assert_eq!(ended(&app, &user, &started["id"]).await["status"], "done");
    assert_eq!(
        fake.sent("/google/")[0].path,
        "/google/v1beta/models/gemini-3.1-flash-image:generateContent"
    );
}

/// The providers named as on the internet (`api.bfl.test`, `queue.fal.test`), reached through
/// the stand-ins' server as the farm's HTTP proxy: a task link on a subdomain of the provider's
/// host is refused, so its key goes nowhere but the configured host, and the image a provider
/// links to is fetched without any key.
#[tokio::test]
async fn a_provider_s_key_goes_to_its_configured_host_only() {
    let fake = FakeProviders::start().await;
    let app = fake
        .app(&[
            ("DRIVE_BFL_BASE_URL", "http://api.bfl.test/bfl/v1"),
            ("DRIVE_FAL_BASE_URL", "http://queue.fal.test/fal"),
            ("HTTP_PROXY", &fake.url),
            ("NO_PROXY", "127.0.0.1,localhost"),
        ])
        .await;
    let user = app.user(Some("Pro")).await;
    for (model, host) in [("flux2Pro", "api.bfl.test"), ("fluxKreaDev", "queue.fal.test")] {
        let elsewhere = generate(
            &app,
            &user,
            json!({ "prompt": "a cat, elsewhere", "model": model }),
        )
        .await;
        let failed = ended(&app, &user, &elsewhere["id"]).await;
        assert_eq!(failed["status"], "failed", "{failed}");
        let error = failed["error"].as_str().unwrap();
        assert!(
            error.contains(&format!("poll.{host}")) && error.contains("not one of the hosts its key goes to"),
            "{model}: {error}"
        );
        // Asked where it was configured, the same provider draws.
        let drawn = generate(&app, &user, json!({ "prompt": "a cat", "model": model })).await;
        assert_eq!(ended(&app, &user, &drawn["id"]).await["status"], "done");
    }
    let seen = fake.seen();
    let keyed = |headers: &reqwest::header::HeaderMap| {
        headers.contains_key("x-key") || headers.contains_key("authorization")
    };
    assert!(!seen.iter().any(|s| s.host.starts_with("poll.")), "{seen:#?}");
    let delivered: Vec<_> = seen.iter().filter(|s| s.path.starts_with("/delivery/")).collect();
    assert_eq!(delivered.len(), 2, "{seen:#?}");
    assert!(
        delivered
            .iter()
            .all(|s| s.host == "127.0.0.1" && !keyed(&s.headers)),
        "{delivered:#?}"
    );
    assert!(
        seen.iter()
            .filter(|s| keyed(&s.headers))
            .all(|s| s.host == "api.bfl.test" || s.host == "queue.fal.test"),
        "{seen:#?}"
    );
}
