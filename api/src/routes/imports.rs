//! `/import-from-url`: the drive fetches a link into the caller's drive. The link is checked
//! here (http or https, and an address or a name resolving to one on the public internet) so a
//! refused link is a 400 at once; the fetch itself is an `import` job in the farm, which checks
//! every address again when it connects and follows redirects through the same checks
//! (`drive-fetch`), streams the bytes into the store in parts, and shows its progress and what
//! it made in `/select-file-jobs` and the `job` event like any job.

use axum::extract::State;
use drive_core::db::users;
use drive_core::file::{FileName, check_name};
use drive_core::folder::FolderPath;
use drive_core::id::FolderId;
use drive_core::input::Line;
use drive_core::job::{Import, JobSpec};
use drive_fetch::{FetchError, SystemResolver, Url};
use serde::Deserialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Json;
use crate::routes::jobs::{self, CreatedJob, JobRequest};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(import_from_url))
}

/// The longest link taken.
const MAX_URL: usize = 2048;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportInput {
    /// An http or https link to a file on the public internet, at most 2048 characters.
    url: Line<1, { MAX_URL }>,
    /// The new file's name; default the link's last path segment.
    file_name: Option<FileName>,
    /// Where the file lands, made on the way; default the top of the drive.
    folder: Option<FolderPath>,
    /// One of the caller's folders; or `folder`.
    folder_id: Option<FolderId>,
}

/// Bring in a file from a link, fetched by the service (an `import` job).
#[utoipa::path(post, path = "/import-from-url", tag = "imports", request_body = ImportInput,
    responses((status = 200, body = CreatedJob)))]
async fn import_from_url(
    State(state): State<AppState>,
    caller: Caller,
    Json(input): Json<ImportInput>,
) -> ApiResult<axum::Json<CreatedJob>> {
    let plan = caller.plan()?;
    let url = drive_fetch::check_link(&input.url, &SystemResolver, &state.settings.fetch_allowances)
        .await
        .map_err(|e| match e {
            FetchError::Refused(why) => ApiError::bad_request("url_refused", "url", why),
            FetchError::Failed(why) => ApiError::bad_request("url_refused", "url", why),
        })?;
    let name = match input.file_name {
        Some(name) => name.as_str().to_string(),
        None => name_of(&url),
    };
    let limit = state.settings.quotas.for_plan(plan);
    let used = users::used_bytes(&state.db, caller.user_id).await?;
    if used >= limit {
        return Err(ApiError::bad_request(
            "storage_limit_reached",
            "url",
            format!("the storage limit is reached: {used} of {limit} bytes used"),
        ));
    }
    let request = JobRequest {
        spec: JobSpec::Import(Import {
            url: url.to_string(),
            name,
        }),
        inputs: Vec::new(),
        source_folder_id: None,
        folder: input.folder,
        folder_id: input.folder_id,
        idempotency_key: None,
        notify: None,
    };
    jobs::submit(&state, &caller, request, false)
        .await
        .map(axum::Json)
}

/// The link's last path segment, decoded, when it is a name the drive takes; else `download`.
fn name_of(url: &Url) -> String {
    url.path_segments()
        .and_then(|mut segments| segments.next_back())
        .map(|last| {
            percent_encoding::percent_decode_str(last)
                .decode_utf8_lossy()
                .into_owned()
        })
        .filter(|name| {
            check_name(name).is_ok() && !name.chars().any(|c| drive_core::input::refused(c, false))
        })
        .unwrap_or_else(|| "download".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_links_name_is_its_last_segment_decoded_or_download() {
        let name = |link: &str| name_of(&Url::parse(link).unwrap());
        assert_eq!(
            name("https://example.com/files/My%20Report.pdf?x=1"),
            "My Report.pdf"
        );
        assert_eq!(name("https://example.com/"), "download");
        assert_eq!(name("https://example.com/a/%2E%2E"), "download");
        assert_eq!(name("https://example.com/a/x%2Fy"), "download");
        assert_eq!(name("https://example.com/a%00b"), "download");
    }
}
