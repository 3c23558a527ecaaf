//! A TCP forwarder between the drive and a service it uses (the object store, Redis), so a
//! test can take the service away (an outage), make it slow to answer new connections, or see
//! every HTTP request the drive made to it, or break one request off part way, without touching
//! the one other tests share; and the balancer in front of several API processes when the suite
//! runs scaled out.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub struct TcpProxy {
    /// The service's URL with the proxy's address in place of its own.
    pub endpoint: String,
    up: Arc<AtomicBool>,
    /// Where connections go (`host:port`), each new one to the next in turn.
    targets: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
    connections: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
    requests: Arc<Mutex<Vec<(Instant, String)>>>,
    cut: Arc<Mutex<Cut>>,
    /// The proxy's own threads: it keeps forwarding while the test's runtime is blocked (a test
    /// waiting on a command it started, say).
    runtime: Option<tokio::runtime::Runtime>,
}

/// The one request to break off ([`TcpProxy::cut_first`]): which, and after how many bytes of
/// it; and whether it has been.
#[derive(Default)]
struct Cut {
    request: Option<fn(&str) -> bool>,
    after: u64,
    done: bool,
}

impl TcpProxy {
    /// Forwards a loopback port to the service at `target` (`scheme://host:port`).
    pub async fn start(target: &str) -> TcpProxy {
        TcpProxy::start_slow(target, Duration::ZERO).await
    }

    /// Like [`TcpProxy::start`], but each new connection waits `delay` before it reaches the
    /// service.
    pub async fn start_slow(target: &str, delay: Duration) -> TcpProxy {
        let (scheme, address) = target.split_once("://").expect("a URL with a scheme");
        let proxy = TcpProxy::listen(scheme, delay);
        proxy
            .targets
            .lock()
            .unwrap()
            .push(address.trim_end_matches('/').to_string());
        proxy
    }

    /// A balancer with nothing behind it yet ([`TcpProxy::balance_over`]): its address is known
    /// before what it balances starts, which must be told it.
    pub fn balancer(scheme: &str) -> TcpProxy {
        TcpProxy::listen(scheme, Duration::ZERO)
    }

    /// Sends each new connection to the next of `targets` (`scheme://host:port`), in turn.
    pub fn balance_over(&self, targets: &[&str]) {
        *self.targets.lock().unwrap() = targets
            .iter()
            .map(|t| {
                let (_, address) = t.split_once("://").expect("a URL with a scheme");
                address.trim_end_matches('/').to_string()
            })
            .collect();
    }

    fn listen(scheme: &str, delay: Duration) -> TcpProxy {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("the proxy's runtime");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind proxy");
        listener.set_nonblocking(true).expect("a non-blocking listener");
        let endpoint = format!("{scheme}://{}", listener.local_addr().unwrap());
        let up = Arc::new(AtomicBool::new(true));
        let flag = up.clone();
        let targets: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));
        let to = targets.clone();
        let connections = Arc::new(Mutex::new(Vec::new()));
        let open = connections.clone();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        let cut = Arc::new(Mutex::new(Cut::default()));
        let cuts = cut.clone();
        let task = runtime.spawn(async move {
            let listener = TcpListener::from_std(listener).expect("the proxy's listener");
            let mut turn = 0;
            while let Ok((inbound, _)) = listener.accept().await {
                let target = {
                    let targets = to.lock().unwrap();
                    turn += 1;
                    targets.get(turn % targets.len().max(1)).cloned()
                };
                // Down, or nothing behind it yet: the connection is dropped.
                let (true, Some(target)) = (flag.load(Ordering::SeqCst), target) else {
                    continue;
                };
                let (seen, cuts) = (seen.clone(), cuts.clone());
                let connection = tokio::spawn(async move {
                    tokio::time::sleep(delay).await;
                    if let Ok(outbound) = TcpStream::connect(&target).await {
                        forward(inbound, outbound, &seen, &cuts).await;
                    }
                });
                open.lock().unwrap().push(connection);
            }
        });
        TcpProxy {
            endpoint,
            up,
            targets,
            task,
            connections,
            requests,
            cut,
            runtime: Some(runtime),
        }
    }

    /// Cuts every open connection and drops every new one.
    pub fn take_down(&self) {
        self.up.store(false, Ordering::SeqCst);
        for connection in self.connections.lock().unwrap().drain(..) {
            connection.abort();
        }
    }

    /// Lets new connections through again after [`TcpProxy::take_down`].
    pub fn bring_up(&self) {
        self.up.store(true, Ordering::SeqCst);
    }

    /// Breaks off the first request whose line (`METHOD target`) `request` matches once `after`
    /// bytes have gone through from the read that carried its line (its line, headers and body,
    /// on a connection's first request): both sides of its connection are closed, as when a
    /// store ends a request early.
    pub fn cut_first(&self, request: fn(&str) -> bool, after: u64) {
        *self.cut.lock().unwrap() = Cut {
            request: Some(request),
            after,
            done: false,
        };
    }

    /// Whether the request of [`TcpProxy::cut_first`] came and was broken off.
    pub fn has_cut(&self) -> bool {
        self.cut.lock().unwrap().done
    }

    /// The HTTP requests that went through so far, as `METHOD target` (`GET /bucket/key?…`).
    pub fn requests(&self) -> Vec<String> {
        self.timed_requests().into_iter().map(|(_, r)| r).collect()
    }

    /// [`TcpProxy::requests`], each with when its request line came in.
    pub fn timed_requests(&self) -> Vec<(Instant, String)> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.task.abort();
        if let Some(runtime) = self.runtime.take() {
            // Dropping a runtime blocks, which the test's own runtime does not allow.
            runtime.shutdown_background();
        }
    }
}

