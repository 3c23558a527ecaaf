//! Drive-event webhooks: an account names an https endpoint and the event kinds it wants, and
//! every such event is POSTed to it, signed, once and in order (the worker's deliverer,
//! `drive-worker`'s `webhooks`). These routes keep the subscriptions; the signing secret is
//! shown once, when one is made, and kept sealed (`drive_core::sealed`).

use axum::extract::State;
use chrono::{DateTime, Utc};
use drive_core::db::events::EventKind;
use drive_core::db::subscriptions::{
    self, MAX_PER_ACCOUNT, NewSubscription, SubscriptionRow, SubscriptionState,
};
use drive_core::id::SubscriptionId;
use drive_core::input::{Line, List};
use drive_fetch::{FetchError, SystemResolver};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_event_subscription))
        .routes(routes!(select_event_subscriptions))
        .routes(routes!(delete_event_subscription))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateSubscriptionInput {
    /// An https link on the public internet, at most 2000 characters. Each event is POSTed to
    /// it; a redirect is not followed.
    url: Line<1, 2000>,
    /// The kinds to send; default the contract's six. The kinds a mirror follows are sent
    /// only when named.
    kinds: Option<List<EventKind, 1, 14>>,
}

/// A subscription as its owner sees it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Subscription {
    id: SubscriptionId,
    url: String,
    kinds: Vec<String>,
    /// `active`, or `disabled` after three days of failed deliveries (nothing more is sent;
    /// the events stay in `/select-drive-events`).
    state: SubscriptionState,
    insert_time: DateTime<Utc>,
    /// When an event was last taken by the endpoint.
    last_delivery_time: Option<DateTime<Utc>>,
    /// Failed deliveries in a row; 0 when the last one was taken.
    failures: i32,
    /// The first of the failures in a row.
    first_failure_time: Option<DateTime<Utc>>,
    /// Why the last delivery failed.
    last_error: Option<String>,
}

impl From<SubscriptionRow> for Subscription {
    fn from(row: SubscriptionRow) -> Subscription {
        Subscription {
            id: row.id,
            url: row.url,
            kinds: row.kinds,
            state: row.state,
            insert_time: row.created_at,
            last_delivery_time: row.last_delivered_at,
            failures: row.failures,
            first_failure_time: row.failing_since,
            last_error: row.last_error,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedSubscription {
    subscription: Subscription,
    /// Shown only now: each POST carries `X-Drive-Signature: sha256=<hex>`, the HMAC-SHA256
    /// under this secret of `X-Drive-Timestamp`, a dot and the body.
    secret: String,
}

/// A link the drive will POST to (a webhook's, a job's `notifyUrl`): https, and reaching only
/// the public internet as the one outbound fetcher sees it now (it is checked again at each
/// connection). A refusal is 400 `url_refused` on `field`.
pub(crate) async fn checked_link(state: &AppState, link: &str, field: &str) -> ApiResult<String> {
    let url = drive_fetch::check_link(link, &SystemResolver, &state.settings.fetch_allowances)
        .await
        .map_err(|e| match e {
            FetchError::Refused(why) | FetchError::Failed(why) => {
                ApiError::bad_request("url_refused", field, why)
            }
        })?;
    if url.scheme() != "https" {
        return Err(ApiError::bad_request(
            "url_refused",
            field,
            "the drive posts only to https links",
        ));
    }
    Ok(url.to_string())
}

/// Have every drive event of some kinds POSTed to an https endpoint, signed.
#[utoipa::path(post, path = "/create-event-subscription", tag = "events", request_body = CreateSubscriptionInput,
    responses((status = 200, body = CreatedSubscription)))]
async fn create_event_subscription(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<CreateSubscriptionInput>,
) -> ApiResult<axum::Json<CreatedSubscription>> {
    let url = checked_link(&state, &input.url, "url").await?;
    // Each kind once, in the feed's order.
    let wanted: Vec<EventKind> = input.kinds.map_or_else(EventKind::contract, Vec::from);
    let kinds: Vec<EventKind> = EventKind::all()
        .into_iter()
        .filter(|k| wanted.contains(k))
        .collect();
    let id = SubscriptionId::random();
    let secret = drive_core::token::generate("whsec_");
    let new = NewSubscription {
        id,
        user_id: caller.user_id,
        token_id: caller.token_id,
        url: &url,
        kinds: &kinds,
        secret_sealed: state
            .settings
            .sealer
            .seal(secret.as_bytes(), id.as_uuid().as_bytes()),
    };
    let Some(row) = subscriptions::create(&state.db, new).await? else {
        return Err(ApiError::forbidden(
            "subscription_limit_reached",
            format!("an account may have {MAX_PER_ACCOUNT} event subscriptions; delete one first"),
        ));
    };
    Ok(axum::Json(CreatedSubscription {
        subscription: row.into(),
        secret,
    }))
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionList {
    /// Oldest first.
    subscriptions: Vec<Subscription>,
}

/// The caller's event subscriptions and how their deliveries go.
#[utoipa::path(post, path = "/select-event-subscriptions", tag = "events",
    responses((status = 200, body = SubscriptionList)))]
async fn select_event_subscriptions(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<axum::Json<SubscriptionList>> {
    let rows = subscriptions::list(&state.db, caller.user_id).await?;
    Ok(axum::Json(SubscriptionList {
        subscriptions: rows.into_iter().map(Subscription::from).collect(),
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteSubscriptionInput {
    subscription_id: SubscriptionId,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeletedSubscription {
    deleted: SubscriptionId,
}

/// Stop sending events to an endpoint; a delivery under way may still arrive.
#[utoipa::path(post, path = "/delete-event-subscription", tag = "events", request_body = DeleteSubscriptionInput,
    responses((status = 200, body = DeletedSubscription)))]
async fn delete_event_subscription(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<DeleteSubscriptionInput>,
) -> ApiResult<axum::Json<DeletedSubscription>> {
    if !subscriptions::delete(&state.db, caller.user_id, input.subscription_id).await? {
        return Err(ApiError::not_found(
            "subscription_not_found",
            "no event subscription of yours has that id",
        ));
    }
    Ok(axum::Json(DeletedSubscription {
        deleted: input.subscription_id,
    }))
}
