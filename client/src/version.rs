//! The daily version check: once a day the CLI (beside a command) and the tool server ask the
//! drive (`GET /version`) for the newest version of themselves and, when it is newer than this
//! one, say so politely on stderr. It never holds anything up: the check runs beside the work,
//! and the CLI drops what has not answered a moment after its command ends (and tries with the
//! next). The day's check is noted in a file beside the config (`….version-checked`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::Value;
use tokio::task::JoinHandle;

/// The clients' version: one workspace, one version.
const THIS: &str = env!("CARGO_PKG_VERSION");
const DAY: TimeDelta = TimeDelta::days(1);

pub struct Check(JoinHandle<Option<String>>);

fn marker(config_path: &Path) -> PathBuf {
    let mut name = config_path.as_os_str().to_owned();
    name.push(".version-checked");
    PathBuf::from(name)
}

/// Which client asks: its name, and its key in the `clients` of `/version`.
#[derive(Debug, Clone, Copy)]
pub enum Program {
    Cli,
    ToolServer,
}

impl Program {
    fn name(self) -> &'static str {
        match self {
            Program::Cli => "drive",
            Program::ToolServer => "drive-mcp",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Program::Cli => "drive",
            Program::ToolServer => "driveMcp",
        }
    }
}

/// Starts the day's check, unless the marker beside `config_path` says one was made in the
/// last day. Without a config file (the tool server over HTTP) it always starts; such a
/// process checks once a day itself.
pub fn start(program: Program, config_path: Option<&Path>, base_url: &str) -> Option<Check> {
    let marker = config_path.map(marker);
    let last: Option<DateTime<Utc>> = marker
        .as_ref()
        .and_then(|marker| std::fs::read_to_string(marker).ok())
        .and_then(|text| text.trim().parse().ok());
    if last.is_some_and(|at| Utc::now() - at < DAY) {
        return None;
    }
    let url = format!("{base_url}/version");
    Some(Check(tokio::spawn(async move {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .ok()?;
        let versions: Value = http.get(&url).send().await.ok()?.json().await.ok()?;
        if let Some(marker) = marker {
            let _ = std::fs::write(&marker, Utc::now().to_rfc3339());
        }
        let newest = versions["clients"][program.key()].as_str()?;
        let name = program.name();
        newer(newest, THIS).then(|| {
            format!("note: {name} {newest} is available (this is {THIS}); install it when convenient.")
        })
    })))
}

impl Check {
    /// Says what the check found, if it has answered within `patience`.
    pub async fn finish(self, patience: Duration) {
        if let Ok(Ok(Some(note))) = tokio::time::timeout(patience, self.0).await {
            eprintln!("{note}");
        }
    }
}

/// Whether version `a` is newer than `b` (dotted numbers; anything else is never newer).
fn newer(a: &str, b: &str) -> bool {
    let parts = |v: &str| -> Option<Vec<u64>> { v.split('.').map(|p| p.parse().ok()).collect() };
    matches!((parts(a), parts(b)), (Some(a), Some(b)) if a > b)
}

#[cfg(test)]
mod tests {
    use super::newer;

    #[test]
    fn versions_compare_by_their_numbers() {
        assert!(newer("0.10.0", "0.9.9"));
        assert!(newer("1.0.0", "0.1.0"));
        assert!(!newer("0.1.0", "0.1.0"));
        assert!(!newer("0.0.9", "0.1.0"));
        assert!(!newer("banana", "0.1.0"));
    }
}
