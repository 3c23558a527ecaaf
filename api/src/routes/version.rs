//! `GET /version`: the interface's version and the newest client versions this drive knows,
//! for clients that check once a day whether a newer one exists (the spec's Versioning). Asked
//! without credentials: it says nothing about anyone.

use axum::extract::State;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::API_VERSION;
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(version))
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Versions {
    /// The interface version, a date (`2026.09.28`).
    api_version: &'static str,
    /// The newest version of each client: `drive` (the command-line client) and `driveMcp`
    /// (the tool server).
    clients: Clients,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Clients {
    drive: String,
    drive_mcp: String,
}

/// The interface's version and the newest client versions (no credentials needed).
#[utoipa::path(get, path = "/version", tag = "version", security(()),
    responses((status = 200, body = Versions)))]
async fn version(State(state): State<AppState>) -> axum::Json<Versions> {
    let newest = &state.settings.client_version;
    axum::Json(Versions {
        api_version: API_VERSION,
        clients: Clients {
            drive: newest.clone(),
            drive_mcp: newest.clone(),
        },
    })
}
