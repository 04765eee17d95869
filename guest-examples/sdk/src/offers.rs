//! The traits a plugin implements, one per thing it offers: [`Plugin`] (its
//! tools, always), and [`Prompts`], [`Resources`], [`Completion`] and
//! [`Tasks`] for a plugin exported with [`crate::export_full!`]. The last four
//! have defaults that offer nothing, so a plugin implements only what it has.

use crate::completion::{Argument, Reference, Suggestions};
use crate::prompts::{Prompt, PromptDescriptor};
use crate::resources::{Contents, ResourceDescriptor, TemplateDescriptor};
use crate::tasks::TaskSupport;
use crate::{CallContext, ErrorCode, ToolDescriptor, ToolError, ToolResult};

/// The trait a plugin implements: `describe` lists its tools, `call` runs one.
///
/// `arguments` is the JSON text of the arguments object, already validated by
/// the host against the tool's input schema; read it with [`crate::with_args`]
/// or [`crate::parse_args`]. Export the implementing type with
/// [`crate::export_plugin!`] (or [`crate::export_full!`]).
pub trait Plugin {
    fn describe() -> Vec<ToolDescriptor>;

    fn call(name: String, arguments: String, context: CallContext) -> ToolResult;
}

/// Prompts: message templates a client lists, fills in with arguments and
/// shows its user. The host checks the arguments against the descriptor (each
/// required one given, no unknown one) before `get_prompt` runs.
pub trait Prompts {
    /// The prompts, described once when the plugin is loaded.
    fn describe_prompts() -> Vec<PromptDescriptor> {
        Vec::new()
    }

    /// Fills in the prompt `name`.
    fn get_prompt(
        name: String,
        arguments: Vec<(String, String)>,
        context: CallContext,
    ) -> Result<Prompt, ToolError> {
        let _ = (arguments, context);
        Err(not_found(format!("No prompt named {name}.")))
    }
}

/// Resources: data a client reads by URI, fixed ones and families described by
/// a URI template.
pub trait Resources {
    /// The fixed resources, described once when the plugin is loaded.
    fn describe_resources() -> Vec<ResourceDescriptor> {
        Vec::new()
    }

    /// The resource templates, described once when the plugin is loaded.
    fn describe_templates() -> Vec<TemplateDescriptor> {
        Vec::new()
    }

    /// Reads `uri` (a described resource, or one matching a template).
    fn read_resource(uri: String, context: CallContext) -> Result<Vec<Contents>, ToolError> {
        let _ = context;
        Err(not_found(format!("No resource {uri}.")))
    }
}

/// Completion: suggestions for a prompt argument or a template variable.
pub trait Completion {
    /// Suggests values for `argument` of `reference`; none by default.
    fn complete(
        reference: Reference,
        argument: Argument,
        resolved: Vec<(String, String)>,
        context: CallContext,
    ) -> Result<Suggestions, ToolError> {
        let _ = (reference, argument, resolved, context);
        Ok(Suggestions {
            values: Vec::new(),
            total: None,
            has_more: false,
        })
    }
}

/// A `not-found` failure with `message`.
pub fn not_found(message: String) -> ToolError {
    ToolError {
        code: ErrorCode::NotFound,
        message,
        details: None,
    }
}

impl PromptDescriptor {
    /// A prompt `name` (letters, digits, `_` and `-`) with no arguments.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        PromptDescriptor {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            arguments: Vec::new(),
            required_privileges: Vec::new(),
        }
    }

    /// A human-readable name for user interfaces.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Adds the argument `name`; the host refuses a `get` without a required one.
    pub fn argument(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
    ) -> Self {
        self.arguments.push(crate::prompts::PromptArgument {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            required,
        });
        self
    }

    /// A privilege a caller must hold to list or get the prompt.
    pub fn requires(mut self, privilege: impl Into<String>) -> Self {
        self.required_privileges.push(privilege.into());
        self
    }
}

impl crate::prompts::PromptMessage {
    /// A message from the user: any content part (text, an image, a resource).
    pub fn user(content: impl Into<crate::ContentPart>) -> Self {
        crate::prompts::PromptMessage {
            role: crate::prompts::Role::User,
            content: content.into(),
        }
    }

    /// A message from the assistant.
    pub fn assistant(content: impl Into<crate::ContentPart>) -> Self {
        crate::prompts::PromptMessage {
            role: crate::prompts::Role::Assistant,
            content: content.into(),
        }
    }
}

impl Prompt {
    /// A filled-in prompt of `messages`.
    pub fn new(messages: impl IntoIterator<Item = crate::prompts::PromptMessage>) -> Self {
        Prompt {
            description: None,
            messages: messages.into_iter().collect(),
        }
    }
}

/// Tasks: the tools a caller that speaks tasks may poll instead of waiting on.
/// A tool that runs as a task is written as any other; only this list differs.
pub trait Tasks {
    /// The tools (by their names in [`Plugin::describe`]) that may run as
    /// tasks; none by default.
    fn task_support() -> Vec<(String, TaskSupport)> {
        Vec::new()
    }
}
