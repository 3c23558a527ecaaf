//! Running the drive: health and readiness, request ids in answers and logs, and the
//! Prometheus metrics.

use drive_tests::proxy::TcpProxy;
use drive_tests::*;
use serde_json::{Value, json};

#[tokio::test]
async fn readiness_names_what_does_not_answer_while_health_stays_up() {
    let proxy = TcpProxy::start(&env("DRIVE_S3_ENDPOINT")).await;
    let app = TestApp::spawn_with(&[("DRIVE_S3_ENDPOINT", &proxy.endpoint)]).await;
    let get = |path: &'static str| {
        let url = format!("{}{path}", app.url);
        async move {
            let reply = reqwest::get(url).await.unwrap();
            (reply.status().as_u16(), reply.json::<Value>().await.unwrap())
        }
    };
    assert_eq!(get("/healthz").await, (200, json!({ "status": "up" })));
    assert_eq!(get("/readyz").await, (200, json!({ "status": "ready" })));

    proxy.take_down();
    let (status, body) = get("/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["code"], "not_ready");
    assert_eq!(body["retryable"], true);
    let error = body["error"].as_str().unwrap();
    assert!(
        error.contains("the object store") && !error.contains("database"),
        "{error}"
    );
    assert_eq!(get("/healthz").await.0, 200);

    proxy.bring_up();
    assert_eq!(get("/readyz").await.0, 200);
}

#[tokio::test]
async fn every_answer_names_its_request_and_the_log_lines_it_caused_do_too() {
    let proxy = TcpProxy::start(&env("DRIVE_S3_ENDPOINT")).await;
    let app = TestApp::spawn_with(&[("DRIVE_S3_ENDPOINT", &proxy.endpoint)]).await;
    let user = app.user(Some("Pro")).await;
    let file = app
        .upload(&user, "a.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    let toggle = |id: Option<&'static str>| {
        let mut request = app
            .http
            .post(format!("{}/toggle-file-access", app.url))
            .bearer_auth(&user.session)
            .header("X-Drive-App", APP_ID)
            .json(&json!({ "id": file }));
        if let Some(id) = id {
            request = request.header("X-Request-Id", id);
        }
        async move {
            let reply = request.send().await.unwrap();
            let id = reply.headers()["x-request-id"].to_str().unwrap().to_string();
            (reply.status().as_u16(), id)
        }
    };
    proxy.take_down();
    let (status, id) = toggle(Some("support-case-4711")).await;
    let metrics = reqwest::get(api_metrics(&app))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.lines().any(|l| l == "drive_store_errors_total 1"),
        "{metrics}"
    );
    assert_eq!((status, id.as_str()), (502, "support-case-4711"));
    // The storage failure's cause is logged under the caller's id.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
    while !app
        .log()
        .lines()
        .any(|l| l.contains("support-case-4711") && l.contains("storage unavailable"))
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no log line names the request:\n{}",
            app.log()
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // Without an id, or with one that is not a plain token, the drive makes one.
    let (_, made) = toggle(None).await;
    assert!(made.parse::<uuid::Uuid>().is_ok(), "{made}");
    let (_, replaced) = toggle(Some("a b\"c")).await;
    assert!(replaced.parse::<uuid::Uuid>().is_ok(), "{replaced}");
    proxy.bring_up();
}

