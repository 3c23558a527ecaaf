//! `scripts/bench generation`: what the drive adds to an image generation once the provider has
//! answered — storing the image, recording it, ending the generation with its event, and then
//! reading its metadata — against a plain S3 PUT of the same bytes to the same store.
//!
//! The provider is the OpenAI stand-in of the tests (`image_providers`), answering a 1024×1024
//! PNG of noise (about 3 MB, like a model's) in base64; it notes the moment each answer is handed
//! over. The drive's side is measured from that moment to the generation's `ended_at` (done) and
//! to the end of the image's `readMetadata` job, both read from the database (one clock: this
//! machine's). Rounds alternate the drive and the PUT; figures are min / median / max.

use std::io::Cursor;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use drive_tests::bench::min_median_max;
use drive_tests::image_providers::FakeProviders;
use drive_tests::raw_store;
use serde_json::json;
use sqlx::Row;

const ROUNDS: usize = 7;

fn noise_png(side: u32) -> Vec<u8> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let image = image::RgbImage::from_fn(side, side, |_, _| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        image::Rgb([state as u8, (state >> 8) as u8, (state >> 16) as u8])
    });
    let mut png = Vec::new();
    image
        .write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    png
}

#[tokio::main]
async fn main() {
    let png = noise_png(1024);
    let fake = FakeProviders::drawing(png.clone()).await;
    let mut app = fake.app(&[]).await;
    let user = app.user(Some("Pro")).await;
    let mut db = app.db().await;
    let store = raw_store().await;

    let (mut to_done, mut to_read, mut puts) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let started = app
            .call(
                &user,
                "/generate-image",
                Some(json!({ "prompt": format!("noise {round}") })),
            )
            .await;
        assert_eq!(started.status, 200, "{}", started.body);
        let id = started.body["id"].as_str().unwrap().to_string();
        let deadline = Instant::now() + Duration::from_secs(60);
        let (done_at, read_at) = loop {
            let row = sqlx::query(
                "select g.status, g.ended_at, j.ended_at as read_at
                 from image_generations g
                 left join files f on f.id = g.file_id
                 left join file_jobs j on j.job_type = 'readMetadata' and f.id = any(j.input_ids) and j.state = 'done'
                 where g.id = $1::uuid",
            )
            .bind(&id)
            .fetch_one(&mut db)
            .await
            .unwrap();
            let status: String = row.get("status");
            assert_ne!(status, "failed", "the generation failed");
            let read_at: Option<DateTime<Utc>> = row.get("read_at");
            if let (Some(done_at), Some(read_at)) = (row.get::<Option<DateTime<Utc>>, _>("ended_at"), read_at)
            {
                break (done_at, read_at);
            }
            assert!(Instant::now() < deadline, "generation {id} did not end");
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        let answered = *fake.answered().last().unwrap();
        to_done.push((done_at - answered).as_seconds_f64());
        to_read.push((read_at - answered).as_seconds_f64());

        let start = Instant::now();
        store
            .put_object()
            .bucket(&app.private_bucket)
            .key(format!("users/{}/peer/{round}.png", user.id))
            .content_type("image/png")
            .body(aws_sdk_s3::primitives::ByteStream::from(png.clone()))
            .send()
            .await
            .unwrap();
        puts.push(start.elapsed().as_secs_f64());
    }
    let (done_min, done_med, done_max) = min_median_max(to_done);
    let (read_min, read_med, read_max) = min_median_max(to_read);
    let (put_min, put_med, put_max) = min_median_max(puts);
    println!(
        "image: 1024x1024 PNG, {} bytes; {ROUNDS} rounds, alternating",
        png.len()
    );
    println!("| What | min | median | max | median vs PUT |");
    println!("| --- | --- | --- | --- | --- |");
    println!(
        "| Provider's answer → generation done (decode, store, record, event) | {:.3} s | {:.3} s | {:.3} s | {:.2}× |",
        done_min,
        done_med,
        done_max,
        done_med / put_med
    );
    println!(
        "| Provider's answer → metadata read (readMetadata job ended) | {:.3} s | {:.3} s | {:.3} s | {:.2}× |",
        read_min,
        read_med,
        read_max,
        read_med / put_med
    );
    println!(
        "| Plain S3 PUT of the same bytes (peer) | {put_min:.3} s | {put_med:.3} s | {put_max:.3} s | 1.00× |"
    );
    app.kill_worker(0);
}
