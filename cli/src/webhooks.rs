//! Drive-event webhooks: `drive webhook add URL` has events POSTed to an https endpoint (and
//! prints the signing secret, shown only then), `drive webhook list` shows how deliveries go,
//! `drive webhook remove ID` stops them.

use anyhow::Result;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::output::{self, Align};
use drive_client::Client;

pub async fn add(client: &Client, url: &str, kinds: &[String], json: bool) -> Result<()> {
    let body = json!({ "url": url, "kinds": (!kinds.is_empty()).then_some(kinds) });
    let made: Value = client.post("/create-event-subscription", &body).await?;
    if json {
        return output::print_json(&made);
    }
    let subscription = &made["subscription"];
    println!(
        "webhook {} sends {} events to {}",
        subscription["id"].as_str().unwrap_or("?"),
        kinds_of(subscription),
        subscription["url"].as_str().unwrap_or("?")
    );
    println!(
        "secret {} (shown only now: check X-Drive-Signature with it)",
        made["secret"].as_str().unwrap_or("?")
    );
    Ok(())
}

pub async fn list(client: &Client, json: bool) -> Result<()> {
    let answer: Value = client.post_empty("/select-event-subscriptions").await?;
    if json {
        return output::print_json(&answer);
    }
    let subscriptions = answer["subscriptions"].as_array().cloned().unwrap_or_default();
    if subscriptions.is_empty() {
        println!("No webhooks: `drive webhook add URL` makes one.");
        return Ok(());
    }
    let text = |v: &Value| v.as_str().unwrap_or("").to_string();
    let rows: Vec<Vec<String>> = subscriptions
        .iter()
        .map(|s| {
            let delivery = match (s["failures"].as_i64().unwrap_or(0), s["lastError"].as_str()) {
                (0, _) => text(&s["lastDeliveryTime"]),
                (n, why) => format!("{n} failed: {}", why.unwrap_or("?")),
            };
            vec![
                text(&s["id"]),
                text(&s["state"]),
                kinds_of(s),
                text(&s["url"]),
                delivery,
            ]
        })
        .collect();
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

pub async fn remove(client: &Client, id: Uuid, json: bool) -> Result<()> {
    let answer: Value = client
        .post("/delete-event-subscription", &json!({ "subscriptionId": id }))
        .await?;
    if json {
        return output::print_json(&answer);
    }
    println!("webhook {id} removed");
    Ok(())
}

fn kinds_of(subscription: &Value) -> String {
    let kinds: Vec<&str> = subscription["kinds"]
        .as_array()
        .map(|k| k.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    kinds.join(",")
}
