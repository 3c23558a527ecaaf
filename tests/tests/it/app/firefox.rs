//! The app in Firefox (Debian's ESR, headless, through geckodriver), beside the Chromium the
//! other tests use: signing in, files picked and uploaded, a picture previewed as the drive reads
//! it, a job's form drawn from the OpenAPI document and estimated, the Agents page, signing out;
//! axe-core checks each page in Firefox too.

use drive_tests::browser::Browser;
use drive_tests::{TestApp, media};
use fantoccini::Locator;
use reqwest::StatusCode;
use serde_json::json;

use super::{click, follow, sign_in_with, with_password};

#[tokio::test]
async fn the_app_works_in_firefox() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    with_password(&app, &user).await;
    let png = media::ffmpeg(
        &["-f", "lavfi", "-i", "testsrc2=size=320x240", "-frames:v", "1"],
        "png",
    );
    let picture = app.upload(&user, "still.png", "Image", "image/png", png).await;
    let browser = sign_in_with(Browser::firefox().await, &app, &user).await;
    let page = &browser.client;
    let agent = page.execute("return navigator.userAgent", vec![]).await.unwrap();
    assert!(agent.as_str().unwrap().contains("Firefox"), "{agent}");
    browser.wait_for_text("#files", "still.png", 10).await;
    browser.assert_accessible("the files in Firefox").await;

    // Two files picked, sent straight to the store.
    let scratch = tempfile::tempdir().unwrap();
    let mut picked = Vec::new();
    for (name, bytes) in [("a.txt", b"alpha".to_vec()), ("b.bin", vec![9u8; 90_000])] {
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
    browser.wait_for_text("#uploadStatus", "2 uploaded.", 30).await;
    browser.wait_for_text("#files", "b.bin", 10).await;
    let found = app
        .call(&user, "/search-files", Some(json!({ "text": "b.bin" })))
        .await;
    assert_eq!(found.status, StatusCode::OK, "{}", found.body);
    assert_eq!(found.body["files"][0]["fileSize"], 90_000, "{}", found.body);

    // The picture, as the drive reads it.
    page.goto(&format!("{}/app/#/file/{picture}", app.url))
        .await
        .unwrap();
    browser.wait_for_text("#fileName", "still.png", 10).await;
    browser
        .wait_until(
            "const p = document.getElementById('picture'); return p !== null && p.complete && p.naturalWidth === 320",
            20,
            "the picture showing",
        )
        .await;

    // A job's form from the document, estimated.
    page.goto(&format!("{}/app/#/jobs/?files={picture}", app.url))
        .await
        .unwrap();
    browser.wait_for_text("#jobType", "checksum", 10).await;
    page.find(Locator::Css("#jobType"))
        .await
        .unwrap()
        .select_by_value("checksum")
        .await
        .unwrap();
    click(&browser, "#estimateJob").await;
    browser.wait_for_text("#estimate", "once it starts", 10).await;
    browser.assert_accessible("a job's form in Firefox").await;

    follow(&browser, "Agents").await;
    browser
        .wait_for_text("#agentTasks", "No agent tasks yet.", 10)
        .await;
    browser.assert_accessible("the Agents page in Firefox").await;

    click(&browser, "#signOut").await;
    browser.wait_for_text("h1", "Sign in to your drive", 10).await;
    browser.close().await;
}
