//! Organizing from the command line: `mv`, `tag`, `describe`, `collections`, `playlist` and
//! `gallery` (create, add, reorder), `archive` and `views`. Each is one route; with `--json`
//! the route's answer is printed as it came.

use anyhow::Result;
use serde_json::{Value, json};

use crate::output;
use drive_client::Client;

/// Posts `body` to `route` and prints the answer as JSON, or `say` of it for people.
async fn call(
    client: &Client,
    route: &str,
    body: Value,
    json: bool,
    say: impl Fn(&Value) -> String,
) -> Result<()> {
    let answer: Value = client.post(route, &body).await?;
    if json {
        return output::print_json(&answer);
    }
    println!("{}", say(&answer));
    Ok(())
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("?")
}

fn count(value: &Value) -> usize {
    value.as_array().map_or(0, Vec::len)
}

/// `drive mv ID... --to PATH`: `/move-files` (`/` is the top).
pub async fn move_files(client: &Client, ids: &[String], to: &str, json: bool) -> Result<()> {
    let body = json!({ "fileIds": ids, "folder": to });
    call(client, "/move-files", body, json, |a| {
        let folder = a["folder"]["path"].as_str().unwrap_or("/");
        format!("moved {} file(s) to {folder}", count(&a["moved"]))
    })
    .await
}

/// `drive tag ID... --tags a,b [--remove]`: `/tag-files`.
pub async fn tag(client: &Client, ids: &[String], tags: &[String], remove: bool, json: bool) -> Result<()> {
    let body = json!({ "fileIds": ids, "tags": tags, "action": if remove { "remove" } else { "add" } });
    call(client, "/tag-files", body, json, |a| {
        let names: Vec<&str> = a["tags"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| text(&t["text"]))
            .collect();
        format!(
            "{} {} on {} file(s)",
            if remove { "took off" } else { "put" },
            names.join(", "),
            count(&a["updated"])
        )
    })
    .await
}

/// `drive describe ID TEXT`: `/update-file-description` (empty clears).
pub async fn describe(client: &Client, id: &str, description: &str, json: bool) -> Result<()> {
    let body = json!({ "fileId": id, "description": description });
    call(client, "/update-file-description", body, json, |_| {
        if description.is_empty() {
            format!("cleared {id}'s description")
        } else {
            format!("described {id}")
        }
    })
    .await
}

/// `drive collections`: folders, playlists, galleries and tags, one a line.
pub async fn collections(client: &Client, json: bool) -> Result<()> {
    let answer: Value = client.post_empty("/select-collections").await?;
    if json {
        return output::print_json(&answer);
    }
    for folder in answer["folders"].as_array().into_iter().flatten() {
        println!(
            "folder    {}  {}  {} file(s)",
            text(&folder["id"]),
            text(&folder["path"]),
            folder["fileCount"]
        );
    }
    for (kind, key) in [("playlist", "playlists"), ("gallery", "galleries")] {
        for item in answer[key].as_array().into_iter().flatten() {
            let access = if item["isPublic"] == true {
                "public"
            } else {
                "private"
            };
            println!(
                "{kind:<9} {}  {}  {access}  {} file(s)",
                text(&item["id"]),
                text(&item["title"]),
                item["fileCount"]
            );
        }
    }
    for tag in answer["tags"].as_array().into_iter().flatten() {
        println!(
            "tag       {}  {}  {} file(s)",
            text(&tag["id"]),
            text(&tag["text"]),
            tag["fileCount"]
        );
    }
    Ok(())
}

/// A playlist or a gallery: the routes differ by name only.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Playlist,
    Gallery,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Playlist => "playlist",
            Kind::Gallery => "gallery",
        }
    }

    fn id_field(self) -> &'static str {
        match self {
            Kind::Playlist => "playlistId",
            Kind::Gallery => "galleryId",
        }
    }
}

fn said(kind: Kind) -> impl Fn(&Value) -> String {
    move |a: &Value| {
        let skipped = count(&a["skipped"]);
        format!(
            "{} {} {:?}: {} file(s){}",
            kind.name(),
            text(&a["id"]),
            text(&a["title"]),
            a["fileCount"],
            if skipped > 0 {
                format!(", {skipped} skipped (not admissible)")
            } else {
                String::new()
            }
        )
    }
}

pub struct Made<'a> {
    pub title: &'a str,
    pub ids: &'a [String],
    pub featured: &'a [String],
    pub description: Option<&'a str>,
    pub public: bool,
}

/// `drive playlist|gallery create TITLE [ID...]`.
pub async fn create(client: &Client, kind: Kind, made: &Made<'_>, json: bool) -> Result<()> {
    let mut body = json!({ "title": made.title, "fileIds": made.ids, "isPublic": made.public });
    if let Kind::Gallery = kind {
        body["featuredIds"] = json!(made.featured);
        body["description"] = json!(made.description);
    }
    call(
        client,
        &format!("/create-{}", kind.name()),
        body,
        json,
        said(kind),
    )
    .await
}

/// `drive playlist|gallery add ID FILE...`.
pub async fn add(
    client: &Client,
    kind: Kind,
    id: &str,
    ids: &[String],
    featured: &[String],
    json: bool,
) -> Result<()> {
    let mut body = json!({ kind.id_field(): id, "fileIds": ids });
    if let Kind::Gallery = kind {
        body["featuredIds"] = json!(featured);
    }
    call(
        client,
        &format!("/add-to-{}", kind.name()),
        body,
        json,
        said(kind),
    )
    .await
}

/// `drive playlist|gallery reorder ID FILE...`: the named files first, in that order.
pub async fn reorder(client: &Client, kind: Kind, id: &str, ids: &[String], json: bool) -> Result<()> {
    let body = json!({ kind.id_field(): id, "fileIds": ids });
    call(
        client,
        &format!("/reorder-{}", kind.name()),
        body,
        json,
        said(kind),
    )
    .await
}

/// `drive archive (ID... | --gallery ID | --playlist ID) [--title T]`: a zip built by a job.
pub async fn archive(client: &Client, source: Value, title: Option<&str>, json: bool) -> Result<()> {
    let mut body = source;
    body["title"] = json!(title);
    call(client, "/create-archive-request", body, json, |a| {
        format!(
            "job {} queued: the archive lands beside the first file (drive jobs list)",
            text(&a["job"]["id"])
        )
    })
    .await
}

/// `drive views [ID...] [--since DATE] [--limit N]`: opens by others, most opened first.
pub async fn views(
    client: &Client,
    ids: &[String],
    since: Option<&str>,
    limit: Option<u32>,
    json: bool,
) -> Result<()> {
    let body = json!({
        "fileIds": (!ids.is_empty()).then_some(ids),
        "since": since,
        "limit": limit,
    });
    let answer: Value = client.post("/select-file-views", &body).await?;
    if json {
        return output::print_json(&answer);
    }
    println!("since {}", text(&answer["since"]));
    for file in answer["files"].as_array().into_iter().flatten() {
        println!(
            "{}  {}  {} view(s), {} in all",
            text(&file["id"]),
            text(&file["fileName"]),
            file["views"],
            file["allViews"]
        );
    }
    Ok(())
}
