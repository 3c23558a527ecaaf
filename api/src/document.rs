//! What the served OpenAPI document adds to what utoipa derives from the routes: who may call
//! each operation (its `security`, with the scope a limited token needs), and every status it can answer, each with the error body.
//! The request schemas themselves carry their limits (lengths, patterns, list sizes, ranges,
//! enums) from the types that validate them (`drive_core::input`), so a request the document
//! calls valid is one the route takes, save for what only the drive's state can tell (an id
//! that is not the caller's, a token that has expired, a quota spent).

use utoipa::openapi::path::Operation;
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::{Content, OpenApi, Ref, RefOr, Response, ResponseBuilder, Schema};
use utoipa::{Modify, PartialSchema, ToSchema};

use drive_core::job::JobType;
use drive_core::scope::Scope;

use crate::auth;
use crate::error::ErrorBody;

/// Who may call an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    /// A session (`Authorization: Bearer`, from `/exchange-token`) and `X-Drive-App`.
    Session,
    /// The account's API token as the bearer: signing in.
    ApiToken,
    /// Anyone, with no credentials: the pages' own calls, health and version.
    Anyone,
    /// Anyone for a public file; a session for one's own private file.
    AnyoneOrSession,
    /// A person's browser: `X-Drive-App`, no bearer (signing in with a password, signing out).
    Browser,
    /// A person's browser with its sign-in cookie and `X-Drive-App` (`/renew-session`).
    SignedInBrowser,
}

fn access(path: &str) -> Access {
    match path {
        "/exchange-token" => Access::ApiToken,
        "/generate-download-url" => Access::AnyoneOrSession,
        "/sign-in" | "/accept-invitation" | "/sign-out" => Access::Browser,
        "/renew-session" => Access::SignedInBrowser,
        "/healthz"
        | "/readyz"
        | "/version"
        | "/p/{id}"
        | "/start-request-drop"
        | "/add-request-file"
        | "/sign-request-parts"
        | "/finish-request-file"
        | "/finish-request-drop"
        | "/open-review"
        | "/add-review-note" => Access::Anyone,
        _ => Access::Session,
    }
}

/// Whether an operation starts a job (`jobs::submit`), which an account with the most jobs
/// waiting or running at once is refused with 429 `too_many_jobs`.
fn submits_jobs(path: &str) -> bool {
    matches!(
        path,
        "/create-file-job"
            | "/retry-file-job"
            | "/create-archive-request"
            | "/import-from-url"
            | "/set-video-thumbnail"
    )
}

/// Whether the routes count this operation's calls per address (`crate::limits`): signing in
/// and what anyone may call without an account (health and version are not counted).
fn rate_limited(path: &str) -> bool {
    match access(path) {
        Access::ApiToken | Access::AnyoneOrSession | Access::SignedInBrowser => true,
        Access::Browser => path != "/sign-out",
        Access::Anyone => !matches!(path, "/healthz" | "/readyz" | "/version"),
        Access::Session => false,
    }
}

/// What an operation's 409 means, for those that answer one: what it names is in a state that
/// forbids the call now (the spec's upload and job tables).
fn conflict(path: &str) -> Option<&'static str> {
    const KEY_TAKEN: &str = "`object_key_taken`: a file is already recorded under this objectKey.";
    const PARTS: &str = "The stored parts are not yet the plan: `parts_missing` (send them, then call again) or \
        `parts_invalid` (a part the plan does not have, or of the wrong length); or `object_key_taken`: \
        the upload was abandoned and a file recorded under its key.";
    match path {
        "/generate-file-urls" | "/sign-upload-parts" => Some(KEY_TAKEN),
        "/create-multipart-upload" | "/add-request-file" => Some(
            "`object_key_taken`: a file is already recorded under this objectKey; or \
             `upload_in_progress`: another upload under it was opened at the same moment (call again \
             to resume it).",
        ),
        "/complete-multipart-upload" | "/finish-request-file" => Some(PARTS),
        "/cancel-file-job" => Some("`job_ended`: the job has already ended."),
        "/create-file-job" => {
            Some("`idempotency_key_reused`: the key was given for another job in the last 24 hours.")
        }
        "/retry-file-job" => Some("`job_not_retryable`: the job has not failed or been stopped."),
        "/create-job-template" => Some("`template_name_taken`: a template of yours has that name."),
        _ => None,
    }
}

