//! The job process's peak memory by family, each at two input sizes (`scripts/bench memory`):
//! pictures (convert), PDFs (pdfToImages), video (proxy), speech (readForSearch of a recording)
//! and OCR (readForSearch of scanned pages), beside the peer command doing the same work on the
//! same bytes (`vipsthumbnail`, `pdftoppm`, `ffmpeg`, faster-whisper, `tesseract`).
//!
//! The jobs run under an address-space cap ([`CAP_GIB`]), so a row that prints ran within it.
//! The job's figure is its process's `VmHWM` (peak resident set), read every 5 ms while the job
//! runs; the peer's is `/usr/bin/time`'s maximum resident set of the command on a local copy of
//! the input. Each row is the larger of two runs.

use std::path::Path;
use std::time::Duration;

use drive_tests::bench::{add_file, photo, timed_job};
use drive_tests::media::{ffmpeg, scanned_page, text_pdf};
use drive_tests::{TestApp, TestUser, env};
use serde_json::{Value, json};

const CAP_GIB: u64 = 2;
const RUNS: usize = 2;

struct Row<'a> {
    family: &'a str,
    input: String,
    /// The peer's command, given the input's local path as `$1` and a scratch folder as `$2`.
    peer: &'a str,
    job: Value,
}

/// The job's peak resident set in KiB over [`RUNS`] runs.
async fn job_peak(app: &TestApp, user: &TestUser, job: &Value) -> u64 {
    let mut peak = 0;
    for _ in 0..RUNS {
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let watcher = drive_tests::bench::watch_job_memory(done.clone(), Duration::from_millis(5));
        let (_, _, ended) = timed_job(app, user, job.clone()).await;
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(ended["state"], "done", "{ended}");
        peak = peak.max(watcher.join().unwrap());
    }
    peak
}

/// The peer's peak resident set in KiB over [`RUNS`] runs, by `/usr/bin/time`.
fn peer_peak(command: &str, input: &Path, scratch: &Path) -> u64 {
    let mut peak = 0;
    for _ in 0..RUNS {
        std::fs::create_dir_all(scratch).unwrap();
        let report = scratch.with_extension("time");
        let status = std::process::Command::new("/usr/bin/time")
            .args(["-f", "%M", "-o"])
            .arg(&report)
            .args(["sh", "-c", command, "peer"])
            .arg(input)
            .arg(scratch)
            .status()
            .expect("/usr/bin/time runs");
        assert!(status.success(), "{command}");
        let kib: u64 = std::fs::read_to_string(&report).unwrap().trim().parse().unwrap();
        peak = peak.max(kib);
        std::fs::remove_dir_all(scratch).unwrap();
    }
    peak
}

