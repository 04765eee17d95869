//! Socket creation for plugins without a network rule: refused before a host
//! socket (a descriptor) exists, and recorded as a denial.
//!
//! The WASI context of such a plugin has TCP and UDP off ([`super::Capabilities`]),
//! so `create-tcp-socket` and `create-udp-socket` answer `access-denied` without
//! touching the host. These wrappers, defined over WASI's own in the linker, call
//! WASI's and record the refusal, so the call's fault report says what was denied
//! (`permission_denied`), as the address check does for plugins with rules.

use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::p2::bindings::sockets::network::{ErrorCode, IpAddressFamily};
use wasmtime_wasi::p2::bindings::sockets::{tcp_create_socket, udp_create_socket};
use wasmtime_wasi::p2::{SocketError, TcpSocket, UdpSocket};
use wasmtime_wasi::sockets::WasiSocketsView;

use super::state::CallState;

/// The version of `wasi:sockets` wasmtime-wasi defines (guests importing older
/// 0.2 versions are linked to it).
const SOCKETS: &str = "0.2.12";

/// Wraps WASI's socket constructors in `linker` (after WASI was added).
///
/// # Errors
///
/// When the linker refuses the definitions.
pub fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    linker
        .instance(&format!("wasi:sockets/tcp-create-socket@{SOCKETS}"))?
        .func_wrap(
            "create-tcp-socket",
            |mut store, (family,): (IpAddressFamily,)| {
                let state: &mut CallState = store.data_mut();
                let created =
                    tcp_create_socket::Host::create_tcp_socket(&mut state.sockets(), family);
                answer(state, "TCP", created)
            },
        )?;
    linker
        .instance(&format!("wasi:sockets/udp-create-socket@{SOCKETS}"))?
        .func_wrap_async(
            "create-udp-socket",
            |mut store, (family,): (IpAddressFamily,)| {
                Box::new(async move {
                    let state: &mut CallState = store.data_mut();
                    let created =
                        udp_create_socket::Host::create_udp_socket(&mut state.sockets(), family)
                            .await;
                    answer(state, "UDP", created)
                })
            },
        )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// WASI's answer, with a refusal recorded for a plugin that has no network rule.
fn answer<T>(
    state: &mut CallState,
    protocol: &str,
    created: Result<Resource<T>, SocketError>,
) -> wasmtime::Result<(Result<Resource<T>, ErrorCode>,)> {
    match created {
        Ok(socket) => Ok((Ok(socket),)),
        Err(error) => {
            let code = error.downcast()?;
            if code == ErrorCode::AccessDenied && state.network.is_empty() {
                state.deny_socket(protocol);
            }
            Ok((Err(code),))
        }
    }
}

// The resources WASI's constructors return, named so the wrappers' types are
// visible.
#[allow(dead_code)]
type _Sockets = (TcpSocket, UdpSocket);
