//! Nothing destructive happens on a model's word alone. `trash_files` only proposes (the files,
//! and words like `confirm 4821` kept in the task's row); the user's next message in the
//! conversation carries it out when it holds those words, before the model reads that message,
//! and the model is told what was done. A proposal is carried out once, by the task right
//! after it; a task taken over carries it out again, which trashing allows.

use drive_client::Client;
use drive_client::files::Batch;
use drive_core::db::agent_tasks::{self, TaskRow};

use super::Runner;
use super::tools::Proposal;

impl Runner {
    /// What the model is told of the proposal before `task` (the one just before it in its
    /// conversation), if any: carried out when `task`'s message confirms it.
    pub(super) async fn confirmation(
        &self,
        task: &TaskRow,
        earlier: &[TaskRow],
        client: &Client,
    ) -> anyhow::Result<Option<String>> {
        let Some(last) = earlier.last() else {
            return Ok(None);
        };
        let Some(proposal) = last.proposal.as_ref() else {
            return Ok(None);
        };
        let proposal: Proposal = serde_json::from_value(proposal.clone())?;
        let said = task
            .messages()
            .first()
            .map(|m| m.text().to_lowercase())
            .unwrap_or_default();
        if !said.contains(&proposal.phrase) {
            return Ok(Some(format!(
                "(This message does not hold '{}': nothing was moved to the trash.)",
                proposal.phrase
            )));
        }
        if !agent_tasks::confirm_proposal(&self.shared.db, last.id, task.id).await? {
            return Ok(Some("(That proposal was carried out already.)".into()));
        }
        let outcome = client.batch(Batch::Trash, &proposal.file_ids).await?;
        Ok(Some(format!(
            "(The user confirmed with '{}': {} file(s) were moved to the trash: {}.)",
            proposal.phrase,
            outcome.done.len(),
            proposal.names.join(", ")
        )))
    }
}
