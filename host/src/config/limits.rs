//! `[host.rate_limits]`: token buckets for `tools/call`, one per principal and
//! one per tool, off unless configured.
//!
//! ```toml
//! [host.rate_limits]
//! default = { per_second = 5, burst = 10 }        # each principal's bucket
//! principals.ci = { per_minute = 600, burst = 50 } # instead of the default
//! tools.fetch_page = { per_second = 2 }            # shared by every caller of the tool
//! ```
//!
//! A rate is exactly one of `per_second` or `per_minute` (calls, at least 1);
//! `burst` (default: the rate's count) is how many calls may come at once after a
//! quiet spell. Principals named under `principals` must be principals of a
//! `[[token]]` (or `local`, the stdio operator and the open loopback caller):
//! buckets exist only for names of the configuration, never for names a request
//! chooses.

use std::collections::BTreeMap;
use std::num::NonZeroU32;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::ConfigError;

/// The principal name that stands for the caller without one: the stdio
/// operator and the open caller of a loopback server without tokens.
pub const LOCAL_PRINCIPAL: &str = "local";

/// One bucket's rate: `calls` per `period`, up to `burst` at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub calls: NonZeroU32,
    pub period: Duration,
    pub burst: NonZeroU32,
}

/// The rate limits of the configuration; empty means off.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RateLimits {
    /// The bucket each principal gets unless `principals` names it.
    pub default: Option<Rate>,
    /// Per principal name (a `[[token]]`'s, or [`LOCAL_PRINCIPAL`]).
    pub principals: BTreeMap<String, Rate>,
    /// Per tool name: one bucket for all the tool's callers.
    pub tools: BTreeMap<String, Rate>,
}

impl RateLimits {
    /// Whether any limit is configured.
    pub fn is_on(&self) -> bool {
        self.default.is_some() || !self.principals.is_empty() || !self.tools.is_empty()
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRateLimits {
    default: Option<RawRate>,
    #[serde(default)]
    principals: BTreeMap<String, RawRate>,
    #[serde(default)]
    tools: BTreeMap<String, RawRate>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRate {
    per_second: Option<i64>,
    per_minute: Option<i64>,
    burst: Option<i64>,
}

/// A count of at least 1 that fits a `u32`.
fn count(value: i64, what: &str) -> Result<NonZeroU32, String> {
    u32::try_from(value)
        .ok()
        .and_then(NonZeroU32::new)
        .ok_or_else(|| match value {
            0 if what == "burst" => "burst = 0 would refuse every call; use at least 1".to_owned(),
            0 => "a rate of 0 would refuse every call; use at least 1".to_owned(),
            _ => format!("{what} = {value} is out of range; use 1 to {}", u32::MAX),
        })
}

impl RawRate {
    fn resolve(self, key: &str, file: &Path) -> Result<Rate, ConfigError> {
        let problem = |what: String| ConfigError::new(file, format!("{key}: {what}"));
        let (value, period, name) = match (self.per_second, self.per_minute) {
            (Some(n), None) => (n, Duration::from_secs(1), "per_second"),
            (None, Some(n)) => (n, Duration::from_secs(60), "per_minute"),
            _ => {
                return Err(problem(
                    "needs exactly one of `per_second` and `per_minute`, e.g. { per_second = 5, burst = 10 }".into(),
                ));
            }
        };
        let calls = count(value, name).map_err(problem)?;
        let burst = match self.burst {
            None => calls,
            Some(burst) => count(burst, "burst").map_err(problem)?,
        };
        Ok(Rate {
            calls,
            period,
            burst,
        })
    }
}

impl RawRateLimits {
    /// Checks every rate; `principals` are the principals of the `[[token]]`s;
    /// with `oauth` on, a name may also be a subject of the issuer's tokens.
    pub(super) fn resolve(
        self,
        principals: &[&str],
        oauth: bool,
        file: &Path,
    ) -> Result<RateLimits, ConfigError> {
        const KEY: &str = "host.rate_limits";
        let default = self
            .default
            .map(|rate| rate.resolve(&format!("{KEY}.default"), file))
            .transpose()?;
        let mut by_principal = BTreeMap::new();
        for (name, rate) in self.principals {
            let key = format!("{KEY}.principals.{name}");
            if !oauth && name != LOCAL_PRINCIPAL && !principals.contains(&name.as_str()) {
                return Err(ConfigError::new(
                    file,
                    format!(
                        "{key}: no [[token]] has principal {name:?}; name a token's principal, or {LOCAL_PRINCIPAL:?} for the stdio operator and the open loopback caller"
                    ),
                ));
            }
            by_principal.insert(name, rate.resolve(&key, file)?);
        }
        let mut tools = BTreeMap::new();
        for (name, rate) in self.tools {
            let key = format!("{KEY}.tools.{name}");
            tools.insert(name, rate.resolve(&key, file)?);
        }
        Ok(RateLimits {
            default,
            principals: by_principal,
            tools,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, principals: &[&str]) -> Result<RateLimits, String> {
        let raw: RawRateLimits = toml::from_str(text).map_err(|e| e.to_string())?;
        raw.resolve(principals, false, Path::new("t.toml"))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn rates_resolve_with_burst_defaulting_to_the_count() {
        let limits = parse(
            "default = { per_second = 5 }\nprincipals.ci = { per_minute = 60, burst = 3 }\ntools.echo = { per_second = 1, burst = 2 }\n",
            &["ci"],
        )
        .unwrap();
        let default = limits.default.unwrap();
        assert_eq!((default.calls.get(), default.burst.get()), (5, 5));
        assert_eq!(default.period, Duration::from_secs(1));
        let ci = limits.principals["ci"];
        assert_eq!((ci.calls.get(), ci.burst.get()), (60, 3));
        assert_eq!(ci.period, Duration::from_secs(60));
        assert_eq!(limits.tools["echo"].burst.get(), 2);
        assert!(limits.is_on());
        assert!(!parse("", &[]).unwrap().is_on());
    }

    #[test]
    fn bad_rates_are_refused_naming_the_key() {
        for (text, key, what) in [
            (
                "default = { burst = 3 }",
                "host.rate_limits.default",
                "exactly one",
            ),
            (
                "default = { per_second = 1, per_minute = 1 }",
                "host.rate_limits.default",
                "exactly one",
            ),
            (
                "tools.x = { per_second = 0 }",
                "host.rate_limits.tools.x",
                "at least 1",
            ),
            (
                "tools.x = { per_minute = -5 }",
                "host.rate_limits.tools.x",
                "out of range",
            ),
            (
                "default = { per_second = 1, burst = -1 }",
                "host.rate_limits.default",
                "out of range",
            ),
            (
                "principals.ci = { per_second = 1, burst = 0 }",
                "host.rate_limits.principals.ci",
                "burst = 0",
            ),
            (
                "principals.mallory = { per_second = 1 }",
                "host.rate_limits.principals.mallory",
                "no [[token]]",
            ),
        ] {
            let error = parse(text, &["ci"]).unwrap_err();
            assert!(error.contains("t.toml"), "{error}");
            assert!(error.contains(key), "{error}");
            assert!(error.contains(what), "{error}");
        }
        assert!(parse("default = { per_hour = 1 }", &[]).is_err());
        assert!(parse("principals.local = { per_second = 1 }", &[]).is_ok());
    }
}
