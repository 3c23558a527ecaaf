//! The app in a real browser (headless Chromium through WebDriver): signing in by invitation,
//! password and code, wrong guesses limited; a folder listed and uploaded into, a whole folder
//! too, a file stored already not sent twice; hostile names shown as text. axe-core checks every
//! page for serious or critical violations.

use chrono::Utc;
use drive_core::totp;
use drive_tests::browser::Browser;
use drive_tests::{APP_ID, TestApp, TestUser, media, totp_key};
use fantoccini::Locator;
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const PASSWORD: &str = "correct horse battery";

/// Gives the account a password through the API (as the app does); answers a session.
async fn with_password(app: &TestApp, user: &TestUser) -> String {
    let accepted = app
        .send(
            None,
            Some(APP_ID),
            "/accept-invitation",
            Some(json!({ "invitation": app.invitation(&user.handle), "password": PASSWORD })),
        )
        .await;
    assert_eq!(accepted.status, StatusCode::OK, "{}", accepted.body);
    accepted.body["gelToken"].as_str().unwrap().to_string()
}

async fn type_into(browser: &Browser, css: &str, text: &str) {
    let input = browser.client.find(Locator::Css(css)).await.unwrap();
    input.clear().await.unwrap();
    input.send_keys(text).await.unwrap();
}

