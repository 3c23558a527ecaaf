//! `scripts/bench ingestion`: a burst of small files until the drive has read them. 1,000
//! JPEGs of 640×480 and 1,000 WAVs of 2 s, first as people meet it (`drive upload` of the folder
//! with one worker running, until every file's `readMetadata` job has ended: files a second),
//! then the readings alone against their peer on the same stored objects: the folder uploaded
//! with no worker running, the drive's readings timed from the first one's start to the last
//! one's end (one worker, its default two slots), and beside them `curl` fetching the objects
//! and `exiftool` and `ffprobe` reading them in one batch. Three rounds, alternating which goes
//! first.

use std::path::Path;

use drive_tests::bench::{drive_upload, min_median_max};
use drive_tests::{TestApp, env};

const ROUNDS: usize = 3;

/// Files of the ingestion: [`INGESTED`] JPEGs of 640×480 and as many WAVs of 2 s.
const INGESTED: usize = 1_000;

/// Writes the ingestion's folder; answers it.
fn ingestion_folder(dir: &Path) -> std::path::PathBuf {
    let folder = dir.join("ingest");
    std::fs::create_dir_all(&folder).unwrap();
    drive_tests::bench::photo(&folder.join("picture-0000.jpg"), 640, 480);
    let clip = drive_tests::media::ffmpeg(&["-f", "lavfi", "-i", "sine=frequency=440:duration=2"], "wav");
    std::fs::write(folder.join("clip-0000.wav"), clip).unwrap();
    for n in 1..INGESTED {
        std::fs::copy(
            folder.join("picture-0000.jpg"),
            folder.join(format!("picture-{n:04}.jpg")),
        )
        .unwrap();
        std::fs::copy(
            folder.join("clip-0000.wav"),
            folder.join(format!("clip-{n:04}.wav")),
        )
        .unwrap();
    }
    folder
}

