//! CLI upload throughput against a plain S3 PUT of the same bytes to the same store
//! (`scripts/bench upload`; `DRIVE_BENCH_UPLOAD_GIB` sets the file size, default 4).
//!
//! Both read the same file from disk. The peer is one streaming PutObject from aws-sdk-s3,
//! the fastest way the store takes a file; the CLI goes through the API (create, signed
//! parts of 64 MiB, 4 in flight, complete, insert). The CLI's peak resident memory is read
//! from /proc while it runs, to show the upload streams. Three rounds, alternating which side
//! goes first: medians with their spread.

use std::path::Path;
use std::time::{Duration, Instant};

use drive_tests::bench::{drive_login, middle, peak_rss_kib, spread};
use drive_tests::{TestApp, bin, env, raw_store};
use tokio::io::AsyncWriteExt;

const MIB: u64 = 1024 * 1024;
/// Rounds of each side, alternating which goes first.
const ROUNDS: usize = 3;

async fn write_file(path: &Path, len: u64) {
    let mut file = tokio::fs::File::create(path).await.unwrap();
    let block: Vec<u8> = (0..MIB)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    for n in 0..len / MIB {
        // Vary each MiB a little so no layer can deduplicate blocks.
        let mut chunk = block.clone();
        chunk[..8].copy_from_slice(&n.to_le_bytes());
        file.write_all(&chunk).await.unwrap();
    }
    file.sync_all().await.unwrap();
}

async fn drive(config: &Path, args: &[&str]) -> (Duration, u64) {
    let start = Instant::now();
    let mut child = tokio::process::Command::new(bin("drive"))
        .arg("--config")
        .arg(config)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let mut peak = 0;
    let status = loop {
        if let Some(rss) = peak_rss_kib(pid) {
            peak = peak.max(rss);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let elapsed = start.elapsed();
    let output = child.wait_with_output().await.unwrap();
    assert!(
        status.success(),
        "drive {args:?} failed: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    (elapsed, peak)
}

#[tokio::main]
async fn main() {
    let gib: u64 = std::env::var("DRIVE_BENCH_UPLOAD_GIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    let size = gib * 1024 * MIB;
    let dir = std::path::PathBuf::from(env("DRIVE_BENCH_DIR"));
    let path = dir.join("upload.bin");
    write_file(&path, size).await;

    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let config = dir.join("drive.json");
    drive_login(&app, &user, &config).await;

    // Rounds alternating which goes first, so neither side always meets a warmer cache.
    let store = raw_store().await;
    let (mut peers, mut ours, mut peak_kib) = (Vec::new(), Vec::new(), 0);
    for round in 0..ROUNDS {
        let mut turns = [true, false];
        if round % 2 == 1 {
            turns.reverse();
        }
        for peer_turn in turns {
            if peer_turn {
                let start = Instant::now();
                store
                    .put_object()
                    .bucket(&app.private_bucket)
                    .key(format!("users/{}/peer/upload-{round}.bin", user.id))
                    .content_length(size as i64)
                    .body(
                        aws_sdk_s3::primitives::ByteStream::from_path(&path)
                            .await
                            .unwrap(),
                    )
                    .send()
                    .await
                    .unwrap();
                peers.push(start.elapsed().as_secs_f64());
            } else {
                // A name of its own each round: the CLI skips a file the library already has.
                let named = dir.join(format!("upload-{round}.bin"));
                std::fs::hard_link(&path, &named).unwrap();
                let (took, peak) = drive(&config, &["--json", "upload", named.to_str().unwrap()]).await;
                let _ = std::fs::remove_file(&named);
                ours.push(took.as_secs_f64());
                peak_kib = peak_kib.max(peak);
            }
        }
    }

    let rate = |seconds: f64| size as f64 / MIB as f64 / seconds;
    let (peer, own) = (middle(peers.clone()), middle(ours.clone()));
    println!(
        "| upload of {gib} GiB, {ROUNDS} rounds alternating | time, median (min–max) | MiB/s | time ratio (ours / peer) | peak RSS |"
    );
    println!("|---|---|---|---|---|");
    println!(
        "| plain S3 PutObject (aws-sdk-s3, one stream) | {} | {:.0} | 1.00 | |",
        spread(&peers),
        rate(peer)
    );
    println!(
        "| drive upload (CLI: 64 MiB parts, 4 in flight, via the API) | {} | {:.0} | {:.2} | {} MiB |",
        spread(&ours),
        rate(own),
        own / peer,
        peak_kib / 1024
    );
    let _ = std::fs::remove_file(&path);
}
