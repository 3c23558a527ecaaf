//! The agent interface's wire shapes (A2A 1.0, ProtoJSON: lowerCamelCase on the way out, the
//! proto's snake_case names also taken on the way in, enums by name, optional fields left out
//! when unset). The API answers them and the worker writes them; tasks keep them as JSON.
//! `docs/a2a-1.0-brief.md` says where each rule comes from.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a task stands as its account's owner sees it (`/select-agent-tasks`, the app's
/// Agents): A2A's working split in two, since a task waiting for something to happen is
/// working to the protocol but idle to a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum TaskStanding {
    /// Held by a worker, or due to be.
    Working,
    /// Waiting for something to happen on the account; no worker holds it meanwhile.
    Waiting,
    Completed,
    Failed,
    Canceled,
}

/// Every state the protocol names (but `TASK_STATE_UNSPECIFIED`, which is unset). The drive's
/// tasks are working from the moment they are accepted, and end completed, failed or canceled;
/// the others are never a drive task's, but are states a client may filter by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TaskState {
    #[serde(rename = "TASK_STATE_SUBMITTED")]
    Submitted,
    #[serde(rename = "TASK_STATE_WORKING")]
    Working,
    #[serde(rename = "TASK_STATE_INPUT_REQUIRED")]
    InputRequired,
    #[serde(rename = "TASK_STATE_AUTH_REQUIRED")]
    AuthRequired,
    #[serde(rename = "TASK_STATE_COMPLETED")]
    Completed,
    #[serde(rename = "TASK_STATE_FAILED")]
    Failed,
    #[serde(rename = "TASK_STATE_CANCELED")]
    Canceled,
    #[serde(rename = "TASK_STATE_REJECTED")]
    Rejected,
}

impl TaskState {
    const ALL: [TaskState; 8] = [
        TaskState::Submitted,
        TaskState::Working,
        TaskState::InputRequired,
        TaskState::AuthRequired,
        TaskState::Completed,
        TaskState::Failed,
        TaskState::Canceled,
        TaskState::Rejected,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Submitted => "TASK_STATE_SUBMITTED",
            TaskState::Working => "TASK_STATE_WORKING",
            TaskState::InputRequired => "TASK_STATE_INPUT_REQUIRED",
            TaskState::AuthRequired => "TASK_STATE_AUTH_REQUIRED",
            TaskState::Completed => "TASK_STATE_COMPLETED",
            TaskState::Failed => "TASK_STATE_FAILED",
            TaskState::Canceled => "TASK_STATE_CANCELED",
            TaskState::Rejected => "TASK_STATE_REJECTED",
        }
    }

    pub fn parse(s: &str) -> Option<TaskState> {
        TaskState::ALL.into_iter().find(|state| state.as_str() == s)
    }

    /// Completed, failed, canceled or rejected: nothing moves it again.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Failed | TaskState::Canceled | TaskState::Rejected
        )
    }
}

/// ProtoJSON's unset string: an empty string (a2a-java sends `"taskId": ""` on a new message)
/// or null reads as absent.
pub fn unset_if_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(Option::<String>::deserialize(d)?.filter(|s| !s.is_empty()))
}

crate::column::text_column!(TaskState, "task state");

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    #[serde(rename = "ROLE_USER")]
    User,
    #[serde(rename = "ROLE_AGENT")]
    Agent,
}

/// Exactly one of `text`, `raw` (base64), `url` or `data` ([`Part::check`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "media_type")]
    pub media_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

impl Part {
    pub fn text(text: impl Into<String>) -> Part {
        Part {
            text: Some(text.into()),
            ..Part::default()
        }
    }

    /// Why the part is not one of the four kinds, if it is not.
    pub fn check(&self) -> Result<(), String> {
        let kinds = [
            self.text.is_some(),
            self.raw.is_some(),
            self.url.is_some(),
            self.data.is_some(),
        ];
        if let Some(raw) = &self.raw {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD
                .decode(raw)
                .map_err(|e| format!("raw must be standard base64 with padding ({e})"))?;
        }
        match kinds.iter().filter(|k| **k).count() {
            1 => Ok(()),
            0 => Err("a part must have one of text, raw, url or data".into()),
            _ => Err("a part must have only one of text, raw, url or data".into()),
        }
    }

    /// Whether the agent takes a part of the media type it states (a part stating none is
    /// taken): text as any text type, data as JSON, a file (`raw` or `url`) as any type the
    /// drive knows ([`input_modes`]). A file of another type is refused rather than kept as
    /// opaque bytes: a sender who means that says `application/octet-stream`.
    pub fn takes_media_type(&self) -> bool {
        let Some(given) = self.media_type.as_deref() else {
            return true;
        };
        let essence = drive_kinds::essence(given);
        if self.text.is_some() {
            drive_kinds::is_text_type(&essence)
        } else if self.data.is_some() {
            essence == "application/json" || essence.ends_with("+json")
        } else {
            drive_kinds::known_media_types().contains(&essence.as_str())
        }
    }
}

