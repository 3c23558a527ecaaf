//! The job queue: apalis on Redis. It carries nothing but a job's id; the job row in
//! PostgreSQL says everything else, so a lost or repeated message can never lose or double a
//! job (a worker claims the row before it runs anything, see [`crate::db::jobs::claim`]).

use std::time::Duration;

use crate::config::{self, ConfigError};
use crate::id::JobId;
use crate::job;
use apalis_core::backend::TaskSink;
use apalis_redis::{ConnectionManager, RedisStorage};
use serde::{Deserialize, Serialize};

/// A Redis URL for a message or a log: without its user and password (compose's Redis has one).
fn shown(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    format!("{scheme}://{host}{path}")
}

/// What a queue message holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobMessage {
    pub job_id: JobId,
}

#[derive(Debug, Clone)]
pub struct QueueConfig {
    pub redis_url: String,
    /// The queue's name: the prefix of every Redis key it uses, so several drives (or tests)
    /// can share one Redis. No colons: apalis splits its wake-up channel names on them.
    pub name: String,
    /// How often a worker renews the heartbeat of the jobs it runs. A running job whose
    /// heartbeat is [`QueueConfig::missed_heartbeats`] of these old lost its worker and is
    /// pushed again.
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

    /// The apalis settings every producer and consumer of this queue must share.
    pub fn apalis(&self, batch_size: usize) -> apalis_redis::Config {
        apalis_redis::Config::default()
            .queue(&self.name)
            .batch_size(batch_size.max(1))
            .heartbeat_interval(self.heartbeat)
            // apalis renews a worker's heartbeat only while the worker is free to poll: one
            // busy with as many jobs as it runs stays silent until one ends, and would be
            // declared dead (and stopped) by the others. So apalis may only give up on a
            // worker after the longest a job can run; the job rows' own heartbeats, renewed
            // every second by the supervisor, are what find a dead worker's jobs quickly.
            .missed_heartbeats(
                ((job::TIME_LIMIT_SECONDS as f64 * 1.5) / self.heartbeat.as_secs_f64()).ceil() as usize,
            )
            // Outcomes live in the job row. (apalis still keeps every message taken; the
            // worker removes it once handled: `JobQueue::forget`.)
            .persist_results(false)
    }
}

#[derive(Debug, thiserror::Error)]
#[error("the job queue (Redis) failed: {0}")]
pub struct QueueError(String);

/// The producer side: what the API (and the worker, re-queueing) pushes job ids through.
#[derive(Clone)]
pub struct JobQueue {
    storage: RedisStorage<JobMessage>,
    /// The channel idle workers wait on.
    wake_channel: String,
    /// Where apalis keeps messages waiting for a worker: the list of queued ones and the set of
    /// scheduled ones (every push files its message there, due at once).
    waiting: (String, String),
    /// Where apalis keeps a message while a worker handles it ([`JobQueue::forget`]).
    kept: Kept,
}

/// [`JobQueue::forget`]'s removal, done only once apalis has recorded the worker's lease.
const FORGET: &str = r#"
if redis.call("hget", KEYS[3], "locked_by") ~= ARGV[2] then
    return 0
end
redis.call("srem", KEYS[1], ARGV[1])
redis.call("hdel", KEYS[2], ARGV[1])
redis.call("del", KEYS[3])
return 1
"#;

/// What apalis-redis 1.0 keeps of a message a worker has taken: the message in the data hash,
/// a meta hash of its own, and its id in the worker's set of messages in flight. With results
/// not persisted it never removes them (and a worker it declares dead has every id in its set
/// queued again), so the drive removes them itself once the job's row has the outcome.
#[derive(Clone)]
struct Kept {
    data: String,
    meta: String,
    in_flight: String,
}

impl JobQueue {
    pub async fn connect(config: &QueueConfig) -> Result<JobQueue, QueueError> {
        let conn: ConnectionManager = apalis_redis::connect(config.redis_url.as_str())
            .await
            .map_err(|e| QueueError(format!("connecting to {}: {e}", shown(&config.redis_url))))?;
        let apalis = config.apalis(1);
        Ok(JobQueue {
            wake_channel: format!("tasks:{}:available", apalis.active_jobs_list()),
            waiting: (apalis.active_jobs_list(), apalis.scheduled_jobs_set()),
            kept: Kept {
                data: apalis.job_data_hash(),
                meta: apalis.job_meta_hash(),
                in_flight: apalis.inflight_jobs_set(),
            },
            storage: RedisStorage::new(conn).with_config(apalis),
        })
    }

    /// Messages waiting in Redis for a worker (the queue's depth, for the metrics): against the
    /// jobs queued in the database, a shortfall is messages lost, a surplus re-pushes not yet
    /// dropped by a claim.
    pub async fn depth(&self) -> Result<i64, QueueError> {
        let mut storage = self.storage.clone();
        let (queued, scheduled): (i64, i64) = redis::pipe()
            .cmd("LLEN")
            .arg(&self.waiting.0)
            .cmd("ZCARD")
            .arg(&self.waiting.1)
            .query_async(storage.get_connection())
            .await
            .map_err(|e| QueueError(e.to_string()))?;
        Ok(queued + scheduled)
    }

    /// Whether Redis answers (for `/readyz`).
    pub async fn ping(&self) -> Result<(), QueueError> {
        let mut storage = self.storage.clone();
        redis::cmd("PING")
            .query_async::<String>(storage.get_connection())
            .await
            .map(drop)
            .map_err(|e| QueueError(e.to_string()))
    }

    /// Removes what apalis keeps of message `task` (see [`Kept`]), which `worker` has handled;
    /// false when it cannot yet. apalis records its lease on a message (the meta hash's
    /// `locked_by`) in a batch of its own, possibly after the job has ended: removing the
    /// message before that makes the lease's script fail ("task not held by this worker") and
    /// stops the worker's polling. So the message goes only once its lease is recorded.
    pub async fn forget(&self, task: &str, worker: &str) -> Result<bool, QueueError> {
        let mut storage = self.storage.clone();
        let forgotten: i64 = redis::Script::new(FORGET)
            .key(format!("{}:{worker}", self.kept.in_flight))
            .key(&self.kept.data)
            .key(format!("{}:{task}", self.kept.meta))
            .arg(task)
            .arg(worker)
            .invoke_async(storage.get_connection())
            .await
            .map_err(|e| QueueError(e.to_string()))?;
        Ok(forgotten == 1)
    }

    pub async fn push(&self, job_id: JobId) -> Result<(), QueueError> {
        let mut storage = self.storage.clone();
        storage
            .push(JobMessage { job_id })
            .await
            .map_err(|e| QueueError(e.to_string()))?;
        // apalis-redis 1.0 files every pushed message as scheduled for "now" and announces
        // only messages it queues directly, so idle workers would notice the job at their next
        // heartbeat; announcing it on their wake-up channel starts it at once.
        redis::cmd("PUBLISH")
            .arg(&self.wake_channel)
            .arg(job_id.to_string())
            .query_async::<i64>(storage.get_connection())
            .await
            .map_err(|e| QueueError(e.to_string()))?;
        Ok(())
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
