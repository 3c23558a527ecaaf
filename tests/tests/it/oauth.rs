//! OAuth sign-in for agents and tool clients over real HTTP: an app registers, a person allows
//! it on the consent page in a real browser (headless Chromium) and it gets a token limited to
//! what was ticked, which works on the file service and the agent interface until revoked; the
//! faults an attacker would try; and API tokens limited to scopes.

use std::time::Duration;

use axum::extract::RawQuery;
use drive_tests::browser::Browser;
use drive_tests::oauth::{OAuthClient, assert_oauth_error, http, query_of, redirected_to, token_request};
use drive_tests::*;
use fantoccini::Locator;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::agent::rpc;

/// The app's redirect endpoint on loopback, where the browser lands: answers its URL and each
/// query it receives.
async fn callback_endpoint() -> (String, mpsc::UnboundedReceiver<String>) {
    let (sent, received) = mpsc::unbounded_channel();
    let router = axum::Router::new().route(
        "/callback",
        axum::routing::get(move |RawQuery(query): RawQuery| {
            let sent = sent.clone();
            async move {
                let _ = sent.send(query.unwrap_or_default());
                axum::response::Html("<p id=\"done\">Signed in; you can close this page.</p>")
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/callback", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    (url, received)
}

async fn landed(received: &mut mpsc::UnboundedReceiver<String>) -> std::collections::HashMap<String, String> {
    let query = tokio::time::timeout(Duration::from_secs(20), received.recv())
        .await
        .expect("the browser came back to the app")
        .unwrap();
    query_of(&format!("http://app/callback?{query}"))
}

#[tokio::test]
async fn a_person_allows_an_app_on_the_consent_page_and_it_gets_only_what_was_ticked_until_revoked() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    app.upload(&user, "plan.txt", "Text", "text/plain", bytes(100, 1))
        .await;
    let (callback, mut received) = callback_endpoint().await;
    let client = OAuthClient::register(&app, "Notes <b>App</b>", &callback).await;

    let browser = Browser::start().await;
    let page = &browser.client;
    page.goto(&client.authorize_url(&app, "read write", "xyz-1"))
        .await
        .unwrap();
    // The name is the app's own words, shown as text, never as markup.
    browser.wait_for_text("#client", "Notes <b>App</b>", 10).await;
    browser.wait_for_text("#goesTo", "127.0.0.1", 10).await;
    assert!(
        page.find(Locator::Css("#scope-delete")).await.is_err(),
        "delete was not asked for"
    );
    // The person allows reading only, first with a token that is not theirs.
    page.find(Locator::Css("#scope-write"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    page.find(Locator::Css("#apiToken"))
        .await
        .unwrap()
        .send_keys("drive_api_not-a-token")
        .await
        .unwrap();
    page.find(Locator::Css("#allow"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser.wait_for_text("#status", "not a live API token", 10).await;
    assert!(received.try_recv().is_err(), "nothing went back to the app");
    let write = page.find(Locator::Css("#scope-write")).await.unwrap();
    assert!(
        !write.is_selected().await.unwrap(),
        "the ticks stay as the person left them"
    );
    page.find(Locator::Css("#apiToken"))
        .await
        .unwrap()
        .send_keys(&user.api_token)
        .await
        .unwrap();
    browser.screenshot("oauth-consent").await;
    page.find(Locator::Css("#allow"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let back = landed(&mut received).await;
    assert_eq!(back["state"], "xyz-1");
    assert_eq!(back["iss"], app.url);
    browser.wait_for_text("#done", "Signed in", 10).await;

    let token = client.exchange(&app, &back["code"], &client.verifier).await;
    assert_eq!(token.status, StatusCode::OK, "{}", token.body);
    assert_eq!(token.body["token_type"], "Bearer");
    assert_eq!(token.body["scope"], "read");
    let access = token.body["access_token"].as_str().unwrap().to_string();

    // The app's token reads, and nothing more.
    let session = app.exchange(&access).await;
    assert_eq!(session.status, StatusCode::OK, "{}", session.body);
    let as_app = Some(session.body["gelToken"].as_str().unwrap());
    let listed = app
        .send(as_app, Some(APP_ID), "/select-user-files", Some(json!({})))
        .await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    assert_eq!(listed.body.as_array().unwrap().len(), 1, "{}", listed.body);
    let file = listed.body[0]["id"].clone();
    app.send(
        as_app,
        Some(APP_ID),
        "/trash-files",
        Some(json!([{ "id": file }])),
    )
    .await
    .assert_error(403, "insufficient_scope");
    app.send(
        as_app,
        Some(APP_ID),
        "/move-files",
        Some(json!({ "fileIds": [file], "folder": "/x" })),
    )
    .await
    .assert_error(403, "insufficient_scope");
    app.send(as_app, Some(APP_ID), "/select-connections", None)
        .await
        .assert_error(403, "insufficient_scope");
    // The agent interface takes it too, and its tasks are its own.
    let tasks = rpc(&app, &access, "ListTasks", json!({})).await;
    assert_eq!(tasks["result"]["tasks"], json!([]), "{tasks}");

    // The person sees the app among their connections, and ends it.
    let connections = app.call(&user, "/select-connections", None).await;
    assert_eq!(connections.status, StatusCode::OK, "{}", connections.body);
    let connection = &connections.body["connections"][0];
    assert_eq!(connection["clientName"], "Notes <b>App</b>");
    assert_eq!(connection["clientId"], client.client_id.as_str());
    assert_eq!(connection["scopes"], json!(["read"]));
    let revoked = app
        .call(
            &user,
            "/revoke-connection",
            Some(json!({ "connectionId": connection["id"] })),
        )
        .await;
    assert_eq!(revoked.status, StatusCode::OK, "{}", revoked.body);
    app.send(as_app, Some(APP_ID), "/select-user-files", Some(json!({})))
        .await
        .assert_error(401, "unauthorized");
    assert_eq!(app.exchange(&access).await.status, StatusCode::UNAUTHORIZED);
    let refused = http()
        .post(format!("{}/a2a", app.url))
        .bearer_auth(&access)
        .header("A2A-Version", "1.0")
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {} }))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    app.call(
        &user,
        "/revoke-connection",
        Some(json!({ "connectionId": connection["id"] })),
    )
    .await
    .assert_error(404, "connection_not_found");

    // Denying sends the app an error, and no code.
    page.goto(&client.authorize_url(&app, "read", "xyz-2"))
        .await
        .unwrap();
    browser.wait_for_text("#client", "Notes", 10).await;
    page.find(Locator::Css("#deny"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let back = landed(&mut received).await;
    assert_eq!(back["error"], "access_denied");
    assert_eq!(back["state"], "xyz-2");
    assert!(!back.contains_key("code"));
    browser.close().await;
}

#[tokio::test]
async fn the_metadata_and_the_agent_card_name_the_endpoints() {
    let app = TestApp::spawn().await;
    let metadata: Value = reqwest::get(format!("{}/.well-known/oauth-authorization-server", app.url))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(metadata["issuer"], app.url);
    assert_eq!(
        metadata["authorization_endpoint"],
        format!("{}/oauth/authorize", app.url)
    );
    assert_eq!(metadata["token_endpoint"], format!("{}/oauth/token", app.url));
    assert_eq!(
        metadata["registration_endpoint"],
        format!("{}/oauth/register", app.url)
    );
    assert_eq!(
        metadata["revocation_endpoint"],
        format!("{}/oauth/revoke", app.url)
    );
    assert_eq!(metadata["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(metadata["scopes_supported"], json!(["read", "write", "delete"]));
    let card: Value = reqwest::get(format!("{}/.well-known/agent-card.json", app.url))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let scheme = &card["securitySchemes"]["oauth"]["oauth2SecurityScheme"];
    let flow = &scheme["flows"]["authorizationCode"];
    assert_eq!(flow["authorizationUrl"], metadata["authorization_endpoint"]);
    assert_eq!(flow["tokenUrl"], metadata["token_endpoint"]);
    assert_eq!(flow["pkceRequired"], true);
    assert!(flow["scopes"]["read"].is_string(), "{card}");
    assert_eq!(
        scheme["oauth2MetadataUrl"],
        format!("{}/.well-known/oauth-authorization-server", app.url)
    );
    assert_eq!(
        card["securityRequirements"][1]["schemes"]["oauth"]["list"],
        json!(["read"])
    );
}

#[tokio::test]
async fn what_an_attacker_would_try_is_refused() {
    // More sign-in calls than a person makes in a minute, from one address.
    let app = TestApp::spawn_with(&[("DRIVE_RATE_SIGN_IN_PER_MINUTE", "1000")]).await;
    let user = app.user(Some("Pro")).await;
    let register = |body: Value| {
        let url = format!("{}/oauth/register", app.url);
        async move { Reply::read(http().post(url).json(&body).send().await.unwrap()).await }
    };
    for (body, error) in [
        (
            json!({ "redirect_uris": ["http://evil.example/cb"] }),
            "invalid_redirect_uri",
        ),
        (
            json!({ "redirect_uris": ["javascript:alert(1)"] }),
            "invalid_redirect_uri",
        ),
        (
            json!({ "redirect_uris": ["https://app.example/cb#x"] }),
            "invalid_redirect_uri",
        ),
        (json!({ "redirect_uris": [] }), "invalid_client_metadata"),
        (json!({ "client_name": "x" }), "invalid_client_metadata"),
        (
            json!({ "redirect_uris": ["https://app.example/cb"], "grant_types": ["password"] }),
            "invalid_client_metadata",
        ),
        (
            json!({ "redirect_uris": ["https://app.example/cb"], "response_types": "code" }),
            "invalid_client_metadata",
        ),
        (
            json!({ "redirect_uris": ["https://app.example/cb"], "client_name": "" }),
            "invalid_client_metadata",
        ),
        // Names that would pass for another app's where they are shown: a terminal's escapes,
        // a text direction override.
        (
            json!({ "redirect_uris": ["https://app.example/cb"], "client_name": "Notes\u{1b}[2K Drive CLI" }),
            "invalid_client_metadata",
        ),
        (
            json!({ "redirect_uris": ["https://app.example/cb"], "client_name": "Notes \u{202e}ppa" }),
            "invalid_client_metadata",
        ),
    ] {
        assert_oauth_error(&register(body.clone()).await, 400, error);
    }
    // A secret or a refresh grant asked for: registered public, for the code grant, and told so.
    let asked_more = register(json!({
        "redirect_uris": ["https://app.example/cb"],
        "token_endpoint_auth_method": "client_secret_basic",
        "grant_types": ["authorization_code", "refresh_token"],
    }))
    .await;
    assert_eq!(asked_more.status, StatusCode::CREATED, "{}", asked_more.body);
    assert_eq!(asked_more.body["token_endpoint_auth_method"], "none");
    assert_eq!(asked_more.body["grant_types"], json!(["authorization_code"]));
    assert!(asked_more.body.get("client_secret").is_none());
    let client = OAuthClient::register(&app, "Tool", "http://127.0.0.1:9/cb").await;
    let other = OAuthClient::register(&app, "Other", "https://other.example/cb").await;

    // Without a registered client and redirect the page explains and sends nobody anywhere.
    let page = |url: String| async move { http().get(url).send().await.unwrap() };
    let unregistered = client
        .authorize_url(&app, "read", "s")
        .replace("127.0.0.1%3A9", "evil.example");
    for url in [
        unregistered,
        client
            .authorize_url(&app, "read", "s")
            .replace(&client.client_id, &uuid::Uuid::new_v4().to_string()),
        client
            .authorize_url(&app, "read", "s")
            .replace(&client.client_id, &other.client_id),
        format!("{}&state=again", client.authorize_url(&app, "read", "s")),
    ] {
        let answer = page(url.clone()).await;
        assert_eq!(answer.status(), StatusCode::BAD_REQUEST, "{url}");
        assert!(answer.headers().get("location").is_none(), "{url}");
        assert!(answer.text().await.unwrap().contains("id=\"problem\""), "{url}");
    }
    // A bad request from a registered client goes back to it as an OAuth error.
    let plain = client
        .authorize_url(&app, "read", "s")
        .replace("code_challenge_method=S256", "code_challenge_method=plain");
    let token_flow = client
        .authorize_url(&app, "read", "s")
        .replace("response_type=code", "response_type=token");
    let no_challenge = client
        .authorize_url(&app, "read", "s")
        .replace(&client.challenge, "");
    for (url, error) in [
        (plain, "invalid_request"),
        (token_flow, "unsupported_response_type"),
        (no_challenge, "invalid_request"),
        (client.authorize_url(&app, "read admin", "s"), "invalid_scope"),
    ] {
        let answer = page(url.clone()).await;
        assert_eq!(answer.status(), StatusCode::SEE_OTHER, "{url}");
        let back = redirected_to(&answer);
        assert_eq!(back["error"], error, "{url}");
        assert_eq!(back["state"], "s");
        assert_eq!(back["iss"], app.url, "errors say who answers too (RFC 9207)");
        assert!(
            answer.headers()["location"]
                .to_str()
                .unwrap()
                .starts_with("http://127.0.0.1:9/cb?")
        );
    }
    // The page may send its form here and to the app, nowhere else, and cannot be framed.
    let shown = page(client.authorize_url(&app, "read", "s")).await;
    assert_eq!(shown.status(), StatusCode::OK);
    let policy = shown.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        policy.contains("form-action 'self' http://127.0.0.1:9;"),
        "{policy}"
    );
    assert!(policy.contains("frame-ancestors 'none'"), "{policy}");

    // Ticks beyond what was asked, and scopes the signing-in token lacks, are not granted.
    let code = client
        .code(&app, "read write", &["read", "write", "delete"], &user.api_token)
        .await;
    let granted = client.exchange(&app, &code, &client.verifier).await;
    assert_eq!(granted.body["scope"], "read write", "{}", granted.body);
    let reader: Value = serde_json::from_str(&app.admin(&[
        "create-token",
        "--handle",
        &user.handle,
        "--scope",
        "read",
        "--json",
    ]))
    .unwrap();
    let reader_token = reader["apiToken"].as_str().unwrap();
    let code = client
        .code(&app, "read write", &["read", "write"], reader_token)
        .await;
    let granted = client.exchange(&app, &code, &client.verifier).await;
    assert_eq!(granted.body["scope"], "read", "{}", granted.body);
    let refused = client
        .answer(&app, "write", &["write"], reader_token, "allow")
        .await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);

    // A wrong verifier spends the code: the right one cannot use it after.
    let code = client.code(&app, "read", &["read"], &user.api_token).await;
    let wrong = format!("{}x", client.verifier);
    assert_oauth_error(&client.exchange(&app, &code, &wrong).await, 400, "invalid_grant");
    assert_oauth_error(
        &client.exchange(&app, &code, &client.verifier).await,
        400,
        "invalid_grant",
    );
    // A code exchanged twice: the second is refused and the first's token revoked.
    let code = client.code(&app, "read", &["read"], &user.api_token).await;
    let first = client.exchange(&app, &code, &client.verifier).await;
    let access = first.body["access_token"].as_str().unwrap().to_string();
    assert_eq!(app.exchange(&access).await.status, StatusCode::OK);
    assert_oauth_error(
        &client.exchange(&app, &code, &client.verifier).await,
        400,
        "invalid_grant",
    );
    assert_eq!(app.exchange(&access).await.status, StatusCode::UNAUTHORIZED);
    // Another client, or another redirect, cannot use a client's code.
    let code = client.code(&app, "read", &["read"], &user.api_token).await;
    let stolen = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("grant_type", "authorization_code")
        .append_pair("code", &code)
        .append_pair("redirect_uri", &other.redirect_uri)
        .append_pair("client_id", &other.client_id)
        .append_pair("code_verifier", &client.verifier)
        .finish();
    assert_oauth_error(&token_request(&app, stolen).await, 400, "invalid_grant");
    // A code ten minutes old has run out. Codes are kept as digests only.
    let code = client.code(&app, "read", &["read"], &user.api_token).await;
    let mut db = app.db().await;
    let digest = <sha2::Sha256 as sha2::Digest>::digest(code.as_bytes());
    let aged =
        sqlx::query("update oauth_codes set expires_at = now() - interval '1 second' where code_hash = $1")
            .bind(digest.to_vec())
            .execute(&mut db)
            .await
            .unwrap();
    assert_eq!(aged.rows_affected(), 1, "the code is stored as its SHA-256");
    let expired = client.exchange(&app, &code, &client.verifier).await;
    assert!(
        assert_oauth_error(&expired, 400, "invalid_grant")["error_description"]
            .as_str()
            .unwrap()
            .contains("run out")
    );
    // The token endpoint's own faults.
    for (form, status, error) in [
        (
            "grant_type=password&username=a&password=b",
            400,
            "unsupported_grant_type",
        ),
        (
            "grant_type=authorization_code&code=a&code=b",
            400,
            "invalid_request",
        ),
        ("grant_type=authorization_code&code=a", 400, "invalid_request"),
        (
            "grant_type=authorization_code&code=a&redirect_uri=x&client_id=nope&code_verifier=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            401,
            "invalid_client",
        ),
    ] {
        assert_oauth_error(&token_request(&app, form.to_string()).await, status, error);
    }

    // A client revokes its own token; another client's revoke does nothing to it.
    let access = client.connect(&app, &user.api_token, &["read"]).await;
    // An app's token lets in no other app (what it let in would outlive its revocation).
    let minted = other.answer(&app, "read", &["read"], &access, "allow").await;
    assert_eq!(minted.status(), StatusCode::FORBIDDEN);
    assert!(minted.headers().get("location").is_none());
    let revoke = |token: String, client_id: String| {
        let url = format!("{}/oauth/revoke", app.url);
        async move {
            let form = url::form_urlencoded::Serializer::new(String::new())
                .append_pair("token", &token)
                .append_pair("client_id", &client_id)
                .finish();
            http()
                .post(url)
                .header("Content-Type", "application/x-www-form-urlencoded")
                .body(form)
                .send()
                .await
                .unwrap()
                .status()
        }
    };
    assert_eq!(
        revoke(access.clone(), other.client_id.clone()).await,
        StatusCode::OK
    );
    assert_eq!(
        app.exchange(&access).await.status,
        StatusCode::OK,
        "another client cannot revoke it"
    );
    assert_eq!(
        revoke(user.api_token.clone(), client.client_id.clone()).await,
        StatusCode::OK
    );
    assert_eq!(
        app.exchange(&user.api_token).await.status,
        StatusCode::OK,
        "nor can a client revoke the account's own token"
    );
    assert_eq!(
        revoke(access.clone(), client.client_id.clone()).await,
        StatusCode::OK
    );
    assert_eq!(app.exchange(&access).await.status, StatusCode::UNAUTHORIZED);
}

/// A token without `read` gets nothing of what is inside files, whatever it may change: making
/// a file public (which answers its permanent link), a review (whose page links the media), a
/// job (whose answer can carry a result) and an event subscription (sent the feed) all need
/// `read` too. And what a token sets up to last ends with it: revoking the token that made an
/// event subscription deletes the subscription, and closes its review links and file requests.
#[tokio::test]
async fn a_token_without_read_reaches_no_content_and_its_subscriptions_end_with_it() {
    let receiver = drive_tests::receiver::Receiver::start().await;
    let app = TestApp::spawn_with(&receiver.trust()).await;
    let user = app.user(Some("Pro")).await;
    let file = app
        .upload(&user, "secret.mp3", "Audio", "audio/mpeg", bytes(50, 2))
        .await;
    let hook = json!({ "url": format!("{}/hooks/drive", receiver.url) });
    let writer = session_of(&app, &limited_token(&app, &user, &["write"]).1).await;
    for (route, body) in [
        ("/toggle-file-access", json!({ "id": file })),
        ("/create-file-review", json!({ "fileId": file })),
        (
            "/create-file-job",
            json!({ "jobType": "checksum", "fileIds": [file] }),
        ),
        ("/create-event-subscription", hook.clone()),
    ] {
        call(&app, &writer, route, body)
            .await
            .assert_error(403, "insufficient_scope");
    }
    let record = app
        .call(&user, "/generate-download-url", Some(json!({ "id": file })))
        .await;
    assert_eq!(record.body["isPublic"], false, "{}", record.body);

    let (token_id, token) = limited_token(&app, &user, &["read", "write"]);
    let app_session = session_of(&app, &token).await;
    let made = call(&app, &app_session, "/create-event-subscription", hook).await;
    assert_eq!(made.status, StatusCode::OK, "{}", made.body);
    let review = call(
        &app,
        &app_session,
        "/create-file-review",
        json!({ "fileId": file }),
    )
    .await;
    assert_eq!(review.status, StatusCode::OK, "{}", review.body);
    let request = call(
        &app,
        &app_session,
        "/create-file-request",
        json!({ "title": "Drop here" }),
    )
    .await;
    assert_eq!(request.status, StatusCode::OK, "{}", request.body);
    let open_review = json!({ "reviewId": review.body["id"] });
    let start_drop = json!({ "requestId": request.body["id"], "senderName": "Anyone" });
    let anonymous = |route: &'static str, body: &Value| app.send(None, None, route, Some(body.clone()));
    assert_eq!(
        anonymous("/open-review", &open_review).await.status,
        StatusCode::OK
    );
    assert_eq!(
        anonymous("/start-request-drop", &start_drop).await.status,
        StatusCode::OK
    );
    let subscriptions = || async {
        let listed = app.call(&user, "/select-event-subscriptions", None).await;
        listed.body["subscriptions"].as_array().unwrap().len()
    };
    assert_eq!(subscriptions().await, 1);
    app.admin(&["revoke-token", &token_id]);
    assert_eq!(
        subscriptions().await,
        0,
        "the revoked token's subscription still stands"
    );
    // Its review link and its file request close with it; the owner still lists the review.
    anonymous("/open-review", &open_review)
        .await
        .assert_error(403, "review_closed");
    anonymous("/start-request-drop", &start_drop)
        .await
        .assert_error(403, "request_closed");
    let reviews = app.call(&user, "/select-file-reviews", Some(json!({}))).await;
    assert_eq!(
        reviews.body["reviews"][0]["id"], review.body["id"],
        "{}",
        reviews.body
    );
}

/// A new API token of `user`'s limited to `scopes` (`drive-api admin create-token`): its id and
/// its secret.
fn limited_token(app: &TestApp, user: &TestUser, scopes: &[&str]) -> (String, String) {
    let mut args = vec!["create-token", "--handle", user.handle.as_str(), "--json"];
    for scope in scopes {
        args.extend(["--scope", scope]);
    }
    let made: Value = serde_json::from_str(&app.admin(&args)).unwrap();
    (
        made["tokenId"].as_str().unwrap().to_string(),
        made["apiToken"].as_str().unwrap().to_string(),
    )
}

/// A session of `api_token`.
async fn session_of(app: &TestApp, api_token: &str) -> String {
    let session = app.exchange(api_token).await;
    assert_eq!(session.status, StatusCode::OK, "{}", session.body);
    session.body["gelToken"].as_str().unwrap().to_string()
}

async fn call(app: &TestApp, session: &str, route: &str, body: Value) -> Reply {
    app.send(Some(session), Some(APP_ID), route, Some(body)).await
}

#[tokio::test]
async fn an_api_token_limited_to_scopes_does_only_what_they_allow() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let file = app
        .upload(&user, "keep.txt", "Text", "text/plain", bytes(50, 2))
        .await;
    let reader = session_of(&app, &limited_token(&app, &user, &["read"]).1).await;
    let deleter = session_of(&app, &limited_token(&app, &user, &["delete"]).1).await;
    assert_eq!(
        call(&app, &reader, "/search-files", json!({ "limit": 10 }))
            .await
            .status,
        StatusCode::OK
    );
    let link = call(&app, &reader, "/generate-download-url", json!({ "id": file })).await;
    assert_eq!(link.status, StatusCode::OK, "{}", link.body);
    for (route, body) in [
        ("/tag-files", json!({ "fileIds": [file], "tags": ["x"] })),
        (
            "/generate-file-urls",
            json!({ "type": "Text", "fileName": "a.txt", "fileSize": 1, "objectKey": user.key("a.txt"), "mimeType": "text/plain" }),
        ),
        ("/trash-files", json!([{ "id": file }])),
        ("/select-connections", json!({})),
    ] {
        call(&app, &reader, route, body)
            .await
            .assert_error(403, "insufficient_scope");
    }
    call(&app, &deleter, "/select-user-files", json!({}))
        .await
        .assert_error(403, "insufficient_scope");
    let trashed = call(&app, &deleter, "/trash-files", json!([{ "id": file }])).await;
    assert_eq!(trashed.status, StatusCode::OK, "{}", trashed.body);
    // Only the account's own token (every scope, not an app's) manages connections.
    assert_eq!(
        app.call(&user, "/select-connections", None).await.status,
        StatusCode::OK
    );

    // The document says which scope each operation needs.
    let doc: Value = reqwest::get(format!("{}/openapi.json", app.url))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let needs = |path: &str| doc["paths"][path]["post"]["security"][0]["session"].clone();
    assert_eq!(needs("/search-files"), json!(["read"]));
    assert_eq!(needs("/tag-files"), json!(["write"]));
    assert_eq!(needs("/trash-files"), json!(["delete"]));
    assert_eq!(needs("/select-connections"), json!(["read", "write", "delete"]));
}
