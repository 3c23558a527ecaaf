//! Per-address rate limits on the routes anyone can call without an account: sign-in
//! (`/exchange-token`), public links (`GET /p/{id}`) and anonymous `/generate-download-url`.
//! Counted per client address ([`crate::client::ClientAddress`]: behind trusted proxies, the
//! address they forwarded), an IPv6 client by its /64. Counted in Redis in one-minute windows,
//! so every API process behind a balancer shares the count.
//!
//! Should Redis not answer (within [`REDIS_WAIT`]), each API process counts on its own, in
//! memory, in the same windows: the limits still hold, per process, rather than letting
//! everything through (a Redis outage would open sign-in to guessing) or refusing everything
//! (it would lock everyone out). The switch both ways is logged.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::Utc;
use drive_core::ConfigError;
use drive_core::config;
use redis::aio::ConnectionManager;

use crate::client;
use crate::error::{ApiError, ApiResult};

/// How long a count may wait for Redis. It answers in well under a millisecond; past this it is
/// taken as away, rather than holding every limited request through its reconnection attempts.
const REDIS_WAIT: Duration = Duration::from_millis(250);

/// The most counts a process keeps while Redis is away, so that a flood of addresses cannot
/// grow its memory without bound; past it, new addresses go uncounted until the next window.
const MOST_KEPT: usize = 100_000;

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
    /// This process's counts while Redis is away.
    fallback: Arc<Mutex<Fallback>>,
    /// Whether the last count went to the fallback: the switches are logged, not every count.
    redis_away: Arc<AtomicBool>,
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
            fallback: Arc::default(),
            redis_away: Arc::default(),
        })
    }

    /// Counts one request of `kind` from `address`; 429 `rate_limited` past the minute's limit.
    pub async fn check(&self, kind: Limited, address: IpAddr) -> ApiResult<()> {
        let limit = match kind {
            Limited::SignIn => self.sign_in_per_minute,
            Limited::Anonymous => self.anonymous_per_minute,
        };
        let window = Utc::now().timestamp() / 60;
        let key = format!(
            "{}:rate:{}:{}:{window}",
            self.prefix,
            kind.name(),
            bucket(address)
        );
        let count = match self.count_in_redis(&key).await {
            Ok(count) => {
                if self.redis_away.swap(false, Ordering::Relaxed) {
                    tracing::info!("Redis answers again: rate limits are shared by every process");
                }
                count
            }
            Err(cause) => {
                if !self.redis_away.swap(true, Ordering::Relaxed) {
                    tracing::warn!(%cause, "Redis did not answer: rate limits are counted in this process until it does");
                }
                self.fallback.lock().unwrap().count(window, key)
            }
        };
        if count > limit {
            return Err(ApiError::too_many(
                "rate_limited",
                format!("more than {limit} such requests a minute from your address; try again in a minute"),
            ));
        }
        Ok(())
    }

    /// Counts one at `key` in Redis (kept two minutes, past its window); answers the count.
    async fn count_in_redis(&self, key: &str) -> Result<u64, String> {
        let mut pipe = redis::pipe();
        pipe.atomic().incr(key, 1).expire(key, 120).ignore();
        let mut redis = self.redis.clone();
        let counted = pipe.query_async::<(u64,)>(&mut redis);
        match tokio::time::timeout(REDIS_WAIT, counted).await {
            Ok(Ok((count,))) => Ok(count),
            Ok(Err(cause)) => Err(cause.to_string()),
            Err(_) => Err(format!("no answer within {REDIS_WAIT:?}")),
        }
    }
}

/// What one count is kept for: an IPv4 address, or an IPv6 address's /64. One subscriber, or
/// one host, commonly holds a whole /64 and could take a fresh address for every request.
fn bucket(address: IpAddr) -> String {
    match address.to_canonical() {
        v4 @ IpAddr::V4(_) => v4.to_string(),
        v6 @ IpAddr::V6(_) => format!("{}/64", client::masked(v6, 64)),
    }
}

/// The counts of the current window, kept in this process while Redis is away.
#[derive(Default)]
struct Fallback {
    window: i64,
    counts: HashMap<String, u64>,
}

impl Fallback {
    /// Counts one at `key` in `window` (forgetting the counts of earlier windows); answers the
    /// count, or 0 when `key` is new and [`MOST_KEPT`] counts are kept already.
    fn count(&mut self, window: i64, key: String) -> u64 {
        if window != self.window {
            self.window = window;
            self.counts.clear();
        }
        if self.counts.len() >= MOST_KEPT && !self.counts.contains_key(&key) {
            return 0;
        }
        let count = self.counts.entry(key).or_default();
        *count += 1;
        *count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn ipv6_addresses_are_counted_by_their_64() {
        assert_eq!(bucket(ip("2001:db8:1:2:aaaa::1")), "2001:db8:1:2::/64");
        assert_eq!(
            bucket(ip("2001:db8:1:2:ffff:ffff:ffff:ffff")),
            "2001:db8:1:2::/64"
        );
        assert_eq!(bucket(ip("2001:db8:1:3::1")), "2001:db8:1:3::/64");
        assert_eq!(bucket(ip("192.0.2.7")), "192.0.2.7");
        assert_eq!(bucket(ip("::ffff:192.0.2.7")), "192.0.2.7");
    }

    #[test]
    fn the_fallback_counts_per_key_and_window() {
        let mut fallback = Fallback::default();
        assert_eq!(fallback.count(7, "a".into()), 1);
        assert_eq!(fallback.count(7, "a".into()), 2);
        assert_eq!(fallback.count(7, "b".into()), 1);
        // A new window starts every count again.
        assert_eq!(fallback.count(8, "a".into()), 1);
        assert_eq!(fallback.counts.len(), 1);
    }

    #[test]
    fn the_fallback_keeps_a_bounded_number_of_counts() {
        let mut fallback = Fallback::default();
        for n in 0..MOST_KEPT {
            fallback.count(1, n.to_string());
        }
        assert_eq!(fallback.count(1, "one more".into()), 0);
        assert_eq!(fallback.count(1, "0".into()), 2, "those kept still count");
        assert_eq!(fallback.counts.len(), MOST_KEPT);
    }
}
