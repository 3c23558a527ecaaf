//! Multipart uploads: every row of the spec's multipart state table, on the real store.

use drive_tests::*;
use serde_json::{Value, json};

const MIB: usize = 1024 * 1024;

fn input(user: &TestUser, name: &str, size: usize) -> Value {
    json!({ "type": "Video", "fileName": name, "fileSize": size, "objectKey": user.key(name), "mimeType": "video/mp4" })
}

fn signed_url(create: &Value, part: u64) -> String {
    create["signedParts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["partNumber"] == part)
        .unwrap_or_else(|| panic!("part {part} not signed: {create}"))["url"]
        .as_str()
        .unwrap()
        .to_string()
}

fn token(create: &Value) -> Value {
    json!({ "token": create["token"] })
}

#[tokio::test]
async fn a_file_larger_than_128_mib_uploads_in_parts_and_reads_back_whole() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let size = 130 * MIB + 123;
    let body = input(&user, "large.mp4", size);
    let create = app
        .call(&user, "/create-multipart-upload", Some(body.clone()))
        .await;
    assert_eq!(create.status, 200, "{}", create.body);
    let c = &create.body;
    assert_eq!(c["resumed"], false);
    assert_eq!(c["partSize"], 64 * MIB);
    assert_eq!(c["partCount"], 3);
    assert_eq!(c["parts"], json!([]));
    assert_eq!(c["downloadUrl"], Value::Null);
    assert!(c["expiresAt"].is_string() && c["uploadId"].is_string());
    let sizes: Vec<u64> = c["signedParts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["size"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, [64 * MIB as u64, 64 * MIB as u64, 2 * MIB as u64 + 123]);

    let data = bytes(size, 9);
    for (i, chunk) in data.chunks(64 * MIB).enumerate() {
        let status = put(&signed_url(c, i as u64 + 1), chunk.to_vec()).await;
        assert!(status.is_success(), "part {} refused: {status}", i + 1);
    }
    let done = app
        .call(&user, "/complete-multipart-upload", Some(token(c)))
        .await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert_eq!(done.body["bucket"], app.private_bucket);
    assert_eq!(done.body["objectKey"], body["objectKey"]);
    assert_eq!(done.body["fileSize"], size);
    // Safe to repeat: the same answer again.
    let again = app
        .call(&user, "/complete-multipart-upload", Some(token(c)))
        .await;
    assert_eq!((again.status.as_u16(), &again.body), (200, &done.body));

    let mut insert = body.clone();
    insert["creator"] = json!({ "id": user.id });
    let inserted = app.call(&user, "/insert-file", Some(insert)).await;
    assert_eq!(inserted.status, 200, "{}", inserted.body);
    let link = app
        .call(
            &user,
            "/generate-download-url",
            Some(json!({ "id": inserted.body["id"] })),
        )
        .await;
    let (status, got) = get(link.body["downloadUrl"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    assert!(got == data, "downloaded bytes differ from the uploaded ones");
}

#[tokio::test]
async fn a_part_url_refuses_a_body_of_another_length() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let create = app
        .call(
            &user,
            "/create-multipart-upload",
            Some(input(&user, "small.mp4", 100)),
        )
        .await;
    let url = signed_url(&create.body, 1);
    assert!(!put(&url, bytes(101, 1)).await.is_success());
    assert!(!put(&url, bytes(99, 1)).await.is_success());
    assert!(put(&url, bytes(100, 1)).await.is_success());
    let done = app
        .call(&user, "/complete-multipart-upload", Some(token(&create.body)))
        .await;
    assert_eq!(done.status, 200, "{}", done.body);
}

#[tokio::test]
async fn creating_again_under_the_same_key_resumes_with_the_stored_parts() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let size = 64 * MIB + 10;
    let body = input(&user, "resume.mp4", size);
    let first = app
        .call(&user, "/create-multipart-upload", Some(body.clone()))
        .await;
    assert!(put(&signed_url(&first.body, 2), bytes(10, 3)).await.is_success());

    let second = app
        .call(&user, "/create-multipart-upload", Some(body.clone()))
        .await;
    assert_eq!(second.status, 200, "{}", second.body);
    assert_eq!(second.body["resumed"], true);
    assert_eq!(second.body["uploadId"], first.body["uploadId"]);
    assert_eq!(second.body["parts"], json!([{ "partNumber": 2, "size": 10 }]));
    let signed: Vec<&Value> = second.body["signedParts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["partNumber"])
        .collect();
    assert_eq!(signed, [&json!(1)]);

    assert!(
        put(&signed_url(&second.body, 1), bytes(64 * MIB, 3))
            .await
            .is_success()
    );
    let done = app
        .call(&user, "/complete-multipart-upload", Some(token(&second.body)))
        .await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert_eq!(done.body["fileSize"], size);
}

#[tokio::test]
async fn a_changed_size_discards_the_open_upload_and_starts_anew() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let mut body = input(&user, "changed.mp4", 64 * MIB + 10);
    let first = app
        .call(&user, "/create-multipart-upload", Some(body.clone()))
        .await;
    assert!(put(&signed_url(&first.body, 2), bytes(10, 3)).await.is_success());

    body["fileSize"] = json!(64 * MIB + 20);
    let second = app.call(&user, "/create-multipart-upload", Some(body)).await;
    assert_eq!(second.status, 200, "{}", second.body);
    assert_eq!(second.body["resumed"], false);
    assert_eq!(second.body["parts"], json!([]));
    assert_ne!(second.body["uploadId"], first.body["uploadId"]);
    // The old upload is gone and made nothing.
    app.call(&user, "/complete-multipart-upload", Some(token(&first.body)))
        .await
        .assert_error(404, "upload_not_found");
}

#[tokio::test]
async fn completing_with_parts_missing_is_409_parts_missing() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let create = app
        .call(
            &user,
            "/create-multipart-upload",
            Some(input(&user, "gap.mp4", 64 * MIB + 10)),
        )
        .await;
    assert!(put(&signed_url(&create.body, 2), bytes(10, 3)).await.is_success());
    let reply = app
        .call(&user, "/complete-multipart-upload", Some(token(&create.body)))
        .await;
    reply.assert_error(409, "parts_missing");
    // Still open: the missing part can be sent and the upload completed.
    assert!(
        put(&signed_url(&create.body, 1), bytes(64 * MIB, 3))
            .await
            .is_success()
    );
    assert_eq!(
        app.call(&user, "/complete-multipart-upload", Some(token(&create.body)))
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn completing_with_a_part_of_the_wrong_size_is_409_parts_invalid() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let body = input(&user, "odd.mp4", 64 * MIB + 10);
    let create = app
        .call(&user, "/create-multipart-upload", Some(body.clone()))
        .await;
    assert!(put(&signed_url(&create.body, 2), bytes(10, 3)).await.is_success());
    // Our URLs cannot carry a wrong length, so plant one with store credentials.
    raw_store()
        .await
        .upload_part()
        .bucket(&app.private_bucket)
        .key(body["objectKey"].as_str().unwrap())
        .upload_id(create.body["uploadId"].as_str().unwrap())
        .part_number(1)
        .body(bytes(1000, 4).into())
        .send()
        .await
        .expect("raw part upload");
    app.call(&user, "/complete-multipart-upload", Some(token(&create.body)))
        .await
        .assert_error(409, "parts_invalid");
}

#[tokio::test]
async fn abort_discards_the_upload_and_aborting_a_gone_upload_succeeds() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let create = app
        .call(
            &user,
            "/create-multipart-upload",
            Some(input(&user, "abort.mp4", 100)),
        )
        .await;
    let url = signed_url(&create.body, 1);
    assert!(put(&url, bytes(100, 1)).await.is_success());

    let aborted = app
        .call(&user, "/abort-multipart-upload", Some(token(&create.body)))
        .await;
    assert_eq!(
        (aborted.status.as_u16(), &aborted.body),
        (200, &json!({ "aborted": true }))
    );
    app.call(&user, "/complete-multipart-upload", Some(token(&create.body)))
        .await
        .assert_error(404, "upload_not_found");
    let again = app
        .call(&user, "/abort-multipart-upload", Some(token(&create.body)))
        .await;
    assert_eq!(
        (again.status.as_u16(), &again.body),
        (200, &json!({ "aborted": false }))
    );
    app.call(
        &user,
        "/sign-upload-parts",
        Some(json!({ "token": create.body["token"], "partNumbers": [1] })),
    )
    .await
    .assert_error(404, "upload_not_found");
    // The parts are discarded: the store refuses the old part URL.
    assert!(!put(&url, bytes(100, 1)).await.is_success());
}

