//! A TCP forwarder between the API and the object store, so a test can take storage away
//! (an outage) without stopping the store other tests share.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};

pub struct StoreProxy {
    pub endpoint: String,
    up: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
    connections: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

impl StoreProxy {
    /// Forwards a loopback port to the store at `target` (`http://host:port`).
    pub async fn start(target: &str) -> StoreProxy {
        let target = target.trim_start_matches("http://").to_string();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let up = Arc::new(AtomicBool::new(true));
        let flag = up.clone();
        let connections = Arc::new(Mutex::new(Vec::new()));
        let open = connections.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if !flag.load(Ordering::SeqCst) {
                    continue; // dropping the connection: the store is "down"
                }
                let target = target.clone();
                let connection = tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                open.lock().unwrap().push(connection);
            }
        });
        StoreProxy {
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
}

impl Drop for StoreProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}
