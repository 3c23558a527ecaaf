//! The apps let in through OAuth: `drive connections list` shows each with what it may do,
//! `drive connections revoke ID` ends one. Signing an app in happens in the browser, on the
//! drive's consent page; here the account keeps watch over them.

use anyhow::Result;
use chrono::SecondsFormat;
use uuid::Uuid;

use crate::output::{self, Align};
use drive_client::Client;

pub async fn list(client: &Client, json: bool) -> Result<()> {
    let answer = client.connections().await?;
    if json {
        return output::print_json(&answer);
    }
    if answer.connections.is_empty() {
        println!("No apps: none has been let in through the drive's sign-in page.");
        return Ok(());
    }
    let rows: Vec<Vec<String>> = answer
        .connections
        .iter()
        .map(|c| {
            vec![
                c.id.to_string(),
                c.client_name.clone(),
                c.scopes.join(" "),
                c.insert_time.to_rfc3339_opts(SecondsFormat::AutoSi, true),
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
    let answer = client.revoke_connection(id).await?;
    if json {
        return output::print_json(&answer);
    }
    println!("connection {id} revoked: the app's token no longer works");
    Ok(())
}
