//! `scripts/bench apis`: the hot routes' throughput with one API process and with two behind a
//! round-robin balancer, on the same database, queue and store, from 16 clients at once.
//! Both sides go through the same balancer code (with one target or two), so the hop is the
//! same. Routes: `/generate-file-urls` (signing: the API's own CPU), `/select-user-files` of one
//! account's 1,000 files (the API serializes what PostgreSQL reads) and `/search-files` by
//! text. Three rounds, the order of the two sides alternating; each figure is the median round
//! (calls a second), with the spread.

use std::time::{Duration, Instant};

use drive_tests::bench::{small_file, store_small_file};
use drive_tests::proxy::TcpProxy;
use drive_tests::{APP_ID, TestApp, TestUser};
use futures::{StreamExt, stream};
use serde_json::{Value, json};

const FILES: usize = 1_000;
const CLIENTS: usize = 16;
const ROUNDS: usize = 3;

async fn seed(app: &TestApp, user: &TestUser) {
    stream::iter(0..FILES)
        .map(|n| async move {
            let input = store_small_file(app, user, n).await;
            let inserted = app.call(user, "/insert-file", Some(input)).await;
            assert_eq!(inserted.status, 200, "{}", inserted.body);
        })
        .buffer_unordered(64)
        .collect::<Vec<_>>()
        .await;
}

/// `calls` POSTs of `route` through `base`, `CLIENTS` at a time, each client on connections of
/// its own (so the balancer spreads them); answers calls a second.
async fn throughput(
    base: &str,
    user: &TestUser,
    route: &str,
    calls: usize,
    body: impl Fn(usize) -> Value,
) -> f64 {
    let clients: Vec<reqwest::Client> = (0..CLIENTS).map(|_| reqwest::Client::new()).collect();
    let start = Instant::now();
    stream::iter(0..calls)
        .map(|n| {
            let request = clients[n % CLIENTS]
                .post(format!("{base}{route}"))
                .bearer_auth(&user.session)
                .header("X-Drive-App", APP_ID)
                .json(&body(n));
            async move {
                let reply = request.send().await.expect("the call");
                assert_eq!(reply.status(), 200, "{route}");
                reply.bytes().await.expect("the answer");
            }
        })
        .buffer_unordered(CLIENTS)
        .collect::<Vec<_>>()
        .await;
    calls as f64 / start.elapsed().as_secs_f64()
}

fn median(mut figures: Vec<f64>) -> (f64, f64, f64) {
    figures.sort_by(f64::total_cmp);
    (figures[figures.len() / 2], figures[0], figures[figures.len() - 1])
}

#[tokio::main]
async fn main() {
    let mut app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    seed(&app, &user).await;
    let first = app.url.clone();
    let second = app.start_api().await;
    let one = TcpProxy::balancer("http");
    one.balance_over(&[&first]);
    let two = TcpProxy::balancer("http");
    two.balance_over(&[&first, &second]);

    type Body = fn(&TestUser, usize) -> Value;
    let routes: [(&str, usize, Body); 3] = [
        ("/generate-file-urls", 2_000, |user, n| {
            small_file(user, FILES + n)
        }),
        ("/select-user-files", 300, |_, _| Value::Null),
        (
            "/search-files",
            1_000,
            |_, _| json!({ "text": "seed", "limit": 50 }),
        ),
    ];
    println!("| route | calls a round | 1 API: calls/s (min–max) | 2 APIs: calls/s (min–max) | 2 ÷ 1 |");
    println!("|---|---|---|---|---|");
    for (route, calls, body) in routes {
        let (mut alone, mut pair) = (Vec::new(), Vec::new());
        for round in 0..ROUNDS {
            let order: [(&TcpProxy, bool); 2] = if round % 2 == 0 {
                [(&one, false), (&two, true)]
            } else {
                [(&two, true), (&one, false)]
            };
            for (front, is_pair) in order {
                let figure = throughput(&front.endpoint, &user, route, calls, |n| body(&user, n)).await;
                if is_pair {
                    pair.push(figure)
                } else {
                    alone.push(figure)
                }
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        let (a, a_min, a_max) = median(alone);
        let (p, p_min, p_max) = median(pair);
        println!(
            "| {route} | {calls} | {a:.0} ({a_min:.0}–{a_max:.0}) | {p:.0} ({p_min:.0}–{p_max:.0}) | {:.2} |",
            p / a
        );
    }
    println!(
        "\n{CLIENTS} clients; one account of {FILES} files; median of {ROUNDS} rounds, sides alternating."
    );
}
