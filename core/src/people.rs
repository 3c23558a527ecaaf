//! People signing in with what they know: a password (argon2id) and, if they turned it on, the
//! code of an authenticator app (TOTP, its key sealed to the account). Wrong guesses are
//! limited per account here (per address, the API's rate limits count them): past
//! `DRIVE_SIGN_IN_GUESSES` in a row the account takes no password for
//! `DRIVE_SIGN_IN_LOCK_SECONDS`, right or wrong, so guessing learns nothing while it waits.

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use chrono::{DateTime, TimeDelta, Utc};
use sqlx::PgPool;

use crate::config::{self, ConfigError};
use crate::db::sign_ins::{self, Credentials};
use crate::id::UserId;
use crate::sealed::Sealer;
use crate::totp;

/// The shortest password taken, in characters.
pub const SHORTEST_PASSWORD: usize = 10;
/// The longest, in bytes: argon2 takes any length, but a megabyte a guess is nobody's password.
pub const LONGEST_PASSWORD: usize = 1024;

/// How many wrong guesses in a row lock an account, and for how long.
#[derive(Debug, Clone, Copy)]
pub struct Guessing {
    pub most: i32,
    pub lock: TimeDelta,
}

impl Guessing {
    /// Reads `DRIVE_SIGN_IN_GUESSES` (default 5) and `DRIVE_SIGN_IN_LOCK_SECONDS` (default 900).
    pub fn from_environment() -> Result<Guessing, ConfigError> {
        Ok(Guessing {
            most: config::parsed_or("DRIVE_SIGN_IN_GUESSES", 5)?,
            lock: TimeDelta::seconds(config::parsed_or("DRIVE_SIGN_IN_LOCK_SECONDS", 900)?),
        })
    }
}

/// Why a sign-in was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No account has that handle, it has no password, or the password is not its.
    WrongPassword,
    /// The password is right and the account asks for its authenticator's code too.
    CodeNeeded,
    /// The code is not the authenticator's now (or was used already).
    WrongCode,
    /// Too many wrong guesses: nothing is taken until then.
    Locked(DateTime<Utc>),
}

/// Whether a password may be set: long enough, not too long.
pub fn check_new_password(password: &str) -> Result<(), String> {
    if password.chars().count() < SHORTEST_PASSWORD {
        return Err(format!("a password has {SHORTEST_PASSWORD} characters at least"));
    }
    if password.len() > LONGEST_PASSWORD {
        return Err(format!("a password has {LONGEST_PASSWORD} bytes at most"));
    }
    Ok(())
}

/// The argon2id hash of a password (OWASP's parameters: 19 MiB, two passes), off the runtime's
/// threads: it takes tens of milliseconds on purpose.
pub async fn hash(password: &str) -> String {
    let password = password.to_string();
    tokio::task::spawn_blocking(move || {
        let salt = SaltString::generate(&mut argon2::password_hash::rand_core::OsRng);
        Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .expect("argon2id hashes any password within LONGEST_PASSWORD")
            .to_string()
    })
    .await
    .expect("hashing does not panic")
}

/// Whether `password` is the one `stored` was hashed from. With nothing stored (no such
/// account, or no password yet) a hash is still computed, so the answer takes as long. A guess
/// longer than any password can be is hashed only as far as one can be (a body of megabytes
/// costs no more than a password), and is wrong.
async fn verify(password: &str, stored: Option<&str>) -> bool {
    let too_long = password.len() > LONGEST_PASSWORD;
    let password = password[..password.floor_char_boundary(LONGEST_PASSWORD)].to_string();
    let stored = stored.map(str::to_string);
    tokio::task::spawn_blocking(move || match stored.as_deref().map(PasswordHash::new) {
        Some(Ok(parsed)) => {
            Argon2::default()
                .verify_password(password.as_bytes(), &parsed)
                .is_ok()
                && !too_long
        }
        _ => {
            let salt = SaltString::generate(&mut argon2::password_hash::rand_core::OsRng);
            let _ = Argon2::default().hash_password(password.as_bytes(), &salt);
            false
        }
    })
    .await
    .expect("verifying does not panic")
}

