//! Folder rules: a job (one type, a pipeline or a template) run on every file that lands in a
//! folder — uploaded there, sent by a file request's sender, imported, made by a job, moved in —
//! of a kind it takes. The rule fires in the transaction that brings the file in
//! (`drive_core::db::rules`); this module makes, lists, pauses and removes rules.

use axum::extract::State;
use chrono::{DateTime, Utc};
use drive_core::db::folders;
use drive_core::db::rules::{self, MAX_RULES, NewRule, RuleRow};
use drive_core::folder::{FolderPath, listed};
use drive_core::id::{FolderId, RequestId, RuleId, TemplateId};
use drive_core::input::{Bounded, List};
use drive_core::job::{JobSpec, JobType, MAX_STEPS, StepInput};
use drive_core::records::FolderRef;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::routes::jobs::{AskedJob, asked_job, settings_error};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_folder_rule))
        .routes(routes!(select_folder_rules))
        .routes(routes!(set_folder_rule_paused))
        .routes(routes!(delete_folder_rule))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateRuleInput {
    /// The folder watched, at most 32 deep, made on the way (not the top); or `folderId`.
    folder: Option<FolderPath>,
    /// One of the caller's folders to watch; or `folder`.
    folder_id: Option<FolderId>,
    /// The job run on each file, with its `options`; or `steps`, or `templateId`. A rule runs
    /// it on one file at a time.
    #[schema(schema_with = JobType::requestable_schema)]
    job_type: Option<JobType>,
    /// A pipeline, as `/create-file-job` takes it; or `jobType`, or `templateId`.
    steps: Option<List<StepInput, 1, { MAX_STEPS }>>,
    /// One of the caller's templates (the rule keeps its own copy of the steps).
    template_id: Option<TemplateId>,
    /// With `jobType`: its settings.
    #[serde(default)]
    options: serde_json::Value,
    /// One of the caller's folders for the results; default beside each file. Results never
    /// fire a rule.
    result_folder_id: Option<FolderId>,
    /// Also run on the files already in the folder, oldest first, within a budget.
    backfill: Option<BackfillInput>,
    /// Check the rule and estimate a backfill of every file already in the folder, making
    /// nothing.
    #[serde(default)]
    dry_run: bool,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BackfillInput {
    /// The minutes of estimated job time the backfill may take, 1 to 10000: files are taken
    /// oldest first until the next one does not fit.
    budget_minutes: Bounded<1, 10000>,
}

/// A rule as the caller sees it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    id: RuleId,
    /// The folder it watches.
    folder: FolderRef,
    job_type: JobType,
    /// Its settings, every default filled in (a pipeline's are its `steps`).
    #[schema(value_type = Object)]
    options: serde_json::Value,
    /// The template it was made from, while that is kept.
    template_id: Option<TemplateId>,
    /// The file request whose `onArrival` it is.
    request_id: Option<RequestId>,
    result_folder_id: Option<FolderId>,
    paused: bool,
    /// Files it took.
    files_taken: i64,
    /// Of those, the ones whose job waits for room: an account's rules have at most 100 jobs
    /// waiting in the queue at once.
    files_waiting: i64,
    create_time: DateTime<Utc>,
}

impl From<RuleRow> for Rule {
    fn from(row: RuleRow) -> Rule {
        Rule {
            id: row.id,
            folder: FolderRef {
                id: row.folder_id,
                path: listed(&row.folder_path),
            },
            job_type: row.job_type,
            options: row.options,
            template_id: row.template_id,
            request_id: row.request_id,
            result_folder_id: row.result_folder_id,
            paused: row.paused,
            files_taken: row.hits,
            files_waiting: row.waiting,
            create_time: row.created_at,
        }
    }
}

/// What a backfill comes to (or, on a dry run, would).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Backfill {
    /// Files in the folder the rule takes.
    files: u64,
    /// The estimated job time of the files taken (on a dry run, of every one).
    estimate_seconds: u64,
    /// Files taken within the budget, oldest first; absent on a dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    files_taken: Option<u64>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MadeRule {
    /// The rule; absent on a dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    rule: Option<Rule>,
    /// With `backfill`, and on a dry run.
    #[serde(skip_serializing_if = "Option::is_none")]
    backfill: Option<Backfill>,
    dry_run: bool,
}

/// Run a job on every file that lands in a folder (and, with `backfill`, on those there).
/// A dry run checks it and estimates a backfill.
#[utoipa::path(post, path = "/create-folder-rule", tag = "jobs", request_body = CreateRuleInput,
    responses((status = 200, body = MadeRule)))]
