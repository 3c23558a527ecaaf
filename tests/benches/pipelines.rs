//! A four-step chain (cut → 720p proxy → stills every 5 s → zip of the stills) on a stored
//! 1080p talk, three ways (`scripts/bench pipelines`):
//!
//! - **one pipeline**: one `/create-file-job` with `steps`, then the client long-polls
//!   `/select-file-jobs` (`wait`) until it ends; the intermediates never become files and are
//!   removed by the drive;
//! - **four jobs**: the same four jobs submitted one after another by a client that long-polls
//!   each to its end, feeds its results to the next, and then deletes the in-between files
//!   (`/delete-files`), as a client without pipelines must;
//! - **ffmpeg**: the same chain of commands on the stored bytes: the object fetched through its
//!   download link, `ffmpeg` three times and `zip`, the zip PUT back through a presigned link.
//!
//! Each figure is the median (min–max) of five rounds, the three ways taking turns in a rotated
//! order; requests are the HTTP calls the client made.

use std::path::{Path, PathBuf};
use std::time::Instant;

use drive_tests::bench::{add_file, link, put_link, spread, timed, timed_script};
use drive_tests::{TestApp, TestUser, env};
use serde_json::{Value, json};

const CUT: (u32, u32) = (1, 17);

fn steps() -> Value {
    json!([
        { "name": "cut", "jobType": "cut", "options": { "start": CUT.0, "end": CUT.1 } },
        { "name": "proxy", "jobType": "proxy", "options": { "height": 720 } },
        { "name": "stills", "jobType": "stills", "options": { "every": 5 } },
        { "name": "zip", "jobType": "zip", "options": { "name": "talk stills" } },
    ])
}

/// Long-polls job `id` to its end; answers it and the calls made.
async fn wait_end(app: &TestApp, user: &TestUser, id: &Value) -> (Value, usize) {
    let mut calls = 0;
    loop {
        let reply = app
            .call(
                user,
                "/select-file-jobs",
                Some(json!({ "ids": [id], "wait": 10 })),
            )
            .await;
        calls += 1;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let job = reply.body["jobs"][0].clone();
        if job["state"] != "queued" && job["state"] != "running" {
            assert_eq!(job["state"], "done", "{job}");
            return (job, calls);
        }
    }
}

