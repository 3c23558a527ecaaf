//! The farm's queue: the job rows themselves. A worker asks for each lane's next job
//! ([`candidates`]), picks a lane by weight (the worker's `farm`), and claims that job
//! ([`claim`]); a lost race answers `None` and it asks again. Within a lane accounts take
//! turns: the account with the fewest jobs running first, then the one served longest ago
//! (`farm_turns`), each account's own jobs oldest first. So one account's ten thousand queued
//! jobs, or the readings of its ten thousand uploads, never stand before another account's
//! next job.

use sqlx::PgPool;

use super::{COLUMNS, JobRow, PAUSE_ENDED};
use crate::id::{FileId, JobId, UserId};
use crate::job::{JobType, Lane};

/// What a worker takes: its lanes, and its job types (`None`: every type).
#[derive(Debug, Clone)]
pub struct Pool {
    pub lanes: Vec<Lane>,
    pub job_types: Option<Vec<JobType>>,
}

/// A job a worker may claim next.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Candidate {
    pub id: JobId,
    pub lane: Lane,
    /// Seconds since it was made.
    pub waited: f64,
    /// It is the oldest job the worker could take, and has waited past the aging time: it
    /// goes before any lane's turn.
    pub aged: bool,
}

/// Each of the pool's lanes' next job by the accounts' turns, and the oldest job waiting when it
/// has waited over `aging_seconds`.
pub async fn candidates(
    pool: &PgPool,
    takes: &Pool,
    aging_seconds: f64,
) -> Result<Vec<Candidate>, sqlx::Error> {
    let lanes: Vec<&str> = takes.lanes.iter().map(|lane| lane.as_str()).collect();
    let job_types: Option<Vec<&str>> = takes
        .job_types
        .as_ref()
        .map(|types| types.iter().map(|t| t.as_str()).collect());
    sqlx::query_as(
        "with heads as (
             select distinct on (lane, user_id) id, lane, user_id, queued_at
             from file_jobs
             where state = 'queued' and (run_after is null or run_after <= now())
               and lane = any($1) and ($2::text[] is null or job_type = any($2))
             order by lane, user_id, queued_at, id
         ),
         turns as (
             select distinct on (h.lane) h.id, h.lane, h.queued_at, false as aged
             from heads h
             left join farm_turns t on t.lane = h.lane and t.user_id = h.user_id
             order by h.lane,
                      (select count(*) from file_jobs r where r.user_id = h.user_id and r.state = 'running'),
                      t.served_at nulls first, h.queued_at, h.id
         ),
         aged as (
             select id, lane, queued_at, true as aged from heads
             where queued_at < now() - make_interval(secs => $3)
             order by queued_at, id
             limit 1
         )
         select id, lane, extract(epoch from now() - queued_at)::float8 as waited, aged from turns
         union all
         select id, lane, extract(epoch from now() - queued_at)::float8, aged from aged",
    )
    .bind(lanes)
    .bind(job_types)
    .bind(aging_seconds)
    .fetch_all(pool)
    .await
}

/// A job a worker has just taken.
#[derive(Debug, sqlx::FromRow)]
pub struct Claimed {
    #[sqlx(flatten)]
    pub job: JobRow,
    /// This is the job's first start (not a retry or a job handed back).
    pub first_start: bool,
}

/// Takes queued job `id` for `worker` and marks its account served in its lane; `None` when
/// another worker took it first (or it was stopped meanwhile).
pub async fn claim(pool: &PgPool, id: JobId, worker: &str) -> Result<Option<Claimed>, sqlx::Error> {
    sqlx::query_as(&format!(
        "with claimed as (
             update file_jobs
             set state = 'running', attempts = attempts + 1, worker = $2, heartbeat_at = now(),
                 started_at = coalesce(started_at, now()), {PAUSE_ENDED}
             where id = $1 and state = 'queued' and (run_after is null or run_after <= now())
             returning *
         ),
         turn as (
             insert into farm_turns (lane, user_id, served_at)
             select lane, user_id, now() from claimed
             on conflict (lane, user_id) do update set served_at = excluded.served_at
         )
         select {COLUMNS}, started_at = heartbeat_at as first_start from claimed"
    ))
    .bind(id)
    .bind(worker)
    .fetch_optional(pool)
    .await
}

/// Takes for `worker` up to `most` more of account `user_id`'s queued metadata readings, to be
/// read in the process of one it has claimed, of file `first` ([`crate::job::Lane::System`]'s
/// burst after an upload of many files): only readings never tried, so that a file whose
/// reading failed is read alone, and only of files of at most `largest` bytes, `first` too;
/// oldest first, rows another worker is claiming passed over rather than waited for. The
/// account's turn was taken by the claim of the first; these count among its running jobs, so
/// other accounts' go first meanwhile.
pub async fn claim_readings(
    pool: &PgPool,
    user_id: UserId,
    first: FileId,
    worker: &str,
    most: i64,
    largest: i64,
) -> Result<Vec<Claimed>, sqlx::Error> {
    // Picked apart (materialized) so that the limit holds: as a subquery of the update, it
    // may be run again for each row.
    sqlx::query_as(&format!(
        "with picked as materialized (
             select j.id from file_jobs j join files f on f.id = j.input_ids[1]
             where j.lane = 'system' and j.user_id = $1 and j.state = 'queued'
               and j.job_type = 'readMetadata' and j.attempts = 0
               and (j.run_after is null or j.run_after <= now()) and j.stop_requested_at is null
               and f.file_size <= $4 and (select file_size from files where id = $5) <= $4
             order by j.queued_at, j.id
             limit $3
             for update of j skip locked
         ),
         claimed as (
             update file_jobs
             set state = 'running', attempts = attempts + 1, worker = $2, heartbeat_at = now(),
                 started_at = coalesce(started_at, now()), {PAUSE_ENDED}
             from picked
             where file_jobs.id = picked.id and file_jobs.state = 'queued'
             returning file_jobs.*
         )
         select {COLUMNS}, started_at = heartbeat_at as first_start from claimed order by queued_at, id"
    ))
    .bind(user_id)
    .bind(worker)
    .bind(most)
    .bind(largest)
    .bind(first)
    .fetch_all(pool)
    .await
}

