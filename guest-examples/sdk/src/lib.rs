//! Write toolhost tools in Rust.
//!
//! A tool is a WebAssembly component (target `wasm32-wasip2`) that implements
//! the WIT world `toolhost:plugin/full@0.2.0`: it describes its tools (and any
//! prompts and resources) once and answers calls. This crate holds the bindings
//! for that world (and for the older `legacy-app` world), builders for what a
//! tool returns, and small wrappers around the host's imports. A plugin with
//! tools only implements [`Plugin`] and is exported with [`export_plugin!`];
//! one that also offers prompts, resources or completions implements
//! [`Prompts`], [`Resources`] and [`Completion`] too and is exported with
//! [`export_full!`].
//!
//! ```no_run
//! use serde::Deserialize;
//! use toolhost_guest::{CallContext, Plugin, ToolDescriptor, ToolResult, json, with_args};
//!
//! struct Tools;
//!
//! #[derive(Deserialize)]
//! struct Add {
//!     a: f64,
//!     b: f64,
//! }
//!
//! impl Plugin for Tools {
//!     fn describe() -> Vec<ToolDescriptor> {
//!         vec![ToolDescriptor::new("add", "Adds two numbers.")
//!             .input_schema(json!({
//!                 "type": "object",
//!                 "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
//!                 "required": ["a", "b"],
//!             }))
//!             .read_only(true)
//!             .build()]
//!     }
//!
//!     fn call(name: String, arguments: String, _context: CallContext) -> ToolResult {
//!         match name.as_str() {
//!             "add" => with_args(&arguments, |Add { a, b }| {
//!                 ToolResult::success(json!({"sum": a + b})).summary(format!("{a} + {b} = {}", a + b))
//!             }),
//!             other => ToolResult::unknown_tool(other).build(),
//!         }
//!     }
//! }
//!
//! toolhost_guest::export_plugin!(Tools);
//! ```
//!
//! What a tool cannot do, by design:
//!
//! - **Write wire JSON.** A tool returns a [`ToolResult`] made of typed parts;
//!   the host renders it for MCP, A2A or the legacy envelope. Only the data
//!   (and error details, the echoed query and extension values) are JSON, and
//!   this crate serializes them for you.
//! - **Leave its sandbox.** Files, network, environment variables and clocks
//!   reach a guest only through WASI and only as far as the operator's policy
//!   grants: a directory preopened at a guest path such as `/data`, and
//!   configuration values read with [`config`]. Each call runs in a fresh
//!   instance, so nothing (not even a `static`) survives between calls.
//! - **Run forever or grow without bound.** The host stops a call at its
//!   deadline or memory limit and reports a coded failure of its own.

mod args;
mod descriptor;
pub mod http;
pub mod interaction;
mod offers;
mod result;

pub use args::{IntoToolResult, parse_args, with_args};
pub use descriptor::DescriptorBuilder;
pub use result::{LinkBuilder, Part, ResultBuilder};
pub use serde_json::{self, Value, json};

/// Bindings generated from the WIT world `full` (imports `host`, exports
/// `tool`, `prompts`, `resources`, `completion` and `tasks`). A plugin
/// exported with [`export_plugin!`] exports the last four empty; one exported
/// with [`export_full!`] offers what its [`Prompts`], [`Resources`],
/// [`Completion`] and [`Tasks`] say. Most tools need only the re-exports at the crate root.
pub mod bindings {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "full",
        pub_export_macro: true,
        export_macro_name: "export_full_raw",
    });
}

/// Bindings generated from the WIT world `legacy-app` (imports `host`,
/// exports `app`). The types and the `host` import are those of
/// [`bindings`].
pub mod legacy_bindings {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "legacy-app",
        pub_export_macro: true,
        export_macro_name: "export_legacy_app_raw",
        with: {
            "toolhost:plugin/types@0.2.0": crate::bindings::toolhost::plugin::types,
            "toolhost:plugin/host@0.2.0": crate::bindings::toolhost::plugin::host,
        },
    });
}

