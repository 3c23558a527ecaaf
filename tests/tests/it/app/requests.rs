//! File requests in the app (`#/requests/`): one made from the form is the API's with what was
//! typed; a sender without an account drops a file under a hostile name, which the app shows as
//! text with the file linked; closing it in the app closes it for senders; deleting it asks
//! first, and what arrived stays.

use drive_tests::TestApp;
use drive_tests::browser::Browser;
use drive_tests::senders::{Sender, call};
use fantoccini::Locator;
use serde_json::{Value, json};

use super::{click, signed_in, type_into, with_password};

/// What `script` (a function body) answers in the page.
async fn run(browser: &Browser, script: &str) -> Value {
    browser.client.execute(script, vec![]).await.unwrap()
}

#[tokio::test]
async fn a_request_made_in_the_app_shows_a_hostile_senders_drop_as_text_and_is_closed_and_deleted_there() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    with_password(&app, &user).await;
    let browser = signed_in(&app, &user).await;
    let page = &browser.client;
    page.goto(&format!("{}/app/#/requests/", app.url)).await.unwrap();
    browser.wait_for_text("h1", "File requests", 10).await;
    browser
        .wait_for_text("#requests", "No file requests yet.", 10)
        .await;

    // Made from the form, with every field filled in.
    type_into(&browser, "#requestTitle", "Tax papers 2026").await;
    type_into(&browser, "#requestMessage", "Scans of receipts, please.").await;
    type_into(&browser, "#requestFolder", "/Clients/Acme").await;
    run(
        &browser,
        "document.getElementById('requestExpiry').value = '2099-06-15T12:00'",
    )
    .await;
    type_into(&browser, "#requestMaxMb", "200").await;
    type_into(&browser, "#requestTypes", ".pdf, Image").await;
    type_into(&browser, "#requestMaxFiles", "5").await;
    click(&browser, "#createRequest").await;
    browser
        .wait_for_text("#status", "Request “Tax papers 2026” made", 10)
        .await;
    browser.wait_for_text("#requests", "Tax papers 2026", 10).await;

    let listed = app.call(&user, "/select-file-requests", None).await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    let requests = listed.body["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 1, "{}", listed.body);
    let request = &requests[0];
    let id = request["id"].as_str().unwrap().to_string();
    assert_eq!(request["title"], "Tax papers 2026", "{request}");
    assert_eq!(request["message"], "Scans of receipts, please.", "{request}");
    assert_eq!(request["folder"]["path"], "/Clients/Acme/", "{request}");
    assert_eq!(request["maxBytes"], 200_000_000, "{request}");
    assert_eq!(request["acceptTypes"], json!([".pdf", "Image"]), "{request}");
    assert_eq!(request["maxFilesPerSender"], 5, "{request}");
    assert_eq!(request["open"], true, "{request}");
    // A local time in June 2099 is that day in UTC too, whatever the browser's zone.
    let expires = request["expireTime"].as_str().unwrap_or_default();
    assert!(expires.starts_with("2099-06-15"), "{request}");
    // The link to send people, as text to copy.
    let item = format!("#requests li[data-id='{id}']");
    let link = run(
        &browser,
        &format!("return document.querySelector(\"{item} input.link\").value"),
    )
    .await;
    assert_eq!(link, json!(format!("{}/requests/{id}", app.url)));
    assert_eq!(link, request["url"]);

    // A sender with a hostile name and note drops a file; the app shows both as text.
    let hostile = "<img src=x onerror=alert(1)>";
    let note = "Both scans, <b>signed</b>.";
    let sender = Sender::start(&app, &id, hostile, Some(note)).await;
    let bytes = b"%PDF-1.4 the scan".to_vec();
    let added = sender.announce(&app, "scan.pdf", bytes.len()).await;
    assert_eq!(added.status, 200, "{}", added.body);
    sender.send_bytes(&added.body, &bytes).await;
    let arrived = sender.finish_file(&app, &added.body["arrivalId"]).await;
    assert_eq!(arrived.status, 200, "{}", arrived.body);
    let finished = sender.finish(&app).await;
    assert_eq!(finished.status, 200, "{}", finished.body);
    // The sender is told no file id; the owner's listing has it.
    let owned = app.call(&user, "/select-file-requests", None).await;
    let file = owned.body["requests"][0]["drops"][0]["files"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no file arrived: {}", owned.body))
        .to_string();

    click(&browser, "#refreshRequests").await;
    browser
        .wait_for_text(&format!("{item} .drops"), hostile, 10)
        .await;
    let shown = run(
        &browser,
        &format!(
            "const d = document.querySelector(\"{item} .drops\"); \
             return [d.querySelector('.sender').textContent, d.querySelector('.note').textContent]"
        ),
    )
    .await;
    assert_eq!(shown, json!([hostile, note]));
    let made = run(
        &browser,
        "return document.querySelectorAll('#main img, #main b').length",
    )
    .await;
    assert_eq!(made, json!(0), "the name and note made elements");
    assert!(page.get_alert_text().await.is_err(), "an alert opened");
    let linked = page
        .find(Locator::Css(&format!("{item} .drops a[href='#/file/{file}']")))
        .await
        .expect("the file that arrived, linked to its preview");
    assert_eq!(linked.text().await.unwrap(), "scan.pdf");
    browser
        .assert_accessible("the file requests page with a drop")
        .await;

    // Closed in the app: the API says so, and a sender is turned away.
    click(&browser, &format!("{item} button.toggle")).await;
    browser
        .wait_for_text("#status", "“Tax papers 2026” is closed", 10)
        .await;
    browser
        .wait_until(
            &format!("return document.querySelector(\"{item}\")?.dataset.open === 'false'"),
            10,
            "the list showing the request closed",
        )
        .await;
    let closed = app
        .call(
            &user,
            "/select-file-requests",
            Some(json!({ "requestIds": [id] })),
        )
        .await;
    assert_eq!(closed.body["requests"][0]["open"], false, "{}", closed.body);
    assert!(
        closed.body["requests"][0]["closeTime"].is_string(),
        "{}",
        closed.body
    );
    let refused = call(
        &app,
        "/start-request-drop",
        json!({ "requestId": id, "senderName": "Late" }),
    )
    .await;
    assert_eq!(refused.status, 403, "{}", refused.body);

    // Deleting asks first: nothing goes until it is confirmed; then the request goes, its file stays.
    click(&browser, &format!("{item} button.delete")).await;
    browser
        .wait_for_text(&format!("{item} .confirm"), "Its link stops working", 10)
        .await;
    let still = app.call(&user, "/select-file-requests", None).await;
    assert_eq!(
        still.body["requests"].as_array().unwrap().len(),
        1,
        "{}",
        still.body
    );
    click(&browser, &format!("{item} button.confirm-delete")).await;
    browser
        .wait_for_text("#requests", "No file requests yet.", 10)
        .await;
    let gone = app.call(&user, "/select-file-requests", None).await;
    assert_eq!(gone.body["requests"], json!([]), "{}", gone.body);
    assert_eq!(app.download(&user, &file).await, bytes, "what arrived stays");
    browser.close().await;
}
