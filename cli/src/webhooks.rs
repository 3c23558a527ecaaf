//! Drive-event webhooks: `drive webhook add URL` has events POSTed to an https endpoint (and
//! prints the signing secret, shown only then), `drive webhook list` shows how deliveries go,
//! `drive webhook remove ID` stops them.

use anyhow::Result;
use drive_client::events::Subscription;
use uuid::Uuid;

use crate::output::{self, Align};
use drive_client::Client;

pub async fn add(client: &Client, url: &str, kinds: &[String], json: bool) -> Result<()> {
    let made = client
        .subscribe(url, (!kinds.is_empty()).then_some(kinds))
        .await?;
    if json {
        return output::print_json(&made);
    }
    let subscription = &made.subscription;
    println!(
        "webhook {} sends {} events to {}",
        subscription.id,
        subscription.kinds.join(","),
        subscription.url
    );
    println!(
        "secret {} (shown only now: check X-Drive-Signature with it)",
        made.secret
    );
    Ok(())
}

pub async fn list(client: &Client, json: bool) -> Result<()> {
    let answer = client.subscriptions().await?;
    if json {
        return output::print_json(&answer);
    }
    if answer.subscriptions.is_empty() {
        println!("No webhooks: `drive webhook add URL` makes one.");
        return Ok(());
    }
    let rows: Vec<Vec<String>> = answer.subscriptions.iter().map(row).collect();
    output::print_table(
        &[
            ("ID", Align::Left),
            ("STATE", Align::Left),
            ("KINDS", Align::Left),
            ("URL", Align::Left),
            ("LAST DELIVERY", Align::Left),
        ],
        &rows,
    );
    Ok(())
}

fn row(s: &Subscription) -> Vec<String> {
    let delivery = match (s.failures, &s.last_error) {
        (0, _) => s
            .last_delivery_time
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
            .unwrap_or_default(),
        (n, why) => format!("{n} failed: {}", why.as_deref().unwrap_or("?")),
    };
    vec![
        s.id.to_string(),
        s.state.clone(),
        s.kinds.join(","),
        s.url.clone(),
        delivery,
    ]
}

pub async fn remove(client: &Client, id: Uuid, json: bool) -> Result<()> {
    let answer = client.unsubscribe(id).await?;
    if json {
        return output::print_json(&answer);
    }
    println!("webhook {id} removed");
    Ok(())
}
