//! Latency of the hot routes under concurrent load, on the real stack (`scripts/bench routes`).
//!
//! Seeds one account with 10,000 real files (each uploaded through a presigned form and
//! recorded with `/insert-file`, 64 at a time, timing both routes as it goes), then calls
//! `/select-user-files` from 8 clients at once. The floor beside each figure is what the route
//! cannot avoid: for `/select-user-files` the same SQL run straight against PostgreSQL, for
//! `/insert-file` the object-store HEAD it must make.

use std::time::{Duration, Instant};

use drive_tests::{TestApp, TestUser, post_form};
use futures::{StreamExt, stream};
use serde_json::json;

const FILES: usize = 10_000;
const SEED_CONCURRENCY: usize = 64;
const LIST_CLIENTS: usize = 8;
const LIST_CALLS: usize = 200;

struct Stats {
    median: Duration,
    p99: Duration,
    per_second: f64,
}

fn stats(mut samples: Vec<Duration>, wall: Duration) -> Stats {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)];
    Stats {
        median: at(0.5),
        p99: at(0.99),
        per_second: samples.len() as f64 / wall.as_secs_f64(),
    }
}

async fn timed<T>(f: impl Future<Output = T>) -> (T, Duration) {
    let start = Instant::now();
    let out = f.await;
    (out, start.elapsed())
}

/// Uploads one small file, answering the latency of `/generate-file-urls` and `/insert-file`.
async fn seed_one(app: &TestApp, user: &TestUser, n: usize) -> (Duration, Duration) {
    let name = format!("seed-{n:05}.txt");
    let input = json!({
        "type": "Text", "fileName": name, "fileSize": 16, "objectKey": user.key(&name), "mimeType": "text/plain",
    });
    let (urls, generate) = timed(app.call(user, "/generate-file-urls", Some(input.clone()))).await;
    assert_eq!(urls.status, 200, "{}", urls.body);
    assert!(
        post_form(&urls.body, vec![b'x'; 16], "text/plain")
            .await
            .is_success()
    );
    let mut insert = input;
    insert["creator"] = json!({ "id": user.id });
    let (inserted, insert_time) = timed(app.call(user, "/insert-file", Some(insert))).await;
    assert_eq!(inserted.status, 200, "{}", inserted.body);
    (generate, insert_time)
}

#[tokio::main]
async fn main() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;

    let start = Instant::now();
    let seeded: Vec<(Duration, Duration)> = stream::iter(0..FILES)
        .map(|n| seed_one(&app, &user, n))
        .buffer_unordered(SEED_CONCURRENCY)
        .collect()
        .await;
    let seed_wall = start.elapsed();

    let start = Instant::now();
    let listed: Vec<Duration> = stream::iter(0..LIST_CALLS)
        .map(|_| async {
            let (reply, took) = timed(app.call(&user, "/select-user-files", None)).await;
            assert_eq!(reply.body.as_array().map(Vec::len), Some(FILES));
            took
        })
        .buffer_unordered(LIST_CLIENTS)
        .collect()
        .await;
    let list_wall = start.elapsed();

    // Floors, measured at the same concurrency on the same data.
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(LIST_CLIENTS as u32)
        .connect(&app.database_url)
        .await
        .unwrap();
    let start = Instant::now();
    let sql: Vec<Duration> = stream::iter(0..LIST_CALLS)
        .map(|_| async {
            let (rows, took) = timed(
                sqlx::query(
                    "select id, user_id, file_name, file_size, mime_type, kind, bucket, object_key,
                            modified_time, trashed_at, created_at
                     from files where user_id = $1 and trashed_at is null and derivative_of is null
                     order by created_at desc, id desc",
                )
                .bind(user.id)
                .fetch_all(&pool),
            )
            .await;
            assert_eq!(rows.unwrap().len(), FILES);
            took
        })
        .buffer_unordered(LIST_CLIENTS)
        .collect()
        .await;
    let sql_wall = start.elapsed();

    let store = drive_tests::raw_store().await;
    let key = user.key("head.txt");
    store
        .put_object()
        .bucket(&app.private_bucket)
        .key(&key)
        .body(vec![b'x'; 16].into())
        .send()
        .await
        .unwrap();
    let start = Instant::now();
    let heads: Vec<Duration> = stream::iter(0..FILES / 10)
        .map(|_| async {
            let (head, took) = timed(store.head_object().bucket(&app.private_bucket).key(&key).send()).await;
            head.unwrap();
            took
        })
        .buffer_unordered(SEED_CONCURRENCY)
        .collect()
        .await;
    let head_wall = start.elapsed();

    let generate = stats(seeded.iter().map(|s| s.0).collect(), seed_wall);
    let insert = stats(seeded.iter().map(|s| s.1).collect(), seed_wall);
    let list = stats(listed, list_wall);
    let sql = stats(sql, sql_wall);
    let head = stats(heads, head_wall);
    let ms = |d: Duration| format!("{:.2} ms", d.as_secs_f64() * 1000.0);
    println!(
        "| route | concurrency | calls | median | p99 | floor | floor median | floor p99 | median ratio |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    println!(
        "| /generate-file-urls | {SEED_CONCURRENCY} | {FILES} | {} | {} | (signing only: no floor) | | | |",
        ms(generate.median),
        ms(generate.p99)
    );
    println!(
        "| /insert-file | {SEED_CONCURRENCY} | {FILES} | {} | {} | S3 HEAD | {} | {} | {:.2} |",
        ms(insert.median),
        ms(insert.p99),
        ms(head.median),
        ms(head.p99),
        insert.median.as_secs_f64() / head.median.as_secs_f64()
    );
    println!(
        "| /select-user-files ({FILES} files) | {LIST_CLIENTS} | {LIST_CALLS} | {} | {} | same SQL via sqlx | {} | {} | {:.2} |",
        ms(list.median),
        ms(list.p99),
        ms(sql.median),
        ms(sql.p99),
        list.median.as_secs_f64() / sql.median.as_secs_f64()
    );
    println!(
        "\nseeding: {FILES} form uploads + inserts in {:.1} s ({:.0} files/s); listing: {:.1} calls/s (SQL alone {:.1}/s)",
        seed_wall.as_secs_f64(),
        generate.per_second,
        list.per_second,
        sql.per_second
    );
}