#[tokio::test]
async fn metrics_count_requests_by_route_and_jobs_by_type_and_state() {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    let file = app
        .upload(&user, "a.bin", "Other", "application/octet-stream", bytes(100, 1))
        .await;
    app.run_job(&user, json!({ "jobType": "checksum", "fileIds": [file] }))
        .await;
    for _ in 0..3 {
        app.call(&user, "/select-user-files", None).await;
    }
    let missing = format!("/p/{}", uuid::Uuid::new_v4());
    assert_eq!(
        reqwest::get(format!("{}{missing}", app.url))
            .await
            .unwrap()
            .status(),
        404
    );
    // Made-up methods do not grow the label set either.
    let brew = reqwest::Method::from_bytes(b"BREW").unwrap();
    let answered = app
        .http
        .request(brew, format!("{}/healthz", app.url))
        .send()
        .await
        .unwrap();
    assert_eq!(answered.status(), 405);
    let scraped = reqwest::get(api_metrics(&app)).await.unwrap();
    assert_eq!(scraped.status(), 200);
    assert!(
        scraped.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    let text = scraped.text().await.unwrap();
    let line = |start: &str| {
        text.lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no {start} in:\n{text}"))
            .to_string()
    };
    assert!(
        line(r#"drive_http_requests_total{route="/select-user-files",method="POST",status="200"}"#)
            .ends_with(" 3")
    );
    // A link's pattern, not its path: callers cannot grow the label set.
    assert!(line(r#"drive_http_requests_total{route="/p/{id}",method="GET",status="404"}"#).ends_with(" 1"));
    assert!(!text.contains(&missing));
    assert!(
        !text.contains("BREW") && text.contains(r#"method="other""#),
        "{text}"
    );
    assert!(
        line(r#"drive_http_request_seconds_bucket{route="/select-user-files",method="POST",le="+Inf"}"#)
            .ends_with(" 3")
    );
    assert!(
        line(r#"drive_http_request_seconds_count{route="/select-user-files",method="POST"}"#).ends_with(" 3")
    );
    assert!(line(r#"drive_jobs{type="checksum",state="done"}"#).ends_with(" 1"));
    assert!(text.contains(r#"drive_job_seconds{type="checksum",state="done"}"#));
    assert_eq!(line("drive_upload_bytes_total "), "drive_upload_bytes_total 100");
    assert_eq!(line("drive_store_errors_total "), "drive_store_errors_total 0");
}

/// The API's `/metrics`, on its listener of their own.
fn api_metrics(app: &TestApp) -> String {
    let served = app
        .metrics_url
        .as_deref()
        .expect("the test app serves its metrics");
    format!("{served}/metrics")
}

#[tokio::test]
async fn metrics_are_served_on_their_own_listener_only() {
    let app = TestApp::spawn().await;
    let scraped = reqwest::get(api_metrics(&app)).await.unwrap();
    assert_eq!(scraped.status(), 200);
    assert!(
        scraped
            .text()
            .await
            .unwrap()
            .contains("drive_http_requests_total")
    );
    // The public listener answers `/metrics` like any route it does not have, and the metrics
    // listener serves nothing else.
    let public = reqwest::get(format!("{}/metrics", app.url)).await.unwrap();
    assert_eq!(public.status(), 404);
    let body: Value = public.json().await.unwrap();
    assert_eq!(body["code"], "unknown_route", "{body}");
    let elsewhere = reqwest::get(format!("{}/healthz", app.metrics_url.as_deref().unwrap()))
        .await
        .unwrap();
    assert_eq!(elsewhere.status(), 404);
    // Without DRIVE_METRICS_LISTEN they are served nowhere.
    let unset = TestApp::spawn_with(&[("DRIVE_METRICS_LISTEN", "")]).await;
    assert_eq!(unset.metrics_url, None);
    let public = reqwest::get(format!("{}/metrics", unset.url)).await.unwrap();
    assert_eq!(public.status(), 404);
}

/// What a worker's `/metrics` serves, found at the address it wrote to `address_file`
/// (`DRIVE_WORKER_METRICS_ADDRESS_FILE`).
async fn worker_metrics(address_file: &std::path::Path) -> String {
    let listen = std::fs::read_to_string(address_file).expect("the metrics address written down");
    reqwest::get(format!("http://{listen}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_worker_serves_what_it_ran_and_what_waits() {
    // On any free port, which the worker writes down, as the worker image's health check reads it.
    let scratch = drive_tests::scratch::Scratch::new();
    let address_file = scratch.path("metrics-address");
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let file = app
        .upload(&user, "a.bin", "Other", "application/octet-stream", bytes(100, 1))
        .await;
    // Queued before any worker runs.
    let job = app
        .create_job(&user, json!({ "jobType": "checksum", "fileIds": [file] }))
        .await;
    app.start_worker(&[
        ("DRIVE_WORKER_METRICS_LISTEN", "127.0.0.1:0"),
        (
            "DRIVE_WORKER_METRICS_ADDRESS_FILE",
            address_file.to_str().unwrap(),
        ),
    ])
    .await;
    app.wait_job(&user, &job["id"]).await;
    // The job's row says it ended before its worker has counted it (the worker records the
    // end, frees the slot, reads the row back, then counts the end): its series settle
    // within moments, the count last.
    let counted = r#"drive_worker_jobs_ended_total{type="checksum",state="done"} 1"#;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let text = loop {
        let text = worker_metrics(&address_file).await;
        if text.lines().any(|l| l == counted) || std::time::Instant::now() > deadline {
            break text;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert!(text.lines().any(|l| l == "drive_worker_jobs_running 0"), "{text}");
    for lane in ["system", "interactive", "bulk"] {
        let queued = format!(r#"drive_farm_jobs_queued{{lane="{lane}"}} 0"#);
        assert!(text.lines().any(|l| l == queued), "{text}");
    }
    assert!(text.lines().any(|l| l == "drive_worker_slots_busy 0"), "{text}");
    assert!(
        text.lines()
            .any(|l| l == r#"drive_worker_job_wait_seconds_count{lane="interactive"} 1"#),
        "{text}"
    );
    assert!(text.lines().any(|l| l == counted), "{text}");
    assert!(text.contains(r#"drive_worker_job_seconds_total{type="checksum",state="done"}"#));
}

#[tokio::test]
async fn a_worker_counts_the_store_calls_that_failed() {
    let scratch = drive_tests::scratch::Scratch::new();
    let address_file = scratch.path("metrics-address");
    let store = TcpProxy::start(&env("DRIVE_S3_ENDPOINT")).await;
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    // An upload left open, which the worker's sweep (twice a second) finds idle after a second
    // and asks the store about.
    let input = json!({ "type": "Video", "fileName": "idle.mp4", "fileSize": 64 * 1024 * 1024 + 1, "objectKey": user.key("idle.mp4") });
    let create = app.call(&user, "/create-multipart-upload", Some(input)).await;
    assert_eq!(create.status, 200, "{}", create.body);
    store.take_down();
    app.start_worker(&[
        ("DRIVE_S3_ENDPOINT", &store.endpoint),
        ("DRIVE_SWEEP_INTERVAL_SECONDS", "0.5"),
        ("DRIVE_UPLOAD_IDLE_SECONDS", "1"),
        ("DRIVE_WORKER_METRICS_LISTEN", "127.0.0.1:0"),
        (
            "DRIVE_WORKER_METRICS_ADDRESS_FILE",
            address_file.to_str().unwrap(),
        ),
    ])
    .await;
    let failures = || async {
        let text = worker_metrics(&address_file).await;
        let line = text
            .lines()
            .find(|l| l.starts_with("drive_store_errors_total "))
            .unwrap_or_else(|| panic!("no drive_store_errors_total in {text}"))
            .to_string();
        line["drive_store_errors_total ".len()..].parse::<u64>().unwrap()
    };
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while failures().await == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the worker never counted a failed store call"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    // Back up, the sweep goes through: the upload is aborted, and the count stops growing.
    store.bring_up();
    let still_open = json!({ "token": create.body["token"], "partNumbers": [1] });
    loop {
        let reply = app
            .call(&user, "/sign-upload-parts", Some(still_open.clone()))
            .await;
        if reply.status == 404 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the sweep never went through"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let counted = failures().await;
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert_eq!(failures().await, counted);
}

#[tokio::test]
async fn sigterm_lets_requests_in_flight_finish_and_takes_no_new_ones() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let since = app.call(&user, "/select-drive-events", None).await.body["nextCursor"].clone();
    // A call holding for 3 s when the stop comes.
    let started = std::time::Instant::now();
    let in_flight = app.call_in_background(
        &user,
        "/select-drive-events",
        json!({ "since": since, "wait": 3 }),
    );
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let status = app.terminate_api().await;
    assert!(status.success(), "{status}");
    let (answered, page) = in_flight.await.expect("the call in flight was answered");
    assert_eq!(page["events"], json!([]));
    assert!(
        answered - started >= std::time::Duration::from_secs(3),
        "it was cut short"
    );
    // Nothing is served any more, on either listener.
    assert!(reqwest::get(format!("{}/healthz", app.url)).await.is_err());
    assert!(reqwest::get(api_metrics(&app)).await.is_err());
}
