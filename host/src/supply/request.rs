//! The policy a component *requests*: a `toolhost:policy` custom section of TOML
//! its author embeds (`toolhost publish --policy`), covered by its signature.
//!
//! The operator's configuration *grants*; what a call gets is the intersection
//! ([`effective`]): a directory, variable, address or HTTP rule only when both
//! name it (a directory writable only when both say so), each budget the
//! smaller of the two. A component without the section requests everything the
//! configuration grants, as before this section existed.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::config::PolicyConfig;

/// The custom section that carries the request.
pub const SECTION: &str = "toolhost:policy";

/// The largest section read: a request is a few lines of TOML.
const MAX_SECTION_BYTES: usize = 64 << 10;

/// What a component asks for. Absent budgets ask for whatever is granted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// Directories, by the path the guest sees (`/data`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preopens: Vec<RequestedDir>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub http: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_resources: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_log_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_progress_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_result_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_http_requests: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_http_request_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_http_response_bytes: Option<u64>,
    /// Questions to the caller per call; 0 says the component never asks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_input_requests: Option<u32>,
}

/// A requested directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestedDir {
    pub guest: String,
    #[serde(default)]
    pub writable: bool,
}

impl Request {
    /// Parses a request written as TOML (the file `publish --policy` embeds).
    ///
    /// # Errors
    ///
    /// The TOML error, or a budget of 0 (except `max_input_requests`: a
    /// component that never asks its caller may say so).
    pub fn parse(text: &str) -> Result<Request, String> {
        let request: Request = toml::from_str(text).map_err(|e| e.message().to_owned())?;
        if let Some((key, _)) = request
            .budgets()
            .into_iter()
            .find(|(key, v)| *v == Some(0) && *key != "max_input_requests")
        {
            return Err(format!(
                "{key} = 0 would stop every call; leave it out or give more"
            ));
        }
        if let Some(dir) = request.preopens.iter().find(|d| !d.guest.starts_with('/')) {
            return Err(format!(
                "preopen guest path {:?} must be absolute (e.g. \"/data\")",
                dir.guest
            ));
        }
        Ok(request)
    }

    /// The request a component carries, or `None` when it has no section.
    ///
    /// # Errors
    ///
    /// A section that is too large, not UTF-8 or not a valid request, or a binary
    /// that is not WebAssembly.
    pub fn from_component(bytes: &[u8]) -> Result<Option<Request>, String> {
        let Some(payload) = custom_section(bytes, SECTION)? else {
            return Ok(None);
        };
        if payload.len() > MAX_SECTION_BYTES {
            return Err(format!(
                "its {SECTION} section has {} bytes; at most {MAX_SECTION_BYTES} are read",
                payload.len()
            ));
        }
        let text = std::str::from_utf8(payload)
            .map_err(|_| format!("its {SECTION} section is not UTF-8 text"))?;
        Request::parse(text)
            .map(Some)
            .map_err(|e| format!("its {SECTION} section is not a valid request: {e}"))
    }

    /// The request as the TOML `publish --policy` takes.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a request serializes")
    }

    fn budgets(&self) -> [(&'static str, Option<u64>); 10] {
        [
            ("memory_mib", self.memory_mib),
            ("timeout_ms", self.timeout_ms),
            ("max_resources", self.max_resources.map(u64::from)),
            ("max_log_bytes", self.max_log_bytes),
            ("max_progress_bytes", self.max_progress_bytes),
            ("max_result_bytes", self.max_result_bytes),
            ("max_http_requests", self.max_http_requests.map(u64::from)),
            ("max_http_request_bytes", self.max_http_request_bytes),
            ("max_http_response_bytes", self.max_http_response_bytes),
            ("max_input_requests", self.max_input_requests.map(u64::from)),
        ]
    }
}

