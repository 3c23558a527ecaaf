//! Image generations: the row the caller sees (`/select-generations`), created with its
//! `generateImage` job under the account's lock so the month's allowance is never passed, and
//! ended once, with its `generation` drive event, whoever ends it (the worker with an image or a
//! provider's refusal, the farm giving up on the job, the sweep finding no image).

use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::{PgConnection, PgPool};

use crate::db::events::{self, EventKind};
use crate::db::files::{COLUMNS_OF_F, FileRow};
use crate::db::jobs::{self, JobRow, NewJob};
use crate::generation::{AspectRatio, GenerationStatus, ImageModel, Quality};
use crate::id::{FileId, GenerationId, JobId, UserId};
use crate::job::{GenerateImage, JobSpec};
use crate::records::FileRecord;

#[derive(Debug, Clone, sqlx::FromRow)]
pub struct GenerationRow {
    pub id: GenerationId,
    pub user_id: UserId,
    pub job_id: JobId,
    pub model: ImageModel,
    pub aspect_ratio: AspectRatio,
    pub quality: Option<Quality>,
    pub prompt: String,
    pub status: GenerationStatus,
    pub error: Option<String>,
    pub provider_task: Option<serde_json::Value>,
    pub succeeded_at: Option<DateTime<Utc>>,
    pub image_type: Option<String>,
    pub file_id: Option<FileId>,
    pub created_at: DateTime<Utc>,
}

impl GenerationRow {
    /// Where its image is stored: the same on every attempt, so a new attempt finds an image
    /// an earlier one stored and does not ask the provider again.
    pub fn object_key(&self) -> String {
        format!("users/{}/generations/{}", self.user_id, self.id)
    }
}

const COLUMNS: &str = "id, user_id, job_id, model, aspect_ratio, quality, prompt, status, error, \
                       provider_task, succeeded_at, image_type, file_id, created_at";

/// Locks the account's row for the rest of the transaction and counts the generations it
/// started this calendar month (UTC) that have not failed: requests of one account take turns,
/// so concurrent ones can never together pass the allowance.
pub async fn lock_and_count_this_month(conn: &mut PgConnection, user_id: UserId) -> Result<i64, sqlx::Error> {
    // `no key update`: see `reservations::reserve` (an insert's key-share lock on the row).
    sqlx::query("select 1 from users where id = $1 for no key update")
        .bind(user_id)
        .execute(&mut *conn)
        .await?;
    count_this_month(conn, user_id).await
}

/// Images the account has asked for this calendar month (UTC), failed ones aside: what its
/// plan's monthly allowance counts.
pub async fn count_this_month(conn: &mut PgConnection, user_id: UserId) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "select count(*) from image_generations
         where user_id = $1 and status <> 'failed'
           and created_at >= date_trunc('month', now() at time zone 'utc') at time zone 'utc'",
    )
    .bind(user_id)
    .fetch_one(conn)
    .await
}

#[derive(Debug)]
pub struct NewGeneration<'a> {
    pub user_id: UserId,
    pub model: ImageModel,
    pub aspect_ratio: AspectRatio,
    pub quality: Option<Quality>,
    pub prompt: &'a str,
}

/// Records a generation and the `generateImage` job that works it; the caller pushes the job
/// on the queue after commit.
pub async fn create(
    conn: &mut PgConnection,
    new: &NewGeneration<'_>,
) -> Result<(GenerationRow, JobRow), sqlx::Error> {
    let id = GenerationId::random();
    let spec = JobSpec::GenerateImage(GenerateImage { generation: id });
    let job = jobs::create(
        &mut *conn,
        &NewJob {
            user_id: new.user_id,
            spec: &spec,
            input_ids: &[],
            source_folder_id: None,
            folder_id: None,
            idempotency_key: None,
            notify: None,
        },
    )
    .await?;
    let row = sqlx::query_as(&format!(
        "insert into image_generations (id, user_id, job_id, model, aspect_ratio, quality, prompt)
         values ($1, $2, $3, $4, $5, $6, $7)
         returning {COLUMNS}"
    ))
    .bind(id)
    .bind(new.user_id)
    .bind(job.id)
    .bind(new.model.as_str())
    .bind(new.aspect_ratio.as_str())
    .bind(new.quality.map(Quality::as_str))
    .bind(new.prompt)
    .fetch_one(conn)
    .await?;
    Ok((row, job))
}

pub async fn find(pool: &PgPool, id: GenerationId) -> Result<Option<GenerationRow>, sqlx::Error> {
    sqlx::query_as(&format!("select {COLUMNS} from image_generations where id = $1"))
        .bind(id)
        .fetch_optional(pool)
        .await
}

