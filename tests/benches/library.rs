//! `scripts/bench library`: the command line in front of a library of 100,000 files (seeded
//! straight into the database: `seed_library`), which it must never list whole.
//!
//! - **The first byte of an upload**: `drive upload` of one new 1 MiB file, timed from the
//!   command's start to the first byte of its upload reaching the store (the request line
//!   passing a forwarder in front of the store, which every process of the run reaches the
//!   store through), into the big library and into an empty one; beside `curl` putting the same
//!   file to a presigned URL through the same forwarder, from its start to its first byte.
//! - **`drive list`**: from its start to its first file row on the terminal, and to its end,
//!   with its peak memory; beside `curl` fetching one page of 200 of the same listing.
//!
//! Rounds alternate the sides.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use drive_tests::bench::{drive_login, middle, peak_rss_kib, seed_library};
use drive_tests::proxy::TcpProxy;
use drive_tests::{APP_ID, TestApp, TestUser, bin, env, raw_store_at};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

const FILES: i64 = 100_000;
const ROUNDS: usize = 5;
const MIB: usize = 1024 * 1024;

/// The ms from `start` to the first upload (a PUT or a POST) the store was sent after it.
fn first_upload_ms(store: &TcpProxy, start: Instant) -> f64 {
    let (at, _) = store
        .timed_requests()
        .into_iter()
        .find(|(at, request)| *at >= start && (request.starts_with("PUT ") || request.starts_with("POST ")))
        .expect("an upload reached the store");
    at.duration_since(start).as_secs_f64() * 1000.0
}

/// Runs `program args`, which must succeed; the ms from its start to its first byte uploaded.
async fn upload_ms(store: &TcpProxy, program: &Path, args: &[&str]) -> f64 {
    let start = Instant::now();
    let output = tokio::process::Command::new(program)
        .args(args)
        .output()
        .await
        .unwrap();
    assert!(
        output.status.success(),
        "{program:?} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    first_upload_ms(store, start)
}

/// `drive list` of `config`: ms to its first file row, ms to its end, rows printed, peak KiB.
async fn list(config: &Path) -> (f64, f64, usize, u64) {
    let start = Instant::now();
    let mut child = tokio::process::Command::new(bin("drive"))
        .arg("--config")
        .arg(config)
        .arg("list")
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let (mut first_row, mut rows, mut peak) = (None, 0, 0);
    let mut sample = tokio::time::interval(Duration::from_millis(20));
    loop {
        tokio::select! {
            line = lines.next_line() => {
                let Some(line) = line.unwrap() else { break };
                if !line.starts_with("ID ") {
                    rows += 1;
                    first_row.get_or_insert_with(|| start.elapsed());
                }
            }
            _ = sample.tick() => peak = peak.max(peak_rss_kib(pid).unwrap_or(0)),
        }
    }
    assert!(child.wait().await.unwrap().success(), "drive list");
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    (ms(first_row.expect("a row")), ms(start.elapsed()), rows, peak)
}

/// `curl` of the first page of 200 files, newest first: ms, as curl counts from its start.
fn curl_page(app: &TestApp, user: &TestUser) -> f64 {
    let out = std::process::Command::new("curl")
        .args([
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code} %{time_total}",
            "-X",
            "POST",
        ])
        .args(["-H", &format!("Authorization: Bearer {}", user.session)])
        .args(["-H", &format!("X-Drive-App: {APP_ID}")])
        .args(["-H", "Content-Type: application/json"])
        .args(["--data", &json!({ "sort": "newest", "limit": 200 }).to_string()])
        .arg(format!("{}/search-files", app.url))
        .output()
        .expect("curl");
    let out = String::from_utf8(out.stdout).unwrap();
    let (status, seconds) = out.split_once(' ').expect("curl's figures");
    assert_eq!(status, "200");
    seconds.parse::<f64>().unwrap() * 1000.0
}

fn figure(ms: &[f64]) -> String {
    let min = ms.iter().copied().fold(f64::INFINITY, f64::min);
    let max = ms.iter().copied().fold(0.0, f64::max);
    format!("{:.0} ms ({min:.0}–{max:.0})", middle(ms.to_vec()))
}

