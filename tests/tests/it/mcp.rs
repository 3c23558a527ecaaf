//! The `drive-mcp` tool server driven by real MCP clients: the official Python SDK's client
//! (`tests/mcp/check_tools.py`) over stdio and over streamable HTTP, calling all seven library tools and run_template
//! with every answer validated against the tool's declared output schema; and the MCP
//! Inspector's command-line mode listing and calling tools. `scripts/test` installs both
//! (`ensure_mcp_clients`). What the tools did is checked through the API.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use drive_tests::scratch::{Scratch, sha256, write_file};
use drive_tests::tool_server::HttpToolServer;
use drive_tests::*;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::process::Command;

const MIB: usize = 1024 * 1024;
/// Over 64 MiB, so the upload goes to storage in parts.
const LARGE: usize = 65 * MIB;
const TOOLS: [&str; 8] = [
    "get_download_link",
    "get_storage_usage",
    "list_files",
    "remove_files",
    "restore_files",
    "run_template",
    "set_file_access",
    "upload_file",
];

fn check_tools() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("mcp/check_tools.py")
}

struct Run {
    success: bool,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        assert!(
            self.success,
            "failed ({:?}):\n{}\n{}",
            self.code, self.stderr, self.stdout
        );
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("{e}: {}", self.stdout))
    }
}

/// Runs `command` to its end (killed if the test ends first).
async fn run(mut command: Command) -> Run {
    command.stdin(Stdio::null()).kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(600), command.output())
        .await
        .expect("an MCP client ran for over 10 minutes")
        .expect("start an MCP client");
    Run {
        success: output.status.success(),
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The Python SDK's client running `check_tools.py ARGS`.
fn python(args: &[&str]) -> Command {
    let mut command = Command::new(env("DRIVE_MCP_PYTHON"));
    command.arg(check_tools()).args(args);
    command
}

/// `drive-mcp stdio` for `user`, as `check_tools.py --stdio` starts it (with this environment).
fn stdio_client(app: &TestApp, user: &TestUser, args: &[&str]) -> Command {
    let mut command = python(args);
    command
        .arg("--")
        .arg(bin("drive-mcp"))
        .arg("stdio")
        .env("DRIVE_URL", &app.url)
        .env("DRIVE_API_TOKEN", &user.api_token)
        .env("DRIVE_APP", APP_ID)
        .env_remove("DRIVE_CONFIG");
    command
}

/// The MCP Inspector's CLI mode: `--cli --format json ARGS…`.
fn inspector(args: &[&str]) -> Command {
    let mut command = Command::new(env("DRIVE_MCP_INSPECTOR"));
    command.args(["--cli", "--format", "json"]).args(args);
    command
}

/// A small file already in the drive, so list_files has a second page.
async fn seed(app: &TestApp, user: &TestUser) -> String {
    let id = app
        .upload(user, "older.txt", "Text", "text/plain", b"an older file".to_vec())
        .await;
    id.to_string()
}

/// What `check_tools.py --upload` reports, checked against what the drive holds now.
async fn check_scenario(app: &TestApp, user: &TestUser, report: &Value, seeded: &str) {
    assert_eq!(report["tools"], json!(TOOLS), "{report}");
    assert_eq!(report["statuses"]["first"], "uploaded", "{report}");
    assert_eq!(report["statuses"]["second"], "alreadyStored", "{report}");
    assert_eq!(report["uploaded"]["fileSize"], LARGE, "{report}");
    assert_eq!(
        report["pages"][1],
        json!([seeded]),
        "the second page is the older file: {report}"
    );
    assert!(report["link"]["linkExpiresAt"].is_string(), "{report}");
    let text = report["errorText"].as_str().expect("errorText");
    assert!(
        text.contains("list_files"),
        "the error says what to do next: {text}"
    );
    // Deleted for good: the drive no longer knows the file; the other one is untouched.
    let id = report["uploaded"]["id"].as_str().expect("uploaded id");
    let gone = app
        .call(user, "/generate-download-url", Some(json!({ "id": id })))
        .await;
    assert_eq!(gone.body["code"], "file_not_found", "{}", gone.body);
    assert_eq!(app.download(user, seeded).await, b"an older file");
}

#[tokio::test]
async fn the_python_client_calls_every_tool_over_stdio() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let seeded = seed(&app, &user).await;
    let scratch = Scratch::new();
    let path = scratch.path("large.bin");
    write_file(&path, LARGE, 7);

    let report = run(stdio_client(
        &app,
        &user,
        &["--stdio", "--upload", path.to_str().unwrap()],
    ))
    .await
    .json();
    assert_eq!(report["transport"], "stdio");
    check_scenario(&app, &user, &report, &seeded).await;
}

