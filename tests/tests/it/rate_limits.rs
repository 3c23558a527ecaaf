//! The per-address rate limits as a deployment meets them: behind a proxy the drive trusts
//! (`DRIVE_TRUSTED_PROXIES`), each client counted by the address the proxy forwarded and an
//! IPv6 client by its /64, a forwarded header from anyone else ignored; with Redis away, the
//! limits still held, in each API process. Loopback plays both the proxy (127.0.0.1, trusted)
//! and a caller who is not one (127.0.0.2).

use std::net::{IpAddr, Ipv4Addr};
use std::time::{Duration, Instant};

use drive_tests::proxy::TcpProxy;
use drive_tests::*;

/// Bad sign-ins a minute from one address in these tests.
const LIMIT: usize = 3;

/// Counts are per minute: a minute boundary between calls would reset them, so start well
/// clear of one.
async fn clear_of_a_minute_boundary() {
    let second = chrono::Utc::now().timestamp() % 60;
    if second > 40 {
        tokio::time::sleep(Duration::from_secs((61 - second) as u64)).await;
    }
}

/// A sign-in at `url` with `api_token`, sent by `http` with `header` (say `X-Forwarded-For`).
async fn sign_in(http: &reqwest::Client, url: &str, api_token: &str, header: Option<(&str, &str)>) -> Reply {
    let mut request = http.post(format!("{url}/exchange-token")).bearer_auth(api_token);
    if let Some((name, value)) = header {
        request = request.header(name, value);
    }
    Reply::read(request.send().await.expect("exchange-token")).await
}

/// `LIMIT` bad sign-ins, each with its own header, all answered 401; then a good one (`token`)
/// with `last`, which the limit refuses.
async fn exhaust(app: &TestApp, token: &str, headers: &[(&str, &str)], last: (&str, &str)) {
    assert_eq!(headers.len(), LIMIT);
    for &header in headers {
        let bad = sign_in(&app.http, &app.url, "drive_api_made_up", Some(header)).await;
        assert_eq!(bad.status, 401, "{header:?}: {}", bad.body);
    }
    let limited = sign_in(&app.http, &app.url, token, Some(last)).await;
    limited.assert_error(429, "rate_limited");
}

fn xff(address: &str) -> (&'static str, &str) {
    ("X-Forwarded-For", address)
}

#[tokio::test]
async fn behind_a_trusted_proxy_each_client_has_its_own_limit_and_no_one_else_names_one() {
    let mut app = TestApp::spawn_with(&[
        ("DRIVE_TRUSTED_PROXIES", "127.0.0.1, 10.0.0.0/8"),
        ("DRIVE_RATE_SIGN_IN_PER_MINUTE", "3"),
    ])
    .await;
    clear_of_a_minute_boundary().await;
    let user = app.user(Some("Pro")).await;
    let token = &user.api_token;

    // One client (behind a second trusted proxy, 10.0.0.7) guesses until it is refused…
    let guesser = "203.0.113.5, 10.0.0.7";
    exhaust(
        &app,
        token,
        &[xff(guesser), xff("203.0.113.5"), xff("203.0.113.5")],
        xff(guesser),
    )
    .await;
    // …and that is its count, not the proxy's: another client, and the proxy itself (the
    // harness signed in through it once already), still sign in.
    let other = sign_in(&app.http, &app.url, token, Some(xff("203.0.113.6"))).await;
    assert_eq!(other.status, 200, "{}", other.body);
    let forwarded = sign_in(
        &app.http,
        &app.url,
        token,
        Some(("Forwarded", "for=203.0.113.7;proto=https")),
    )
    .await;
    assert_eq!(forwarded.status, 200, "{}", forwarded.body);
    let proxy_itself = sign_in(&app.http, &app.url, token, None).await;
    assert_eq!(proxy_itself.status, 200, "{}", proxy_itself.body);
    // What the client wrote left of its own address is not believed.
    let spoofed = sign_in(&app.http, &app.url, token, Some(xff("203.0.113.8, 203.0.113.5"))).await;
    spoofed.assert_error(429, "rate_limited");

    // A caller that is not a trusted proxy (127.0.0.2, straight to an API process) names a new
    // address every time, and is counted as itself all the same.
    let direct = app.start_api().await;
    let untrusted = reqwest::Client::builder()
        .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)))
        .build()
        .unwrap();
    for n in 0..LIMIT {
        let made_up = format!("198.51.100.{n}");
        let bad = sign_in(&untrusted, &direct, "drive_api_made_up", Some(xff(&made_up))).await;
        assert_eq!(bad.status, 401, "{}", bad.body);
    }
    let spoofing = sign_in(&untrusted, &direct, token, Some(xff("198.51.100.200"))).await;
    spoofing.assert_error(429, "rate_limited");
    let forwarded = sign_in(
        &untrusted,
        &direct,
        token,
        Some(("Forwarded", "for=198.51.100.201")),
    )
    .await;
    forwarded.assert_error(429, "rate_limited");
    // The addresses it named were never counted.
    let named = sign_in(&app.http, &app.url, token, Some(xff("198.51.100.0"))).await;
    assert_eq!(named.status, 200, "{}", named.body);
}