async fn click(browser: &Browser, css: &str) {
    browser
        .client
        .find(Locator::Css(css))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// Fills the sign-in form and sends it, its last answer cleared first so the next is waited for.
async fn sign_in(browser: &Browser, handle: &str, password: &str) {
    browser
        .client
        .execute("document.getElementById('status').textContent = ''", vec![])
        .await
        .unwrap();
    type_into(browser, "#handle", handle).await;
    type_into(browser, "#password", password).await;
    click(browser, "#signInButton").await;
}

#[tokio::test]
async fn people_sign_in_to_the_app_by_invitation_password_and_code_and_wrong_guesses_are_limited() {
    let app = TestApp::spawn_with(&[
        ("DRIVE_RATE_SIGN_IN_PER_MINUTE", "1000"),
        ("DRIVE_SIGN_IN_GUESSES", "3"),
    ])
    .await;
    let ada = app.user(Some("Pro")).await;
    let browser = Browser::start().await;
    let page = &browser.client;

    // The invitation link sets the password and signs in; the address forgets the secret.
    page.goto(&format!(
        "{}/app/#invite={}",
        app.url,
        app.invitation(&ada.handle)
    ))
    .await
    .unwrap();
    browser.wait_for_text("h1", "Choose your password", 10).await;
    browser.assert_accessible("the invitation page").await;
    type_into(&browser, "#newPassword", PASSWORD).await;
    click(&browser, "#invitation button[type=submit]").await;
    browser.wait_for_text("#signOut", "Sign out", 10).await;
    assert!(!page.current_url().await.unwrap().as_str().contains("invite"));
    browser.wait_for_text("#files", "No files here yet.", 10).await;
    browser.assert_accessible("the files page").await;

    // A reload keeps the sign-in (the cookie renews the session), and nothing readable by the
    // page holds more than a session.
    page.refresh().await.unwrap();
    browser.wait_for_text("#signOut", "Sign out", 10).await;
    let cookies = page.execute("return document.cookie", vec![]).await.unwrap();
    assert_eq!(cookies, json!(""), "the sign-in cookie is HttpOnly");

    // The account page lists this sign-in; signing out everywhere comes back to the sign-in form.
    page.goto(&format!("{}/app/#/account/", app.url)).await.unwrap();
    browser.wait_for_text("#signIns", "(this browser)", 10).await;
    browser.assert_accessible("the account page").await;
    click(&browser, "#signOutEverywhere").await;
    browser.wait_for_text("h1", "Sign in to your drive", 10).await;
    browser.assert_accessible("the sign-in page").await;
    let stored = page
        .execute("return [localStorage.length, sessionStorage.length]", vec![])
        .await
        .unwrap();
    assert_eq!(stored, json!([0, 0]), "nothing the app kept survives signing out");

    // Wrong passwords are said as the API says them; the third locks the account.
    sign_in(&browser, &ada.handle, "not the password").await;
    browser
        .wait_for_text("#status", "the handle or the password is not right", 10)
        .await;
    sign_in(&browser, &ada.handle, "still not it").await;
    browser
        .wait_for_text("#status", "the handle or the password is not right", 10)
        .await;
    sign_in(&browser, &ada.handle, "nor this").await;
    browser
        .wait_for_text("#status", "too many wrong guesses", 10)
        .await;
    sign_in(&browser, &ada.handle, PASSWORD).await;
    browser
        .wait_for_text("#status", "too many wrong guesses", 10)
        .await;

    // Grace has a second factor: the password brings up the code's field, the code signs in.
    let grace = app.user(Some("Pro")).await;
    let session = with_password(&app, &grace).await;
    let begun = app.send(Some(&session), Some(APP_ID), "/begin-totp", None).await;
    let secret = begun.body["secret"].as_str().unwrap();
    assert!(
        begun.body["link"]
            .as_str()
            .unwrap()
            .contains(&format!("secret={secret}&")),
        "{}",
        begun.body
    );
    let key = totp_key(secret);
    let step = totp::step_of(Utc::now().timestamp());
    let confirmed = app
        .send(
            Some(&session),
            Some(APP_ID),
            "/confirm-totp",
            Some(json!({ "code": totp::code_at(&key, step) })),
        )
        .await;
    assert_eq!(confirmed.status, StatusCode::NO_CONTENT, "{}", confirmed.body);
    page.goto(&format!("{}/app/", app.url)).await.unwrap();
    browser.wait_for_text("h1", "Sign in to your drive", 10).await;
    sign_in(&browser, &grace.handle, PASSWORD).await;
    browser
        .wait_for_text("#status", "asks for the code of its authenticator app", 10)
        .await;
    browser
        .assert_accessible("the sign-in page asking for a code")
        .await;
    type_into(&browser, "#code", &totp::code_at(&key, step + 1)).await;
    click(&browser, "#signInButton").await;
    browser.wait_for_text("#signOut", "Sign out", 10).await;
    browser.close().await;
}

#[tokio::test]
async fn the_app_lists_a_folder_uploads_files_and_folders_into_it_and_shows_hostile_names_as_text() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    with_password(&app, &user).await;
    let hostile = "<img src=x onerror=alert(1)>.png";
    let hostile_id = app
        .upload(&user, hostile, "Image", "image/png", b"not really a png".to_vec())
        .await;
    let docs = app
        .upload(&user, "plan.txt", "Text", "text/plain", b"the plan".to_vec())
        .await;
    let moved = app
        .call(
            &user,
            "/move-files",
            Some(json!({ "fileIds": [docs], "folder": "/Docs" })),
        )
        .await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.body);

    let browser = Browser::start().await;
    let page = &browser.client;
    page.goto(&format!("{}/app/", app.url)).await.unwrap();
    browser.wait_for_text("h1", "Sign in to your drive", 10).await;
    sign_in(&browser, &user.handle, PASSWORD).await;

    // The hostile name is the row's text, and no element came of it.
    let row = format!("#files tr[data-id='{hostile_id}'] td.name");
    browser.wait_for_text(&row, hostile, 10).await;
    let made = page
        .execute("return document.querySelectorAll('#files img').length", vec![])
        .await
        .unwrap();
    assert_eq!(made, json!(0));
    assert!(page.get_alert_text().await.is_err(), "an alert opened");
    // Only the top's own files: the one in /Docs is not listed here.
    let listed = page
        .find(Locator::Css("#files"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!listed.contains("plan.txt"), "{listed}");

    // Into /Docs by its folder link; the breadcrumbs say where.
    click(&browser, "a.folder").await;
    browser.wait_for_text("#files", "plan.txt", 10).await;
    browser
        .wait_for_text("nav[aria-label=Breadcrumbs]", "Docs", 10)
        .await;
    browser.assert_accessible("a folder").await;

    // Three files picked at once, then a whole folder of mixed files.
    let scratch = tempfile::tempdir().unwrap();
    let mut picked = Vec::new();
    for (name, bytes) in [
        ("a.txt", b"alpha".to_vec()),
        ("b.csv", b"x,y\n1,2\n".to_vec()),
        ("c.bin", vec![7u8; 70_000]),
    ] {
        let path = scratch.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        picked.push(path.display().to_string());
    }
    page.find(Locator::Css("#pickFiles"))
        .await
        .unwrap()
        .send_keys(&picked.join("\n"))
        .await
        .unwrap();
    browser.wait_for_text("#uploadStatus", "3 uploaded.", 30).await;
    browser.wait_for_text("#files", "c.bin", 10).await;
    let trip = scratch.path().join("Trip");
    std::fs::create_dir_all(trip.join("Day 1")).unwrap();
    std::fs::write(trip.join("notes.md"), "# Trip").unwrap();
    std::fs::write(trip.join("Day 1").join("route.json"), "{}").unwrap();
    page.find(Locator::Css("#pickFolder"))
        .await
        .unwrap()
        .send_keys(&trip.display().to_string())
        .await
        .unwrap();
    browser.wait_for_text("#uploadStatus", "2 uploaded.", 30).await;

    // The drive has them where they were picked, with their sizes, kinds and times.
    let found = app
        .call(
            &user,
            "/search-files",
            Some(json!({ "folder": "/Docs", "sort": "name", "limit": 50 })),
        )
        .await;
    let files: Vec<(String, String, i64, String)> = found.body["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["folder"].as_str().unwrap().to_string(),
                f["fileName"].as_str().unwrap().to_string(),
                f["fileSize"].as_i64().unwrap(),
                f["type"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected = [
        ("/Docs/", "a.txt", 5, "Text"),
        ("/Docs/", "b.csv", 8, "Text"),
        ("/Docs/", "c.bin", 70_000, "Other"),
        ("/Docs/Trip/", "notes.md", 6, "Text"),
        ("/Docs/", "plan.txt", 8, "Text"),
        ("/Docs/Trip/Day 1/", "route.json", 2, "Text"),
    ];
    let expected: Vec<(String, String, i64, String)> = expected
        .iter()
        .map(|(d, n, s, k)| (d.to_string(), n.to_string(), *s, k.to_string()))
        .collect();
    assert_eq!(files, expected, "{}", found.body);
    assert!(
        found.body["files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["modifiedTime"].is_string() || f["fileName"] == "plan.txt")
    );

    // The same files picked again are found stored, not sent twice.
    page.find(Locator::Css("#pickFiles"))
        .await
        .unwrap()
        .send_keys(&picked.join("\n"))
        .await
        .unwrap();
    browser.wait_for_text("#uploadStatus", "3 uploaded.", 30).await;
    browser.wait_for_text("ul.uploads", "already stored", 10).await;
    let again = page
        .execute(
            "return [...document.querySelectorAll('ul.uploads .said')].map((s) => s.textContent)",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        again,
        json!(["already stored", "already stored", "already stored"])
    );
    let count = app
        .call(
            &user,
            "/search-files",
            Some(json!({ "folder": "/Docs", "limit": 50 })),
        )
        .await;
    assert_eq!(count.body["files"].as_array().unwrap().len(), 6);
    browser.close().await;
}

#[tokio::test]
async fn a_large_upload_cut_by_a_reload_resumes_from_the_parts_the_store_holds() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    with_password(&app, &user).await;
    // 200 MiB: parts of 64, 64, 64 and 8 MiB, written a mebibyte at a time.
    let scratch = tempfile::tempdir().unwrap();
    let path = scratch.path().join("big.bin");
    let mut digest = Sha256::new();
    {
        use std::io::Write;
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        for n in 0..200u32 {
            let chunk: Vec<u8> = (0..1 << 20)
                .map(|i: u32| (i.wrapping_mul(31) ^ n) as u8)
                .collect();
            digest.update(&chunk);
            file.write_all(&chunk).unwrap();
        }
    }
    let browser = Browser::start().await;
    let page = &browser.client;
    page.goto(&format!("{}/app/", app.url)).await.unwrap();
    browser.wait_for_text("h1", "Sign in to your drive", 10).await;
    sign_in(&browser, &user.handle, PASSWORD).await;
    browser.wait_for_text("#files", "No files here yet.", 10).await;

    // Slowed down, the four parts go side by side; the small last one is stored first, and the
    // page is reloaded then, the others part-way.
    browser.limit_upload(16_000_000).await;
    let pick = path.display().to_string();
    page.find(Locator::Css("#pickFiles"))
        .await
        .unwrap()
        .send_keys(&pick)
        .await
        .unwrap();
    let stored_last =
        "return performance.getEntriesByType('resource').some((e) => e.name.includes('partNumber=4&'))";
    browser.wait_until(stored_last, 60, "part 4 stored").await;
    page.refresh().await.unwrap();
    browser.limit_upload(1_000_000_000).await;

    // After the reload the app says what did not finish; picked again, it goes on.
    browser
        .wait_for_text("#uploadStatus", "did not finish (big.bin)", 10)
        .await;
    page.find(Locator::Css("#pickFiles"))
        .await
        .unwrap()
        .send_keys(&pick)
        .await
        .unwrap();
    browser.wait_for_text("#uploadStatus", "1 uploaded.", 120).await;
    browser
        .wait_for_text("ul.uploads", "resumed after 1 stored part(s)", 5)
        .await;
    browser.wait_for_text("#files", "big.bin", 10).await;

    let found = app
        .call(&user, "/search-files", Some(json!({ "text": "big" })))
        .await;
    let file = &found.body["files"][0];
    assert_eq!(
        (file["fileName"].clone(), file["fileSize"].clone()),
        (json!("big.bin"), json!(200u64 << 20))
    );
    let stored = app.download(&user, file["id"].as_str().unwrap()).await;
    assert!(
        Sha256::digest(&stored) == digest.finalize(),
        "the bytes stored are the file's"
    );
    browser.close().await;
}

#[tokio::test]
async fn a_file_shared_in_the_app_is_seen_by_the_other_account_in_its_app() {
    let app = TestApp::spawn().await;
    let (ada, bob) = (app.user(Some("Pro")).await, app.user(Some("Pro")).await);
    with_password(&app, &ada).await;
    with_password(&app, &bob).await;
    let file = app
        .upload(&ada, "minutes.txt", "Text", "text/plain", b"we met".to_vec())
        .await;
    let browser = Browser::start().await;
    let page = &browser.client;
    page.goto(&format!("{}/app/", app.url)).await.unwrap();
    browser.wait_for_text("h1", "Sign in to your drive", 10).await;
    sign_in(&browser, &ada.handle, PASSWORD).await;
    browser.wait_for_text("#files", "minutes.txt", 10).await;

    // Ada selects the file and shares it with Bob by handle.
    click(
        &browser,
        &format!("#files tr[data-id='{file}'] input[type=checkbox]"),
    )
    .await;
    type_into(&browser, "#shareWith", &bob.handle).await;
    page.find(Locator::XPath("//button[text()='Share']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser
        .wait_for_text("#status", &format!("Shared 1 file(s) with {}.", bob.handle), 10)
        .await;
    click(&browser, "#signOut").await;

    // Bob sees it under "Shared with me", from Ada.
    browser.wait_for_text("h1", "Sign in to your drive", 10).await;
    sign_in(&browser, &bob.handle, PASSWORD).await;
    browser.wait_for_text("#signOut", "Sign out", 10).await;
    page.find(Locator::LinkText("Shared with me"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let row = browser.wait_for_text("#sharedFiles", "minutes.txt", 10).await;
    assert!(row.contains(&ada.handle), "{row}");
    browser.assert_accessible("the shared page").await;
    // Ada's own files are not Bob's: his drive's top lists nothing.
    page.find(Locator::LinkText("Files"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser.wait_for_text("#files", "No files here yet.", 10).await;
    browser.close().await;
}

/// A number the page answers to `script`.
async fn number(browser: &Browser, script: &str) -> f64 {
    browser
        .client
        .execute(script, vec![])
        .await
        .unwrap()
        .as_f64()
        .unwrap_or(f64::NAN)
}

/// Waits until the player has its metadata (it can seek), up to 20 s.
async fn player_ready(browser: &Browser) {
    let ready = "const p = document.getElementById('player'); return p !== null && p.readyState >= 1";
    browser.wait_until(ready, 20, "the player loading").await;
}

#[tokio::test]
async fn files_preview_and_a_said_line_or_a_search_moment_opens_the_player_there() {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    with_password(&app, &user).await;
    // A video whose sound is two spoken sentences, read for search.
    let scratch = tempfile::tempdir().unwrap();
    let wav = scratch.path().join("talk.wav");
    std::fs::write(
        &wav,
        media::speak("The garage replaced the worn brake pads on my car this morning. Tomorrow we will bake a chocolate cake for the birthday party."),
    )
    .unwrap();
    let wav = wav.display().to_string();
    let video = media::ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=320x240:rate=25",
            "-i",
            &wav,
            "-shortest",
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-pix_fmt",
            "yuv420p",
            "-c:a",
            "aac",
        ],
        "mp4",
    );
    let talk = app.upload(&user, "talk.mp4", "Video", "video/mp4", video).await;
    let read = app
        .run_job(&user, json!({ "jobType": "readForSearch", "fileIds": [talk] }))
        .await;
    assert_eq!(read["state"], "done", "{read}");
    let png = media::ffmpeg(
        &["-f", "lavfi", "-i", "testsrc2=size=320x240", "-frames:v", "1"],
        "png",
    );
    let heic = app
        .upload(
            &user,
            "photo.heic",
            "Image",
            "image/heic",
            media::heif(&png, false),
        )
        .await;
    let pdf = media::text_pdf(&[
        vec!["The first page speaks of apples.".into()],
        vec!["The second of pears.".into()],
    ]);
    let pdf = app
        .upload(&user, "fruit.pdf", "Pdf", "application/pdf", pdf)
        .await;
    let text = app
        .upload(
            &user,
            "notes.txt",
            "Text",
            "text/plain",
            b"Remember the milk.".to_vec(),
        )
        .await;

    let browser = Browser::start().await;
    let page = &browser.client;
    page.goto(&format!("{}/app/", app.url)).await.unwrap();
    browser.wait_for_text("h1", "Sign in to your drive", 10).await;
    sign_in(&browser, &user.handle, PASSWORD).await;
    browser.wait_for_text("#files", "notes.txt", 10).await;

    // A HEIC picture, as the drive reads it; a PDF's pages; a text file.
    click(&browser, &format!("#files tr[data-id='{heic}'] td.name a")).await;
    browser.wait_for_text("#fileName", "photo.heic", 10).await;
    let shown =
        "const p = document.getElementById('picture'); return p !== null && p.complete && p.naturalWidth > 0";
    browser.wait_until(shown, 20, "the picture showing").await;
    assert_eq!(
        number(&browser, "return document.getElementById('picture').naturalWidth").await,
        320.0
    );
    page.goto(&format!("{}/app/#/file/{pdf}", app.url)).await.unwrap();
    browser.wait_for_text("#pageRange", "Pages 1–2 of 2", 10).await;
    browser.wait_for_text("#text", "The second of pears.", 10).await;
    page.goto(&format!("{}/app/#/file/{text}", app.url))
        .await
        .unwrap();
    browser.wait_for_text("#text", "Remember the milk.", 10).await;

    // The video with what is said beside it: a line clicked seeks the player to it.
    page.goto(&format!("{}/app/#/file/{talk}", app.url))
        .await
        .unwrap();
    browser.wait_for_text("#said", "cake", 20).await;
    player_ready(&browser).await;
    browser.assert_accessible("a video's preview").await;
    let line = page
        .find(Locator::XPath("//ol[@id='said']//button[contains(., 'cake')]"))
        .await
        .unwrap();
    let at: f64 = line.attr("data-at").await.unwrap().unwrap().parse().unwrap();
    assert!(at > 1.0, "the second sentence starts after the first: {at}");
    line.click().await.unwrap();
    let now = number(&browser, "return document.getElementById('player').currentTime").await;
    assert!(
        (now - at).abs() < 0.75,
        "the player is at {now}, the line at {at}"
    );

    // A search inside files: its moment opens the player at its second.
    page.goto(&format!("{}/app/#/search/", app.url)).await.unwrap();
    type_into(&browser, "#query", "chocolate cake").await;
    click(&browser, "#searchButton").await;
    browser.wait_for_text("#results", "talk.mp4", 20).await;
    browser.assert_accessible("the search page").await;
    let moment = page.find(Locator::Css("#results a.moment")).await.unwrap();
    let href = moment.attr("href").await.unwrap().unwrap();
    let second: f64 = href
        .split("?at=")
        .nth(1)
        .expect("a moment at a second")
        .parse()
        .unwrap();
    moment.click().await.unwrap();
    browser.wait_for_text("#fileName", "talk.mp4", 10).await;
    player_ready(&browser).await;
    let there = format!("return Math.abs(document.getElementById('player').currentTime - {second}) < 0.75");
    browser
        .wait_until(&there, 10, &format!("the player going to {second}"))
        .await;
    browser.close().await;
}

#[tokio::test]
async fn a_job_made_from_the_form_the_document_describes_is_estimated_started_and_followed_to_its_end() {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    with_password(&app, &user).await;
    let a = app
        .upload(&user, "a.txt", "Text", "text/plain", b"alpha".to_vec())
        .await;
    let b = app
        .upload(&user, "b.txt", "Text", "text/plain", b"beta".to_vec())
        .await;
    let browser = Browser::start().await;
    let page = &browser.client;
    page.goto(&format!("{}/app/", app.url)).await.unwrap();
    browser.wait_for_text("h1", "Sign in to your drive", 10).await;
    sign_in(&browser, &user.handle, PASSWORD).await;
    browser.wait_for_text("#files", "b.txt", 10).await;
    for id in [a, b] {
        click(
            &browser,
            &format!("#files tr[data-id='{id}'] input[type=checkbox]"),
        )
        .await;
    }
    page.find(Locator::XPath("//button[text()='Run a job']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser
        .wait_for_text("#newJob h2", "A job on 2 file(s)", 10)
        .await;

    // The form is the document's: checksum's algorithm is a choice of the values it lists.
    let listed: Value = reqwest::get(format!("{}/openapi.json", app.url))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let algorithms = listed["components"]["schemas"]["DigestAlgorithm"]["enum"].clone();
    assert!(algorithms.as_array().is_some_and(|a| a.len() > 1), "{algorithms}");
    page.find(Locator::Css("#jobType"))
        .await
        .unwrap()
        .select_by_value("checksum")
        .await
        .unwrap();
    let offered = page
        .execute("return [...document.querySelectorAll('#opt-algorithm option')].map((o) => o.value).filter((v) => v)", vec![])
        .await
        .unwrap();
    assert_eq!(offered, algorithms);
    browser.assert_accessible("the job form").await;

    // A zip of the two: estimated first, then started, followed until it made its file.
    page.find(Locator::Css("#jobType"))
        .await
        .unwrap()
        .select_by_value("zip")
        .await
        .unwrap();
    click(&browser, "#estimateJob").await;
    browser.wait_for_text("#estimate", "once it starts", 10).await;
    click(&browser, "#startJob").await;
    let done = browser.wait_for_text("#jobs", "done", 60).await;
    assert!(done.contains("zip"), "{done}");
    let made = page.find(Locator::Css("#jobs ul.made a")).await.unwrap();
    let name = made.text().await.unwrap();
    assert!(name.ends_with(".zip"), "{name}");
    browser
        .wait_for_text("#minutes", "Job minutes this month", 5)
        .await;
    made.click().await.unwrap();
    browser.wait_for_text("#fileName", &name, 10).await;
    browser.close().await;
}
