//! The Activity page in a real browser: the account's event feed followed live (a file uploaded
//! through the API while the page is open comes to the top without a reload), a hostile file
//! name shown as text, storage and job minutes against the plan, views of a public file opened
//! through its permanent link by someone without a token, and the feed narrowed to a mirror's
//! kinds. axe-core checks the page.

use drive_tests::TestApp;
use fantoccini::Locator;
use reqwest::StatusCode;
use serde_json::json;

use super::{follow, signed_in, with_password};

#[tokio::test]
async fn the_activity_page_follows_the_feed_live_and_shows_usage_and_views() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    with_password(&app, &user).await;
    let hostile = "<img src=x onerror=alert(1)>.txt";
    let hostile_id = app
        .upload(&user, hostile, "Text", "text/plain", b"hostile".to_vec())
        .await;
    let poster = app
        .upload(&user, "poster.txt", "Text", "text/plain", b"a poster".to_vec())
        .await;
    // What the page should say, as the API says it.
    let usage = app.call(&user, "/get-user-storage-usage", None).await;
    assert_eq!(usage.status, StatusCode::OK, "{}", usage.body);
    assert_eq!(usage.body["usedBytes"], json!(15), "{}", usage.body);
    let jobs = app
        .call(&user, "/select-file-jobs", Some(json!({ "limit": 1 })))
        .await;
    assert_eq!(jobs.status, StatusCode::OK, "{}", jobs.body);
    let minutes = jobs.body["minutes"]["limit"].as_f64().unwrap();
    assert!(minutes > 0.0, "the Pro plan has job minutes: {}", jobs.body);

    let browser = signed_in(&app, &user).await;
    let page = &browser.client;
    follow(&browser, "Activity").await;
    browser.wait_for_text("h1", "Activity", 10).await;
    browser
        .wait_until(
            "return document.querySelector('#events')?.dataset.following === 'live'",
            10,
            "the feed read up to now and followed",
        )
        .await;

    // The hostile name is the link's text, and no element came of it.
    let link = format!("#events a[href='#/file/{hostile_id}']");
    browser.wait_for_text(&link, hostile, 10).await;
    let named = page
        .execute(
            &format!("return document.querySelector(\"{link}\").textContent"),
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(named, json!(hostile));
    let images = page
        .execute("return document.querySelectorAll('#main img').length", vec![])
        .await
        .unwrap();
    assert_eq!(images, json!(0));
    assert!(page.get_alert_text().await.is_err(), "an alert opened");

    // Usage: the bytes stored against the plan, and this month's job minutes.
    browser.wait_for_text("#storageUsed", "15 B of ", 10).await;
    let stored = page
        .execute(
            "const m = document.getElementById('storageMeter'); return [m.getAttribute('value'), m.getAttribute('max')]",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(stored, json!(["15", usage.body["limitBytes"].to_string()]));
    browser
        .wait_for_text("#jobMinutes", &format!("0.0 of {minutes:.0} minutes used"), 10)
        .await;
    let limit = page
        .execute(
            "return document.getElementById('minutesMeter').getAttribute('max')",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(limit, json!(format!("{minutes}")));
    browser
        .wait_for_text("#views", "Nobody else has opened your files since", 10)
        .await;

    // A file uploaded now comes to the top of the page as it stands: no reload, and the usage
    // follows it.
    page.execute("window.stillHere = true", vec![]).await.unwrap();
    let fresh = app
        .upload(&user, "fresh.txt", "Text", "text/plain", b"fresh!".to_vec())
        .await;
    browser
        .wait_for_text("#events li:first-child", "fresh.txt was added (6 B).", 15)
        .await;
    let linked = page
        .execute(
            &format!(
                "return document.querySelector(\"#events > li:first-child a[href='#/file/{fresh}']\")?.textContent"
            ),
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(linked, json!("fresh.txt"));
    let still = page
        .execute("return window.stillHere === true", vec![])
        .await
        .unwrap();
    assert_eq!(still, json!(true), "the page was reloaded");
    browser.wait_for_text("#storageUsed", "21 B of ", 10).await;

    // Made public, then opened once through its permanent link by someone with no token: the
    // change and the view come to the feed, and the view to the views of the files.
    let public = app
        .call(&user, "/toggle-file-access", Some(json!({ "id": poster })))
        .await;
    assert_eq!(public.status, StatusCode::OK, "{}", public.body);
    let permanent = public.body["downloadUrl"].as_str().unwrap().to_string();
    assert!(permanent.ends_with(&format!("/p/{poster}")), "{permanent}");
    browser
        .wait_for_text("#events li:first-child", "poster.txt was made public.", 15)
        .await;
    let opened = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(&permanent)
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status(), StatusCode::TEMPORARY_REDIRECT);
    browser
        .wait_for_text("#events li:first-child", "Someone opened poster.txt.", 15)
        .await;
    let viewed = browser
        .wait_for_text(
            &format!("#views li[data-id='{poster}']"),
            "poster.txt (public): 1 view in this period, 1 in all.",
            15,
        )
        .await;
    assert!(viewed.contains("Last opened"), "{viewed}");
    let said = page
        .find(Locator::Css("#status"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(said, "", "the page said an error");
    browser.assert_accessible("the activity page").await;
    browser.screenshot("app-activity").await;

    // Narrowed to changes to files, the feed is read again with only those.
    page.find(Locator::Css("#eventKinds"))
        .await
        .unwrap()
        .select_by_value("changes")
        .await
        .unwrap();
    let kinds = browser
        .wait_until(
            "const l = document.querySelector('#events'); \
             return l.dataset.following === 'live' && l.children.length > 0 \
               && [...l.children].map((li) => li.dataset.kind).join(',')",
            10,
            "the feed read again with the changes only",
        )
        .await;
    assert_eq!(kinds, json!("access"));
    browser
        .wait_for_text("#events li:first-child", "poster.txt was made public.", 5)
        .await;
    browser.close().await;
}
