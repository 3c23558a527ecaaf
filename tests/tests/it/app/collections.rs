//! Playlists and galleries in the app: a playlist made through the API is opened from the list,
//! reordered with a Move up button and then by dragging (HTML5 drag and drop, the page's own
//! handlers given real DragEvents), each order read back from the API exactly; renamed, zipped
//! in its order and deleted after the confirm step, its files staying in the drive. At 360 px
//! wide nothing scrolls sideways.

use drive_core::id::FileId;
use drive_tests::browser::Browser;
use drive_tests::{TestApp, TestUser, media};
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{click, signed_in, type_into, with_password};

/// The playlist's files in order, as `/select-collections` answers them.
async fn held(app: &TestApp, user: &TestUser, playlist: &str) -> Vec<String> {
    let all = app.call(user, "/select-collections", None).await;
    assert_eq!(all.status, StatusCode::OK, "{}", all.body);
    let found = all.body["playlists"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == playlist)
        .unwrap_or_else(|| panic!("no playlist {playlist}: {}", all.body))
        .clone();
    strings(&found["fileIds"])
}

fn strings(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

fn ids(files: &[FileId]) -> Vec<String> {
    files.iter().map(ToString::to_string).collect()
}

/// The file ids of the list's items, top to bottom, as the page shows them.
async fn shown(browser: &Browser) -> Vec<String> {
    let listed = browser
        .client
        .execute(
            "return [...document.querySelectorAll('#items li[data-id]')].map((li) => li.dataset.id)",
            vec![],
        )
        .await
        .unwrap();
    strings(&listed)
}

/// Empties `#status`, so that the next sentence it shows is waited for.
async fn clear_status(browser: &Browser) {
    browser
        .client
        .execute("document.getElementById('status').textContent = ''", vec![])
        .await
        .unwrap();
}

/// Drags the item of `from` onto the item of `to` as a person's drag does: dragstart on the
/// source, dragenter, dragover and drop on the target, dragend on the source, all carrying one
/// DataTransfer (WebDriver's own drag does not drive HTML5 drag and drop reliably). Answers
/// whether the target took the dragover and the drop (the page cancelled them) and what the
/// page put in the DataTransfer.
async fn drag(browser: &Browser, from: FileId, to: FileId) -> Value {
    let script = r#"
        const [from, to] = [arguments[0], arguments[1]]
          .map((id) => document.querySelector(`#items li[data-id="${id}"]`));
        const carried = new DataTransfer();
        const fire = (element, type) => element.dispatchEvent(
          new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: carried }));
        fire(from, 'dragstart');
        fire(to, 'dragenter');
        const over = !fire(to, 'dragover');
        const dropped = !fire(to, 'drop');
        fire(from, 'dragend');
        return [over, dropped, carried.getData('application/x-drive-file-id')];
    "#;
    browser
        .client
        .execute(script, vec![json!(from), json!(to)])
        .await
        .unwrap()
}

