//! Job templates: a pipeline's steps kept under a name, checked once when made, run on files by
//! `/create-file-job` with `templateId`.

use axum::extract::State;
use chrono::{DateTime, Utc};
use drive_core::db::templates::{self, MAX_TEMPLATES, Made, TemplateRow};
use drive_core::id::TemplateId;
use drive_core::input::{Line, List};
use drive_core::job::{JobSpec, MAX_STEPS, Pipeline, StepInput};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::routes::jobs::settings_error;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_job_template))
        .routes(routes!(select_job_templates))
        .routes(routes!(delete_job_template))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TemplateInput {
    /// 1 to 100 characters, unique among the caller's templates.
    name: Line<1, 100>,
    /// The pipeline's steps, as `/create-file-job` takes them.
    steps: List<StepInput, 1, { MAX_STEPS }>,
}

/// A template as the caller sees it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Template {
    id: TemplateId,
    name: String,
    /// The steps with every default filled in.
    #[schema(value_type = Vec<Object>)]
    steps: serde_json::Value,
    create_time: DateTime<Utc>,
}

impl From<TemplateRow> for Template {
    fn from(row: TemplateRow) -> Template {
        Template {
            id: row.id,
            name: row.name,
            steps: row.options.get("steps").cloned().unwrap_or_default(),
            create_time: row.created_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MadeTemplate {
    template: Template,
}

/// Keep a pipeline under a name, checked as it will run on any files its first steps take.
#[utoipa::path(post, path = "/create-job-template", tag = "jobs", request_body = TemplateInput,
    responses((status = 200, body = MadeTemplate)))]
async fn create_job_template(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<TemplateInput>,
) -> ApiResult<axum::Json<MadeTemplate>> {
    let spec = Pipeline::parse(input.steps.into()).map_err(settings_error)?;
    if let JobSpec::Pipeline(chain) = &spec {
        chain.check_unbound().map_err(settings_error)?;
    }
    match templates::create(&state.db, caller.user_id, &input.name, &spec).await? {
        Made::New(row) => Ok(axum::Json(MadeTemplate { template: row.into() })),
        Made::NameTaken => Err(ApiError::conflict(
            "template_name_taken",
            format!("a template of yours is named {:?}", &*input.name),
        )),
        Made::Full => Err(ApiError::invalid(
            "name",
            format!("an account keeps at most {MAX_TEMPLATES} templates; delete one first"),
        )),
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Templates {
    /// By name.
    templates: Vec<Template>,
}

/// The caller's templates, by name.
#[utoipa::path(post, path = "/select-job-templates", tag = "jobs",
    responses((status = 200, body = Templates)))]
async fn select_job_templates(
    State(state): State<AppState>,
    caller: Caller,
) -> ApiResult<axum::Json<Templates>> {
    let rows = templates::list(&state.db, caller.user_id).await?;
    Ok(axum::Json(Templates {
        templates: rows.into_iter().map(Template::from).collect(),
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteTemplateInput {
    id: TemplateId,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DeletedTemplate {
    deleted: TemplateId,
}

/// Remove a template (jobs made from it are not touched).
#[utoipa::path(post, path = "/delete-job-template", tag = "jobs", request_body = DeleteTemplateInput,
    responses((status = 200, body = DeletedTemplate)))]
async fn delete_job_template(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<DeleteTemplateInput>,
) -> ApiResult<axum::Json<DeletedTemplate>> {
    if !templates::delete(&state.db, caller.user_id, input.id).await? {
        return Err(ApiError::not_found(
            "template_not_found",
            "no template of yours has that id",
        ));
    }
    Ok(axum::Json(DeletedTemplate { deleted: input.id }))
}
