//! The privileges the operator requires of a plugin's or webhook's callers
//! (`privileges`, `tool_privileges`), read with the `[[plugin]]` or `[[webhook]]`
//! table they belong to.

use std::collections::BTreeMap;
use std::path::Path;

use super::ConfigError;

/// Privileges the operator requires of callers: `privileges` for every tool of a
/// plugin, `tool_privileges` per tool (by the name the plugin gives it, without the
/// prefix). A tool requires the union of these and what its plugin declares; a
/// plugin can add to the operator's set, never remove from it. Default: none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequiredPrivileges {
    pub all: Vec<String>,
    pub per_tool: BTreeMap<String, Vec<String>>,
}

impl RequiredPrivileges {
    /// The privileges of the table `table` of `file`.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the file, the table and the key when a privilege
    /// name is empty.
    pub(super) fn new(
        all: Vec<String>,
        per_tool: BTreeMap<String, Vec<String>>,
        file: &Path,
        table: &str,
    ) -> Result<Self, ConfigError> {
        for (key, list) in std::iter::once(("privileges".to_owned(), &all)).chain(
            per_tool
                .iter()
                .map(|(tool, list)| (format!("tool_privileges.{tool}"), list)),
        ) {
            if list.iter().any(|p| p.trim().is_empty()) {
                return Err(ConfigError::new(
                    file,
                    format!(
                        "{table}: {key}: a privilege name is empty; write names such as \"orders:write\""
                    ),
                ));
            }
        }
        Ok(RequiredPrivileges { all, per_tool })
    }
}
