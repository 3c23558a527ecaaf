//! The one webhook deliverer: every worker POSTs its accounts' drive events to the https
//! endpoints they subscribed, each subscription's events once each and in order, signed, and
//! agent tasks' status changes to their push-notification configs, through the drive's one
//! outbound fetcher (`drive-fetch`: addresses checked at connect time, no redirect followed).
//!
//! A subscription is held by one deliverer at a time (a lease in its row, renewed with each
//! event). Its place in the log moves only past an event its endpoint took (a 2xx), or past
//! events of kinds it does not want, so a failure, a crash or a lost lease sends the same event
//! again rather than skipping it: receivers deduplicate by `X-Drive-Event-Id`. A failed delivery
//! is tried again after 2 s, 10 s, a minute, 5 and 30 minutes, then hourly; after three days of
//! failing the subscription is disabled.
//!
//! A job's end is sent to the `notifyUrl` its caller gave, `{ job, clientMetadata }`, signed as
//! events are but with the job's own secret; one not taken is tried again after 2 s, 10 s, a
//! minute, 5 and 30 minutes, then given up on.
//!
//! A task's status change is sent to each of its configs as the contract has it (`{ task }`,
//! the whole task without its history, with `X-A2A-Notification-Token` and `Authorization`
//! when the config has them), in order per config; one not taken is tried again after 2 s and 10 s, unless a
//! newer status is there to be sent instead.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use drive_core::a2a::{Artifact, Task, TaskStatus, pushed, timestamp};
use drive_core::db::agent_push::{self, DueNotice, seal_binding};
use drive_core::db::events::{self, Filter, Since};
use drive_core::db::job_notices::{self, DueJobNotice};
use drive_core::db::jobs::{self, JobRecord};
use drive_core::db::subscriptions::{self, Claimed, GIVE_UP_AFTER};
use drive_fetch::{Fetcher, SystemResolver};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use uuid::Uuid;

use crate::supervisor::shared::Shared;

/// How long a deliverer holds a subscription without renewing it.
const LEASE: Duration = Duration::from_secs(30);
/// How long one POST may take, body and answer included.
const POST_TIMEOUT: Duration = Duration::from_secs(10);
/// Events read from the log at a time.
const PAGE: i64 = 50;
/// Subscriptions taken at each look.
const CLAIMED_AT_ONCE: i64 = 20;
/// Waits after the first, second… failure in a row; then [`RETRY_LAST`].
const RETRY_AFTER: [u64; 5] = [2, 10, 60, 300, 1800];
const RETRY_LAST: u64 = 3600;

/// Looks every second for subscriptions with events waiting and delivers each in a task of
/// its own.
pub async fn deliver_loop(shared: Arc<Shared>) {
    let deliverer = Arc::new(Deliverer {
        id: Uuid::new_v4(),
        fetcher: Fetcher::unredirected(
            SystemResolver,
            shared.settings.fetch_allowances.clone(),
            POST_TIMEOUT,
        ),
        shared,
    });
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        match subscriptions::claim_due(&deliverer.shared.db, deliverer.id, LEASE, CLAIMED_AT_ONCE).await {
            Ok(claimed) => {
                for subscription in claimed {
                    tokio::spawn(deliverer.clone().deliver(subscription));
                }
            }
            Err(e) => tracing::warn!("looking for webhooks to deliver failed: {e}"),
        }
        match job_notices::claim_due(&deliverer.shared.db, deliverer.id, LEASE, CLAIMED_AT_ONCE).await {
            Ok(claimed) => {
                for notice in claimed {
                    tokio::spawn(deliverer.clone().tell_job_end(notice));
                }
            }
            Err(e) => tracing::warn!("looking for job ends to send failed: {e}"),
        }
        match agent_push::claim_due(&deliverer.shared.db, deliverer.id, LEASE, CLAIMED_AT_ONCE).await {
            Ok(claimed) => {
                for notice in claimed {
                    tokio::spawn(deliverer.clone().notify(notice));
                }
            }
            Err(e) => tracing::warn!("looking for push notifications to send failed: {e}"),
        }
    }
}

struct Deliverer {
    /// This process's name on the subscriptions it holds.
    id: Uuid,
    fetcher: Fetcher,
    shared: Arc<Shared>,
}

impl Deliverer {
    async fn deliver(self: Arc<Self>, subscription: Claimed) {
        let id = subscription.id;
        if let Err(e) = self.deliver_held(subscription).await {
            // The database failed us: give it back; its place is where the last success left it.
            tracing::warn!(subscription = %id, "delivering webhooks failed: {e}");
            let _ = subscriptions::release(&self.shared.db, id, self.id).await;
        }
    }

