//! What a plugin offers beside tools (since `toolhost:plugin@0.2.0`): prompts,
//! resources and completions. Each is described once at load; each `get`,
//! `read` and `complete` runs in a fresh instance under the same slots,
//! deadline and budgets as a tool call, and what it answers counts against
//! `max_result_bytes` like a tool's result. A prompt's `get` and a
//! resource's `read` may ask the caller questions as a tool call does
//! (`interaction`), through the [`CallIo`] the edge gives them.

use super::bindings::v0_2::{completion as wit_completion, prompts as wit_prompts};
use super::bindings::wit_types;
use super::descriptor::{PromptDescriptor, ResourceDescriptor, TemplateDescriptor};
use super::guest_result::{ELEMENT_BYTES, part_bytes};
use super::interaction::CallIo;
use super::plugin::{CallContext, Plugin, Stop};
use super::state::{BudgetHit, CallState};
use crate::result::{
    ContentPart, Contents, Prompt, PromptMessage, Question, ResourceBody, Role, Suggestions,
    ToolError, ToolResult,
};

/// At most this many completion values reach the caller (MCP's limit).
pub const MAX_COMPLETION_VALUES: usize = 100;

/// What a prompt's `get` or a resource's `read` came to.
#[derive(Debug)]
pub enum Offered<T> {
    /// The guest's answer.
    Answer(T),
    /// The questions a stateless caller is to answer before the guest can
    /// answer (as [`super::Called::Asking`] for a tool).
    Asking(Vec<Question>),
}

/// What is being completed, by the names the plugin gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionRef {
    /// An argument of the prompt of this (the plugin's own) name.
    Prompt(String),
    /// A variable of the resource template of this URI template.
    ResourceTemplate(String),
}

impl Plugin {
    /// The prompts the plugin described when it was loaded.
    pub fn prompts(&self) -> &[PromptDescriptor] {
        &self.prompts
    }

    /// The fixed resources the plugin described when it was loaded.
    pub fn resources(&self) -> &[ResourceDescriptor] {
        &self.resources
    }

    /// The resource templates the plugin described when it was loaded.
    pub fn templates(&self) -> &[TemplateDescriptor] {
        &self.templates
    }

    /// Whether the plugin exports `completion`.
    pub fn completes(&self) -> bool {
        self.ready.completes()
    }

