//! The sweep (`drive-api admin sweep`, and on a schedule in every worker): uploads idle for 7 days
//! are aborted, and objects the store failed to remove at deletion time are removed.

use drive_tests::proxy::TcpProxy;
use drive_tests::*;
use serde_json::json;

#[tokio::test]
async fn an_upload_with_no_new_part_past_the_limit_is_aborted() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let input = json!({ "type": "Video", "fileName": "idle.mp4", "fileSize": 64 * 1024 * 1024 + 1, "objectKey": user.key("idle.mp4") });
    let create = app.call(&user, "/create-multipart-upload", Some(input)).await;
    let part = create.body["signedParts"][1]["url"].as_str().unwrap();
    assert!(put(part, vec![1u8]).await.is_success());
    let token = json!({ "token": create.body["token"] });
    let still_open = json!({ "token": create.body["token"], "partNumbers": [1] });

    // Seconds old, not seven days: the default sweep leaves it open.
    let out = app.admin(&["sweep"]);
    assert!(out.contains("aborted 0 idle uploads"), "{out}");
    assert_eq!(
        app.call(&user, "/sign-upload-parts", Some(still_open.clone()))
            .await
            .status,
        200
    );

    // With the limit at zero it has been idle long enough: gone, and it made nothing.
    let out = app.admin(&["sweep", "--idle-seconds", "0"]);
    assert!(out.contains("aborted 1 idle uploads"), "{out}");
    app.call(&user, "/sign-upload-parts", Some(still_open))
        .await
        .assert_error(404, "upload_not_found");
    app.call(&user, "/complete-multipart-upload", Some(token.clone()))
        .await
        .assert_error(404, "upload_not_found");
    assert_eq!(
        app.call(&user, "/abort-multipart-upload", Some(token)).await.body,
        json!({ "aborted": false })
    );
}

#[tokio::test]
async fn objects_the_store_failed_to_remove_are_removed_by_the_sweep() {
    let proxy = TcpProxy::start(&env("DRIVE_S3_ENDPOINT")).await;
    let app = TestApp::spawn_with(&[("DRIVE_S3_ENDPOINT", &proxy.endpoint)]).await;
    let user = app.user(Some("Pro")).await;
    let id = app
        .upload(&user, "a.txt", "Text", "text/plain", bytes(10, 1))
        .await;
    let key = app.object_key(id).await;

    proxy.take_down();
    let deleted = app
        .call(&user, "/delete-files", Some(json!([{ "id": id }])))
        .await;
    assert_eq!(
        deleted.body,
        json!({ "deleted": [id] }),
        "the record goes even while the store is away"
    );
    let store = raw_store().await;
    let head = || store.head_object().bucket(&app.private_bucket).key(&key).send();
    assert!(head().await.is_ok(), "the object should still be stored");

    let out = app.admin(&["sweep"]);
    assert!(out.contains("removed 1 queued objects"), "{out}");
    assert!(head().await.is_err(), "the sweep left the object");
    let queued: i64 = sqlx::query_scalar("select count(*) from object_deletions")
        .fetch_one(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(queued, 0);
}

#[tokio::test]
async fn the_worker_farm_runs_the_sweep_on_its_schedule() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let input = json!({ "type": "Video", "fileName": "idle.mp4", "fileSize": 64 * 1024 * 1024 + 1, "objectKey": user.key("idle.mp4") });
    let create = app.call(&user, "/create-multipart-upload", Some(input)).await;
    let still_open = json!({ "token": create.body["token"], "partNumbers": [1] });
    assert_eq!(
        app.call(&user, "/sign-upload-parts", Some(still_open.clone()))
            .await
            .status,
        200
    );

    // Uploads idle for a second count as idle here; the sweep runs twice a second.
    app.start_worker(&[
        ("DRIVE_SWEEP_INTERVAL_SECONDS", "0.5"),
        ("DRIVE_UPLOAD_IDLE_SECONDS", "1"),
    ])
    .await;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let reply = app
            .call(&user, "/sign-upload-parts", Some(still_open.clone()))
            .await;
        if reply.status == 404 {
            reply.assert_error(404, "upload_not_found");
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the farm never aborted the idle upload"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// The store failing stops neither the sweep's other steps nor its later rounds: with the store
/// out of reach, an idle upload cannot be aborted (the sweep says so and exits non-zero), but
/// the sessions expired long ago are forgotten all the same; once the store answers, the next
/// sweep aborts the upload.
#[tokio::test]
async fn a_store_failure_leaves_the_rest_of_the_sweep_to_run() {
    let proxy = TcpProxy::start(&env("DRIVE_S3_ENDPOINT")).await;
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let input =
        json!({ "type": "Other", "fileName": "idle.bin", "fileSize": 10, "objectKey": user.key("idle.bin") });
    let created = app.call(&user, "/create-multipart-upload", Some(input)).await;
    assert_eq!(created.status, 200, "{}", created.body);
    sqlx::query("update sessions set expires_at = now() - interval '2 days'")
        .execute(&mut app.db().await)
        .await
        .unwrap();

    proxy.take_down();
    let through_proxy = [("DRIVE_S3_ENDPOINT", proxy.endpoint.as_str())];
    let out = app.admin_with(&through_proxy, &["sweep", "--idle-seconds", "0"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(!out.status.success(), "a failed step is not a success: {stdout}");
    assert!(stderr.contains("could not be swept"), "{stderr}");
    assert!(
        stdout.contains("aborted 0 idle uploads") && !stdout.contains("forgot 0 sessions"),
        "{stdout}"
    );
    let sessions: i64 = sqlx::query_scalar("select count(*) from sessions")
        .fetch_one(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(sessions, 0, "the expired session outlived a store failure");

    proxy.bring_up();
    let out = app.admin_with(&through_proxy, &["sweep", "--idle-seconds", "0"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("aborted 1 idle uploads"));
}
