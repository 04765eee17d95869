//! A plugin's policy turned into capabilities, in two steps (the Spin pattern):
//! [`Capabilities::configure`] once per plugin at load (parse, validate, read the
//! granted environment, warn about odd settings), and [`Capabilities::prepare`]
//! per instance, cheaply, building the WASI context of one call.
//!
//! Defaults are deny: no preopened directories, no environment variables, no
//! network (every address refused, name lookup off), no configuration values.
//!
//! Network checks run in one closure on the *resolved* socket address, allow-list
//! first, then blocked networks: an address is allowed when a rule names it as an
//! IP address or CIDR block, or when a rule names a host whose current DNS answer
//! holds it and it is a public address. A name can never open a way to loopback,
//! private, link-local or other non-public addresses (a DNS-rebinding defence);
//! the operator writes those as addresses. Every denial is logged with
//! `error.type = "network_denied"` and recorded for the call's fault report.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use ipnet::IpNet;
use wasmtime_wasi::sockets::SocketAddrUse;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

use super::output::GuestOutput;
use crate::config::PolicyConfig;

/// A policy that cannot be applied.
#[derive(Debug, thiserror::Error)]
#[error("plugin {plugin}: {problem}")]
pub struct PolicyError {
    pub plugin: String,
    pub problem: String,
}

/// What one plugin may do, validated once at load.
#[derive(Debug)]
pub struct Capabilities {
    plugin: String,
    preopens: Vec<(PathBuf, String, FsPerms)>,
    env: Vec<(String, String)>,
    network: Arc<Vec<NetworkRule>>,
    config: Arc<BTreeMap<String, String>>,
    /// Memory limit per instance, in bytes.
    pub memory_bytes: usize,
    /// Wall-clock budget of one call.
    pub timeout: std::time::Duration,
    pub fuel: Option<u64>,
    pub max_instances: u32,
}

/// The denials of one call, shared between its WASI context and the runtime.
pub type Denials = Arc<Mutex<Vec<String>>>;

/// One allow-list entry: `host:port`.
#[derive(Debug, Clone, PartialEq)]
struct NetworkRule {
    host: HostPattern,
    /// `None` allows every port.
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq)]
enum HostPattern {
    Net(IpNet),
    Name(String),
}

impl Capabilities {
    /// Validates `policy` for `plugin`.
    ///
    /// # Errors
    ///
    /// A [`PolicyError`] when a preopened directory does not exist or a network
    /// rule is malformed.
    pub fn configure(plugin: &str, policy: &PolicyConfig) -> Result<Capabilities, PolicyError> {
        let error = |problem: String| PolicyError {
            plugin: plugin.to_owned(),
            problem,
        };
        let mut preopens = Vec::new();
        for preopen in &policy.preopens {
            if !preopen.host.is_dir() {
                return Err(error(format!(
                    "preopen {} is not a directory on the host; create it or fix `host`",
                    preopen.host.display()
                )));
            }
            let perms = if preopen.writable {
                FsPerms::ReadWrite
            } else {
                FsPerms::ReadOnly
            };
            preopens.push((preopen.host.clone(), preopen.guest.clone(), perms));
        }
        let mut env = Vec::new();
        for name in &policy.env {
            match std::env::var(name) {
                Ok(value) => env.push((name.clone(), value)),
                Err(_) => {
                    tracing::warn!(plugin, variable = %name, "granted environment variable is not set on the host; the guest will not see it")
                }
            }
        }
        let network = policy
            .network
            .iter()
            .map(|rule| parse_rule(rule).map_err(|p| error(format!("network rule {rule:?}: {p}"))))
            .collect::<Result<Vec<_>, _>>()?;
        if policy.memory_mib > 4096 {
            tracing::warn!(
                plugin,
                memory_mib = policy.memory_mib,
                "memory limit above 4 GiB: a 32-bit guest cannot use more than 4 GiB"
            );
        }
        Ok(Capabilities {
            plugin: plugin.to_owned(),
            preopens,
            env,
            network: Arc::new(network),
            config: Arc::new(policy.config.clone()),
            memory_bytes: usize::try_from(policy.memory_mib.min(4096) << 20).unwrap_or(usize::MAX),
            timeout: std::time::Duration::from_millis(policy.timeout_ms),
            fuel: policy.fuel,
            max_instances: policy.max_instances,
        })
    }

