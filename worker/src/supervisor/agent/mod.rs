//! The agent interface's tasks, run in the farm: every worker looks each second for tasks that
//! no live lease holds (new ones, and those of a worker that died), takes a few, and runs each
//! as a conversation between the model and the drive's routes ([`tools`]), acting as the
//! task's API token through a session of its own. A lease in the task's row, renewed every
//! half second, keeps a task to one worker; when the renewal fails (the task was canceled, or
//! another worker took it over) the run is dropped at once, its model or tool call with it.

mod attachments;
mod confirmation;
mod making;
mod tools;
mod waits;

use std::sync::Arc;
use std::time::Duration;

use drive_core::a2a::{Artifact, Message, REPLY, Role, TaskState};
use drive_core::db::agent_tasks::{self, TaskRow};
use drive_core::db::agent_waits::{self, Begun};
use drive_core::db::users;
use serde_json::{Value, json};
use uuid::Uuid;

use self::tools::{Links, Made};
pub use self::waits::wake_loop;
use crate::supervisor::agent_model::Model;
use crate::supervisor::shared::Shared;

/// How long a worker holds a task without renewing it.
const LEASE: Duration = Duration::from_secs(30);
/// How often the lease is renewed (and a cancel noticed).
const RENEW_EVERY: Duration = Duration::from_millis(500);
/// Tasks one worker runs at once.
const AT_ONCE: i64 = 4;
/// The model's turns in one task at most.
const MAX_TURNS: usize = 12;
/// How long the session a task acts through lasts; far more than [`MAX_TURNS`] take.
const SESSION: chrono::TimeDelta = chrono::TimeDelta::hours(2);

const INSTRUCTIONS: &str = "You are Drive's agent. You work on the user's drive only through \
    your tools, which act as the user. Use list_files to find files (never invent an id), \
    get_link for a link to a file, zip_files to put files in a zip, move_files and tag_files to \
    organise them, trash_files to propose moving files to the trash (the user confirms), \
    restore_files to bring them back, ask_for_files for a link others send files to, \
    share_for_review for a link to watch a video and leave notes, make_image to draw an image, \
    run_job for other work on files (proxies, conversions, PDFs, stills...), and wait_for when \
    the user asks you to act once something happens. End every task by calling reply with a short answer; the \
    links you made are attached to it, so do not write them out. If something cannot be done \
    with your tools, say so in reply.";

pub async fn run_loop(shared: Arc<Shared>) {
    let runner = Arc::new(Runner {
        id: Uuid::new_v4(),
        shared,
        running: Arc::new(tokio::sync::Semaphore::new(AT_ONCE as usize)),
    });
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        let room = runner.running.available_permits() as i64;
        if room == 0 {
            continue;
        }
        match agent_tasks::claim(&runner.shared.db, runner.id, LEASE, room).await {
            Ok(tasks) => {
                for task in tasks {
                    let permit = runner
                        .running
                        .clone()
                        .acquire_owned()
                        .await
                        .expect("never closed");
                    let runner = runner.clone();
                    tokio::spawn(async move {
                        runner.run(task).await;
                        drop(permit);
                    });
                }
            }
            Err(e) => tracing::warn!("looking for agent tasks failed: {e}"),
        }
    }
}

struct Runner {
    /// This process's name on the tasks it holds.
    id: Uuid,
    shared: Arc<Shared>,
    running: Arc<tokio::sync::Semaphore>,
}

/// How a run ended.
enum Outcome {
    /// The reply's text, and the links the tools made.
    Replied(String, Links),
    Failed(String),
    /// It waits (no longer held: the waker hands it back to a worker).
    Waiting,
}

