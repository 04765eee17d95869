//! A filtered `wasi:sockets/ip-name-lookup`: a guest may look up only the names
//! its plugin's network rules name (and IP address literals, which send no query).
//!
//! wasmtime-wasi's own lookup would resolve any name once lookups are on, and the
//! query itself leaves the host: a guest could carry data out in the names it
//! asks for (`<secret>.attacker.example`) even when every connection is refused.
//! This module's `resolve-addresses` shadows wasmtime-wasi's in the linker: it
//! checks the name against the rules and only then delegates to wasmtime-wasi's
//! implementation, so the resolution itself (and the address stream) stays theirs.
//! A refused name answers `access-denied`, is logged with
//! `error.type = "network_denied"`, and is recorded as a denial of the call, so a
//! guest that fails on it ends `permission_denied` naming the name.

use wasmtime::component::{HasData, Linker, Resource};
use wasmtime_wasi::p2::bindings::sockets::ip_name_lookup::{
    self, HostResolveAddressStream, ResolveAddressStream,
};
use wasmtime_wasi::p2::bindings::sockets::network::{self, ErrorCode, IpAddress};
use wasmtime_wasi::p2::{DynPollable, Network, SocketError};
use wasmtime_wasi::sockets::WasiSocketsCtxView;

use super::network::NetworkPolicy;
use super::policy::{Denials, record_denial};
use super::state::CallState;

/// The lookup host of one call: wasmtime-wasi's sockets view with the filter.
pub struct FilteredLookup<'a> {
    sockets: WasiSocketsCtxView<'a>,
    rules: &'a NetworkPolicy,
    denials: &'a Denials,
    plugin: &'a str,
    tool: &'a str,
}

struct Filtered;

impl HasData for Filtered {
    type Data<'a> = FilteredLookup<'a>;
}

fn view(state: &mut CallState) -> FilteredLookup<'_> {
    FilteredLookup {
        sockets: WasiSocketsCtxView {
            ctx: state.wasi.sockets(),
            table: &mut state.table,
        },
        rules: &state.network,
        denials: &state.denials,
        plugin: &state.plugin,
        tool: &state.tool,
    }
}

/// Replaces `wasi:sockets/ip-name-lookup` in `linker` (which already holds
/// wasmtime-wasi's) with the filtered one.
///
/// # Errors
///
/// When the linker refuses the definitions.
pub fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let added = ip_name_lookup::add_to_linker::<CallState, Filtered>(linker, view);
    linker.allow_shadowing(false);
    added
}

/// The longest name quoted in a denial (the longest DNS name has 253 characters).
const QUOTED_NAME_CHARS: usize = 253;

impl ip_name_lookup::Host for FilteredLookup<'_> {
    fn resolve_addresses(
        &mut self,
        network: Resource<Network>,
        name: String,
    ) -> Result<Resource<ResolveAddressStream>, SocketError> {
        if !self.rules.may_look_up(&name) {
            let quoted: String = name.chars().take(QUOTED_NAME_CHARS).collect();
            record_denial(
                self.denials,
                self.plugin,
                self.tool,
                format!("name lookup of {quoted:?} is not granted"),
            );
            return Err(ErrorCode::AccessDenied.into());
        }
        ip_name_lookup::Host::resolve_addresses(&mut self.sockets, network, name)
    }
}

impl HostResolveAddressStream for FilteredLookup<'_> {
    fn resolve_next_address(
        &mut self,
        stream: Resource<ResolveAddressStream>,
    ) -> Result<Option<IpAddress>, SocketError> {
        HostResolveAddressStream::resolve_next_address(&mut self.sockets, stream)
    }

    fn subscribe(
        &mut self,
        stream: Resource<ResolveAddressStream>,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        HostResolveAddressStream::subscribe(&mut self.sockets, stream)
    }

    fn drop(&mut self, stream: Resource<ResolveAddressStream>) -> wasmtime::Result<()> {
        HostResolveAddressStream::drop(&mut self.sockets, stream)
    }
}

// The error-code conversions `ip-name-lookup` uses come from `network`: delegated.
impl network::Host for FilteredLookup<'_> {
    fn convert_error_code(&mut self, error: SocketError) -> wasmtime::Result<ErrorCode> {
        network::Host::convert_error_code(&mut self.sockets, error)
    }

    fn network_error_code(
        &mut self,
        error: Resource<wasmtime::Error>,
    ) -> wasmtime::Result<Option<ErrorCode>> {
        network::Host::network_error_code(&mut self.sockets, error)
    }
}

impl network::HostNetwork for FilteredLookup<'_> {
    fn drop(&mut self, network: Resource<Network>) -> wasmtime::Result<()> {
        network::HostNetwork::drop(&mut self.sockets, network)
    }
}
