//! `drive sign-ins`: where the account is signed in to the app, and ending one or all of them.

use anyhow::Result;
use drive_client::Client;
use uuid::Uuid;

use crate::output::{self, Align};

/// Lists the sign-ins; with `end`, ends that one; with `end_all`, every one.
pub async fn sign_ins(client: &Client, end: Option<Uuid>, end_all: bool, json: bool) -> Result<()> {
    if end.is_some() || end_all {
        let ended = client.end_sign_ins(end).await?;
        return output::show(&ended, json, |e| format!("ended {} sign-in(s)", e.ended));
    }
    let listed = client.sign_ins().await?;
    if json {
        return output::print_json(&listed);
    }
    let rows: Vec<Vec<String>> = listed
        .sign_ins
        .iter()
        .map(|s| {
            vec![
                s.sign_in_id.to_string(),
                s.last_use_time.map(output::time).unwrap_or_default(),
                s.address.clone().unwrap_or_default(),
                s.user_agent.clone().unwrap_or_default(),
            ]
        })
        .collect();
    if rows.is_empty() {
        println!("not signed in to the app anywhere");
        return Ok(());
    }
    output::print_table(
        &[
            ("SIGN-IN", Align::Left),
            ("LAST USED", Align::Left),
            ("FROM", Align::Left),
            ("BROWSER", Align::Left),
        ],
        &rows,
    );
    Ok(())
}
