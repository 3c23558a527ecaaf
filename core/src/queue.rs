//! The queue's Redis side: a doorbell. The job rows in PostgreSQL are the queue itself (a
//! worker claims the next one by lane and account, [`crate::db::jobs::claim`]); Redis only
//! tells idle workers that one was queued, so they claim it at once rather than at their next
//! poll. A ring lost (Redis away, a worker reconnecting) costs at most one poll interval and
//! never a job: nothing of a job lives in Redis.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use redis::aio::ConnectionManager;
use tokio::sync::Notify;

use crate::config::{self, ConfigError};

/// A Redis URL for a message or a log: without its user and password (compose's Redis has one).
fn shown(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    format!("{scheme}://{host}{path}")
}

#[derive(Debug, Clone)]
pub struct QueueConfig {
    pub redis_url: String,
    /// The queue's name: the prefix of every Redis key and channel it uses, so several drives
    /// (or tests) can share one Redis.
    pub name: String,
    /// How often a worker renews the heartbeat of the jobs it runs. A running job whose
    /// heartbeat is [`QueueConfig::missed_heartbeats`] of these old lost its worker and is
    /// queued again.
    pub heartbeat: Duration,
    pub missed_heartbeats: usize,
}

impl QueueConfig {
    /// Reads `DRIVE_REDIS_URL` (default `redis://127.0.0.1:6379`), `DRIVE_QUEUE` (default
    /// `drive-jobs`) and `DRIVE_HEARTBEAT_SECONDS` (default 10; a job whose worker missed
    /// three heartbeats is taken up again).
    pub fn from_environment() -> Result<QueueConfig, ConfigError> {
        let name = config::or("DRIVE_QUEUE", "drive-jobs");
        if name.is_empty() || name.contains(':') {
            return Err(ConfigError::Invalid {
                name: "DRIVE_QUEUE",
                value: name,
                reason: "a queue name is not empty and has no colons".into(),
            });
        }
        let heartbeat: f64 = config::parsed_or("DRIVE_HEARTBEAT_SECONDS", 10.0)?;
        Ok(QueueConfig {
            redis_url: config::or("DRIVE_REDIS_URL", "redis://127.0.0.1:6379"),
            name,
            heartbeat: Duration::from_secs_f64(heartbeat.max(0.1)),
            missed_heartbeats: 3,
        })
    }

    fn channel(&self) -> String {
        format!("{}:doorbell", self.name)
    }
}

#[derive(Debug, thiserror::Error)]
#[error("the job queue's Redis failed: {0}")]
pub struct QueueError(String);

/// How long a ring may take before it is given up.
const RING_WITHIN: Duration = Duration::from_millis(250);

/// What the API and the workers ring once a job is queued (after its row is committed).
#[derive(Clone)]
pub struct Doorbell {
    connection: ConnectionManager,
    channel: String,
}

impl Doorbell {
    pub async fn connect(config: &QueueConfig) -> Result<Doorbell, QueueError> {
        let failed =
            |e: redis::RedisError| QueueError(format!("connecting to {}: {e}", shown(&config.redis_url)));
        let client = redis::Client::open(config.redis_url.as_str()).map_err(failed)?;
        let connection = client.get_connection_manager().await.map_err(failed)?;
        Ok(Doorbell {
            connection,
            channel: config.channel(),
        })
    }

    /// Tells idle workers a job was queued. Never fails nor holds up the caller: a ring Redis
    /// did not take within [`RING_WITHIN`] is logged, and the workers' poll finds the job
    /// within a second.
    pub async fn ring(&self) {
        let mut connection = self.connection.clone();
        let rung = tokio::time::timeout(
            RING_WITHIN,
            redis::cmd("PUBLISH")
                .arg(&self.channel)
                .arg("queued")
                .query_async::<i64>(&mut connection),
        )
        .await;
        match rung {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::warn!(
                "ringing the workers' doorbell failed (they find the job at their next poll): {e}"
            ),
            Err(_) => tracing::warn!(
                "Redis took too long to ring the workers' doorbell (they find the job at their next poll)"
            ),
        }
    }
}

/// Listens to the doorbell for good, waking `wake` at each ring; while Redis is away it tries
/// again, a second apart (the caller polls meanwhile).
pub async fn listen(config: QueueConfig, wake: Arc<Notify>) {
    let channel = config.channel();
    loop {
        let listened = async {
            let client = redis::Client::open(config.redis_url.as_str())?;
            let mut pubsub = client.get_async_pubsub().await?;
            pubsub.subscribe(&channel).await?;
            // Whatever was queued while this was not listening is found by the first poll.
            wake.notify_one();
            let mut rings = pubsub.on_message();
            while rings.next().await.is_some() {
                wake.notify_one();
            }
            Ok::<(), redis::RedisError>(())
        };
        if let Err(e) = listened.await {
            tracing::debug!("the doorbell's connection failed: {e}");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_redis_url_is_shown_without_its_password() {
        assert_eq!(
            super::shown("redis://default:s3cret@127.0.0.1:6379/0"),
            "redis://127.0.0.1:6379/0"
        );
        assert_eq!(super::shown("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
    }
}