/// The document as served: utoipa's, with [`Contract`] applied, the choices between fields
/// ([`CHOICES`]) stated in the request schemas, and each job type's options.
pub fn served(mut doc: OpenApi) -> serde_json::Value {
    Contract.modify(&mut doc);
    let mut doc = serde_json::to_value(doc).expect("the document is JSON");
    options_by_job_type(&mut doc);
    pattern_dates(&mut doc);
    for (schema, choice, fields) in CHOICES {
        let schema = &mut doc["components"]["schemas"][schema];
        assert!(schema.is_object(), "{schema} is not in the document");
        let given = |name: &&str| match name.strip_suffix('?') {
            // Given even as null (a `folderId` of null is the top).
            Some(name) => serde_json::json!({ "required": [name] }),
            None => {
                serde_json::json!({ "required": [name], "properties": { *name: { "not": { "type": "null" } } } })
            }
        };
        let rule = match choice {
            Choice::ExactlyOne => {
                serde_json::json!({ "oneOf": fields.iter().map(given).collect::<Vec<_>>() })
            }
            Choice::AtMostOne => {
                serde_json::json!({ "not": { "allOf": fields.iter().map(given).collect::<Vec<_>>() } })
            }
        };
        match schema["allOf"].as_array_mut() {
            Some(rules) => rules.push(rule),
            None => schema["allOf"] = serde_json::json!([rule]),
        }
    }
    doc
}

/// States in `CreateJobInput` (and `CreateRuleInput`) which `options` each `jobType` takes: one
/// branch per type a caller may ask for, its settings struct's schema (`CutOptions`, …) with
/// their ranges; `options` left out or null means every default. A pipeline's own `options` are
/// null: its settings are its steps'. A step's (`StepInput`) are stated by conditions (if its
/// `jobType` is this one, then its `options` are that schema) rather than a list of branches:
/// test-data generators cannot draw from such a list nested in another.
fn options_by_job_type(doc: &mut serde_json::Value) {
    let mut branches = Vec::new();
    let mut step_conditions = Vec::new();
    for job_type in JobType::ALL.iter().filter(|t| t.started_elsewhere().is_none()) {
        let options = job_type.options_schema();
        let schemas = &mut doc["components"]["schemas"];
        for (name, schema) in options.refers_to {
            schemas[name] = serde_json::to_value(schema).expect("a schema is JSON");
        }
        schemas[&options.name] = serde_json::to_value(options.schema).expect("a schema is JSON");
        step_conditions.push(serde_json::json!({
            "if": { "required": ["jobType"], "properties": { "jobType": { "const": job_type.as_str() } } },
            "then": { "properties": { "options": { "oneOf": [
                { "type": "null" },
                { "$ref": format!("#/components/schemas/{}", options.name) },
            ] } } },
        }));
        branches.push(serde_json::json!({
            "required": ["jobType"],
            "properties": {
                "jobType": { "enum": [job_type.as_str()] },
                "options": { "oneOf": [
                    { "type": "null" },
                    { "$ref": format!("#/components/schemas/{}", options.name) },
                ] },
            }
        }));
    }
    for chain in ["steps", "templateId"] {
        // Given and not null (a null is a field left out), so that one branch alone matches.
        branches.push(serde_json::json!({
            "required": [chain],
            "properties": {
                chain: { "not": { "type": "null" } },
                "jobType": { "type": "null" },
                "options": { "type": "null" },
            },
        }));
    }
    let description = serde_json::json!({
        "description": "Settings by type (the `…Options` schema of its `jobType`); left out or null for the defaults.",
    });
    for asking in ["CreateJobInput", "CreateRuleInput"] {
        let input = &mut doc["components"]["schemas"][asking];
        input["properties"]["options"] = description.clone();
        let rule = serde_json::json!({ "oneOf": branches });
        match input["allOf"].as_array_mut() {
            Some(rules) => rules.push(rule),
            None => input["allOf"] = serde_json::json!([rule]),
        }
    }
    let step = &mut doc["components"]["schemas"]["StepInput"];
    step["properties"]["options"] = description;
    step["allOf"] = serde_json::json!(step_conditions);
}