    /// Fills in the prompt `name` with `arguments` (checked by the caller against
    /// the descriptor) in a fresh instance; its questions reach the caller
    /// through `io`.
    ///
    /// # Errors
    ///
    /// The guest's coded failure, or the host's for a fault in the sandbox or a
    /// budget that was hit (as for a tool call).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: &[(String, String)],
        ctx: &CallContext,
        io: CallIo,
    ) -> Result<Offered<Prompt>, ToolError> {
        let context = self.wit_context(ctx);
        let what = format!("prompt {name}");
        let prompt = match self
            .answer(&what, io, async |store| {
                self.ready
                    .get_prompt(store, name, arguments, &context)
                    .await
            })
            .await?
        {
            Offered::Answer(prompt) => prompt,
            Offered::Asking(questions) => return Ok(Offered::Asking(questions)),
        };
        let size = prompt.description.as_ref().map_or(0, |d| d.len() as u64)
            + prompt
                .messages
                .iter()
                .map(|m| ELEMENT_BYTES + part_bytes(&m.content))
                .sum::<u64>();
        self.within_budget(&what, "prompt", size)?;
        Ok(Offered::Answer(Prompt {
            description: prompt.description,
            messages: prompt
                .messages
                .into_iter()
                .map(|message| PromptMessage {
                    role: match message.role {
                        wit_prompts::Role::User => Role::User,
                        wit_prompts::Role::Assistant => Role::Assistant,
                    },
                    content: ContentPart::from(message.content),
                })
                .collect(),
        }))
    }

    /// Reads `uri` (one of the plugin's resources, or a URI that matches one of
    /// its templates: the caller checked) in a fresh instance; its questions
    /// reach the caller through `io`.
    ///
    /// # Errors
    ///
    /// As [`Plugin::get_prompt`].
    pub async fn read_resource(
        &self,
        uri: &str,
        ctx: &CallContext,
        io: CallIo,
    ) -> Result<Offered<Vec<Contents>>, ToolError> {
        let context = self.wit_context(ctx);
        let what = format!("resource {uri}");
        let contents = match self
            .answer(&what, io, async |store| {
                self.ready.read_resource(store, uri, &context).await
            })
            .await?
        {
            Offered::Answer(contents) => contents,
            Offered::Asking(questions) => return Ok(Offered::Asking(questions)),
        };
        let size = contents
            .iter()
            .map(|c| {
                ELEMENT_BYTES
                    + (c.uri.len() + c.mime.as_ref().map_or(0, String::len)) as u64
                    + match &c.body {
                        wit_types::ResourceBody::Text(text) => text.len() as u64,
                        wit_types::ResourceBody::Bytes(bytes) => bytes.len() as u64,
                    }
            })
            .sum();
        self.within_budget(&what, "resource", size)?;
        Ok(Offered::Answer(
            contents
                .into_iter()
                .map(|c| Contents {
                    uri: c.uri,
                    mime: c.mime,
                    body: match c.body {
                        wit_types::ResourceBody::Text(text) => ResourceBody::Text(text),
                        wit_types::ResourceBody::Bytes(bytes) => ResourceBody::Bytes(bytes),
                    },
                })
                .collect(),
        ))
    }

    /// Suggests values for the argument `(name, value)` of `reference`, given
    /// the arguments already `resolved`, in a fresh instance. More than
    /// [`MAX_COMPLETION_VALUES`] values are cut (and `has_more` set). A
    /// completion asks the caller nothing: its questions are refused.
    ///
    /// # Errors
    ///
    /// As [`Plugin::get_prompt`].
    pub async fn complete(
        &self,
        reference: &CompletionRef,
        (name, value): (&str, &str),
        resolved: &[(String, String)],
        ctx: &CallContext,
    ) -> Result<Suggestions, ToolError> {
        let context = self.wit_context(ctx);
        let what = format!("completion of {name}");
        let reference = match reference {
            CompletionRef::Prompt(prompt) => wit_completion::Reference::Prompt(prompt.clone()),
            CompletionRef::ResourceTemplate(template) => {
                wit_completion::Reference::ResourceTemplate(template.clone())
            }
        };
        let argument = wit_completion::Argument {
            name: name.to_owned(),
            value: value.to_owned(),
        };
        let suggestions = self
            .answer(&what, CallIo::default(), async |store| {
                self.ready
                    .complete(store, &reference, &argument, resolved, &context)
                    .await
            })
            .await?;
        let Offered::Answer(mut suggestions) = suggestions else {
            unreachable!("a call without an asker never stops to ask")
        };
        let size = suggestions
            .values
            .iter()
            .map(|v| ELEMENT_BYTES + v.len() as u64)
            .sum();
        self.within_budget(&what, "completion", size)?;
        let cut = suggestions.values.len() > MAX_COMPLETION_VALUES;
        suggestions.values.truncate(MAX_COMPLETION_VALUES);
        Ok(Suggestions {
            values: suggestions.values,
            total: suggestions.total,
            has_more: suggestions.has_more || cut,
        })
    }

    /// Runs `work` in a fresh instance for `what`, its questions reaching the
    /// caller through `io`; the guest's own failure and the host's (a fault, a
    /// budget) both become the coded error.
    async fn answer<T>(
        &self,
        what: &str,
        io: CallIo,
        work: impl AsyncFnOnce(
            &mut wasmtime::Store<CallState>,
        ) -> wasmtime::Result<Result<T, wit_types::ToolError>>,
    ) -> Result<Offered<T>, ToolError> {
        let ran = match self.run(what, io, work).await {
            Ok(ran) => ran,
            Err(Stop::Asking(questions)) => return Ok(Offered::Asking(questions)),
            Err(Stop::Failed(failure)) => return Err(failure_of(failure)),
        };
        ran.value.map(Offered::Answer).map_err(|error| ToolError {
            code: error.code.into(),
            message: error.message,
            // Details that are not JSON are kept, as text.
            details: error
                .details
                .map(|text| serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text))),
        })
    }

    /// Refuses an answer of `size` bytes over `max_result_bytes`.
    fn within_budget(&self, what: &str, kind: &str, size: u64) -> Result<(), ToolError> {
        let budget = self.capabilities.max_result_bytes;
        if size <= budget {
            return Ok(());
        }
        let hit = BudgetHit::new(
            "max_result_bytes",
            format!("the {kind} of {size} bytes is over the budget of {budget} bytes"),
        );
        Err(failure_of(self.budget_failure(what, &hit)))
    }
}

/// The error of a failure the host made.
fn failure_of(result: ToolResult) -> ToolError {
    result
        .into_error()
        .expect("the host's failures are failures")
}
