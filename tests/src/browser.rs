//! A real browser for the page tests: Debian's headless Chromium driven through ChromeDriver
//! (WebDriver, with `fantoccini`), or Firefox through geckodriver ([`Browser::firefox`]). The
//! driver runs on a free loopback port with a profile folder of its own and is killed by its PID
//! when the [`Browser`] is dropped (the browser dies with it). The browser is kept off the
//! network beyond what a page asks for: no background traffic, no updates, no sync.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::json;

pub struct Browser {
    pub client: Client,
    _driver: Driver,
    _profile: tempfile::TempDir,
}

/// The driver's process, in a group of its own with the browser it starts: stopped when
/// dropped, even when the browser never came up.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let group = format!("-{}", self.0.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A free loopback port for a WebDriver server.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().unwrap().port()
}

/// A WebDriver session with `capabilities` on the server at `port`, once it answers (20 s at
/// most); `what` names the browser for the message.
async fn connect(port: u16, capabilities: serde_json::Map<String, serde_json::Value>, what: &str) -> Client {
    let url = format!("http://127.0.0.1:{port}");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let connected = ClientBuilder::new(HttpConnector::new())
            .capabilities(capabilities.clone())
            .connect(&url)
            .await;
        match connected {
            Ok(client) => return client,
            Err(_) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("{what} did not start: {e}"),
        }
    }
}