#[tokio::main]
async fn main() {
    let dir = std::path::PathBuf::from(env("DRIVE_BENCH_DIR"));
    let store = TcpProxy::start(&env("DRIVE_S3_ENDPOINT")).await;
    let app = TestApp::spawn_with(&[("DRIVE_S3_ENDPOINT", &store.endpoint)]).await;
    let (big, empty) = (app.user(Some("Pro")).await, app.user(Some("Pro")).await);
    let started = Instant::now();
    seed_library(&app, &big, FILES).await;
    println!("seeded {FILES} files in {:.1} s", started.elapsed().as_secs_f64());
    let (big_config, empty_config) = (dir.join("big.json"), dir.join("empty.json"));
    drive_login(&app, &big, &big_config).await;
    drive_login(&app, &empty, &empty_config).await;
    let bytes: Vec<u8> = (0..MIB)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let peer_store = raw_store_at(&store.endpoint);
    let presign = aws_sdk_s3::presigning::PresigningConfig::expires_in(Duration::from_secs(3600)).unwrap();

    let (mut into_big, mut into_empty, mut peer) = (Vec::new(), Vec::new(), Vec::new());
    let (mut list_first, mut list_end, mut list_peak, mut listed, mut curl) =
        (Vec::new(), Vec::new(), 0, 0, Vec::new());
    for round in 0..ROUNDS {
        // A new name each round: the command skips a file the library already holds.
        let file = dir.join(format!("new-{round}.bin"));
        let mut bytes = bytes.clone();
        bytes[..8].copy_from_slice(&(round as u64).to_le_bytes());
        std::fs::write(&file, &bytes).unwrap();
        let file = file.to_str().unwrap();
        let url = peer_store
            .put_object()
            .bucket(&app.private_bucket)
            .key(format!("users/{}/peer/new-{round}.bin", empty.id))
            .presigned(presign.clone())
            .await
            .unwrap()
            .uri()
            .to_string();
        let mut sides: Vec<u8> = (0..5).collect();
        sides.rotate_left(round % 5);
        for side in sides {
            match side {
                0 => {
                    let args = ["--config", big_config.to_str().unwrap(), "upload", file];
                    into_big.push(upload_ms(&store, &bin("drive"), &args).await);
                }
                1 => {
                    let args = ["--config", empty_config.to_str().unwrap(), "upload", file];
                    into_empty.push(upload_ms(&store, &bin("drive"), &args).await);
                }
                2 => {
                    let args = ["-s", "-f", "-o", "/dev/null", "-T", file, &url];
                    peer.push(upload_ms(&store, Path::new("/usr/bin/curl"), &args).await);
                }
                3 => {
                    let (first, end, rows, peak) = list(&big_config).await;
                    list_first.push(first);
                    list_end.push(end);
                    list_peak = list_peak.max(peak);
                    listed = rows;
                }
                _ => curl.push(curl_page(&app, &big)),
            }
        }
    }
    assert!(listed as i64 >= FILES, "drive list printed {listed} rows");

    println!(
        "| {FILES} files in the library, {ROUNDS} rounds alternating | median (min–max) | ratio to the peer |"
    );
    println!("|---|---|---|");
    let peer_ms = middle(peer.clone());
    println!(
        "| curl -T of the same 1 MiB to a presigned URL: start to first byte at the store | {} | 1.00 |",
        figure(&peer)
    );
    for (side, ms) in [
        ("into 100,000 files", &into_big),
        ("into an empty library", &into_empty),
    ] {
        println!(
            "| drive upload of a new 1 MiB file {side}: start to first byte at the store | {} | {:.2} |",
            figure(ms),
            middle(ms.clone()) / peer_ms
        );
    }
    let curl_ms = middle(curl.clone());
    println!(
        "| curl of one /search-files page of 200, newest first | {} | 1.00 |",
        figure(&curl)
    );
    println!(
        "| drive list: start to its first file row | {} | {:.2} |",
        figure(&list_first),
        middle(list_first.clone()) / curl_ms
    );
    println!(
        "| drive list: all {listed} rows (peak memory {} MiB) | {} | |",
        list_peak / 1024,
        figure(&list_end)
    );
}
