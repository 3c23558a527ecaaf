//! Folder rules: a job (one type or a pipeline) run on every file that lands in a folder, and
//! their hits (each file a rule took, with the job it started). A rule fires in the
//! transaction that brings a file into its folder ([`fire`], from [`crate::entry::enter`] and
//! the moves), so a crash never loses a firing nor makes two. A file request's `onArrival`
//! is the rule on the request's folder that names the request.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};

use crate::db::files::FileRow;
use crate::db::jobs::{self, NewJob};
use crate::id::{FileId, FolderId, JobId, RequestId, RuleId, TemplateId, UserId};
use crate::job::{JobSpec, JobType};

/// How many rules one account may keep.
pub const MAX_RULES: i64 = 100;

/// How many jobs an account's rules may have waiting in the queue: past it a hit waits, without
/// a job, until [`queue_waiting`] finds room (a folder of 10,000 uploads does not put 10,000
/// jobs in the queue at once).
pub const MAX_QUEUED_RULE_JOBS: i64 = 100;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct RuleRow {
    pub id: RuleId,
    pub user_id: UserId,
    pub folder_id: FolderId,
    /// The folder's stored path (`/a/b`).
    pub folder_path: String,
    pub template_id: Option<TemplateId>,
    pub request_id: Option<RequestId>,
    pub job_type: JobType,
    pub options: serde_json::Value,
    pub result_folder_id: Option<FolderId>,
    pub paused: bool,
    pub created_at: DateTime<Utc>,
    /// Files it took.
    pub hits: i64,
    /// Of those, the ones still waiting for room to start their job.
    pub waiting: i64,
}

impl RuleRow {
    /// The job it runs on each file.
    pub fn spec(&self) -> Result<JobSpec, serde_json::Error> {
        JobSpec::from_row(self.job_type, self.options.clone())
    }
}

const RULE_COLUMNS: &str =
    "r.id, r.user_id, r.folder_id, d.path as folder_path, r.template_id, r.request_id, \
     r.job_type, r.options, r.result_folder_id, r.paused, r.created_at,
     (select count(*) from folder_rule_hits h where h.rule_id = r.id) as hits,
     (select count(*) from folder_rule_hits h where h.rule_id = r.id and h.job_id is null) as waiting";

pub struct NewRule<'a> {
    pub user_id: UserId,
    pub folder_id: FolderId,
    pub spec: &'a JobSpec,
    pub template_id: Option<TemplateId>,
    pub request_id: Option<RequestId>,
    pub result_folder_id: Option<FolderId>,
}

/// Makes a rule in the caller's transaction, under the account's lock; `None` when the account
/// keeps [`MAX_RULES`] already.
pub async fn create(conn: &mut PgConnection, new: &NewRule<'_>) -> Result<Option<RuleRow>, sqlx::Error> {
    // `no key update`: see `reservations::reserve`.
    sqlx::query("select 1 from users where id = $1 for no key update")
        .bind(new.user_id)
        .execute(&mut *conn)
        .await?;
    let kept: i64 = sqlx::query_scalar("select count(*) from folder_rules where user_id = $1")
        .bind(new.user_id)
        .fetch_one(&mut *conn)
        .await?;
    if kept >= MAX_RULES {
        return Ok(None);
    }
    let id = RuleId::random();
    sqlx::query(
        "insert into folder_rules (id, user_id, folder_id, template_id, request_id, job_type, options, result_folder_id)
         values ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(id)
    .bind(new.user_id)
    .bind(new.folder_id)
    .bind(new.template_id)
    .bind(new.request_id)
    .bind(new.spec.job_type().as_str())
    .bind(new.spec.options())
    .bind(new.result_folder_id)
    .execute(&mut *conn)
    .await?;
    find(&mut *conn, new.user_id, id).await
}

/// One of the account's rules; another account's id finds nothing.
pub async fn find<'e>(
    conn: impl sqlx::PgExecutor<'e>,
    user_id: UserId,
    id: RuleId,
) -> Result<Option<RuleRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {RULE_COLUMNS} from folder_rules r join folders d on d.id = r.folder_id
         where r.id = $1 and r.user_id = $2"
    ))
    .bind(id)
    .bind(user_id)
    .fetch_optional(conn)
    .await
}

