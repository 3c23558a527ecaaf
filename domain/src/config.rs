//! Reading configuration from the environment. Each piece of configuration has its own
//! `from_environment()` listing the variables it reads; docs/configuration.md documents them all
//! (`scripts/check-config-doc` holds the two together).

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
    /// Never shows the value: it is a secret.
    #[error(
        "environment variable {name} is too weak: about {bits} bits, and it needs {SECRET_BITS} \
         (it signs upload tokens and derives the key that seals webhook secrets); make one with \
         `openssl rand -hex 32`"
    )]
    WeakSecret { name: &'static str, bits: u32 },
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

/// The value of `name` parsed as `T`, or `None` when unset or empty.
pub fn parsed_optional<T>(name: &'static str) -> Result<Option<T>, ConfigError>
where
    T: FromStr,
    T::Err: std::fmt::Display,
{
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => v.parse().map(Some).map_err(|e: T::Err| ConfigError::Invalid {
            name,
            value: v.clone(),
            reason: e.to_string(),
        }),
        _ => Ok(None),
    }
}

/// The least estimated strength, in bits, `DRIVE_SECRET` is taken with.
pub const SECRET_BITS: u32 = 256;

/// `DRIVE_SECRET`, refused when [`secret_bits`] estimates it under [`SECRET_BITS`]: a guessable
/// secret would let anyone forge upload tokens and open a stolen database's sealed secrets.
pub fn secret() -> Result<String, ConfigError> {
    const NAME: &str = "DRIVE_SECRET";
    let secret = required(NAME)?;
    match secret_bits(&secret) {
        bits if bits >= SECRET_BITS as f64 => Ok(secret),
        bits => Err(ConfigError::WeakSecret {
            name: NAME,
            bits: bits as u32,
        }),
    }
}

/// An estimate of how many bits of chance went into `secret`: its length times the bits of
/// the smallest alphabet it fits (hex digits 16 characters, base64 and base64url 64, any other
/// printable text 95). Two things make a secret count for less than it looks:
/// - a repeated unit (`deadbeef` eight times) counts once: only the shortest period is counted;
/// - few distinct characters: the alphabet is taken as at most the square of the number it
///   uses, so `aaaa…` counts nothing and `abab…` one bit a character. Not the number itself:
///   a random string shows only part of its alphabet (32 random bytes in base64 use about 32
///   of the 64 characters, in hex 15 of the 16 about a quarter of the time), and those must
///   pass.
pub fn secret_bits(secret: &str) -> f64 {
    let chars: Vec<char> = secret.chars().collect();
    // The shortest unit the whole string repeats, at least twice over; a string that repeats
    // none is its own unit (its end matching its start, say, is no repetition).
    let period = (1..=chars.len() / 2)
        .find(|&p| chars.iter().skip(p).zip(&chars).all(|(a, b)| a == b))
        .unwrap_or(chars.len());
    let alphabet: f64 = if chars.iter().all(char::is_ascii_hexdigit) {
        16.0
    } else if chars
        .iter()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '-' | '_'))
    {
        64.0
    } else {
        95.0
    };
    let distinct = chars.iter().collect::<std::collections::HashSet<_>>().len() as f64;
    period as f64 * alphabet.min(distinct * distinct).log2()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_measured_by_what_could_have_been_chosen() {
        // `openssl rand -hex 32`, one without a `5`: 256 bits all the same.
        let hex = "efda73dae20112fd4236ffbd21aec12811211ee98890f4c468b27e82d6d3b627";
        assert_eq!(secret_bits(hex), 256.0);
        // Its last character its first, as one in sixteen are: no repeated unit.
        let ends_as_it_starts = "b5ad5c1e8a0f6e2d9c3b7a41f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2eb";
        assert_eq!(secret_bits(ends_as_it_starts), 256.0);
        // `openssl rand -base64 32`.
        assert!(secret_bits("56FABOy2v+LlbbI7Qxu+EBoWkWz2DqFKreeeGdrX4v0=") >= 256.0);
        assert!(
            secret_bits(&"deadbeef".repeat(8)) < 256.0,
            "a repeated unit counts once"
        );
        assert_eq!(secret_bits(&"a".repeat(64)), 0.0);
        assert!(secret_bits("drive-test-secret-for-upload-tokens") < 256.0);
        assert!(secret_bits(&"ab".repeat(100)) < 256.0);
    }
}
