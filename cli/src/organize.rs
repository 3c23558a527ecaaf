//! Organizing from the command line: `mv`, `tag`, `describe`, `collections`, `playlist` and
//! `gallery` (create, add, reorder), `archive` and `views`. Each is one route; with `--json`
//! the route's answer is printed as it came.

use anyhow::Result;
use uuid::Uuid;

use crate::output::{self, show};
use drive_client::Client;
use drive_client::organize::{ArchiveOf, Collection, CollectionKind, NewCollection, ViewsQuery};

/// `drive mv ID... --to PATH`: `/move-files` (`/` is the top).
pub async fn move_files(client: &Client, ids: &[Uuid], to: &str, json: bool) -> Result<()> {
    let moved = client.move_files(ids, to).await?;
    show(&moved, json, |a| {
        let folder = a.folder.as_ref().map_or("/", |f| f.path.as_str());
        format!("moved {} file(s) to {folder}", a.moved.len())
    })
}

/// `drive tag ID... --tags a,b [--remove]`: `/tag-files`.
pub async fn tag(client: &Client, ids: &[Uuid], tags: &[String], remove: bool, json: bool) -> Result<()> {
    let tagged = client.tag_files(ids, tags, remove).await?;
    show(&tagged, json, |a| {
        let names: Vec<&str> = a.tags.iter().map(|t| t.text.as_str()).collect();
        format!(
            "{} {} on {} file(s)",
            if remove { "took off" } else { "put" },
            names.join(", "),
            a.updated.len()
        )
    })
}

/// `drive describe ID TEXT`: `/update-file-description` (empty clears).
pub async fn describe(client: &Client, id: Uuid, description: &str, json: bool) -> Result<()> {
    let described = client.describe(id, description).await?;
    show(&described, json, |_| {
        if description.is_empty() {
            format!("cleared {id}'s description")
        } else {
            format!("described {id}")
        }
    })
}

/// `drive collections`: folders, playlists, galleries and tags, one a line.
pub async fn collections(client: &Client, json: bool) -> Result<()> {
    let answer = client.collections().await?;
    if json {
        return output::print_json(&answer);
    }
    for folder in &answer.folders {
        println!(
            "folder    {}  {}  {} file(s)",
            folder.id, folder.path, folder.file_count
        );
    }
    let access = |public: bool| if public { "public" } else { "private" };
    for playlist in &answer.playlists {
        println!(
            "{:<9} {}  {}  {}  {} file(s)",
            "playlist",
            playlist.id,
            playlist.title,
            access(playlist.is_public),
            playlist.file_count
        );
    }
    for gallery in &answer.galleries {
        println!(
            "{:<9} {}  {}  {}  {} file(s)",
            "gallery",
            gallery.id,
            gallery.title,
            access(gallery.is_public),
            gallery.file_count
        );
    }
    for tag in &answer.tags {
        println!("tag       {}  {}  {} file(s)", tag.id, tag.text, tag.file_count);
    }
    Ok(())
}

fn said(kind: CollectionKind) -> impl FnOnce(&Collection) -> String {
    move |a: &Collection| {
        let skipped = a.skipped.as_ref().map_or(0, Vec::len);
        format!(
            "{} {} {:?}: {} file(s){}",
            kind.name(),
            a.id,
            a.title,
            a.file_count,
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
    pub ids: &'a [Uuid],
    pub featured: &'a [Uuid],
    pub description: Option<&'a str>,
    pub public: bool,
}

/// `drive playlist|gallery create TITLE [ID...]`.
pub async fn create(client: &Client, kind: CollectionKind, made: &Made<'_>, json: bool) -> Result<()> {
    let gallery = kind == CollectionKind::Gallery;
    let new = NewCollection {
        title: made.title.to_string(),
        file_ids: made.ids.to_vec(),
        is_public: made.public,
        featured_ids: gallery.then(|| made.featured.to_vec()),
        description: made.description.filter(|_| gallery).map(str::to_string),
    };
    let collection = client.create_collection(kind, &new).await?;
    show(&collection, json, said(kind))
}

/// `drive playlist|gallery add ID FILE...`.
pub async fn add(
    client: &Client,
    kind: CollectionKind,
    id: Uuid,
    ids: &[Uuid],
    featured: &[Uuid],
    json: bool,
) -> Result<()> {
    let collection = client.add_to_collection(kind, id, ids, featured).await?;
    show(&collection, json, said(kind))
}

/// `drive playlist|gallery reorder ID FILE...`: the named files first, in that order.
pub async fn reorder(
    client: &Client,
    kind: CollectionKind,
    id: Uuid,
    ids: &[Uuid],
    json: bool,
) -> Result<()> {
    let collection = client.reorder_collection(kind, id, ids).await?;
    show(&collection, json, said(kind))
}

/// `drive archive (ID... | --gallery ID | --playlist ID) [--title T]`: a zip built by a job.
pub async fn archive(client: &Client, of: &ArchiveOf, title: Option<&str>, json: bool) -> Result<()> {
    let created = client.archive(of, title).await?;
    if json {
        return output::print_json(&created);
    }
    println!(
        "job {} queued: the archive lands beside the first file (drive jobs list)",
        created.queued()?.id
    );
    Ok(())
}

/// `drive views [ID...] [--since DATE] [--limit N]`: opens by others, most opened first.
pub async fn views(client: &Client, query: &ViewsQuery, json: bool) -> Result<()> {
    let answer = client.views(query).await?;
    if json {
        return output::print_json(&answer);
    }
    println!("since {}", answer.since);
    for file in &answer.files {
        println!(
            "{}  {}  {} view(s), {} in all",
            file.id, file.file_name, file.views, file.all_views
        );
    }
    Ok(())
}