/// Signs in by handle and password (and code, when the account has a second factor).
pub async fn sign_in(
    pool: &PgPool,
    sealer: &Sealer,
    guessing: Guessing,
    handle: &str,
    password: &str,
    code: Option<&str>,
) -> Result<Result<UserId, Refusal>, sqlx::Error> {
    let found = sign_ins::credentials_by_handle(pool, handle).await?;
    if let Some(until) = found
        .as_ref()
        .and_then(|c| c.guesses_locked_until)
        .filter(|u| *u > Utc::now())
    {
        return Ok(Err(Refusal::Locked(until)));
    }
    let right = verify(password, found.as_ref().and_then(|c| c.password_hash.as_deref())).await;
    let Some(credentials) = found else {
        return Ok(Err(Refusal::WrongPassword));
    };
    if !right {
        return wrong(pool, guessing, &credentials, Refusal::WrongPassword).await;
    }
    if let Some(sealed) = &credentials.totp_sealed {
        let Some(code) = code.filter(|c| !c.trim().is_empty()) else {
            return Ok(Err(Refusal::CodeNeeded));
        };
        let key = sealer.open(sealed, &totp_binding(credentials.user_id));
        let step = key.ok().and_then(|key| {
            totp::matching_step(
                &key,
                code,
                totp::step_of(Utc::now().timestamp()),
                credentials.totp_last_step,
            )
        });
        let taken = match step {
            Some(step) => sign_ins::take_totp_step(pool, credentials.user_id, step).await?,
            None => false,
        };
        if !taken {
            return wrong(pool, guessing, &credentials, Refusal::WrongCode).await;
        }
    }
    sign_ins::clear_wrong_guesses(pool, credentials.user_id).await?;
    Ok(Ok(credentials.user_id))
}

/// Counts a wrong guess: the refusal, or the lock it brought on.
async fn wrong(
    pool: &PgPool,
    guessing: Guessing,
    credentials: &Credentials,
    refusal: Refusal,
) -> Result<Result<UserId, Refusal>, sqlx::Error> {
    let locked = sign_ins::count_wrong_guess(pool, credentials.user_id, guessing.most, guessing.lock).await?;
    Ok(Err(locked.map_or(refusal, Refusal::Locked)))
}

/// Whether `password` is the account's own (before changing it, or its second factor), counted
/// as a guess when it is not.
pub async fn confirm_password(
    pool: &PgPool,
    guessing: Guessing,
    user_id: UserId,
    password: &str,
) -> Result<Result<(), Refusal>, sqlx::Error> {
    let credentials = sign_ins::credentials_of(pool, user_id).await?;
    if let Some(until) = credentials.guesses_locked_until.filter(|u| *u > Utc::now()) {
        return Ok(Err(Refusal::Locked(until)));
    }
    if verify(password, credentials.password_hash.as_deref()).await {
        return Ok(Ok(()));
    }
    Ok(wrong(pool, guessing, &credentials, Refusal::WrongPassword)
        .await?
        .map(|_| ()))
}

/// A new TOTP key for the account, kept pending until a code of it is confirmed: the key (for
/// typing in) and the `otpauth://` link.
pub async fn begin_totp(
    pool: &PgPool,
    sealer: &Sealer,
    user_id: UserId,
    issuer: &str,
) -> Result<(String, String), sqlx::Error> {
    let credentials = sign_ins::credentials_of(pool, user_id).await?;
    let key = totp::new_key();
    sign_ins::begin_totp(pool, user_id, &sealer.seal(&key, &totp_binding(user_id))).await?;
    Ok((totp::base32(&key), totp::link(&key, issuer, &credentials.handle)))
}

/// Turns the pending key on when `code` is its code now; false when it is not (or none is
/// pending).
pub async fn confirm_totp(
    pool: &PgPool,
    sealer: &Sealer,
    user_id: UserId,
    code: &str,
) -> Result<bool, sqlx::Error> {
    let credentials = sign_ins::credentials_of(pool, user_id).await?;
    let step = credentials
        .totp_pending
        .and_then(|sealed| sealer.open(&sealed, &totp_binding(user_id)).ok())
        .and_then(|key| totp::matching_step(&key, code, totp::step_of(Utc::now().timestamp()), None));
    let Some(step) = step else {
        return Ok(false);
    };
    sign_ins::confirm_totp(pool, user_id, step).await?;
    Ok(true)
}

/// What a TOTP key is sealed to: its account, so a key copied to another row does not open.
fn totp_binding(user_id: UserId) -> Vec<u8> {
    format!("totp:{user_id}").into_bytes()
}