/// Gives every `date` and `date-time` string a pattern besides its format: tools that check
/// a format only when told to (or generate from the pattern alone) still know that `""` is
/// not a time.
fn pattern_dates(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            let pattern = match map.get("format").and_then(|f| f.as_str()) {
                Some("date-time") => Some("^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}"),
                Some("date") => Some("^[0-9]{4}-[0-9]{2}-[0-9]{2}$"),
                _ => None,
            };
            if let Some(pattern) = pattern {
                map.entry("pattern").or_insert(pattern.into());
            }
            map.values_mut().for_each(pattern_dates);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(pattern_dates),
        _ => {}
    }
}

enum Choice {
    ExactlyOne,
    /// Of two fields.
    AtMostOne,
}

/// Fields of a request body of which the route takes exactly one, or at most one, checked by
/// the route after reading the body (each answers 400 naming the field otherwise). A field is
/// given when present and not null; one marked `?` is given even as null.
const CHOICES: &[(&str, Choice, &[&str])] = &[
    ("MoveInput", Choice::ExactlyOne, &["fileIds", "fromFolderId"]),
    ("MoveInput", Choice::ExactlyOne, &["folder", "folderId?"]),
    ("CreateJobInput", Choice::ExactlyOne, &["fileIds", "fromFolderId"]),
    (
        "CreateJobInput",
        Choice::ExactlyOne,
        &["jobType", "steps", "templateId"],
    ),
    ("CreateJobInput", Choice::AtMostOne, &["folder", "folderId"]),
    (
        "CreateRuleInput",
        Choice::ExactlyOne,
        &["jobType", "steps", "templateId"],
    ),
    ("CreateRuleInput", Choice::ExactlyOne, &["folder", "folderId"]),
    ("InsertInput", Choice::AtMostOne, &["folder", "folderId"]),
    ("CopyInput", Choice::ExactlyOne, &["folder", "folderId"]),
    ("ShareInput", Choice::ExactlyOne, &["fileIds", "folderId"]),
    ("UnshareInput", Choice::ExactlyOne, &["fileIds", "folderId"]),
    (
        "ArchiveRequestInput",
        Choice::ExactlyOne,
        &["fileIds", "galleryId", "playlistId"],
    ),
    ("SetCoverInput", Choice::ExactlyOne, &["fileId", "playlistId"]),
    ("SetThumbnailInput", Choice::AtMostOne, &["imageId", "at"]),
    ("ImportInput", Choice::AtMostOne, &["folder", "folderId"]),
    ("CreateRequestInput", Choice::AtMostOne, &["folder", "folderId"]),
    // A reply is at its note's moment; a note needs its own.
    ("AddNoteInput", Choice::ExactlyOne, &["seconds", "replyTo"]),
];

pub struct Contract;

impl Modify for Contract {
    fn modify(&self, doc: &mut OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "session",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "The session token `/exchange-token` answers (`gelToken`). An operation's \
                         requirement names the scope its API token needs (`read`, `write` or \
                         `delete`; all three: the account's own token, with every scope and not \
                         one an app got through OAuth); any other is answered 403 `insufficient_scope`.",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "app",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                auth::APP_HEADER,
                "The application id the drive was set up with.",
            ))),
        );
        components.add_security_scheme(
            "signInCookie",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                "drive_sign_in",
                "A browser's sign-in, set HttpOnly by `/sign-in` and `/accept-invitation`.",
            ))),
        );
        components.add_security_scheme(
            "apiToken",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("The account's API token, for `/exchange-token` only."))
                    .build(),
            ),
        );
        components
            .schemas
            .insert(ErrorBody::name().into_owned(), ErrorBody::schema());
        let schemas = components.schemas.clone();
        for (path, item) in doc.paths.paths.iter_mut() {
            for op in [item.get.as_mut(), item.post.as_mut()].into_iter().flatten() {
                op.security = Some(security(path));
                for (status, why) in statuses(path, op, &schemas) {
                    op.responses
                        .responses
                        .entry(status.to_string())
                        .or_insert_with(|| RefOr::T(error(why)));
                }
            }
        }
    }
}

fn security(path: &str) -> Vec<SecurityRequirement> {
    let scopes: Vec<&str> = auth::needed_scopes(path)
        .unwrap_or(&Scope::ALL)
        .iter()
        .map(|s| s.as_str())
        .collect();
    let session = SecurityRequirement::new("session", scopes).add("app", Vec::<String>::new());
    match access(path) {
        Access::Session => vec![session],
        Access::ApiToken => vec![SecurityRequirement::new("apiToken", Vec::<String>::new())],
        Access::Anyone => vec![SecurityRequirement::default()],
        Access::AnyoneOrSession => vec![SecurityRequirement::default(), session],
        Access::Browser => vec![SecurityRequirement::new("app", Vec::<String>::new())],
        Access::SignedInBrowser => vec![
            SecurityRequirement::new("signInCookie", Vec::<String>::new()).add("app", Vec::<String>::new()),
        ],
    }
}

