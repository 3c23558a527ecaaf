//! The agent interface's tasks: made by `SendMessage`, seen and canceled only through the
//! credential that made them, run by one worker at a time (a lease in the row, taken over when
//! it runs out), ended once.

use chrono::{DateTime, Utc};
use sqlx::{PgPool, Postgres, QueryBuilder};

use super::agent_push::NewConfig;
use crate::a2a::{Artifact, Message, Task, TaskStanding, TaskState, TaskStatus, timestamp};
use crate::id::{ContextId, TaskId, TokenId, UserId};

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct TaskRow {
    pub id: TaskId,
    pub context_id: ContextId,
    pub user_id: UserId,
    pub token_id: TokenId,
    pub state: TaskState,
    pub status_message: Option<serde_json::Value>,
    pub status_time: DateTime<Utc>,
    pub history: serde_json::Value,
    pub artifacts: serde_json::Value,
    pub created_at: DateTime<Utc>,
    /// What became of the first message's attached parts, by index (see [`note_attachment`]).
    pub attachments: serde_json::Value,
    /// Files proposed for the trash, until the next task confirms them ([`propose`]).
    pub proposal: Option<serde_json::Value>,
}

const ROW: &str = "id, context_id, user_id, token_id, state, status_message, status_time, history, artifacts, \
     created_at, attachments, proposal";

impl TaskRow {
    /// The conversation so far, oldest first.
    pub fn messages(&self) -> Vec<Message> {
        serde_json::from_value(self.history.clone()).unwrap_or_default()
    }

    /// The task as A2A answers it: at most `history_length` of the latest messages (all when
    /// `None`, none and no `history` at 0), its artifacts when `include_artifacts`.
    pub fn to_task(&self, history_length: Option<usize>, include_artifacts: bool) -> Task {
        let messages = self.messages();
        let history = match history_length {
            Some(0) => None,
            Some(n) => Some(messages[messages.len().saturating_sub(n)..].to_vec()),
            None => Some(messages),
        };
        Task {
            id: self.id.to_string(),
            context_id: self.context_id.to_string(),
            status: TaskStatus {
                state: self.state,
                message: self
                    .status_message
                    .clone()
                    .and_then(|m| serde_json::from_value(m).ok()),
                timestamp: timestamp(self.status_time),
            },
            artifacts: include_artifacts
                .then(|| serde_json::from_value::<Vec<Artifact>>(self.artifacts.clone()).unwrap_or_default()),
            history,
        }
    }
}

/// Tasks one token may have working at once: each runs a model, which costs.
pub const MAX_UNFINISHED: i64 = 10;

/// Records a task, working from the start (A2A: accepted work is working), whose conversation
/// starts with `first`, with the push config sent with it (so it hears every change from the
/// first); `None` when the token has [`MAX_UNFINISHED`] tasks that have not ended.
pub async fn create(
    pool: &PgPool,
    id: TaskId,
    context_id: ContextId,
    user_id: UserId,
    token_id: TokenId,
    first: &Message,
    push: Option<NewConfig<'_>>,
) -> Result<Option<TaskRow>, sqlx::Error> {
    let mut tx = pool.begin().await?;
    // Two sends at once must not both pass the count.
    sqlx::query("select pg_advisory_xact_lock(hashtextextended($1::text, 4))")
        .bind(token_id)
        .execute(&mut *tx)
        .await?;
    let unfinished: i64 = sqlx::query_scalar(
        "select count(*) from agent_tasks
         where token_id = $1 and state = 'TASK_STATE_WORKING'",
    )
    .bind(token_id)
    .fetch_one(&mut *tx)
    .await?;
    if unfinished >= MAX_UNFINISHED {
        return Ok(None);
    }
    let task = sqlx::query_as(&format!(
        "insert into agent_tasks (id, context_id, user_id, token_id, state, history)
         values ($1, $2, $3, $4, 'TASK_STATE_WORKING', $5) returning {ROW}"
    ))
    .bind(id)
    .bind(context_id)
    .bind(user_id)
    .bind(token_id)
    .bind(serde_json::json!([first]))
    .fetch_one(&mut *tx)
    .await?;
    if let Some(push) = push {
        super::agent_push::upsert(&mut tx, &push).await?;
        super::agent_push::notice_start(&mut tx, id).await?;
    }
    tx.commit().await?;
    Ok(Some(task))
}

