//! `/search-files` and `/select-drive-events` latency over a large library
//! (`scripts/bench search`).
//!
//! Seeds 1,000,000 files across 1,000 accounts straight into the database (one account holds
//! 100,000 of them), with metadata, tags, folders and one `file` event per file. Then, for the
//! big account, times each query shape through the API from 4 clients, against the floor: the
//! same query run by the same code (`drive_core::db::search::files`, `events::page`) directly
//! on the database, with no HTTP and no JSON. Then the search shapes under mixed load: eight
//! clients at once, each running the shapes in turn from a different one, so different shapes
//! always run together, at least 2,000 samples a shape, against the same mix at the floor.

use std::time::{Duration, Instant};

use chrono::{TimeDelta, Utc};
use drive_core::db::events::{self, Filter, Since};
use drive_core::db::search::{self, BoundingBox, Filters, Sort};
use drive_core::metadata::MusicalKey;
use drive_tests::{TestApp, TestUser};
use futures::{StreamExt, stream};
use serde_json::{Value, json};
use sqlx::PgPool;

const USERS: i64 = 1_000;
const FILES: i64 = 1_000_000;
const BIG: i64 = 100_000;
const CLIENTS: usize = 4;
const CALLS: usize = 200;
/// The mixed load: this many clients at once, and this many samples of each shape.
const MIXED_CLIENTS: usize = 8;
const MIXED_SAMPLES: usize = 2_000;