fn file_ids(job: &Value) -> Vec<Value> {
    job["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].clone())
        .collect()
}

/// One pipeline: answers (wall seconds, calls, the job's own run seconds).
async fn as_pipeline(app: &TestApp, user: &TestUser, clip: &Value) -> (f64, usize, f64) {
    let start = Instant::now();
    let created = app
        .call(
            user,
            "/create-file-job",
            Some(json!({ "fileIds": [clip], "steps": steps() })),
        )
        .await;
    assert_eq!(created.status, 200, "{}", created.body);
    let (job, polls) = wait_end(app, user, &created.body["job"]["id"]).await;
    let wall = start.elapsed().as_secs_f64();
    assert_eq!(file_ids(&job).len(), 1, "{job}");
    let time = |f: &str| chrono::DateTime::parse_from_rfc3339(job[f].as_str().unwrap()).unwrap();
    let own = (time("endTime") - time("startTime")).num_milliseconds() as f64 / 1000.0;
    (wall, 1 + polls, own)
}

/// Four jobs chained by the client, then the in-between files deleted: (wall seconds, calls).
async fn as_four_jobs(app: &TestApp, user: &TestUser, clip: &Value) -> (f64, usize) {
    let start = Instant::now();
    let mut calls = 0;
    let mut inputs = vec![clip.clone()];
    let mut between = Vec::new();
    let chain = steps();
    for (n, step) in chain.as_array().unwrap().iter().enumerate() {
        let created = app
            .call(
                user,
                "/create-file-job",
                Some(json!({ "fileIds": inputs, "jobType": step["jobType"], "options": step["options"] })),
            )
            .await;
        calls += 1;
        assert_eq!(created.status, 200, "{}", created.body);
        let (job, polls) = wait_end(app, user, &created.body["job"]["id"]).await;
        calls += polls;
        inputs = file_ids(&job);
        if n + 1 < chain.as_array().unwrap().len() {
            between.extend(inputs.iter().cloned());
        }
    }
    let deleted = app
        .call(
            user,
            "/delete-files",
            Some(json!(
                between.iter().map(|id| json!({ "id": id })).collect::<Vec<_>>()
            )),
        )
        .await;
    calls += 1;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    (start.elapsed().as_secs_f64(), calls)
}

/// The chain as commands on the stored bytes: GET, three `ffmpeg`s, `zip`, PUT.
const PEER: &str = r#"get=$1; put=$2; dir=$3; rm -rf "$dir"; mkdir -p "$dir"; cd "$dir"
curl -sf -o in.mp4 "$get"
ffmpeg -v error -y -ss 1 -to 17 -i in.mp4 -c copy cut.mp4
ffmpeg -v error -y -threads 0 -i cut.mp4 -vf "scale=-2:'min(720,trunc(ih/2)*2)'" \
  -c:v libx264 -preset veryfast -crf 23 -pix_fmt yuv420p -c:a aac -b:a 160k -ar 48000 -ac 2 \
  -movflags +faststart proxy.mp4
ffmpeg -v error -y -i proxy.mp4 -vf "select='isnan(prev_selected_t)+gte(t-prev_selected_t\,5)'" \
  -fps_mode vfr -q:v 2 still-%02d.jpg
zip -q "talk stills.zip" still-*.jpg
curl -sf -T "talk stills.zip" "$put""#;

/// 20 s of 1080p25 H.264 with a little noise, so the encoder has work, and AAC sound.
fn talk(path: &Path) {
    #[rustfmt::skip]
    let args = [
        "-v", "error", "-y",
        "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=25,noise=alls=12:allf=t",
        "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
        "-t", "20",
        "-c:v", "libx264", "-preset", "fast", "-crf", "20", "-pix_fmt", "yuv420p", "-c:a", "aac",
        path.to_str().unwrap(),
    ];
    timed("ffmpeg", &args);
}

/// Rounds of the three ways (0: pipeline, 1: four jobs, 2: ffmpeg), rotated so that none
/// always runs first or right after another.
const ORDERS: [[usize; 3]; 5] = [[0, 1, 2], [2, 0, 1], [1, 2, 0], [0, 2, 1], [2, 1, 0]];

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let dir = PathBuf::from(env("DRIVE_BENCH_DIR"));
    let mut app = TestApp::spawn_with(&[("DRIVE_JOB_MINUTES_PRO", "100000")]).await;
    app.start_worker(&[("DRIVE_WORKER_CONCURRENCY", "1")]).await;
    let user = app.user(Some("Pro")).await;
    let path = dir.join("talk.mp4");
    talk(&path);
    let clip = add_file(&app, &user, &path, "Video", "video/mp4").await;
    let clip_json = json!(clip);
    let get = link(&app, &user, clip).await;
    let put = put_link(&app, "bench/talk stills.zip").await;
    let work = dir.join("peer");

    let (mut pipeline, mut four, mut peer) = (Vec::new(), Vec::new(), Vec::new());
    let (mut pipeline_calls, mut four_calls, mut own) = (Vec::new(), Vec::new(), Vec::new());
    for order in ORDERS {
        for way in order {
            match way {
                0 => {
                    let (wall, calls, run) = as_pipeline(&app, &user, &clip_json).await;
                    pipeline.push(wall);
                    pipeline_calls.push(calls);
                    own.push(run);
                }
                1 => {
                    let (wall, calls) = as_four_jobs(&app, &user, &clip_json).await;
                    four.push(wall);
                    four_calls.push(calls);
                }
                _ => peer.push(timed_script(PEER, &[&get, &put, work.to_str().unwrap()])),
            }
        }
    }
    let median = |v: &[f64]| drive_tests::bench::middle(v.to_vec());
    let calls = |v: &[usize]| {
        let (min, max) = (v.iter().min().unwrap(), v.iter().max().unwrap());
        format!("{min}–{max}")
    };
    println!("| way | wall, median (min–max) | requests | ÷ ffmpeg chain |");
    println!("|---|---|---|---|");
    println!(
        "| one pipeline (job run {}) | {} | {} | {:.2} |",
        spread(&own),
        spread(&pipeline),
        calls(&pipeline_calls),
        median(&pipeline) / median(&peer)
    );
    println!(
        "| four jobs, polled and chained by the client | {} | {} | {:.2} |",
        spread(&four),
        calls(&four_calls),
        median(&four) / median(&peer)
    );
    println!(
        "| ffmpeg ×3 + zip on the stored bytes (GET, PUT) | {} | – | 1.00 |",
        spread(&peer)
    );
    println!("pipeline ÷ four jobs: {:.2}", median(&pipeline) / median(&four));
}