#[tokio::test]
async fn sign_upload_parts_signs_one_to_a_thousand_parts_of_the_plan() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let size = 64 * MIB * 150 + 5; // 151 parts: the create response signs the first 100
    let create = app
        .call(
            &user,
            "/create-multipart-upload",
            Some(input(&user, "many.mp4", size)),
        )
        .await;
    assert_eq!(create.body["partCount"], 151);
    assert_eq!(create.body["signedParts"].as_array().unwrap().len(), 100);
    let sign = |numbers: Value| json!({ "token": create.body["token"], "partNumbers": numbers });

    let signed = app
        .call(&user, "/sign-upload-parts", Some(sign(json!([151, 101, 101]))))
        .await;
    assert_eq!(signed.status, 200, "{}", signed.body);
    let parts = signed.body["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 2);
    assert_eq!(
        (&parts[0]["partNumber"], &parts[0]["size"]),
        (&json!(101), &json!(64 * MIB))
    );
    assert_eq!(
        (&parts[1]["partNumber"], &parts[1]["size"]),
        (&json!(151), &json!(5))
    );
    assert!(signed.body["expiresAt"].is_string());
    assert!(
        put(parts[1]["url"].as_str().unwrap(), bytes(5, 1))
            .await
            .is_success()
    );

    let thousand: Vec<u32> = (1..=1000).map(|n| n % 151 + 1).collect();
    assert_eq!(
        app.call(&user, "/sign-upload-parts", Some(sign(json!(thousand))))
            .await
            .status,
        200
    );
    let too_many: Vec<u32> = (1..=1001).map(|n| n % 151 + 1).collect();
    for bad in [
        json!([]),
        json!(too_many),
        json!([0]),
        json!([152]),
        json!(["one"]),
    ] {
        let reply = app
            .call(&user, "/sign-upload-parts", Some(sign(bad.clone())))
            .await;
        assert_eq!(reply.status, 400, "{bad}: {}", reply.body);
        assert!(
            reply.body["field"].as_str().unwrap().starts_with("partNumbers"),
            "{}",
            reply.body
        );
    }
    app.call(&user, "/abort-multipart-upload", Some(token(&create.body)))
        .await;
}