/// `component` carrying `request` as its `toolhost:policy` section (replacing
/// one it had). Sign after embedding: the signature covers the section.
///
/// # Errors
///
/// A message when `component` is not WebAssembly.
pub fn embed(component: &[u8], request: &Request) -> Result<Vec<u8>, String> {
    use wasmsign2::{CustomSection, Module, Section};
    let mut module = Module::deserialize(&mut &component[..])
        .map_err(|e| format!("the component cannot be parsed: {e}"))?;
    module.sections.retain(|section| {
        !matches!(section, Section::Custom(c) if c.name() == SECTION)
            && !section.is_signature_header()
    });
    module.sections.push(Section::Custom(CustomSection::new(
        SECTION.to_owned(),
        request.to_toml().into_bytes(),
    )));
    let mut out = Vec::with_capacity(component.len() + 1024);
    module
        .serialize(&mut out)
        .map_err(|e| format!("writing the component failed: {e}"))?;
    Ok(out)
}

/// The payload of the first top-level custom section `name` of a module or
/// component (nested modules' sections are not the component's).
fn custom_section<'a>(bytes: &'a [u8], name: &str) -> Result<Option<&'a [u8]>, String> {
    let mut depth = 0usize;
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        let payload = payload.map_err(|e| format!("is not WebAssembly: {e}"))?;
        match payload {
            wasmparser::Payload::ModuleSection { .. }
            | wasmparser::Payload::ComponentSection { .. } => depth += 1,
            wasmparser::Payload::End(_) => depth = depth.saturating_sub(1),
            wasmparser::Payload::CustomSection(reader) if depth == 0 && reader.name() == name => {
                return Ok(Some(reader.data()));
            }
            _ => {}
        }
    }
    Ok(None)
}

/// The policy a call gets: `granted` narrowed to `request` (all of `granted`
/// when there is none), and what was requested but not granted, one line each.
pub fn effective(granted: &PolicyConfig, request: Option<&Request>) -> (PolicyConfig, Vec<String>) {
    let Some(request) = request else {
        return (granted.clone(), Vec::new());
    };
    let mut policy = granted.clone();
    let mut missing = Vec::new();
    policy.preopens.retain_mut(|dir| {
        match request.preopens.iter().find(|r| r.guest == dir.guest) {
            Some(wanted) => {
                dir.writable &= wanted.writable;
                true
            }
            None => false,
        }
    });
    for wanted in &request.preopens {
        match granted.preopens.iter().find(|d| d.guest == wanted.guest) {
            None => missing.push(format!("directory {}", wanted.guest)),
            Some(dir) if wanted.writable && !dir.writable => {
                missing.push(format!("write access to {}", wanted.guest))
            }
            Some(_) => {}
        }
    }
    narrow(
        &mut policy.env,
        &request.env,
        "environment variable",
        &mut missing,
    );
    narrow(
        &mut policy.network,
        &request.network,
        "network",
        &mut missing,
    );
    narrow(&mut policy.http, &request.http, "http", &mut missing);
    let mut budget = |key: &str, granted: &mut u64, wanted: Option<u64>| {
        if let Some(wanted) = wanted {
            if wanted > *granted {
                missing.push(format!("{key} = {wanted} (granted {granted})"));
            }
            *granted = (*granted).min(wanted);
        }
    };
    budget("memory_mib", &mut policy.memory_mib, request.memory_mib);
    budget("timeout_ms", &mut policy.timeout_ms, request.timeout_ms);
    budget(
        "max_log_bytes",
        &mut policy.max_log_bytes,
        request.max_log_bytes,
    );
    budget(
        "max_progress_bytes",
        &mut policy.max_progress_bytes,
        request.max_progress_bytes,
    );
    budget(
        "max_result_bytes",
        &mut policy.max_result_bytes,
        request.max_result_bytes,
    );
    budget(
        "max_http_request_bytes",
        &mut policy.max_http_request_bytes,
        request.max_http_request_bytes,
    );
    budget(
        "max_http_response_bytes",
        &mut policy.max_http_response_bytes,
        request.max_http_response_bytes,
    );
    let mut small = |key: &str, granted: &mut u32, wanted: Option<u32>| {
        let mut wide = u64::from(*granted);
        budget(key, &mut wide, wanted.map(u64::from));
        *granted = u32::try_from(wide).expect("never more than granted");
    };
    small(
        "max_resources",
        &mut policy.max_resources,
        request.max_resources,
    );
    small(
        "max_http_requests",
        &mut policy.max_http_requests,
        request.max_http_requests,
    );
    small(
        "max_input_requests",
        &mut policy.max_input_requests,
        request.max_input_requests,
    );
    (policy, missing)
}

