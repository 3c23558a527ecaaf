//! The task methods: `SendMessage` records a task for the farm to run and, unless told to
//! return at once, waits for its end; `GetTask`, `ListTasks` and `CancelTask` see only the
//! caller's own token's tasks.

use chrono::{DateTime, Utc};
use drive_core::a2a::{Message, PushConfig, Role, TaskState};
use drive_core::db::agent_tasks::{self, Holder, ListFilter, PageToken, TaskRow};
use drive_core::db::agent_waits;
use drive_core::db::users::TokenUser;
use drive_core::id::{ContextId, TaskId};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{RpcError, push};
use crate::follow::Woken;
use crate::state::AppState;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SendMessageParams {
    message: Option<Message>,
    #[serde(default)]
    configuration: Option<Configuration>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Configuration {
    #[serde(default, alias = "return_immediately")]
    return_immediately: bool,
    #[serde(default, alias = "history_length")]
    history_length: Option<i64>,
    #[serde(default, alias = "task_push_notification_config")]
    task_push_notification_config: Option<PushConfig>,
}

pub async fn send_message(state: &AppState, caller: &TokenUser, params: Value) -> Result<Value, RpcError> {
    let input: SendMessageParams = super::params(params)?;
    let mut message = input
        .message
        .ok_or_else(|| RpcError::invalid("message", "is required"))?;
    let configuration = input.configuration.unwrap_or_default();
    let history_length = history_length("configuration.historyLength", configuration.history_length)?;
    if message.role != Role::User {
        return Err(RpcError::invalid(
            "message.role",
            "a message sent to the agent is ROLE_USER",
        ));
    }
    if message.message_id.trim().is_empty() {
        return Err(RpcError::invalid("message.messageId", "is required"));
    }
    if message.parts.is_empty() {
        return Err(RpcError::invalid(
            "message.parts",
            "at least one part is required",
        ));
    }
    for (n, part) in message.parts.iter().enumerate() {
        part.check()
            .map_err(|why| RpcError::invalid(&format!("message.parts[{n}]"), why))?;
        if !part.takes_media_type() {
            let given = part.media_type.as_deref().unwrap_or_default();
            return Err(RpcError::part_type_not_supported(n, given));
        }
    }
    if let Some(task_id) = &message.task_id {
        // A finished task is not picked up again, and a running one takes no more messages.
        return Err(match find(state, caller, task_id).await? {
            None => RpcError::task_not_found(task_id),
            Some(task) if task.state.is_terminal() => RpcError::unsupported(
                "the task has ended: send a new message with its contextId and no taskId to go on",
            ),
            Some(_) => RpcError::unsupported("the task is still working: wait for its end, or cancel it"),
        });
    }
    let context_id = match &message.context_id {
        None => ContextId::random(),
        Some(given) => given
            .parse()
            .map_err(|_| RpcError::invalid("message.contextId", "must be a uuid"))?,
    };
    // Checked before the task is made, and kept with it.
    let push = match configuration.task_push_notification_config {
        Some(config) => Some(push::check(state, config, "configuration.taskPushNotificationConfig.").await?),
        None => None,
    };
    let id = TaskId::random();
    message.task_id = Some(id.to_string());
    message.context_id = Some(context_id.to_string());
    let task = agent_tasks::create(
        &state.db,
        id,
        context_id,
        caller.user_id,
        caller.token_id,
        &message,
        push.as_ref().map(|checked| checked.sealed(state, id)),
    )
    .await?
    .ok_or_else(RpcError::too_many_tasks)?;
    let task = if configuration.return_immediately {
        task
    } else {
        until_ended(state, caller, task).await?
    };
    Ok(json!({ "task": task.to_task(history_length, true) }))
}

/// The task once it has ended or begun waiting for something (which may take days: its status
/// message says what it waits for), or as it stands after the answer's time
/// (`DRIVE_AGENT_ANSWER_WITHIN_SECONDS`), its status message then saying it is still at work.
/// A2A wants a blocking call answered at an end or an interruption; a wait of days, or a
/// model at work for minutes, would hold the caller's connection past any client's timeout, so
/// these answers come early, and say so.
async fn until_ended(state: &AppState, caller: &TokenUser, mut task: TaskRow) -> Result<TaskRow, RpcError> {
    let deadline = tokio::time::Instant::now() + state.settings.agent_answer_within;
    // Taken before the first look: a task's change of state, or its beginning to wait,
    // notifies its account (`crate::follow`).
    let mut waiter = state.follow.subscribe();
    while !task.state.is_terminal()
        && !agent_waits::is_waiting(&state.db, task.id).await?
        && waiter.wait(Woken::Tasks(caller.user_id), deadline).await
    {
        task = agent_tasks::find(&state.db, caller.token_id, task.id)
            .await?
            .ok_or_else(|| RpcError::internal("a task vanished while its sender waited"))?;
    }
    if !task.state.is_terminal() && task.status_message.is_none() {
        let still = Message::from_agent(
            format!(
                "Still working: this answer comes before the end, which GetTask with id {} follows.",
                task.id
            ),
            &task.id.to_string(),
            &task.context_id.to_string(),
        );
        task.status_message = Some(serde_json::to_value(still).expect("a message is JSON"));
    }
    Ok(task)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GetTaskParams {
    id: Option<String>,
    #[serde(default, alias = "history_length")]
    history_length: Option<i64>,
}

pub async fn get_task(state: &AppState, caller: &TokenUser, params: Value) -> Result<Value, RpcError> {
    let input: GetTaskParams = super::params(params)?;
    let id = input.id.ok_or_else(|| RpcError::invalid("id", "is required"))?;
    let history_length = history_length("historyLength", input.history_length)?;
    let task = find(state, caller, &id)
        .await?
        .ok_or_else(|| RpcError::task_not_found(&id))?;
    Ok(serde_json::to_value(task.to_task(history_length, true)).expect("a task is JSON"))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListTasksParams {
    #[serde(default, alias = "context_id")]
    context_id: Option<String>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default, alias = "status_timestamp_after")]
    status_timestamp_after: Option<String>,
    #[serde(default, alias = "page_size")]
    page_size: Option<i64>,
    #[serde(default, alias = "page_token")]
    page_token: Option<String>,
    #[serde(default, alias = "history_length")]
    history_length: Option<i64>,
    #[serde(default, alias = "include_artifacts")]
    include_artifacts: bool,
}

pub async fn list_tasks(state: &AppState, caller: &TokenUser, params: Value) -> Result<Value, RpcError> {
    let input: ListTasksParams = super::params(params)?;
    let page_size = input.page_size.unwrap_or(50);
    if !(1..=100).contains(&page_size) {
        return Err(RpcError::invalid("pageSize", "must be 1 to 100"));
    }
    let history_length = history_length("historyLength", input.history_length)?;
    let after = match input.page_token.as_deref() {
        None | Some("") => None,
        Some(token) => Some(
            PageToken::decode(token)
                .ok_or_else(|| RpcError::invalid("pageToken", "must be a nextPageToken this agent gave"))?,
        ),
    };
    let filter = ListFilter {
        // A context that is no uuid is one no task has.
        context_id: match input.context_id.as_deref() {
            None | Some("") => None,
            Some(given) => match given.parse() {
                Ok(id) => Some(id),
                Err(_) => {
                    return Ok(
                        json!({ "tasks": [], "nextPageToken": "", "pageSize": page_size, "totalSize": 0 }),
                    );
                }
            },
        },
        state: match input.status.as_deref() {
            None | Some("") | Some("TASK_STATE_UNSPECIFIED") => None,
            Some(given) => Some(TaskState::parse(given).ok_or_else(|| {
                RpcError::invalid("status", "must be a task state, like TASK_STATE_WORKING")
            })?),
        },
        status_after: match input.status_timestamp_after.as_deref() {
            None | Some("") => None,
            Some(given) => Some(
                DateTime::parse_from_rfc3339(given)
                    .map(|t| t.with_timezone(&Utc))
                    .map_err(|_| RpcError::invalid("statusTimestampAfter", "must be an RFC 3339 time"))?,
            ),
        },
    };
    // One more than the page, to know whether another follows.
    let (mut rows, total) =
        agent_tasks::list(&state.db, caller.token_id, &filter, after, page_size + 1).await?;
    let more = rows.len() as i64 > page_size;
    rows.truncate(page_size as usize);
    let next = match rows.last() {
        Some(last) if more => PageToken {
            status_time: last.status_time,
            id: last.id,
        }
        .encode(),
        _ => String::new(),
    };
    let tasks: Vec<Value> = rows
        .iter()
        .map(|t| {
            serde_json::to_value(t.to_task(history_length, input.include_artifacts)).expect("a task is JSON")
        })
        .collect();
    Ok(json!({ "tasks": tasks, "nextPageToken": next, "pageSize": page_size, "totalSize": total }))
}

#[derive(Deserialize)]
struct CancelTaskParams {
    id: Option<String>,
}

pub async fn cancel_task(state: &AppState, caller: &TokenUser, params: Value) -> Result<Value, RpcError> {
    let input: CancelTaskParams = super::params(params)?;
    let id = input.id.ok_or_else(|| RpcError::invalid("id", "is required"))?;
    let Ok(task_id) = id.parse::<TaskId>() else {
        return Err(RpcError::task_not_found(&id));
    };
    match agent_tasks::cancel(&state.db, Holder::Credential(caller.token_id), task_id).await? {
        Some(task) => Ok(serde_json::to_value(task.to_task(None, true)).expect("a task is JSON")),
        None => Err(
            match agent_tasks::find(&state.db, caller.token_id, task_id).await? {
                Some(_) => RpcError::not_cancelable(&id),
                None => RpcError::task_not_found(&id),
            },
        ),
    }
}

/// One of the caller's tasks by the id as sent (one that is no uuid is no task).
pub(super) async fn find(
    state: &AppState,
    caller: &TokenUser,
    id: &str,
) -> Result<Option<TaskRow>, RpcError> {
    let Ok(id) = id.parse::<TaskId>() else {
        return Ok(None);
    };
    Ok(agent_tasks::find(&state.db, caller.token_id, id).await?)
}

/// A `historyLength` as sent: 0 or more.
fn history_length(field: &str, given: Option<i64>) -> Result<Option<usize>, RpcError> {
    match given {
        None => Ok(None),
        Some(n) if n >= 0 => Ok(Some(n as usize)),
        Some(_) => Err(RpcError::invalid(field, "must be 0 or more")),
    }
}
