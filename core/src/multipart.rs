//! Multipart upload planning and upload tokens.
//!
//! A plan splits a file into 64 MiB parts, growing the part size (in whole MiB) only when a
//! file would otherwise need more than 10,000 parts. The token handed to clients is the
//! upload's row id and expiry signed with the server secret, so a forged or stale token is
//! refused before any database or storage call.

use crate::id::UploadId;
use crate::storage::StoredPart;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, TimeDelta, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;

pub const MIB: i64 = 1024 * 1024;
pub const DEFAULT_PART_SIZE: i64 = 64 * MIB;
pub const MAX_PARTS: i64 = 10_000;
/// How long a token stays valid, and how long an upload may go without a new part.
pub const UPLOAD_LIFETIME: TimeDelta = TimeDelta::days(7);
/// How long signed part URLs work.
pub const PART_URL_LIFETIME: TimeDelta = TimeDelta::days(1);
/// How many part URLs the create response carries.
pub const SIGNED_PARTS_IN_CREATE: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartPlan {
    pub file_size: i64,
    pub part_size: i64,
    pub part_count: i64,
}

impl PartPlan {
    /// The plan for a file of `file_size` bytes (at least one).
    pub fn for_size(file_size: i64) -> PartPlan {
        let part_size = if file_size <= DEFAULT_PART_SIZE * MAX_PARTS {
            DEFAULT_PART_SIZE
        } else {
            div_ceil(div_ceil(file_size, MAX_PARTS), MIB) * MIB
        };
        PartPlan {
            file_size,
            part_size,
            part_count: div_ceil(file_size, part_size).max(1),
        }
    }

    /// The exact length of part `number` (1-based), or `None` when the plan has no such part.
    pub fn part_len(&self, number: i64) -> Option<i64> {
        if number < 1 || number > self.part_count {
            return None;
        }
        if number < self.part_count {
            Some(self.part_size)
        } else {
            Some(self.file_size - self.part_size * (self.part_count - 1))
        }
    }

    /// Whether parts already in storage belong to this plan: every stored part is one the
    /// plan has, at exactly its planned length.
    pub fn fits(&self, stored: &[StoredPart]) -> bool {
        stored
            .iter()
            .all(|p| self.part_len(p.part_number.into()) == Some(p.size))
    }
}

/// Division rounding up, for positive sizes.
fn div_ceil(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TokenError {
    #[error("the upload token is not one this service issued")]
    Invalid,
    #[error("the upload token has expired")]
    Expired,
}

/// Signs and checks upload tokens with the server secret.
#[derive(Clone)]
pub struct UploadTokens {
    secret: Vec<u8>,
}

impl UploadTokens {
    pub fn new(secret: &str) -> UploadTokens {
        UploadTokens {
            secret: secret.as_bytes().to_vec(),
        }
    }

    fn mac(&self, payload: &str) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.secret).expect("HMAC takes any key length");
        mac.update(payload.as_bytes());
        mac
    }

    pub fn issue(&self, upload: UploadId, expires_at: DateTime<Utc>) -> String {
        let payload = format!("{upload}.{}", expires_at.timestamp());
        let signature = URL_SAFE_NO_PAD.encode(self.mac(&payload).finalize().into_bytes());
        format!("{payload}.{signature}")
    }

    /// The upload a token names, when the signature holds and it has not expired.
    pub fn verify(&self, token: &str, now: DateTime<Utc>) -> Result<UploadId, TokenError> {
        let (payload, signature) = token.rsplit_once('.').ok_or(TokenError::Invalid)?;
        let signature = URL_SAFE_NO_PAD
            .decode(signature)
            .map_err(|_| TokenError::Invalid)?;
        self.mac(payload)
            .verify_slice(&signature)
            .map_err(|_| TokenError::Invalid)?;
        let (upload, expires) = payload.split_once('.').ok_or(TokenError::Invalid)?;
        let upload: UploadId = upload.parse().map_err(|_| TokenError::Invalid)?;
        let expires: i64 = expires.parse().map_err(|_| TokenError::Invalid)?;
        if now.timestamp() >= expires {
            return Err(TokenError::Expired);
        }
        Ok(upload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_64_mib_until_ten_thousand_would_not_do() {
        let small = PartPlan::for_size(130 * MIB);
        assert_eq!((small.part_size, small.part_count), (64 * MIB, 3));
        assert_eq!(small.part_len(3), Some(2 * MIB));
        assert_eq!(small.part_len(4), None);

        let limit = PartPlan::for_size(DEFAULT_PART_SIZE * MAX_PARTS);
        assert_eq!((limit.part_size, limit.part_count), (64 * MIB, MAX_PARTS));

        let two_tb = PartPlan::for_size(crate::file::MAX_FILE_SIZE);
        assert!(two_tb.part_size > 64 * MIB && two_tb.part_size % MIB == 0);
        assert!(two_tb.part_count <= MAX_PARTS);
        assert_eq!(
            two_tb.part_size * (two_tb.part_count - 1) + two_tb.part_len(two_tb.part_count).unwrap(),
            two_tb.file_size
        );
    }

    #[test]
    fn tokens_refuse_tampering_and_age() {
        let tokens = UploadTokens::new("secret");
        let now = Utc::now();
        let id = UploadId::random();
        let token = tokens.issue(id, now + UPLOAD_LIFETIME);
        assert_eq!(tokens.verify(&token, now), Ok(id));
        assert_eq!(
            tokens.verify(&token, now + UPLOAD_LIFETIME),
            Err(TokenError::Expired)
        );
        let forged = token.replacen(&id.to_string(), &UploadId::random().to_string(), 1);
        assert_eq!(tokens.verify(&forged, now), Err(TokenError::Invalid));
        assert_eq!(
            UploadTokens::new("other").verify(&token, now),
            Err(TokenError::Invalid)
        );
    }
}