/// One of the credential's tasks.
pub async fn find(pool: &PgPool, token_id: TokenId, id: TaskId) -> Result<Option<TaskRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {ROW} from agent_tasks where id = $1 and token_id = $2"
    ))
    .bind(id)
    .bind(token_id)
    .fetch_optional(pool)
    .await
}

/// The tasks before `before` in a conversation, oldest first: what the agent reads first.
pub async fn earlier_in_context(
    pool: &PgPool,
    token_id: TokenId,
    context_id: ContextId,
    before: DateTime<Utc>,
) -> Result<Vec<TaskRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {ROW} from agent_tasks
         where token_id = $1 and context_id = $2 and created_at < $3
         order by created_at, id"
    ))
    .bind(token_id)
    .bind(context_id)
    .bind(before)
    .fetch_all(pool)
    .await
}

/// Which of the credential's tasks `ListTasks` answers.
#[derive(Debug, Default)]
pub struct ListFilter {
    pub context_id: Option<ContextId>,
    pub state: Option<TaskState>,
    pub status_after: Option<DateTime<Utc>>,
}

/// Where a page of `ListTasks` starts: after the task with this status time and id.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PageToken {
    pub status_time: DateTime<Utc>,
    pub id: TaskId,
}

impl PageToken {
    pub fn encode(self) -> String {
        format!("{}.{}", self.status_time.timestamp_micros(), self.id)
    }

    pub fn decode(s: &str) -> Option<PageToken> {
        let (micros, id) = s.split_once('.')?;
        Some(PageToken {
            status_time: DateTime::from_timestamp_micros(micros.parse().ok()?)?,
            id: id.parse().ok()?,
        })
    }
}

/// A page of the credential's tasks, the latest status change first, and how many match in all.
pub async fn list(
    pool: &PgPool,
    token_id: TokenId,
    filter: &ListFilter,
    after: Option<PageToken>,
    limit: i64,
) -> Result<(Vec<TaskRow>, i64), sqlx::Error> {
    let filtered = |q: &mut QueryBuilder<Postgres>| {
        q.push(" where token_id = ").push_bind(token_id);
        if let Some(context_id) = filter.context_id {
            q.push(" and context_id = ").push_bind(context_id);
        }
        if let Some(state) = filter.state {
            q.push(" and state = ").push_bind(state.as_str());
        }
        if let Some(after) = filter.status_after {
            q.push(" and status_time >= ").push_bind(after);
        }
    };
    let mut count = QueryBuilder::new("select count(*) from agent_tasks");
    filtered(&mut count);
    let total: i64 = count.build_query_scalar().fetch_one(pool).await?;
    let mut page = QueryBuilder::new(format!("select {ROW} from agent_tasks"));
    filtered(&mut page);
    if let Some(after) = after {
        page.push(" and (status_time, id) < (")
            .push_bind(after.status_time)
            .push(", ")
            .push_bind(after.id)
            .push(")");
    }
    page.push(" order by status_time desc, id desc limit ")
        .push_bind(limit);
    let rows = page.build_query_as().fetch_all(pool).await?;
    Ok((rows, total))
}

/// Whose tasks a call reaches: through A2A, the credential's that started them; in the app,
/// every task of the account (its owner's view).
#[derive(Debug, Clone, Copy)]
pub enum Holder {
    Credential(TokenId),
    Account(UserId),
}

impl Holder {
    /// The column of `agent_tasks` that names the holder, and the holder's id.
    fn column(self) -> (&'static str, uuid::Uuid) {
        match self {
            Holder::Credential(token) => ("token_id", token.into()),
            Holder::Account(user) => ("user_id", user.into()),
        }
    }
}

/// Cancels one of the holder's tasks that has not ended; `None` when it has none such (the
/// caller tells "no such task" from "already ended" with [`find`] or [`account_has`]).
pub async fn cancel(pool: &PgPool, holder: Holder, id: TaskId) -> Result<Option<TaskRow>, sqlx::Error> {
    let (column, holder) = holder.column();
    sqlx::query_as(&format!(
        "update agent_tasks set state = 'TASK_STATE_CANCELED', status_time = now(), leased_by = null,
             leased_until = null
         where id = $1 and {column} = $2 and state = 'TASK_STATE_WORKING'
         returning {ROW}"
    ))
    .bind(id)
    .bind(holder)
    .fetch_optional(pool)
    .await
}

