//! `[oauth]`: the HTTP transport as an OAuth 2.1 resource server (the MCP
//! authorization specification; RFC 9728 protected resource metadata, RFC 8707
//! audiences). Off unless the table is present; static `[[token]]`s keep
//! working beside it.
//!
//! ```toml
//! [oauth]
//! resource = "https://mcp.example.com/mcp"   # this server's canonical URI: the audience tokens must name
//! issuer = "https://login.example.com/"      # the only `iss` accepted
//! # jwks_uri = "https://login.example.com/jwks"  # default: the issuer's metadata (RFC 8414, then OIDC)
//! # authorization_servers = ["https://login.example.com/"]  # default: [issuer]
//! # audience = "..."          # default: `resource`
//! # required_scopes = ["mcp"] # every token needs these
//! # leeway_secs = 30          # clock skew allowed on exp and nbf
//! # principal_claim = "sub"
//! # ca_file = "idp-ca.pem"    # one more CA for the issuer's HTTPS
//! [oauth.scopes]              # scope -> the toolhost privileges it grants
//! "orders:write" = ["orders:write"]
//! ```
//!
//! Every URL must be `https`, except on a loopback host (a test issuer, a local
//! proxy). Tokens are checked with asymmetric algorithms only; the checks
//! themselves live in `mcp::oauth`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::ConfigError;

/// The resource server's settings, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthConfig {
    /// The canonical URI of the MCP endpoint (`resource` in the metadata).
    pub resource: String,
    /// The `iss` every token must carry.
    pub issuer: String,
    /// Named in the metadata's `authorization_servers`.
    pub authorization_servers: Vec<String>,
    /// Where the issuer's keys are; `None`: found in the issuer's metadata.
    pub jwks_uri: Option<String>,
    /// The `aud` every token must contain.
    pub audience: String,
    /// Scopes every token needs, whatever it calls.
    pub required_scopes: Vec<String>,
    /// The privileges each scope grants.
    pub scopes: BTreeMap<String, Vec<String>>,
    /// Clock skew allowed on `exp` and `nbf`.
    pub leeway: Duration,
    /// The claim that names the principal (default `sub`).
    pub principal_claim: String,
    /// One more CA (PEM) for the issuer's HTTPS.
    pub ca_file: Option<PathBuf>,
    /// How long fetched keys are used before they are fetched again.
    pub jwks_max_age: Duration,
}

impl OAuthConfig {
    /// The default of `oauth.leeway_secs`.
    pub const DEFAULT_LEEWAY_SECS: u64 = 30;
    /// The default of `oauth.jwks_max_age_secs`: ten minutes.
    pub const DEFAULT_JWKS_MAX_AGE_SECS: u64 = 600;

