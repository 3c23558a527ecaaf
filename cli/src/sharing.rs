//! Sharing from the command line: `share`, `unshare`, `shares`, `shared` and `profile`. Each is
//! one route (`shared` follows every page); with `--json` the route's answer is printed as it came.

use anyhow::{Result, bail};
use drive_client::Client;
use drive_client::sharing::{Share, What};

use crate::args::ShareArgs;
use crate::output;

fn what(args: &ShareArgs) -> What {
    match &args.folder {
        Some(path) => What::Folder(path.clone()),
        None => What::Files(args.ids.clone()),
    }
}

/// One line a share: what, with whom.
fn line(share: &Share) -> String {
    let what = match (&share.file, &share.folder) {
        (Some(file), _) => format!(
            "{}  {}",
            file["id"].as_str().unwrap_or("?"),
            file["fileName"].as_str().unwrap_or("?")
        ),
        (None, Some(folder)) => format!("folder {}", folder["path"].as_str().unwrap_or("?")),
        (None, None) => String::new(),
    };
    let name = share
        .display_name
        .as_deref()
        .map(|n| format!(" ({n})"))
        .unwrap_or_default();
    format!("{what}  with {}{name}", share.handle)
}

/// `drive share (ID... | --folder PATH) --with HANDLE,...`: `/share-files`.
pub async fn share(client: &Client, args: &ShareArgs, json: bool) -> Result<()> {
    if args.handles.is_empty() {
        bail!("say with whom: --with HANDLE,HANDLE");
    }
    let shares = client.share(&what(args), &args.handles).await?;
    if json {
        return output::print_json(&shares);
    }
    for share in &shares.shares {
        println!("shared {}", line(share));
    }
    Ok(())
}

/// `drive unshare (ID... | --folder PATH) [--with HANDLE,...]`: `/unshare-files`.
pub async fn unshare(client: &Client, args: &ShareArgs, json: bool) -> Result<()> {
    let shares = client.unshare(&what(args), &args.handles).await?;
    if json {
        return output::print_json(&shares);
    }
    println!("took back {} share(s)", shares.shares.len());
    for share in &shares.shares {
        println!("  {}", line(share));
    }
    Ok(())
}

/// `drive shares`: what you share, with whom.
pub async fn shares(client: &Client, json: bool) -> Result<()> {
    let shares = client.file_shares().await?;
    if json {
        return output::print_json(&shares);
    }
    for share in &shares.shares {
        println!("{}", line(share));
    }
    Ok(())
}

/// `drive shared`: the files others share with you, every page.
pub async fn shared(client: &Client, json: bool) -> Result<()> {
    let mut files = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = client.shared_files(cursor.as_deref()).await?;
        files.extend(page.files);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    if json {
        return output::print_json(&files);
    }
    for shared in &files {
        println!(
            "{}  {}  from {}",
            shared.file.id, shared.file.file_name, shared.owner.handle
        );
    }
    Ok(())
}

/// `drive profile [--display-name NAME] [--show-views BOOL]`: shows it, or changes it first.
pub async fn profile(
    client: &Client,
    display_name: Option<&str>,
    show_views: Option<bool>,
    json: bool,
) -> Result<()> {
    let profile = match (display_name, show_views) {
        (None, None) => client.profile().await?,
        _ => client.update_profile(display_name, show_views).await?,
    };
    if json {
        return output::print_json(&profile);
    }
    println!(
        "{}  {}  owners {} when you open their files",
        profile.handle,
        profile.display_name.as_deref().unwrap_or("(no display name)"),
        if profile.show_views { "see" } else { "do not see" }
    );
    Ok(())
}