#[tokio::test]
async fn the_python_client_calls_every_tool_over_streamable_http() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let seeded = seed(&app, &user).await;
    let server = HttpToolServer::start(&app).await;
    let scratch = Scratch::new();
    let path = scratch.path("large.bin");
    write_file(&path, LARGE, 9);

    // The 2025-11-25 revision's handshake, then the newest revision's stateless calls.
    for mode in ["legacy", "auto"] {
        let report = run(python(&[
            "--mode",
            mode,
            "--http",
            &server.url,
            "--token",
            &user.api_token,
            "--upload",
            path.to_str().unwrap(),
        ]))
        .await
        .json();
        assert_eq!(report["transport"], "http");
        check_scenario(&app, &user, &report, &seeded).await;
    }
}

#[tokio::test]
async fn http_callers_need_their_own_token_and_see_only_their_own_files() {
    let app = TestApp::spawn().await;
    let owner = app.user(Some("Pro")).await;
    let stranger = app.user(Some("Pro")).await;
    let owned = seed(&app, &owner).await;
    let server = HttpToolServer::start(&app).await;

    // No token: refused before MCP reads the request, the way an OAuth resource does.
    let refused = reqwest::Client::new()
        .post(&server.url)
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }))
        .send()
        .await
        .expect("reach drive-mcp");
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    // It names where a client learns to sign in: the drive's OAuth, whose token works here.
    let origin = server.url.strip_suffix("/mcp").unwrap();
    let described = format!("{origin}/.well-known/oauth-protected-resource/mcp");
    assert_eq!(
        refused.headers()["www-authenticate"],
        format!(r#"Bearer resource_metadata="{described}""#).as_str()
    );
    let resource: Value = reqwest::get(&described).await.unwrap().json().await.unwrap();
    assert_eq!(resource["resource"], server.url.as_str());
    assert_eq!(resource["authorization_servers"], json!([app.url]));
    let signed_in = drive_tests::oauth::OAuthClient::register(&app, "A tool client", "http://127.0.0.1:9/cb")
        .await
        .connect(&app, &owner.api_token, &["read"])
        .await;

    // A token the drive does not know: the tool answers the drive's refusal.
    let call = |token: &str, tool: &str, args: Value| {
        inspector(&[
            "--stored-auth-only",
            "--transport",
            "http",
            "--server-url",
            &server.url,
            "--header",
            &format!("Authorization: Bearer {token}"),
            "--method",
            "tools/call",
            "--tool-name",
            tool,
            "--tool-args-json",
            &args.to_string(),
        ])
    };
    let forged = run(call("not-a-token", "get_storage_usage", json!({}))).await;
    assert!(!forged.success, "{}", forged.stdout);
    assert!(
        forged.stdout.contains("unauthorized"),
        "{}\n{}",
        forged.stdout,
        forged.stderr
    );

    // Another user's file is a file that does not exist.
    let theirs = run(call(
        &stranger.api_token,
        "get_download_link",
        json!({ "id": owned }),
    ))
    .await;
    assert!(!theirs.success, "{}", theirs.stdout);
    assert!(
        theirs.stdout.contains("file_not_found"),
        "{}\n{}",
        theirs.stdout,
        theirs.stderr
    );
    let listed = run(call(&stranger.api_token, "list_files", json!({})))
        .await
        .json();
    assert_eq!(
        listed["result"]["structuredContent"]["files"],
        json!([]),
        "{listed}"
    );
    let mine = run(call(&owner.api_token, "list_files", json!({}))).await.json();
    assert_eq!(
        mine["result"]["structuredContent"]["files"][0]["id"], owned,
        "{mine}"
    );
    // The token a tool client got through OAuth, allowed to read: it lists, and may not remove.
    let read = run(call(&signed_in, "list_files", json!({}))).await.json();
    assert_eq!(
        read["result"]["structuredContent"]["files"][0]["id"], owned,
        "{read}"
    );
    let removed = run(call(&signed_in, "remove_files", json!({ "ids": [owned] }))).await;
    assert!(
        removed.stdout.contains("insufficient_scope"),
        "{}\n{}",
        removed.stdout,
        removed.stderr
    );
}