/// The error statuses an operation can answer, each with what it means there.
fn statuses(
    path: &str,
    op: &Operation,
    schemas: &std::collections::BTreeMap<String, RefOr<Schema>>,
) -> Vec<(u16, &'static str)> {
    let access = access(path);
    let takes_input = op.request_body.is_some() || op.parameters.as_ref().is_some_and(|p| !p.is_empty());
    let mut statuses = Vec::new();
    if takes_input
        || matches!(
            access,
            Access::Session | Access::Browser | Access::SignedInBrowser
        )
    {
        statuses.push((400, "A field (or header) is missing or wrong; `field` names it."));
    }
    if access != Access::Anyone && path != "/sign-out" {
        statuses.push((401, "No valid credential: sign in again (`/exchange-token`)."));
    }
    if matches!(access, Access::Browser | Access::SignedInBrowser) {
        statuses.push((
            403,
            "`X-Drive-App` names an unknown application (`app_not_allowed`).",
        ));
    } else if matches!(access, Access::Session | Access::AnyoneOrSession) {
        statuses.push((
            403,
            "Signed in but not allowed: no plan, the plan does not allow it, or the token's scopes \
             do not (`insufficient_scope`).",
        ));
    } else if access == Access::Anyone && op.request_body.is_some() {
        statuses.push((
            403,
            "The request or review no longer takes this (closed, or past its time).",
        ));
    }
    if path == "/p/{id}" || op.request_body.as_ref().is_some_and(|b| names_an_id(b, schemas)) {
        statuses.push((404, "Nothing the caller may see has that id."));
    }
    if let Some(why) = conflict(path) {
        statuses.push((409, why));
    }
    if op.request_body.is_some() {
        statuses.push((413, "The body is over 2 MiB."));
    }
    if rate_limited(path) {
        statuses.push((
            429,
            "Too many such calls from this address this minute; retryable.",
        ));
    } else if submits_jobs(path) {
        statuses.push((
            429,
            "The account has the most jobs waiting or running at once; retryable.",
        ));
    }
    if !matches!(path, "/healthz" | "/version") {
        statuses.push((500, "A failure of the drive's own; retryable."));
        statuses.push((502, "The store (or another upstream) did not answer; retryable."));
        statuses.push((503, "The database did not answer; retryable."));
    }
    statuses
}

/// Whether a request body names a record by id (a property `id`, `…Id` or `…Ids`, at any depth)
/// or by the token of an upload or a drop, so the route can answer 404.
fn names_an_id(
    body: &utoipa::openapi::request_body::RequestBody,
    schemas: &std::collections::BTreeMap<String, RefOr<Schema>>,
) -> bool {
    let Ok(body) = serde_json::to_value(body) else {
        return false;
    };
    let schemas = serde_json::to_value(schemas).unwrap_or_default();
    let mut seen = Vec::new();
    mentions_id(&body, &schemas, &mut seen)
}

fn mentions_id(value: &serde_json::Value, schemas: &serde_json::Value, seen: &mut Vec<String>) -> bool {
    match value {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::String(r)) = map.get("$ref") {
                let name = r.rsplit('/').next().unwrap_or_default().to_string();
                if seen.contains(&name) {
                    return false;
                }
                seen.push(name.clone());
                return mentions_id(&schemas[&name], schemas, seen);
            }
            if let Some(serde_json::Value::Object(properties)) = map.get("properties")
                && properties
                    .keys()
                    .any(|k| k == "id" || k == "token" || k.ends_with("Id") || k.ends_with("Ids"))
            {
                return true;
            }
            map.values().any(|v| mentions_id(v, schemas, seen))
        }
        serde_json::Value::Array(items) => items.iter().any(|v| mentions_id(v, schemas, seen)),
        _ => false,
    }
}

fn error(description: &str) -> Response {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            Content::new(Some(RefOr::Ref(Ref::from_schema_name("ErrorBody")))),
        )
        .build()
}
