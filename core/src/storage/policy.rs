//! The presigned POST form (AWS Signature Version 4 POST policy), written here because
//! aws-sdk-s3 has none.

use std::collections::BTreeMap;

use base64::Engine;
use chrono::{DateTime, TimeDelta, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::{Bucket, Storage};

/// The headers a presigned POST pins; the store refuses an upload that differs in any.
#[derive(Debug, Clone)]
pub struct PostRules {
    pub content_length: i64,
    pub content_type: String,
    pub content_disposition: String,
    pub cache_control: String,
}

#[derive(Debug, Clone)]
pub struct PostForm {
    pub url: String,
    pub fields: BTreeMap<String, String>,
}

impl Storage {
    /// A presigned POST form for one object (AWS Signature Version 4 POST policy). The
    /// policy pins the key, the exact length and the three headers, so the store refuses a
    /// body one byte off or sent under another type.
    pub fn presign_post(
        &self,
        bucket: Bucket,
        key: &str,
        rules: &PostRules,
        expires_in: TimeDelta,
        now: DateTime<Utc>,
    ) -> PostForm {
        let bucket_name = self.bucket_name(bucket);
        let day = now.format("%Y%m%d").to_string();
        let amz_date = now.format("%Y%m%dT%H%M%SZ").to_string();
        let credential = format!(
            "{}/{day}/{}/s3/aws4_request",
            self.config.access_key_id, self.config.region
        );
        let policy = serde_json::json!({
            "expiration": (now + expires_in).format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
            "conditions": [
                {"bucket": bucket_name},
                {"key": key},
                {"Content-Type": rules.content_type},
                {"Content-Disposition": rules.content_disposition},
                {"Cache-Control": rules.cache_control},
                ["content-length-range", rules.content_length, rules.content_length],
                {"x-amz-algorithm": "AWS4-HMAC-SHA256"},
                {"x-amz-credential": credential},
                {"x-amz-date": amz_date},
            ],
        });
        let policy = base64::engine::general_purpose::STANDARD.encode(policy.to_string());
        let signature = hex::encode(hmac(&self.signing_key(&day), policy.as_bytes()));
        let fields = [
            ("key", key),
            ("Content-Type", &rules.content_type),
            ("Content-Disposition", &rules.content_disposition),
            ("Cache-Control", &rules.cache_control),
            ("x-amz-algorithm", "AWS4-HMAC-SHA256"),
            ("x-amz-credential", &credential),
            ("x-amz-date", &amz_date),
            ("policy", &policy),
            ("x-amz-signature", &signature),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        PostForm {
            url: format!("{}/{bucket_name}", self.config.endpoint),
            fields,
        }
    }

    /// SigV4's derived key: HMAC chained over the day, region, service and terminator.
    fn signing_key(&self, day: &str) -> Vec<u8> {
        let secret = format!("AWS4{}", self.config.secret_access_key);
        [day, &self.config.region, "s3", "aws4_request"]
            .iter()
            .fold(secret.into_bytes(), |key, part| hmac(&key, part.as_bytes()))
    }
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}
