//! `scripts/bench app`: the app (`/app`) as a person meets it, in headless Chromium through
//! WebDriver on the real stack, signed in with a password to an account of 100,000 files
//! (seeded straight into the database: `seed_library`).
//!
//! - **The first view**: every byte the browser fetches until the file list shows (the page, its
//!   style and modules, and the API's answers), as sent and as read; the page, style and modules
//!   beside `gzip -9` of the same bodies, what a server of precompressed files would send.
//! - **Opening the drive**: from navigation to the first page of files in the list (the session
//!   renewed from the sign-in cookie, the folders and the first page asked for), with an empty
//!   cache and with a warm one, beside `curl` fetching the same first page of `/search-files` and
//!   the same browser drawing the same rows from a static file. Rounds alternate the four.
//! - **Scrolling**: the list scrolled from the first file to the last, a page of 100 at a time as
//!   its end comes into sight: the requests made, and the time from the scroll to the page's rows
//!   in the list at the start, the middle and the end, beside `curl` fetching the same pages.
//!
//! The browser times itself: a script the bench has Chromium run before each page's own
//! (outside the page's policy) marks when the first row of `#files` is in the document.

use std::process::Command;

use drive_tests::bench::{middle, seed_library};
use drive_tests::browser::Browser;
use drive_tests::{APP_ID, TestApp, TestUser};
use fantoccini::Locator;
use serde_json::{Value, json};

const FILES: i64 = 100_000;
/// The app's page of files (`PAGE` in `app/files.js`).
const PAGE: i64 = 100;
const PAGES: i64 = FILES / PAGE;
const ROUNDS: usize = 5;
const PASSWORD: &str = "correct horse battery staple";
/// Pages timed at the start, the middle and the end of the scroll: 50 of each.
const BAND: i64 = 50;

/// Run before each page's own scripts: keeps every resource's timing, and marks the moment the
/// first row of the file list (`#files tr`, in the app and in the static peer; not the app's
/// spacer) is in the page.
const TIMER: &str = "performance.setResourceTimingBufferSize(100000);
new MutationObserver((_, seen) => {
  if (document.querySelector('#files tr:not(.spacer)')) {
    performance.mark('bench:files-shown');
    seen.disconnect();
  }
}).observe(document, { childList: true, subtree: true });";

/// `/search-files` as the app asks for a page of the root folder.
fn page_body(cursor: Option<&str>) -> Value {
    json!({ "folder": "/", "subfolders": false, "sort": "name", "limit": PAGE, "cursor": cursor })
}

/// `curl` asking for a page as the app does; answers its time in ms (curl's own, from before
/// the connection to the last byte) and the bytes of the answer.
fn curl_page(app: &TestApp, user: &TestUser, cursor: Option<&str>) -> (f64, f64) {
    let out = Command::new("curl")
        .args([
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code} %{time_total} %{size_download}",
            "-X",
            "POST",
        ])
        .args(["-H", &format!("Authorization: Bearer {}", user.session)])
        .args(["-H", &format!("X-Drive-App: {APP_ID}")])
        .args([
            "-H",
            "Content-Type: application/json",
            "--data",
            &page_body(cursor).to_string(),
        ])
        .arg(format!("{}/search-files", app.url))
        .output()
        .expect("curl");
    let out = String::from_utf8(out.stdout).unwrap();
    let [status, seconds, bytes] = out.split(' ').collect::<Vec<_>>()[..] else {
        panic!("curl printed {out:?}")
    };
    assert_eq!(status, "200", "curl of /search-files after {cursor:?}");
    (seconds.parse::<f64>().unwrap() * 1000.0, bytes.parse().unwrap())
}

/// Opens `url` afresh (through a blank page, so a link to the same place still loads it) and
/// answers the ms from navigation to the first row of the file list.
async fn open(browser: &Browser, url: &str) -> f64 {
    browser.client.goto("about:blank").await.unwrap();
    browser.client.goto(url).await.unwrap();
    let shown = browser
        .wait_until(
            "const m = performance.getEntriesByName('bench:files-shown')[0]; return m ? m.startTime : null;",
            60,
            "the file list",
        )
        .await;
    shown.as_f64().unwrap()
}

