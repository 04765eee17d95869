//! The WIT contract as Rust types: what wasmtime's `bindgen!` generates from the
//! two packages a component may be built against, `wit/0.1.0/` (frozen) and
//! `wit/` (`0.2.0`, which adds the optional exports `prompts`, `resources` and
//! `completion`).
//!
//! The two packages share one set of Rust types: `types` is the same text in
//! both (a test in `tests/wit_package.rs` keeps it so), and component types are
//! checked by structure, so the `0.2.0` bindings use the `0.1.0` types through
//! `with`. The `host` import is generated per package (its functions are linked
//! under each package's name) and implemented once, in `host_api.rs`.
//!
//! The runtime links these, instantiates components through their
//! pre-instantiations, and lifts a guest's answer in these types;
//! `guest_result.rs` turns that answer into a [`crate::result::ToolResult`].
//! Nothing outside the runtime needs wasmtime's types: the result object knows
//! nothing of them.

use jiff::Timestamp;

/// Bindings of `toolhost:plugin@0.1.0`.
pub mod v0_1 {
    /// The `plugin` world: the `tool` export and the `host` import.
    pub mod plugin {
        wasmtime::component::bindgen!({
            path: "../wit/0.1.0",
            world: "plugin",
            imports: { default: async | trappable },
            exports: { default: async },
        });
    }

    /// The `legacy-app` world, sharing the types and `host` of [`plugin`].
    pub mod legacy_app {
        wasmtime::component::bindgen!({
            path: "../wit/0.1.0",
            world: "legacy-app",
            imports: { default: async | trappable },
            exports: { default: async },
            with: {
                "toolhost:plugin/types": super::plugin::toolhost::plugin::types,
                "toolhost:plugin/host": super::plugin::toolhost::plugin::host,
            },
        });
    }
}

/// Bindings of `toolhost:plugin@0.2.0`, with the types of [`v0_1`].
pub mod v0_2 {
    /// The `full` world: `tool`, `prompts`, `resources` and `completion`
    /// exports (a component may export only some of the last three) and the
    /// `host` import.
    pub mod full {
        wasmtime::component::bindgen!({
            path: "../wit",
            world: "full",
            imports: { default: async | trappable },
            exports: { default: async },
            with: {
                "toolhost:plugin/types": super::super::v0_1::plugin::toolhost::plugin::types,
            },
        });
    }

    /// The `legacy-app` world, sharing the types and `host` of [`full`].
    pub mod legacy_app {
        wasmtime::component::bindgen!({
            path: "../wit",
            world: "legacy-app",
            imports: { default: async | trappable },
            exports: { default: async },
            with: {
                "toolhost:plugin/types": super::super::v0_1::plugin::toolhost::plugin::types,
                "toolhost:plugin/host": super::full::toolhost::plugin::host,
            },
        });
    }

    pub use full::exports::toolhost::plugin::{completion, prompts, resources, tasks};
}

/// The WIT types of the `types` interface (the same in both packages).
pub use v0_1::plugin::toolhost::plugin::types as wit_types;

/// The WIT form of a point in time.
pub fn to_wit_datetime(at: Timestamp) -> wit_types::Datetime {
    wit_types::Datetime {
        seconds: at.as_second(),
        nanoseconds: at.subsec_nanosecond().unsigned_abs(),
    }
}
