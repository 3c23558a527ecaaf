//! The push-notification methods: a task's caller names https endpoints its status changes are
//! POSTed to (at most five a task; the same id replaces), and lists, reads and deletes them.
//! Links are checked as every outbound link of the drive's is (`drive-fetch`: https, a public
//! address, again when the worker connects); the token and credentials are sealed at rest and
//! never answered back.

use drive_core::a2a::{PushAuthentication, PushConfig};
use drive_core::db::agent_push::{self, ConfigRow, MAX_PER_TASK, NewConfig, seal_binding};
use drive_core::db::users::TokenUser;
use drive_core::id::TaskId;
use drive_fetch::{FetchError, SystemResolver};
use serde::Deserialize;
use serde_json::{Value, json};

use super::RpcError;
use crate::state::AppState;

/// The longest id, URL, token and credentials taken.
const MAX_ID: usize = 200;
const MAX_URL: usize = 2000;
const MAX_SECRET: usize = 4096;

/// `CreateTaskPushNotificationConfig`: the params are the config itself.
pub async fn create(state: &AppState, caller: &TokenUser, params: Value) -> Result<Value, RpcError> {
    let config: PushConfig = super::params(params)?;
    let task_id = config
        .task_id
        .clone()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| RpcError::invalid("taskId", "is required"))?;
    let task = owned_task(state, caller, &task_id).await?;
    let checked = check(state, config, "").await?;
    let row = keep(state, task, checked).await?;
    Ok(answer(&row))
}

/// A config checked and ready to keep.
pub struct Checked {
    id: String,
    url: String,
    token: Option<String>,
    authentication: Option<PushAuthentication>,
}

/// Checks a config as sent (`prefix` names where it sits in the params, for errors); its id is
/// the one given, or a new one.
pub async fn check(state: &AppState, config: PushConfig, prefix: &str) -> Result<Checked, RpcError> {
    let field = |name: &str| format!("{prefix}{name}");
    let id = match config.id.filter(|id| !id.is_empty()) {
        None => uuid::Uuid::new_v4().to_string(),
        Some(id) if id.len() <= MAX_ID && !id.chars().any(char::is_control) => id,
        Some(_) => {
            return Err(RpcError::invalid(
                &field("id"),
                format!("must be 1 to {MAX_ID} characters, no control characters"),
            ));
        }
    };
    if config.url.is_empty() || config.url.len() > MAX_URL {
        return Err(RpcError::invalid(
            &field("url"),
            format!("is required, at most {MAX_URL} characters"),
        ));
    }
    let url = drive_fetch::check_link(&config.url, &SystemResolver, &state.settings.fetch_allowances)
        .await
        .map_err(|e| match e {
            FetchError::Refused(why) | FetchError::Failed(why) => RpcError::invalid(&field("url"), why),
        })?;
    if url.scheme() != "https" {
        return Err(RpcError::invalid(
            &field("url"),
            "a push notification's link must be https",
        ));
    }
    if config
        .token
        .as_ref()
        .is_some_and(|t| t.len() > MAX_SECRET || !is_header_value(t))
    {
        return Err(RpcError::invalid(
            &field("token"),
            "must be at most 4096 visible ASCII characters",
        ));
    }
    if let Some(auth) = &config.authentication {
        let scheme_ok = !auth.scheme.is_empty()
            && auth.scheme.len() <= 64
            && auth
                .scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._~+".contains(&b));
        if !scheme_ok {
            return Err(RpcError::invalid(
                &field("authentication.scheme"),
                "must be an HTTP authentication scheme, like Bearer",
            ));
        }
        if auth
            .credentials
            .as_ref()
            .is_some_and(|c| c.len() > MAX_SECRET || !is_header_value(c))
        {
            return Err(RpcError::invalid(
                &field("authentication.credentials"),
                "must be at most 4096 visible ASCII characters",
            ));
        }
    }
    Ok(Checked {
        id,
        url: url.to_string(),
        token: config.token.filter(|t| !t.is_empty()),
        authentication: config.authentication,
    })
}

impl Checked {
    /// The config to keep for `task`, its secrets sealed.
    pub fn sealed(&self, state: &AppState, task: TaskId) -> NewConfig<'_> {
        let sealer = &state.settings.sealer;
        let seal =
            |secret: &str, which: &str| sealer.seal(secret.as_bytes(), &seal_binding(task, &self.id, which));
        let credentials = self
            .authentication
            .as_ref()
            .and_then(|a| a.credentials.as_deref());
        NewConfig {
            task_id: task,
            id: &self.id,
            url: &self.url,
            token_sealed: self.token.as_deref().map(|t| seal(t, "token")),
            auth_scheme: self.authentication.as_ref().map(|a| a.scheme.as_str()),
            credentials_sealed: credentials.map(|c| seal(c, "credentials")),
        }
    }
}