#[tokio::test]
async fn reaching_the_drive_another_way_the_server_still_names_the_drives_issuer() {
    let app = TestApp::spawn().await;
    // drive-mcp reaches the drive through another address than the one its users know (an
    // internal name behind a proxy); MCP clients compare the authorization server it names
    // with the issuer the drive's metadata gives, so it must name that.
    let inside = drive_tests::proxy::TcpProxy::start(&app.url).await;
    assert_ne!(inside.endpoint, app.url);
    let server = HttpToolServer::start_through(&inside.endpoint).await;
    let origin = server.url.strip_suffix("/mcp").unwrap();
    let resource: Value = reqwest::get(format!("{origin}/.well-known/oauth-protected-resource/mcp"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let issuer: Value = reqwest::get(format!("{}/.well-known/oauth-authorization-server", app.url))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(resource["authorization_servers"], json!([issuer["issuer"]]));
    assert_eq!(resource["authorization_servers"], json!([app.url]));
}

#[tokio::test]
async fn the_inspector_lists_the_tools_and_uploads_a_file() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let scratch = Scratch::new();
    let path = scratch.path("notes from the inspector.txt");
    let digest = write_file(&path, 3 * MIB + 17, 3);
    let over_stdio = |args: &[&str]| {
        let mut command = inspector(&[
            "-e",
            &format!("DRIVE_URL={}", app.url),
            "-e",
            &format!("DRIVE_API_TOKEN={}", user.api_token),
            "-e",
            &format!("DRIVE_APP={APP_ID}"),
        ]);
        command.args(args).arg("--").arg(bin("drive-mcp")).arg("stdio");
        command
    };

    let listed = run(over_stdio(&["--method", "tools/list"])).await.json();
    let tools = &listed["result"]["tools"];
    let mut names: Vec<&str> = tools
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {listed}"))
        .iter()
        .map(|t| t["name"].as_str().expect("tool name"))
        .collect();
    names.sort();
    assert_eq!(names, TOOLS);
    let remove = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "remove_files")
        .unwrap();
    assert_eq!(remove["annotations"]["destructiveHint"], true, "{remove}");

    let args = json!({ "path": path }).to_string();
    let uploaded = run(over_stdio(&[
        "--method",
        "tools/call",
        "--tool-name",
        "upload_file",
        "--tool-args-json",
        &args,
    ]))
    .await
    .json();
    let answer = &uploaded["result"]["structuredContent"];
    let file = &answer["file"];
    assert_eq!(answer["status"], "uploaded", "{uploaded}");
    assert_eq!(file["fileName"], "notes from the inspector.txt");
    let id = file["id"].as_str().expect("file id");
    assert_eq!(sha256(&app.download(&user, id).await), digest);
    // Its link is a real one.
    let (status, bytes) = get(file["downloadUrl"].as_str().expect("downloadUrl")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(sha256(&bytes), digest);
}

#[tokio::test]
async fn the_python_sdk_finds_the_drives_sign_in_by_itself_and_gets_only_what_was_ticked() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let owned = seed(&app, &user).await;
    let server = HttpToolServer::start(&app).await;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("mcp/oauth_sign_in.py");
    // The client asks for read and write; the person leaves only read ticked.
    let mut command = Command::new(env("DRIVE_MCP_PYTHON"));
    command.arg(script).args([&server.url, &user.api_token, "read"]);
    let signed_in = run(command).await.json();
    assert_eq!(signed_in["granted"], "read", "{signed_in}");
    assert_eq!(signed_in["files"].as_array().unwrap().len(), 1, "{signed_in}");
    assert!(signed_in["removeIsError"].as_bool().unwrap(), "{signed_in}");
    assert!(
        signed_in["removeText"]
            .as_str()
            .unwrap()
            .contains("insufficient_scope"),
        "{signed_in}"
    );
    // The SDK registered itself, and the person sees it among their connections.
    let connections = app.call(&user, "/select-connections", None).await;
    let connection = &connections.body["connections"][0];
    assert_eq!(
        connection["clientName"], "SDK tool client",
        "{}",
        connections.body
    );
    assert_eq!(connection["clientId"], signed_in["clientId"]);
    assert_eq!(connection["scopes"], json!(["read"]));
    let listed = app.call(&user, "/select-user-files", Some(json!({}))).await;
    assert_eq!(
        listed.body[0]["id"],
        owned.as_str(),
        "the remove was refused: the file is still there"
    );
}