async fn create_folder_rule(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<CreateRuleInput>,
) -> ApiResult<axum::Json<MadeRule>> {
    caller.plan()?;
    let named = if input.template_id.is_some() {
        "templateId"
    } else if input.steps.is_some() {
        "steps"
    } else {
        "jobType"
    };
    let template_id = input.template_id;
    let spec = asked_job(
        &state,
        &caller,
        AskedJob {
            job_type: input.job_type,
            steps: input.steps,
            template_id,
            options: input.options,
        },
    )
    .await?;
    check_per_file(&spec, named)?;
    let budget_seconds = input.backfill.map(|b| b.budget_minutes.get() as u64 * 60);
    let result_folder_id = match input.result_folder_id {
        Some(id) => Some(
            folders::find_owned(&state.db, caller.user_id, id)
                .await?
                .ok_or_else(|| folder_not_found("resultFolderId"))?
                .id,
        ),
        None => None,
    };
    let mut tx = state.db.begin().await?;
    let folder_id = match (input.folder, input.folder_id) {
        (None, None) => return Err(ApiError::missing("folderId")),
        (Some(_), Some(_)) => return Err(ApiError::invalid("folderId", "give folder or folderId, not both")),
        // A dry run's transaction is dropped, and with it any folder made on the way.
        (Some(path), None) => {
            folders::ensure(&mut tx, caller.user_id, &path)
                .await?
                .ok_or_else(|| ApiError::invalid("folder", "a rule watches a folder below the top"))?
                .id
        }
        (None, Some(id)) => {
            folders::find_owned(&state.db, caller.user_id, id)
                .await?
                .ok_or_else(|| folder_not_found("folderId"))?
                .id
        }
    };
    if input.dry_run {
        let estimate = rules::backfill(&mut tx, caller.user_id, folder_id, &spec, None).await?;
        return Ok(axum::Json(MadeRule {
            rule: None,
            backfill: Some(Backfill {
                files: estimate.files,
                estimate_seconds: estimate.estimate_seconds,
                files_taken: None,
            }),
            dry_run: true,
        }));
    }
    let new = NewRule {
        user_id: caller.user_id,
        folder_id,
        spec: &spec,
        template_id,
        request_id: None,
        result_folder_id,
    };
    let Some(row) = rules::create(&mut tx, &new).await? else {
        return Err(ApiError::invalid(
            "folderId",
            format!("an account keeps at most {MAX_RULES} folder rules; delete one first"),
        ));
    };
    let backfilled = match budget_seconds {
        Some(budget) => {
            Some(rules::backfill(&mut tx, caller.user_id, folder_id, &spec, Some((row.id, budget))).await?)
        }
        None => None,
    };
    let row = rules::find(&mut *tx, caller.user_id, row.id)
        .await?
        .expect("the rule just made");
    tx.commit().await?;
    if backfilled.as_ref().is_some_and(|b| !b.queued.is_empty()) {
        state.doorbell.ring().await;
    }
    Ok(axum::Json(MadeRule {
        rule: Some(row.into()),
        backfill: backfilled.map(|b| Backfill {
            files: b.files,
            estimate_seconds: b.estimate_seconds,
            files_taken: Some(b.taken),
        }),
        dry_run: false,
    }))
}

/// A rule runs its job on each file alone, on a file just arrived: a job that needs more
/// files, or what was read of a file's speech, cannot be a rule's.
fn check_per_file(spec: &JobSpec, named: &str) -> ApiResult<()> {
    let (min, _) = spec.input_count();
    if min > 1 {
        return Err(ApiError::invalid(
            named,
            format!(
                "a rule runs its job on one file at a time; {} takes at least {min}",
                spec.job_type().as_str()
            ),
        ));
    }
    if let JobSpec::Pipeline(chain) = spec {
        chain.check_unbound().map_err(settings_error)?;
    }
    if spec.reads_speech() {
        return Err(ApiError::invalid(
            named,
            "captions come from what was read of a file, which a file just arrived does not have yet",
        ));
    }
    Ok(())
}

fn folder_not_found(field: &str) -> ApiError {
    ApiError::not_found("folder_not_found", format!("no folder of yours has that {field}"))
}

fn rule_not_found() -> ApiError {
    ApiError::not_found("rule_not_found", "no folder rule of yours has that id")
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SelectRulesInput {
    /// Only the rules watching this folder of the caller's.
    folder_id: Option<FolderId>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Rules {
    /// Oldest first.
    rules: Vec<Rule>,
}

/// The caller's folder rules, oldest first.
#[utoipa::path(post, path = "/select-folder-rules", tag = "jobs", request_body = Option<SelectRulesInput>,
    responses((status = 200, body = Rules)))]
async fn select_folder_rules(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<Option<SelectRulesInput>>,
) -> ApiResult<axum::Json<Rules>> {
    let input = input.unwrap_or_default();
    let rows = rules::list(&state.db, caller.user_id, input.folder_id).await?;
    Ok(axum::Json(Rules {
        rules: rows.into_iter().map(Rule::from).collect(),
    }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PauseRuleInput {
    id: RuleId,
    /// True: files that land fire nothing until it is resumed (jobs waiting for room wait on).
    paused: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ChangedRule {
    rule: Rule,
}

/// Pause or resume a folder rule.
#[utoipa::path(post, path = "/set-folder-rule-paused", tag = "jobs", request_body = PauseRuleInput,
    responses((status = 200, body = ChangedRule)))]
async fn set_folder_rule_paused(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<PauseRuleInput>,
) -> ApiResult<axum::Json<ChangedRule>> {
    let row = rules::set_paused(&state.db, caller.user_id, input.id, input.paused)
        .await?
        .ok_or_else(rule_not_found)?;
    Ok(axum::Json(ChangedRule { rule: row.into() }))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteRuleInput {
    id: RuleId,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DeletedRule {
    deleted: RuleId,
}

/// Remove a folder rule: the jobs it started go on, the files waiting for a job are let go.
#[utoipa::path(post, path = "/delete-folder-rule", tag = "jobs", request_body = DeleteRuleInput,
    responses((status = 200, body = DeletedRule)))]
async fn delete_folder_rule(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<DeleteRuleInput>,
) -> ApiResult<axum::Json<DeletedRule>> {
    if !rules::delete(&state.db, caller.user_id, input.id).await? {
        return Err(rule_not_found());
    }
    Ok(axum::Json(DeletedRule { deleted: input.id }))
}