/// What the page fetched so far: path, bytes as sent (the body, compressed when it was), bytes
/// as read.
async fn fetched(browser: &Browser) -> Vec<(String, f64, f64)> {
    let all = browser
        .client
        .execute(
            "return [performance.getEntriesByType('navigation')[0], ...performance.getEntriesByType('resource')]
               .map((e) => [new URL(e.name).pathname, e.encodedBodySize, e.decodedBodySize]);",
            vec![],
        )
        .await
        .unwrap();
    serde_json::from_value(all).unwrap()
}

/// When each thing the page fetched began and ended, in ms from navigation, in order.
async fn when_fetched(browser: &Browser) -> Vec<(String, f64, f64)> {
    let all = browser
        .client
        .execute(
            "return performance.getEntriesByType('resource')
               .map((e) => [new URL(e.name).pathname, e.startTime, e.responseEnd]);",
            vec![],
        )
        .await
        .unwrap();
    serde_json::from_value(all).unwrap()
}

/// Scrolls the list's end into sight; answers the ms until the next page's rows are in it, and
/// how many pages the list has asked for since it was opened (the page's number).
async fn scroll_a_page(browser: &Browser) -> (f64, usize) {
    let took = browser
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             const rows = document.getElementById('files'), more = document.getElementById('more');
             const last = rows.lastElementChild;
             const asked = () => performance.getEntriesByType('resource')
               .filter((e) => new URL(e.name).pathname === '/search-files').length;
             const start = performance.now();
             const seen = new MutationObserver(() => {
               if (rows.lastElementChild !== last) {
                 seen.disconnect();
                 done([performance.now() - start, asked()]);
               }
             });
             seen.observe(rows, { childList: true });
             more.scrollIntoView();",
            vec![],
        )
        .await;
    match took {
        Ok(took) => (took[0].as_f64().unwrap(), took[1].as_u64().unwrap() as usize),
        Err(e) => {
            let state = browser
                .client
                .execute(
                    "const more = document.getElementById('more');
                     return [document.getElementById('files').children.length, more.hidden,
                             more.getBoundingClientRect().top, innerHeight, document.getElementById('status').textContent];",
                    vec![],
                )
                .await;
            panic!(
                "the next page did not come ({e}); rows, more hidden, its top, the window's height, status: {state:?}"
            )
        }
    }
}

fn gzip9(body: &[u8]) -> usize {
    let path = std::env::temp_dir().join(format!("drive-bench-app-{}", std::process::id()));
    std::fs::write(&path, body).unwrap();
    let out = Command::new("gzip")
        .args(["-9", "-c"])
        .arg(&path)
        .output()
        .expect("gzip");
    std::fs::remove_file(&path).unwrap();
    out.stdout.len()
}

fn kb(bytes: f64) -> String {
    format!("{:.1} KB", bytes / 1000.0)
}

/// Median and max of some ms, as `12.3 ms (max 20.1)`.
fn ms(figures: &[f64]) -> String {
    let max = figures.iter().copied().fold(0f64, f64::max);
    format!("{:.1} ms (max {max:.1})", middle(figures.to_vec()))
}

/// The same rows the app shows first, as a static page: the browser's floor for drawing them.
fn static_rows(files: &[Value]) -> String {
    let rows: String = files
        .iter()
        .map(|f| {
            format!(
                "<tr><td><input type=checkbox aria-label=Select></td><td><a href=#>{}</a></td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                f["fileName"].as_str().unwrap(),
                f["fileSize"],
                f["createdTime"].as_str().unwrap_or_default(),
                f["bucket"].as_str().unwrap_or_default()
            )
        })
        .collect();
    format!(
        "<!doctype html><html lang=en><meta charset=utf-8><title>Files</title><table><thead><tr><th>Selected<th>Name<th>Size<th>Modified<th>Access</thead><tbody id=files>\n{rows}</tbody></table></html>"
    )
}