/// The caller's generations among `ids`, each with its image's file when there is one; ids of
/// nobody's or of another account's are left out alike.
pub async fn of_user(
    pool: &PgPool,
    user_id: UserId,
    ids: &[GenerationId],
) -> Result<Vec<(GenerationRow, Option<FileRow>)>, sqlx::Error> {
    let rows: Vec<GenerationRow> = sqlx::query_as(&format!(
        "select {COLUMNS} from image_generations where user_id = $1 and id = any($2)"
    ))
    .bind(user_id)
    .bind(ids)
    .fetch_all(pool)
    .await?;
    let file_ids: Vec<FileId> = rows.iter().filter_map(|g| g.file_id).collect();
    let files: Vec<FileRow> = sqlx::query_as(&format!(
        "select {COLUMNS_OF_F} from files f where f.user_id = $1 and f.id = any($2)"
    ))
    .bind(user_id)
    .bind(&file_ids)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|g| {
            let file = files.iter().find(|f| Some(f.id) == g.file_id).cloned();
            (g, file)
        })
        .collect())
}

/// Keeps a polling provider's task on the row, so a later attempt asks about it again.
pub async fn keep_task(pool: &PgPool, id: GenerationId, task: &serde_json::Value) -> Result<(), sqlx::Error> {
    sqlx::query("update image_generations set provider_task = $2 where id = $1")
        .bind(id)
        .bind(task)
        .execute(pool)
        .await?;
    Ok(())
}

/// Notes that the provider handed over an image of `image_type`, now stored under the
/// generation's key: the sweep's 15 minutes run from the first time.
pub async fn mark_succeeded(pool: &PgPool, id: GenerationId, image_type: &str) -> Result<(), sqlx::Error> {
    sqlx::query(
        "update image_generations set succeeded_at = coalesce(succeeded_at, now()), image_type = $2
         where id = $1",
    )
    .bind(id)
    .bind(image_type)
    .execute(pool)
    .await?;
    Ok(())
}

/// Ends a working generation done with `file` as its image, and writes its `generation`
/// event, in the caller's transaction. `false` when it had already ended.
pub async fn finish_done(
    conn: &mut PgConnection,
    id: GenerationId,
    file: &FileRow,
) -> Result<bool, sqlx::Error> {
    let ended: Option<GenerationRow> = sqlx::query_as(&format!(
        "update image_generations
         set status = 'done', file_id = $2, ended_at = now(), succeeded_at = coalesce(succeeded_at, now())
         where id = $1 and status = 'working'
         returning {COLUMNS}"
    ))
    .bind(id)
    .bind(file.id)
    .fetch_optional(&mut *conn)
    .await?;
    match ended {
        Some(generation) => {
            announce(conn, &generation, Some(file)).await?;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// Ends a generation failed with `error` and writes its `generation` event, in the caller's
/// transaction: a working one, or (`imageless`) a done one whose image is gone for good.
/// `false` when there was nothing to end.
pub async fn finish_failed(
    conn: &mut PgConnection,
    id: GenerationId,
    error: &str,
    imageless: bool,
) -> Result<bool, sqlx::Error> {
    let ended: Option<GenerationRow> = sqlx::query_as(&format!(
        "update image_generations
         set status = 'failed', error = $2, ended_at = now()
         where id = $1 and (status = 'working' or ($3 and status = 'done' and file_id is null))
         returning {COLUMNS}"
    ))
    .bind(id)
    .bind(error)
    .bind(imageless)
    .fetch_optional(&mut *conn)
    .await?;
    match ended {
        Some(generation) => {
            announce(conn, &generation, None).await?;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// The generation's drive event: `status, error, prompt, image` as the spec lists them, with
/// the generation's id and model beside them so a follower knows which one ended.
async fn announce(
    conn: &mut PgConnection,
    generation: &GenerationRow,
    image: Option<&FileRow>,
) -> Result<(), sqlx::Error> {
    let fields = json!({
        "generationId": generation.id,
        "model": generation.model,
        "status": generation.status,
        "error": generation.error,
        "prompt": generation.prompt,
        "image": image.map(|file| FileRecord::with_url(file, None)),
    });
    events::record(
        conn,
        generation.user_id,
        EventKind::Generation,
        generation.id,
        fields,
    )
    .await?;
    Ok(())
}

/// Generations that succeeded at their provider before `before` and have no image in the
/// drive: never saved (still working), or saved and deleted for good since.
pub async fn imageless(pool: &PgPool, before: DateTime<Utc>) -> Result<Vec<GenerationRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "select {COLUMNS} from image_generations
         where succeeded_at is not null and succeeded_at < $1 and file_id is null and status <> 'failed'"
    ))
    .bind(before)
    .fetch_all(pool)
    .await
}
