//! A mirror of an account's tree kept from the event feed alone: 200 random operations (uploads,
//! renames, copies, moves of files and folders, trash, restore, deletes, folders deleted, access
//! switched), and after each the follower reads the new events (the contract's `file` and the
//! mirror's kinds) and applies them; its files (name, folder path, trashed) must equal what
//! `/select-user-files` and `/select-trashed-files` say, with `/select-collections`' paths.
//!
//! An event shows once every transaction older than it has ended, anyone's (docs/behaviour.md),
//! so on a busy server the last operation's events can be a moment late. After each operation the
//! test renames a marker file, and the follower reads until it has seen that rename: the feed is
//! in commit order, so everything the operation recorded came before it.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use drive_tests::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

const KINDS: [&str; 7] = [
    "file", "trashed", "restored", "deleted", "moved", "renamed", "access",
];
const PATHS: [&str; 6] = ["/", "/A", "/A/B", "/C", "/C/D/E", "/F"];
const NAMES: [&str; 5] = ["a.txt", "b.txt", "c.txt", "d.md", "e.txt"];

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    name: String,
    folder: Option<String>,
    trashed: bool,
}

/// What the follower knows: files by id, folders by id (stored paths, `/a/b`).
#[derive(Default)]
struct Mirror {
    files: HashMap<String, Entry>,
    folders: HashMap<String, String>,
    cursor: Option<String>,
}

impl Mirror {
    /// Reads and applies events until the marker file `marker` has the name `mark`.
    async fn follow_to(&mut self, app: &TestApp, user: &TestUser, marker: &str, mark: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.files.get(marker).is_none_or(|m| m.name != mark) {
            assert!(Instant::now() < deadline, "no rename to {mark} in the feed");
            self.follow(app, user).await;
        }
    }

    /// Reads every event since the last call and applies it; an empty feed is waited on.
    async fn follow(&mut self, app: &TestApp, user: &TestUser) {
        loop {
            let mut body = json!({ "kinds": KINDS, "limit": 100, "wait": 10 });
            if let Some(cursor) = &self.cursor {
                body["since"] = json!(cursor);
            } else {
                body["since"] = json!("2000-01-01T00:00:00Z");
            }
            let page = app.call(user, "/select-drive-events", Some(body)).await;
            assert_eq!(page.status, 200, "{}", page.body);
            for event in page.body["events"].as_array().unwrap() {
                self.apply(app, user, event).await;
            }
            self.cursor = page.body["nextCursor"].as_str().map(str::to_string);
            if page.body["more"] != true {
                return;
            }
        }
    }

    async fn apply(&mut self, app: &TestApp, user: &TestUser, event: &Value) {
        let kind = event["kind"].as_str().unwrap();
        if let Some(folder) = event.get("folder").filter(|_| event.get("file").is_none()) {
            let path = folder["path"].as_str().unwrap().to_string();
            match kind {
                "moved" => {
                    let from = event["fromPath"].as_str().unwrap();
                    for stored in self.folders.values_mut() {
                        if stored == from || stored.starts_with(&format!("{from}/")) {
                            *stored = format!("{path}{}", &stored[from.len()..]);
                        }
                    }
                }
                "deleted" => {
                    let gone: Vec<String> = self
                        .folders
                        .iter()
                        .filter(|(_, p)| **p == path || p.starts_with(&format!("{path}/")))
                        .map(|(id, _)| id.clone())
                        .collect();
                    for file in self.files.values_mut() {
                        if file.folder.as_ref().is_some_and(|f| gone.contains(f)) {
                            file.folder = None;
                        }
                    }
                    self.folders.retain(|id, _| !gone.contains(id));
                }
                other => panic!("a folder event of kind {other}: {event}"),
            }
            return;
        }
        let file = &event["file"];
        let id = file["id"].as_str().unwrap().to_string();
        if kind == "deleted" {
            self.files.remove(&id);
            return;
        }
        let folder = file["folderId"].as_str().map(str::to_string);
        if let Some(folder) = &folder
            && !self.folders.contains_key(folder)
        {
            // A folder made on the way (an upload, a move or a copy to a path, a restore): its
            // path from the listing.
            for (id, path) in folders(app, user).await {
                self.folders.entry(id).or_insert(path);
            }
        }
        self.files.insert(
            id,
            Entry {
                name: file["fileName"].as_str().unwrap().to_string(),
                folder,
                trashed: !file["trashTime"].is_null(),
            },
        );
    }

    /// The tree as the follower has it: id → (name, path, trashed).
    fn tree(&self) -> BTreeMap<String, (String, String, bool)> {
        self.files
            .iter()
            .map(|(id, e)| {
                let path = e.folder.as_ref().map_or("/".to_string(), |f| {
                    self.folders.get(f).cloned().unwrap_or_else(|| format!("? {f}"))
                });
                (id.clone(), (e.name.clone(), path, e.trashed))
            })
            .collect()
    }
}

/// The account's folders: id → stored path (`/a/b`).
async fn folders(app: &TestApp, user: &TestUser) -> HashMap<String, String> {
    let collections = app.call(user, "/select-collections", None).await.body;
    collections["folders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let path = f["path"].as_str().unwrap().trim_end_matches('/').to_string();
            (f["id"].as_str().unwrap().to_string(), path)
        })
        .collect()
}