#[tokio::test]
async fn a_playlist_is_reordered_in_the_app_by_button_and_by_drag_renamed_zipped_and_deleted() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    with_password(&app, &user).await;
    let mut videos = Vec::new();
    for (name, source) in [
        ("one.mp4", "testsrc=size=160x120:rate=10"),
        ("two.mp4", "testsrc2=size=160x120:rate=10"),
        ("three.mp4", "smptebars=size=160x120:rate=10"),
    ] {
        let bytes = media::video_of(source, 1.0, &[]);
        videos.push(app.upload(&user, name, "Video", "video/mp4", bytes).await);
    }
    let [one, two, three] = [videos[0], videos[1], videos[2]];
    let made = app
        .call(
            &user,
            "/create-playlist",
            Some(json!({ "title": "Road trip", "fileIds": [one, two, three] })),
        )
        .await;
    assert_eq!(made.status, StatusCode::OK, "{}", made.body);
    assert_eq!(
        strings(&made.body["fileIds"]),
        ids(&[one, two, three]),
        "{}",
        made.body
    );
    let playlist = made.body["id"].as_str().unwrap().to_string();

    let browser = signed_in(&app, &user).await;
    let page = &browser.client;

    // Listed with its count, and opened from the list.
    page.goto(&format!("{}/app/#/collections/", app.url))
        .await
        .unwrap();
    let listed = browser.wait_for_text("#playlists", "Road trip", 10).await;
    assert!(listed.contains("3 files"), "{listed}");
    browser.wait_for_text("#galleries", "No galleries yet.", 10).await;
    browser.assert_accessible("the playlists and galleries").await;
    click(&browser, &format!("#playlists li[data-id='{playlist}'] a")).await;
    browser.wait_for_text("#collectionTitle", "Road trip", 10).await;
    browser.wait_for_text("#items", "three.mp4", 10).await;
    assert_eq!(shown(&browser).await, ids(&[one, two, three]));
    let link = page
        .execute(
            "return document.querySelector(`#items li[data-id='${arguments[0]}'] a`).getAttribute('href')",
            vec![json!(two)],
        )
        .await
        .unwrap();
    assert_eq!(link, json!(format!("#/file/{two}")));
    browser.assert_accessible("a playlist").await;

    // From the keyboard: three.mp4 up one place, saved, and the focus stays on its button.
    click(&browser, "button[aria-label='Move up: three.mp4']").await;
    browser
        .wait_for_text("#status", "Moved three.mp4 to place 2 of 3.", 10)
        .await;
    assert_eq!(held(&app, &user, &playlist).await, ids(&[one, three, two]));
    assert_eq!(shown(&browser).await, ids(&[one, three, two]));
    let focused = page
        .execute("return document.activeElement.getAttribute('aria-label')", vec![])
        .await
        .unwrap();
    assert_eq!(focused, json!("Move up: three.mp4"));

    // Dragged: one.mp4 onto two.mp4, the last place; the page takes the drop and saves it.
    clear_status(&browser).await;
    let dragged = drag(&browser, one, two).await;
    assert_eq!(dragged, json!([true, true, one]), "the page took the drag");
    browser
        .wait_for_text("#status", "Moved one.mp4 to place 3 of 3.", 10)
        .await;
    assert_eq!(held(&app, &user, &playlist).await, ids(&[three, two, one]));
    assert_eq!(shown(&browser).await, ids(&[three, two, one]));

    // Renamed here, seen by the API.
    type_into(&browser, "#title", "Night drive").await;
    click(&browser, "#renameButton").await;
    browser
        .wait_for_text("#status", "Renamed to “Night drive”.", 10)
        .await;
    browser.wait_for_text("#collectionTitle", "Night drive", 10).await;
    let all = app.call(&user, "/select-collections", None).await.body;
    let playlists = all["playlists"].as_array().unwrap();
    assert_eq!(playlists.len(), 1, "{all}");
    assert_eq!(playlists[0]["id"], playlist.as_str(), "{all}");
    assert_eq!(playlists[0]["title"], "Night drive", "{all}");
    assert_eq!(playlists[0]["fileCount"], 3, "{all}");

    // Zipped under its title, its files in its order.
    click(&browser, "#zipButton").await;
    browser
        .wait_for_text("#status", "Zipping “Night drive”: Night drive.zip", 10)
        .await;
    let jobs = app.call(&user, "/select-file-jobs", None).await.body;
    let zip = jobs["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobType"] == "zip")
        .unwrap_or_else(|| panic!("no zip job: {jobs}"));
    assert_eq!(strings(&zip["fileIds"]), ids(&[three, two, one]), "{zip}");

    browser.assert_usable_narrow("a playlist").await;

    // Deleting asks first; the question alone deletes nothing.
    click(&browser, "#deleteCollection").await;
    browser
        .wait_for_text(
            "#ending",
            "Delete the playlist “Night drive”? Its files stay in your drive.",
            10,
        )
        .await;
    let before = app.call(&user, "/select-collections", None).await.body;
    assert_eq!(before["playlists"].as_array().unwrap().len(), 1, "{before}");
    click(&browser, "#confirmYes").await;
    browser.wait_for_text("#playlists", "No playlists yet.", 10).await;
    let after = app.call(&user, "/select-collections", None).await.body;
    assert_eq!(after["playlists"], json!([]), "{after}");
    let library = app.call(&user, "/select-user-files", None).await.body;
    let mut kept: Vec<String> = library
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {library}"))
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect();
    kept.sort_unstable();
    let mut expected = ids(&[one, two, three]);
    expected.sort_unstable();
    assert_eq!(kept, expected, "its files stay: {library}");
    browser.close().await;
}