impl Browser {
    pub async fn start() -> Browser {
        let port = free_port();
        let driver = Driver(
            Command::new("chromedriver")
                // A group of its own, so that dropping the browser stops Chromium's processes too.
                .process_group(0)
                .arg(format!("--port={port}"))
                .arg("--allowed-ips=127.0.0.1")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("chromedriver (scripts/test installs Debian's chromium-driver)"),
        );
        let profile = tempfile::tempdir().unwrap();
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".to_string(),
            json!({
                "binary": "/usr/bin/chromium",
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--disable-quic", "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--disable-extensions",
                    "--window-size=900,1100", "--autoplay-policy=no-user-gesture-required",
                    format!("--user-data-dir={}", profile.path().display()),
                ],
            }),
        );
        let client = connect(port, capabilities, "Chromium, through chromedriver").await;
        Browser {
            client,
            _driver: driver,
            _profile: profile,
        }
    }

    /// Firefox (Debian's ESR, headless) through geckodriver (`DRIVE_GECKODRIVER`, which
    /// `ensure_firefox` builds), in a profile of its own kept off the network beyond what a page
    /// asks for: no updates, telemetry, safe-browsing lists or captive-portal checks.
    pub async fn firefox() -> Browser {
        let port = free_port();
        let driver = Driver(
            Command::new(crate::env("DRIVE_GECKODRIVER"))
                .process_group(0)
                .args(["--host", "127.0.0.1", "--port", &port.to_string()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("geckodriver (scripts/test builds it: ensure_firefox)"),
        );
        let profile = tempfile::tempdir().unwrap();
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "moz:firefoxOptions".to_string(),
            json!({
                "binary": "/usr/bin/firefox-esr",
                "args": ["-headless", "-profile", profile.path().display().to_string()],
                "prefs": {
                    "app.update.auto": false,
                    "app.update.enabled": false,
                    "datareporting.policy.dataSubmissionEnabled": false,
                    "toolkit.telemetry.enabled": false,
                    "browser.safebrowsing.malware.enabled": false,
                    "browser.safebrowsing.phishing.enabled": false,
                    "network.captive-portal-service.enabled": false,
                    "network.connectivity-service.enabled": false,
                    "media.autoplay.default": 0,
                },
            }),
        );
        let client = connect(port, capabilities, "Firefox, through geckodriver").await;
        client.set_window_size(900, 1100).await.expect("size the window");
        Browser {
            client,
            _driver: driver,
            _profile: profile,
        }
    }

    /// Ends the session (the browser quits) and stops its driver.
    pub async fn close(self) {
        let _ = self.client.clone().close().await;
    }

    /// Waits up to `seconds` until the element `css` shows `text`.
    pub async fn wait_for_text(&self, css: &str, text: &str, seconds: u64) -> String {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
        loop {
            let shown = match self.client.find(Locator::Css(css)).await {
                Ok(element) => element.text().await.unwrap_or_default(),
                Err(_) => String::new(),
            };
            if shown.contains(text) {
                return shown;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{css} never showed {text:?}; it shows {shown:?}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Waits up to `seconds` until `script` (a function body) answers something truthy; answers
    /// it. `what` says what was waited for, for the message.
    pub async fn wait_until(&self, script: &str, seconds: u64, what: &str) -> serde_json::Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
        loop {
            let answer = self
                .client
                .execute(script, vec![])
                .await
                .expect("the script runs");
            if !matches!(&answer, serde_json::Value::Null | serde_json::Value::Bool(false))
                && answer != serde_json::json!(0)
            {
                return answer;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{what} did not happen within {seconds} s"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Narrows the window to 360 px (a small phone) and fails when the page is then wider than
    /// the window (it scrolls sideways) or axe-core finds a serious violation; then widens it
    /// again. `what` says which page, for the message.
    pub async fn assert_usable_narrow(&self, what: &str) {
        self.client
            .set_window_size(360, 800)
            .await
            .expect("narrow the window");
        let widths = self
            .wait_until(
                "return innerWidth === 360 && [innerWidth, document.documentElement.scrollWidth <= document.documentElement.clientWidth]",
                10,
                "the window narrowing to 360 px",
            )
            .await;
        assert_eq!(
            widths,
            serde_json::json!([360, true]),
            "{what} scrolls sideways at 360 px"
        );
        self.assert_accessible(&format!("{what} at 360 px")).await;
        self.client
            .set_window_size(900, 1100)
            .await
            .expect("widen the window");
    }

    /// Runs axe-core (npm's, pinned and checksummed by `scripts/lib.sh`'s `ensure_axe`) in the
    /// page as it stands and fails on any serious or critical violation, naming each rule, its
    /// help and the elements. `what` says which page, for the message.
    pub async fn assert_accessible(&self, what: &str) {
        let axe = std::fs::read_to_string(crate::env("DRIVE_AXE_SCRIPT"))
            .expect("axe-core (scripts/test installs it)");
        let script = format!(
            "{axe}\nconst done = arguments[arguments.length - 1];\n\
             axe.run(document, {{ resultTypes: ['violations'] }}).then((r) => done(r.violations\n\
               .filter((v) => v.impact === 'serious' || v.impact === 'critical')\n\
               .map((v) => `${{v.impact}} ${{v.id}}: ${{v.help}} at ${{v.nodes.map((n) => n.target.join(' ')).join(', ')}}`)),\n\
             (e) => done([`axe failed: ${{e}}`]));"
        );
        let found = self.client.execute_async(&script, vec![]).await.expect("axe ran");
        let violations: Vec<String> = serde_json::from_value(found).expect("a list of violations");
        assert!(violations.is_empty(), "{what}: {}", violations.join("\n"));
    }

    /// Lets the browser send at most `bytes_per_second` (ChromeDriver's network conditions, kept
    /// across reloads): a test that must catch an upload part-way slows it down.
    pub async fn limit_upload(&self, bytes_per_second: u64) {
        self.client
            .issue_cmd(NetworkConditions {
                upload_bytes_per_second: bytes_per_second,
            })
            .await
            .expect("ChromeDriver sets network conditions");
    }

    /// Makes the page see `prefers-color-scheme: dark` (Chromium's DevTools emulation, through
    /// ChromeDriver), as a system set to dark does.
    pub async fn prefer_dark(&self) {
        self.client
            .issue_cmd(DevTools {
                cmd: "Emulation.setEmulatedMedia",
                params: json!({ "features": [{ "name": "prefers-color-scheme", "value": "dark" }] }),
            })
            .await
            .expect("ChromeDriver runs the DevTools command");
    }

    /// Runs `script` in every page this browser opens from now on, before the page's own
    /// scripts (Chromium's DevTools, through ChromeDriver; outside the page's CSP): what a
    /// benchmark uses to time the page from within.
    pub async fn before_every_page(&self, script: &str) {
        self.client
            .issue_cmd(DevTools {
                cmd: "Page.addScriptToEvaluateOnNewDocument",
                params: json!({ "source": script }),
            })
            .await
            .expect("ChromeDriver runs the DevTools command");
    }

    /// Forgets every response the browser kept, so the next page is fetched as on a first visit.
    pub async fn clear_cache(&self) {
        self.client
            .issue_cmd(DevTools {
                cmd: "Network.clearBrowserCache",
                params: json!({}),
            })
            .await
            .expect("ChromeDriver runs the DevTools command");
    }

    /// Saves a screenshot of the page as `name`.png in the screenshots folder; answers its path.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let png = self.client.screenshot().await.expect("a screenshot");
        let folder = screenshots();
        std::fs::create_dir_all(&folder).unwrap();
        let path = folder.join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap();
        path
    }
}

/// `POST /session/{id}/chromium/network_conditions`, ChromeDriver's own command.
#[derive(Debug)]
struct NetworkConditions {
    upload_bytes_per_second: u64,
}

impl WebDriverCompatibleCommand for NetworkConditions {
    fn endpoint(&self, base: &url::Url, session: Option<&str>) -> Result<url::Url, url::ParseError> {
        base.join(&format!(
            "session/{}/chromium/network_conditions",
            session.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        let conditions = json!({ "network_conditions": {
            "offline": false, "latency": 0,
            "download_throughput": 1_000_000_000u64, "upload_throughput": self.upload_bytes_per_second,
        }});
        (http::Method::POST, Some(conditions.to_string()))
    }
}

/// `POST /session/{id}/goog/cdp/execute`: a DevTools command, through ChromeDriver.
#[derive(Debug)]
struct DevTools {
    cmd: &'static str,
    params: serde_json::Value,
}

impl WebDriverCompatibleCommand for DevTools {
    fn endpoint(&self, base: &url::Url, session: Option<&str>) -> Result<url::Url, url::ParseError> {
        base.join(&format!(
            "session/{}/goog/cdp/execute",
            session.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        let body = json!({ "cmd": self.cmd, "params": self.params });
        (http::Method::POST, Some(body.to_string()))
    }
}

/// Where page tests keep their screenshots: `DRIVE_SCREENSHOTS`, or `screenshots/` in the
/// build's target folder.
pub fn screenshots() -> PathBuf {
    match std::env::var_os("DRIVE_SCREENSHOTS") {
        Some(folder) => PathBuf::from(folder),
        None => Path::new(&crate::env("CARGO_TARGET_DIR")).join("screenshots"),
    }
}
