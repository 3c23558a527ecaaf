//! `scripts/bench mcp`: what the tool server adds.
//!
//! - A tool call against the same API call: `get_storage_usage` through `drive-mcp` (over stdio
//!   and over streamable HTTP) against `/get-user-storage-usage` straight to the drive, all from
//!   one client stack (Python, `tests/mcp/check_tools.py`: the MCP SDK's client for the tools,
//!   its HTTP client for the route), 300 timed calls after 5 warm-up calls, p50 and p99.
//! - Upload throughput: `upload_file` over stdio of a file (`DRIVE_BENCH_MCP_GIB`, default 1)
//!   against `drive upload` of the same file, each into a fresh account.
//!
//! Rounds alternate the sides; each figure is the median of three rounds, with the spread.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use drive_tests::bench::{drive_upload, min_median_max};
use drive_tests::scratch::write_file;
use drive_tests::tool_server::HttpToolServer;
use drive_tests::{APP_ID, TestApp, TestUser, bin, env};
use serde_json::{Value, json};
use tokio::process::Command;

const MIB: usize = 1024 * 1024;
const ROUNDS: usize = 3;
const CALLS: usize = 300;

fn check_tools() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("mcp/check_tools.py")
}

/// `check_tools.py ARGS…` (with `-- drive-mcp stdio` for `user` when `stdio`); its JSON report.
async fn check_tools_run(app: &TestApp, user: &TestUser, args: &[&str], stdio: bool) -> Value {
    let mut command = Command::new(env("DRIVE_MCP_PYTHON"));
    command.arg(check_tools()).args(args);
    if stdio {
        command
            .args(["--stdio", "--"])
            .arg(bin("drive-mcp"))
            .arg("stdio")
            .env("DRIVE_URL", &app.url)
            .env("DRIVE_API_TOKEN", &user.api_token)
            .env("DRIVE_APP", APP_ID);
    }
    let output = command
        .stdin(Stdio::null())
        .output()
        .await
        .expect("run check_tools.py");
    assert!(
        output.status.success(),
        "check_tools.py {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("check_tools.py's report")
}

/// One `upload_file` call over stdio into a fresh account, timed by the MCP client around the
/// call (the server's start and the handshake are not counted).
async fn tool_upload(app: &TestApp, path: &Path) -> Duration {
    let user = app.user(Some("Pro")).await;
    let args = json!({ "path": path }).to_string();
    let report = check_tools_run(
        app,
        &user,
        &[
            "--warm-up",
            "0",
            "--calls",
            "1",
            "--tool",
            "upload_file",
            "--args",
            &args,
        ],
        true,
    )
    .await;
    Duration::from_secs_f64(report["p50Ms"].as_f64().unwrap() / 1000.0)
}

#[tokio::main]
async fn main() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let server = HttpToolServer::start(&app).await;
    let mcp_url = server.url.clone();
    let calls = CALLS.to_string();

    // ---- a tool call against the same API call ----
    let mut figures: [Vec<(f64, f64)>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for round in 0..ROUNDS {
        for side in (0..3).map(|i| (i + round) % 3) {
            let report = match side {
                0 => {
                    check_tools_run(
                        &app,
                        &user,
                        &[
                            "--api",
                            &app.url,
                            "--token",
                            &user.api_token,
                            "--app",
                            APP_ID,
                            "--calls",
                            &calls,
                        ],
                        false,
                    )
                    .await
                }
                1 => {
                    check_tools_run(
                        &app,
                        &user,
                        &["--calls", &calls, "--tool", "get_storage_usage"],
                        true,
                    )
                    .await
                }
                _ => {
                    check_tools_run(
                        &app,
                        &user,
                        &[
                            "--http",
                            &mcp_url,
                            "--token",
                            &user.api_token,
                            "--calls",
                            &calls,
                            "--tool",
                            "get_storage_usage",
                        ],
                        false,
                    )
                    .await
                }
            };
            figures[side].push((
                report["p50Ms"].as_f64().unwrap(),
                report["p99Ms"].as_f64().unwrap(),
            ));
        }
    }
    let median_of =
        |side: usize, pick: fn(&(f64, f64)) -> f64| min_median_max(figures[side].iter().map(pick).collect());
    let api_p50 = median_of(0, |f| f.0).1;
    let api_p99 = median_of(0, |f| f.1).1;
    println!(
        "storage usage, {CALLS} calls a round after 5 warm-up calls, {ROUNDS} rounds rotating the order; ms, median of the rounds (min–max)"
    );
    println!("| Call | p50 | p99 | p50 over the API call | p99 over the API call |");
    println!("|---|---|---|---|---|");
    for (side, name) in [
        (0, "`/get-user-storage-usage` straight to the drive (peer)"),
        (1, "`get_storage_usage` through `drive-mcp stdio`"),
        (2, "`get_storage_usage` through `drive-mcp http`"),
    ] {
        let (p50_min, p50, p50_max) = median_of(side, |f| f.0);
        let (p99_min, p99, p99_max) = median_of(side, |f| f.1);
        println!(
            "| {name} | {p50:.2} ({p50_min:.2}–{p50_max:.2}) | {p99:.2} ({p99_min:.2}–{p99_max:.2}) | +{:.2} ms ({:.2}×) | +{:.2} ms ({:.2}×) |",
            p50 - api_p50,
            p50 / api_p50,
            p99 - api_p99,
            p99 / api_p99
        );
    }

    // ---- upload throughput ----
    let gib: usize = std::env::var("DRIVE_BENCH_MCP_GIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let size = gib * 1024 * MIB;
    let dir = PathBuf::from(env("DRIVE_BENCH_DIR"));
    let path = dir.join("bench.bin");
    write_file(&path, size, 1);
    let (mut tool, mut cli) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        if round % 2 == 0 {
            tool.push(tool_upload(&app, &path).await.as_secs_f64());
            cli.push(drive_upload(&app, &dir, &path, round).await.as_secs_f64());
        } else {
            cli.push(drive_upload(&app, &dir, &path, round).await.as_secs_f64());
            tool.push(tool_upload(&app, &path).await.as_secs_f64());
        }
    }
    let (cli_min, cli_median, cli_max) = min_median_max(cli);
    let (tool_min, tool_median, tool_max) = min_median_max(tool);
    let rate = |seconds: f64| size as f64 / MIB as f64 / seconds;
    println!();
    println!(
        "| {gib} GiB, {ROUNDS} rounds alternating | seconds, median (min–max) | MiB/s | time ratio (ours / peer) |"
    );
    println!("|---|---|---|---|");
    println!(
        "| `upload_file` through `drive-mcp stdio` | {tool_median:.2} ({tool_min:.2}–{tool_max:.2}) | {:.0} | {:.2} |",
        rate(tool_median),
        tool_median / cli_median
    );
    println!(
        "| `drive upload` (peer) | {cli_median:.2} ({cli_min:.2}–{cli_max:.2}) | {:.0} | 1.00 |",
        rate(cli_median)
    );
}
