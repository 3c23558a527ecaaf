//! Reviews in the app (`#/reviews/`): one made on a video picked from the account's videos and
//! tracks; notes left through the review page's route show in timeline order, a hostile
//! reviewer's name as text; a reply typed in the app and a note marked resolved (and not again)
//! are the API's; the review's link is closed there after a confirm step.

use drive_tests::browser::Browser;
use drive_tests::senders::call;
use drive_tests::{TestApp, media};
use fantoccini::Locator;
use serde_json::{Value, json};

use super::{click, signed_in, type_into, with_password};

/// What `script` (a function body) answers in the page.
async fn run(browser: &Browser, script: &str) -> Value {
    browser.client.execute(script, vec![]).await.unwrap()
}

#[tokio::test]
async fn a_review_made_in_the_app_lists_its_notes_in_timeline_order_and_takes_replies_and_resolutions() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    with_password(&app, &user).await;
    let video = app
        .upload(
            &user,
            "cut-1.mp4",
            "Video",
            "video/mp4",
            media::video_of("testsrc=size=160x120:rate=10", 2.0, &[]),
        )
        .await;
    // Not something a review takes: not offered.
    app.upload(&user, "script.txt", "Text", "text/plain", b"INT. DAY".to_vec())
        .await;

    let browser = signed_in(&app, &user).await;
    let page = &browser.client;
    page.goto(&format!("{}/app/#/reviews/", app.url)).await.unwrap();
    browser.wait_for_text("h1", "Reviews", 10).await;
    browser.wait_for_text("#reviews", "No reviews yet.", 10).await;

    // The choice offers the account's videos and tracks only; picking one fills in its id.
    let offered = browser
        .wait_until(
            "const v = [...document.querySelectorAll('#reviewFile option')].map((o) => o.value).filter(Boolean); \
             return v.length ? v : null",
            10,
            "the videos and tracks offered",
        )
        .await;
    assert_eq!(offered, json!([video.to_string()]));
    page.find(Locator::Css("#reviewFile"))
        .await
        .unwrap()
        .select_by_value(&video.to_string())
        .await
        .unwrap();
    let picked = run(&browser, "return document.getElementById('reviewFileId').value").await;
    assert_eq!(picked, json!(video.to_string()));
    type_into(&browser, "#reviewTitle", "Cut 1, first pass").await;
    click(&browser, "#createReview").await;
    browser
        .wait_for_text("#status", "Review “Cut 1, first pass” made", 10)
        .await;
    browser.wait_for_text("#reviews", "Cut 1, first pass", 10).await;

    let listed = app.call(&user, "/select-file-reviews", None).await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    let reviews = listed.body["reviews"].as_array().unwrap();
    assert_eq!(reviews.len(), 1, "{}", listed.body);
    assert_eq!(reviews[0]["title"], "Cut 1, first pass", "{}", listed.body);
    assert_eq!(reviews[0]["file"]["id"], video.to_string(), "{}", listed.body);
    let id = reviews[0]["id"].as_str().unwrap().to_string();
    let item = format!("#reviews li.review[data-id='{id}']");
    let link = run(
        &browser,
        &format!("return document.querySelector(\"{item} input.link\").value"),
    )
    .await;
    assert_eq!(link, json!(format!("{}/reviews/{id}", app.url)));

    // Two notes through the review page's route, the later moment first.
    let hostile = "<img src=x onerror=alert(1)>";
    let late = call(
        &app,
        "/add-review-note",
        json!({ "reviewId": id, "reviewerName": hostile, "text": "Logo <b>too</b> small", "seconds": 1.5 }),
    )
    .await;
    assert_eq!(late.status, 200, "{}", late.body);
    let late = late.body["id"].as_str().unwrap().to_string();
    let early = call(
        &app,
        "/add-review-note",
        json!({ "reviewId": id, "reviewerName": "Kim", "text": "Cut earlier.", "seconds": 0.25 }),
    )
    .await;
    assert_eq!(early.status, 200, "{}", early.body);

    click(&browser, "#refreshReviews").await;
    browser
        .wait_for_text(&format!("{item} ol.notes"), "Logo <b>too</b> small", 10)
        .await;
    let notes = run(
        &browser,
        &format!(
            "return [...document.querySelectorAll(\"{item} ol.notes > li\")].map((li) => \
             [li.querySelector('.at').textContent, li.querySelector('.reviewer').textContent, li.querySelector('.text').textContent])"
        ),
    )
    .await;
    assert_eq!(
        notes,
        json!([
            ["0:00", "Kim", "Cut earlier."],
            ["0:01", hostile, "Logo <b>too</b> small"]
        ])
    );
    let made = run(
        &browser,
        "return document.querySelectorAll('#main img, #main b').length",
    )
    .await;
    assert_eq!(made, json!(0), "a name or a note made elements");
    assert!(page.get_alert_text().await.is_err(), "an alert opened");
    browser.assert_accessible("the reviews page with notes").await;

    // A reply typed in the app, then the note marked resolved.
    let note = format!("{item} li.note[data-id='{late}']");
    type_into(&browser, &format!("#reply-{late}"), "Bigger in cut 2.").await;
    click(&browser, &format!("{note} button.send-reply")).await;
    browser
        .wait_for_text("#status", "Replied to the note of", 10)
        .await;
    browser
        .wait_for_text(&format!("{note} .replies"), "Bigger in cut 2.", 10)
        .await;
    click(&browser, &format!("{note} button.resolve")).await;
    let resolved = format!("return document.querySelector(\"{note}\")?.dataset.resolved");
    browser
        .wait_until(&format!("{resolved} === 'true'"), 10, "the note shown resolved")
        .await;

    let seen = app
        .call(&user, "/select-file-reviews", Some(json!({ "reviewIds": [id] })))
        .await;
    let notes = seen.body["reviews"][0]["notes"].as_array().unwrap().clone();
    let answered = notes
        .iter()
        .find(|n| n["id"] == late.as_str())
        .unwrap_or_else(|| panic!("the note is gone: {}", seen.body));
    assert_eq!(answered["resolved"], true, "{answered}");
    assert_eq!(answered["replies"].as_array().unwrap().len(), 1, "{answered}");
    assert_eq!(answered["replies"][0]["text"], "Bigger in cut 2.", "{answered}");
    assert_eq!(
        answered["replies"][0]["reviewer"],
        json!({ "name": user.handle, "owner": true }),
        "{answered}"
    );
    let other = notes.iter().find(|n| n["id"] != late.as_str()).unwrap();
    assert_eq!(other["resolved"], false, "only the note marked: {other}");

    // Marked unresolved again.
    click(&browser, &format!("{note} button.resolve")).await;
    browser
        .wait_until(
            &format!("{resolved} === 'false'"),
            10,
            "the note shown unresolved",
        )
        .await;
    let again = app
        .call(&user, "/select-file-reviews", Some(json!({ "reviewIds": [id] })))
        .await;
    let note_now = again.body["reviews"][0]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == late.as_str())
        .cloned()
        .unwrap();
    assert_eq!(note_now["resolved"], false, "{note_now}");

    // Closed after a confirm step: the page takes no more notes.
    click(&browser, &format!("{item} button.close")).await;
    click(&browser, &format!("{item} button.confirm-close")).await;
    browser
        .wait_until(
            &format!("return document.querySelector(\"{item}\")?.dataset.open === 'false'"),
            10,
            "the review shown closed",
        )
        .await;
    let closed = app
        .call(&user, "/select-file-reviews", Some(json!({ "reviewIds": [id] })))
        .await;
    assert!(
        closed.body["reviews"][0]["closeTime"].is_string(),
        "{}",
        closed.body
    );
    let refused = call(
        &app,
        "/add-review-note",
        json!({ "reviewId": id, "reviewerName": "Kim", "text": "One more.", "seconds": 1.0 }),
    )
    .await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    browser.close().await;
}
