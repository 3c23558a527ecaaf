//! An https endpoint of the test's own on loopback, standing for a webhook receiver: it keeps
//! every POST it gets (headers, body, when, what it answered) and answers each with what the
//! test planned (a status, or a redirect), 200 once the plan runs out. Its certificate is
//! issued by a certificate authority made for it (`openssl`, in its own folder), which the
//! drive is told to trust (`DRIVE_FETCH_ROOT_CERT`, [`Receiver::trust`]).

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use sha2::Sha256;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// What the receiver answers one POST.
#[derive(Debug, Clone)]
pub enum Reply {
    Status(u16),
    /// A 302 to this location.
    Redirect(String),
}

/// One POST as the receiver got it.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    /// Header names in lower case.
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
    pub at: Instant,
    /// The status it answered.
    pub answered: u16,
}

impl Received {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }

    /// Whether `X-Drive-Signature` is the one `secret` makes, as a receiver checks it: the
    /// HMAC-SHA256 of `X-Drive-Timestamp`, a dot and the body.
    pub fn signed_by(&self, secret: &str) -> bool {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes()).expect("any key");
        let timestamp = self.headers.get("x-drive-timestamp").cloned().unwrap_or_default();
        mac.update(timestamp.as_bytes());
        mac.update(b".");
        mac.update(&self.body);
        let expected = format!("sha256={}", hex::encode(mac.finalize().into_bytes()));
        self.headers.get("x-drive-signature") == Some(&expected)
    }
}

pub struct Receiver {
    /// `https://127.0.0.1:{port}`.
    pub url: String,
    /// The certificate authority's certificate (PEM), for `DRIVE_FETCH_ROOT_CERT`.
    pub ca: PathBuf,
    _folder: tempfile::TempDir,
    plan: Arc<Mutex<VecDeque<Reply>>>,
    received: Arc<Mutex<Vec<Received>>>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl Receiver {
    pub async fn start() -> Receiver {
        let folder = tempfile::tempdir().expect("a folder for the certificates");
        let (ca, cert, key) = issue(folder.path());
        let certs = vec![CertificateDer::from_pem_file(&cert).expect("the certificate")];
        let key = PrivateKeyDer::from_pem_file(&key).expect("the key");
        let config =
            rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .expect("TLS versions")
                .with_no_client_auth()
                .with_single_cert(certs, key)
                .expect("a server configuration");
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
        let port = listener.local_addr().unwrap().port();
        let plan: Arc<Mutex<VecDeque<Reply>>> = Arc::default();
        let received: Arc<Mutex<Vec<Received>>> = Arc::default();
        let (next, kept) = (plan.clone(), received.clone());
        let server = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (acceptor, next, kept) = (acceptor.clone(), next.clone(), kept.clone());
                tokio::spawn(async move {
                    let Ok(stream) = acceptor.accept(stream).await else {
                        return;
                    };
                    let (read, mut write) = tokio::io::split(stream);
                    let mut read = BufReader::new(read);
                    let Some((path, headers, body)) = read_request(&mut read).await else {
                        return;
                    };
                    let reply = next.lock().unwrap().pop_front().unwrap_or(Reply::Status(200));
                    let (answered, head) = match &reply {
                        Reply::Status(status) => (*status, format!("HTTP/1.1 {status} Planned\r\n")),
                        Reply::Redirect(to) => (302, format!("HTTP/1.1 302 Found\r\nLocation: {to}\r\n")),
                    };
                    kept.lock().unwrap().push(Received {
                        path,
                        headers,
                        body,
                        at: Instant::now(),
                        answered,
                    });
                    let answer = format!("{head}Content-Length: 0\r\nConnection: close\r\n\r\n");
                    let _ = write.write_all(answer.as_bytes()).await;
                    let _ = write.shutdown().await;
                });
            }
        });
        Receiver {
            url: format!("https://127.0.0.1:{port}"),
            ca,
            _folder: folder,
            plan,
            received,
            server,
        }
    }

    /// The environment that lets the drive deliver here: loopback allowed, the CA trusted.
    pub fn trust(&self) -> [(&'static str, &str); 2] {
        [
            ("DRIVE_FETCH_ALLOW_HOSTS", "127.0.0.1"),
            (
                "DRIVE_FETCH_ROOT_CERT",
                self.ca.to_str().expect("a UTF-8 temporary path"),
            ),
        ]
    }

    /// The next POSTs are answered with `replies`, in order.
    pub fn plan(&self, replies: Vec<Reply>) {
        self.plan.lock().unwrap().extend(replies);
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// Waits until `n` POSTs have come (panics after `within`); answers them all.
    pub async fn wait_for(&self, n: usize, within: Duration) -> Vec<Received> {
        let until = Instant::now() + within;
        loop {
            let received = self.received();
            if received.len() >= n {
                return received;
            }
            assert!(
                Instant::now() < until,
                "{} of {n} POSTs came within {within:?}: {:?}",
                received.len(),
                received
                    .iter()
                    .map(|r| String::from_utf8_lossy(&r.body).into_owned())
                    .collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// A request's path, headers and body (by its Content-Length).
async fn read_request<R: tokio::io::AsyncRead + Unpin>(
    read: &mut BufReader<R>,
) -> Option<(String, HashMap<String, String>, Vec<u8>)> {
    let mut line = String::new();
    read.read_line(&mut line).await.ok()?;
    let path = line.split_whitespace().nth(1)?.to_string();
    let mut headers = HashMap::new();
    loop {
        let mut header = String::new();
        if read.read_line(&mut header).await.ok()? == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_string());
        }
    }
    let length: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    read.read_exact(&mut body).await.ok()?;
    Some((path, headers, body))
}

/// A certificate authority and a certificate it issues for 127.0.0.1, in `folder`: answers
/// the authority's certificate, the server's certificate and its key.
fn issue(folder: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let at = |name: &str| folder.join(name);
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(folder)
            .output()
            .expect("openssl runs");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
    openssl(
        &[
            &["req", "-x509"],
            &ec[..],
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "2",
                "-subj",
                "/CN=Drive test CA",
            ],
        ]
        .concat(),
    );
    openssl(
        &[
            &["req"],
            &ec[..],
            &[
                "-keyout",
                "server.key",
                "-out",
                "server.csr",
                "-subj",
                "/CN=127.0.0.1",
            ],
        ]
        .concat(),
    );
    std::fs::write(
        at("server.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .expect("the extensions file");
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "server.ext",
    ]);
    (at("ca.pem"), at("server.pem"), at("server.key"))
}