/// Keeps the granted entries that were requested; notes the requested ones that
/// were not granted.
fn narrow(granted: &mut Vec<String>, wanted: &[String], what: &str, missing: &mut Vec<String>) {
    let asked: BTreeSet<&str> = wanted.iter().map(String::as_str).collect();
    for entry in wanted {
        if !granted.contains(entry) {
            missing.push(format!("{what} {entry}"));
        }
    }
    granted.retain(|entry| asked.contains(entry.as_str()));
}

/// What `new` requests beyond `approved`, one line each; empty when it asks for
/// nothing more. `None` requests everything granted.
pub fn beyond(new: Option<&Request>, approved: Option<&Request>) -> Vec<String> {
    let Some(approved) = approved else {
        return Vec::new();
    };
    let Some(new) = new else {
        return vec![
            "everything the configuration grants (it carries no toolhost:policy section)".into(),
        ];
    };
    let mut more = Vec::new();
    for dir in &new.preopens {
        match approved.preopens.iter().find(|d| d.guest == dir.guest) {
            None => more.push(format!(
                "directory {}{}",
                dir.guest,
                if dir.writable { " (writable)" } else { "" }
            )),
            Some(old) if dir.writable && !old.writable => {
                more.push(format!("write access to {}", dir.guest))
            }
            Some(_) => {}
        }
    }
    for (what, new, old) in [
        ("environment variable", &new.env, &approved.env),
        ("network", &new.network, &approved.network),
        ("http", &new.http, &approved.http),
    ] {
        more.extend(
            new.iter()
                .filter(|entry| !old.contains(entry))
                .map(|entry| format!("{what} {entry}")),
        );
    }
    for ((key, new), (_, old)) in new.budgets().into_iter().zip(approved.budgets()) {
        match (new, old) {
            (_, None) => {}
            (None, Some(old)) => more.push(format!("{key}: whatever is granted (approved {old})")),
            (Some(new), Some(old)) if new > old => {
                more.push(format!("{key} = {new} (approved {old})"))
            }
            _ => {}
        }
    }
    more
}

