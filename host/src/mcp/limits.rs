//! Rate limits on `tools/call`: token buckets (GCRA, the `governor` crate), one
//! per principal and one per tool, from `[host.rate_limits]`.
//!
//! The check is made once per call, before any instance is created: on HTTP by
//! the calls guard of [`super::http`], after the token guard (so a request
//! without a valid token never reaches a bucket and cannot spend another
//! principal's), and on stdio by the handler. Every bucket is made at start for a
//! name of the configuration: the principals of the token table (and
//! [`LOCAL_PRINCIPAL`]) and the tools `[host.rate_limits.tools]` names. A request
//! cannot make one: a tool name that no rule names has no tool bucket, so the
//! memory is bounded by the configuration.
//!
//! The principal's bucket is checked first: a call it refuses does not spend the
//! tool's bucket, which every caller of the tool shares.

use std::collections::HashMap;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, DefaultKeyedRateLimiter, Quota, RateLimiter};
use serde_json::json;

use super::Server;
use super::prometheus::UNKNOWN_TOOL;
use crate::config::{LOCAL_PRINCIPAL, Rate, RateLimits};

/// The JSON-RPC error code of a call refused by a rate limit (in the
/// implementation-defined server-error range); its `data` carries the wait.
pub const RATE_LIMITED: i32 = -32029;

/// The buckets, made once at start.
#[derive(Default)]
pub struct Limiter {
    /// By principal; the caller without one is [`LOCAL_PRINCIPAL`].
    principals: HashMap<String, DefaultDirectRateLimiter>,
    /// The default bucket of each OAuth subject the configuration does not
    /// name ([`Limiter::with_subjects`]): keyed by the subject, which only a
    /// token signed by the issuer can choose.
    subjects: Option<DefaultKeyedRateLimiter<String>>,
    tools: HashMap<String, DefaultDirectRateLimiter>,
    clock: DefaultClock,
}

/// The `principal` label of a refusal for an OAuth subject the configuration
/// does not name.
pub const OAUTH_SUBJECT: &str = "(oauth subject)";

/// Subjects kept in the keyed buckets before those whose buckets are full
/// again are dropped.
const SUBJECTS_KEPT: usize = 10_000;

/// A refused call: which bucket, and how long until it would pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// `"principal"` or `"tool"`.
    pub bucket: &'static str,
    pub wait: Duration,
}

impl Refusal {
    /// The wait in whole seconds, rounded up, at least 1 (`Retry-After`).
    pub fn retry_after_secs(&self) -> u64 {
        let secs = self.wait.as_secs() + u64::from(self.wait.subsec_nanos() > 0);
        secs.max(1)
    }

    /// The wait in milliseconds, rounded up, at least 1.
    pub fn wait_ms(&self) -> u64 {
        let ms = self.wait.as_millis() as u64
            + u64::from(!self.wait.subsec_nanos().is_multiple_of(1_000_000));
        ms.max(1)
    }

    /// The JSON-RPC error's message and data.
    pub fn message(&self) -> String {
        format!(
            "Rate limited: this {} has no calls left; retry in {} ms",
            self.bucket,
            self.wait_ms()
        )
    }

    pub fn data(&self) -> serde_json::Value {
        json!({
            "reason": "rate_limited",
            "bucket": self.bucket,
            "retryAfterMs": self.wait_ms(),
        })
    }
}

fn quota(rate: &Rate) -> Quota {
    let per_call = rate.period / rate.calls.get();
    Quota::with_period(per_call.max(Duration::from_nanos(1)))
        .expect("a period greater than 0")
        .allow_burst(rate.burst)
}

fn bucket(rate: &Rate) -> DefaultDirectRateLimiter {
    RateLimiter::direct(quota(rate))
}

impl Limiter {
    /// The buckets of `limits` for `principals` (the token table's) and the
    /// local caller.
    pub fn new<'a>(limits: &RateLimits, principals: impl IntoIterator<Item = &'a str>) -> Limiter {
        let mut by_principal = HashMap::new();
        for name in principals.into_iter().chain([LOCAL_PRINCIPAL]) {
            if let Some(rate) = limits.principals.get(name).or(limits.default.as_ref()) {
                by_principal.insert(name.to_owned(), bucket(rate));
            }
        }
        let tools = limits
            .tools
            .iter()
            .map(|(name, rate)| (name.clone(), bucket(rate)))
            .collect();
        Limiter {
            principals: by_principal,
            subjects: None,
            tools,
            clock: DefaultClock::default(),
        }
    }

    /// As [`new`](Self::new), and with `limits.default` a bucket for each
    /// principal not named there either (the subjects of OAuth tokens), and
    /// for each name under `limits.principals`.
    pub fn with_subjects<'a>(
        limits: &'a RateLimits,
        principals: impl IntoIterator<Item = &'a str>,
    ) -> Limiter {
        let mut limiter = Limiter::new(
            limits,
            principals
                .into_iter()
                .chain(limits.principals.keys().map(String::as_str)),
        );
        limiter.subjects = limits
            .default
            .as_ref()
            .map(|rate| RateLimiter::keyed(quota(rate)));
        limiter
    }

    /// Whether any bucket exists.
    pub fn is_on(&self) -> bool {
        !self.principals.is_empty() || self.subjects.is_some() || !self.tools.is_empty()
    }

    /// Spends one call of `principal`'s bucket, then of `tool`'s; the first that
    /// has none left refuses.
    pub fn check(&self, principal: Option<&str>, tool: &str) -> Result<(), Refusal> {
        let principal = principal.unwrap_or(LOCAL_PRINCIPAL);
        if !self.principals.contains_key(principal)
            && let Some(subjects) = &self.subjects
        {
            if subjects.len() > SUBJECTS_KEPT {
                subjects.retain_recent();
            }
            if let Err(not_until) = subjects.check_key(&principal.to_owned()) {
                return Err(Refusal {
                    bucket: "principal",
                    wait: not_until.wait_time_from(self.clock.now()),
                });
            }
        }
        for (kind, limiter) in [
            ("principal", self.principals.get(principal)),
            ("tool", self.tools.get(tool)),
        ] {
            if let Some(limiter) = limiter
                && let Err(not_until) = limiter.check()
            {
                return Err(Refusal {
                    bucket: kind,
                    wait: not_until.wait_time_from(self.clock.now()),
                });
            }
        }
        Ok(())
    }
}