    /// Sends what waits for a held subscription, oldest first, until the log is done, an
    /// endpoint fails, or the subscription is no longer this deliverer's.
    async fn deliver_held(&self, subscription: Claimed) -> Result<(), sqlx::Error> {
        let db = &self.shared.db;
        let secret = match self
            .shared
            .settings
            .sealer
            .open(&subscription.secret_sealed, subscription.id.as_uuid().as_bytes())
        {
            Ok(secret) => secret,
            Err(e) => return self.failed(&subscription, &e.to_string()).await,
        };
        let filter = Filter {
            kinds: Some(subscription.kinds.clone()),
            ..Filter::default()
        };
        let mut after = subscription.after;
        loop {
            let page = events::page(db, subscription.user_id, Since::Cursor(after), &filter, PAGE).await?;
            for event in page.events {
                let at = event.cursor();
                let event_id = event.id.to_string();
                let kind = event.kind.as_str();
                let body = serde_json::to_vec(&event.into_json()).expect("an event is JSON");
                if let Err(why) = self.post(&subscription, &secret, &event_id, kind, body).await {
                    return self.failed(&subscription, &why).await;
                }
                if !subscriptions::advance(db, subscription.id, self.id, at, true, LEASE).await? {
                    return Ok(());
                }
            }
            if !page.more {
                // Past everything there was, matching or not.
                if subscriptions::advance(db, subscription.id, self.id, page.next, false, LEASE).await? {
                    subscriptions::release(db, subscription.id, self.id).await?;
                }
                return Ok(());
            }
            after = page.next;
        }
    }

    /// POSTs one event; `Err` says why it was not taken.
    async fn post(
        &self,
        subscription: &Claimed,
        secret: &[u8],
        event_id: &str,
        kind: &str,
        body: Vec<u8>,
    ) -> Result<(), String> {
        let timestamp = Utc::now().timestamp().to_string();
        let signature = format!("sha256={}", sign(secret, &timestamp, &body));
        let subscription_id = subscription.id.to_string();
        let headers = [
            ("X-Drive-Event-Id", event_id),
            ("X-Drive-Event-Kind", kind),
            ("X-Drive-Subscription-Id", subscription_id.as_str()),
            ("X-Drive-Timestamp", timestamp.as_str()),
            ("X-Drive-Signature", signature.as_str()),
        ];
        let response = self
            .fetcher
            .post_json(&subscription.url, &headers, body)
            .await
            .map_err(|e| e.to_string())?;
        taken(&response)
    }

    /// Notes a failed delivery: tried again after the next wait, or disabled after three days.
    async fn failed(&self, subscription: &Claimed, why: &str) -> Result<(), sqlx::Error> {
        let now = Utc::now();
        let failing_for = subscription
            .failing_since
            .map_or(chrono::TimeDelta::zero(), |since| now - since);
        let disable = failing_for >= GIVE_UP_AFTER;
        let wait = RETRY_AFTER
            .get(subscription.failures.max(0) as usize)
            .copied()
            .unwrap_or(RETRY_LAST);
        tracing::info!(subscription = %subscription.id, failures = subscription.failures + 1, disable, "a webhook was not taken: {why}");
        let retry_at = now + chrono::TimeDelta::seconds(wait as i64);
        subscriptions::failed(&self.shared.db, subscription.id, self.id, why, retry_at, disable).await
    }
}

impl Deliverer {
    /// Sends one job's end to its caller's link.
    async fn tell_job_end(self: Arc<Self>, notice: DueJobNotice) {
        let db = &self.shared.db;
        let recorded = match self.post_job_end(&notice).await {
            Ok(()) => job_notices::delivered(db, notice.job_id, self.id).await,
            Err(why) => {
                let retry = RETRY_AFTER.get(notice.attempts.max(0) as usize);
                tracing::info!(job.id = %notice.job_id, attempts = notice.attempts + 1, given_up = retry.is_none(),
                    "a job's end was not taken: {why}");
                let at = retry.map(|&wait| Utc::now() + chrono::TimeDelta::seconds(wait as i64));
                job_notices::failed(db, notice.job_id, self.id, &why, at).await
            }
        };
        if let Err(e) = recorded {
            // Its lease runs out and it is sent again: at least once.
            tracing::warn!(job.id = %notice.job_id, "recording a job's notice failed: {e}");
        }
    }