    /// Whether any network rule exists (for the `openWorldHint` a tool leaves unset).
    pub fn has_network(&self) -> bool {
        !self.network.is_empty()
    }

    /// Whether any preopen is writable (for the `readOnlyHint` a tool leaves unset).
    pub fn has_writable_preopen(&self) -> bool {
        self.preopens
            .iter()
            .any(|(_, _, perms)| matches!(perms, FsPerms::ReadWrite))
    }

    /// The configuration values granted to the plugin.
    pub fn config(&self) -> Arc<BTreeMap<String, String>> {
        self.config.clone()
    }

    /// The WASI context of one call of `tool`: the granted directories and
    /// variables, the network check recording into `denials`, stdout and stderr to
    /// the log.
    ///
    /// # Errors
    ///
    /// When a preopened directory can no longer be opened.
    pub fn prepare(
        &self,
        tool: &str,
        stderr: &GuestOutput,
        stdout: &GuestOutput,
        denials: &Denials,
    ) -> wasmtime::Result<WasiCtx> {
        let mut builder = WasiCtxBuilder::new();
        builder.stdout(stdout.clone()).stderr(stderr.clone());
        for (host, guest, perms) in &self.preopens {
            builder.preopened_dir(host, guest, *perms)?;
        }
        builder.envs(&self.env);
        // TCP and UDP stay on so that every attempt reaches the check below, which
        // denies (and records) whatever the rules do not grant.
        builder.allow_tcp(true);
        builder.allow_udp(true);
        builder.allow_ip_name_lookup(
            self.network
                .iter()
                .any(|r| matches!(r.host, HostPattern::Name(_))),
        );
        let rules = self.network.clone();
        let denials = denials.clone();
        let plugin = self.plugin.clone();
        let tool = tool.to_owned();
        builder.socket_addr_check(move |addr, usage| {
            let rules = rules.clone();
            let denials = denials.clone();
            let plugin = plugin.clone();
            let tool = tool.clone();
            Box::pin(async move {
                let allowed = allows(&rules, addr, usage).await;
                if !allowed {
                    tracing::warn!(%plugin, %tool, %addr, ?usage, error.type = "network_denied", "network access denied by policy");
                    denials.lock().expect("denials lock").push(format!("network access to {addr} ({usage:?}) is not granted"));
                }
                allowed
            })
        });
        Ok(builder.build())
    }
}

/// The policy check: allow-list, then blocked networks for name-granted addresses.
async fn allows(rules: &[NetworkRule], addr: SocketAddr, usage: SocketAddrUse) -> bool {
    match usage {
        // The implicit bind of an outgoing connection or datagram socket: harmless
        // (no listening, no accepting), and letting it pass means the check of the
        // connection itself runs and names the real target when it is denied.
        SocketAddrUse::TcpBind | SocketAddrUse::UdpBind => {
            addr.ip().is_unspecified() && addr.port() == 0
        }
        // Guests are clients: no listening, no accepting.
        SocketAddrUse::TcpListen | SocketAddrUse::TcpAccept => false,
        _ => {
            for rule in rules
                .iter()
                .filter(|r| r.port.is_none_or(|p| p == addr.port()))
            {
                match &rule.host {
                    HostPattern::Net(net) if net.contains(&addr.ip()) => return true,
                    HostPattern::Net(_) => {}
                    HostPattern::Name(name) => {
                        if is_public(addr.ip())
                            && let Ok(mut answers) =
                                tokio::net::lookup_host((name.as_str(), addr.port())).await
                            && answers.any(|a| a.ip() == addr.ip())
                        {
                            return true;
                        }
                    }
                }
            }
            false
        }
    }
}

