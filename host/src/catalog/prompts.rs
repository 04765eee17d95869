//! The prompts of every loaded plugin under their public names (the plugin's
//! prefix, as for tools), and the checks of a `get` that come before the
//! sandbox: privileges, then the arguments against the descriptor.
//!
//! A prompt requires the privileges the configuration names for its plugin
//! (`privileges`) joined by those it declares; `tool_privileges` names tools
//! only. A caller sees and gets only the prompts whose privileges it holds.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tracing::Instrument as _;

use super::resources::{call_context, offer_privileges};
use super::{Caller, Catalog, CatalogError, Duplicate, public_name};
use crate::config::PluginConfig;
use crate::result::{ErrorCode, Prompt as FilledPrompt, ToolError};
use crate::runtime::{CallIo, Offered, Plugin, PromptDescriptor, with_call_id};

/// A prompt as the catalog serves it.
pub struct Prompt {
    /// The public name (with the plugin's prefix).
    pub name: String,
    /// The descriptor as the plugin gave it (its own name inside).
    pub descriptor: PromptDescriptor,
    /// The privileges a caller needs, sorted.
    privileges: Vec<String>,
    pub(super) plugin: Arc<Plugin>,
}

impl Prompt {
    /// The plugin that offers the prompt.
    pub fn plugin(&self) -> &Plugin {
        &self.plugin
    }

    pub fn privileges(&self) -> &[String] {
        &self.privileges
    }

    /// Whether `caller` holds every privilege the prompt requires (and so sees it).
    pub fn visible_to(&self, caller: &Caller) -> bool {
        caller.missing(&self.privileges).is_empty()
    }
}

impl Catalog {
    /// Adds the prompts of a loaded plugin.
    pub(super) fn add_prompts(
        &mut self,
        config: &PluginConfig,
        plugin: &Arc<Plugin>,
        path: &str,
    ) -> Result<(), CatalogError> {
        let problem = |name: &str, problem: String| CatalogError::Descriptor {
            path: path.to_owned(),
            kind: "prompt",
            name: name.to_owned(),
            problem,
        };
        let mut seen = BTreeSet::new();
        for descriptor in plugin.prompts() {
            let name = public_name(config.prefix.as_deref(), &descriptor.name)
                .map_err(|e| problem(&descriptor.name, e))?;
            if let Some(argument) = descriptor.arguments.iter().find(|a| a.name.is_empty()) {
                return Err(problem(
                    &name,
                    format!("an argument has no name ({argument:?})"),
                ));
            }
            if !seen.insert(name.clone()) {
                return Err(problem(&name, "described twice by the same plugin".into()));
            }
            if let Some(&index) = self.prompt_by_name.get(&name) {
                let first = self.prompts[index].plugin.name().to_owned();
                return Err(CatalogError::Duplicate(Box::new(Duplicate {
                    kind: "prompt",
                    name,
                    first_path: self.paths.get(&first).cloned().unwrap_or_default(),
                    first,
                    second: plugin.name().to_owned(),
                    second_path: path.to_owned(),
                })));
            }
            let privileges = offer_privileges(config, &descriptor.required_privileges);
            self.prompt_by_name.insert(name.clone(), self.prompts.len());
            self.prompts.push(Prompt {
                name,
                descriptor: descriptor.clone(),
                privileges,
                plugin: plugin.clone(),
            });
        }
        Ok(())
    }

    /// Every prompt, in a stable order.
    pub fn prompts(&self) -> &[Prompt] {
        &self.prompts
    }

    pub fn prompt(&self, name: &str) -> Option<&Prompt> {
        self.prompt_by_name.get(name).map(|&i| &self.prompts[i])
    }

    /// Fills in `prompt`, one of this catalog's, with `arguments` for `caller`;
    /// the prompt's questions reach the caller through `io`.
    ///
    /// # Errors
    ///
    /// `missing_privilege` for a caller without the prompt's privileges,
    /// `invalid_arguments` for a required argument that is missing, an unknown
    /// one or a value that is not a string, and the plugin's or the host's coded
    /// failure otherwise.
    pub async fn get_prompt(
        &self,
        prompt: &Prompt,
        arguments: Option<&Map<String, Value>>,
        caller: &Caller,
        request_id: &str,
        io: CallIo,
    ) -> Result<Offered<FilledPrompt>, ToolError> {
        let missing = caller.missing(&prompt.privileges);
        if !missing.is_empty() {
            return Err(ToolError {
                code: ErrorCode::MissingPrivilege,
                message: format!("Missing privilege: {}", missing.join(", ")),
                details: Some(json!({ "missing": missing })),
            });
        }
        let arguments = checked_arguments(prompt, arguments)?;
        let (context, span) = call_context(caller, request_id, "prompt");
        let get = async {
            let filled = prompt
                .plugin
                .get_prompt(&prompt.descriptor.name, &arguments, &context, io)
                .await;
            tracing::info!(
                prompt = prompt.name.as_str(),
                plugin = prompt.plugin.name(),
                failed = filled.is_err(),
                asking = matches!(filled, Ok(Offered::Asking(_))),
                "prompt"
            );
            filled
        };
        with_call_id(context.call_id.clone(), get.instrument(span)).await
    }
}

/// The arguments of a `get` of `prompt`, as name and value pairs in the order
/// the descriptor lists them.
fn checked_arguments(
    prompt: &Prompt,
    arguments: Option<&Map<String, Value>>,
) -> Result<Vec<(String, String)>, ToolError> {
    let invalid = |message: String, details: Value| ToolError {
        code: ErrorCode::InvalidArguments,
        message,
        details: Some(details),
    };
    let empty = Map::new();
    let arguments = arguments.unwrap_or(&empty);
    let declared = &prompt.descriptor.arguments;
    if let Some(unknown) = arguments
        .keys()
        .find(|k| !declared.iter().any(|a| &a.name == *k))
    {
        let known: Vec<&str> = declared.iter().map(|a| a.name.as_str()).collect();
        return Err(invalid(
            format!(
                "The prompt {} takes no argument {unknown:?} (its arguments: {}).",
                prompt.name,
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            ),
            json!({ "unknown": unknown }),
        ));
    }
    let mut pairs = Vec::with_capacity(arguments.len());
    for argument in declared {
        match arguments.get(&argument.name) {
            Some(Value::String(value)) => pairs.push((argument.name.clone(), value.clone())),
            Some(other) => {
                return Err(invalid(
                    format!(
                        "The argument {:?} of the prompt {} must be a string, not {other}.",
                        argument.name, prompt.name
                    ),
                    json!({ "argument": argument.name }),
                ));
            }
            None if argument.required => {
                return Err(invalid(
                    format!(
                        "The prompt {} needs the argument {:?}.",
                        prompt.name, argument.name
                    ),
                    json!({ "missing": [argument.name] }),
                ));
            }
            None => {}
        }
    }
    Ok(pairs)
}
