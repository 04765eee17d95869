//! Which network addresses a sandboxed guest or an app webhook may reach: an
//! allow-list of `host:port` rules, checked on the *resolved* socket address.
//!
//! An address is allowed when a rule names it as an IP address or CIDR block, or
//! when a rule names a host whose current DNS answer holds it and it is a public
//! address. A name can never open a way to loopback, private, link-local or other
//! non-public addresses (a DNS-rebinding defence); the operator writes those as
//! addresses. With no rules, every address is refused.
//!
//! A guest may look up only the names the rules name ([`NetworkPolicy::may_look_up`],
//! enforced by the filtered `ip-name-lookup` of `lookup.rs`).

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

    /// Whether a guest may look `name` up: a rule names it (ASCII case aside), or
    /// it is an IP address literal, which is answered without a query. Any other
    /// name is refused before a query leaves the host: the name itself could
    /// carry data out.
    pub fn may_look_up(&self, name: &str) -> bool {
        name.parse::<IpAddr>().is_ok()
            || self.rules.iter().any(
                |rule| matches!(&rule.host, HostPattern::Name(allowed) if allowed.eq_ignore_ascii_case(name)),
            )
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

/// Networks a DNS name never grants: every block of the IANA IPv4 and IPv6
/// special-purpose address registries (globally reachable or not: none of them is
/// where a named service lives), the deprecated IPv4-compatible and site-local
/// IPv6 ranges, and the translation and tunnelling prefixes that embed an IPv4
/// address (NAT64, 6to4, Teredo), through which a name could reach a private IPv4
/// address. IPv6 outside `2000::/3` (global unicast) is refused as well, so the
/// IPv6 entries outside it are listed for their class names only. Each class has
/// a test.
const NOT_PUBLIC: &[(&str, &str)] = &[
    // IPv4 (RFC 6890 and the IANA IPv4 special-purpose address registry)
    ("0.0.0.0/8", "this network"),
    ("10.0.0.0/8", "private"),
    ("100.64.0.0/10", "shared address space (CGNAT)"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local"),
    ("172.16.0.0/12", "private"),
    ("192.0.0.0/24", "IETF protocol assignments"),
    ("192.0.2.0/24", "documentation (TEST-NET-1)"),
    ("192.31.196.0/24", "AS112-v4"),
    ("192.52.193.0/24", "AMT"),
    ("192.88.99.0/24", "deprecated 6to4 relay anycast"),
    ("192.168.0.0/16", "private"),
    ("192.175.48.0/24", "direct delegation AS112"),
    ("198.18.0.0/15", "benchmarking"),
    ("198.51.100.0/24", "documentation (TEST-NET-2)"),
    ("203.0.113.0/24", "documentation (TEST-NET-3)"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved, and limited broadcast"),
    // IPv6 (RFC 6890 and the IANA IPv6 special-purpose address registry)
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("::/96", "IPv4-compatible (deprecated)"),
    ("::ffff:0:0:0/96", "IPv4-translated (SIIT)"),
    ("64:ff9b::/96", "NAT64 well-known prefix"),
    ("64:ff9b:1::/48", "NAT64 local-use prefix"),
    ("::/8", "reserved by the IETF"),
    ("100::/64", "discard-only"),
    ("100:0:0:1::/64", "dummy prefix"),
    ("2001::/32", "Teredo"),
    ("2001:2::/48", "benchmarking"),
    ("2001:10::/28", "ORCHID (deprecated)"),
    ("2001:20::/28", "ORCHIDv2"),
    ("2001::/23", "IETF protocol assignments"),
    ("2001:db8::/32", "documentation"),
    ("2002::/16", "6to4"),
    ("2620:4f:8000::/48", "direct delegation AS112"),
    ("3fff::/20", "documentation"),
    ("5f00::/16", "segment routing (SRv6) SIDs"),
    ("fc00::/7", "unique local"),
    ("fe80::/10", "link-local"),
    ("fec0::/10", "site-local (deprecated)"),
    ("ff00::/8", "multicast"),
];

/// Whether a DNS name may grant `ip`: none of [`NOT_PUBLIC`], and for IPv6 inside
/// global unicast. An IPv4-mapped address (`::ffff:a.b.c.d`) is judged as the
/// IPv4 address it carries.
fn is_public(ip: IpAddr) -> bool {
    not_public_class(ip).is_none()
}

/// Why a name may not grant `ip` (its class), or `None` when it may.
pub(super) fn not_public_class(ip: IpAddr) -> Option<&'static str> {
    let ip = match ip {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map(IpAddr::V4)
            .unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    };
    let within = |net: &str| net.parse::<IpNet>().expect("a valid network").contains(&ip);
    if let Some((_, class)) = NOT_PUBLIC.iter().find(|(net, _)| within(net)) {
        return Some(class);
    }
    if ip.is_ipv6() && !within("2000::/3") {
        return Some("not IPv6 global unicast");
    }
    None
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

    /// One test per class of [`NOT_PUBLIC`]: an address inside it (the first, the
    /// last, or one with a private IPv4 address embedded) is refused with that
    /// class's name.
    macro_rules! never_granted_by_a_name {
        ($($test:ident: $class:literal => [$($addr:literal),+ $(,)?];)+) => {$(
            #[test]
            fn $test() {
                for addr in [$($addr),+] {
                    let ip: IpAddr = addr.parse().unwrap();
                    assert_eq!(not_public_class(ip), Some($class), "{addr}");
                    assert!(!is_public(ip), "{addr}");
                }
            }
        )+};
    }

    never_granted_by_a_name! {
        this_network: "this network" => ["0.0.0.0", "0.255.255.255"];
        private_10: "private" => ["10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1"];
        cgnat: "shared address space (CGNAT)" => ["100.64.0.1", "100.127.255.255"];
        loopback_v4: "loopback" => ["127.0.0.1", "127.255.255.254", "::ffff:127.0.0.1"];
        link_local_v4: "link-local" => ["169.254.169.254"];
        ietf_protocol_assignments_v4: "IETF protocol assignments" => ["192.0.0.1", "192.0.0.170", "192.0.0.255"];
        documentation_test_net_1: "documentation (TEST-NET-1)" => ["192.0.2.0", "192.0.2.255"];
        as112_v4: "AS112-v4" => ["192.31.196.1"];
        amt_v4: "AMT" => ["192.52.193.1"];
        six_to_four_relay: "deprecated 6to4 relay anycast" => ["192.88.99.1"];
        direct_delegation_as112_v4: "direct delegation AS112" => ["192.175.48.1"];
        benchmarking_v4: "benchmarking" => ["198.18.0.0", "198.19.255.255"];
        documentation_test_net_2: "documentation (TEST-NET-2)" => ["198.51.100.7"];
        documentation_test_net_3: "documentation (TEST-NET-3)" => ["203.0.113.9"];
        multicast_v4: "multicast" => ["224.0.0.1", "239.255.255.255"];
        reserved_and_broadcast: "reserved, and limited broadcast" => ["240.0.0.1", "255.255.255.255"];
        unspecified_v6: "unspecified" => ["::"];
        loopback_v6: "loopback" => ["::1"];
        ipv4_compatible: "IPv4-compatible (deprecated)" => ["::10.0.0.1", "::93.184.216.34"];
        ipv4_translated: "IPv4-translated (SIIT)" => ["::ffff:0:a00:1"];
        reserved_v6: "reserved by the IETF" => ["::1:0:0:0", "ff:ffff::1"];
        nat64_well_known: "NAT64 well-known prefix" => ["64:ff9b::a00:1", "64:ff9b::5db8:d822"];
        nat64_local_use: "NAT64 local-use prefix" => ["64:ff9b:1::a00:1", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff"];
        discard_only: "discard-only" => ["100::", "100::ffff:ffff:ffff:ffff"];
        dummy_prefix: "dummy prefix" => ["100:0:0:1::1"];
        teredo: "Teredo" => ["2001::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2"];
        benchmarking_v6: "benchmarking" => ["2001:2::1", "2001:2:0:ffff::1"];
        orchid: "ORCHID (deprecated)" => ["2001:10::1", "2001:1f:ffff::1"];
        orchid_v2: "ORCHIDv2" => ["2001:20::1", "2001:2f:ffff::1"];
        ietf_protocol_assignments_v6: "IETF protocol assignments" => ["2001:1::1", "2001:3::1", "2001:4:112::1", "2001:1ff::1"];
        documentation_v6: "documentation" => ["2001:db8::1", "2001:db8:ffff::1", "3fff::1", "3fff:fff::1"];
        six_to_four: "6to4" => ["2002::1", "2002:a00:1::1", "2002:ffff::1"];
        direct_delegation_as112_v6: "direct delegation AS112" => ["2620:4f:8000::1"];
        segment_routing: "segment routing (SRv6) SIDs" => ["5f00::1"];
        unique_local: "unique local" => ["fc00::1", "fd12:3456::1"];
        link_local_v6: "link-local" => ["fe80::1"];
        site_local: "site-local (deprecated)" => ["fec0::1"];
        multicast_v6: "multicast" => ["ff02::1", "ff0e::1"];
        outside_global_unicast: "not IPv6 global unicast" => ["4000::1", "e000::1", "1234::1"];
    }

    #[test]
    fn public_addresses_next_to_the_blocks_may_be_granted_by_a_name() {
        for addr in [
            "93.184.216.34",
            "8.8.8.8",
            "1.1.1.1",
            "192.0.3.1",
            "198.17.255.255",
            "198.20.0.1",
            "100.128.0.1",
            "::ffff:8.8.8.8",
            "2606:2800:220:1:248:1893:25c8:1946",
            "2a00:1450:4001:80b::200e",
            "2001:200::1",
            "2001:db9::1",
            "2003::1",
            "3ffe:ffff::1",
            "2620:4f:8001::1",
        ] {
            let ip: IpAddr = addr.parse().unwrap();
            assert_eq!(not_public_class(ip), None, "{addr}");
        }
    }

    #[test]
    fn only_names_in_the_rules_may_be_looked_up() {
        let policy =
            NetworkPolicy::parse(&["api.example.com:443", "localhost:8080", "10.0.0.0/8:*"])
                .unwrap();
        for ok in [
            "api.example.com",
            "API.Example.COM",
            "localhost",
            "10.1.2.3",
            "::1",
        ] {
            assert!(policy.may_look_up(ok), "{ok}");
        }
        for refused in [
            "exfil-6c65616b.attacker.example",
            "example.com",
            "other.api.example.com",
            "api.example.com.",
            "localhos%74",
            "ip6-localhost",
            "",
            "[::1]",
        ] {
            assert!(!policy.may_look_up(refused), "{refused}");
        }
        assert!(!NetworkPolicy::default().may_look_up("localhost"));
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
