//! The trash in the app: files trashed through the API are listed with the folder they were in;
//! one is restored (the API lists it in the library again, in its folder), one deleted forever
//! after the confirm step (gone from the trash, the library and its link), and the rest emptied
//! away. At 360 px wide nothing scrolls sideways.

use drive_core::id::FileId;
use drive_tests::browser::Browser;
use drive_tests::{TestApp, TestUser};
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{click, signed_in, with_password};

/// The ids of a list of file records, sorted.
fn ids_of(list: &Value) -> Vec<String> {
    let mut ids: Vec<String> = list
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort_unstable();
    ids
}

fn sorted(files: &[FileId]) -> Vec<String> {
    let mut ids: Vec<String> = files.iter().map(ToString::to_string).collect();
    ids.sort_unstable();
    ids
}

async fn trashed(app: &TestApp, user: &TestUser) -> Vec<String> {
    let reply = app.call(user, "/select-trashed-files", None).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    ids_of(&reply.body)
}

async fn library(app: &TestApp, user: &TestUser) -> Vec<String> {
    let reply = app.call(user, "/select-user-files", None).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    ids_of(&reply.body)
}

/// Empties `#status`, so that the next sentence it shows is waited for.
async fn clear_status(browser: &Browser) {
    browser
        .client
        .execute("document.getElementById('status').textContent = ''", vec![])
        .await
        .unwrap();
}

#[tokio::test]
async fn trashed_files_are_restored_deleted_forever_after_a_confirm_and_emptied_in_the_app() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    with_password(&app, &user).await;
    let mut made = Vec::new();
    for name in ["keep.txt", "gone.txt", "old.txt", "stays.txt"] {
        made.push(
            app.upload(&user, name, "Text", "text/plain", name.as_bytes().to_vec())
                .await,
        );
    }
    let [keep, gone, old, stays] = [made[0], made[1], made[2], made[3]];
    let moved = app
        .call(
            &user,
            "/move-files",
            Some(json!({ "fileIds": [keep], "folder": "/Docs" })),
        )
        .await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.body);
    let thrown = app
        .call(
            &user,
            "/trash-files",
            Some(json!([{ "id": keep }, { "id": gone }, { "id": old }])),
        )
        .await;
    assert_eq!(thrown.status, StatusCode::OK, "{}", thrown.body);
    assert_eq!(trashed(&app, &user).await, sorted(&[keep, gone, old]));
    assert_eq!(library(&app, &user).await, sorted(&[stays]));

    let browser = signed_in(&app, &user).await;
    let page = &browser.client;
    page.goto(&format!("{}/app/#/trash/", app.url)).await.unwrap();
    browser.wait_for_text("#trashed", "old.txt", 10).await;
    let row = |id: FileId| format!("#trashed tr[data-id='{id}']");
    browser.wait_for_text(&row(keep), "/Docs/", 10).await;
    browser.wait_for_text(&row(gone), "gone.txt", 10).await;
    let listed = browser.wait_for_text("#trashed", "keep.txt", 10).await;
    assert!(!listed.contains("stays.txt"), "only the trash: {listed}");
    browser.assert_accessible("the trash").await;

    // Restored: back in the library, in its folder, and off the page's list.
    click(&browser, &format!("{} input[type=checkbox]", row(keep))).await;
    browser.wait_for_text(".actions", "1 selected", 10).await;
    click(&browser, "#restore").await;
    browser
        .wait_for_text("#status", "Restored 1 file(s): each is back in its folder.", 10)
        .await;
    assert_eq!(trashed(&app, &user).await, sorted(&[gone, old]));
    assert_eq!(library(&app, &user).await, sorted(&[keep, stays]));
    let docs = app
        .call(&user, "/search-files", Some(json!({ "folder": "/Docs" })))
        .await
        .body;
    assert_eq!(ids_of(&docs["files"]), sorted(&[keep]), "{docs}");
    let rows = page
        .execute(
            "return document.querySelectorAll(`#trashed tr[data-id='${arguments[0]}']`).length",
            vec![json!(keep)],
        )
        .await
        .unwrap();
    assert_eq!(rows, json!(0), "the restored file left the list");

    // Deleting forever asks first, and the question alone deletes nothing; kept, the focus goes
    // back to the button.
    clear_status(&browser).await;
    click(&browser, &format!("{} input[type=checkbox]", row(gone))).await;
    click(&browser, "#deleteForever").await;
    browser
        .wait_for_text(
            "#confirmQuestion",
            "Delete 1 file(s) forever? This cannot be undone.",
            10,
        )
        .await;
    browser
        .assert_accessible("the trash asking before deleting")
        .await;
    click(&browser, "#confirmNo").await;
    let focused = page
        .execute("return document.activeElement.id", vec![])
        .await
        .unwrap();
    assert_eq!(focused, json!("deleteForever"));
    assert_eq!(trashed(&app, &user).await, sorted(&[gone, old]));
    click(&browser, "#deleteForever").await;
    click(&browser, "#confirmYes").await;
    browser
        .wait_for_text("#status", "Deleted 1 file(s) forever.", 10)
        .await;
    assert_eq!(trashed(&app, &user).await, sorted(&[old]));
    assert_eq!(library(&app, &user).await, sorted(&[keep, stays]));
    app.call(&user, "/generate-download-url", Some(json!({ "id": gone })))
        .await
        .assert_error(403, "file_not_found");

    browser.assert_usable_narrow("the trash").await;

    // Emptied, after its own question: what was left in the trash is gone for good.
    click(&browser, "#emptyTrash").await;
    browser
        .wait_for_text(
            "#confirmQuestion",
            "Delete everything in the trash (1 file(s)) forever? This cannot be undone.",
            10,
        )
        .await;
    assert_eq!(trashed(&app, &user).await, sorted(&[old]));
    click(&browser, "#confirmYes").await;
    browser
        .wait_for_text("#status", "The trash is empty: 1 file(s) deleted forever.", 10)
        .await;
    browser.wait_for_text("#trashed", "The trash is empty.", 10).await;
    assert_eq!(trashed(&app, &user).await, Vec::<String>::new());
    assert_eq!(library(&app, &user).await, sorted(&[keep, stays]));
    browser.close().await;
}
