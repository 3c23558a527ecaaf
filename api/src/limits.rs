//! Per-address rate limits on the routes anyone can call without an account: sign-in
//! (`/exchange-token`), public links (`GET /p/{id}`) and anonymous `/generate-download-url`.
//! Counted in Redis in one-minute windows, so every API process behind a balancer shares the
//! count. Should Redis not answer, the request goes through (and is logged): a limit that
//! fails closed would let a Redis outage lock everyone out of signing in.

use std::net::IpAddr;

use chrono::Utc;
use drive_core::ConfigError;
use drive_core::config;
use redis::aio::ConnectionManager;

use crate::error::{ApiError, ApiResult};

/// The routes limited, each with its own count.
#[derive(Debug, Clone, Copy)]
pub enum Limited {
    SignIn,
    Anonymous,
}

impl Limited {
    fn name(self) -> &'static str {
        match self {
            Limited::SignIn => "sign-in",
            Limited::Anonymous => "anonymous",
        }
    }
}

#[derive(Clone)]
pub struct RateLimits {
    redis: ConnectionManager,
    /// The queue's name: drives sharing a Redis keep their counts apart.
    prefix: String,
    sign_in_per_minute: u64,
    anonymous_per_minute: u64,
}

impl RateLimits {
    /// Reads `DRIVE_RATE_SIGN_IN_PER_MINUTE` (default 30) and
    /// `DRIVE_RATE_ANONYMOUS_PER_MINUTE` (default 600), per client address.
    pub fn new(redis: ConnectionManager, prefix: &str) -> Result<RateLimits, ConfigError> {
        Ok(RateLimits {
            redis,
            prefix: prefix.to_string(),
            sign_in_per_minute: config::parsed_or("DRIVE_RATE_SIGN_IN_PER_MINUTE", 30)?,
            anonymous_per_minute: config::parsed_or("DRIVE_RATE_ANONYMOUS_PER_MINUTE", 600)?,
        })
    }

    /// Counts one request of `kind` from `address`; 429 `rate_limited` past the minute's limit.
    pub async fn check(&self, kind: Limited, address: IpAddr) -> ApiResult<()> {
        let limit = match kind {
            Limited::SignIn => self.sign_in_per_minute,
            Limited::Anonymous => self.anonymous_per_minute,
        };
        let window = Utc::now().timestamp() / 60;
        let key = format!("{}:rate:{}:{address}:{window}", self.prefix, kind.name());
        let counted: Result<(u64,), redis::RedisError> = redis::pipe()
            .atomic()
            .incr(&key, 1)
            .expire(&key, 120)
            .ignore()
            .query_async(&mut self.redis.clone())
            .await;
        match counted {
            Ok((count,)) if count > limit => Err(ApiError::too_many(
                "rate_limited",
                format!("more than {limit} such requests a minute from your address; try again in a minute"),
            )),
            Ok(_) => Ok(()),
            Err(cause) => {
                tracing::warn!(%cause, "rate limit not counted: Redis did not answer");
                Ok(())
            }
        }
    }
}
