//! `toolhost plugins`: per plugin, where it comes from, the pinned version, what
//! it requests, what the configuration grants, what it gets, and what waits for
//! approval. Offline: it reads the configuration, the lock and file sources only.

use std::fmt::Write as _;

use super::lock::Lock;
use super::request::{self, Request};
use crate::config::{Config, PolicyConfig};

/// The report, one block per plugin.
///
/// # Errors
///
/// A message when the lock cannot be read.
pub fn plugins(config: &Config) -> Result<String, String> {
    let lock = Lock::read(&config.host.data_dir)?;
    let mut out = String::new();
    for plugin in &config.plugins {
        let source = plugin
            .registry
            .clone()
            .unwrap_or_else(|| plugin.path.display().to_string());
        let _ = writeln!(out, "{}  {source}", plugin.name);
        let pin = lock.plugin.get(&plugin.name).filter(|p| p.source == source);
        let requested: Option<Option<Request>> = match (pin, &plugin.registry) {
            (Some(pin), _) => {
                let version = &pin.version;
                let _ = writeln!(
                    out,
                    "  pinned:    {}{} ({} bytes, {})",
                    version.component,
                    version
                        .manifest
                        .as_ref()
                        .map(|m| format!(", manifest {m}"))
                        .unwrap_or_default(),
                    version.size,
                    version
                        .signer
                        .as_ref()
                        .map_or("no signature checked".to_owned(), |s| format!(
                            "signed by {s}"
                        ))
                );
                Some(version.request.clone())
            }
            (None, Some(_)) => {
                let _ = writeln!(
                    out,
                    "  pinned:    not yet; the first start pulls and pins it"
                );
                None
            }
            (None, None) => std::fs::read(&plugin.path)
                .ok()
                .and_then(|bytes| Request::from_component(&bytes).ok()),
        };
        if let Some(requested) = &requested {
            let _ = writeln!(out, "  requests:  {}", request::summary(requested.as_ref()));
        }
        let _ = writeln!(out, "  granted:   {}", policy_summary(&plugin.policy));
        if let Some(requested) = &requested {
            let (effective, missing) = request::effective(&plugin.policy, requested.as_ref());
            let _ = writeln!(out, "  effective: {}", policy_summary(&effective));
            if !missing.is_empty() {
                let _ = writeln!(out, "  not granted: {}", missing.join("; "));
            }
        }
        if let Some(pending) = pin.and_then(|p| p.pending.as_ref().map(|v| (p, v))) {
            let (pin, version) = pending;
            let _ = writeln!(
                out,
                "  waiting:   {} requests more than approved: {}; `toolhost approve {}` pins it",
                version.manifest.as_deref().unwrap_or(&version.component),
                request::beyond(version.request.as_ref(), pin.approved.as_ref()).join("; "),
                plugin.name
            );
        }
    }
    Ok(out)
}

/// A policy in one line: its grants and main budgets.
pub fn policy_summary(policy: &PolicyConfig) -> String {
    let mut parts = Vec::new();
    for dir in &policy.preopens {
        parts.push(format!(
            "directory {} ({}){}",
            dir.guest,
            dir.host.display(),
            if dir.writable { " writable" } else { "" }
        ));
    }
    for (what, entries) in [
        ("env", &policy.env),
        ("network", &policy.network),
        ("http", &policy.http),
    ] {
        parts.extend(entries.iter().map(|e| format!("{what} {e}")));
    }
    parts.push(format!("memory_mib = {}", policy.memory_mib));
    parts.push(format!("timeout_ms = {}", policy.timeout_ms));
    parts.join(", ")
}
