//! The drive event log's kinds, and the states of the webhooks that deliver it.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum EventKind {
    Drop,
    Note,
    View,
    File,
    Generation,
    Job,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Drop => "drop",
            EventKind::Note => "note",
            EventKind::View => "view",
            EventKind::File => "file",
            EventKind::Generation => "generation",
            EventKind::Job => "job",
        }
    }

    /// Every kind, in the spec's order.
    pub fn all() -> Vec<EventKind> {
        vec![
            EventKind::Drop,
            EventKind::Note,
            EventKind::View,
            EventKind::File,
            EventKind::Generation,
            EventKind::Job,
        ]
    }

    pub fn parse(s: &str) -> Option<EventKind> {
        EventKind::all().into_iter().find(|kind| kind.as_str() == s)
    }
}

crate::column::text_column!(EventKind, "event kind");

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SubscriptionState {
    /// Delivering.
    Active,
    /// Deliveries failed for three days (the data crate's `db::subscriptions::GIVE_UP_AFTER`); nothing more is sent.
    Disabled,
}

impl SubscriptionState {
    pub fn as_str(self) -> &'static str {
        match self {
            SubscriptionState::Active => "active",
            SubscriptionState::Disabled => "disabled",
        }
    }

    pub fn parse(s: &str) -> Option<SubscriptionState> {
        [SubscriptionState::Active, SubscriptionState::Disabled]
            .into_iter()
            .find(|state| state.as_str() == s)
    }
}

crate::column::text_column!(SubscriptionState, "subscription state");
