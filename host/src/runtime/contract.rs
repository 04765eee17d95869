//! Which contract a component implements, and how to call it: the package
//! version it was built against (`toolhost:plugin@0.1.0` or `@0.2.0`), its world
//! (`plugin` or `legacy-app`), and the export indices of each interface it
//! offers, looked up once at load.
//!
//! A `0.2.0` component may export `prompts`, `resources`, `completion` and
//! `tasks` beside `tool` (or `app`); each is optional, and one that is exported must have the
//! shape of the package, or the component is refused at load.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};

use tracing::Instrument as _;
use wasmtime::Engine;
use wasmtime::Store;
use wasmtime::component::{
    Component, ComponentExportIndex, ComponentNamedList, Instance, InstancePre, Lift, Lower,
    TypedFunc,
};

use super::bindings::v0_2::{completion, prompts, resources, tasks};
use super::bindings::{v0_1, v0_2, wit_types};
use super::state::CallState;
use crate::config::World;

/// A version of the `toolhost:plugin` package.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// The first: tools and legacy apps only (frozen in `wit/0.1.0/`).
    V0_1,
    /// Adds the optional exports `prompts`, `resources` and `completion`.
    V0_2,
}

impl Version {
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V0_1 => "0.1.0",
            Version::V0_2 => "0.2.0",
        }
    }
}

/// The world and the package version of a component, by its exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Contract {
    pub world: World,
    pub version: Version,
}

impl Contract {
    /// What `component` implements.
    ///
    /// # Errors
    ///
    /// When it exports neither `tool` nor `app` of a known version, with the
    /// list of what it does export.
    pub fn detect(engine: &Engine, component: &Component) -> Result<Contract, String> {
        let exports: Vec<String> = component
            .component_type()
            .exports(engine)
            .map(|(name, _)| name.to_owned())
            .collect();
        let has = |name: &str| exports.iter().any(|e| e == name);
        for version in [Version::V0_2, Version::V0_1] {
            let v = version.as_str();
            if has(&format!("toolhost:plugin/tool@{v}")) {
                return Ok(Contract {
                    world: World::Plugin,
                    version,
                });
            }
            if has(&format!("toolhost:plugin/app@{v}")) {
                return Ok(Contract {
                    world: World::LegacyApp,
                    version,
                });
            }
        }
        Err(format!(
            "exports neither toolhost:plugin/tool (world plugin) nor toolhost:plugin/app (world legacy-app) of version 0.2.0 or 0.1.0; it exports: {}. Build it against wit/ of this toolhost",
            if exports.is_empty() {
                "nothing".to_owned()
            } else {
                exports.join(", ")
            }
        ))
    }
}

/// The entry point of each contract.
enum Entry {
    Tool01(v0_1::plugin::exports::toolhost::plugin::tool::GuestIndices),
    App01(v0_1::legacy_app::exports::toolhost::plugin::app::GuestIndices),
    Tool02(v0_2::full::exports::toolhost::plugin::tool::GuestIndices),
    App02(v0_2::legacy_app::exports::toolhost::plugin::app::GuestIndices),
}

/// What a component describes at load, as the bindings lift it.
pub(super) struct Described {
    pub(super) tools: Vec<wit_types::ToolDescriptor>,
    pub(super) prompts: Vec<prompts::PromptDescriptor>,
    pub(super) resources: Vec<resources::ResourceDescriptor>,
    pub(super) templates: Vec<resources::TemplateDescriptor>,
    /// The tools that may run as tasks, by name.
    pub(super) tasks: Vec<(String, tasks::TaskSupport)>,
}

/// What a guest answered a call, lifted out of its instance.
pub(super) enum Answer {
    Plugin(Box<wit_types::ToolResult>),
    App(String),
}

/// The signature of a `call` export, as the host calls it.
trait CallSignature {
    type Params<'a>: ComponentNamedList + Lower;
    type Return: ComponentNamedList + Lift;
}

/// `tool.call`: `func(name: string, arguments: json, context: call-context) -> tool-result`.
struct ToolCall;

impl CallSignature for ToolCall {
    type Params<'a> = (&'a str, &'a str, &'a wit_types::CallContext);
    type Return = (wit_types::ToolResult,);
}

/// `app.call`: `func(name: string, arguments: json, context: call-context) -> string`.
struct AppCall;

impl CallSignature for AppCall {
    type Params<'a> = (&'a str, &'a str, &'a wit_types::CallContext);
    type Return = (String,);
}