/// Waits until every reading of the app has ended; answers the seconds from the first one's
/// start to the last one's end, and how many failed.
async fn readings_ended(app: &TestApp) -> (f64, i64) {
    let mut db = app.db().await;
    loop {
        let (ended, failed, waiting, span): (i64, i64, i64, Option<f64>) = sqlx::query_as(
            "select count(*) filter (where state in ('done', 'failed')), count(*) filter (where state = 'failed'),
                    count(*) filter (where state in ('queued', 'running')),
                    extract(epoch from max(ended_at) - min(started_at))::float8
             from file_jobs where job_type = 'readMetadata'",
        )
        .fetch_one(&mut db)
        .await
        .unwrap();
        if ended >= 2 * INGESTED as i64 && waiting == 0 {
            return (span.unwrap_or_default(), failed);
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// The ingestion as people meet it: `drive upload` of the folder with one worker running,
/// until the drive has read every file's metadata. Answers the upload's seconds, the seconds
/// until read, and how many readings failed.
async fn ingestion(dir: &Path, folder: &Path) -> (f64, f64, i64) {
    let mut app = TestApp::spawn_with(&[("DRIVE_HEARTBEAT_SECONDS", "10")]).await;
    app.start_worker(&[]).await;
    let started = std::time::Instant::now();
    let uploaded = drive_upload(&app, dir, folder, 0).await.as_secs_f64();
    let (_, failed) = readings_ended(&app).await;
    (uploaded, started.elapsed().as_secs_f64(), failed)
}

/// The peer of the readings: the same stored objects fetched by `curl` (eight at a time) and
/// read in one batch, the pictures by one `exiftool`, the tracks by `ffprobe` two at a time.
const PEER_READS: &str = r#"
rm -rf "$1"; mkdir -p "$1"
curl -s --fail --parallel --parallel-max 8 -K "$2"
exiftool -q -json -n "$1"/*.jpg > /dev/null
ls "$1"/*.wav | xargs -P 2 -n 1 ffprobe -v error -show_format -show_streams -of json > /dev/null
"#;

/// Round `round` of the readings against their peer, on the same objects: the folder uploaded
/// with no worker running, then the drive's readings timed from the first one's start to the
/// last one's end (one worker) and the peer's batch, in the round's order. Answers both
/// seconds.
async fn readings_against_peer(dir: &Path, folder: &Path, round: usize) -> (f64, f64) {
    let mut app = TestApp::spawn_with(&[("DRIVE_HEARTBEAT_SECONDS", "10")]).await;
    drive_upload(&app, dir, folder, round + 1).await;
    let objects: Vec<(String, String)> = sqlx::query_as("select file_name, object_key from files")
        .fetch_all(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(objects.len(), 2 * INGESTED);
    let store = drive_tests::raw_store().await;
    let lifetime =
        aws_sdk_s3::presigning::PresigningConfig::expires_in(std::time::Duration::from_secs(3600)).unwrap();
    let fetched = dir.join("peer-reads");
    let mut config = String::new();
    for (name, key) in objects {
        let url = store
            .get_object()
            .bucket(&app.private_bucket)
            .key(key)
            .presigned(lifetime.clone())
            .await
            .unwrap();
        config.push_str(&format!(
            "url = \"{}\"\noutput = \"{}\"\n",
            url.uri(),
            fetched.join(name).display()
        ));
    }
    let config_path = dir.join("peer-reads.curl");
    std::fs::write(&config_path, config).unwrap();
    let peer = || {
        drive_tests::bench::timed_script(
            PEER_READS,
            &[fetched.to_str().unwrap(), config_path.to_str().unwrap()],
        )
    };
    let peer_first = round % 2 == 1;
    let peer_seconds = if peer_first { peer() } else { 0.0 };
    app.start_worker(&[]).await;
    let (drive_seconds, failed) = readings_ended(&app).await;
    assert_eq!(failed, 0, "no reading fails");
    let peer_seconds = if peer_first { peer_seconds } else { peer() };
    (drive_seconds, peer_seconds)
}

#[tokio::main]
async fn main() {
    let dir = std::path::PathBuf::from(env("DRIVE_BENCH_DIR"));
    let folder = ingestion_folder(&dir);
    let (uploaded, read, failed) = ingestion(&dir, &folder).await;
    println!();
    println!(
        "| ingestion of {} files ({INGESTED} JPEGs 640×480, {INGESTED} WAVs of 2 s), one worker, heartbeat 10 s | seconds | files a second |",
        2 * INGESTED
    );
    println!("|---|---|---|");
    println!(
        "| `drive upload` of the folder | {uploaded:.2} | {:.0} |",
        (2 * INGESTED) as f64 / uploaded
    );
    println!(
        "| … until every file's metadata is read ({failed} readings failed) | {read:.2} | {:.0} |",
        (2 * INGESTED) as f64 / read
    );

    let mut drive = Vec::new();
    let mut peer = Vec::new();
    for round in 0..ROUNDS {
        let (ours, theirs) = readings_against_peer(&dir, &folder, round).await;
        drive.push(ours);
        peer.push(theirs);
    }
    let ratios: Vec<f64> = drive.iter().zip(&peer).map(|(d, p)| d / p).collect();
    let (d_min, d_median, d_max) = min_median_max(drive);
    let (p_min, p_median, p_max) = min_median_max(peer);
    let (r_min, r_median, r_max) = min_median_max(ratios);
    println!();
    println!(
        "| the same {} stored files read, {ROUNDS} rounds alternating | seconds, median (min–max) | files a second | vs peer, median (min–max) |",
        2 * INGESTED
    );
    println!("|---|---|---|---|");
    println!(
        "| the drive: every readMetadata job, one worker (first start → last end) | {d_median:.2} ({d_min:.2}–{d_max:.2}) | {:.0} | {r_median:.2}× ({r_min:.2}–{r_max:.2}) |",
        (2 * INGESTED) as f64 / d_median
    );
    println!(
        "| peer: `curl --parallel` to disk, `exiftool` over the JPEGs, `ffprobe` over the WAVs (2 at a time) | {p_median:.2} ({p_min:.2}–{p_max:.2}) | {:.0} | 1.00× |",
        (2 * INGESTED) as f64 / p_median
    );
}