/// Logs a refusal (`error.type = "rate_limited"`).
/// Logs a refused call and counts it in `toolhost_rate_limited_total`. The
/// `tool` label is the tool's name only when `server`'s catalog has it (a
/// caller may send any name), else [`UNKNOWN_TOOL`]; principals come from the
/// configuration, so both label sets stay bounded.
pub fn log_refusal(server: &Server, principal: Option<&str>, tool: &str, refusal: &Refusal) {
    let principal = principal.unwrap_or(LOCAL_PRINCIPAL);
    tracing::warn!(
        error.type = "rate_limited",
        principal,
        tool,
        bucket = refusal.bucket,
        wait_ms = refusal.wait_ms(),
        "call refused: over its rate limit"
    );
    // A subject of an OAuth token is not a name of the configuration: one
    // label for them all keeps the series bounded.
    let principal = if server.limiter.principals.contains_key(principal) {
        principal
    } else {
        OAUTH_SUBJECT
    };
    let label = if server.catalog().tool(tool).is_some() {
        tool.to_owned()
    } else {
        UNKNOWN_TOOL.to_owned()
    };
    metrics::counter!("toolhost_rate_limited_total", "principal" => principal.to_owned(), "tool" => label).increment(1);
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;

    use super::*;

    fn rate(calls: u32, secs: u64, burst: u32) -> Rate {
        Rate {
            calls: NonZeroU32::new(calls).unwrap(),
            period: Duration::from_secs(secs),
            burst: NonZeroU32::new(burst).unwrap(),
        }
    }

    #[test]
    fn a_burst_passes_then_the_bucket_refuses_with_the_wait() {
        let limits = RateLimits {
            default: Some(rate(1, 60, 2)),
            ..RateLimits::default()
        };
        let limiter = Limiter::new(&limits, ["alice", "bob"]);
        assert!(limiter.check(Some("alice"), "t").is_ok());
        assert!(limiter.check(Some("alice"), "t").is_ok());
        let refusal = limiter.check(Some("alice"), "t").unwrap_err();
        assert_eq!(refusal.bucket, "principal");
        assert!(refusal.wait > Duration::from_secs(50) && refusal.wait <= Duration::from_secs(60));
        assert!((51..=60).contains(&refusal.retry_after_secs()));
        // Another principal has a bucket of its own.
        assert!(limiter.check(Some("bob"), "t").is_ok());
        // A principal the configuration does not know has none (none can come:
        // principals come from the token table).
        assert!(limiter.check(Some("nobody"), "t").is_ok());
    }

    #[test]
    fn a_tool_bucket_is_shared_and_only_named_tools_have_one() {
        let limits = RateLimits {
            tools: [("slow".to_owned(), rate(1, 60, 1))].into(),
            ..RateLimits::default()
        };
        let limiter = Limiter::new(&limits, ["alice", "bob"]);
        assert!(limiter.check(Some("alice"), "slow").is_ok());
        assert_eq!(
            limiter.check(Some("bob"), "slow").unwrap_err().bucket,
            "tool"
        );
        for _ in 0..100 {
            assert!(limiter.check(Some("bob"), "other").is_ok());
        }
        assert_eq!(limiter.tools.len(), 1);
        assert!(limiter.principals.is_empty());
    }

    #[test]
    fn each_oauth_subject_gets_the_default_bucket_and_named_ones_their_own() {
        let limits = RateLimits {
            default: Some(rate(1, 60, 1)),
            principals: [("ci".to_owned(), rate(1, 60, 3))].into(),
            ..RateLimits::default()
        };
        let limiter = Limiter::with_subjects(&limits, ["ops"]);
        for subject in ["ada", "bob"] {
            assert!(limiter.check(Some(subject), "t").is_ok());
            assert_eq!(
                limiter.check(Some(subject), "t").unwrap_err().bucket,
                "principal"
            );
        }
        // A subject the configuration names has its own rate.
        for _ in 0..3 {
            assert!(limiter.check(Some("ci"), "t").is_ok());
        }
        assert!(limiter.check(Some("ci"), "t").is_err());
        assert!(limiter.check(Some("ops"), "t").is_ok());
        assert!(limiter.check(Some("ops"), "t").is_err());
    }

    #[test]
    fn waits_round_up() {
        let r = |wait| Refusal {
            bucket: "tool",
            wait,
        };
        assert_eq!(r(Duration::from_millis(1)).retry_after_secs(), 1);
        assert_eq!(r(Duration::from_millis(1001)).retry_after_secs(), 2);
        assert_eq!(r(Duration::from_secs(2)).retry_after_secs(), 2);
        assert_eq!(r(Duration::from_nanos(10)).wait_ms(), 1);
        assert_eq!(r(Duration::from_micros(1500)).wait_ms(), 2);
        assert_eq!(r(Duration::ZERO).wait_ms(), 1);
    }
}