/// Copies both ways until both sides are done, noting the request lines the client sends;
/// or until the request to [`Cut`] has sent its bytes, when both sides are dropped unfinished.
async fn forward(
    inbound: TcpStream,
    outbound: TcpStream,
    requests: &Mutex<Vec<(Instant, String)>>,
    cut: &Mutex<Cut>,
) {
    let (mut from_client, mut to_client) = inbound.into_split();
    let (mut from_service, mut to_service) = outbound.into_split();
    let cut_off = tokio::sync::Notify::new();
    let asked = async {
        let mut line = Vec::new();
        let mut buffer = vec![0; 64 * 1024];
        let (mut sent, mut cut_at) = (0u64, None);
        while let Ok(n @ 1..) = from_client.read(&mut buffer).await {
            for request in note_requests(&mut line, &buffer[..n], requests) {
                let mut planned = cut.lock().unwrap();
                if let Some(matches) = planned.request
                    && cut_at.is_none()
                    && matches(&request)
                {
                    planned.request = None;
                    cut_at = Some(sent + planned.after);
                }
            }
            let passing = cut_at.map_or(n, |at| (at - sent).min(n as u64) as usize);
            if to_service.write_all(&buffer[..passing]).await.is_err() {
                break;
            }
            sent += passing as u64;
            if cut_at.is_some_and(|at| sent >= at) {
                cut.lock().unwrap().done = true;
                cut_off.notify_one();
                return;
            }
        }
        let _ = to_service.shutdown().await;
    };
    let answered = async {
        tokio::select! {
            _ = tokio::io::copy(&mut from_service, &mut to_client) => {}
            _ = cut_off.notified() => return,
        }
        let _ = to_client.shutdown().await;
    };
    tokio::join!(asked, answered);
}

/// Notes every line of `bytes` shaped like an HTTP request line (`GET /a?b HTTP/1.1`), and
/// answers them; `line` carries a line a read cut in two over to the next read.
fn note_requests(line: &mut Vec<u8>, bytes: &[u8], requests: &Mutex<Vec<(Instant, String)>>) -> Vec<String> {
    let mut noted = Vec::new();
    for &byte in bytes {
        if byte != b'\n' {
            // Request lines are short; a body's long "lines" need not be kept whole.
            if line.len() < 16 * 1024 {
                line.push(byte);
            }
            continue;
        }
        let text = String::from_utf8_lossy(line);
        let words: Vec<&str> = text.trim_end().split(' ').collect();
        if let [method, target, version] = words[..]
            && !method.is_empty()
            && method.bytes().all(|b| b.is_ascii_uppercase())
            && target.starts_with('/')
            && version.starts_with("HTTP/")
        {
            let request = format!("{method} {target}");
            requests.lock().unwrap().push((Instant::now(), request.clone()));
            noted.push(request);
        }
        line.clear();
    }
    noted
}
