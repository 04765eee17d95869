//! The privileges a tool requires: the operator's (`privileges` and
//! `tool_privileges` of its plugin, `privileges` of its webhook) joined by what
//! the plugin declares, which can only add.

use std::collections::BTreeSet;

use super::CatalogError;
use crate::config::{PluginConfig, RequiredPrivileges};
use crate::runtime::ToolDescriptor;

/// Every tool `tool_privileges` names must be one the plugin offers: a typo must
/// not leave the tool it meant unprotected.
pub(super) fn check_tool_privileges(
    config: &PluginConfig,
    descriptors: &[ToolDescriptor],
) -> Result<(), CatalogError> {
    for tool in config.privileges.per_tool.keys() {
        if !descriptors.iter().any(|d| &d.name == tool) {
            let tools: Vec<&str> = descriptors.iter().map(|d| d.name.as_str()).collect();
            return Err(CatalogError::UnknownPrivilegedTool {
                file: config.configured_in.display().to_string(),
                plugin: config.name.clone(),
                tool: tool.clone(),
                tools: tools.join(", "),
            });
        }
    }
    Ok(())
}

/// The privileges `descriptor` requires under `required`: the operator's for
/// every tool, the operator's for this tool, and the plugin's own, sorted.
pub(super) fn effective_privileges(
    descriptor: &ToolDescriptor,
    required: &RequiredPrivileges,
) -> Vec<String> {
    let per_tool = required.per_tool.get(&descriptor.name);
    required
        .all
        .iter()
        .chain(per_tool.into_iter().flatten())
        .chain(&descriptor.required_privileges)
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::json;

    use super::*;
    use crate::catalog::Caller;
    use crate::runtime::Annotations;

    fn descriptor(name: &str, declared: &[&str]) -> ToolDescriptor {
        ToolDescriptor {
            name: name.into(),
            title: None,
            description: String::new(),
            input_schema: json!({"type": "object"}),
            output_schema: None,
            annotations: Annotations::default(),
            required_privileges: declared.iter().map(|p| p.to_string()).collect(),
            required_client_capabilities: Vec::new(),
            task_support: Default::default(),
        }
    }

    #[test]
    fn the_operator_sets_privileges_and_a_plugin_can_only_add() {
        let required = RequiredPrivileges {
            all: vec!["ops".into()],
            per_tool: [("add".to_owned(), vec!["math:add".to_owned()])].into(),
        };
        assert_eq!(
            effective_privileges(&descriptor("add", &["self:declared", "ops"]), &required),
            ["math:add", "ops", "self:declared"]
        );
        // A plugin that declares nothing still requires the operator's set.
        assert_eq!(
            effective_privileges(&descriptor("sub", &[]), &required),
            ["ops"]
        );
        assert!(
            effective_privileges(&descriptor("x", &[]), &RequiredPrivileges::default()).is_empty()
        );
    }

    #[test]
    fn a_caller_lacking_a_privilege_is_told_which() {
        let required = ["a".to_owned(), "b".to_owned()];
        let caller = Caller {
            principal: Some("p".into()),
            privileges: Some(BTreeSet::from(["a".to_owned()])),
        };
        assert_eq!(caller.missing(&required), ["b"]);
        assert!(Caller::local().missing(&required).is_empty());
        let none = Caller {
            principal: Some("p".into()),
            privileges: Some(BTreeSet::new()),
        };
        assert_eq!(none.missing(&required), ["a", "b"]);
    }
}