/// The media types the agent takes, as its card's `defaultInputModes` declares them: text and
/// JSON data to read, and files of every type the drive knows.
pub fn input_modes() -> Vec<&'static str> {
    let mut modes = vec!["text/plain"];
    modes.extend(
        drive_kinds::known_media_types()
            .into_iter()
            .filter(|m| *m != "text/plain"),
    );
    modes
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    #[serde(alias = "message_id")]
    pub message_id: String,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "context_id",
        deserialize_with = "unset_if_empty"
    )]
    pub context_id: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "task_id",
        deserialize_with = "unset_if_empty"
    )]
    pub task_id: Option<String>,
    pub role: Role,
    pub parts: Vec<Part>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

impl Message {
    /// An agent's message of one text part, in a task's conversation.
    pub fn from_agent(text: impl Into<String>, task_id: &str, context_id: &str) -> Message {
        Message {
            message_id: uuid::Uuid::new_v4().to_string(),
            context_id: Some(context_id.to_string()),
            task_id: Some(task_id.to_string()),
            role: Role::Agent,
            parts: vec![Part::text(text)],
            metadata: None,
        }
    }

    /// Its text parts, joined by line feeds.
    pub fn text(&self) -> String {
        self.parts
            .iter()
            .filter_map(|p| p.text.as_deref())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    pub state: TaskState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    pub timestamp: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    pub artifact_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub parts: Vec<Part>,
}

/// The name of the artifact that carries the agent's reply.
pub const REPLY: &str = "Reply";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    pub id: String,
    pub context_id: String,
    pub status: TaskStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<Vec<Artifact>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<Message>>,
}

/// Where a task's status changes are POSTed (`TaskPushNotificationConfig`, flat as in 1.0).
/// `token` and `authentication.credentials` are taken, kept sealed and sent, never answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct PushConfig {
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "unset_if_empty"
    )]
    pub id: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "task_id",
        deserialize_with = "unset_if_empty"
    )]
    pub task_id: Option<String>,
    #[serde(default)]
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<PushAuthentication>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct PushAuthentication {
    /// An HTTP authentication scheme, like `Bearer`: the `Authorization` header's first word.
    #[serde(default)]
    pub scheme: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

/// What a push notification carries, as the drive's contract has it: `{ task }`, the whole task
/// without its history (a `StreamResponse` holding the task).
pub fn pushed(task: &Task) -> Value {
    let mut task = task.clone();
    task.history = None;
    serde_json::json!({ "task": task })
}

/// A time as A2A writes it: UTC, milliseconds, `Z`.
pub fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_one_kind_and_messages_take_either_casing() {
        let message: Message = serde_json::from_value(serde_json::json!({
            "message_id": "m1", "role": "ROLE_USER", "parts": [{ "text": "hi" }], "context_id": "c"
        }))
        .unwrap();
        assert_eq!(message.context_id.as_deref(), Some("c"));
        let out = serde_json::to_value(&message).unwrap();
        assert_eq!(
            out,
            serde_json::json!({ "messageId": "m1", "contextId": "c", "role": "ROLE_USER", "parts": [{ "text": "hi" }] })
        );
        assert!(Part::text("a").check().is_ok());
        let typed = |part: Part, media_type: &str| Part {
            media_type: Some(media_type.into()),
            ..part
        };
        let file = Part {
            raw: Some("dGNr".into()),
            ..Part::default()
        };
        let data = Part {
            data: Some(serde_json::json!({ "a": 1 })),
            ..Part::default()
        };
        assert!(file.takes_media_type() && typed(file.clone(), "Image/PNG").takes_media_type());
        assert!(typed(file.clone(), "application/octet-stream").takes_media_type());
        assert!(!typed(file, "application/x-unsupported-tck-type").takes_media_type());
        assert!(typed(Part::text("a"), "text/markdown; charset=utf-8").takes_media_type());
        assert!(!typed(Part::text("a"), "image/png").takes_media_type());
        assert!(typed(data.clone(), "application/json").takes_media_type());
        assert!(!typed(data, "text/csv").takes_media_type());
        assert_eq!(input_modes()[0], "text/plain");
        assert!(input_modes().contains(&"application/json") && input_modes().contains(&"video/mp4"));
        assert!(Part::default().check().is_err());
        let two = Part {
            url: Some("https://x".into()),
            ..Part::text("a")
        };
        assert!(two.check().is_err());
        assert_eq!(
            timestamp("2026-11-26T10:00:00.123456Z".parse().unwrap()),
            "2026-11-26T10:00:00.123Z"
        );
    }
}
