//! The extension area of result metadata: values under a validated namespace.
//!
//! A namespace is a reverse-DNS name the extension owns (`com.example.inventory`).
//! The rules follow MCP's `_meta` key prefixes (so a namespace can be used as one
//! unchanged), and refuse the namespaces reserved by the protocols and by the host.

use serde_json::Value;

/// The namespace the host keeps for its own metadata; extensions cannot use it.
pub const HOST_NAMESPACE: &str = "dev.toolhost";

/// A value an extension attached to a result. Construct with [`Extension::new`],
/// which validates the namespace and the name.
#[derive(Debug, Clone, PartialEq)]
pub struct Extension {
    namespace: String,
    name: String,
    value: Value,
}

impl Extension {
    /// A value under `namespace`, named `name`.
    ///
    /// ```
    /// use toolhost::result::Extension;
    /// let stock = Extension::new("com.example.inventory", "warehouse", "north".into()).unwrap();
    /// assert_eq!(stock.key(), "com.example.inventory/warehouse");
    /// assert!(Extension::new("io.modelcontextprotocol", "x", 1.into()).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// A [`NamespaceError`] when the namespace is not a reverse-DNS name, is reserved,
    /// or when the name breaks the name rules.
    pub fn new(
        namespace: impl Into<String>,
        name: impl Into<String>,
        value: Value,
    ) -> Result<Extension, NamespaceError> {
        let namespace = namespace.into();
        let name = name.into();
        validate_namespace(&namespace)?;
        validate_name(&name)?;
        Ok(Extension {
            namespace,
            name,
            value,
        })
    }

    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn value(&self) -> &Value {
        &self.value
    }

    /// `namespace/name`, the key this value has in key-value metadata.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// Why a namespace or a name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NamespaceError {
    #[error(
        "namespace {namespace:?} is not a reverse-DNS name: label {label:?} must start with a letter, end with a letter or digit, and hold only letters, digits and hyphens (e.g. \"com.example.tool\")"
    )]
    BadLabel { namespace: String, label: String },
    #[error(
        "namespace {0:?} needs at least two labels, such as \"com.example\", so that it names a domain its owner controls"
    )]
    TooShort(String),
    #[error(
        "namespace {namespace:?} is reserved for {owner}; use a namespace of your own, such as \"com.example\""
    )]
    Reserved {
        namespace: String,
        owner: &'static str,
    },
    #[error(
        "metadata name {0:?} must start and end with a letter or digit and hold only letters, digits, '-', '_' and '.'"
    )]
    BadName(String),
}

/// Checks that `namespace` is a reverse-DNS name an extension may use.
///
/// # Errors
///
/// A [`NamespaceError`] saying which rule was broken.
pub fn validate_namespace(namespace: &str) -> Result<(), NamespaceError> {
    let labels: Vec<&str> = namespace.split('.').collect();
    for label in &labels {
        if !is_label(label) {
            return Err(NamespaceError::BadLabel {
                namespace: namespace.to_owned(),
                label: (*label).to_owned(),
            });
        }
    }
    if labels.len() < 2 {
        return Err(NamespaceError::TooShort(namespace.to_owned()));
    }
    // MCP reserves every prefix whose second label is `modelcontextprotocol` or
    // `mcp` (`io.modelcontextprotocol/`, `dev.mcp/`), in any letter case.
    let second = labels[1].to_ascii_lowercase();
    if second == "modelcontextprotocol" || second == "mcp" {
        return Err(NamespaceError::Reserved {
            namespace: namespace.to_owned(),
            owner: "the Model Context Protocol",
        });
    }
    let lower = namespace.to_ascii_lowercase();
    if lower == HOST_NAMESPACE || lower.starts_with(&format!("{HOST_NAMESPACE}.")) {
        return Err(NamespaceError::Reserved {
            namespace: namespace.to_owned(),
            owner: "toolhost itself",
        });
    }
    Ok(())
}

/// Checks a metadata name: `[A-Za-z0-9]`, then `[A-Za-z0-9._-]*`, ending in `[A-Za-z0-9]`.
///
/// # Errors
///
/// [`NamespaceError::BadName`] when the name breaks the rule.
pub fn validate_name(name: &str) -> Result<(), NamespaceError> {
    let bytes = name.as_bytes();
    let ok = match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(NamespaceError::BadName(name.to_owned()))
    }
}

fn is_label(label: &str) -> bool {
    let bytes = label.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphabetic()
                && last.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_reverse_dns_namespaces() {
        for ok in ["com.example", "com.example.inventory", "io.github.a-b.c9"] {
            assert_eq!(validate_namespace(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn refuses_reserved_namespaces() {
        for reserved in [
            "io.modelcontextprotocol",
            "dev.mcp",
            "com.MCP.tools",
            "org.modelcontextprotocol.x",
            "dev.toolhost",
            "dev.toolhost.legacy",
        ] {
            assert!(
                matches!(
                    validate_namespace(reserved),
                    Err(NamespaceError::Reserved { .. })
                ),
                "{reserved} must be refused"
            );
        }
    }

    #[test]
    fn refuses_malformed_namespaces() {
        for bad in [
            "",
            "example",
            "com.",
            ".com",
            "com..x",
            "1com.x",
            "com.x-",
            "com/x",
            "com.ex ample",
        ] {
            assert!(validate_namespace(bad).is_err(), "{bad:?} must be refused");
        }
    }

    #[test]
    fn checks_names() {
        for ok in ["a", "warehouse", "stock.level", "a-b_c.d9"] {
            assert_eq!(validate_name(ok), Ok(()), "{ok}");
        }
        for bad in ["", "-a", "a-", "a/b", "a b", "é"] {
            assert!(validate_name(bad).is_err(), "{bad:?} must be refused");
        }
    }
}