impl Runner {
    async fn run(&self, task: TaskRow) {
        tracing::info!(task = %task.id, "running an agent task");
        let outcome = tokio::select! {
            outcome = self.converse(&task) => outcome,
            () = self.held(&task) => {
                tracing::info!(task = %task.id, "the agent task was canceled or taken over; stopped");
                return;
            }
        };
        let (state, text, links) = match outcome {
            Outcome::Replied(text, links) => (TaskState::Completed, text, links),
            Outcome::Failed(why) => (TaskState::Failed, why, Links::default()),
            Outcome::Waiting => {
                tracing::info!(task = %task.id, "the agent task waits");
                return;
            }
        };
        let mut message = Message::from_agent(text, &task.id.to_string(), &task.context_id.to_string());
        message.parts.extend(links.0);
        let artifacts = match state {
            TaskState::Completed => vec![Artifact {
                artifact_id: Uuid::new_v4().to_string(),
                name: Some(REPLY.to_string()),
                parts: message.parts.clone(),
            }],
            _ => Vec::new(),
        };
        match agent_tasks::finish(&self.shared.db, task.id, self.id, state, &message, &artifacts).await {
            Ok(true) => tracing::info!(task = %task.id, state = state.as_str(), "agent task ended"),
            Ok(false) => tracing::info!(task = %task.id, "the agent task was canceled before it ended"),
            Err(e) => {
                tracing::warn!(task = %task.id, "ending the agent task failed (another worker will run it): {e}")
            }
        }
    }

    /// Returns when the task is no longer this worker's to run.
    async fn held(&self, task: &TaskRow) {
        loop {
            tokio::time::sleep(RENEW_EVERY).await;
            match agent_tasks::renew(&self.shared.db, task.id, self.id, LEASE).await {
                Ok(true) => {}
                Ok(false) => return,
                Err(e) => tracing::warn!(task = %task.id, "renewing the agent task's lease failed: {e}"),
            }
        }
    }

    /// The conversation: the model's turns and the tools they call, until it replies.
    async fn converse(&self, task: &TaskRow) -> Outcome {
        let Some(model) = &self.shared.settings.agent_model else {
            return Outcome::Failed(
                "No model is configured for the agent: set DRIVE_AGENT_MODEL_URL on the workers.".into(),
            );
        };
        let session = match users::session_for_token(&self.shared.db, task.token_id, SESSION).await {
            Ok(Some(session)) => session,
            Ok(None) => return Outcome::Failed("The API token that sent this task was revoked.".into()),
            Err(e) => return Outcome::Failed(format!("The drive could not start the task: {e}")),
        };
        let outcome = self.with_session(task, model, &session).await;
        if let Err(e) = users::end_session(&self.shared.db, &session.token).await {
            tracing::warn!(task = %task.id, "ending the task's session failed (it expires by itself): {e}");
        }
        outcome
    }

    async fn with_session(&self, task: &TaskRow, model: &Model, session: &users::Session) -> Outcome {
        let storage = &self.shared.settings.storage;
        let client = match drive_client::Client::for_session(
            &storage.site_url,
            &self.shared.settings.app_id,
            drive_client::config::Session {
                gel_token: session.token.clone(),
                expires_at: session.expires_at,
                user_id: session.user_id.as_uuid(),
            },
        ) {
            Ok(client) => client,
            Err(e) => return Outcome::Failed(format!("The drive could not start the task: {e:#}")),
        };
        let mut made = Made::default();
        let messages = match agent_waits::woken(&self.shared.db, task.id).await {
            // It waited: on from its wait_for call, answered with what happened.
            Ok(Some(woken)) => {
                made.links = serde_json::from_value(woken.links).unwrap_or_default();
                let mut messages: Vec<Value> = serde_json::from_value(woken.transcript).unwrap_or_default();
                messages.push(json!({
                    "role": "tool", "tool_call_id": woken.call_id, "content": woken.happened.to_string()
                }));
                messages
            }
            Ok(None) => match self.opening(task, &client).await {
                Ok(messages) => messages,
                Err(outcome) => return outcome,
            },
            Err(e) => return Outcome::Failed(format!("The drive could not read the task's wait: {e}")),
        };
        self.turns(task, model, &client, messages, made).await
    }

    /// The conversation a task starts with: the instructions, the earlier tasks of its context,
    /// its message with what became of its attached parts and of a proposal it confirmed.
    async fn opening(&self, task: &TaskRow, client: &drive_client::Client) -> Result<Vec<Value>, Outcome> {
        let notes = match self.bring_in(task, client).await {
            Ok(notes) => notes,
            Err(e) => {
                return Err(Outcome::Failed(format!(
                    "The drive could not note the attached files: {e}"
                )));
            }
        };
        let earlier = match agent_tasks::earlier_in_context(
            &self.shared.db,
            task.token_id,
            task.context_id,
            task.created_at,
        )
        .await
        {
            Ok(earlier) => earlier,
            Err(e) => {
                return Err(Outcome::Failed(format!(
                    "The drive could not read the conversation: {e}"
                )));
            }
        };
        match self.confirmation(task, &earlier, client).await {
            Ok(confirmed) => Ok(conversation(task, &earlier, &notes, confirmed)),
            Err(e) => Err(Outcome::Failed(format!(
                "The drive could not carry out what was confirmed: {e:#}"
            ))),
        }
    }

