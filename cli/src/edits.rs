//! The everyday verbs from the command line: `rename`, `cp`, `folder mv|rm`, `delete-tag`,
//! `playlist|gallery rename|remove|delete`, `request delete` and `review close`. Each is one
//! route; with `--json` the route's answer is printed as it came.

use anyhow::Result;
use uuid::Uuid;

use crate::output::show;
use drive_client::Client;
use drive_client::edits::Edited;
use drive_client::organize::CollectionKind;

/// `drive rename ID NAME`: `/rename-file`.
pub async fn rename(client: &Client, id: Uuid, name: &str, json: bool) -> Result<()> {
    let renamed = client.rename_file(id, name).await?;
    show(&renamed, json, |f| format!("renamed {} to {}", f.id, f.file_name))
}

/// `drive cp ID... --to PATH`: `/copy-files`.
pub async fn copy(client: &Client, ids: &[Uuid], to: &str, json: bool) -> Result<()> {
    let copied = client.copy_files(ids, to).await?;
    show(&copied, json, |a| {
        let folder = a.folder.as_ref().map_or("/", |f| f.path.as_str());
        let lines: Vec<String> = a
            .copies
            .iter()
            .map(|c| format!("{} -> {}  {}", c.from, c.file.id, c.file.file_name))
            .collect();
        format!(
            "copied {} file(s) to {folder}\n{}",
            a.copies.len(),
            lines.join("\n")
        )
    })
}

/// `drive folder mv FROM TO`: `/move-folder`.
pub async fn move_folder(client: &Client, from: &str, to: &str, json: bool) -> Result<()> {
    let moved = client.move_folder(from, to).await?;
    show(&moved, json, |a| format!("moved {} to {}", a.from, a.folder.path))
}

/// `drive folder rm PATH`: `/delete-folder`.
pub async fn delete_folder(client: &Client, path: &str, json: bool) -> Result<()> {
    let deleted = client.delete_folder(path).await?;
    show(&deleted, json, |a| {
        format!(
            "deleted {}; {} file(s) went to the trash (drive restore puts them back there)",
            a.deleted.path,
            a.trashed.len()
        )
    })
}

/// `drive delete-tag TAG`: `/delete-tag`.
pub async fn delete_tag(client: &Client, tag: &str, json: bool) -> Result<()> {
    let deleted = client.delete_tag(tag).await?;
    show(&deleted, json, |_| format!("deleted the tag {tag}"))
}

fn said(kind: CollectionKind) -> impl FnOnce(&Edited) -> String {
    move |a: &Edited| {
        let removed = a
            .removed
            .as_ref()
            .map(|r| format!(", {} taken out", r.len()))
            .unwrap_or_default();
        format!(
            "{} {} {:?}: {} file(s){removed}",
            kind.name(),
            a.id,
            a.title,
            a.file_count
        )
    }
}

/// `drive playlist|gallery rename ID TITLE [--description D]`.
pub async fn rename_collection(
    client: &Client,
    kind: CollectionKind,
    id: Uuid,
    title: &str,
    description: Option<&str>,
    json: bool,
) -> Result<()> {
    let renamed = client.rename_collection(kind, id, title, description).await?;
    show(&renamed, json, said(kind))
}

/// `drive playlist|gallery remove ID FILE...`.
pub async fn remove(client: &Client, kind: CollectionKind, id: Uuid, ids: &[Uuid], json: bool) -> Result<()> {
    let edited = client.remove_from_collection(kind, id, ids).await?;
    show(&edited, json, said(kind))
}

/// `drive playlist|gallery delete ID`.
pub async fn delete_collection(client: &Client, kind: CollectionKind, id: Uuid, json: bool) -> Result<()> {
    let deleted = client.delete_collection(kind, id).await?;
    show(&deleted, json, |a| {
        format!("deleted {} {}", kind.name(), a.deleted)
    })
}

/// `drive request delete ID`: `/delete-file-request`.
pub async fn delete_request(client: &Client, id: Uuid, json: bool) -> Result<()> {
    let deleted = client.delete_request(id).await?;
    show(&deleted, json, |a| {
        format!("deleted request {}; what arrived stays", a.deleted)
    })
}

/// `drive review close ID`: `/close-file-review`.
pub async fn close_review(client: &Client, id: Uuid, json: bool) -> Result<()> {
    let closed = client.close_review(id).await?;
    show(&closed, json, |a| {
        format!("closed review {} at {}", a.id, a.close_time)
    })
}
