//! The WIT contract as Rust types: what wasmtime's `bindgen!` generates from
//! `wit/` for the two worlds a component may implement.
//!
//! The runtime links these (the `host` interface is implemented in
//! `host_api.rs`), instantiates components through their pre-instantiations,
//! and lifts a guest's answer in these types; `guest_result.rs` turns that
//! answer into a [`crate::result::ToolResult`]. Nothing outside the runtime
//! needs wasmtime's types: the result object knows nothing of them.

use jiff::Timestamp;

/// Bindings of the `plugin` world: the `tool` export and the `host` import.
pub mod plugin {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "plugin",
        imports: { default: async | trappable },
        exports: { default: async },
    });
}

/// Bindings of the `legacy-app` world, sharing the types of [`plugin`].
pub mod legacy_app {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "legacy-app",
        imports: { default: async | trappable },
        exports: { default: async },
        with: {
            "toolhost:plugin/types": super::plugin::toolhost::plugin::types,
            "toolhost:plugin/host": super::plugin::toolhost::plugin::host,
        },
    });
}

/// The WIT types of the `types` interface.
pub use plugin::toolhost::plugin::types as wit_types;

/// The WIT form of a point in time.
pub fn to_wit_datetime(at: Timestamp) -> wit_types::Datetime {
    wit_types::Datetime {
        seconds: at.as_second(),
        nanoseconds: at.subsec_nanosecond().unsigned_abs(),
    }
}
