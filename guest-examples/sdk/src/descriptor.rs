//! Building a [`ToolDescriptor`]: what a tool is and how to call it.

use serde_json::{Value, json};

use crate::wit::{Annotations, ToolDescriptor};

impl ToolDescriptor {
    /// Starts describing the tool `name` (letters, digits, `_` and `-`,
    /// unique within the plugin). `description` tells a model when to use it.
    ///
    /// The input schema defaults to `{"type": "object"}` (any arguments
    /// object); set the real one with [`DescriptorBuilder::input_schema`].
    ///
    /// ```
    /// # use toolhost_guest::{ToolDescriptor, json};
    /// let add = ToolDescriptor::new("add", "Adds two numbers.")
    ///     .input_schema(json!({
    ///         "type": "object",
    ///         "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    ///         "required": ["a", "b"],
    ///     }))
    ///     .output_schema(json!({
    ///         "type": "object",
    ///         "properties": {"sum": {"type": "number"}},
    ///         "required": ["sum"],
    ///     }))
    ///     .read_only(true)
    ///     .build();
    /// ```
    #[allow(clippy::new_ret_no_self)] // like `ToolResult::success`, it starts a builder
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> DescriptorBuilder {
        DescriptorBuilder {
            name: name.into(),
            title: None,
            description: description.into(),
            input_schema: json!({"type": "object"}),
            output_schema: None,
            annotations: None,
            required_privileges: Vec::new(),
            required_client_capabilities: Vec::new(),
        }
    }
}

/// A [`ToolDescriptor`] under construction; [`build`](Self::build) (or
/// `.into()`) finishes it.
#[derive(Debug, Clone)]
#[must_use]
pub struct DescriptorBuilder {
    name: String,
    title: Option<String>,
    description: String,
    input_schema: Value,
    output_schema: Option<Value>,
    annotations: Option<Annotations>,
    required_privileges: Vec<String>,
    required_client_capabilities: Vec<String>,
}

impl DescriptorBuilder {
    /// A human-readable name for user interfaces.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The JSON Schema of the arguments object. The host validates every
    /// call's arguments against it before the tool runs.
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = schema;
        self
    }

    /// The JSON Schema of the result data: a promise about its shape. The
    /// host checks each success's data against it and turns a mismatch into
    /// a `tool_error`. Any root type is allowed (an object, an array...).
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Sets all behaviour hints at once.
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    fn hints(&mut self) -> &mut Annotations {
        self.annotations.get_or_insert(Annotations {
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
        })
    }

    /// Hint: the tool does not change its environment.
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.hints().read_only = Some(read_only);
        self
    }

    /// Hint: the tool may destroy or overwrite data.
    pub fn destructive(mut self, destructive: bool) -> Self {
        self.hints().destructive = Some(destructive);
        self
    }

    /// Hint: calling it again with the same arguments has no further effect.
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.hints().idempotent = Some(idempotent);
        self
    }

    /// Hint: the tool talks to an open world of external entities.
    pub fn open_world(mut self, open_world: bool) -> Self {
        self.hints().open_world = Some(open_world);
        self
    }

    /// A privilege a caller must hold to call this tool (`orders:write`).
    /// Call it once per privilege.
    pub fn requires(mut self, privilege: impl Into<String>) -> Self {
        self.required_privileges.push(privilege.into());
        self
    }

    /// A capability the calling client must have declared (`sampling`,
    /// `elicitation`, `roots`). Call it once per capability.
    pub fn requires_client_capability(mut self, capability: impl Into<String>) -> Self {
        self.required_client_capabilities.push(capability.into());
        self
    }

    /// Finishes the descriptor.
    pub fn build(self) -> ToolDescriptor {
        ToolDescriptor {
            name: self.name,
            title: self.title,
            description: self.description,
            input_schema: self.input_schema.to_string(),
            output_schema: self.output_schema.map(|schema| schema.to_string()),
            annotations: self.annotations,
            required_privileges: self.required_privileges,
            required_client_capabilities: self.required_client_capabilities,
        }
    }
}

impl From<DescriptorBuilder> for ToolDescriptor {
    fn from(builder: DescriptorBuilder) -> Self {
        builder.build()
    }
}
