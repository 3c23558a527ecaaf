//! The drive event feed and its webhooks, typed: `/select-drive-events` (a page of events
//! after a cursor, or held up to a minute for the next), `/create-event-subscription`,
//! `/select-event-subscriptions`, `/delete-event-subscription`.

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use crate::Client;

/// The body of `/select-drive-events`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct EventQuery {
    /// A page's `nextCursor`, to go on after it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Only these kinds: file, view, job, generation, note, drop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kinds: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// Seconds (up to 60) to hold for the next event when there is none yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait: Option<u64>,
}

/// The answer of `/select-drive-events`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventPage {
    /// Oldest first; each shaped by its `kind` (the spec's event bodies), kept as sent.
    pub events: Vec<Value>,
    pub next_cursor: String,
    /// Whether more events follow at once.
    pub more: bool,
}

/// A webhook: where events are POSTed, and how deliveries go.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Subscription {
    pub id: Uuid,
    pub url: String,
    pub kinds: Vec<String>,
    /// `active`, or `paused` after failing for days.
    pub state: String,
    pub insert_time: DateTime<Utc>,
    pub last_delivery_time: Option<DateTime<Utc>>,
    /// Deliveries failed in a row.
    pub failures: u32,
    pub first_failure_time: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
}

/// The answer of `/create-event-subscription`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CreatedSubscription {
    pub subscription: Subscription,
    /// The signing secret, shown only now.
    pub secret: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Subscriptions {
    pub subscriptions: Vec<Subscription>,
}

/// The answer of `/delete-event-subscription`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeletedSubscription {
    pub deleted: Uuid,
}

impl Client {
    /// `/select-drive-events`.
    pub async fn events(&self, query: &EventQuery) -> Result<EventPage> {
        self.post("/select-drive-events", query).await
    }

    /// `/create-event-subscription`: events of `kinds` (every kind when `None`) to `url`.
    pub async fn subscribe(&self, url: &str, kinds: Option<&[String]>) -> Result<CreatedSubscription> {
        #[derive(Serialize)]
        struct Body<'a> {
            url: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            kinds: Option<&'a [String]>,
        }
        self.post("/create-event-subscription", &Body { url, kinds })
            .await
    }

    /// `/select-event-subscriptions`.
    pub async fn subscriptions(&self) -> Result<Subscriptions> {
        self.post_empty("/select-event-subscriptions").await
    }

    /// `/delete-event-subscription`.
    pub async fn unsubscribe(&self, id: Uuid) -> Result<DeletedSubscription> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Body {
            subscription_id: Uuid,
        }
        self.post("/delete-event-subscription", &Body { subscription_id: id })
            .await
    }
}
