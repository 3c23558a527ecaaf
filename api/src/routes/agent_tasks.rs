//! The account's agent tasks for their owner, whichever credential started them: what the app
//! shows under Agents ("waiting tasks appear under Agents in the app; stopping one there cancels
//! its task"). Through A2A a task stays the credential's that started it; these routes are the
//! account owner's view past that, so only the account's own token (every scope, not an app's)
//! may call them, as with its connections and sign-ins.

use axum::extract::State;
use chrono::{DateTime, Utc};
use drive_core::a2a::{Message, TaskStanding};
use drive_core::db::agent_tasks::{self, AccountTask, Holder, PageToken};
use drive_core::id::{ContextId, TaskId};
use drive_core::input::{Bounded, Line};
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
        .routes(routes!(select_agent_tasks))
        .routes(routes!(stop_agent_task))
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SelectAgentTasksInput {
    /// Only the tasks standing so.
    state: Option<TaskStanding>,
    /// A `nextCursor` from before.
    cursor: Option<Line<1, 100>>,
    /// 1 to 100; default 50.
    limit: Option<Bounded<1, 100>>,
}

/// What started a task.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum Credential {
    /// An API token of the account; `startedBy` is its label.
    Token,
    /// An app let in through OAuth; `startedBy` is the name it registered with.
    App,
    /// A person's sign-in in a browser.
    SignIn,
}

/// One of the account's agent tasks.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentTaskRecord {
    task_id: TaskId,
    /// The conversation it is part of.
    context_id: ContextId,
    state: TaskStanding,
    /// What was asked: the text of the task's first message.
    asked: String,
    /// The agent's latest word: its reply, why it failed, or what it is doing.
    said: Option<String>,
    /// For a waiting task, what it waits for, in words.
    waiting_for: Option<String>,
    /// For a waiting task, when the wait ends with nothing having happened.
    wait_until: Option<DateTime<Utc>>,
    started_by: String,
    started_with: Credential,
    create_time: DateTime<Utc>,
    /// When `state` last changed.
    status_time: DateTime<Utc>,
}

impl From<AccountTask> for AgentTaskRecord {
    fn from(row: AccountTask) -> AgentTaskRecord {
        let state = row.standing();
        let said = row
            .task
            .status_message
            .clone()
            .and_then(|m| serde_json::from_value::<Message>(m).ok())
            .map(|m| m.text());
        AgentTaskRecord {
            task_id: row.task.id,
            context_id: row.task.context_id,
            state,
            asked: row.task.messages().first().map(Message::text).unwrap_or_default(),
            said,
            waiting_for: row.waiting_for,
            wait_until: row.waiting_until,
            started_by: row.started_by,
            started_with: match (row.by_app, row.by_sign_in) {
                (true, _) => Credential::App,
                (false, true) => Credential::SignIn,
                (false, false) => Credential::Token,
            },
            create_time: row.task.created_at,
            status_time: row.task.status_time,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentTasks {
    /// The latest status change first.
    tasks: Vec<AgentTaskRecord>,
    /// Pass back as `cursor` for the next page; null on the last.
    next_cursor: Option<String>,
}

/// The account's agent tasks, whichever token, app or sign-in started them, each with what it
/// waits for.
#[utoipa::path(post, path = "/select-agent-tasks", tag = "agent", request_body = Option<SelectAgentTasksInput>,
    responses((status = 200, body = AgentTasks)))]
async fn select_agent_tasks(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<Option<SelectAgentTasksInput>>,
) -> ApiResult<axum::Json<AgentTasks>> {
    let input = input.unwrap_or_default();
    let limit = input.limit.map_or(50, Bounded::get);
    let after = match input.cursor.as_deref() {
        None => None,
        Some(cursor) => Some(
            PageToken::decode(cursor).ok_or_else(|| ApiError::invalid("cursor", "is not a nextCursor"))?,
        ),
    };
    let mut rows = agent_tasks::of_account(&state.db, caller.user_id, input.state, after, limit + 1).await?;
    let more = rows.len() as i64 > limit;
    rows.truncate(limit as usize);
    let next_cursor = rows.last().filter(|_| more).map(|last| {
        PageToken {
            status_time: last.task.status_time,
            id: last.task.id,
        }
        .encode()
    });
    Ok(axum::Json(AgentTasks {
        tasks: rows.into_iter().map(AgentTaskRecord::from).collect(),
        next_cursor,
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StopAgentTaskInput {
    task_id: TaskId,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoppedTask {
    task_id: TaskId,
    /// `canceled`.
    state: TaskStanding,
    status_time: DateTime<Utc>,
}

/// Stop a working or waiting task of the account (A2A's CancelTask, for whichever credential
/// started it): it ends canceled, its wait with it, and it runs no further step.
#[utoipa::path(post, path = "/stop-agent-task", tag = "agent", request_body = StopAgentTaskInput,
    responses((status = 200, body = StoppedTask),
        (status = 409, description = "`task_ended`: the task has already ended")))]
async fn stop_agent_task(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<StopAgentTaskInput>,
) -> ApiResult<axum::Json<StoppedTask>> {
    if let Some(task) = agent_tasks::cancel(&state.db, Holder::Account(caller.user_id), input.task_id).await?
    {
        return Ok(axum::Json(StoppedTask {
            task_id: task.id,
            state: TaskStanding::Canceled,
            status_time: task.status_time,
        }));
    }
    Err(
        if agent_tasks::account_has(&state.db, caller.user_id, input.task_id).await? {
            ApiError::conflict("task_ended", "the task has already ended")
        } else {
            ApiError::not_found("task_not_found", "the account has no agent task with that id")
        },
    )
}