#[tokio::main]
async fn main() {
    let app = &TestApp::spawn().await;
    let user = &app.user(Some("Pro")).await;
    seed_library(app, user, FILES).await;
    let accepted = app
        .send(
            None,
            Some(APP_ID),
            "/accept-invitation",
            Some(json!({ "invitation": app.invitation(&user.handle), "password": PASSWORD })),
        )
        .await;
    assert_eq!(accepted.status, 200, "{}", accepted.body);
    let browser = Browser::start().await;
    browser.before_every_page(TIMER).await;
    browser.client.goto(&format!("{}/app/", app.url)).await.unwrap();
    browser.wait_for_text("h1", "Sign in to your drive", 30).await;
    for (field, text) in [("#handle", user.handle.as_str()), ("#password", PASSWORD)] {
        browser
            .client
            .find(Locator::Css(field))
            .await
            .unwrap()
            .send_keys(text)
            .await
            .unwrap();
    }
    browser
        .client
        .find(Locator::Css("#signInButton"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser.wait_for_text("#signOut", "Sign out", 30).await;
    let files_url = format!("{}/app/#/files/", app.url);
    let first = app.call(user, "/search-files", Some(page_body(None))).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let peer_page = std::env::temp_dir().join(format!("drive-bench-app-{}.html", std::process::id()));
    std::fs::write(&peer_page, static_rows(first.body["files"].as_array().unwrap())).unwrap();
    let peer_url = format!("file://{}", peer_page.display());

    // ---- opening the drive, and the first view's bytes ----
    let (mut cold, mut warm, mut floor, mut curl) = (vec![], vec![], vec![], vec![]);
    let (mut first_view, mut timeline) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        for side in (0..4).map(|i| (i + round) % 4) {
            match side {
                0 => {
                    browser.clear_cache().await;
                    cold.push(open(&browser, &files_url).await);
                    // What the drawn list went on to ask for (its folders) is part of the view.
                    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                    first_view = fetched(&browser).await;
                }
                1 => {
                    warm.push(open(&browser, &files_url).await);
                    timeline = when_fetched(&browser).await;
                }
                2 => floor.push(open(&browser, &peer_url).await),
                _ => curl.push(curl_page(app, user, None).0),
            }
        }
    }
    std::fs::remove_file(&peer_page).unwrap();

    let is_code = |path: &str| path.starts_with("/app");
    let (mut sent, mut read, mut api_sent, mut api_read, mut gzipped) = (0.0, 0.0, 0.0, 0.0, 0usize);
    for (path, encoded, decoded) in &first_view {
        if is_code(path) {
            sent += encoded;
            read += decoded;
            let body = reqwest::get(format!("{}{path}", app.url))
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap();
            assert_eq!(body.len() as f64, *decoded, "{path} read as the browser read it");
            gzipped += gzip9(&body);
        } else {
            api_sent += encoded;
            api_read += decoded;
        }
    }
    let code_files = first_view.iter().filter(|(p, _, _)| is_code(p)).count();
    println!("## The first view: bytes fetched until the file list shows (empty cache)");
    println!();
    println!("| What | Requests | As sent | As read | `gzip -9` of the same bodies | Sent ÷ gzip -9 |");
    println!("|---|---|---|---|---|---|");
    println!(
        "| The page, style and modules | {code_files} | {} | {} | {} | {:.2} |",
        kb(sent),
        kb(read),
        kb(gzipped as f64),
        sent / gzipped as f64
    );
    println!(
        "| The API's answers (session, folders, the first {PAGE} files) | {} | {} | {} | | |",
        first_view.len() - code_files,
        kb(api_sent),
        kb(api_read)
    );
    println!();
    println!(
        "## Opening the drive: from navigation to the first page of files shown ({ROUNDS} rounds, median and max)"
    );
    println!();
    println!("| Side | Time | ÷ curl of the same page | ÷ the static page |");
    println!("|---|---|---|---|");
    let (curl_median, floor_median) = (middle(curl.clone()), middle(floor.clone()));
    for (side, figures) in [
        ("The app, empty cache", &cold),
        ("The app, warm cache", &warm),
        ("The same rows as a static page, same browser", &floor),
        ("`curl` of the same `/search-files` page", &curl),
    ] {
        let median = middle(figures.clone());
        println!(
            "| {side} | {} | {:.1} | {:.2} |",
            ms(figures),
            median / curl_median,
            median / floor_median
        );
    }

    // Where the warm opening's time went: the modules, then each call in turn.
    let code_end = timeline
        .iter()
        .filter(|(path, _, _)| is_code(path))
        .map(|(_, _, end)| *end)
        .fold(0f64, f64::max);
    let calls: Vec<String> = timeline
        .iter()
        .filter(|(path, _, _)| !is_code(path))
        .map(|(path, start, end)| format!("`{path}` {start:.0}–{end:.0}"))
        .collect();
    println!();
    println!(
        "One warm opening, in ms from navigation: the modules in hand by {code_end:.0}; {}; the first row shown at {:.0}.",
        calls.join(", "),
        warm.last().unwrap()
    );

    // ---- scrolling to the end ----
    let bands = [
        ("start", 1),
        ("middle", PAGES / 2 - BAND / 2),
        ("end", PAGES - BAND),
    ];
    // Where each page starts, as the app walks them (`cursors[p]`: page p + 1's).
    let mut cursors: Vec<Option<String>> = vec![None];
    while cursors.len() < PAGES as usize {
        let page = app
            .call(
                user,
                "/search-files",
                Some(page_body(cursors.last().unwrap().as_deref())),
            )
            .await;
        cursors.push(Some(
            page.body["nextCursor"].as_str().expect("a next page").to_string(),
        ));
    }
    let curl_band = |from: i64| -> Vec<(f64, f64)> {
        (from..from + BAND)
            .map(|p| curl_page(app, user, cursors[p as usize].as_deref()))
            .collect()
    };
    let mut curl_bands: Vec<Vec<(f64, f64)>> = bands.iter().map(|(_, from)| curl_band(*from)).collect();
    open(&browser, &files_url).await;
    // The time of each page by its number (1: the first, which came with the view).
    let mut took = vec![None; PAGES as usize + 1];
    let mut scrolls = 0;
    let scrolling = std::time::Instant::now();
    loop {
        let (ms, page) = scroll_a_page(&browser).await;
        scrolls += 1;
        took[page] = Some(ms);
        if page == PAGES as usize {
            break;
        }
    }
    let scrolled = scrolling.elapsed().as_secs_f64();
    for (band, (_, from)) in curl_bands.iter_mut().zip(&bands) {
        band.extend(curl_band(*from));
    }
    let state = browser
        .client
        .execute(
            "return [document.querySelectorAll('#files tr:not(.spacer)').length,
                     document.querySelector('#files tr:last-child .name').textContent,
                     performance.getEntriesByType('resource').filter((e) => new URL(e.name).pathname === '/search-files').map((e) => e.encodedBodySize)];",
            vec![],
        )
        .await
        .unwrap();
    let rows = state[0].as_i64().unwrap();
    let pages: Vec<f64> = serde_json::from_value(state[2].clone()).unwrap();
    assert_eq!(
        state[1],
        format!("file-{FILES:06}.txt"),
        "the list reached the last file"
    );
    assert_eq!(pages.len() as i64, PAGES, "each page asked for once");
    println!();
    println!(
        "## Scrolling {FILES} files from the first to the last, {PAGE} a page ({:.0} s in all)",
        scrolled
    );
    println!();
    println!(
        "`/search-files` asked {} times for {} pages in {scrolls} scrolls, {} a page as sent; {rows} rows in the list at the end (the pages scrolled past let go).",
        pages.len(),
        PAGES,
        kb(middle(pages.clone())),
    );
    println!();
    println!(
        "| Pages | From the scroll to the rows in the list | `curl` of the same pages (2 passes) | Ratio of medians |"
    );
    println!("|---|---|---|---|");
    for ((name, from), peer) in bands.iter().zip(&curl_bands) {
        // Page `from + 1` (numbered from 1) is the one after `cursors[from]`.
        let ours: Vec<f64> = took[*from as usize + 1..][..BAND as usize]
            .iter()
            .flatten()
            .copied()
            .collect();
        let theirs: Vec<f64> = peer.iter().map(|(ms, _)| *ms).collect();
        println!(
            "| {name}: {}–{} ({} timed) | {} | {} | {:.1} |",
            from + 1,
            from + BAND,
            ours.len(),
            ms(&ours),
            ms(&theirs),
            middle(ours.clone()) / middle(theirs.clone())
        );
    }
    browser.close().await;
}