    /// Every scope the metadata names: the required ones, then the mapped ones.
    pub fn scopes_supported(&self) -> Vec<String> {
        let mut scopes = self.required_scopes.clone();
        for scope in self.scopes.keys() {
            if !scopes.contains(scope) {
                scopes.push(scope.clone());
            }
        }
        scopes
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOAuth {
    resource: Option<String>,
    issuer: Option<String>,
    #[serde(default)]
    authorization_servers: Vec<String>,
    jwks_uri: Option<String>,
    audience: Option<String>,
    #[serde(default)]
    required_scopes: Vec<String>,
    #[serde(default)]
    scopes: BTreeMap<String, Vec<String>>,
    leeway_secs: Option<i64>,
    principal_claim: Option<String>,
    ca_file: Option<PathBuf>,
    jwks_max_age_secs: Option<i64>,
}

/// Whether `url` is `https://`, or `http://` to a loopback host; else what is
/// wrong with it.
///
/// # Errors
///
/// A message naming `url` and what to change.
pub fn secure_url(url: &str) -> Result<(), String> {
    let parsed =
        reqwest::Url::parse(url).map_err(|e| format!("{url:?} is not an absolute URL: {e}"))?;
    if parsed.fragment().is_some() {
        return Err(format!("{url:?} has a fragment (#...); remove it"));
    }
    match parsed.scheme() {
        "https" => Ok(()),
        "http" => match parsed.host() {
            Some(url::Host::Domain("localhost")) => Ok(()),
            Some(url::Host::Ipv4(ip)) if ip.is_loopback() => Ok(()),
            Some(url::Host::Ipv6(ip)) if ip.is_loopback() => Ok(()),
            _ => Err(format!(
                "{url:?} is plain http to a host that is not loopback; use https"
            )),
        },
        other => Err(format!("{url:?} has scheme {other:?}; use https")),
    }
}

impl RawOAuth {
    pub(super) fn resolve(self, file: &Path, base: &Path) -> Result<OAuthConfig, ConfigError> {
        let problem =
            |key: &str, what: String| ConfigError::new(file, format!("oauth.{key}: {what}"));
        let url = |key: &str, value: String| -> Result<String, ConfigError> {
            secure_url(&value).map_err(|what| problem(key, what))?;
            Ok(value)
        };
        let resource = url(
            "resource",
            self.resource.ok_or_else(|| {
                problem(
                    "resource",
                    "is missing: set it to this server's MCP URL as clients reach it, e.g. \"https://mcp.example.com/mcp\"".into(),
                )
            })?,
        )?;
        let issuer = url(
            "issuer",
            self.issuer.ok_or_else(|| {
                problem(
                    "issuer",
                    "is missing: set it to the authorization server's issuer identifier (the `iss` of its tokens)".into(),
                )
            })?,
        )?;
        let authorization_servers = if self.authorization_servers.is_empty() {
            vec![issuer.clone()]
        } else {
            self.authorization_servers
                .into_iter()
                .map(|server| url("authorization_servers", server))
                .collect::<Result<_, _>>()?
        };
        let jwks_uri = self.jwks_uri.map(|u| url("jwks_uri", u)).transpose()?;
        let audience = self.audience.unwrap_or_else(|| resource.clone());
        if audience.trim().is_empty() {
            return Err(problem("audience", "is empty".into()));
        }
        for scope in self.required_scopes.iter().chain(self.scopes.keys()) {
            if scope.is_empty()
                || scope.contains(|c: char| c.is_whitespace() || c == '"' || c == '\\')
            {
                return Err(problem(
                    "scopes",
                    format!(
                        "{scope:?} is not a scope name: no spaces, quotes or backslashes (RFC 6749, 3.3)"
                    ),
                ));
            }
        }
        for (scope, privileges) in &self.scopes {
            if privileges.iter().any(|p| p.trim().is_empty()) {
                return Err(problem(
                    &format!("scopes.{scope}"),
                    "a privilege name is empty; write names such as \"orders:write\"".into(),
                ));
            }
        }
        let secs = |key: &str, value: Option<i64>, default: u64, max: u64| match value {
            None => Ok(Duration::from_secs(default)),
            Some(v) if (0..=max as i64).contains(&v) => Ok(Duration::from_secs(v as u64)),
            Some(v) => Err(problem(key, format!("{v} is out of range; use 0 to {max}"))),
        };
        let leeway = secs(
            "leeway_secs",
            self.leeway_secs,
            OAuthConfig::DEFAULT_LEEWAY_SECS,
            300,
        )?;
        let jwks_max_age = secs(
            "jwks_max_age_secs",
            self.jwks_max_age_secs,
            OAuthConfig::DEFAULT_JWKS_MAX_AGE_SECS,
            86_400,
        )?;
        if jwks_max_age < Duration::from_secs(10) {
            return Err(problem(
                "jwks_max_age_secs",
                "must be at least 10: each fetch costs the issuer a request".into(),
            ));
        }
        let principal_claim = self.principal_claim.unwrap_or_else(|| "sub".to_owned());
        if principal_claim.is_empty() {
            return Err(problem(
                "principal_claim",
                "is empty; the default is \"sub\"".into(),
            ));
        }
        Ok(OAuthConfig {
            resource,
            issuer,
            authorization_servers,
            jwks_uri,
            audience,
            required_scopes: self.required_scopes,
            scopes: self.scopes,
            leeway,
            principal_claim,
            ca_file: self.ca_file.map(|path| base.join(path)),
            jwks_max_age,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<OAuthConfig, String> {
        let raw: RawOAuth = toml::from_str(text).map_err(|e| e.to_string())?;
        raw.resolve(Path::new("t.toml"), Path::new("/etc/th"))
            .map_err(|e| e.problem)
    }

    #[test]
    fn defaults_follow_the_resource_and_the_issuer() {
        let config = parse(
            "resource = \"https://mcp.example.com/mcp\"\nissuer = \"https://login.example.com/\"\nrequired_scopes = [\"mcp\"]\nca_file = \"ca.pem\"\n[scopes]\n\"orders:write\" = [\"orders\"]\nmcp = []\n",
        )
        .unwrap();
        assert_eq!(config.audience, "https://mcp.example.com/mcp");
        assert_eq!(config.authorization_servers, ["https://login.example.com/"]);
        assert_eq!(config.jwks_uri, None);
        assert_eq!(config.leeway, Duration::from_secs(30));
        assert_eq!(config.principal_claim, "sub");
        assert_eq!(config.ca_file, Some(PathBuf::from("/etc/th/ca.pem")));
        assert_eq!(config.scopes_supported(), ["mcp", "orders:write"]);
    }

    #[test]
    fn plain_http_only_to_loopback() {
        let ok = "resource = \"http://127.0.0.1:8080/mcp\"\nissuer = \"http://localhost:9000\"\n";
        assert!(parse(ok).is_ok());
        let error = parse(
            "resource = \"https://mcp.example.com/mcp\"\nissuer = \"http://login.example.com\"\n",
        )
        .unwrap_err();
        assert!(
            error.contains("oauth.issuer") && error.contains("use https"),
            "{error}"
        );
    }

    #[test]
    fn mistakes_are_named() {
        for (text, expected) in [
            (
                "issuer = \"https://a.example\"\n",
                "oauth.resource: is missing",
            ),
            (
                "resource = \"https://a.example/mcp\"\n",
                "oauth.issuer: is missing",
            ),
            (
                "resource = \"mcp\"\nissuer = \"https://a.example\"\n",
                "is not an absolute URL",
            ),
            (
                "resource = \"https://a.example/mcp\"\nissuer = \"https://a.example\"\nleeway_secs = -1\n",
                "oauth.leeway_secs: -1 is out of range",
            ),
            (
                "resource = \"https://a.example/mcp\"\nissuer = \"https://a.example\"\nrequired_scopes = [\"a b\"]\n",
                "is not a scope name",
            ),
            (
                "resource = \"https://a.example/mcp\"\nissuer = \"https://a.example\"\njwks_max_age_secs = 1\n",
                "at least 10",
            ),
        ] {
            let error = parse(text).unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }
}
