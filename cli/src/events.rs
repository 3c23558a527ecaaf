//! `drive events`: the drive event feed, one line an event. `--follow` keeps printing events as
//! they happen: each call waits up to 30 s on the service for the next one (`wait`), and the
//! cursor is kept in the config file, so a follower stopped and started again goes on from
//! where it was.

use anyhow::Result;
use drive_client::events::EventQuery;
use serde_json::Value;

use crate::output;
use drive_client::Client;

/// How long one call of a follower holds on the service.
const WAIT_SECONDS: u64 = 30;

pub struct Query<'a> {
    pub since: Option<&'a str>,
    pub kinds: &'a [String],
    pub limit: Option<u32>,
}

pub async fn run(client: &Client, query: &Query<'_>, follow: bool, json: bool) -> Result<()> {
    let mut since = match (query.since, follow) {
        (Some(since), _) => Some(since.to_string()),
        (None, true) => client.events_cursor().await,
        (None, false) => None,
    };
    loop {
        let asked = EventQuery {
            since: since.clone(),
            kinds: (!query.kinds.is_empty()).then(|| query.kinds.to_vec()),
            limit: query.limit,
            wait: follow.then_some(WAIT_SECONDS),
        };
        let page = client.events(&asked).await?;
        if !follow && json {
            return output::print_json(&page);
        }
        for event in &page.events {
            if json {
                // One event a line, for a follower's reader.
                println!("{event}");
            } else {
                println!("{}", line(event));
            }
        }
        since = Some(page.next_cursor);
        if !follow {
            if page.more {
                eprintln!(
                    "more events follow: drive events --since {}",
                    since.as_deref().unwrap_or("")
                );
            }
            return Ok(());
        }
        if let Some(cursor) = &since {
            client.keep_events_cursor(cursor).await?;
        }
    }
}

/// `TIME KIND what it is about`.
fn line(event: &Value) -> String {
    let text = |v: &Value| v.as_str().unwrap_or("?").to_string();
    let about = match event["kind"].as_str() {
        Some("file") => text(&event["file"]["fileName"]),
        Some("view") => format!("{} opened", text(&event["file"]["fileName"])),
        Some("job") => format!(
            "{} {} {}",
            text(&event["job"]["jobType"]),
            text(&event["job"]["state"]),
            text(&event["job"]["id"])
        ),
        Some("generation") => format!("{} {:?}", text(&event["status"]), text(&event["prompt"])),
        Some("note") => format!(
            "{:?} on review {}",
            text(&event["text"]),
            text(&event["review"]["id"])
        ),
        Some("drop") => format!(
            "{} file(s) to request {}",
            event["files"].as_array().map_or(0, Vec::len),
            text(&event["request"]["id"])
        ),
        _ => String::new(),
    };
    format!("{} {:<10} {about}", text(&event["time"]), text(&event["kind"]))
}