/// Addresses a DNS name may grant: not loopback, private, link-local, shared,
/// documentation, multicast or unspecified.
fn is_public(ip: IpAddr) -> bool {
    const BLOCKED: [&str; 13] = [
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "224.0.0.0/4",
        "240.0.0.0/4",
        "::/127",
        "fc00::/7",
        "fe80::/10",
        "ff00::/8",
    ];
    let ip = match ip {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map(IpAddr::V4)
            .unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    };
    !BLOCKED
        .iter()
        .any(|net| net.parse::<IpNet>().expect("a valid network").contains(&ip))
}

fn parse_rule(rule: &str) -> Result<NetworkRule, String> {
    let (host, port) = rule.rsplit_once(':').ok_or(
        "expected host:port, e.g. \"api.example.com:443\", \"10.0.0.0/8:*\" or \"[::1]:8080\"",
    )?;
    let port = match port {
        "*" => None,
        port => Some(
            port.parse::<u16>()
                .map_err(|_| format!("port {port:?} is not a number from 0 to 65535 or *"))?,
        ),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let pattern = if let Ok(net) = host.parse::<IpNet>() {
        HostPattern::Net(net)
    } else if let Ok(ip) = host.parse::<IpAddr>() {
        HostPattern::Net(IpNet::from(ip))
    } else if !host.is_empty()
        && host.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
    {
        HostPattern::Name(host.to_ascii_lowercase())
    } else {
        return Err(format!(
            "{host:?} is neither an IP address, a CIDR block nor a DNS name"
        ));
    };
    Ok(NetworkRule {
        host: pattern,
        port,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(list: &[&str]) -> Vec<NetworkRule> {
        list.iter().map(|r| parse_rule(r).unwrap()).collect()
    }

    #[tokio::test]
    async fn nothing_is_allowed_without_rules() {
        let addr: SocketAddr = "127.0.0.1:80".parse().unwrap();
        assert!(!allows(&[], addr, SocketAddrUse::TcpConnect).await);
        assert!(!allows(&[], "0.0.0.0:8080".parse().unwrap(), SocketAddrUse::TcpBind).await);
        assert!(!allows(&[], "0.0.0.0:0".parse().unwrap(), SocketAddrUse::TcpListen).await);
    }

    #[tokio::test]
    async fn addresses_and_blocks_are_allowed_as_written() {
        let rules = rules(&["127.0.0.1:8080", "10.1.0.0/16:*", "[::1]:9000"]);
        assert!(
            allows(
                &rules,
                "127.0.0.1:8080".parse().unwrap(),
                SocketAddrUse::TcpConnect
            )
            .await
        );
        assert!(
            !allows(
                &rules,
                "127.0.0.1:8081".parse().unwrap(),
                SocketAddrUse::TcpConnect
            )
            .await
        );
        assert!(
            allows(
                &rules,
                "10.1.200.3:5432".parse().unwrap(),
                SocketAddrUse::TcpConnect
            )
            .await
        );
        assert!(
            !allows(
                &rules,
                "10.2.0.1:5432".parse().unwrap(),
                SocketAddrUse::TcpConnect
            )
            .await
        );
        assert!(
            allows(
                &rules,
                "[::1]:9000".parse().unwrap(),
                SocketAddrUse::TcpConnect
            )
            .await
        );
        assert!(
            !allows(
                &rules,
                "127.0.0.1:8080".parse().unwrap(),
                SocketAddrUse::TcpListen
            )
            .await
        );
    }

    #[tokio::test]
    async fn a_name_never_grants_a_non_public_address() {
        // `localhost` resolves to loopback: allowed by name, refused as resolved.
        let rules = rules(&["localhost:8080"]);
        assert!(
            !allows(
                &rules,
                "127.0.0.1:8080".parse().unwrap(),
                SocketAddrUse::TcpConnect
            )
            .await
        );
        assert!(!is_public("192.168.1.1".parse().unwrap()));
        assert!(!is_public("::ffff:127.0.0.1".parse().unwrap()));
        assert!(is_public("93.184.216.34".parse().unwrap()));
    }

    #[test]
    fn malformed_rules_are_refused_with_a_hint() {
        for bad in [
            "example.com",
            "example.com:http",
            "ex ample.com:80",
            ":80",
            "1.2.3.4:99999",
        ] {
            assert!(parse_rule(bad).is_err(), "{bad}");
        }
    }
}