/// The WIT types of `toolhost:plugin/types`, as generated.
pub mod wit {
    pub use crate::bindings::toolhost::plugin::types::*;
}

pub use wit::{
    Annotations, CallContext, ContentPart, Datetime, ErrorCode, Metadata, NamespacedValue, Outcome,
    Pagination, StoredLink, ToolDescriptor, ToolError, ToolResult,
};

/// The WIT types of `toolhost:plugin/prompts`.
pub mod prompts {
    pub use crate::bindings::exports::toolhost::plugin::prompts::{
        Prompt, PromptArgument, PromptDescriptor, PromptMessage, Role,
    };
}

/// The WIT types of `toolhost:plugin/resources`.
pub mod resources {
    pub use crate::bindings::exports::toolhost::plugin::resources::{
        Contents, ResourceDescriptor, TemplateDescriptor,
    };
    pub use crate::wit::ResourceBody;
}

/// The WIT types of `toolhost:plugin/tasks`.
pub mod tasks {
    pub use crate::bindings::exports::toolhost::plugin::tasks::TaskSupport;
}

/// The WIT types of `toolhost:plugin/completion`.
pub mod completion {
    pub use crate::bindings::exports::toolhost::plugin::completion::{
        Argument, Reference, Suggestions,
    };
}

pub use offers::{Completion, Plugin, Prompts, Resources, Tasks, not_found};

/// The trait an app in the legacy format implements: like [`Plugin`], but
/// `call` returns the legacy envelope (`{"success": true, "data": ..}`) as a
/// string. New tools should implement [`Plugin`]. Export the implementing type
/// with [`export_legacy_app!`].
pub use legacy_bindings::exports::toolhost::plugin::app::Guest as LegacyApp;

/// Exports a type implementing [`Plugin`] as this component's tools, offering
/// no prompts, resources or completions. Use it once, at the root of the tool
/// crate.
///
/// ```ignore
/// toolhost_guest::export_plugin!(MyTools);
/// ```
#[macro_export]
macro_rules! export_plugin {
    ($ty:ident) => {
        impl $crate::Prompts for $ty {}
        impl $crate::Resources for $ty {}
        impl $crate::Completion for $ty {}
        impl $crate::Tasks for $ty {}
        $crate::export_full!($ty);
    };
}

/// Exports a type implementing [`Plugin`], [`Prompts`], [`Resources`],
/// [`Completion`] and [`Tasks`] as this component's `tool`, `prompts`,
/// `resources`, `completion` and `tasks` interfaces (world `full`). The last
/// four have defaults that offer nothing: `impl Resources for MyTools {}` is a
/// plugin without resources.
///
/// ```ignore
/// toolhost_guest::export_full!(MyTools);
/// ```
#[macro_export]
macro_rules! export_full {
    ($ty:ident) => {
        const _: () = {
            use $crate::bindings::exports::toolhost::plugin as exports;
            use ::std::string::String;
            use ::std::vec::Vec;

            impl exports::tool::Guest for $ty {
                fn describe() -> Vec<$crate::ToolDescriptor> {
                    <$ty as $crate::Plugin>::describe()
                }
                fn call(name: String, arguments: String, context: $crate::CallContext) -> $crate::ToolResult {
                    <$ty as $crate::Plugin>::call(name, arguments, context)
                }
            }
            impl exports::prompts::Guest for $ty {
                fn describe() -> Vec<$crate::prompts::PromptDescriptor> {
                    <$ty as $crate::Prompts>::describe_prompts()
                }
                fn get(
                    name: String,
                    arguments: Vec<(String, String)>,
                    context: $crate::CallContext,
                ) -> Result<$crate::prompts::Prompt, $crate::wit::ToolError> {
                    <$ty as $crate::Prompts>::get_prompt(name, arguments, context)
                }
            }
            impl exports::resources::Guest for $ty {
                fn describe() -> Vec<$crate::resources::ResourceDescriptor> {
                    <$ty as $crate::Resources>::describe_resources()
                }
                fn describe_templates() -> Vec<$crate::resources::TemplateDescriptor> {
                    <$ty as $crate::Resources>::describe_templates()
                }
                fn read(
                    uri: String,
                    context: $crate::CallContext,
                ) -> Result<Vec<$crate::resources::Contents>, $crate::wit::ToolError> {
                    <$ty as $crate::Resources>::read_resource(uri, context)
                }
            }
            impl exports::completion::Guest for $ty {
                fn complete(
                    reference: $crate::completion::Reference,
                    argument: $crate::completion::Argument,
                    resolved: Vec<(String, String)>,
                    context: $crate::CallContext,
                ) -> Result<$crate::completion::Suggestions, $crate::wit::ToolError> {
                    <$ty as $crate::Completion>::complete(reference, argument, resolved, context)
                }
            }
            impl exports::tasks::Guest for $ty {
                fn describe() -> Vec<(String, $crate::tasks::TaskSupport)> {
                    <$ty as $crate::Tasks>::task_support()
                }
            }
        };
        $crate::__export_full_impl!($ty with_types_in $crate::bindings);
    };
}