/// Puts back in the queue, to be tried again after `after`, the jobs of `ids` that `worker`
/// still runs: readings read together whose process ended before it ended them. The attempt
/// is spent, so each is read alone next time ([`claim_readings`] takes none tried before).
pub async fn release_unended(
    pool: &PgPool,
    ids: &[JobId],
    worker: &str,
    after: std::time::Duration,
) -> Result<u64, sqlx::Error> {
    let released = sqlx::query(&format!(
        "update file_jobs
         set state = 'queued', worker = null, run_after = now() + make_interval(secs => $3), {PAUSE_ENDED}
         where id = any($1) and worker = $2 and state = 'running'"
    ))
    .bind(ids)
    .bind(worker)
    .bind(after.as_secs_f64())
    .execute(pool)
    .await?;
    Ok(released.rows_affected())
}

/// Gives the jobs of `ids` that `worker` runs back to the queue as if never taken (a draining
/// worker's jobs, readings a process had no time left for): their attempts are not spent, and
/// any worker may take them at once. What they stored so far is kept (their outputs by
/// position), so the next attempt carries on from there. Answers how many were handed back.
pub async fn hand_back(pool: &PgPool, ids: &[JobId], worker: &str) -> Result<u64, sqlx::Error> {
    let handed = sqlx::query(&format!(
        "update file_jobs
         set state = 'queued', worker = null, run_after = null, attempts = greatest(attempts - 1, 0),
             {PAUSE_ENDED}
         where id = any($1) and worker = $2 and state = 'running'"
    ))
    .bind(ids)
    .bind(worker)
    .execute(pool)
    .await?;
    Ok(handed.rows_affected())
}

/// Puts back in the queue the running jobs whose worker has been silent for `stale_seconds` (it
/// died), unless they have been tried `max_attempts` times ([`stale_given_up`]).
pub async fn requeue_stale(
    pool: &PgPool,
    stale_seconds: f64,
    max_attempts: i32,
) -> Result<Vec<JobId>, sqlx::Error> {
    sqlx::query_scalar(&format!(
        "update file_jobs set state = 'queued', worker = null, run_after = null, {PAUSE_ENDED}
         where state = 'running' and heartbeat_at < now() - make_interval(secs => $1) and attempts < $2
         returning id"
    ))
    .bind(stale_seconds)
    .bind(max_attempts)
    .fetch_all(pool)
    .await
}

/// The running jobs whose worker has been silent for `stale_seconds` and that have been tried
/// `max_attempts` times: to be failed.
pub async fn stale_given_up(
    pool: &PgPool,
    stale_seconds: f64,
    max_attempts: i32,
) -> Result<Vec<JobRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {COLUMNS} from file_jobs
         where state = 'running' and heartbeat_at < now() - make_interval(secs => $1) and attempts >= $2"
    ))
    .bind(stale_seconds)
    .bind(max_attempts)
    .fetch_all(pool)
    .await
}

/// How one of [`LaneGauge::render`]'s series reads a lane.
type Reading = fn(&LaneGauge) -> f64;

/// One lane of the whole farm, as an autoscaler reads it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct LaneGauge {
    pub lane: Lane,
    /// Jobs waiting (a retry waiting out its pause included).
    pub queued: i64,
    /// Seconds the oldest job a worker could take now has waited (0: none waits).
    pub oldest_seconds: f64,
    pub running: i64,
}

impl LaneGauge {
    /// The three series in the Prometheus text format, every lane each.
    pub fn render(gauges: &[LaneGauge]) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let series: [(&str, &str, Reading); 3] = [
            (
                "drive_farm_jobs_queued",
                "Jobs waiting in the lane, farm-wide.",
                |g| g.queued as f64,
            ),
            (
                "drive_farm_oldest_queued_seconds",
                "Seconds the oldest job ready to run in the lane has waited.",
                |g| g.oldest_seconds,
            ),
            (
                "drive_farm_jobs_running",
                "Jobs of the lane running, farm-wide.",
                |g| g.running as f64,
            ),
        ];
        for (name, help, value) in series {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
            for gauge in gauges {
                let _ = writeln!(out, "{name}{{lane=\"{}\"}} {}", gauge.lane.as_str(), value(gauge));
            }
        }
        out
    }
}

/// Every lane's gauges, read from the job rows.
pub async fn gauges(pool: &PgPool) -> Result<Vec<LaneGauge>, sqlx::Error> {
    let lanes: Vec<&str> = Lane::ALL.iter().map(|lane| lane.as_str()).collect();
    sqlx::query_as(
        "select l.lane,
                (select count(*) from file_jobs where state = 'queued' and lane = l.lane) as queued,
                coalesce((select extract(epoch from now() - min(queued_at)) from file_jobs
                          where state = 'queued' and lane = l.lane
                            and (run_after is null or run_after <= now())), 0)::float8 as oldest_seconds,
                (select count(*) from file_jobs where state = 'running' and lane = l.lane) as running
         from unnest($1::text[]) as l(lane)",
    )
    .bind(lanes)
    .fetch_all(pool)
    .await
}