/// The `call` export of a component's `tool` or `app` interface, of the
/// signature `S`: found once at load, and type-checked once, in the first
/// instance that calls it.
///
/// The bindings' `load` type-checks every function of the interface (`describe`
/// too) in every instance: about 6,000 instructions a call, and over a
/// microsecond (issue #17). The types of an export are fixed by the component
/// and the linker, that is by the [`InstancePre`] every instance of it comes
/// from, so one check holds for all of them.
struct CallExport<S> {
    index: ComponentExportIndex,
    checked: AtomicBool,
    signature: PhantomData<S>,
}

impl<S: CallSignature> CallExport<S> {
    /// The `call` function of the interface `interface` of `pre`'s component.
    fn find<T>(pre: &InstancePre<T>, interface: &str) -> Result<Self, String> {
        let component = pre.component();
        let index = component
            .get_export_index(None, interface)
            .and_then(|instance| component.get_export_index(Some(&instance), "call"))
            .ok_or_else(|| format!("its export {interface} has no function `call`"))?;
        Ok(CallExport {
            index,
            checked: AtomicBool::new(false),
            signature: PhantomData,
        })
    }

    /// The function in `instance`, typed as `S`.
    ///
    /// # Errors
    ///
    /// When the instance has no such export, or (until one instance passed the
    /// check) its type is not `S`.
    ///
    /// # Safety
    ///
    /// `instance` is an instance of the `InstancePre` given to
    /// [`CallExport::find`]: once an instance passed the check, later ones are
    /// not checked, and only an instance of the same pre-instantiation is known
    /// to have the same types.
    unsafe fn typed<'a, T>(
        &self,
        store: &mut Store<T>,
        instance: &Instance,
    ) -> wasmtime::Result<TypedFunc<S::Params<'a>, S::Return>> {
        if !self.checked.load(Ordering::Acquire) {
            let typed = instance.get_typed_func(&mut *store, self.index)?;
            self.checked.store(true, Ordering::Release);
            return Ok(typed);
        }
        let func = instance
            .get_func(&mut *store, self.index)
            .ok_or_else(|| wasmtime::format_err!("the instance has no export `call`"))?;
        // SAFETY: the export had the type `S` in an instance of the same
        // `InstancePre` (checked above; the caller vouches for `instance`), and
        // the component and the linker of an `InstancePre`, which fix the types
        // of its exports, are the same for all its instances. `S` is fixed by
        // this value's type.
        Ok(unsafe { TypedFunc::new_unchecked(func) })
    }
}

/// The `call` export, of a tool or of an app.
enum Call {
    Tool(CallExport<ToolCall>),
    App(CallExport<AppCall>),
}

/// A component, linked and ready to instantiate, with the indices of what it
/// exports.
pub(super) struct Ready {
    pre: InstancePre<CallState>,
    entry: Entry,
    call: Call,
    prompts: Option<prompts::GuestIndices>,
    resources: Option<resources::GuestIndices>,
    completion: Option<completion::GuestIndices>,
    tasks: Option<tasks::GuestIndices>,
}

