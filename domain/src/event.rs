//! The drive event log's kinds, and the states of the webhooks that deliver it.

use serde::{Deserialize, Serialize};

/// The contract's six kinds, then the kinds a mirror of the drive follows (a file trashed,
/// restored, deleted, moved, renamed, switched public or private, shared or unshared), which the
/// feed and the webhooks send only to a caller that names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum EventKind {
    Drop,
    Note,
    View,
    File,
    Generation,
    Job,
    Trashed,
    Restored,
    Deleted,
    Moved,
    Renamed,
    Access,
    Shared,
    Unshared,
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
            EventKind::Trashed => "trashed",
            EventKind::Restored => "restored",
            EventKind::Deleted => "deleted",
            EventKind::Moved => "moved",
            EventKind::Renamed => "renamed",
            EventKind::Access => "access",
            EventKind::Shared => "shared",
            EventKind::Unshared => "unshared",
        }
    }

    /// The contract's kinds, in its order: what a caller that names none gets.
    pub fn contract() -> Vec<EventKind> {
        vec![
            EventKind::Drop,
            EventKind::Note,
            EventKind::View,
            EventKind::File,
            EventKind::Generation,
            EventKind::Job,
        ]
    }

    /// Every kind: the contract's, then a mirror's.
    pub fn all() -> Vec<EventKind> {
        let mut all = EventKind::contract();
        all.extend([
            EventKind::Trashed,
            EventKind::Restored,
            EventKind::Deleted,
            EventKind::Moved,
            EventKind::Renamed,
            EventKind::Access,
            EventKind::Shared,
            EventKind::Unshared,
        ]);
        all
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
