//! The fetcher against servers of the test's own on loopback, reached through a resolver the
//! test controls: names it maps to private, link-local and metadata addresses are refused
//! before any connection, as are loopback links and redirects into loopback. Nothing here
//! sends a packet beyond 127.0.0.1: the private addresses are only ever answered by the
//! resolver and dropped by the filter.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use drive_fetch::{Allowances, FetchError, Fetcher, Resolver, read_capped};
use futures::future::BoxFuture;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Names to addresses, as the test says; any other name does not resolve.
struct Names(HashMap<&'static str, Vec<IpAddr>>);

impl Resolver for Names {
    fn lookup(&self, host: String) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
        let found = self.0.get(host.as_str()).cloned();
        Box::pin(async move {
            found.ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no such name"))
        })
    }
}

/// A loopback server answering every request with `response` and counting connections.
async fn server(response: impl Fn(u16) -> String + Send + Sync + 'static) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = connections.clone();
    let response = Arc::new(response);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            let response = response.clone();
            tokio::spawn(async move {
                let mut request = vec![0; 4096];
                let _ = stream.read(&mut request).await;
                let _ = stream.write_all(response(port).as_bytes()).await;
            });
        }
    });
    (port, connections)
}

fn ok(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn redirect(to: String) -> String {
    format!("HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
}

fn fetcher() -> Fetcher {
    let loopback: IpAddr = "127.0.0.1".parse().unwrap();
    let names = Names(HashMap::from([
        ("allowed.test", vec![loopback]),
        ("evil.test", vec![loopback]),
        ("private.test", vec!["10.0.0.7".parse().unwrap()]),
        ("metadata.test", vec!["169.254.169.254".parse().unwrap()]),
        ("ula.test", vec!["fd00:ec2::254".parse().unwrap()]),
    ]));
    let allowances = Allowances {
        hosts: vec!["allowed.test".to_string()],
        ..Default::default()
    };
    Fetcher::new(names, allowances, Duration::from_secs(10))
}

fn refused(result: Result<drive_fetch::Response, FetchError>) -> String {
    match result {
        Err(FetchError::Refused(why)) => why,
        Err(other) => panic!("failed instead of refused: {other}"),
        Ok(response) => panic!("fetched {}", response.url()),
    }
}

#[tokio::test]
async fn an_allowed_server_is_fetched_and_its_body_capped() {
    let (port, _) = server(|_| ok("hello")).await;
    let fetcher = fetcher();
    let response = fetcher
        .get(&format!("http://allowed.test:{port}/file"))
        .await
        .unwrap();
    assert_eq!(read_capped(response, 5).await.unwrap(), b"hello");
    let response = fetcher
        .get(&format!("http://allowed.test:{port}/file"))
        .await
        .unwrap();
    assert!(read_capped(response, 4).await.unwrap_err().is_refusal());
}

#[tokio::test]
async fn loopback_private_link_local_and_metadata_addresses_are_refused_before_connecting() {
    let (port, connections) = server(|_| ok("secret")).await;
    let fetcher = fetcher();
    for link in [
        format!("http://127.0.0.1:{port}/"),
        format!("http://[::1]:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        format!("http://evil.test:{port}/"),
        format!("http://private.test:{port}/"),
        format!("http://metadata.test:{port}/latest/meta-data/"),
        format!("http://ula.test:{port}/"),
        "http://169.254.169.254/latest/meta-data/".to_string(),
        "http://10.0.0.1/".to_string(),
    ] {
        let why = refused(fetcher.get(&link).await);
        assert!(why.contains("not on the public internet"), "{link}: {why}");
    }
    assert_eq!(
        connections.load(Ordering::SeqCst),
        0,
        "nothing reached the server"
    );
}

#[tokio::test]
async fn a_redirect_into_loopback_is_refused_and_not_followed() {
    let (target, reached) = server(|_| ok("secret")).await;
    let (by_address, _) = server(move |_| redirect(format!("http://127.0.0.1:{target}/secret"))).await;
    let (by_name, _) = server(move |_| redirect(format!("http://evil.test:{target}/secret"))).await;
    let (by_scheme, _) = server(|_| redirect("file:///etc/passwd".to_string())).await;
    let fetcher = fetcher();
    for port in [by_address, by_name, by_scheme] {
        refused(fetcher.get(&format!("http://allowed.test:{port}/")).await);
    }
    assert_eq!(
        reached.load(Ordering::SeqCst),
        0,
        "the redirects' target was never reached"
    );
}

#[tokio::test]
async fn only_http_links_with_a_host_are_taken() {
    let fetcher = fetcher();
    for link in [
        "file:///etc/passwd",
        "ftp://example.com/x",
        "gopher://x",
        "not a link",
        "http://",
    ] {
        refused(fetcher.get(link).await);
    }
}
