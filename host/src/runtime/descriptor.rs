//! What a plugin says about its tools, prompts and resources, parsed from the
//! WIT descriptors.

use serde_json::Value;

use super::bindings::v0_2::prompts as wit_prompts;
use super::bindings::v0_2::resources as wit_resources;
use super::bindings::wit_types;

/// A tool as its plugin describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDescriptor {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
    pub annotations: Annotations,
    pub required_privileges: Vec<String>,
    /// Client capabilities the tool needs (`sampling`, ...).
    pub required_client_capabilities: Vec<String>,
    /// Whether a caller that speaks tasks may poll the tool as a task (the
    /// optional `tasks` export; none says so by default).
    pub task_support: TaskSupport,
}

/// How a tool may be called as a task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TaskSupport {
    /// Only while its caller waits: the default.
    #[default]
    Forbidden,
    /// As a task for a caller that speaks tasks, else while it waits.
    Optional,
    /// Only as a task: a caller that does not speak tasks is refused.
    Required,
}

impl TaskSupport {
    /// Whether the tool may run as a task.
    pub fn allows_tasks(self) -> bool {
        self != TaskSupport::Forbidden
    }
}

/// Behaviour hints; `None` where the tool does not say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Annotations {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

impl ToolDescriptor {
    /// Parses a WIT descriptor; the schemas must be JSON.
    ///
    /// # Errors
    ///
    /// A message naming the tool and the schema that is not JSON.
    pub fn from_wit(wit: wit_types::ToolDescriptor) -> Result<ToolDescriptor, String> {
        let parse = |what: &str, text: &str| {
            serde_json::from_str::<Value>(text)
                .map_err(|e| format!("tool {:?}: the {what} is not JSON: {e}", wit.name))
        };
        let input_schema = parse("input schema", &wit.input_schema)?;
        let output_schema = wit
            .output_schema
            .as_deref()
            .map(|s| parse("output schema", s))
            .transpose()?;
        let annotations = wit
            .annotations
            .map_or_else(Annotations::default, |a| Annotations {
                read_only: a.read_only,
                destructive: a.destructive,
                idempotent: a.idempotent,
                open_world: a.open_world,
            });
        Ok(ToolDescriptor {
            name: wit.name,
            title: wit.title,
            description: wit.description,
            input_schema,
            output_schema,
            annotations,
            required_privileges: wit.required_privileges,
            required_client_capabilities: wit.required_client_capabilities,
            task_support: TaskSupport::Forbidden,
        })
    }
}

/// A prompt as its plugin describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptDescriptor {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub arguments: Vec<PromptArgument>,
    pub required_privileges: Vec<String>,
}

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptArgument {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
}

impl PromptDescriptor {
    /// Takes a WIT prompt descriptor; each argument must be named once.
    ///
    /// # Errors
    ///
    /// A message naming the prompt and the argument named twice.
    pub fn from_wit(wit: wit_prompts::PromptDescriptor) -> Result<PromptDescriptor, String> {
        let mut arguments: Vec<PromptArgument> = Vec::with_capacity(wit.arguments.len());
        for argument in wit.arguments {
            if arguments.iter().any(|a| a.name == argument.name) {
                return Err(format!(
                    "prompt {:?}: the argument {:?} is described twice",
                    wit.name, argument.name
                ));
            }
            arguments.push(PromptArgument {
                name: argument.name,
                title: argument.title,
                description: argument.description,
                required: argument.required,
            });
        }
        Ok(PromptDescriptor {
            name: wit.name,
            title: wit.title,
            description: wit.description,
            arguments,
            required_privileges: wit.required_privileges,
        })
    }
}

/// A resource with a fixed URI, as its plugin describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceDescriptor {
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime: Option<String>,
    pub size: Option<u64>,
    pub required_privileges: Vec<String>,
}

/// A family of resources under a URI template, as its plugin describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateDescriptor {
    pub uri_template: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime: Option<String>,
    pub required_privileges: Vec<String>,
}

impl From<wit_resources::ResourceDescriptor> for ResourceDescriptor {
    fn from(wit: wit_resources::ResourceDescriptor) -> Self {
        ResourceDescriptor {
            uri: wit.uri,
            name: wit.name,
            title: wit.title,
            description: wit.description,
            mime: wit.mime,
            size: wit.size,
            required_privileges: wit.required_privileges,
        }
    }
}

impl From<wit_resources::TemplateDescriptor> for TemplateDescriptor {
    fn from(wit: wit_resources::TemplateDescriptor) -> Self {
        TemplateDescriptor {
            uri_template: wit.uri_template,
            name: wit.name,
            title: wit.title,
            description: wit.description,
            mime: wit.mime,
            required_privileges: wit.required_privileges,
        }
    }
}