/// The account's rules, oldest first: all, or those on `folder_id`.
pub async fn list(
    pool: &PgPool,
    user_id: UserId,
    folder_id: Option<FolderId>,
) -> Result<Vec<RuleRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {RULE_COLUMNS} from folder_rules r join folders d on d.id = r.folder_id
         where r.user_id = $1 and ($2::uuid is null or r.folder_id = $2)
         order by r.created_at, r.id"
    ))
    .bind(user_id)
    .bind(folder_id)
    .fetch_all(pool)
    .await
}

/// Pauses or resumes one of the account's rules; answers it as it now is. Hits that were
/// waiting wait on while it is paused.
pub async fn set_paused(
    pool: &PgPool,
    user_id: UserId,
    id: RuleId,
    paused: bool,
) -> Result<Option<RuleRow>, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let changed = sqlx::query("update folder_rules set paused = $3 where id = $1 and user_id = $2")
        .bind(id)
        .bind(user_id)
        .bind(paused)
        .execute(&mut *tx)
        .await?;
    if changed.rows_affected() == 0 {
        return Ok(None);
    }
    let row = find(&mut *tx, user_id, id).await?;
    tx.commit().await?;
    Ok(row)
}

/// Removes one of the account's rules and the hits still waiting; the jobs it started go on.
pub async fn delete(pool: &PgPool, user_id: UserId, id: RuleId) -> Result<bool, sqlx::Error> {
    let mut tx = pool.begin().await?;
    sqlx::query(
        "delete from folder_rule_hits h using folder_rules r
         where h.rule_id = r.id and r.id = $1 and r.user_id = $2 and h.job_id is null",
    )
    .bind(id)
    .bind(user_id)
    .execute(&mut *tx)
    .await?;
    let deleted = sqlx::query("delete from folder_rules where id = $1 and user_id = $2")
        .bind(id)
        .bind(user_id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    tx.commit().await?;
    Ok(deleted > 0)
}

/// Fires the rules of the folder `file` now sits in, in the transaction that brought it there:
/// each rule not paused, whose job takes the file and that has not taken it before, takes it
/// and starts its job (or leaves the hit waiting for room). A file a rule's job made fires no
/// rule (`made_by`): no rule feeds itself or another, so no chain of rules can loop. Answers
/// the jobs queued, to ring the workers' doorbell for after commit.
pub async fn fire(
    conn: &mut PgConnection,
    file: &FileRow,
    made_by: Option<JobId>,
) -> Result<Vec<JobId>, sqlx::Error> {
    let Some(folder_id) = file.folder_id.filter(|_| file.trashed_at.is_none()) else {
        return Ok(Vec::new());
    };
    if let Some(job) = made_by {
        let from_rule: bool =
            sqlx::query_scalar("select exists (select 1 from folder_rule_hits where job_id = $1)")
                .bind(job)
                .fetch_one(&mut *conn)
                .await?;
        if from_rule {
            return Ok(Vec::new());
        }
    }
    let rules: Vec<(RuleId, JobType, serde_json::Value)> = sqlx::query_as(
        "select id, job_type, options from folder_rules
         where folder_id = $1 and user_id = $2 and not paused order by created_at, id",
    )
    .bind(folder_id)
    .bind(file.user_id)
    .fetch_all(&mut *conn)
    .await?;
    let mut queued = Vec::new();
    for (rule_id, job_type, options) in rules {
        let takes = JobSpec::from_row(job_type, options).is_ok_and(|spec| takes(&spec, file));
        if takes && let Some(job) = hit(&mut *conn, rule_id, file, false).await? {
            queued.push(job);
        }
    }
    Ok(queued)
}

/// Whether a rule running `spec` takes `file`: of a kind (and name) its job takes, and alone.
pub fn takes(spec: &JobSpec, file: &FileRow) -> bool {
    spec.takes(file.kind, &file.file_name) && spec.check_inputs(&[file.kind]).is_ok()
}

/// Notes that rule `rule_id` took `file` and starts its job when the account's rules have room
/// in the queue; answers the job queued. A file the rule took before is not taken again.
async fn hit(
    conn: &mut PgConnection,
    rule_id: RuleId,
    file: &FileRow,
    backfill: bool,
) -> Result<Option<JobId>, sqlx::Error> {
    let hit: Option<i64> = sqlx::query_scalar(
        "insert into folder_rule_hits (rule_id, user_id, file_id, backfill) values ($1, $2, $3, $4)
         on conflict (rule_id, file_id) do nothing returning id",
    )
    .bind(rule_id)
    .bind(file.user_id)
    .bind(file.id)
    .bind(backfill)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(hit) = hit else {
        return Ok(None);
    };
    if queued_rule_jobs(&mut *conn, file.user_id).await? >= MAX_QUEUED_RULE_JOBS {
        return Ok(None);
    }
    start(conn, hit).await
}

/// How many of the account's rule jobs are waiting in the queue.
async fn queued_rule_jobs(conn: &mut PgConnection, user_id: UserId) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "select count(*) from folder_rule_hits h join file_jobs j on j.id = h.job_id
         where h.user_id = $1 and j.state = 'queued'",
    )
    .bind(user_id)
    .fetch_one(conn)
    .await
}