/// One of the account's tasks with what its owner needs to tell it apart: what it waits for and
/// until when, and the credential that started it (a token's label, or the app's name).
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct AccountTask {
    #[sqlx(flatten)]
    pub task: TaskRow,
    pub started_by: String,
    /// Whether an app let in through OAuth started it (`started_by` is then the app's name).
    pub by_app: bool,
    /// Whether a person's sign-in (the app in a browser) started it.
    pub by_sign_in: bool,
    pub waiting_for: Option<String>,
    pub waiting_until: Option<DateTime<Utc>>,
}

impl AccountTask {
    pub fn standing(&self) -> TaskStanding {
        match self.task.state {
            TaskState::Completed => TaskStanding::Completed,
            TaskState::Failed => TaskStanding::Failed,
            TaskState::Canceled => TaskStanding::Canceled,
            _ if self.waiting_for.is_some() => TaskStanding::Waiting,
            _ => TaskStanding::Working,
        }
    }
}

/// A page of every task of the account, whichever credential started it, the latest status
/// change first; only those in `standing` when given.
pub async fn of_account(
    pool: &PgPool,
    user_id: UserId,
    standing: Option<TaskStanding>,
    after: Option<PageToken>,
    limit: i64,
) -> Result<Vec<AccountTask>, sqlx::Error> {
    let mut q = QueryBuilder::new(
        "select t.*, coalesce(c.name, k.label) as started_by, c.id is not null as by_app,
                k.sign_in as by_sign_in, w.what as waiting_for, w.until as waiting_until
         from agent_tasks t
         join api_tokens k on k.id = t.token_id
         left join oauth_clients c on c.id = k.oauth_client_id
         left join agent_waits w on w.task_id = t.id and w.happened is null
                                and t.state = 'TASK_STATE_WORKING'
         where t.user_id = ",
    );
    q.push_bind(user_id);
    match standing {
        None => {}
        Some(TaskStanding::Working) => {
            q.push(" and t.state = 'TASK_STATE_WORKING' and w.task_id is null");
        }
        Some(TaskStanding::Waiting) => {
            q.push(" and w.task_id is not null");
        }
        Some(ended) => {
            let state = match ended {
                TaskStanding::Completed => TaskState::Completed,
                TaskStanding::Failed => TaskState::Failed,
                _ => TaskState::Canceled,
            };
            q.push(" and t.state = ").push_bind(state.as_str());
        }
    }
    if let Some(after) = after {
        q.push(" and (t.status_time, t.id) < (")
            .push_bind(after.status_time)
            .push(", ")
            .push_bind(after.id)
            .push(")");
    }
    q.push(" order by t.status_time desc, t.id desc limit ")
        .push_bind(limit);
    q.build_query_as().fetch_all(pool).await
}

/// Whether the account has a task `id`, in any state.
pub async fn account_has(pool: &PgPool, user_id: UserId, id: TaskId) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("select exists (select 1 from agent_tasks where id = $1 and user_id = $2)")
        .bind(id)
        .bind(user_id)
        .fetch_one(pool)
        .await
}

/// Leases to `worker` up to `limit` tasks that have not ended, are not waiting, and that no
/// live lease holds, oldest first.
pub async fn claim(
    pool: &PgPool,
    worker: uuid::Uuid,
    lease: std::time::Duration,
    limit: i64,
) -> Result<Vec<TaskRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "with free as (
             select id from agent_tasks
             where state = 'TASK_STATE_WORKING'
               and (leased_until is null or leased_until < now())
               -- A waiting task is taken up once its wait ends (agent_waits).
               and not exists (select 1 from agent_waits w
                               where w.task_id = agent_tasks.id and w.happened is null)
             order by created_at
             limit $3
             for update skip locked)
         update agent_tasks t
         set leased_by = $1, leased_until = now() + make_interval(secs => $2)
         from free where t.id = free.id
         returning {}",
        ROW.split(", ")
            .map(|c| format!("t.{c}"))
            .collect::<Vec<_>>()
            .join(", ")
    ))
    .bind(worker)
    .bind(lease.as_secs_f64())
    .bind(limit)
    .fetch_all(pool)
    .await
}

