//! The agent's tools: the client library's catalogue of coarse tools ([`drive_client::tools`]),
//! called as the task's API token (a session of that token's), so the agent reaches exactly what
//! the token does; and the agent's own three, which need the drive's job vocabulary or the
//! task itself: `run_job` ([`super::making`]), `wait_for` ([`super::waits`]) and `reply`.

use drive_client::Client;
use drive_client::tools::{self, Effects, Tool};
use drive_core::a2a::Part;
use serde_json::{Value, json};
use uuid::Uuid;

use super::{making, waits};

/// What the tools made in a task beside their answers: the links, attached to its reply as
/// `url` parts (a model never has to copy a signed link: hundreds of characters a small model
/// garbles, and slow to write), and the files proposed for the trash, which only the user's
/// confirmation in the next message moves there ([`Proposal`]).
#[derive(Debug, Default)]
pub struct Made {
    pub links: Links,
    pub proposal: Option<Proposal>,
    /// What the model asked to wait for, which the runner records before the task goes on.
    pub wait: Option<waits::Asked>,
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Links(pub Vec<Part>);

/// Files the agent proposed to move to the trash, and the words that confirm it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Proposal {
    pub file_ids: Vec<Uuid>,
    pub names: Vec<String>,
    /// Like `confirm 4821`.
    pub phrase: String,
}

impl Effects for Made {
    /// Attaches the link to the reply; the model is told so, never the link itself.
    fn link(&mut self, name: &str, url: Option<&str>, media_type: &str) -> Value {
        if let Some(url) = url {
            self.links.0.push(Part {
                url: Some(url.to_string()),
                filename: Some(name.to_string()),
                media_type: Some(media_type.to_string()),
                ..Part::default()
            });
        }
        json!(format!("attached to your reply as {name}"))
    }

    /// Proposes, never trashes: the confirmation is the user's, in the next message
    /// (`super::confirmation`).
    async fn trash(&mut self, _: &Client, file_ids: Vec<Uuid>, names: Vec<String>) -> anyhow::Result<Value> {
        let phrase = format!("confirm {}", 1000 + rand::random::<u16>() % 9000);
        let answer = json!({
            "trashed": "nothing yet",
            "wouldTrash": names,
            "confirmWith": phrase,
            "next": format!("Call reply telling the user these files would go to the trash and that they answer '{phrase}' to move them there.")
        });
        self.proposal = Some(Proposal {
            file_ids,
            names,
            phrase,
        });
        Ok(answer)
    }
}

/// The agent's own last tool: its answer, which ends the task (the runner reads it).
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Reply {
    pub text: String,
}

/// What the model is told it may call: the catalogue's coarse tools, then the agent's own.
pub fn definitions() -> Value {
    let mut all: Vec<Value> = Tool::CHOOSING.iter().map(|tool| tool.function()).collect();
    all.push(making::definition());
    all.push(waits::definition());
    all.push(tools::function::<Reply>(
        "reply",
        "Ends the task with your answer to the user. The links you made are attached to it: do not write them out.",
    ));
    Value::Array(all)
}

/// What a call of a tool other than `reply` answers the model: its result, or why it failed
/// (so the model can try otherwise).
pub async fn call(client: &Client, made: &mut Made, name: &str, arguments: &Value) -> Value {
    let outcome = match name {
        "run_job" => making::run_job(client, made, arguments).await,
        "wait_for" => waits::find(client, arguments).await.map(|found| match found {
            Ok(asked) => {
                let answer = json!({ "waiting": asked.what });
                made.wait = Some(asked);
                answer
            }
            Err(happened) => happened,
        }),
        other => match Tool::CHOOSING.into_iter().find(|tool| tool.name() == other) {
            Some(tool) => tool.run(client, made, arguments.clone()).await,
            None => Err(anyhow::anyhow!(
                "there is no tool {other}: use list_files, get_link, zip_files, move_files, tag_files, \
                 trash_files, restore_files, ask_for_files, share_for_review, make_image, run_job, \
                 wait_for or reply"
            )),
        },
    };
    outcome.unwrap_or_else(|e| json!({ "error": format!("{e:#}") }))
}
