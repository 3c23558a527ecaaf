//! The app in a real browser (headless Chromium through WebDriver): signing in by invitation,
//! password and code, wrong guesses limited; a folder listed and uploaded into, a whole folder
//! too, a file stored already not sent twice; hostile names shown as text; a large upload resumed
//! after a reload; sharing; previews and moments; a job from the generated form; the selection's
//! verbs; the agent asked, and its waiting task stopped under Agents. axe-core checks every page
//! for serious or critical violations.

mod activity;
mod collections;
mod firefox;
mod requests;
mod reviews;
mod trash;

use chrono::Utc;
use drive_core::totp;
use drive_tests::browser::Browser;
use drive_tests::{APP_ID, TestApp, TestUser, media, totp_key};
use fantoccini::Locator;
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

pub(crate) const PASSWORD: &str = "correct horse battery";

/// Gives the account a password through the API (as the app does); answers a session.
pub(crate) async fn with_password(app: &TestApp, user: &TestUser) -> String {
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

pub(crate) async fn type_into(browser: &Browser, css: &str, text: &str) {
    let input = browser.client.find(Locator::Css(css)).await.unwrap();
    input.clear().await.unwrap();
    input.send_keys(text).await.unwrap();
}

pub(crate) async fn click(browser: &Browser, css: &str) {
    browser
        .client
        .find(Locator::Css(css))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// Gives the selected files to the verb `verb` (its value in the list) with the word `word`.
pub(crate) async fn apply(browser: &Browser, verb: &str, word: &str) {
    browser
        .client
        .find(Locator::Css("#verb"))
        .await
        .unwrap()
        .select_by_value(verb)
        .await
        .unwrap();
    type_into(browser, "#verbWord", word).await;
    browser
        .client
        .find(Locator::XPath("//button[text()='Apply']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// A browser (Chromium) signed in to the app as `user`, whose password is [`PASSWORD`].
pub(crate) async fn signed_in(app: &TestApp, user: &TestUser) -> Browser {
    sign_in_with(Browser::start().await, app, user).await
}

/// `browser`, signed in to the app as `user`, whose password is [`PASSWORD`].
pub(crate) async fn sign_in_with(browser: Browser, app: &TestApp, user: &TestUser) -> Browser {
    browser.client.goto(&format!("{}/app/", app.url)).await.unwrap();
    browser.wait_for_text("h1", "Sign in to your drive", 10).await;
    sign_in(&browser, &user.handle, PASSWORD).await;
    browser.wait_for_text("#signOut", "Sign out", 10).await;
    browser
}

/// Follows the link that says `text` (a section in the header).
pub(crate) async fn follow(browser: &Browser, text: &str) {
    browser
        .client
        .find(Locator::LinkText(text))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// Fills the sign-in form and sends it, its last answer cleared first so the next is waited for.
pub(crate) async fn sign_in(browser: &Browser, handle: &str, password: &str) {
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
    browser.assert_usable_narrow("the account page").await;
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
    // A folder whose name holds what an address would read as its end.
    let odd = app
        .upload(&user, "odd.txt", "Text", "text/plain", b"odd".to_vec())
        .await;
    let moved = app
        .call(
            &user,
            "/move-files",
            Some(json!({ "fileIds": [odd], "folder": "/Docs/Q#1?" })),
        )
        .await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.body);

    let browser = signed_in(&app, &user).await;
    let page = &browser.client;

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

    // Every folder in the tree, the one shown marked; a name with # and ? is a name.
    click(&browser, "#treeBox > summary").await;
    let marked = browser
        .wait_until(
            "return document.querySelector('nav.tree a[aria-current=page]')?.textContent ?? null",
            10,
            "the tree marking the folder shown",
        )
        .await;
    assert_eq!(marked, json!("Docs"));
    page.find(Locator::XPath("//nav[@class='tree']//a[text()='Q#1?']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser.wait_for_text("#files", "odd.txt", 10).await;
    browser
        .wait_for_text("nav[aria-label=Breadcrumbs]", "Q#1?", 10)
        .await;
    page.find(Locator::XPath(
        "//nav[@aria-label='Breadcrumbs']//a[text()='Docs']",
    ))
    .await
    .unwrap()
    .click()
    .await
    .unwrap();
    browser.wait_for_text("#files", "plan.txt", 10).await;

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
        ("/Docs/Q#1?/", "odd.txt", 3, "Text"),
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
            .all(|f| f["modifiedTime"].is_string()
                || ["plan.txt", "odd.txt"].contains(&f["fileName"].as_str().unwrap()))
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
    assert_eq!(count.body["files"].as_array().unwrap().len(), 7);
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
    let browser = signed_in(&app, &user).await;
    let page = &browser.client;
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
    let browser = signed_in(&app, &ada).await;
    browser.wait_for_text("#files", "minutes.txt", 10).await;

    // Ada selects the file and shares it with Bob by handle.
    click(
        &browser,
        &format!("#files tr[data-id='{file}'] input[type=checkbox]"),
    )
    .await;
    apply(&browser, "share", &bob.handle).await;
    browser
        .wait_for_text("#status", &format!("Shared 1 file(s) with {}.", bob.handle), 10)
        .await;
    click(&browser, "#signOut").await;

    // Bob sees it under "Shared with me", from Ada.
    browser.wait_for_text("h1", "Sign in to your drive", 10).await;
    sign_in(&browser, &bob.handle, PASSWORD).await;
    browser.wait_for_text("#signOut", "Sign out", 10).await;
    follow(&browser, "Shared with me").await;
    let row = browser.wait_for_text("#sharedFiles", "minutes.txt", 10).await;
    assert!(row.contains(&ada.handle), "{row}");
    browser.assert_accessible("the shared page").await;
    // Ada's own files are not Bob's: his drive's top lists nothing.
    follow(&browser, "Files").await;
    browser.wait_for_text("#files", "No files here yet.", 10).await;
    browser.close().await;
}

/// Ticks the row of `id` in the file list.
pub(crate) async fn select(browser: &Browser, id: impl std::fmt::Display) {
    click(
        browser,
        &format!("#files tr[data-id='{id}'] input[type=checkbox]"),
    )
    .await;
}

#[tokio::test]
async fn selected_files_are_tagged_copied_renamed_moved_collected_linked_and_zipped() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    with_password(&app, &user).await;
    let a = app
        .upload(&user, "a.txt", "Text", "text/plain", b"alpha".to_vec())
        .await;
    let b = app
        .upload(&user, "b.txt", "Text", "text/plain", b"beta".to_vec())
        .await;
    let png = media::ffmpeg(
        &["-f", "lavfi", "-i", "testsrc=size=64x48", "-frames:v", "1"],
        "png",
    );
    let picture = app.upload(&user, "p.png", "Image", "image/png", png).await;
    let browser = signed_in(&app, &user).await;
    let page = &browser.client;
    browser.wait_for_text("#files", "p.png", 10).await;

    select(&browser, a).await;
    select(&browser, b).await;
    apply(&browser, "tag", "work, 2026").await;
    browser
        .wait_for_text("#status", "Tagged 2 file(s) work, 2026.", 10)
        .await;
    apply(&browser, "copy", "/Backup").await;
    browser
        .wait_for_text("#status", "Copied 2 file(s) to /Backup.", 10)
        .await;
    browser.wait_for_text(".folders", "Backup", 10).await;

    select(&browser, a).await;
    apply(&browser, "rename", "renamed.txt").await;
    browser
        .wait_for_text("#status", "Renamed to renamed.txt.", 10)
        .await;
    browser
        .wait_for_text(&format!("#files tr[data-id='{a}']"), "renamed.txt", 10)
        .await;
    select(&browser, a).await;
    apply(&browser, "move", "/Moved").await;
    browser
        .wait_for_text("#status", "Moved 1 file(s) to /Moved.", 10)
        .await;
    browser.wait_for_text(".folders", "Moved", 10).await;
    let listed = page
        .find(Locator::Css("#files"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!listed.contains("renamed.txt"), "moved away: {listed}");

    select(&browser, picture).await;
    apply(&browser, "gallery", "Holiday").await;
    browser
        .wait_for_text("#status", "Gallery “Holiday” made with the files it takes.", 10)
        .await;
    page.find(Locator::XPath("//button[text()='Copy links']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser.wait_for_text("#links", "p.png: http", 10).await;
    select(&browser, b).await;
    apply(&browser, "zip", "bundle").await;
    browser
        .wait_for_text("#status", "Zipping 2 file(s): bundle.zip", 10)
        .await;
    browser.assert_accessible("the files with their verbs").await;
    browser.assert_usable_narrow("the files with their verbs").await;
    browser.close().await;

    // What the API says now.
    let collections = app.call(&user, "/select-collections", None).await.body;
    let tags: Vec<&str> = collections["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["text"].as_str().unwrap())
        .collect();
    assert!(tags.contains(&"work") && tags.contains(&"2026"), "{collections}");
    assert_eq!(collections["galleries"][0]["title"], "Holiday", "{collections}");
    assert_eq!(collections["galleries"][0]["fileCount"], 1, "{collections}");
    let backup = app
        .call(&user, "/search-files", Some(json!({ "folder": "/Backup" })))
        .await
        .body;
    let mut copies: Vec<&str> = backup["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["fileName"].as_str().unwrap())
        .collect();
    copies.sort_unstable();
    assert_eq!(copies, ["a.txt", "b.txt"], "{backup}");
    let moved = app
        .call(&user, "/search-files", Some(json!({ "folder": "/Moved" })))
        .await
        .body;
    assert_eq!(moved["files"][0]["id"], a.to_string(), "{moved}");
    assert_eq!(moved["files"][0]["fileName"], "renamed.txt", "{moved}");
    let jobs = app.call(&user, "/select-file-jobs", None).await.body;
    let zip = jobs["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobType"] == "zip")
        .unwrap_or_else(|| panic!("no zip job: {jobs}"));
    let mut inputs: Vec<&str> = zip["fileIds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_str().unwrap())
        .collect();
    inputs.sort_unstable();
    let mut expected = [b.to_string(), picture.to_string()];
    expected.sort_unstable();
    assert_eq!(inputs, expected, "{zip}");
}

#[tokio::test]
async fn a_files_tags_and_description_are_edited_in_its_preview_beside_its_opens_and_jobs() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    with_password(&app, &user).await;
    let id = app
        .upload(&user, "letter.txt", "Text", "text/plain", b"Dear all".to_vec())
        .await;
    let tagged = app
        .call(
            &user,
            "/tag-files",
            Some(json!({ "fileIds": [id], "tags": ["draft", "old"] })),
        )
        .await;
    assert_eq!(tagged.status, StatusCode::OK, "{}", tagged.body);
    // Opened once by someone without an account, through its permanent link.
    let public = app
        .call(&user, "/toggle-file-access", Some(json!({ "id": id })))
        .await;
    let link = public.body["downloadUrl"].as_str().unwrap().to_string();
    let (opened, _) = drive_tests::get(&link).await;
    assert_eq!(opened, StatusCode::OK);
    // A job on it, queued (no worker runs), and one on another file, which is not its.
    app.create_job(&user, json!({ "jobType": "checksum", "fileIds": [id] }))
        .await;
    let other = app
        .upload(&user, "other.txt", "Text", "text/plain", b"other".to_vec())
        .await;
    app.create_job(&user, json!({ "jobType": "checksum", "fileIds": [other] }))
        .await;

    let browser = signed_in(&app, &user).await;
    let page = &browser.client;
    page.goto(&format!("{}/app/#/file/{id}", app.url)).await.unwrap();
    browser.wait_for_text("#tags", "draft", 10).await;
    browser
        .wait_for_text("#views", "1 open(s) in the last 30 days, 1 in all.", 10)
        .await;
    browser.wait_for_text("#fileJobs", "checksum queued", 10).await;
    assert_eq!(
        number(
            &browser,
            "return document.querySelectorAll('#fileJobs li').length"
        )
        .await,
        1.0,
        "only the jobs that took this file"
    );

    click(&browser, "button[aria-label='Take the tag old off']").await;
    browser.wait_for_text("#status", "Took old off.", 10).await;
    type_into(&browser, "#newTag", "final, ok").await;
    page.find(Locator::XPath("//button[text()='Add tags']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser.wait_for_text("#status", "Tagged final, ok.", 10).await;
    let hostile = "<b>Ready</b> to send <img src=x onerror=alert(1)>";
    type_into(&browser, "#description", hostile).await;
    click(&browser, "#saveDescription").await;
    browser.wait_for_text("#status", "Description saved.", 10).await;
    browser.assert_accessible("a file's preview with its edits").await;
    browser
        .assert_usable_narrow("a file's preview with its edits")
        .await;
    browser.close().await;

    let found = app
        .call(&user, "/search-files", Some(json!({ "fileIds": [id] })))
        .await
        .body;
    let mut tags: Vec<&str> = found["files"][0]["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    tags.sort_unstable();
    assert_eq!(tags, ["draft", "final", "ok"], "{found}");
    assert_eq!(found["files"][0]["description"], hostile, "{found}");
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

    let browser = signed_in(&app, &user).await;
    let page = &browser.client;
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
    browser.screenshot("app-preview").await;
    browser
        .wait_until(
            "return document.documentElement.scrollWidth <= document.documentElement.clientWidth",
            5,
            "the preview fitting its window, beside the file's facts",
        )
        .await;

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
    browser.screenshot("app-search").await;
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
    let browser = signed_in(&app, &user).await;
    let page = &browser.client;
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
    browser.screenshot("app-jobs").await;

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

/// "Waiting tasks appear under Agents in the app; stopping one there cancels its task": a task
/// the account's API token started waits for files in /inbox; the person signed in to the app
/// asks the agent something there and reads its reply, then finds the waiting task under Agents
/// with what it waits for and until when, and stops it there.
#[tokio::test]
async fn the_agent_is_asked_in_the_app_and_a_waiting_task_is_listed_under_agents_and_stopped_there() {
    let model = drive_tests::provider::FakeChat::scripted(
        vec![
            crate::agent::call(
                "wait_for",
                json!({ "for": "files_in_folder", "folder": "/inbox" }),
            ),
            crate::agent::call("reply", json!({ "text": "<b>One</b> file is in your inbox." })),
        ],
        std::time::Duration::ZERO,
    )
    .await;
    let mut app = TestApp::spawn().await;
    app.start_worker(&[("DRIVE_AGENT_MODEL_URL", &model.url)]).await;
    let user = app.user(Some("Pro")).await;
    with_password(&app, &user).await;
    let placed = app
        .upload(&user, "readme.txt", "Text", "text/plain", b"hello".to_vec())
        .await;
    let moved = app
        .call(
            &user,
            "/move-files",
            Some(json!({ "fileIds": [placed], "folder": "/inbox" })),
        )
        .await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.body);
    let answer = crate::agent::rpc(
        &app,
        &user.api_token,
        "SendMessage",
        json!({
            "message": crate::agent::text_message("Tell me when files land in /inbox"),
            "configuration": { "returnImmediately": true },
        }),
    )
    .await;
    let id = crate::agent::task_of(&answer)["id"].as_str().unwrap().to_string();
    // Waiting, as the API says it, before the page is opened.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let waiting = app
            .call(&user, "/select-agent-tasks", Some(json!({ "state": "waiting" })))
            .await;
        if waiting.body["tasks"][0]["taskId"] == id.as_str() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the task never waited: {}\n{}",
            waiting.body,
            app.worker_logs()
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }

    let browser = signed_in(&app, &user).await;
    follow(&browser, "Agents").await;
    // Asked here, the agent replies; the reply's markup stays text.
    type_into(&browser, "#question", "What is in my inbox?").await;
    click(&browser, "#askButton").await;
    browser
        .wait_for_text("#agentReply", "<b>One</b> file is in your inbox.", 30)
        .await;
    let mine = browser
        .wait_for_text("#agentTasks", "What is in my inbox?", 10)
        .await;
    assert!(mine.contains("signed in"), "{mine}");
    let task = format!("#agentTasks li[data-id='{id}']");
    let shown = browser
        .wait_for_text(&task, "Waits for files landing in /inbox, until", 10)
        .await;
    assert!(shown.contains("Tell me when files land in /inbox"), "{shown}");
    assert!(shown.contains("waiting"), "{shown}");
    browser.assert_accessible("the Agents page").await;
    browser.screenshot("app-agents").await;
    browser.assert_usable_narrow("the Agents page").await;

    click(&browser, &format!("{task} button.stop")).await;
    browser.wait_for_text("#status", "Task stopped.", 10).await;
    browser
        .wait_until(
            &format!("return document.querySelector(\"{task}\")?.dataset.state === 'canceled'"),
            10,
            "the list showing the task stopped",
        )
        .await;
    let seen = crate::agent::rpc(&app, &user.api_token, "GetTask", json!({ "id": id })).await;
    assert_eq!(seen["result"]["status"]["state"], "TASK_STATE_CANCELED", "{seen}");
    browser.close().await;
}

#[tokio::test]
async fn an_image_is_drawn_from_a_form_the_document_describes_with_the_plans_allowance_said() {
    let providers = drive_tests::image_providers::FakeProviders::start().await;
    let mut environment = providers.environment();
    environment.push(("DRIVE_IMAGES_PRO".into(), "3".into()));
    let pairs: Vec<(&str, &str)> = environment
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mut app = TestApp::spawn_with(&pairs).await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    with_password(&app, &user).await;
    let browser = signed_in(&app, &user).await;
    let page = &browser.client;
    follow(&browser, "Images").await;
    browser
        .wait_for_text("#allowance", "0 of 3 images used this month", 10)
        .await;
    // The choices are the document's: every model of the schema is offered.
    browser.wait_for_text("#opt-model", "flux2Pro", 10).await;
    let choose = |css: &'static str, value: &'static str| async move {
        page.find(Locator::Css(css))
            .await
            .unwrap()
            .select_by_value(value)
            .await
            .unwrap();
    };

    // A choice the model does not take is refused with the API's sentence.
    choose("#opt-model", "gptImage2").await;
    choose("#opt-aspectRatio", "16:9").await;
    type_into(&browser, "#prompt", "a lighthouse").await;
    click(&browser, "#drawButton").await;
    browser.wait_for_text("#status", "gptImage2 draws at", 10).await;

    let prompt = "<script>alert(1)</script> a lighthouse at dusk";
    choose("#opt-model", "flux2Pro").await;
    type_into(&browser, "#prompt", prompt).await;
    click(&browser, "#drawButton").await;
    browser
        .wait_for_text("#status", "Image saved to your drive.", 60)
        .await;
    let drawn = "const i = document.querySelector(\"#generations li[data-status='done'] img\"); \
                 return i !== null && i.complete && i.naturalWidth > 0";
    browser.wait_until(drawn, 20, "the image showing").await;
    browser
        .wait_for_text(
            "#generations",
            "<script>alert(1)</script> a lighthouse at dusk",
            10,
        )
        .await;
    browser
        .wait_for_text("#allowance", "1 of 3 images used this month", 10)
        .await;
    browser.assert_accessible("the images page").await;
    browser.screenshot("app-images").await;
    browser.assert_usable_narrow("the images page").await;
    let id = page
        .execute(
            "return document.querySelector('#generations li').dataset.id",
            vec![],
        )
        .await
        .unwrap();
    browser.close().await;

    let seen = app
        .call(&user, "/select-generations", Some(json!({ "ids": [id] })))
        .await;
    let generation = &seen.body["generations"][0];
    assert_eq!(generation["status"], "done", "{}", seen.body);
    assert_eq!(generation["model"], "flux2Pro", "{}", seen.body);
    assert_eq!(generation["prompt"], prompt, "{}", seen.body);
}

#[tokio::test]
async fn apps_let_in_are_revoked_and_webhooks_added_and_removed_on_the_account_page() {
    // The webhook's link is on loopback, which this drive is told to allow (nothing listens).
    let app = TestApp::spawn_with(&[("DRIVE_FETCH_ALLOW_HOSTS", "127.0.0.1")]).await;
    let user = app.user(Some("Pro")).await;
    with_password(&app, &user).await;
    let client =
        drive_tests::oauth::OAuthClient::register(&app, "Notes <b>App</b>", "https://app.example/cb").await;
    let app_token = client.connect(&app, &user.api_token, &["read"]).await;
    let browser = signed_in(&app, &user).await;
    let page = &browser.client;
    page.goto(&format!("{}/app/#/account/", app.url)).await.unwrap();
    let shown = browser
        .wait_for_text("#connections", "Notes <b>App</b>", 10)
        .await;
    assert!(shown.contains("may read"), "{shown}");
    browser.wait_for_text("#webhookKinds", "trashed", 10).await;
    browser.assert_accessible("the account page").await;
    // Dark, as the system says: the page's own colours, still readable (axe checks contrast).
    browser.prefer_dark().await;
    let background = browser
        .wait_until(
            "const c = getComputedStyle(document.body).backgroundColor; return c === 'rgb(21, 23, 27)' ? c : null",
            10,
            "the page turning dark",
        )
        .await;
    assert_eq!(background, json!("rgb(21, 23, 27)"));
    browser.assert_accessible("the account page, dark").await;
    browser.assert_usable_narrow("the account page").await;

    page.find(Locator::XPath("//ul[@id='connections']//button[text()='Revoke']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser
        .wait_for_text(
            "#connectionsStatus",
            "Notes <b>App</b> can no longer reach your drive.",
            10,
        )
        .await;
    let left = app.call(&user, "/select-connections", None).await;
    assert_eq!(left.body["connections"], json!([]), "{}", left.body);
    assert_eq!(app.exchange(&app_token).await.status, StatusCode::UNAUTHORIZED);

    type_into(&browser, "#webhookUrl", "https://127.0.0.1:9/hook").await;
    click(&browser, "#webhookKinds input[value='job']").await;
    click(&browser, "#webhookKinds input[value='trashed']").await;
    click(&browser, "#addWebhook").await;
    browser
        .wait_for_text("#webhookSecret", "shown only now", 10)
        .await;
    browser
        .wait_for_text("#webhooks", "job, trashed; active", 10)
        .await;
    let made = app.call(&user, "/select-event-subscriptions", None).await;
    let subscription = &made.body["subscriptions"][0];
    assert_eq!(subscription["url"], "https://127.0.0.1:9/hook", "{}", made.body);
    assert_eq!(subscription["kinds"], json!(["job", "trashed"]), "{}", made.body);
    let secret = page
        .find(Locator::Css("#webhookSecret code"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(secret.len() >= 32, "a secret: {secret}");

    page.find(Locator::XPath("//ul[@id='webhooks']//button[text()='Remove']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser
        .wait_for_text(
            "#webhooksStatus",
            "Nothing more goes to https://127.0.0.1:9/hook",
            10,
        )
        .await;
    let gone = app.call(&user, "/select-event-subscriptions", None).await;
    assert_eq!(gone.body["subscriptions"], json!([]), "{}", gone.body);
    browser.close().await;
}

/// The farm makes each picture's thumbnail once, as it reads the picture (a HEIC one too); the
/// listing links it, and the grid shows it instead of the picture.
#[tokio::test]
async fn pictures_get_a_thumbnail_once_and_the_grid_shows_them() {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    with_password(&app, &user).await;
    // Noise: no small file, so a thumbnail is worth making.
    let large = media::ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            "nullsrc=s=1600x1200,geq=lum='random(1)*255':cb=128:cr=128",
            "-frames:v",
            "1",
        ],
        "png",
    );
    assert!(large.len() > 100 * 1024, "{} bytes", large.len());
    let png = app
        .upload(&user, "large.png", "Image", "image/png", large.clone())
        .await;
    // A small picture a browser shows is its own thumbnail.
    let icon_bytes = media::ffmpeg(
        &["-f", "lavfi", "-i", "testsrc=size=64x48", "-frames:v", "1"],
        "png",
    );
    let icon = app
        .upload(&user, "icon.png", "Image", "image/png", icon_bytes.clone())
        .await;
    let heic = app
        .upload(
            &user,
            "phone.heic",
            "Image",
            "image/heic",
            media::heif(&large, false),
        )
        .await;
    let notes = app
        .upload(&user, "notes.txt", "Text", "text/plain", b"no picture".to_vec())
        .await;
    for id in [png, heic, icon] {
        app.reading(&user, id).await;
    }
    let found = app
        .call(
            &user,
            "/search-files",
            Some(json!({ "fileIds": [png, heic, notes, icon] })),
        )
        .await
        .body;
    let of = |id: drive_core::id::FileId| {
        found["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == id.to_string())
            .unwrap_or_else(|| panic!("{id}: {found}"))
            .clone()
    };
    for (id, name) in [(png, "large.png"), (heic, "phone.heic")] {
        let file = of(id);
        let (status, jpeg) = drive_tests::get(
            file["artworkUrl"]
                .as_str()
                .unwrap_or_else(|| panic!("{name} has no thumbnail: {file}")),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{name}");
        let thumbnail = image::load_from_memory(&jpeg).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((thumbnail.width(), thumbnail.height()), (320, 240), "{name}");
    }
    assert!(of(notes)["artworkUrl"].is_null(), "{}", of(notes));
    let (status, own) = drive_tests::get(of(icon)["artworkUrl"].as_str().unwrap()).await;
    assert_eq!(
        (status, own),
        (StatusCode::OK, icon_bytes),
        "the small picture links itself"
    );
    // Made once: one derivative a picture, and none is listed.
    let derivatives: i64 = sqlx::query_scalar("select count(*) from files where derivative_of = any($1)")
        .bind(vec![png, heic, icon])
        .fetch_one(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(derivatives, 2);

    let browser = signed_in(&app, &user).await;
    let page = &browser.client;
    browser.wait_for_text("#files", "large.png", 10).await;
    click(&browser, "#layout").await;
    let shown = format!(
        "const i = document.querySelector(\"#files li[data-id='{png}'] img\"); \
         return i !== null && i.complete && i.naturalWidth === 320"
    );
    browser.wait_until(&shown, 20, "the thumbnail in the grid").await;
    browser
        .wait_for_text(&format!("#files li[data-id='{notes}']"), "Text", 10)
        .await;
    browser.assert_accessible("the grid").await;
    browser.screenshot("app-grid").await;
    browser.assert_usable_narrow("the grid").await;
    // The grid is kept across a reload, until sign-out.
    page.refresh().await.unwrap();
    browser.wait_until(&shown, 20, "the grid after a reload").await;
    browser.close().await;
}

#[tokio::test]
async fn the_apps_style_and_modules_go_compressed_to_a_browser_that_takes_it_and_whole_to_one_that_does_not()
{
    use std::io::Read;
    let app = TestApp::spawn().await;
    let http = reqwest::Client::new();
    for name in ["main.js", "app.css", "files.js", "kinds.js"] {
        let url = format!("{}/app/{name}", app.url);
        let whole = http.get(&url).send().await.unwrap();
        assert_eq!(whole.status(), StatusCode::OK, "{name}");
        assert!(whole.headers().get("content-encoding").is_none(), "{name}");
        let whole = whole.bytes().await.unwrap();
        let packed = http
            .get(&url)
            .header("Accept-Encoding", "gzip")
            .send()
            .await
            .unwrap();
        assert_eq!(packed.headers()["content-encoding"], "gzip", "{name}");
        assert_eq!(packed.headers()["x-content-type-options"], "nosniff", "{name}");
        assert!(
            packed.headers()["vary"]
                .to_str()
                .unwrap()
                .to_lowercase()
                .contains("accept-encoding"),
            "{name}: a cache must keep the two apart"
        );
        let packed = packed.bytes().await.unwrap();
        assert!(
            packed.len() * 2 < whole.len(),
            "{name}: {} of {} bytes",
            packed.len(),
            whole.len()
        );
        let mut unpacked = Vec::new();
        flate2::read::GzDecoder::new(&packed[..])
            .read_to_end(&mut unpacked)
            .unwrap();
        assert_eq!(unpacked, whole, "{name} decompresses to what was sent whole");
    }
    // The page itself is sent as it is, under its policy.
    let page = http
        .get(format!("{}/app/", app.url))
        .header("Accept-Encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert!(page.headers().get("content-encoding").is_none());
    let policy = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    // Every module named up front, so the browser asks for them all at once.
    let html = page.text().await.unwrap();
    for name in ["main.js", "files.js", "store.js", "schema.js", "kinds.js"] {
        assert!(
            html.contains(&format!(r#"<link rel="modulepreload" href="/app/{name}">"#)),
            "{html}"
        );
    }
    assert!(policy.contains("script-src 'self'"), "{policy}");
    let script = http
        .get(format!("{}/pages/request.js", app.url))
        .header("Accept-Encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(
        script.headers()["content-encoding"],
        "gzip",
        "the request page's script too"
    );
}

#[tokio::test]
async fn a_long_folder_keeps_five_pages_in_the_list_scrolling_down_to_its_end_and_back_up() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    with_password(&app, &user).await;
    // 13 files, doubled by copies six times: 832, so the list pages 9 times.
    let mut ids: Vec<String> = Vec::new();
    for n in 0..13 {
        let id = app
            .upload(
                &user,
                &format!("n-{n:02}.txt"),
                "Text",
                "text/plain",
                vec![b'x'; n + 1],
            )
            .await;
        ids.push(id.to_string());
    }
    while ids.len() < 800 {
        let copied = app
            .call(
                &user,
                "/copy-files",
                Some(json!({ "fileIds": ids, "folder": "/" })),
            )
            .await;
        assert_eq!(copied.status, StatusCode::OK, "{}", copied.body);
        for copy in copied.body["copies"].as_array().unwrap() {
            ids.push(copy["file"]["id"].as_str().unwrap().to_string());
        }
    }
    let name_at = |offset: usize| {
        let app = &app;
        let user = &user;
        async move {
            let found = app
                .call(
                    user,
                    "/search-files",
                    Some(json!({ "folder": "/", "subfolders": false, "sort": "name", "limit": 1, "offset": offset })),
                )
                .await;
            found.body["files"][0]["fileName"].as_str().unwrap().to_string()
        }
    };
    let (first, last) = (name_at(0).await, name_at(ids.len() - 1).await);

    let browser = signed_in(&app, &user).await;
    let page = &browser.client;
    browser
        .wait_for_text("#files tr:not(.spacer) td.name", &first, 10)
        .await;
    let first_box = "#files tr:not(.spacer) input[type=checkbox]";
    click(&browser, first_box).await;
    let state = "const rows = document.querySelectorAll('#files tr:not(.spacer)');
                 const spacer = document.querySelector('#files .spacer');
                 return [rows.length, rows[0].querySelector('.name').textContent,
                         rows[rows.length - 1].querySelector('.name').textContent,
                         spacer.hidden ? 0 : spacer.getBoundingClientRect().height,
                         document.getElementById('more').hidden];";
    // Down to the end: never more than five pages in the list, the ones above held by the spacer.
    let mut seen_spacer = false;
    for _ in 0..20 {
        page.execute("document.getElementById('more').scrollIntoView()", vec![])
            .await
            .unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        let now = page.execute(state, vec![]).await.unwrap();
        assert!(now[0].as_u64().unwrap() <= 500, "{now}");
        seen_spacer |= now[3].as_f64().unwrap() > 1000.0;
        if now[4] == json!(true) {
            break;
        }
    }
    let at_end = page.execute(state, vec![]).await.unwrap();
    assert_eq!(at_end[4], true, "the list reached its end: {at_end}");
    assert_eq!(at_end[2], last.as_str(), "{at_end}");
    assert!(seen_spacer, "pages scrolled past were let go: {at_end}");
    let asked: u64 = serde_json::from_value(
        page.execute(
            "return performance.getEntriesByType('resource').filter((e) => new URL(e.name).pathname === '/search-files').length",
            vec![],
        )
        .await
        .unwrap(),
    )
    .unwrap();
    assert_eq!(asked, 9, "each page asked for once on the way down");

    // Back up to the top: the pages let go come back, the spacer goes, the choice is kept.
    for _ in 0..20 {
        page.execute(
            "const spacer = document.querySelector('#files .spacer');
             (spacer.hidden ? document.getElementById('files') : spacer).scrollIntoView()",
            vec![],
        )
        .await
        .unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        let now = page.execute(state, vec![]).await.unwrap();
        assert!(now[0].as_u64().unwrap() <= 500, "{now}");
        if now[1] == json!(first) && now[3] == json!(0) {
            break;
        }
    }
    let at_top = page.execute(state, vec![]).await.unwrap();
    assert_eq!((&at_top[1], &at_top[3]), (&json!(first), &json!(0)), "{at_top}");
    let checked = page
        .execute(
            &format!("return document.querySelector('{first_box}').checked"),
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(checked, true, "the file chosen before scrolling is still chosen");
    browser.wait_for_text(".count", "1 selected", 5).await;
    browser
        .assert_accessible("a long folder scrolled back to its top")
        .await;
    browser.close().await;
}