/// Exports a type implementing [`LegacyApp`] as this component's `app`
/// interface (world `legacy-app`).
///
/// ```ignore
/// toolhost_guest::export_legacy_app!(MyApp);
/// ```
#[macro_export]
macro_rules! export_legacy_app {
    ($ty:ident) => {
        $crate::__export_legacy_app_impl!($ty with_types_in $crate::legacy_bindings);
    };
}

/// Writes lines to the host's log, tagged with the plugin and the call. Where
/// the caller's protocol supports it, the host forwards them to the caller.
pub mod log {
    use crate::bindings::toolhost::plugin::host;

    pub use host::LogLevel as Level;

    /// Logs `message` at `level`.
    pub fn log(level: Level, message: impl AsRef<str>) {
        host::log(level, message.as_ref());
    }

    /// Logs at trace level.
    pub fn trace(message: impl AsRef<str>) {
        log(Level::Trace, message);
    }

    /// Logs at debug level.
    pub fn debug(message: impl AsRef<str>) {
        log(Level::Debug, message);
    }

    /// Logs at info level.
    pub fn info(message: impl AsRef<str>) {
        log(Level::Info, message);
    }

    /// Logs at warn level.
    pub fn warn(message: impl AsRef<str>) {
        log(Level::Warn, message);
    }

    /// Logs at error level.
    pub fn error(message: impl AsRef<str>) {
        log(Level::Error, message);
    }
}

/// Reports how far the call has come: `progress` should grow with each report,
/// and `total`, if known, is its value at completion (`progress(1.0, Some(1.0))`
/// says "done").
pub fn progress(progress: f64, total: Option<f64>) {
    bindings::toolhost::plugin::host::progress(progress, total, None);
}

/// Like [`progress`], with a message for the caller ("3 of 10 files").
pub fn progress_with_message(progress: f64, total: Option<f64>, message: impl AsRef<str>) {
    bindings::toolhost::plugin::host::progress(progress, total, Some(message.as_ref()));
}

/// The configuration value `key` the operator granted to this plugin, or
/// `None` when it was not granted.
pub fn config(key: &str) -> Option<String> {
    bindings::toolhost::plugin::host::get_config(key)
}

/// The placeholder of the secret `name` (configuration key `secret:<name>`),
/// or `None` when the operator configured no such secret for this plugin.
///
/// The value itself never enters the guest: the placeholder (an opaque string
/// such as `toolhost-secret-github-0f3a...`) is what a tool puts in a request
/// **header value**, and the host swaps in the value as the request leaves,
/// only for the URLs the secret's `hosts` allow. Anywhere else (the URL, a
/// body, a log line, a result) it stays a placeholder.
///
/// ```no_run
/// use toolhost_guest::{http, secret};
///
/// let token = secret("github").expect("the operator configures the secret github");
/// let response = http::Request::get("https://api.github.com/user")
///     .header("authorization", format!("Bearer {token}"))
///     .send();
/// ```
pub fn secret(name: &str) -> Option<String> {
    config(&format!("secret:{name}"))
}
