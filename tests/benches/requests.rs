//! `scripts/bench requests`: a file sent through a file request's page path against
//! `drive upload` of the same file, and `/import-from-url` against `curl` of the same link to
//! disk followed by `curl -T` of it to a presigned PUT, and against the same two `curl`s streamed
//! through a pipe (`DRIVE_BENCH_REQUESTS_GIB` sets the size, default 1); then where the cores go
//! in one more of each.
//!
//! The page path is what `pages/request.js` does, from Rust: start a drop, announce the file,
//! PUT its 64 MiB parts to the store four at a time (each part read from disk as it goes), record
//! it. The import's link is served by `python3 -m http.server` from the same disk. Rounds
//! alternate the two sides; each figure is the median of five, with the spread. The import is
//! timed end to end (from just before the request to the job's `endTime`) and as the job's own
//! run, so the queue hop is the difference.

use std::io::SeekFrom;
use std::path::Path;
use std::time::{Duration, Instant};

use drive_tests::bench::{
    CPU_HEADS, Cpu, cpu_seconds_of, drive_upload, middle, put_link, spread, timed_job_at, timed_script,
};
use drive_tests::senders::Sender;
use drive_tests::{TestApp, env};
use futures::StreamExt;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};

const MIB: u64 = 1024 * 1024;
const ROUNDS: usize = 5;
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
async fn send_through_request(app: &TestApp, request_id: &str, path: &Path, size: u64) -> f64 {
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
    start.elapsed().as_secs_f64()
}

/// The link fetched by `curl` to disk, then sent by `curl -T` to a presigned PUT of the store.
const PEER: &str = r#"curl -sf -o "$1" "$2"; curl -sf -T "$1" -o /dev/null "$3"; rm -f "$1""#;
/// The import's streamed peer: the link's bytes piped straight into the PUT, as the job streams
/// them (no disk between).
const STREAMED: &str = r#"curl -sf "$1" | curl -sf -T - -o /dev/null "$2""#;

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

    let fetched = dir.join("fetched.bin");
    let fetched = fetched.to_str().unwrap();
    let peer = |round: usize| {
        let (app, link) = (&app, &link);
        async move {
            let put = put_link(app, &format!("bench/peer/{round}")).await;
            timed_script(PEER, &[fetched, link, &put])
        }
    };
    let streamed = |round: usize| {
        let (app, link) = (&app, &link);
        async move {
            let put = put_link(app, &format!("bench/streamed/{round}")).await;
            timed_script(STREAMED, &[link, &put])
        }
    };
    let body = json!({ "url": link });
    let import = || async {
        let (run, end_to_end, _) = timed_job_at(&app, &owner, "/import-from-url", body.clone()).await;
        (run, end_to_end)
    };
    let (mut page, mut cli, mut peers, mut streams) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut runs, mut imports) = (Vec::new(), Vec::new());
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
        let (run, end_to_end) = if round % 2 == 0 {
            cli.push(drive_upload(&app, &dir, &path, round).await.as_secs_f64());
            page.push(send_through_request(&app, &id, &path, size).await);
            peers.push(peer(round).await);
            streams.push(streamed(round).await);
            import().await
        } else {
            page.push(send_through_request(&app, &id, &path, size).await);
            cli.push(drive_upload(&app, &dir, &path, round).await.as_secs_f64());
            let imported = import().await;
            streams.push(streamed(round).await);
            peers.push(peer(round).await);
            imported
        };
        runs.push(run);
        imports.push(end_to_end);
    }

    // Where the cores go in one more of each side: the link's server (python3) serves both.
    let worker = app.worker_pid(0);
    let mut cpu = Vec::new();
    for side in ["peer", "import"] {
        let (before, server_before) = (Cpu::now(worker), cpu_seconds_of("python3"));
        let wall = if side == "peer" {
            peer(ROUNDS).await
        } else {
            import().await.1
        };
        let row = Cpu::now(worker).row(&before, wall);
        cpu.push((side, row, cpu_seconds_of("python3") - server_before));
    }
    let _ = server.kill();
    let _ = server.wait();

    let rate = |seconds: f64| size as f64 / MIB as f64 / seconds;
    let row = |name: &str, seconds: &[f64], peer: Option<f64>| {
        let median = middle(seconds.to_vec());
        let ratio = peer.map_or("1.00".to_string(), |p| format!("{:.2}", median / p));
        println!("| {name} | {} | {:.0} | {ratio} |", spread(seconds), rate(median));
        median
    };
    println!(
        "| {gib} GiB, {ROUNDS} rounds alternating | median (min–max) | MiB/s | time ratio (ours / peer) |"
    );
    println!("|---|---|---|---|");
    let cli_median = row("drive upload (the CLI: 64 MiB parts, 4 in flight)", &cli, None);
    row(
        "the request page's path (start a drop, 64 MiB parts, 4 in flight, record)",
        &page,
        Some(cli_median),
    );
    let peer_median = row(
        "`curl` of the link to disk, then `curl -T` of it to a presigned PUT",
        &peers,
        None,
    );
    row(
        "/import-from-url, end to end (the request, the queue hop, the job)",
        &imports,
        Some(peer_median),
    );
    row(
        "the import job's run (its startTime to endTime: process start, fetch, parts stored, record)",
        &runs,
        Some(peer_median),
    );
    let streamed_median = row(
        "`curl` of the link piped into `curl -T -` to a presigned PUT (streamed)",
        &streams,
        None,
    );
    row(
        "the import job's run, against the streamed peer",
        &runs,
        Some(streamed_median),
    );
    println!();
    println!("| CPU seconds of one more of each | {CPU_HEADS} | the link's server (python3) |");
    println!("|---|---|---|---|---|---|---|---|");
    for (side, row, server) in cpu {
        println!("| {side} | {row} | {server:.2} |");
    }
    let _ = std::fs::remove_dir_all(&served);
}