/// Keeps a checked config for `task`.
async fn keep(state: &AppState, task: TaskId, checked: Checked) -> Result<ConfigRow, RpcError> {
    agent_push::put(&state.db, checked.sealed(state, task))
        .await?
        .ok_or_else(|| {
            RpcError::invalid(
                "id",
                format!(
                    "a task has at most {MAX_PER_TASK} push notification configs: delete one, or reuse an id"
                ),
            )
        })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConfigParams {
    #[serde(default, alias = "task_id")]
    task_id: Option<String>,
    #[serde(default)]
    id: Option<String>,
}

/// `GetTaskPushNotificationConfig`.
pub async fn get(state: &AppState, caller: &TokenUser, params: Value) -> Result<Value, RpcError> {
    let (task, id) = named(state, caller, params).await?;
    match agent_push::find(&state.db, task, &id).await? {
        Some(row) => Ok(answer(&row)),
        None => Err(RpcError::task_not_found(&task.to_string())),
    }
}

/// `DeleteTaskPushNotificationConfig`: deleting one that is not there is no error.
pub async fn delete(state: &AppState, caller: &TokenUser, params: Value) -> Result<Value, RpcError> {
    let (task, id) = named(state, caller, params).await?;
    agent_push::delete(&state.db, task, &id).await?;
    Ok(json!({}))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListParams {
    #[serde(default, alias = "task_id")]
    task_id: Option<String>,
    #[serde(default, alias = "page_size")]
    page_size: Option<i64>,
    #[serde(default, alias = "page_token")]
    page_token: Option<String>,
}

/// `ListTaskPushNotificationConfigs`, by id; the page token is the last id answered.
pub async fn list(state: &AppState, caller: &TokenUser, params: Value) -> Result<Value, RpcError> {
    let input: ListParams = super::params(params)?;
    let task_id = input
        .task_id
        .ok_or_else(|| RpcError::invalid("taskId", "is required"))?;
    let task = owned_task(state, caller, &task_id).await?;
    let page_size = input.page_size.unwrap_or(50);
    if !(1..=100).contains(&page_size) {
        return Err(RpcError::invalid("pageSize", "must be 1 to 100"));
    }
    let after = input.page_token.filter(|t| !t.is_empty());
    let mut rows = agent_push::list(&state.db, task, after.as_deref(), page_size + 1).await?;
    let more = rows.len() as i64 > page_size;
    rows.truncate(page_size as usize);
    let next = match rows.last() {
        Some(last) if more => last.id.clone(),
        _ => String::new(),
    };
    let configs: Vec<Value> = rows.iter().map(answer).collect();
    Ok(json!({ "configs": configs, "nextPageToken": next }))
}

/// The task and config id a call names, the task checked to be the caller's.
async fn named(state: &AppState, caller: &TokenUser, params: Value) -> Result<(TaskId, String), RpcError> {
    let input: ConfigParams = super::params(params)?;
    let task_id = input
        .task_id
        .ok_or_else(|| RpcError::invalid("taskId", "is required"))?;
    let id = input
        .id
        .filter(|id| !id.is_empty())
        .ok_or_else(|| RpcError::invalid("id", "is required"))?;
    Ok((owned_task(state, caller, &task_id).await?, id))
}

/// One of the caller's tasks by the id as sent; -32001 otherwise.
async fn owned_task(state: &AppState, caller: &TokenUser, id: &str) -> Result<TaskId, RpcError> {
    match super::tasks::find(state, caller, id).await? {
        Some(task) => Ok(task.id),
        None => Err(RpcError::task_not_found(id)),
    }
}

/// A config as answered: where and how, without its secrets.
fn answer(row: &ConfigRow) -> Value {
    let mut config = json!({ "id": row.id, "taskId": row.task_id.to_string(), "url": row.url });
    if let Some(scheme) = &row.auth_scheme {
        config["authentication"] = json!({ "scheme": scheme });
    }
    config
}

/// Whether a value can go out in an HTTP header as is.
fn is_header_value(value: &str) -> bool {
    value.bytes().all(|b| (0x20..0x7f).contains(&b))
}
