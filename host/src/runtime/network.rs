//! Which network addresses a sandboxed guest or an app webhook may reach: an
//! allow-list of `host:port` rules, checked on the *resolved* socket address.
//!
//! An address is allowed when a rule names it as an IP address or CIDR block, or
//! when a rule names a host whose current DNS answer holds it and it is a public
//! address. A name can never open a way to loopback, private, link-local or other
//! non-public addresses (a DNS-rebinding defence); the operator writes those as
//! addresses. With no rules, every address is refused.

use std::net::{IpAddr, SocketAddr};

use ipnet::IpNet;
use wasmtime_wasi::sockets::SocketAddrUse;

/// A parsed allow-list; the default (no rules) refuses everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NetworkPolicy {
    rules: Vec<NetworkRule>,
}

impl NetworkPolicy {
    /// Parses rules such as `"api.example.com:443"`, `"10.0.0.0/8:*"` or
    /// `"[::1]:8080"`.
    ///
    /// # Errors
    ///
    /// A message naming the first malformed rule and what a good one looks like.
    pub fn parse<S: AsRef<str>>(rules: &[S]) -> Result<NetworkPolicy, String> {
        rules
            .iter()
            .map(|rule| {
                let rule = rule.as_ref();
                parse_rule(rule).map_err(|problem| format!("network rule {rule:?}: {problem}"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|rules| NetworkPolicy { rules })
    }

    /// Whether there are no rules (nothing is reachable).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Whether a rule names a host, so name lookup must be possible.
    pub fn uses_names(&self) -> bool {
        self.rules
            .iter()
            .any(|rule| matches!(rule.host, HostPattern::Name(_)))
    }

    /// Whether `addr` may be used as `usage`.
    pub async fn allows(&self, addr: SocketAddr, usage: SocketAddrUse) -> bool {
        allows(&self.rules, addr, usage).await
    }

    /// Whether an outgoing TCP connection to `addr` is allowed.
    pub async fn allows_connect(&self, addr: SocketAddr) -> bool {
        self.allows(addr, SocketAddrUse::TcpConnect).await
    }
}

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
