//! A web server of the test's own on loopback, standing for the sites a link points at: each
//! path answers bytes, a redirect or a status, and every request it gets is kept, so a test
//! can say what was fetched, and that nothing was.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// What a path answers.
#[derive(Clone)]
pub enum Answer {
    Bytes(Arc<Vec<u8>>),
    /// These bytes with no `Content-Length`: their end is the connection's close.
    Unsized(Arc<Vec<u8>>),
    /// A 302 to this location.
    Redirect(String),
    Status(u16),
}

pub struct Origin {
    /// `http://127.0.0.1:{port}`.
    pub url: String,
    pub port: u16,
    requests: Arc<Mutex<Vec<String>>>,
    server: tokio::task::JoinHandle<()>,
}

impl Origin {
    /// A server answering `routes` (path and query, like `/a/b.bin`); other paths are 404.
    pub async fn start(routes: Vec<(&str, Answer)>) -> Origin {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
        let port = listener.local_addr().unwrap().port();
        let routes: Arc<Vec<(String, Answer)>> =
            Arc::new(routes.into_iter().map(|(p, a)| (p.to_string(), a)).collect());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let kept = requests.clone();
        let server = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (routes, kept) = (routes.clone(), kept.clone());
                tokio::spawn(async move {
                    let (read, mut write) = stream.into_split();
                    let mut read = BufReader::new(read);
                    let mut line = String::new();
                    if read.read_line(&mut line).await.is_err() {
                        return;
                    }
                    // The headers, up to the blank line; the requests are GETs with no body.
                    loop {
                        let mut header = String::new();
                        match read.read_line(&mut header).await {
                            Ok(0) | Err(_) => break,
                            Ok(_) if header.trim().is_empty() => break,
                            Ok(_) => {}
                        }
                    }
                    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
                    kept.lock().unwrap().push(path.clone());
                    let answer = routes.iter().find(|(p, _)| *p == path).map(|(_, a)| a.clone());
                    let head = |status: &str, extra: &str, length: usize| {
                        format!(
                            "HTTP/1.1 {status}\r\n{extra}Content-Length: {length}\r\nConnection: close\r\n\r\n"
                        )
                    };
                    let _ = match answer {
                        Some(Answer::Bytes(bytes)) => {
                            let head = head(
                                "200 OK",
                                "Content-Type: application/octet-stream\r\n",
                                bytes.len(),
                            );
                            match write.write_all(head.as_bytes()).await {
                                Ok(()) => write.write_all(&bytes).await,
                                Err(e) => Err(e),
                            }
                        }
                        Some(Answer::Unsized(bytes)) => {
                            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n";
                            match write.write_all(head.as_bytes()).await {
                                Ok(()) => write.write_all(&bytes).await,
                                Err(e) => Err(e),
                            }
                        }
                        Some(Answer::Redirect(to)) => {
                            write
                                .write_all(head("302 Found", &format!("Location: {to}\r\n"), 0).as_bytes())
                                .await
                        }
                        Some(Answer::Status(code)) => {
                            write
                                .write_all(head(&format!("{code} Status"), "", 0).as_bytes())
                                .await
                        }
                        None => write.write_all(head("404 Not Found", "", 0).as_bytes()).await,
                    };
                    let _ = write.shutdown().await;
                });
            }
        });
        Origin {
            url: format!("http://127.0.0.1:{port}"),
            port,
            requests,
            server,
        }
    }

    /// The paths it was asked for, in order.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for Origin {
    fn drop(&mut self) {
        self.server.abort();
    }
}
