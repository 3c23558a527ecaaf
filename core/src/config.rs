//! Reading configuration from the environment. Each piece of configuration has its own
//! `from_environment()` listing the variables it reads; the README documents them all.

use std::str::FromStr;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("environment variable {0} is required")]
    Missing(&'static str),
    #[error("environment variable {name} is invalid ({value:?}): {reason}")]
    Invalid {
        name: &'static str,
        value: String,
        reason: String,
    },
}

/// `name`'s value refused for `reason`.
pub fn invalid(name: &'static str, reason: String) -> ConfigError {
    ConfigError::Invalid {
        name,
        value: std::env::var(name).unwrap_or_default(),
        reason,
    }
}

/// The value of `name`, or an error naming it when unset or empty.
pub fn required(name: &'static str) -> Result<String, ConfigError> {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => Ok(v),
        _ => Err(ConfigError::Missing(name)),
    }
}

/// The value of `name`, or `default` when unset or empty.
pub fn or(name: &'static str, default: &str) -> String {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => v,
        _ => default.to_string(),
    }
}

/// The value of `name` parsed as `T`, or `default` when unset or empty.
pub fn parsed_or<T>(name: &'static str, default: T) -> Result<T, ConfigError>
where
    T: FromStr,
    T::Err: std::fmt::Display,
{
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => v.parse().map_err(|e: T::Err| ConfigError::Invalid {
            name,
            value: v.clone(),
            reason: e.to_string(),
        }),
        _ => Ok(default),
    }
}

/// `DRIVE_DATABASE_URL`: the PostgreSQL connection string.
pub fn database_url() -> Result<String, ConfigError> {
    required("DRIVE_DATABASE_URL")
}

/// The folder local models are read from: `DRIVE_MODELS`, default `~/.cache/drive/models`
/// (where `scripts/lib.sh`'s `ensure_models` puts them).
pub fn models() -> std::path::PathBuf {
    match std::env::var_os("DRIVE_MODELS") {
        Some(dir) if !dir.is_empty() => dir.into(),
        _ => {
            std::path::PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/drive/models")
        }
    }
}
