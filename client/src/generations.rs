//! Images drawn from a prompt, typed: `/generate-image`, `/select-generations`, and the one
//! wait for a generation's end ([`Client::wait_for_generation`]).

use std::time::Duration;

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::Client;
use crate::jobs::MadeFile;

/// The body of `/generate-image`.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewImage {
    pub prompt: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Like `16:9`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aspect_ratio: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quality: Option<String>,
}

/// What `/generate-image` answers: the generation started.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StartedGeneration {
    pub id: Uuid,
    pub model: String,
    pub aspect_ratio: String,
    pub quality: Option<String>,
}

pub use drive_domain::generation::GenerationStatus;

/// A generation as `/select-generations` answers it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Generation {
    pub id: Uuid,
    pub status: GenerationStatus,
    /// Whether the image drawn is in the trash; absent while there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trashed: Option<bool>,
    pub error: Option<String>,
    pub model: Option<String>,
    pub prompt: Option<String>,
    /// The image saved, with a link while it is in the drive.
    pub image: Option<MadeFile>,
}

#[derive(Serialize)]
struct Ids<'a> {
    ids: &'a [Uuid],
}

#[derive(Deserialize)]
struct Generations {
    generations: Vec<Generation>,
}

impl Client {
    /// `/generate-image`.
    pub async fn generate_image(&self, image: &NewImage) -> Result<StartedGeneration> {
        self.post("/generate-image", image).await
    }

    /// The generation `id` (`/select-generations`); `None` when the account has none such.
    pub async fn generation(&self, id: Uuid) -> Result<Option<Generation>> {
        let listed: Generations = self.post("/select-generations", &Ids { ids: &[id] }).await?;
        Ok(listed.generations.into_iter().next())
    }

    /// Asks after the generation `id` every `poll` until it is no longer working or
    /// `patience` runs out; answers it as last seen. An error when the account has none such.
    pub async fn wait_for_generation(
        &self,
        id: Uuid,
        poll: Duration,
        patience: Duration,
    ) -> Result<Generation> {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            let Some(generation) = self.generation(id).await? else {
                bail!("no generation of yours has the id {id}");
            };
            if generation.status != GenerationStatus::Working || tokio::time::Instant::now() >= deadline {
                return Ok(generation);
            }
            tokio::time::sleep(poll).await;
        }
    }
}
