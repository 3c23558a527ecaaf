//! A TCP forwarder between the drive and a service it uses (the object store, Redis), so a
//! test can take the service away (an outage) or make it slow to answer new connections
//! without touching the one other tests share.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};

pub struct TcpProxy {
    /// The service's URL with the proxy's address in place of its own.
    pub endpoint: String,
    up: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
    connections: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
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
        let target = address.trim_end_matches('/').to_string();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let endpoint = format!("{scheme}://{}", listener.local_addr().unwrap());
        let up = Arc::new(AtomicBool::new(true));
        let flag = up.clone();
        let connections = Arc::new(Mutex::new(Vec::new()));
        let open = connections.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if !flag.load(Ordering::SeqCst) {
                    continue; // dropping the connection: the service is "down"
                }
                let target = target.clone();
                let connection = tokio::spawn(async move {
                    tokio::time::sleep(delay).await;
                    if let Ok(mut outbound) = TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                open.lock().unwrap().push(connection);
            }
        });
        TcpProxy {
            endpoint,
            up,
            task,
            connections,
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
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}