    async fn post_job_end(&self, notice: &DueJobNotice) -> Result<(), String> {
        let db = &self.shared.db;
        let job = jobs::find(db, notice.job_id)
            .await
            .map_err(|e| e.to_string())?
            .ok_or("the job is gone")?;
        let mut conn = db.acquire().await.map_err(|e| e.to_string())?;
        let record = JobRecord::load(&mut conn, &self.shared.storage, std::slice::from_ref(&job))
            .await
            .map_err(|e| e.to_string())?;
        let body = serde_json::json!({ "job": record.first(), "clientMetadata": notice.client_metadata });
        let body = serde_json::to_vec(&body).expect("a job is JSON");
        let secret = self.shared.settings.sealer.job_notice_secret(notice.job_id);
        let timestamp = Utc::now().timestamp().to_string();
        let signature = format!("sha256={}", sign(secret.as_bytes(), &timestamp, &body));
        let job_id = notice.job_id.to_string();
        let headers = [
            ("X-Drive-Job-Id", job_id.as_str()),
            ("X-Drive-Timestamp", timestamp.as_str()),
            ("X-Drive-Signature", signature.as_str()),
        ];
        let response = self
            .fetcher
            .post_json(&notice.url, &headers, body)
            .await
            .map_err(|e| e.to_string())?;
        taken(&response)
    }
}

/// Waits before the second and third try of a push notification; then it is given up.
const PUSH_RETRY_AFTER: [u64; 2] = [2, 10];

impl Deliverer {
    /// Sends one status change to one push config.
    async fn notify(self: Arc<Self>, notice: DueNotice) {
        let outcome = self.post_notice(&notice).await;
        let db = &self.shared.db;
        let recorded = match outcome {
            Ok(()) => agent_push::done(db, notice.id, self.id).await,
            Err(why) => {
                let retry = PUSH_RETRY_AFTER.get(notice.attempts.max(0) as usize);
                tracing::info!(task = %notice.task_id, config = %notice.config_id, attempts = notice.attempts + 1,
                    given_up = retry.is_none(), "a push notification was not taken: {why}");
                match retry {
                    Some(&wait) => {
                        let at = Utc::now() + chrono::TimeDelta::seconds(wait as i64);
                        agent_push::retry(db, notice.id, self.id, at).await
                    }
                    None => agent_push::done(db, notice.id, self.id).await,
                }
            }
        };
        if let Err(e) = recorded {
            // Its lease runs out and it is sent again: at least once.
            tracing::warn!(task = %notice.task_id, "recording a push notification failed: {e}");
        }
    }

    async fn post_notice(&self, notice: &DueNotice) -> Result<(), String> {
        let sealer = &self.shared.settings.sealer;
        let open = |sealed: &Option<Vec<u8>>, which: &str| -> Result<Option<String>, String> {
            let Some(sealed) = sealed else { return Ok(None) };
            let binding = seal_binding(notice.task_id, &notice.config_id, which);
            let opened = sealer.open(sealed, &binding).map_err(|e| e.to_string())?;
            String::from_utf8(opened)
                .map(Some)
                .map_err(|_| "a sealed secret is not text".to_string())
        };
        let token = open(&notice.token_sealed, "token")?;
        let authorization = match (
            &notice.auth_scheme,
            open(&notice.credentials_sealed, "credentials")?,
        ) {
            (Some(scheme), Some(credentials)) => Some(format!("{scheme} {credentials}")),
            (Some(scheme), None) => Some(scheme.clone()),
            (None, _) => None,
        };
        let status = TaskStatus {
            state: notice.state,
            message: notice
                .status_message
                .clone()
                .and_then(|m| serde_json::from_value(m).ok()),
            timestamp: timestamp(notice.status_time),
        };
        // An ended task's artifacts are final (its Reply among them); before, it has none.
        let artifacts = notice
            .state
            .is_terminal()
            .then(|| serde_json::from_value::<Vec<Artifact>>(notice.artifacts.clone()).unwrap_or_default())
            .filter(|artifacts| !artifacts.is_empty());
        let body = pushed(&Task {
            id: notice.task_id.to_string(),
            context_id: notice.context_id.to_string(),
            status,
            artifacts,
            history: None,
        });
        let mut headers = Vec::new();
        if let Some(token) = &token {
            headers.push(("X-A2A-Notification-Token", token.as_str()));
        }
        if let Some(authorization) = &authorization {
            headers.push(("Authorization", authorization.as_str()));
        }
        let response = self
            .fetcher
            .post_json(
                &notice.url,
                &headers,
                serde_json::to_vec(&body).expect("a status is JSON"),
            )
            .await
            .map_err(|e| e.to_string())?;
        taken(&response)
    }
}

/// Whether the endpoint took what was sent (a 2xx); why not otherwise.
fn taken(response: &drive_fetch::Response) -> Result<(), String> {
    match response.status() {
        status if status.is_success() => Ok(()),
        status => Err(format!("the endpoint answered {status}")),
    }
}

/// The signature receivers check: HMAC-SHA256 under the subscription's secret of the
/// timestamp header, a dot, and the body, in hex.
fn sign(secret: &[u8], timestamp: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}
