//! `scripts/bench requests`: a file sent through a file request's page path against
//! `drive upload` of the same file, and `/import-from-url` against `curl` of the same link
//! followed by a plain S3 PUT (`DRIVE_BENCH_REQUESTS_GIB` sets the size, default 1).
//!
//! The page path is what `pages/request.js` does, from Rust: start a drop, announce the file,
//! PUT its 64 MiB parts to the store four at a time (each part read from disk as it goes), record
//! it. The import's link is served by `python3 -m http.server` from the same disk. Rounds
//! alternate the two sides; each figure is the median of three, with the spread.

use std::io::SeekFrom;
use std::path::Path;
use std::time::{Duration, Instant};

use drive_tests::bench::drive_upload;
use drive_tests::senders::Sender;
use drive_tests::{TestApp, env, raw_store};
use futures::StreamExt;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};

const MIB: u64 = 1024 * 1024;
const ROUNDS: usize = 3;
const ALLOW: (&str, &str) = ("DRIVE_FETCH_ALLOW_HOSTS", "127.0.0.1");

async fn write_file(path: &Path, len: u64) {
    let mut file = tokio::fs::File::create(path).await.unwrap();
    let block: Vec<u8> = (0..MIB)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    for n in 0..len / MIB {
        let mut chunk = block.clone();
        chunk[..8].copy_from_slice(&n.to_le_bytes());
        file.write_all(&chunk).await.unwrap();
    }
    file.sync_all().await.unwrap();
}

/// The request page's path for one file.
async fn send_through_request(app: &TestApp, request_id: &str, path: &Path, size: u64) -> Duration {
    let start = Instant::now();
    let sender = Sender::start(app, request_id, "Bench", None).await;
    let added = sender.announce(app, "bench.bin", size as usize).await;
    assert_eq!(added.status, 200, "{}", added.body);
    let parts = &added.body["parts"];
    let part_size = parts["partSize"].as_u64().unwrap();
    let signed = parts["signedParts"].as_array().unwrap().clone();
    let client = reqwest::Client::new();
    let sent: Vec<bool> = futures::stream::iter(signed)
        .map(|part| {
            let client = client.clone();
            async move {
                let n = part["partNumber"].as_u64().unwrap();
                let len = part["size"].as_u64().unwrap();
                let mut file = tokio::fs::File::open(path).await.unwrap();
                file.seek(SeekFrom::Start((n - 1) * part_size)).await.unwrap();
                let mut bytes = vec![0u8; len as usize];
                file.read_exact(&mut bytes).await.unwrap();
                let put = client.put(part["url"].as_str().unwrap()).body(bytes).send().await;
                put.is_ok_and(|r| r.status().is_success())
            }
        })
        .buffer_unordered(4)
        .collect()
        .await;
    assert!(sent.iter().all(|ok| *ok), "a part was refused");
    let finished = sender.finish_file(app, &added.body["arrivalId"]).await;
    assert_eq!(finished.status, 200, "{}", finished.body);
    assert_eq!(sender.finish(app).await.status, 200);
    start.elapsed()
}

async fn import(app: &TestApp, user: &drive_tests::TestUser, link: &str) -> Duration {
    let start = Instant::now();
    let made = app
        .call(user, "/import-from-url", Some(json!({ "url": link })))
        .await;
    assert_eq!(made.status, 200, "{}", made.body);
    let done = app.wait_job(user, &made.body["job"]["id"]).await;
    drive_tests::assert_done(&done);
    start.elapsed()
}

async fn curl_then_put(
    app: &TestApp,
    user: &drive_tests::TestUser,
    link: &str,
    dir: &Path,
    round: usize,
) -> Duration {
    let start = Instant::now();
    let fetched = dir.join(format!("fetched-{round}.bin"));
    let status = tokio::process::Command::new("curl")
        .args(["-sSf", "-o"])
        .arg(&fetched)
        .arg(link)
        .status()
        .await
        .unwrap();
    assert!(status.success());
    raw_store()
        .await
        .put_object()
        .bucket(&app.private_bucket)
        .key(format!("users/{}/peer/{round}.bin", user.id))
        .body(
            aws_sdk_s3::primitives::ByteStream::from_path(&fetched)
                .await
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let elapsed = start.elapsed();
    let _ = std::fs::remove_file(&fetched);
    elapsed
}

/// `min / median / max` seconds.
fn spread(mut times: Vec<Duration>) -> (f64, f64, f64) {
    times.sort();
    let s = |d: Duration| d.as_secs_f64();
    (s(times[0]), s(times[times.len() / 2]), s(times[times.len() - 1]))
}

#[tokio::main]
async fn main() {
    let gib: u64 = std::env::var("DRIVE_BENCH_REQUESTS_GIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let size = gib * 1024 * MIB;
    let dir = std::path::PathBuf::from(env("DRIVE_BENCH_DIR"));
    let served = dir.join("served");
    std::fs::create_dir_all(&served).unwrap();
    let path = served.join("bench.bin");
    write_file(&path, size).await;

    let mut app = TestApp::spawn_with(&[ALLOW]).await;
    app.start_worker(&[ALLOW]).await;
    let owner = app.user(Some("Pro")).await;

    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut server = std::process::Command::new("python3")
        .args([
            "-m",
            "http.server",
            "--bind",
            "127.0.0.1",
            &port.to_string(),
            "--directory",
        ])
        .arg(&served)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("python3's http.server");
    let link = format!("http://127.0.0.1:{port}/bench.bin");
    while reqwest::get(&link).await.is_err() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let (mut page, mut cli, mut imports, mut peers) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let request = app
            .call(
                &owner,
                "/create-file-request",
                Some(json!({ "title": format!("Bench {round}") })),
            )
            .await;
        let id = request.body["id"].as_str().unwrap().to_string();
        // Alternate which side goes first.
        if round % 2 == 0 {
            cli.push(drive_upload(&app, &dir, &path, round).await);
            page.push(send_through_request(&app, &id, &path, size).await);
            peers.push(curl_then_put(&app, &owner, &link, &dir, round).await);
            imports.push(import(&app, &owner, &link).await);
        } else {
            page.push(send_through_request(&app, &id, &path, size).await);
            cli.push(drive_upload(&app, &dir, &path, round).await);
            imports.push(import(&app, &owner, &link).await);
            peers.push(curl_then_put(&app, &owner, &link, &dir, round).await);
        }
    }
    let _ = server.kill();
    let _ = server.wait();

    let rate = |seconds: f64| size as f64 / MIB as f64 / seconds;
    let row = |name: &str, times: &[Duration], peer: Option<f64>| {
        let (min, median, max) = spread(times.to_vec());
        let ratio = peer.map_or("1.00".to_string(), |p| format!("{:.2}", median / p));
        println!(
            "| {name} | {median:.2} ({min:.2}–{max:.2}) | {:.0} | {ratio} |",
            rate(median)
        );
        median
    };
    println!(
        "| {gib} GiB, {ROUNDS} rounds alternating | seconds, median (min–max) | MiB/s | time ratio (ours / peer) |"
    );
    println!("|---|---|---|---|");
    let cli_median = row("drive upload (the CLI: 64 MiB parts, 4 in flight)", &cli, None);
    row(
        "the request page's path (start a drop, 64 MiB parts, 4 in flight, record)",
        &page,
        Some(cli_median),
    );
    let peer_median = row("curl of the link, then a plain S3 PutObject", &peers, None);
    row(
        "/import-from-url (an import job: fetched and streamed into the store)",
        &imports,
        Some(peer_median),
    );
    let _ = std::fs::remove_dir_all(&served);
}