#[tokio::test]
async fn list_files_walks_the_library_a_page_at_a_time_without_listing_it_whole() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let mut sources = Vec::new();
    for n in 0..3 {
        let bytes = format!("file {n}").into_bytes();
        sources.push(
            app.upload(&user, &format!("page-{n}.txt"), "Text", "text/plain", bytes)
                .await,
        );
    }
    // Copied together: three files recorded at the very same time, which a page cuts between.
    let copied = app
        .call(
            &user,
            "/copy-files",
            Some(json!({ "fileIds": sources, "folder": "/Copies" })),
        )
        .await;
    assert_eq!(copied.status, StatusCode::OK, "{}", copied.body);
    let times: Vec<&Value> = copied.body["copies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["file"]["insertTime"])
        .collect();
    assert!(
        times.windows(2).all(|w| w[0] == w[1]),
        "copies made together share their time: {times:?}"
    );
    let server = HttpToolServer::start(&app).await;

    let mut walked: Vec<String> = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let mut args = json!({ "limit": 2 });
        if !cursor.is_null() {
            args["cursor"] = cursor.clone();
        }
        let page = run(inspector(&[
            "--transport",
            "http",
            "--server-url",
            &server.url,
            "--header",
            &format!("Authorization: Bearer {}", user.api_token),
            "--method",
            "tools/call",
            "--tool-name",
            "list_files",
            "--tool-args-json",
            &args.to_string(),
        ]))
        .await
        .json();
        let listing = &page["result"]["structuredContent"];
        let files = listing["files"].as_array().unwrap_or_else(|| panic!("{page}"));
        assert!(files.len() <= 2, "{page}");
        walked.extend(files.iter().map(|f| f["id"].as_str().unwrap().to_string()));
        cursor = listing["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
        assert!(walked.len() < 6, "a page came after the last file: {walked:?}");
    }
    let metrics = reqwest::get(format!("{}/metrics", app.metrics_url.as_deref().unwrap()))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        !metrics.contains(r#"route="/select-user-files""#),
        "list_files listed the whole library"
    );
    // Every file once, newest first (as `/search-files` sorts them, ties by id).
    let newest = app
        .call(
            &user,
            "/search-files",
            Some(json!({ "sort": "newest", "limit": 200 })),
        )
        .await;
    let order: Vec<String> = newest.body["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(walked, order);
    assert_eq!(walked.len(), 6);
}