async fn seed(pool: &PgPool, big: &TestUser) {
    let run = |sql: &'static str| sqlx::query(sql);
    let steps = [
        run("insert into users (id, handle, plan)
             select gen_random_uuid(), 'bench-' || n, 'Pro' from generate_series(1, $1 - 1) as n")
        .bind(USERS as i32),
        // The big account's folders: /f0 … /f9, each with /sub.
        run("insert into folders (id, user_id, path)
             select gen_random_uuid(), $1, '/f' || n from generate_series(0, 9) as n
             union all
             select gen_random_uuid(), $1, '/f' || n || '/sub' from generate_series(0, 9) as n")
        .bind(big.id),
        run("insert into files (id, user_id, file_name, file_size, mime_type, kind, bucket, object_key, created_at,
                                title, artists, genre, duration_seconds, tempo_bpm, key_pitch, key_mode,
                                taken_time, latitude, longitude, folder_id)
             select gen_random_uuid(), owner, 'file-' || n || '.' || ext, (n::bigint * 7919) % 50000000,
                    'application/octet-stream', kind, case when n % 10 = 0 then 'public' else 'private' end,
                    'users/' || owner || '/bench/' || n, now() - make_interval(secs => n),
                    case when kind = 'Audio' then 'Song ' || (n % 5000) end,
                    case when kind = 'Audio' then array['Artist ' || (n % 300)] end,
                    case when kind = 'Audio' then (array['rock', 'jazz', 'pop', 'folk'])[1 + n % 4] end,
                    case when kind in ('Audio', 'Video') then (n % 600)::float8 end,
                    case when kind = 'Audio' then 60 + (n % 120)::float8 end,
                    case when kind = 'Audio' then (n % 12)::int2 end,
                    case when kind = 'Audio' then (array['major', 'minor'])[1 + n % 2] end,
                    case when kind = 'Image' then now() - make_interval(days => n % 3650) end,
                    case when kind = 'Image' then -80 + (n % 160)::float8 end,
                    case when kind = 'Image' then -179 + (n % 358)::float8 end,
                    case when owner = $2 and n % 3 = 0 then
                        (select id from folders where user_id = $2
                         and path = '/f' || (n % 10) || case when n % 2 = 0 then '/sub' else '' end)
                    end
             from (
                 select n,
                        case when n <= $3 then $2 else others.ids[1 + n % ($1 - 1)] end as owner,
                        (array['Audio', 'Video', 'Image', 'Pdf', 'Text'])[1 + n % 5] as kind,
                        (array['mp3', 'mp4', 'jpg', 'pdf', 'txt'])[1 + n % 5] as ext
                 from generate_series(1, $4) as n,
                      (select array_agg(id) as ids from users where handle like 'bench-%') as others
             ) s")
        .bind(USERS as i32)
        .bind(big.id)
        .bind(BIG as i32)
        .bind(FILES as i32),
        run("insert into tags (id, user_id, text) select gen_random_uuid(), $1, 'tag' || n from generate_series(0, 19) as n")
            .bind(big.id),
        run("insert into file_tags (file_id, tag_id)
             select f.id, t.id from files f join tags t on t.user_id = f.user_id
             where f.user_id = $1 and t.text = 'tag' || (abs(hashtext(f.id::text)) % 20)
             union all
             select f.id, t.id from files f join tags t on t.user_id = f.user_id
             where f.user_id = $1 and t.text = 'tag' || ((abs(hashtext(f.id::text)) + 7) % 20)")
        .bind(big.id),
        run("insert into drive_events (id, user_id, kind, subject_id, time, fields)
             select gen_random_uuid(), user_id, 'file', id, created_at,
                    jsonb_build_object('file', jsonb_build_object('id', id, 'fileName', file_name))
             from files"),
        // As autovacuum would leave a library that grew over time: statistics, visibility map
        // and hint bits set, dirty pages written. Otherwise the first queries timed pay for
        // the bulk load (setting hint bits writes the pages they read).
        run("vacuum (analyze)"),
        run("checkpoint"),
    ];
    for step in steps {
        step.execute(pool).await.expect("seeding");
    }
}

struct Stats {
    median: Duration,
    p99: Duration,
}

fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)];
    Stats {
        median: at(0.5),
        p99: at(0.99),
    }
}

async fn load<F: Future<Output = ()>>(make: impl FnMut(usize) -> F) -> Stats {
    let mut make = make;
    let samples = stream::iter(0..CALLS)
        .map(|n| {
            let call = make(n);
            async move {
                let start = Instant::now();
                call.await;
                start.elapsed()
            }
        })
        .buffer_unordered(CLIENTS)
        .collect()
        .await;
    stats(samples)
}

/// The mixed load over `shapes` query shapes: [`MIXED_CLIENTS`] clients, client `c`'s `k`th call
/// running shape `(c + k) % shapes`, until each shape has [`MIXED_SAMPLES`] samples; each shape's
/// figures, and the whole mix's.
async fn mixed<F: Future<Output = ()>>(shapes: usize, call: impl Fn(usize) -> F) -> (Vec<Stats>, Stats) {
    let per_client = (shapes * MIXED_SAMPLES).div_ceil(MIXED_CLIENTS);
    let call = &call;
    let clients = (0..MIXED_CLIENTS).map(|c| async move {
        let mut timed = Vec::with_capacity(per_client);
        for k in 0..per_client {
            let shape = (c + k) % shapes;
            let start = Instant::now();
            call(shape).await;
            timed.push((shape, start.elapsed()));
        }
        timed
    });
    let timed: Vec<(usize, Duration)> = futures::future::join_all(clients).await.concat();
    let per_shape = (0..shapes)
        .map(|shape| {
            let samples: Vec<Duration> = timed
                .iter()
                .filter(|(s, _)| *s == shape)
                .map(|(_, d)| *d)
                .collect();
            assert!(
                samples.len() >= MIXED_SAMPLES,
                "shape {shape}: {} samples",
                samples.len()
            );
            stats(samples)
        })
        .collect();
    (per_shape, stats(timed.into_iter().map(|(_, d)| d).collect()))
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

#[tokio::main]
async fn main() {
    let app = &TestApp::spawn().await;
    let user = &app.user(Some("Pro")).await;
    let pool = &sqlx::postgres::PgPoolOptions::new()
        .max_connections(MIXED_CLIENTS as u32)
        .connect(&app.database_url)
        .await
        .unwrap();
    let start = Instant::now();
    seed(pool, user).await;
    println!(
        "seeded {FILES} files, {USERS} accounts, {FILES} events in {:.0} s",
        start.elapsed().as_secs_f64()
    );

    let searches: Vec<(&str, Value, Filters, Sort)> = vec![
        (
            "newest 50, no filter",
            json!({}),
            Filters::default(),
            Sort::Newest,
        ),
        (
            "text: two words",
            json!({ "text": "song 42" }),
            Filters {
                words: vec!["song".into(), "42".into()],
                ..Filters::default()
            },
            Sort::Newest,
        ),
        (
            "types + duration, largest first",
            json!({ "types": ["Audio", "Video"], "minDuration": 100, "maxDuration": 200, "sort": "largest" }),
            Filters {
                kinds: Some(vec!["Audio".into(), "Video".into()]),
                min_duration: Some(100.0),
                max_duration: Some(200.0),
                ..Filters::default()
            },
            Sort::Largest,
        ),
        (
            "tags (all of two)",
            json!({ "tags": ["tag3", "tag10"] }),
            Filters {
                tags: vec!["tag3".into(), "tag10".into()],
                ..Filters::default()
            },
            Sort::Newest,
        ),
        (
            "tempo + key",
            json!({ "minTempo": 120, "maxTempo": 128, "key": "A minor" }),
            Filters {
                min_tempo: Some(120.0),
                max_tempo: Some(128.0),
                key: MusicalKey::parse("A minor"),
                ..Filters::default()
            },
            Sort::Newest,
        ),
        (
            "within a box across the antimeridian",
            json!({ "within": { "south": -20, "west": 170, "north": 20, "east": -170 } }),
            Filters {
                within: Some(BoundingBox {
                    south: -20.0,
                    west: 170.0,
                    north: 20.0,
                    east: -170.0,
                }),
                ..Filters::default()
            },
            Sort::Newest,
        ),
        (
            "folder subtree, name order",
            json!({ "folder": "/f3", "sort": "name" }),
            Filters {
                folder: Some("/f3".into()),
                ..Filters::default()
            },
            Sort::Name,
        ),
    ];

    println!(
        "\n| query (account with {BIG} files) | API median | API p99 | floor median | floor p99 | p99 ratio |"
    );
    println!("|---|---|---|---|---|---|");
    for (name, body, filters, sort) in &searches {
        let api = load(|_| async {
            let reply = app.call(user, "/search-files", Some(body.clone())).await;
            assert_eq!(reply.status, 200, "{}", reply.body);
        })
        .await;
        let floor = load(|_| async {
            search::files(pool, user.id, filters, *sort, 50, &search::Start::Offset(0))
                .await
                .unwrap();
        })
        .await;
        println!(
            "| /search-files {name} | {} | {} | {} | {} | {:.2} |",
            ms(api.median),
            ms(api.p99),
            ms(floor.median),
            ms(floor.p99),
            api.p99.as_secs_f64() / floor.p99.as_secs_f64()
        );
    }

    // The feed: the first page of the default window, then a page from a cursor mid-way.
    let first = app.call(user, "/select-drive-events", Some(json!({}))).await;
    let cursor = first.body["nextCursor"].as_str().unwrap().to_string();
    let feeds: Vec<(&str, Value, Since)> = vec![
        (
            "first page of the last 24 hours",
            json!({}),
            Since::Time(Utc::now() - TimeDelta::hours(24)),
        ),
        (
            "page after a cursor",
            json!({ "since": cursor }),
            Since::Cursor(events::Cursor::decode(&cursor).unwrap()),
        ),
    ];
    for (name, body, since) in &feeds {
        let api = load(|_| async {
            let reply = app.call(user, "/select-drive-events", Some(body.clone())).await;
            assert_eq!(reply.status, 200, "{}", reply.body);
        })
        .await;
        let floor = load(|_| async {
            events::page(pool, user.id, *since, &Filter::default(), 50)
                .await
                .unwrap();
        })
        .await;
        println!(
            "| /select-drive-events {name} | {} | {} | {} | {} | {:.2} |",
            ms(api.median),
            ms(api.p99),
            ms(floor.median),
            ms(floor.p99),
            api.p99.as_secs_f64() / floor.p99.as_secs_f64()
        );
    }

    // The same shapes under mixed load, through the API and at the floor.
    let searches = &searches;
    let started = Instant::now();
    let (api, api_all) = mixed(searches.len(), |shape| async move {
        let reply = app
            .call(user, "/search-files", Some(searches[shape].1.clone()))
            .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
    })
    .await;
    let api_seconds = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let (floor, floor_all) = mixed(searches.len(), |shape| async move {
        let (_, _, filters, sort) = &searches[shape];
        search::files(pool, user.id, filters, *sort, 50, &search::Start::Offset(0))
            .await
            .unwrap();
    })
    .await;
    let floor_seconds = started.elapsed().as_secs_f64();
    println!(
        "\n| mixed load: {MIXED_CLIENTS} clients, shapes in turn, {MIXED_SAMPLES} samples a shape | API median | API p99 | floor median | floor p99 | p99 ratio |"
    );
    println!("|---|---|---|---|---|---|");
    let rows = searches.iter().map(|(name, ..)| format!("/search-files {name}"));
    let rows = rows.chain([format!(
        "the whole mix ({:.0} searches/s through the API, {:.0}/s at the floor)",
        (searches.len() * MIXED_SAMPLES) as f64 / api_seconds,
        (searches.len() * MIXED_SAMPLES) as f64 / floor_seconds
    )]);
    for (name, (api, floor)) in rows.zip(api.iter().chain([&api_all]).zip(floor.iter().chain([&floor_all]))) {
        println!(
            "| {name} | {} | {} | {} | {} | {:.2} |",
            ms(api.median),
            ms(api.p99),
            ms(floor.median),
            ms(floor.p99),
            api.p99.as_secs_f64() / floor.p99.as_secs_f64()
        );
    }
}