#[tokio::test]
async fn ipv6_clients_are_counted_by_their_64() {
    let app = TestApp::spawn_with(&[
        ("DRIVE_TRUSTED_PROXIES", "127.0.0.1"),
        ("DRIVE_RATE_SIGN_IN_PER_MINUTE", "3"),
    ])
    .await;
    clear_of_a_minute_boundary().await;
    let user = app.user(Some("Pro")).await;
    let token = &user.api_token;

    // Three addresses of one /64, one of them in RFC 7239's spelling, then a fourth.
    let one_network = [
        xff("2001:db8:1:2::1"),
        ("Forwarded", r#"for="[2001:db8:1:2::2]:4711""#),
        xff("2001:db8:1:2:ffff:ffff:ffff:ffff"),
    ];
    exhaust(&app, token, &one_network, xff("2001:db8:1:2:abcd::99")).await;
    // The next /64 is someone else.
    let next = sign_in(&app.http, &app.url, token, Some(xff("2001:db8:1:3::1"))).await;
    assert_eq!(next.status, 200, "{}", next.body);
}

#[tokio::test]
async fn with_redis_away_the_limits_still_hold_in_each_process() {
    let redis = TcpProxy::start(&env("DRIVE_TEST_REDIS_URL")).await;
    let app = TestApp::spawn_with(&[
        ("DRIVE_REDIS_URL", &redis.endpoint),
        ("DRIVE_TRUSTED_PROXIES", "127.0.0.1"),
        ("DRIVE_RATE_SIGN_IN_PER_MINUTE", "3"),
    ])
    .await;
    clear_of_a_minute_boundary().await;
    let user = app.user(Some("Pro")).await;
    let token = &user.api_token;

    redis.take_down();
    // Each process behind the balancer keeps its own count: the limit holds in every one, so
    // one of them refuses by the time each could have had its fill.
    let processes = if scaled_out() { 2 } else { 1 };
    let mut answers = Vec::new();
    for _ in 0..LIMIT * processes + 1 {
        let started = Instant::now();
        let bad = sign_in(&app.http, &app.url, "drive_api_made_up", Some(xff("203.0.113.5"))).await;
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "a sign-in took {:?}",
            started.elapsed()
        );
        answers.push(bad.status.as_u16());
        if bad.status == 429 {
            bad.assert_error(429, "rate_limited");
            break;
        }
    }
    assert_eq!(answers[..LIMIT], [401; LIMIT], "{answers:?}");
    assert_eq!(
        answers.last(),
        Some(&429),
        "the limit let everything through: {answers:?}"
    );

    // The drive still answers everyone else: another client signs in and is served.
    let other = sign_in(&app.http, &app.url, token, Some(xff("203.0.113.6"))).await;
    assert_eq!(other.status, 200, "{}", other.body);
    let session = other.body["gelToken"].as_str().unwrap();
    let listing = app
        .send(Some(session), Some(APP_ID), "/select-user-files", None)
        .await;
    assert_eq!(listing.status, 200, "{}", listing.body);
    assert!(
        app.log().contains("rate limits are counted in this process"),
        "the switch is logged"
    );
}

#[tokio::test]
async fn a_trusted_proxy_that_is_not_an_address_refuses_the_start() {
    let app = TestApp::spawn().await;
    let log = app.refused_start(&[("DRIVE_TRUSTED_PROXIES", "127.0.0.1, proxy.internal")]);
    assert!(
        log.contains("DRIVE_TRUSTED_PROXIES") && log.contains(r#""proxy.internal" is not an IP address"#),
        "{log}"
    );
}
