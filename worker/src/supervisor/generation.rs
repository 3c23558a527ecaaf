//! A `generateImage` job, worked by the supervisor itself rather than a job process: it holds
//! the providers' keys and parses nothing uploaded (the image's metadata is read afterwards by
//! a `readMetadata` job, in a job process, like any new picture's).
//!
//! Each step leaves what a new attempt needs on the generation's row or in the store, so a
//! worker killed at any point loses nothing and pays once: a polling provider's task is kept
//! the moment it is submitted (a new attempt asks about that task); an image is stored under
//! the generation's own key and noted (a new attempt records what is stored without asking the
//! provider); recording the file and ending the generation is one transaction. Only a worker
//! killed while a provider that answers at once (OpenAI, Google, BytePlus) was still drawing
//! asks that provider again.

use std::time::Duration;

use drive_core::db::events::EventKind;
use drive_core::db::files::NewFile;
use drive_core::db::generations::{self, GenerationRow};
use drive_core::db::jobs::JobRow;
use drive_core::db::{PgPool, folders, users};
use drive_core::entry::{self, Entered};
use drive_core::file::{FileKind, check_name};
use drive_core::generation::GenerationStatus;
use drive_core::id::JobId;
use drive_core::job::JobSpec;
use drive_core::plan::Quotas;
use drive_core::storage::{Bucket, ByteStream, Storage, StorageError, StoredHeaders};
use drive_generate::{Ask, Generators, Image, Started};

/// How long a polling provider's task may take before the generation fails.
const PATIENCE: Duration = Duration::from_secs(600);

/// Why a generation did not end done.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The generation fails with this sentence as its `error` (the provider's refusal or
    /// failure, a full drive).
    #[error("{0}")]
    Generation(String),
    /// This machine, the database or the store failed: the job is tried again.
    #[error("{0}")]
    Server(String),
}

impl From<sqlx::Error> for Failure {
    fn from(e: sqlx::Error) -> Failure {
        Failure::Server(format!("the database: {e}"))
    }
}

impl From<StorageError> for Failure {
    fn from(e: StorageError) -> Failure {
        Failure::Server(e.to_string())
    }
}

/// What a generation needs of its worker.
pub struct Generation<'a> {
    pub db: &'a PgPool,
    pub storage: &'a Storage,
    pub generators: &'a Generators,
    pub quotas: &'a Quotas,
}