/// The tree as the drive lists it.
async fn listed(app: &TestApp, user: &TestUser) -> BTreeMap<String, (String, String, bool)> {
    let folders = folders(app, user).await;
    let mut tree = BTreeMap::new();
    for (route, trashed) in [("/select-user-files", false), ("/select-trashed-files", true)] {
        for file in app.call(user, route, None).await.body.as_array().unwrap() {
            let path = file["folderId"]
                .as_str()
                .map_or("/".to_string(), |f| folders[f].clone());
            tree.insert(
                file["id"].as_str().unwrap().to_string(),
                (file["fileName"].as_str().unwrap().to_string(), path, trashed),
            );
        }
    }
    tree
}

/// One random operation; answers what it was, for the failure message. Refusals (a name taken,
/// a folder into itself) are operations too: they must change nothing.
async fn operate(app: &TestApp, user: &TestUser, rng: &mut StdRng, n: usize, marker: &str) -> String {
    let live = app.call(user, "/select-user-files", None).await.body;
    let live: Vec<String> = live
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .filter(|id| id != marker)
        .collect();
    let trash = app.call(user, "/select-trashed-files", None).await.body;
    let trash: Vec<String> = trash
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect();
    let folder_ids: Vec<String> = folders(app, user).await.into_keys().collect();
    let path = PATHS[rng.random_range(0..PATHS.len())];
    let name = NAMES[rng.random_range(0..NAMES.len())];
    let pick = |rng: &mut StdRng, ids: &[String]| ids[rng.random_range(0..ids.len())].clone();
    let choice = if live.is_empty() {
        0
    } else {
        rng.random_range(0..11)
    };
    let (route, body) = match choice {
        0 | 1 => {
            let key = user.key(&format!("{n}-{name}"));
            let input = json!({ "type": "Text", "fileName": name, "fileSize": 3, "objectKey": key, "mimeType": "text/plain" });
            let urls = app.call(user, "/generate-file-urls", Some(input.clone())).await;
            assert!(
                post_form(&urls.body, b"abc".to_vec(), "text/plain")
                    .await
                    .is_success()
            );
            let mut insert = input;
            insert["folder"] = json!(path);
            ("/insert-file", insert)
        }
        2 => (
            "/rename-file",
            json!({ "fileId": pick(rng, &live), "fileName": name }),
        ),
        3 => (
            "/copy-files",
            json!({ "fileIds": [pick(rng, &live)], "folder": path }),
        ),
        4 => (
            "/move-files",
            json!({ "fileIds": [pick(rng, &live), pick(rng, &live)], "folder": path }),
        ),
        5 => ("/trash-files", json!([{ "id": pick(rng, &live) }])),
        6 if !trash.is_empty() => ("/restore-files", json!([{ "id": pick(rng, &trash) }])),
        7 => ("/delete-files", json!([{ "id": pick(rng, &live) }])),
        8 => ("/toggle-file-access", json!({ "id": pick(rng, &live) })),
        9 if !folder_ids.is_empty() && path != "/" => (
            "/move-folder",
            json!({ "folderId": pick(rng, &folder_ids), "path": path }),
        ),
        10 if !folder_ids.is_empty() && rng.random_bool(0.5) => {
            ("/delete-folder", json!({ "folderId": pick(rng, &folder_ids) }))
        }
        _ if !trash.is_empty() && rng.random_bool(0.1) => ("/purge-trashed-files", Value::Null),
        _ => (
            "/move-files",
            json!({ "fileIds": [pick(rng, &live)], "folder": path }),
        ),
    };
    let body = (!body.is_null()).then_some(body);
    let reply = app.call(user, route, body.clone()).await;
    assert!(
        reply.status.is_success() || [400, 409].contains(&reply.status.as_u16()),
        "{route} {body:?}: {} {}",
        reply.status,
        reply.body
    );
    format!("{route} {body:?} → {}", reply.status)
}

#[tokio::test]
async fn a_follower_of_the_feed_keeps_a_tree_identical_to_the_drive_s_through_200_operations() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let mut rng = StdRng::seed_from_u64(20261129);
    let mut mirror = Mirror::default();
    // The marker sits at the top, where no operation takes it (a folder move or delete cannot).
    let marker = app
        .upload(&user, "marker.txt", "Text", "text/plain", b"abc".to_vec())
        .await
        .to_string();
    let mut done = Vec::new();
    for n in 0..200 {
        done.push(operate(&app, &user, &mut rng, n, &marker).await);
        let mark = format!("mark-{n}.txt");
        let renamed = app
            .call(
                &user,
                "/rename-file",
                Some(json!({ "fileId": marker, "fileName": mark })),
            )
            .await;
        assert_eq!(renamed.status, 200, "{}", renamed.body);
        mirror.follow_to(&app, &user, &marker, &mark).await;
        if n % 20 == 19 {
            assert_eq!(mirror.tree(), listed(&app, &user).await, "after {n}: {done:#?}");
        }
    }
    let tree = listed(&app, &user).await;
    assert_eq!(mirror.tree(), tree, "{done:#?}");
    // The run did what it is meant to: every kind of change happened (the operations are drawn
    // from a fixed seed, but which file each takes depends on the listing, so the end state varies).
    for route in [
        "/rename-file",
        "/move-files",
        "/trash-files",
        "/delete-files",
        "/toggle-file-access",
        "/move-folder",
        "/delete-folder",
        "/copy-files",
        "/restore-files",
    ] {
        assert!(
            done.iter().any(|d| d.starts_with(route) && d.ends_with("200 OK")),
            "no {route} succeeded: {done:#?}"
        );
    }
}