/// A request in one line, for logs and `toolhost plugins`.
pub fn summary(request: Option<&Request>) -> String {
    let Some(request) = request else {
        return "everything granted (no toolhost:policy section)".into();
    };
    let mut parts = Vec::new();
    for dir in &request.preopens {
        parts.push(format!(
            "directory {}{}",
            dir.guest,
            if dir.writable { " (writable)" } else { "" }
        ));
    }
    for (what, entries) in [
        ("env", &request.env),
        ("network", &request.network),
        ("http", &request.http),
    ] {
        parts.extend(entries.iter().map(|e| format!("{what} {e}")));
    }
    for (key, value) in request.budgets() {
        if let Some(value) = value {
            parts.push(format!("{key} = {value}"));
        }
    }
    if parts.is_empty() {
        "nothing (no directory, variable, network or HTTP access)".into()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PreopenConfig;

    fn granted() -> PolicyConfig {
        PolicyConfig {
            preopens: vec![
                PreopenConfig {
                    host: "/srv/a".into(),
                    guest: "/a".into(),
                    writable: true,
                },
                PreopenConfig {
                    host: "/srv/b".into(),
                    guest: "/b".into(),
                    writable: false,
                },
            ],
            env: vec!["HOME".into(), "LANG".into()],
            http: vec!["https://api.example/*".into()],
            ..PolicyConfig::default()
        }
    }

    #[test]
    fn the_effective_policy_is_the_intersection() {
        let request = Request::parse(
            r#"
            preopens = [{ guest = "/a" }, { guest = "/b", writable = true }, { guest = "/c" }]
            env = ["LANG", "SECRET"]
            memory_mib = 32
            timeout_ms = 60000
            "#,
        )
        .unwrap();
        let (policy, missing) = effective(&granted(), Some(&request));
        let dirs: Vec<_> = policy
            .preopens
            .iter()
            .map(|d| (d.guest.as_str(), d.writable))
            .collect();
        assert_eq!(
            dirs,
            [("/a", false), ("/b", false)],
            "write only when both say so"
        );
        assert_eq!(policy.env, ["LANG"]);
        assert!(policy.http.is_empty(), "not requested, not given");
        assert_eq!(policy.memory_mib, 32);
        assert_eq!(policy.timeout_ms, 10_000, "never more than granted");
        assert_eq!(
            missing,
            [
                "write access to /b",
                "directory /c",
                "environment variable SECRET",
                "timeout_ms = 60000 (granted 10000)"
            ]
        );
    }

    #[test]
    fn a_component_may_ask_its_caller_less_often_or_never() {
        let never = Request::parse("max_input_requests = 0").unwrap();
        let (policy, missing) = effective(&granted(), Some(&never));
        assert_eq!(policy.max_input_requests, 0, "0 is a request, not an error");
        assert!(missing.is_empty());
        let more = Request::parse("max_input_requests = 40").unwrap();
        let (policy, missing) = effective(&granted(), Some(&more));
        assert_eq!(policy.max_input_requests, 8, "never more than granted");
        assert_eq!(missing, ["max_input_requests = 40 (granted 8)"]);
        assert_eq!(
            beyond(Some(&more), Some(&never)),
            ["max_input_requests = 40 (approved 0)"]
        );
    }

    #[test]
    fn no_request_gets_the_grant() {
        let (policy, missing) = effective(&granted(), None);
        assert_eq!(policy.preopens.len(), 2);
        assert_eq!(policy.env, ["HOME", "LANG"]);
        assert!(missing.is_empty());
    }

    #[test]
    fn beyond_lists_what_a_new_version_adds() {
        let old = Request::parse("env = [\"LANG\"]\nmemory_mib = 32\n").unwrap();
        let same = Request::parse("memory_mib = 16\nenv = [\"LANG\"]").unwrap();
        assert!(beyond(Some(&same), Some(&old)).is_empty());
        let more = Request::parse(
            "env = [\"LANG\", \"TOKEN\"]\nhttp = [\"https://x.example/*\"]\npreopens = [{guest = \"/d\", writable = true}]",
        )
        .unwrap();
        assert_eq!(
            beyond(Some(&more), Some(&old)),
            [
                "directory /d (writable)",
                "environment variable TOKEN",
                "http https://x.example/*",
                "memory_mib: whatever is granted (approved 32)"
            ]
        );
        assert_eq!(beyond(None, Some(&old)).len(), 1);
        assert!(
            beyond(Some(&more), None).is_empty(),
            "the whole grant was approved"
        );
    }

    #[test]
    fn bad_requests_say_what_is_wrong() {
        assert!(
            Request::parse("memory_mib = 0")
                .unwrap_err()
                .contains("memory_mib = 0")
        );
        assert!(
            Request::parse("disk = 1")
                .unwrap_err()
                .contains("unknown field")
        );
        assert!(
            Request::parse("preopens = [{guest = \"data\"}]")
                .unwrap_err()
                .contains("absolute")
        );
    }

    #[test]
    fn a_request_round_trips_through_toml() {
        let request = Request::parse("env = [\"A\"]\nmax_http_requests = 3").unwrap();
        assert_eq!(Request::parse(&request.to_toml()).unwrap(), request);
    }
}
