//! The floor of a call: wasmtime alone instantiating a tool component in a
//! fresh store with an empty WASI context and calling its `call` export through
//! toolhost's bindings. Nothing of toolhost's own runs: no policy, no argument
//! or output checks, no rendering.
//!
//! Shared, by `#[path]`, by criterion's `call/floor` (`benches/call.rs`, P1)
//! and by the `wasmtime_add` server (P2s's sandbox-only yardstick).

use std::path::Path;

use toolhost::runtime::Runtime;
use toolhost::runtime::bindings::v0_2::full::exports::toolhost::plugin::tool::GuestIndices;
use toolhost::runtime::bindings::wit_types;
use wasmtime::Store;
use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, InstancePre, Linker, ResourceTable};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// The state of the floor's store: an empty WASI context.
pub struct Floor {
    wasi: WasiCtx,
    table: ResourceTable,
}

impl WasiView for Floor {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// A component ready to instantiate, with the index of its `tool` export.
pub type FloorPre = (InstancePre<Floor>, GuestIndices);

/// The component at `path`, compiled by `runtime`'s engine and linked to WASI
/// alone (toolhost's own imports trap).
pub fn floor_pre(runtime: &Runtime, path: &Path) -> FloorPre {
    let engine = runtime.engine();
    let component = Component::from_file(engine, path).expect("compiles");
    let mut linker = Linker::<Floor>::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).expect("wasi");
    // `add` calls no host function; the `host` interface traps if it did. (Only
    // toolhost's own imports: `define_unknown_imports_as_traps` matches names
    // exactly, so it would also stub a WASI import of a newer 0.2.x version than
    // the one the linker names, which the linker's semver matching already
    // serves, and the two resource types then clash.)
    let types = component.component_type();
    for (name, item) in types.imports(engine) {
        let ComponentItem::ComponentInstance(instance) = item.ty else {
            continue;
        };
        if !name.starts_with("toolhost:") {
            continue;
        }
        let mut stubs = linker.instance(name).expect("an instance");
        for (function, item) in instance.exports(engine) {
            if let ComponentItem::ComponentFunc(_) = item.ty {
                stubs
                    .func_new(function, |_, _, _, _| {
                        Err(wasmtime::Error::msg("the floor offers no host function"))
                    })
                    .expect("a stub");
            }
        }
    }
    let pre = linker.instantiate_pre(&component).expect("links");
    let tool = GuestIndices::new(&pre).expect("exports toolhost:plugin/tool@0.2.0");
    (pre, tool)
}

/// One call of `tool` with the JSON text `args` in a fresh instance: the data
/// it answers.
///
/// # Panics
///
/// When the tool fails or answers no data.
pub async fn floor_call((pre, indices): &FloorPre, tool: &str, args: &str) -> String {
    let mut store = Store::new(
        pre.engine(),
        Floor {
            wasi: WasiCtx::builder().build(),
            table: ResourceTable::new(),
        },
    );
    store.set_epoch_deadline(u64::MAX / 2);
    let instance = pre.instantiate_async(&mut store).await.expect("instance");
    let context = wit_types::CallContext {
        caller: None,
        request_id: "1".into(),
        deadline: None,
    };
    let answer = indices
        .load(&mut store, &instance)
        .expect("the tool export")
        .call_call(&mut store, tool, &args.to_owned(), &context)
        .await
        .expect("call");
    match answer.outcome {
        wit_types::Outcome::Success(data) => data.expect("data"),
        wit_types::Outcome::Failure(e) => panic!("{}", e.message),
    }
}
