//! The daily version check: once a day, beside a command, the CLI asks the drive (`GET
//! /version`) for the newest `drive` version and, when it is newer than this one, says so
//! politely on stderr. It never holds a command up: the check runs while the command does, and
//! what has not answered a moment after the command ends is dropped (and tried with the next).
//! The day's check is noted in a file beside the config (`….version-checked`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::config::Config;

const THIS: &str = env!("CARGO_PKG_VERSION");
const DAY: TimeDelta = TimeDelta::days(1);

pub struct Check(JoinHandle<Option<String>>);

fn marker(config_path: &Path) -> PathBuf {
    let mut name = config_path.as_os_str().to_owned();
    name.push(".version-checked");
    PathBuf::from(name)
}

/// Starts the day's check, unless one was made in the last day.
pub fn start(config_path: &Path, config: &Config) -> Option<Check> {
    let marker = marker(config_path);
    let last: Option<DateTime<Utc>> = std::fs::read_to_string(&marker)
        .ok()
        .and_then(|text| text.trim().parse().ok());
    if last.is_some_and(|at| Utc::now() - at < DAY) {
        return None;
    }
    let url = format!("{}/version", config.base_url);
    Some(Check(tokio::spawn(async move {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .ok()?;
        let versions: Value = http.get(&url).send().await.ok()?.json().await.ok()?;
        let _ = std::fs::write(&marker, Utc::now().to_rfc3339());
        let newest = versions["clients"]["drive"].as_str()?;
        newer(newest, THIS).then(|| {
            format!("note: drive {newest} is available (this is {THIS}); install it when convenient.")
        })
    })))
}

/// Says what the check found, if it has answered within a moment of the command's end.
pub async fn finish(check: Option<Check>) {
    let Some(Check(task)) = check else { return };
    if let Ok(Ok(Some(note))) = tokio::time::timeout(Duration::from_millis(300), task).await {
        eprintln!("{note}");
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
