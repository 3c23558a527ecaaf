//! Image generation: `/generate-image` checks the request and the plan's rules, records the
//! generation (counted against the month's allowance under the account's lock) with the
//! `generateImage` job that draws it, and answers at once; the farm asks the provider, saves
//! the image privately to the top of the caller's drive and writes the `generation` event.
//! `/select-generations` answers where each stands.

use axum::extract::State;
use drive_core::db::generations::{self, NewGeneration};
use drive_core::db::users;
use drive_core::generation::{AspectRatio, GenerationStatus, ImageModel, Quality};
use drive_core::id::GenerationId;
use drive_core::input::{List, Text};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::records::FileRecord;
use crate::routes::download::link_to;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(generate_image))
        .routes(routes!(select_generations))
}

const MAX_PROMPT: usize = 4000;
const MAX_IDS: usize = 20;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GenerateInput {
    /// What to draw: 1 to 4000 characters.
    prompt: Text<1, { MAX_PROMPT }>,
    /// Default `gptImage2`. `nanoBananaPro` is for the Pro plan.
    model: Option<ImageModel>,
    /// Default `1:1`. `gptImage2` takes 1:1, 3:2 and 2:3; `imagen4Fast` all but 3:2 and 2:3.
    aspect_ratio: Option<AspectRatio>,
    /// `gptImage2` only; default low on Intro and Basic, medium on Pro. Medium and high are
    /// for the Pro plan.
    quality: Option<Quality>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StartedGeneration {
    id: GenerationId,
    model: ImageModel,
    aspect_ratio: AspectRatio,
    /// Null for a model without qualities.
    quality: Option<Quality>,
}

/// Draw an image from a prompt; it is saved privately to the drive (poll `/select-generations`
/// or follow the `generation` event).
#[utoipa::path(post, path = "/generate-image", tag = "images", request_body = GenerateInput,
    responses(
        (status = 200, body = StartedGeneration),
        (status = 400, description = "A field is missing or wrong (`field` names it)"),
        (status = 403, description = "Refused by the plan: `no_plan`, `pro_only`, `no_images_left`, `storage_full`"),
        (status = 502, description = "`generator_unavailable`: the model's provider is not configured (retryable)"),
    ))]
async fn generate_image(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<GenerateInput>,
) -> ApiResult<axum::Json<StartedGeneration>> {
    let prompt = input.prompt.trim();
    let model = input.model.unwrap_or(ImageModel::GptImage2);
    let aspect_ratio = input.aspect_ratio.unwrap_or(AspectRatio::Square);
    if !model.takes(aspect_ratio) {
        return Err(ApiError::invalid(
            "aspectRatio",
            format!("{} draws at {}", model.as_str(), model.ratios()),
        ));
    }
    if input.quality.is_some() && !model.has_quality() {
        return Err(ApiError::invalid(
            "quality",
            format!(
                "{} has no qualities to choose from; leave quality out",
                model.as_str()
            ),
        ));
    }
    let plan = caller.plan()?;
    let quality = model
        .has_quality()
        .then(|| input.quality.unwrap_or(Quality::default_for(plan)));
    if model.pro_only(quality) && plan != drive_core::plan::Plan::Pro {
        let choice = match quality {
            Some(quality) => format!("{} at {} quality", model.as_str(), quality.as_str()),
            None => model.as_str().to_string(),
        };
        return Err(ApiError::forbidden(
            "pro_only",
            format!("{choice} is for the Pro plan"),
        ));
    }
    if let Some(missing) = state.settings.generators.missing(model) {
        return Err(ApiError::GeneratorUnavailable {
            message: format!(
                "{} is not available on this drive: {missing} is not set",
                model.as_str()
            ),
        });
    }
    let limit = state.settings.quotas.for_plan(plan);
    let used = users::used_bytes(&state.db, caller.user_id).await?;
    if used >= limit {
        return Err(ApiError::forbidden(
            "storage_full",
            format!("the drive is full: {used} of {limit} bytes used"),
        ));
    }

    let allowance = state.settings.image_allowance.for_plan(plan);
    let mut tx = state.db.begin().await?;
    let made = generations::lock_and_count_this_month(&mut tx, caller.user_id).await?;
    if made >= allowance {
        return Err(ApiError::forbidden(
            "no_images_left",
            format!("this month's {allowance} images are used up"),
        ));
    }
    let new = NewGeneration {
        user_id: caller.user_id,
        model,
        aspect_ratio,
        quality,
        prompt,
    };
    let (generation, _) = generations::create(&mut tx, &new).await?;
    tx.commit().await?;
    state.doorbell.ring().await;
    Ok(axum::Json(StartedGeneration {
        id: generation.id,
        model,
        aspect_ratio,
        quality,
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct SelectGenerationsInput {
    /// 1 to 20 generation ids.
    ids: List<GenerationId, 1, { MAX_IDS }>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Generation {
    id: GenerationId,
    status: GenerationStatus,
    /// True while the image is in the trash; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    trashed: Option<bool>,
    error: Option<String>,
    model: Option<ImageModel>,
    prompt: Option<String>,
    /// The saved image (no `downloadUrl` while it is in the trash); null until saved, and once
    /// deleted for good.
    image: Option<FileRecord>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Generations {
    generations: Vec<Generation>,
}

/// Where the caller's generations stand; ids of no generation of the caller's are left out.
#[utoipa::path(post, path = "/select-generations", tag = "images", request_body = SelectGenerationsInput,
    responses((status = 200, body = Generations), (status = 400, description = "`ids` missing or not 1 to 20")))]
async fn select_generations(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<SelectGenerationsInput>,
) -> ApiResult<axum::Json<Generations>> {
    let mut answered = Vec::new();
    for (generation, file) in generations::of_user(&state.db, caller.user_id, &input.ids).await? {
        let trashed = file.as_ref().and_then(|f| f.trashed_at).map(|_| true);
        let image = match file {
            Some(file) if file.trashed_at.is_none() => {
                let url = link_to(&state, &file).await?;
                Some(FileRecord::with_url(&file, Some(url)))
            }
            Some(file) => Some(FileRecord::with_url(&file, None)),
            None => None,
        };
        answered.push(Generation {
            id: generation.id,
            status: generation.status,
            trashed,
            error: generation.error,
            model: Some(generation.model),
            prompt: Some(generation.prompt),
            image,
        });
    }
    // In the order asked.
    answered.sort_by_key(|g| input.ids.iter().position(|id| *id == g.id));
    Ok(axum::Json(Generations {
        generations: answered,
    }))
}