/// Renews a held task's lease; false when it is no longer `worker`'s to run (canceled, or
/// taken over): the worker stops.
pub async fn renew(
    pool: &PgPool,
    id: TaskId,
    worker: uuid::Uuid,
    lease: std::time::Duration,
) -> Result<bool, sqlx::Error> {
    let renewed = sqlx::query(
        "update agent_tasks set leased_until = now() + make_interval(secs => $3)
         where id = $1 and leased_by = $2 and state = 'TASK_STATE_WORKING'",
    )
    .bind(id)
    .bind(worker)
    .bind(lease.as_secs_f64())
    .execute(pool)
    .await?;
    Ok(renewed.rows_affected() == 1)
}

/// Ends a held task `state` (completed or failed) with the agent's `message`, added to the
/// conversation, and `artifacts`; false when it was no longer `worker`'s (canceled meanwhile).
pub async fn finish(
    pool: &PgPool,
    id: TaskId,
    worker: uuid::Uuid,
    state: TaskState,
    message: &Message,
    artifacts: &[Artifact],
) -> Result<bool, sqlx::Error> {
    let ended = sqlx::query(
        "update agent_tasks
         set state = $3, status_message = $4, status_time = now(), history = history || $5,
             artifacts = $6, leased_by = null, leased_until = null
         where id = $1 and leased_by = $2 and state = 'TASK_STATE_WORKING'",
    )
    .bind(id)
    .bind(worker)
    .bind(state.as_str())
    .bind(serde_json::to_value(message).expect("a message is JSON"))
    .bind(serde_json::json!([message]))
    .bind(serde_json::to_value(artifacts).expect("artifacts are JSON"))
    .execute(pool)
    .await?;
    Ok(ended.rows_affected() == 1)
}

/// Records what became of the attached part at `index` of a held task's first message, unless
/// something is recorded for it already; answers what is recorded (a worker that took the task
/// over uses the first worker's).
pub async fn note_attachment(
    pool: &PgPool,
    id: TaskId,
    worker: uuid::Uuid,
    index: usize,
    note: &serde_json::Value,
) -> Result<Option<serde_json::Value>, sqlx::Error> {
    sqlx::query_scalar(
        "update agent_tasks
         set attachments = case when attachments ? $3 then attachments
                                else attachments || jsonb_build_object($3::text, $4::jsonb) end
         where id = $1 and leased_by = $2 and state = 'TASK_STATE_WORKING'
         returning attachments -> $3",
    )
    .bind(id)
    .bind(worker)
    .bind(index.to_string())
    .bind(note)
    .fetch_optional(pool)
    .await
}

/// Keeps the files a held task proposes for the trash (the last proposal of a task stands).
pub async fn propose(
    pool: &PgPool,
    id: TaskId,
    worker: uuid::Uuid,
    proposal: &serde_json::Value,
) -> Result<(), sqlx::Error> {
    sqlx::query("update agent_tasks set proposal = $3 where id = $1 and leased_by = $2")
        .bind(id)
        .bind(worker)
        .bind(proposal)
        .execute(pool)
        .await?;
    Ok(())
}

/// Marks `earlier`'s proposal as confirmed by the task `by`; true when it is `by`'s to carry
/// out (just marked, or marked by `by` before: a task taken over carries it out again, which
/// trashing allows), false when another task used it.
pub async fn confirm_proposal(pool: &PgPool, earlier: TaskId, by: TaskId) -> Result<bool, sqlx::Error> {
    let used_by: Option<String> = sqlx::query_scalar(
        "update agent_tasks
         set proposal = case when proposal ? 'usedBy' then proposal
                             else proposal || jsonb_build_object('usedBy', $2::text) end
         where id = $1 and proposal is not null
         returning proposal ->> 'usedBy'",
    )
    .bind(earlier)
    .bind(by.to_string())
    .fetch_optional(pool)
    .await?
    .flatten();
    Ok(used_by == Some(by.to_string()))
}