impl Generation<'_> {
    /// Works job's generation to its end; answers the jobs queued for the new image (its
    /// metadata reading), to ring for.
    pub async fn work(&self, job: &JobRow) -> Result<Vec<JobId>, Failure> {
        let Ok(JobSpec::GenerateImage(settings)) = job.spec() else {
            return Err(Failure::Generation("the job names no generation".into()));
        };
        let generation = generations::find(self.db, settings.generation)
            .await?
            .ok_or_else(|| Failure::Generation("the generation is gone".into()))?;
        if generation.status != GenerationStatus::Working {
            return Ok(Vec::new());
        }
        let key = generation.object_key();
        let stored = match &generation.image_type {
            Some(image_type) => self
                .storage
                .object_size(Bucket::Private, &key)
                .await?
                .map(|size| (size, image_type.clone())),
            None => None,
        };
        let (size, image_type) = match stored {
            Some(stored) => stored,
            None => {
                let image = self.draw(&generation).await?;
                self.store(&generation, &key, &image).await?
            }
        };
        self.record(&generation, &key, size, &image_type).await
    }

    /// The image, from the provider: asked for, or (a task kept by an earlier attempt) waited
    /// for.
    async fn draw(&self, generation: &GenerationRow) -> Result<Image, Failure> {
        let failed = |e: drive_generate::GenerateError| Failure::Generation(e.0);
        if let Some(task) = &generation.provider_task {
            let task = serde_json::from_value(task.clone())
                .map_err(|e| Failure::Server(format!("the kept provider task cannot be read: {e}")))?;
            return self.generators.wait(&task, PATIENCE).await.map_err(failed);
        }
        let ask = Ask {
            model: generation.model,
            prompt: &generation.prompt,
            aspect_ratio: generation.aspect_ratio,
            quality: generation.quality,
        };
        match self.generators.start(&ask).await.map_err(failed)? {
            Started::Image(image) => Ok(image),
            Started::Pending(task) => {
                let kept = serde_json::to_value(&task).expect("a task serializes");
                generations::keep_task(self.db, generation.id, &kept).await?;
                self.generators.wait(&task, PATIENCE).await.map_err(failed)
            }
        }
    }

    /// Stores the image under the generation's key and notes it; answers its size and type.
    async fn store(
        &self,
        generation: &GenerationRow,
        key: &str,
        image: &Image,
    ) -> Result<(i64, String), Failure> {
        let name = file_name(&generation.prompt, image.extension);
        let headers = StoredHeaders::new(image.mime_type, &name, "attachment");
        self.storage
            .write(
                Bucket::Private,
                key,
                ByteStream::from(image.bytes.clone()),
                &headers.content_type,
                &headers.content_disposition,
            )
            .await?;
        generations::mark_succeeded(self.db, generation.id, image.mime_type).await?;
        Ok((image.bytes.len() as i64, image.mime_type.to_string()))
    }

    /// Records the stored image as a file at the top of the caller's drive and ends the
    /// generation done, in one transaction.
    async fn record(
        &self,
        generation: &GenerationRow,
        key: &str,
        size: i64,
        image_type: &str,
    ) -> Result<Vec<JobId>, Failure> {
        let user_id = generation.user_id;
        let limit = match users::plan_of(self.db, user_id).await? {
            Some(plan) => self.quotas.for_plan(plan),
            None => 0,
        };
        let extension = Image::extension_for(image_type);
        let mut tx = self.db.begin().await?;
        let name = folders::free_file_name(&mut tx, user_id, None, &file_name(&generation.prompt, extension))
            .await?;
        let new = NewFile {
            user_id,
            file_name: &name,
            file_size: size,
            mime_type: image_type,
            kind: FileKind::Image,
            bucket: Bucket::Private,
            object_key: key,
            modified_time: None,
            folder_id: None,
            derivative_of: None,
            copy_of: None,
        };
        // Announced by the generation's own event, not a `file` event.
        let (file, queued) = match entry::enter(&mut tx, &new, limit, None::<EventKind>, None).await? {
            Entered::New { file, queued } => (file, queued),
            Entered::Existing(file) => (file, Vec::new()),
            Entered::OverQuota { used } => {
                drop(tx);
                self.storage.delete(Bucket::Private, key).await?;
                return Err(Failure::Generation(format!(
                    "the image does not fit in the drive ({used} of {limit} bytes used)"
                )));
            }
        };
        if !generations::finish_done(&mut tx, generation.id, &file).await? {
            // Ended meanwhile (the sweep failed it): nothing of this attempt is kept.
            return Ok(Vec::new());
        }
        tx.commit().await?;
        Ok(queued)
    }
}

/// The image's file name: the prompt's first words (up to 60 characters of them), or
/// `generated image` when they make no file name.
fn file_name(prompt: &str, extension: &str) -> String {
    let mut stem = String::new();
    for word in prompt.split_whitespace() {
        let word: String = word
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '\'' | ','))
            .collect();
        if word.is_empty() {
            continue;
        }
        if stem.chars().count() + word.chars().count() + 1 > 60 {
            break;
        }
        if !stem.is_empty() {
            stem.push(' ');
        }
        stem.push_str(&word);
    }
    let name = format!("{stem}.{extension}");
    if stem.is_empty() || check_name(&name).is_err() {
        format!("generated image.{extension}")
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_image_is_named_for_its_prompt() {
        assert_eq!(file_name("A red fox, in snow!", "png"), "A red fox, in snow.png");
        assert_eq!(file_name("../../etc/passwd", "png"), "etcpasswd.png");
        assert_eq!(file_name("   ", "jpg"), "generated image.jpg");
        assert_eq!(file_name("\u{202e}", "png"), "generated image.png");
        let long = file_name(&"word ".repeat(100), "png");
        assert!(long.chars().count() <= 64, "{long}");
    }
}