/// A hit waiting for its job, with what starting it needs.
#[derive(sqlx::FromRow)]
struct Waiting {
    job_type: JobType,
    options: serde_json::Value,
    user_id: UserId,
    file_id: FileId,
    /// Where the results land: the rule's result folder, or the file's.
    folder_id: Option<FolderId>,
    in_library: bool,
}

/// Starts the job of waiting hit `hit` on its file: results beside the file, or in the rule's
/// result folder. A file gone to the trash since, or a rule whose settings no longer read,
/// starts nothing and lets the hit go.
async fn start(conn: &mut PgConnection, hit: i64) -> Result<Option<JobId>, sqlx::Error> {
    let found: Option<Waiting> = sqlx::query_as(
        "select r.job_type, r.options, h.user_id, h.file_id, coalesce(r.result_folder_id, f.folder_id) as folder_id,
                f.trashed_at is null as in_library
         from folder_rule_hits h join folder_rules r on r.id = h.rule_id join files f on f.id = h.file_id
         where h.id = $1 and h.job_id is null",
    )
    .bind(hit)
    .fetch_optional(&mut *conn)
    .await?;
    let Some(waiting) = found else {
        return Ok(None);
    };
    let spec = match JobSpec::from_row(waiting.job_type, waiting.options) {
        Ok(spec) if waiting.in_library => spec,
        _ => {
            sqlx::query("delete from folder_rule_hits where id = $1")
                .bind(hit)
                .execute(&mut *conn)
                .await?;
            return Ok(None);
        }
    };
    let job = jobs::create(
        &mut *conn,
        &NewJob {
            user_id: waiting.user_id,
            spec: &spec,
            input_ids: &[waiting.file_id],
            source_folder_id: None,
            folder_id: waiting.folder_id,
            idempotency_key: None,
            notify: None,
        },
    )
    .await?;
    sqlx::query("update folder_rule_hits set job_id = $2 where id = $1")
        .bind(hit)
        .bind(job.id)
        .execute(&mut *conn)
        .await?;
    Ok(Some(job.id))
}

