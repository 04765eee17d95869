//! HTTP rules (`policy.http`, and the `hosts` of a secret): which requests a guest
//! may send, by method, scheme, host, port and path.
//!
//! A rule is `"[METHODS ]SCHEME://HOST[:PORT][PATH]"`:
//! - `METHODS`: optional, comma separated (`GET,POST`); none allows every method;
//! - `SCHEME`: `http` or `https`;
//! - `HOST`: a DNS name, `*.example.com` (its subdomains, not itself), an IPv4
//!   address or a bracketed IPv6 address;
//! - `PORT`: a number or `*`; absent means the scheme's (80, 443);
//! - `PATH`: absent or `/*` allows every path; one ending in `*` is a prefix;
//!   any other must equal the request's path (the query is not compared).
//!
//! Matching is on the request as the host will send it (the URI the guest gave,
//! the port made explicit); which addresses the host may then connect to is the
//! caller's check (`super::connect`), not this module's.

use std::net::IpAddr;

use http::Method;

/// A parsed list of rules; the default (none) matches no request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpRules {
    rules: Vec<HttpRule>,
}

/// One request as the rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination<'a> {
    pub method: &'a Method,
    pub https: bool,
    /// Lowercase, IPv6 without brackets.
    pub host: &'a str,
    pub port: u16,
    pub path: &'a str,
}