#[tokio::test]
async fn a_two_terabyte_file_is_planned_in_at_most_ten_thousand_larger_parts() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let size: u64 = 2 * 1024 * 1024 * 1024 * 1024;
    let create = app
        .call(
            &user,
            "/create-multipart-upload",
            Some(input(&user, "huge.mov", size as usize)),
        )
        .await;
    assert_eq!(create.status, 200, "{}", create.body);
    let part_size = create.body["partSize"].as_u64().unwrap();
    let count = create.body["partCount"].as_u64().unwrap();
    assert!(part_size > 64 * MIB as u64 && part_size % MIB as u64 == 0);
    assert!(count <= 10_000 && part_size * count >= size && part_size * (count - 1) < size);
    let last = &create.body["signedParts"][99];
    assert_eq!(
        (&last["partNumber"], last["size"].as_u64()),
        (&json!(100), Some(part_size))
    );
    app.call(&user, "/abort-multipart-upload", Some(token(&create.body)))
        .await;
}

#[tokio::test]
async fn tokens_are_checked_and_another_users_token_finds_nothing() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let other = app.user(Some("Pro")).await;
    let create = app
        .call(
            &user,
            "/create-multipart-upload",
            Some(input(&user, "mine.mp4", 100)),
        )
        .await;
    assert!(
        put(&signed_url(&create.body, 1), bytes(100, 1))
            .await
            .is_success()
    );

    app.call(&other, "/complete-multipart-upload", Some(token(&create.body)))
        .await
        .assert_error(404, "upload_not_found");
    app.call(
        &other,
        "/sign-upload-parts",
        Some(json!({ "token": create.body["token"], "partNumbers": [1] })),
    )
    .await
    .assert_error(404, "upload_not_found");
    let aborted = app
        .call(&other, "/abort-multipart-upload", Some(token(&create.body)))
        .await;
    assert_eq!(aborted.body, json!({ "aborted": false }));

    let forged = create.body["token"]
        .as_str()
        .unwrap()
        .replace(|c: char| c.is_ascii_digit(), "7");
    app.call(
        &user,
        "/complete-multipart-upload",
        Some(json!({ "token": forged })),
    )
    .await
    .assert_bad_field("invalid_token", "token");
    app.call(&user, "/complete-multipart-upload", Some(json!({})))
        .await
        .assert_bad_field("missing_field", "token");
    // Untouched by all that: the owner completes it.
    assert_eq!(
        app.call(&user, "/complete-multipart-upload", Some(token(&create.body)))
            .await
            .status,
        200
    );
}