/// Waits until none of the account's jobs is queued or running.
async fn settled(app: &TestApp, user: &TestUser) {
    loop {
        let page = app
            .call(user, "/select-file-jobs", Some(json!({ "limit": 100 })))
            .await;
        assert_eq!(page.status, 200, "{}", page.body);
        let jobs = page.body["jobs"].as_array().cloned().unwrap_or_default();
        if jobs
            .iter()
            .all(|job| job["state"] != "queued" && job["state"] != "running")
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn mib(kib: u64) -> String {
    format!("{:.0} MiB", kib as f64 / 1024.0)
}

#[tokio::main]
async fn main() {
    let dir = Path::new(&env("DRIVE_BENCH_DIR")).to_path_buf();
    let whisper = env("DRIVE_BENCH_CAPTIONS_PEER");
    let cap = (CAP_GIB << 30).to_string();
    let mut app = TestApp::spawn_with(&[("DRIVE_JOB_MINUTES_PRO", "100000")]).await;
    app.start_worker(&[
        ("DRIVE_JOB_MEMORY_LIMIT_BYTES", &cap),
        ("DRIVE_WORKER_CONCURRENCY", "1"),
    ])
    .await;
    let user = app.user(Some("Pro")).await;
    let mut rows = Vec::new();

    for (width, height) in [(4000, 3000), (8000, 6000)] {
        let path = dir.join(format!("photo-{width}.jpg"));
        photo(&path, width, height);
        let file = add_file(&app, &user, &path, "Image", "image/jpeg").await;
        rows.push((path, Row {
            family: "pictures: convert to a 2048 px JPEG",
            input: format!("{width}×{height} JPEG"),
            peer: "vipsthumbnail \"$1\" -s 2048 -o \"$2/%s.jpg[Q=85]\"",
            job: json!({ "jobType": "convert", "fileIds": [file], "options": { "format": "jpg", "maxEdge": 2048 } }),
        }));
    }

    for pages in [10, 100] {
        let path = dir.join(format!("text-{pages}.pdf"));
        let text: Vec<Vec<String>> = (0..pages)
            .map(|p| {
                (0..60)
                    .map(|l| format!("page {p} line {l}: the quick brown fox jumps over the lazy dog"))
                    .collect()
            })
            .collect();
        std::fs::write(&path, text_pdf(&text)).unwrap();
        let file = add_file(&app, &user, &path, "Pdf", "application/pdf").await;
        rows.push((path, Row {
            family: "PDFs: pdfToImages at 150 dpi",
            input: format!("{pages} pages"),
            peer: "pdftoppm -r 150 -jpeg \"$1\" \"$2/p\"",
            job: json!({ "jobType": "pdfToImages", "fileIds": [file], "options": { "format": "jpg", "dpi": 150 } }),
        }));
    }

    for seconds in [10, 60] {
        let path = dir.join(format!("clip-{seconds}.mp4"));
        let duration = seconds.to_string();
        #[rustfmt::skip]
        let made = ffmpeg(&[
            "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=25,noise=alls=12:allf=t",
            "-f", "lavfi", "-i", "sine=frequency=330:sample_rate=48000",
            "-t", &duration, "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-c:a", "aac",
        ], "mp4");
        std::fs::write(&path, made).unwrap();
        let file = add_file(&app, &user, &path, "Video", "video/mp4").await;
        rows.push((path, Row {
            family: "video: proxy 720 of 1080p",
            input: format!("{seconds} s"),
            peer: "ffmpeg -v error -i \"$1\" -vf scale=-2:720 -c:v libx264 -preset veryfast -crf 23 -pix_fmt yuv420p -c:a aac -b:a 160k -movflags +faststart \"$2/a.mp4\"",
            job: json!({ "jobType": "proxy", "fileIds": [file], "options": { "height": 720 } }),
        }));
    }

    for sentences in [3, 12] {
        let path = dir.join(format!("spoken-{sentences}.wav"));
        let text = [
            "The old lighthouse stood at the edge of the cliff for more than a century.",
            "Every evening the keeper climbed the narrow stairs to light the lamp.",
            "Ships passing in the night relied on its steady beam to avoid the rocks.",
        ]
        .iter()
        .cycle()
        .take(sentences)
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
        std::fs::write(&path, drive_tests::media::speak(&text)).unwrap();
        let seconds = drive_tests::media::duration(&drive_tests::media::ffprobe_file(&path, &[]));
        let file = add_file(&app, &user, &path, "Audio", "audio/wav").await;
        rows.push((
            path,
            Row {
                family: "speech: readForSearch of a recording",
                input: format!("{seconds:.0} s of speech"),
                peer: "",
                job: json!({ "jobType": "readForSearch", "fileIds": [file] }),
            },
        ));
    }

    for lines in [12, 48] {
        let path = dir.join(format!("scan-{lines}.png"));
        let text: Vec<String> = (0..lines)
            .map(|l| format!("Invoice line {l}: forty two crates of apples delivered"))
            .collect();
        let text: Vec<&str> = text.iter().map(String::as_str).collect();
        std::fs::write(&path, scanned_page(&text)).unwrap();
        let file = add_file(&app, &user, &path, "Image", "image/png").await;
        rows.push((
            path,
            Row {
                family: "OCR: readForSearch of a scanned A4 page",
                input: format!("{lines} lines"),
                peer: "tesseract \"$1\" \"$2/page\" -l eng",
                job: json!({ "jobType": "readForSearch", "fileIds": [file] }),
            },
        ));
    }

    // The uploads' own readings end first: one job runs at a time, and the watcher would count
    // a reading as the job it waits behind.
    settled(&app, &user).await;
    let whisper_peer = format!("{whisper} \"$1\" \"$2/out.srt\"");
    println!(
        "\n| family | input | peer (the same work on a local copy) | peer's peak RSS | job process's peak RSS (cap {CAP_GIB} GiB of address space) |"
    );
    println!("| --- | --- | --- | --- | --- |");
    for (path, row) in &rows {
        let peer = if row.peer.is_empty() {
            whisper_peer.as_str()
        } else {
            row.peer
        };
        let theirs = peer_peak(peer, path, &dir.join("peer"));
        let ours = job_peak(&app, &user, &row.job).await;
        let label = peer.split_whitespace().next().unwrap_or_default();
        let label = if row.peer.is_empty() {
            "faster-whisper"
        } else {
            label
        };
        println!(
            "| {} | {} | {label} | {} | {} |",
            row.family,
            row.input,
            mib(theirs),
            mib(ours)
        );
    }
}