impl Destination<'_> {
    /// The host as an IP address, when the request names one.
    pub fn ip(&self) -> Option<IpAddr> {
        self.host.parse().ok()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct HttpRule {
    methods: Option<Vec<Method>>,
    https: bool,
    host: HostPattern,
    /// `None`: every port.
    port: Option<u16>,
    path: PathPattern,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    Name(String),
    /// `*.example.com`, kept as `.example.com`.
    Subdomains(String),
    Ip(IpAddr),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum PathPattern {
    Any,
    Prefix(String),
    Exact(String),
}

impl HttpRules {
    /// Parses `rules`; `key` names them in errors (`policy.http`).
    ///
    /// # Errors
    ///
    /// A message naming the first malformed rule, what is wrong and a good example.
    pub fn parse<S: AsRef<str>>(key: &str, rules: &[S]) -> Result<HttpRules, String> {
        rules
            .iter()
            .map(|rule| {
                let rule = rule.as_ref();
                parse_rule(rule).map_err(|problem| {
                    format!(
                        "{key} rule {rule:?}: {problem}; write e.g. \"https://api.example.com/*\" or \"GET,POST http://10.0.0.5:8080/v1/*\""
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|rules| HttpRules { rules })
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Whether a rule matches `request`.
    pub fn matches(&self, request: &Destination<'_>) -> bool {
        self.rules.iter().any(|rule| rule.matches(request))
    }
}

impl HttpRule {
    fn matches(&self, request: &Destination<'_>) -> bool {
        self.https == request.https
            && self.port.is_none_or(|port| port == request.port)
            && self
                .methods
                .as_ref()
                .is_none_or(|methods| methods.contains(request.method))
            && match &self.host {
                HostPattern::Name(name) => *name == request.host,
                HostPattern::Subdomains(suffix) => {
                    request.host.ends_with(suffix.as_str())
                        && request.host.len() > suffix.len()
                        && request.ip().is_none()
                }
                HostPattern::Ip(ip) => request.ip() == Some(*ip),
            }
            && match &self.path {
                PathPattern::Any => true,
                PathPattern::Prefix(prefix) => request.path.starts_with(prefix.as_str()),
                PathPattern::Exact(path) => request.path == path,
            }
    }
}

fn parse_rule(rule: &str) -> Result<HttpRule, String> {
    let rule = rule.trim();
    let (methods, url) = match rule.split_once(' ') {
        Some((methods, url)) => (Some(methods), url.trim()),
        None => (None, rule),
    };
    let methods = methods
        .map(|methods| {
            methods
                .split(',')
                .map(|m| {
                    let m = m.trim();
                    if m.is_empty() || !m.bytes().all(|b| b.is_ascii_uppercase()) {
                        return Err(format!(
                            "{m:?} is not a method in capitals (GET, POST, ...)"
                        ));
                    }
                    Method::from_bytes(m.as_bytes()).map_err(|_| format!("{m:?} is not a method"))
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    let (https, rest) = if let Some(rest) = url.strip_prefix("https://") {
        (true, rest)
    } else if let Some(rest) = url.strip_prefix("http://") {
        (false, rest)
    } else {
        return Err("the URL must start with http:// or https://".into());
    };
    let (authority, path) = match rest.find('/') {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    if authority.contains('@') {
        return Err("user information (user@host) has no place in a rule".into());
    }
    let (host, port) = split_port(authority)?;
    let port = match port {
        None => Some(if https { 443 } else { 80 }),
        Some("*") => None,
        Some(port) => Some(
            port.parse::<u16>()
                .map_err(|_| format!("port {port:?} is not a number from 0 to 65535 or *"))?,
        ),
    };
    let host = parse_host(host)?;
    if path.contains(['?', '#']) {
        return Err("a rule matches paths; leave out the query and fragment".into());
    }
    let path = match path {
        "" | "/*" => PathPattern::Any,
        path => match path.strip_suffix('*') {
            Some(prefix) if !prefix.contains('*') => PathPattern::Prefix(prefix.to_owned()),
            None if !path.contains('*') => PathPattern::Exact(path.to_owned()),
            _ => return Err("`*` may only end a path".into()),
        },
    };
    Ok(HttpRule {
        methods,
        https,
        host,
        port,
        path,
    })
}

/// `host[:port]`, with a bracketed IPv6 host.
fn split_port(authority: &str) -> Result<(&str, Option<&str>), String> {
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest
            .split_once(']')
            .ok_or("an IPv6 address needs its closing ]")?;
        return match after {
            "" => Ok((host, None)),
            after => after
                .strip_prefix(':')
                .map(|port| (host, Some(port)))
                .ok_or_else(|| format!("unexpected {after:?} after the IPv6 address")),
        };
    }
    Ok(match authority.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    })
}

fn parse_host(host: &str) -> Result<HostPattern, String> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(HostPattern::Ip(ip));
    }
    let (subdomains, name) = match host.strip_prefix("*.") {
        Some(name) => (true, name),
        None => (false, host),
    };
    let valid = !name.is_empty()
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
    if !valid {
        return Err(format!(
            "{host:?} is neither a DNS name, *.name, an IPv4 address nor a bracketed IPv6 address"
        ));
    }
    let name = name.to_ascii_lowercase();
    Ok(if subdomains {
        HostPattern::Subdomains(format!(".{name}"))
    } else {
        HostPattern::Name(name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allows(
        rules: &[&str],
        method: &str,
        https: bool,
        host: &str,
        port: u16,
        path: &str,
    ) -> bool {
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        HttpRules::parse("policy.http", rules)
            .unwrap()
            .matches(&Destination {
                method: &method,
                https,
                host,
                port,
                path,
            })
    }

    #[test]
    fn a_rule_names_scheme_host_port_path_and_methods() {
        let rules = [
            "https://api.github.com/*",
            "GET https://example.org/search",
            "GET,POST http://127.0.0.1:8080/v1/*",
            "https://*.example.net:*",
            "http://[::1]:9000",
        ];
        assert!(allows(
            &rules,
            "POST",
            true,
            "api.github.com",
            443,
            "/repos/x"
        ));
        assert!(
            !allows(&rules, "GET", false, "api.github.com", 80, "/"),
            "scheme"
        );
        assert!(
            !allows(&rules, "GET", true, "api.github.com", 8443, "/"),
            "port"
        );
        assert!(!allows(&rules, "GET", true, "github.com", 443, "/"), "host");
        assert!(allows(&rules, "GET", true, "example.org", 443, "/search"));
        assert!(
            !allows(&rules, "POST", true, "example.org", 443, "/search"),
            "method"
        );
        assert!(
            !allows(&rules, "GET", true, "example.org", 443, "/search/more"),
            "exact path"
        );
        assert!(allows(
            &rules,
            "POST",
            false,
            "127.0.0.1",
            8080,
            "/v1/items"
        ));
        assert!(!allows(
            &rules,
            "DELETE",
            false,
            "127.0.0.1",
            8080,
            "/v1/items"
        ));
        assert!(
            !allows(&rules, "GET", false, "127.0.0.1", 8080, "/v2/items"),
            "prefix"
        );
        assert!(
            !allows(&rules, "GET", false, "127.0.0.2", 8080, "/v1/items"),
            "address"
        );
        assert!(allows(&rules, "GET", true, "a.b.example.net", 8443, "/x"));
        assert!(
            !allows(&rules, "GET", true, "example.net", 443, "/x"),
            "not the apex"
        );
        assert!(!allows(&rules, "GET", true, "badexample.net", 443, "/x"));
        assert!(allows(&rules, "PUT", false, "::1", 9000, "/anything"));
        assert!(!HttpRules::default().matches(&Destination {
            method: &Method::GET,
            https: true,
            host: "example.org",
            port: 443,
            path: "/",
        }));
    }

    #[test]
    fn a_name_rule_never_matches_an_address_and_back() {
        assert!(!allows(
            &["http://localhost:8080/*"],
            "GET",
            false,
            "127.0.0.1",
            8080,
            "/"
        ));
        assert!(!allows(
            &["http://*.0.0.1:*/*"],
            "GET",
            false,
            "127.0.0.1",
            8080,
            "/"
        ));
        assert!(!allows(
            &["http://127.0.0.1:8080/*"],
            "GET",
            false,
            "localhost",
            8080,
            "/"
        ));
    }

    #[test]
    fn malformed_rules_are_refused_with_a_hint() {
        for bad in [
            "api.github.com",
            "ftp://example.org/",
            "get https://example.org/",
            "GET, https://example.org/",
            "https://user@example.org/",
            "https://example.org:http/",
            "https://exa mple.org/",
            "https://example.org/a*b",
            "https://example.org/search?q=1",
            "https://[::1/",
            "https:///x",
        ] {
            let err = HttpRules::parse("policy.http", &[bad]).unwrap_err();
            assert!(
                err.starts_with(&format!("policy.http rule {bad:?}: ")),
                "{err}"
            );
            assert!(err.contains("write e.g."), "{err}");
        }
    }
}
