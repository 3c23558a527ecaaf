//! Latency of the hot routes under concurrent load, on the real stack (`scripts/bench routes`).
//!
//! Seeds one account with 10,000 real files (each uploaded through a presigned form and
//! recorded with `/insert-file`, 64 at a time), then times each hot route on its own from 8
//! clients at once: `/generate-file-urls`, `/insert-file` (of objects already stored, so the
//! timing is the route's alone) and `/select-user-files` (10,000 records). The floor beside a
//! figure is what the route cannot avoid: for `/insert-file` the store HEAD it must make, for
//! `/select-user-files` the same SQL run straight against PostgreSQL.

use std::time::{Duration, Instant};

use drive_tests::bench::{small_file, store_small_file};
use drive_tests::{TestApp, TestUser};
use futures::{StreamExt, stream};

const FILES: usize = 10_000;
const SEED_CONCURRENCY: usize = 64;
const CLIENTS: usize = 8;
const CALLS: usize = 1000;
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

async fn insert(app: &TestApp, user: &TestUser, input: serde_json::Value) -> Duration {
    let (inserted, took) = timed(app.call(user, "/insert-file", Some(input))).await;
    assert_eq!(inserted.status, 200, "{}", inserted.body);
    took
}

/// Runs `calls` futures from `make`, `CLIENTS` at a time; answers their latencies and the wall time.
async fn load<F: Future<Output = Duration>>(
    calls: usize,
    make: impl FnMut(usize) -> F,
) -> (Vec<Duration>, Duration) {
    let start = Instant::now();
    let samples = stream::iter(0..calls)
        .map(make)
        .buffer_unordered(CLIENTS)
        .collect()
        .await;
    (samples, start.elapsed())
}

#[tokio::main]
async fn main() {
    let app = &TestApp::spawn().await;
    let user = &app.user(Some("Pro")).await;

    let start = Instant::now();
    stream::iter(0..FILES)
        .map(|n| async move { insert(app, user, store_small_file(app, user, n).await).await })
        .buffer_unordered(SEED_CONCURRENCY)
        .collect::<Vec<_>>()
        .await;
    let seed_wall = start.elapsed();

    let (generate, generate_wall) = load(CALLS, |n| async move {
        let (urls, took) =
            timed(app.call(user, "/generate-file-urls", Some(small_file(user, FILES + n)))).await;
        assert_eq!(urls.status, 200, "{}", urls.body);
        took
    })
    .await;

    let stored: Vec<serde_json::Value> = stream::iter(0..CALLS)
        .map(|n| store_small_file(app, user, 2 * FILES + n))
        .buffer_unordered(SEED_CONCURRENCY)
        .collect()
        .await;
    let (inserted, insert_wall) = {
        let mut inputs = stored.into_iter();
        load(CALLS, |_| insert(app, user, inputs.next().unwrap())).await
    };
    let total = FILES + CALLS;

    let (listed, list_wall) = load(LIST_CALLS, |_| async {
        let (reply, took) = timed(app.call(user, "/select-user-files", None)).await;
        assert_eq!(reply.body.as_array().map(Vec::len), Some(total));
        took
    })
    .await;

    // Floors, at the same concurrency on the same data.
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(CLIENTS as u32)
        .connect(&app.database_url)
        .await
        .unwrap();
    let (sql, sql_wall) = load(LIST_CALLS, |_| async {
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
        assert_eq!(rows.unwrap().len(), total);
        took
    })
    .await;

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
    let (heads, head_wall) = load(CALLS, |_| async {
        let (head, took) = timed(store.head_object().bucket(&app.private_bucket).key(&key).send()).await;
        head.unwrap();
        took
    })
    .await;

    let generate = stats(generate, generate_wall);
    let insert = stats(inserted, insert_wall);
    let list = stats(listed, list_wall);
    let sql = stats(sql, sql_wall);
    let head = stats(heads, head_wall);
    let ms = |d: Duration| format!("{:.2} ms", d.as_secs_f64() * 1000.0);
    println!(
        "| route | clients | calls | median | p99 | calls/s | floor | floor median | floor p99 | median ratio |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    println!(
        "| /generate-file-urls | {CLIENTS} | {CALLS} | {} | {} | {:.0} | (signing only: no floor) | | | |",
        ms(generate.median),
        ms(generate.p99),
        generate.per_second
    );
    println!(
        "| /insert-file | {CLIENTS} | {CALLS} | {} | {} | {:.0} | S3 HEAD | {} | {} | {:.2} |",
        ms(insert.median),
        ms(insert.p99),
        insert.per_second,
        ms(head.median),
        ms(head.p99),
        insert.median.as_secs_f64() / head.median.as_secs_f64()
    );
    println!(
        "| /select-user-files ({total} files) | {CLIENTS} | {LIST_CALLS} | {} | {} | {:.1} | same SQL via sqlx | {} | {} | {:.2} |",
        ms(list.median),
        ms(list.p99),
        list.per_second,
        ms(sql.median),
        ms(sql.p99),
        list.median.as_secs_f64() / sql.median.as_secs_f64()
    );
    println!(
        "\nseeding: {FILES} files signed, posted to the store and recorded, {SEED_CONCURRENCY} at a time, in {:.1} s ({:.0} files/s)",
        seed_wall.as_secs_f64(),
        FILES as f64 / seed_wall.as_secs_f64()
    );
}
