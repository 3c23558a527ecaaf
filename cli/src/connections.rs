//! The apps let in through OAuth: `drive connections list` shows each with what it may do,
//! `drive connections revoke ID` ends one. Signing an app in happens in the browser, on the
//! drive's consent page; here the account keeps watch over them.

use anyhow::Result;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::output::{self, Align};
use drive_client::Client;

pub async fn list(client: &Client, json: bool) -> Result<()> {
    let answer: Value = client.post_empty("/select-connections").await?;
    if json {
        return output::print_json(&answer);
    }
    let connections = answer["connections"].as_array().cloned().unwrap_or_default();
    if connections.is_empty() {
        println!("No apps: none has been let in through the drive's sign-in page.");
        return Ok(());
    }
    let text = |v: &Value| v.as_str().unwrap_or("").to_string();
    let rows: Vec<Vec<String>> = connections
        .iter()
        .map(|c| {
            let scopes: Vec<String> = c["scopes"]
                .as_array()
                .map(|s| s.iter().map(text).collect())
                .unwrap_or_default();
            vec![
                text(&c["id"]),
                text(&c["clientName"]),
                scopes.join(" "),
                text(&c["insertTime"]),
            ]
        })
        .collect();
    output::print_table(
        &[
            ("ID", Align::Left),
            ("APP", Align::Left),
            ("MAY", Align::Left),
            ("SINCE", Align::Left),
        ],
        &rows,
    );
    Ok(())
}

pub async fn revoke(client: &Client, id: Uuid, json: bool) -> Result<()> {
    let answer: Value = client
        .post("/revoke-connection", &json!({ "connectionId": id }))
        .await?;
    if json {
        return output::print_json(&answer);
    }
    println!("connection {id} revoked: the app's token no longer works");
    Ok(())
}