/// A backfill of the files already in `folder_id` that `spec` takes: with `take`, rule
/// `take.0` takes those it has not taken, oldest first, while their estimates fit the budget
/// `take.1` (in seconds), and their jobs start as [`fire`]'s do; without, every file is only
/// estimated. Answers what it came to.
pub async fn backfill(
    conn: &mut PgConnection,
    user_id: UserId,
    folder_id: FolderId,
    spec: &JobSpec,
    take: Option<(RuleId, u64)>,
) -> Result<Backfill, sqlx::Error> {
    let files: Vec<FileRow> = sqlx::query_as(
        "select f.id, f.user_id, f.file_name, f.file_size, f.mime_type, f.kind, f.bucket, f.object_key,
                f.modified_time, f.trashed_at, f.created_at, f.folder_id
         from files f
         where f.user_id = $1 and f.folder_id = $2 and f.trashed_at is null and f.derivative_of is null
           and not exists (select 1 from folder_rule_hits h where h.rule_id = $3 and h.file_id = f.id)
         order by f.created_at, f.id",
    )
    .bind(user_id)
    .bind(folder_id)
    .bind(take.map(|(rule, _)| rule))
    .fetch_all(&mut *conn)
    .await?;
    let mut done = Backfill::default();
    let mut spent = false;
    for file in files.iter().filter(|file| takes(spec, file)) {
        done.files += 1;
        let estimate = spec.estimate_seconds(1, file.file_size);
        let Some((rule, budget)) = take else {
            done.estimate_seconds += estimate;
            continue;
        };
        // Oldest first until the budget is spent: a later, smaller file does not jump in.
        spent = spent || done.estimate_seconds + estimate > budget;
        if !spent {
            done.estimate_seconds += estimate;
            done.taken += 1;
            done.queued.extend(hit(&mut *conn, rule, file, true).await?);
        }
    }
    Ok(done)
}

/// What a rule's backfill came to.
#[derive(Debug, Default)]
pub struct Backfill {
    /// Files in the folder the rule takes and had not taken.
    pub files: u64,
    /// The estimate of the files taken (of every file, only estimating).
    pub estimate_seconds: u64,
    /// Files taken within the budget.
    pub taken: u64,
    /// The jobs started on them (the others wait for room).
    pub queued: Vec<JobId>,
}

/// Starts the jobs of waiting hits, oldest first, for every account whose rules have room in
/// the queue and whose rule is not paused; answers how many started. Every worker runs this;
/// a hit is locked while its job is made, so two workers start it once.
pub async fn queue_waiting(pool: &PgPool) -> Result<u64, sqlx::Error> {
    let mut started = 0;
    loop {
        let mut tx = pool.begin().await?;
        let due: Vec<i64> = sqlx::query_scalar(&format!(
            "with queued as (
                 select h.user_id, count(*) as n from folder_rule_hits h join file_jobs j on j.id = h.job_id
                 where j.state = 'queued' group by h.user_id
             ),
             waiting as (
                 select h.id, h.user_id,
                        row_number() over (partition by h.user_id order by h.hit_at, h.id) as nth
                 from folder_rule_hits h join folder_rules r on r.id = h.rule_id
                 where h.job_id is null and not r.paused
             )
             select w.id from waiting w left join queued q using (user_id)
             where w.nth <= {MAX_QUEUED_RULE_JOBS} - coalesce(q.n, 0)
             order by w.id limit 100"
        ))
        .fetch_all(&mut *tx)
        .await?;
        if due.is_empty() {
            return Ok(started);
        }
        let locked: Vec<i64> = sqlx::query_scalar(
            "select id from folder_rule_hits where id = any($1) and job_id is null for update skip locked",
        )
        .bind(&due)
        .fetch_all(&mut *tx)
        .await?;
        if locked.is_empty() {
            return Ok(started);
        }
        for hit in locked {
            started += u64::from(start(&mut tx, hit).await?.is_some());
        }
        tx.commit().await?;
    }
}