    /// The model's turns and the tools they call, until it replies or waits.
    async fn turns(
        &self,
        task: &TaskRow,
        model: &Model,
        client: &drive_client::Client,
        mut messages: Vec<Value>,
        mut made: Made,
    ) -> Outcome {
        let tools = tools::definitions();
        for _ in 0..MAX_TURNS {
            let turn = match model.turn(&messages, &tools).await {
                Ok(turn) => turn,
                Err(why) => return Outcome::Failed(format!("The agent's model failed: {why}")),
            };
            messages.push(turn.message.clone());
            if turn.calls.is_empty() {
                // Made to call a tool, it answered in prose: that is its reply.
                return match turn.text {
                    Some(text) => Outcome::Replied(text, made.links),
                    None => Outcome::Failed("The agent's model answered nothing.".into()),
                };
            }
            for call in turn.calls {
                let arguments: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
                if call.name == "reply" {
                    let reply = serde_json::from_value::<tools::Reply>(arguments.clone());
                    let text = reply.map(|r| r.text.trim().to_string()).unwrap_or_default();
                    if !text.is_empty() {
                        return Outcome::Replied(text, made.links);
                    }
                }
                // Where the event log stands before the tool looks anything up: a wait misses
                // nothing that happens from here.
                let position = match call.name.as_str() {
                    "wait_for" => match agent_waits::position(&self.shared.db).await {
                        Ok(position) => Some(position),
                        Err(e) => return Outcome::Failed(format!("The drive could not begin waiting: {e}")),
                    },
                    _ => None,
                };
                let mut result = if call.name == "reply" {
                    json!({ "error": "reply needs text" })
                } else {
                    tools::call(client, &mut made, &call.name, &arguments).await
                };
                if let (Some(asked), Some(after)) = (made.wait.take(), position) {
                    let wait = asked.wait(task, after, json!(messages), &call.id, json!(made.links));
                    match agent_waits::begin(&self.shared.db, task.id, task.user_id, self.id, &wait).await {
                        Ok(Begun::Waiting) => return Outcome::Waiting,
                        Ok(Begun::Refused(why)) => result = json!({ "error": why }),
                        Ok(Begun::Lost) => {
                            return Outcome::Failed("It was canceled as it began waiting.".into());
                        }
                        Err(e) => return Outcome::Failed(format!("The drive could not begin waiting: {e}")),
                    }
                }
                if let Some(proposal) = made.proposal.take() {
                    let kept = serde_json::to_value(&proposal).expect("a proposal is JSON");
                    if let Err(e) = agent_tasks::propose(&self.shared.db, task.id, self.id, &kept).await {
                        return Outcome::Failed(format!("The drive could not keep the proposal: {e}"));
                    }
                }
                messages
                    .push(json!({ "role": "tool", "tool_call_id": call.id, "content": result.to_string() }));
            }
        }
        Outcome::Failed(format!("The agent did not finish within {MAX_TURNS} steps."))
    }
}

/// The instructions, the `earlier` tasks of the same conversation (what was asked, what was
/// answered), then this task's message: with what became of its attached parts (`notes`) and of
/// the proposal it `confirmed`.
fn conversation(task: &TaskRow, earlier: &[TaskRow], notes: &Value, confirmed: Option<String>) -> Vec<Value> {
    let mut messages = vec![json!({ "role": "system", "content": INSTRUCTIONS })];
    let tasks = earlier.iter().map(|t| (t, &t.attachments)).chain([(task, notes)]);
    for (from, notes) in tasks {
        for message in from.messages() {
            let (role, notes) = match message.role {
                Role::User => ("user", Some(notes)),
                Role::Agent => ("assistant", None),
            };
            messages.push(json!({ "role": role, "content": attachments::said(&message, notes) }));
        }
    }
    if let (Some(confirmed), Some(last)) = (confirmed, messages.last_mut()) {
        last["content"] = json!(format!(
            "{}\n{confirmed}",
            last["content"].as_str().unwrap_or_default()
        ));
    }
    messages
}
