//! The config file: where the service is, which application to name, the API token, and the
//! current session bought with it. It holds a credential, so it is written readable by its
//! owner only.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

pub const DEFAULT_URL: &str = "http://127.0.0.1:8080";
pub const DEFAULT_APP: &str = "drive";

/// Sessions are renewed this long before they end, so a call never races the expiry.
const RENEW_BEFORE: TimeDelta = TimeDelta::minutes(1);

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Config {
    pub base_url: String,
    pub app_id: String,
    pub api_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<Session>,
    /// Where `drive events --follow` goes on from (the feed's `nextCursor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events_cursor: Option<String>,
}

/// What `/exchange-token` granted.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    pub gel_token: String,
    pub expires_at: DateTime<Utc>,
    pub user_id: Uuid,
}

impl Session {
    pub fn needs_renewal(&self, now: DateTime<Utc>) -> bool {
        now + RENEW_BEFORE >= self.expires_at
    }
}

/// `$HOME/.config/drive/config.json`, used when neither `--config` nor `DRIVE_CONFIG` is given.
pub fn default_path() -> Result<PathBuf> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or_else(|| anyhow!("HOME is not set: pass --config PATH or set DRIVE_CONFIG"))?;
    Ok(PathBuf::from(home).join(".config/drive/config.json"))
}

pub fn load(path: &Path) -> Result<Config> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(anyhow!(
                "not signed in ({} does not exist): run `drive login --token API_TOKEN`",
                path.display()
            ));
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a drive config file; run `drive login` again",
            path.display()
        )
    })
}

/// Writes the config through a temporary file and a rename, so a crash or a concurrent
/// `drive` process never leaves a half-written file, and the file is never readable by
/// others, even for a moment.
pub fn save(path: &Path, config: &Config) -> Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let temporary = path.with_extension(format!("tmp-{}", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&temporary)?;
        let text = serde_json::to_string_pretty(config)? + "\n";
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    };
    write()
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&temporary);
        })
        .with_context(|| format!("writing {}", path.display()))
}