impl Ready {
    /// Looks up the exports of `contract` in `pre`.
    ///
    /// # Errors
    ///
    /// When an export the component has does not have the package's shape.
    pub(super) fn new(pre: InstancePre<CallState>, contract: Contract) -> Result<Ready, String> {
        let v = contract.version.as_str();
        let wrong = |interface: &'static str| {
            move |e: wasmtime::Error| {
                format!(
                    "its export toolhost:plugin/{interface}@{v} does not match the WIT of this toolhost: {e:#}"
                )
            }
        };
        let entry = match (contract.world, contract.version) {
            (World::Plugin, Version::V0_1) => Entry::Tool01(
                v0_1::plugin::exports::toolhost::plugin::tool::GuestIndices::new(&pre)
                    .map_err(wrong("tool"))?,
            ),
            (World::LegacyApp, Version::V0_1) => Entry::App01(
                v0_1::legacy_app::exports::toolhost::plugin::app::GuestIndices::new(&pre)
                    .map_err(wrong("app"))?,
            ),
            (World::Plugin, Version::V0_2) => Entry::Tool02(
                v0_2::full::exports::toolhost::plugin::tool::GuestIndices::new(&pre)
                    .map_err(wrong("tool"))?,
            ),
            (World::LegacyApp, Version::V0_2) => Entry::App02(
                v0_2::legacy_app::exports::toolhost::plugin::app::GuestIndices::new(&pre)
                    .map_err(wrong("app"))?,
            ),
        };
        let call = match contract.world {
            World::Plugin => Call::Tool(CallExport::find(
                &pre,
                &format!("toolhost:plugin/tool@{v}"),
            )?),
            World::LegacyApp => {
                Call::App(CallExport::find(&pre, &format!("toolhost:plugin/app@{v}"))?)
            }
        };
        let exports = |interface: &str| {
            contract.version == Version::V0_2
                && pre
                    .component()
                    .get_export_index(None, format!("toolhost:plugin/{interface}@0.2.0"))
                    .is_some()
        };
        let prompts = match exports("prompts") {
            true => Some(prompts::GuestIndices::new(&pre).map_err(wrong("prompts"))?),
            false => None,
        };
        let resources = match exports("resources") {
            true => Some(resources::GuestIndices::new(&pre).map_err(wrong("resources"))?),
            false => None,
        };
        let completion = match exports("completion") {
            true => Some(completion::GuestIndices::new(&pre).map_err(wrong("completion"))?),
            false => None,
        };
        let tasks = match exports("tasks") {
            true => Some(tasks::GuestIndices::new(&pre).map_err(wrong("tasks"))?),
            false => None,
        };
        Ok(Ready {
            pre,
            entry,
            call,
            prompts,
            resources,
            completion,
            tasks,
        })
    }

    /// A fresh instance in `store`.
    pub(super) async fn instantiate(
        &self,
        store: &mut Store<CallState>,
    ) -> wasmtime::Result<wasmtime::component::Instance> {
        self.pre.instantiate_async(store).await
    }

    /// What the component describes (its tools, and what else it exports),
    /// from one fresh instance.
    pub(super) async fn describe(
        &self,
        store: &mut Store<CallState>,
    ) -> wasmtime::Result<Described> {
        let instance = self.instantiate(store).await?;
        let tools = match &self.entry {
            Entry::Tool01(tool) => {
                tool.load(&mut *store, &instance)?
                    .call_describe(&mut *store)
                    .await?
            }
            Entry::App01(app) => {
                app.load(&mut *store, &instance)?
                    .call_describe(&mut *store)
                    .await?
            }
            Entry::Tool02(tool) => {
                tool.load(&mut *store, &instance)?
                    .call_describe(&mut *store)
                    .await?
            }
            Entry::App02(app) => {
                app.load(&mut *store, &instance)?
                    .call_describe(&mut *store)
                    .await?
            }
        };
        let prompts = match &self.prompts {
            Some(prompts) => {
                prompts
                    .load(&mut *store, &instance)?
                    .call_describe(&mut *store)
                    .await?
            }
            None => Vec::new(),
        };
        let (resources, templates) = match &self.resources {
            Some(indices) => {
                let resources = indices.load(&mut *store, &instance)?;
                let fixed = resources.call_describe(&mut *store).await?;
                (fixed, resources.call_describe_templates(&mut *store).await?)
            }
            None => (Vec::new(), Vec::new()),
        };
        let tasks = match &self.tasks {
            Some(tasks) => {
                tasks
                    .load(&mut *store, &instance)?
                    .call_describe(&mut *store)
                    .await?
            }
            None => Vec::new(),
        };
        Ok(Described {
            tools,
            prompts,
            resources,
            templates,
            tasks,
        })
    }

    /// Reads `uri` in a fresh instance.
    ///
    /// # Errors
    ///
    /// A fault of the guest, or a component that exports no resources.
    pub(super) async fn read_resource(
        &self,
        store: &mut Store<CallState>,
        uri: &str,
        context: &wit_types::CallContext,
    ) -> wasmtime::Result<Result<Vec<resources::Contents>, wit_types::ToolError>> {
        let indices = self
            .resources
            .as_ref()
            .ok_or_else(|| wasmtime::format_err!("the component exports no resources"))?;
        let instance = self.instantiate(store).await?;
        let resources = indices.load(&mut *store, &instance)?;
        resources.call_read(store, uri, context).await
    }

    /// Completes an argument in a fresh instance.
    ///
    /// # Errors
    ///
    /// A fault of the guest, or a component that exports no completion.
    pub(super) async fn complete(
        &self,
        store: &mut Store<CallState>,
        reference: &completion::Reference,
        argument: &completion::Argument,
        resolved: &[(String, String)],
        context: &wit_types::CallContext,
    ) -> wasmtime::Result<Result<completion::Suggestions, wit_types::ToolError>> {
        let indices = self
            .completion
            .as_ref()
            .ok_or_else(|| wasmtime::format_err!("the component exports no completion"))?;
        let instance = self.instantiate(store).await?;
        let completion = indices.load(&mut *store, &instance)?;
        completion
            .call_complete(store, reference, argument, resolved, context)
            .await
    }

    /// Whether the component exports `completion`.
    pub(super) fn completes(&self) -> bool {
        self.completion.is_some()
    }

    /// Fills in the prompt `name` in a fresh instance.
    ///
    /// # Errors
    ///
    /// A fault of the guest, or a component that exports no prompts (the
    /// catalog offers prompts only of components that do).
    pub(super) async fn get_prompt(
        &self,
        store: &mut Store<CallState>,
        name: &str,
        arguments: &[(String, String)],
        context: &wit_types::CallContext,
    ) -> wasmtime::Result<Result<prompts::Prompt, wit_types::ToolError>> {
        let indices = self
            .prompts
            .as_ref()
            .ok_or_else(|| wasmtime::format_err!("the component exports no prompts"))?;
        let instance = self.instantiate(store).await?;
        let prompts = indices.load(&mut *store, &instance)?;
        prompts.call_get(store, name, arguments, context).await
    }

    /// Runs `tool` in a fresh instance (instantiated under the span
    /// `instantiating`, run under `guest`).
    pub(super) async fn call(
        &self,
        store: &mut Store<CallState>,
        tool: &str,
        arguments: &wit_types::Json,
        context: &wit_types::CallContext,
        (instantiating, guest): (tracing::Span, tracing::Span),
    ) -> wasmtime::Result<Answer> {
        let instance = self.instantiate(store).instrument(instantiating).await?;
        let run = async {
            let params = (tool, arguments.as_str(), context);
            Ok(match &self.call {
                Call::Tool(call) => {
                    // SAFETY: `instance` is of `self.pre`, the pre-instantiation
                    // `Ready::new` found the export in.
                    let call = unsafe { call.typed(store, &instance) }?;
                    let (answer,) = call.call_async(&mut *store, params).await?;
                    Answer::Plugin(Box::new(answer))
                }
                Call::App(call) => {
                    // SAFETY: `instance` is of `self.pre`, the pre-instantiation
                    // `Ready::new` found the export in.
                    let call = unsafe { call.typed(store, &instance) }?;
                    let (answer,) = call.call_async(&mut *store, params).await?;
                    Answer::App(answer)
                }
            })
        };
        run.instrument(guest).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{EngineSettings, engine};
    use wasmtime::component::Linker;

    /// A component exporting `toolhost:plugin/tool@0.2.0` whose `call` is
    /// `func(name: string) -> string`, not the WIT's.
    const CALL_OF_ANOTHER_TYPE: &str = r#"
        (component
          (core module $m
            (memory (export "memory") 1)
            (func (export "realloc") (param i32 i32 i32 i32) (result i32) i32.const 8)
            (func (export "call") (param i32 i32) (result i32) i32.const 16))
          (core instance $i (instantiate $m))
          (func $call (param "name" string) (result string)
            (canon lift (core func $i "call") (memory (core memory $i "memory"))
              (realloc (core func $i "realloc"))))
          (instance $tool (export "call" (func $call)))
          (export "toolhost:plugin/tool@0.2.0" (instance $tool)))
    "#;

    /// The component `wat`, compiled by an engine as the host builds it and
    /// linked to nothing.
    fn pre_of(wat: &str) -> InstancePre<()> {
        let engine = engine::build(EngineSettings {
            pooling: false,
            ..EngineSettings::default()
        })
        .unwrap();
        let component = Component::new(&engine, wat::parse_str(wat).unwrap()).unwrap();
        Linker::new(&engine).instantiate_pre(&component).unwrap()
    }

    /// The unchecked path is taken only once an instance passed the check: a
    /// `call` of another type is refused in every instance, never lifted as a
    /// `tool-result`.
    #[tokio::test]
    async fn a_call_of_another_type_is_refused_in_every_instance() {
        let pre = pre_of(CALL_OF_ANOTHER_TYPE);
        let call = CallExport::<ToolCall>::find(&pre, "toolhost:plugin/tool@0.2.0").unwrap();
        for instance in 0..3 {
            let mut store = Store::new(pre.engine(), ());
            let made = pre.instantiate_async(&mut store).await.unwrap();
            // SAFETY: `made` is an instance of `pre`, given to `find`.
            let Err(error) = (unsafe { call.typed(&mut store, &made) }) else {
                panic!("instance {instance}: a call of another type was taken as the tool's");
            };
            let error = format!("{error:#}");
            assert!(
                error.contains("type mismatch with parameters"),
                "instance {instance}: {error}"
            );
        }
        assert!(!call.checked.load(Ordering::Acquire));
    }

    /// An interface without `call` is named in the error.
    #[test]
    fn an_interface_without_call_is_refused_by_name() {
        let pre = pre_of(CALL_OF_ANOTHER_TYPE);
        let error = CallExport::<AppCall>::find(&pre, "toolhost:plugin/app@0.2.0")
            .err()
            .unwrap();
        assert_eq!(
            error,
            "its export toolhost:plugin/app@0.2.0 has no function `call`"
        );
    }
}
