//! The resources and resource templates of every loaded plugin, and the checks
//! of a `read` and a `complete` that come before the sandbox.
//!
//! A URI belongs to one plugin: its fixed resources are found by their URI, and
//! any other URI by the first template (in configuration order) it matches.
//! Load-time checks: a URI has a scheme, and not the host's own (`toolhost:`,
//! where stored results live); a template has only `{name}` expressions (RFC
//! 6570 level 1); no URI or template is offered twice. Privileges are as for
//! prompts: the plugin's `privileges` joined by those the resource declares.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::json;
use tracing::Instrument as _;

use super::{Caller, Catalog, CatalogError, Duplicate, new_call_id};
use crate::config::PluginConfig;
use crate::result::{Contents, ErrorCode, Suggestions, ToolError};
use crate::runtime::{
    CallContext, CallIo, CompletionRef, Offered, Plugin, ResourceDescriptor, TemplateDescriptor,
    with_call_id,
};

/// The scheme of the host's own resources (stored results).
pub const HOST_SCHEME: &str = "toolhost";

/// A resource as the catalog serves it.
pub struct Resource {
    pub descriptor: ResourceDescriptor,
    privileges: Vec<String>,
    plugin: Arc<Plugin>,
}

/// A resource template as the catalog serves it.
pub struct Template {
    pub descriptor: TemplateDescriptor,
    pattern: UriTemplate,
    privileges: Vec<String>,
    plugin: Arc<Plugin>,
}

impl Resource {
    pub fn visible_to(&self, caller: &Caller) -> bool {
        caller.missing(&self.privileges).is_empty()
    }
}

impl Template {
    pub fn visible_to(&self, caller: &Caller) -> bool {
        caller.missing(&self.privileges).is_empty()
    }
}

/// The privileges of an offer: the operator's for the plugin, then its own.
pub(super) fn offer_privileges(config: &PluginConfig, declared: &[String]) -> Vec<String> {
    config
        .privileges
        .all
        .iter()
        .chain(declared)
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

impl Catalog {
    /// Adds the resources and templates of a loaded plugin.
    pub(super) fn add_resources(
        &mut self,
        config: &PluginConfig,
        plugin: &Arc<Plugin>,
        path: &str,
    ) -> Result<(), CatalogError> {
        let problem = |kind: &'static str, name: &str, problem: String| CatalogError::Descriptor {
            path: path.to_owned(),
            kind,
            name: name.to_owned(),
            problem,
        };
        let duplicate = |kind: &'static str, name: &str, first: &Plugin| {
            CatalogError::Duplicate(Box::new(Duplicate {
                kind,
                name: name.to_owned(),
                first: first.name().to_owned(),
                first_path: self.paths.get(first.name()).cloned().unwrap_or_default(),
                second: plugin.name().to_owned(),
                second_path: path.to_owned(),
            }))
        };
        let mut added = Vec::new();
        for descriptor in plugin.resources() {
            check_uri(&descriptor.uri).map_err(|e| problem("resource", &descriptor.uri, e))?;
            if let Some(first) = self
                .resources
                .iter()
                .chain(&added)
                .find(|r| r.descriptor.uri == descriptor.uri)
            {
                return Err(duplicate("resource", &descriptor.uri, &first.plugin));
            }
            added.push(Resource {
                descriptor: descriptor.clone(),
                privileges: offer_privileges(config, &descriptor.required_privileges),
                plugin: plugin.clone(),
            });
        }
        let mut templates = Vec::new();
        for descriptor in plugin.templates() {
            let template = &descriptor.uri_template;
            let pattern = UriTemplate::parse(template)
                .map_err(|e| problem("resource template", template, e))?;
            check_uri(template).map_err(|e| problem("resource template", template, e))?;
            if let Some(first) = self
                .templates
                .iter()
                .chain(&templates)
                .find(|t: &&Template| &t.descriptor.uri_template == template)
            {
                return Err(duplicate("resource template", template, &first.plugin));
            }
            templates.push(Template {
                descriptor: descriptor.clone(),
                pattern,
                privileges: offer_privileges(config, &descriptor.required_privileges),
                plugin: plugin.clone(),
            });
        }
        self.resources.extend(added);
        self.templates.extend(templates);
        Ok(())
    }

    /// Every fixed resource, in a stable order.
    pub fn resources(&self) -> &[Resource] {
        &self.resources
    }

    /// Every resource template, in a stable order.
    pub fn templates(&self) -> &[Template] {
        &self.templates
    }

    /// Whether some plugin offers `uri` to `caller`: a fixed resource, or a
    /// URI a template matches.
    pub fn offers_resource(&self, uri: &str, caller: &Caller) -> bool {
        self.owner_of(uri)
            .is_some_and(|(_, privileges)| caller.missing(privileges).is_empty())
    }

    /// The name and digest of the plugin that serves `uri`, if one does.
    pub fn resource_owner(&self, uri: &str) -> Option<(String, String)> {
        self.owner_of(uri)
            .map(|(plugin, _)| (plugin.name().to_owned(), plugin.digest().to_owned()))
    }

    /// The plugin whose resource `uri` is, and the privileges it needs.
    fn owner_of(&self, uri: &str) -> Option<(&Arc<Plugin>, &[String])> {
        if let Some(resource) = self.resources.iter().find(|r| r.descriptor.uri == uri) {
            return Some((&resource.plugin, &resource.privileges));
        }
        self.templates
            .iter()
            .find(|t| t.pattern.matches(uri).is_some())
            .map(|t| (&t.plugin, t.privileges.as_slice()))
    }

    /// Reads `uri` for `caller`; the read's questions reach the caller
    /// through `io`.
    ///
    /// # Errors
    ///
    /// `not_found` for a URI no plugin offers the caller (one it may not see
    /// reads exactly as one that does not exist), and the plugin's or the host's
    /// coded failure otherwise.
    pub async fn read_resource(
        &self,
        uri: &str,
        caller: &Caller,
        request_id: &str,
        io: CallIo,
    ) -> Result<Offered<Vec<Contents>>, ToolError> {
        let owner = self
            .owner_of(uri)
            .filter(|(_, privileges)| caller.missing(privileges).is_empty());
        let Some((plugin, _)) = owner else {
            return Err(ToolError {
                code: ErrorCode::NotFound,
                message: format!("No resource {uri}."),
                details: Some(json!({ "uri": uri })),
            });
        };
        let (context, span) = call_context(caller, request_id, "read");
        let read = async {
            let contents = plugin.read_resource(uri, &context, io).await;
            tracing::info!(
                uri,
                plugin = plugin.name(),
                failed = contents.is_err(),
                asking = matches!(contents, Ok(Offered::Asking(_))),
                "read"
            );
            contents
        };
        with_call_id(context.call_id.clone(), read.instrument(span)).await
    }

    /// Suggests values for `argument` (name and value so far) of `reference`:
    /// `("ref/prompt", public prompt name)` or `("ref/resource", URI template)`.
    /// A plugin that exports no completion suggests nothing.
    ///
    /// # Errors
    ///
    /// `invalid_arguments` for a reference to no prompt or template the caller
    /// sees, or an argument the prompt does not take; the plugin's or the host's
    /// coded failure otherwise.
    pub async fn complete(
        &self,
        reference: (&str, &str),
        argument: (&str, &str),
        resolved: &[(String, String)],
        caller: &Caller,
        request_id: &str,
    ) -> Result<Suggestions, ToolError> {
        let unknown = |what: String| ToolError {
            code: ErrorCode::InvalidArguments,
            message: what,
            details: Some(json!({ "ref": { "type": reference.0, "name": reference.1 } })),
        };
        let (plugin, target) = match reference.0 {
            "ref/prompt" => {
                let prompt = self
                    .prompt(reference.1)
                    .filter(|p| p.visible_to(caller))
                    .ok_or_else(|| unknown(format!("Unknown prompt: {}", reference.1)))?;
                if !prompt
                    .descriptor
                    .arguments
                    .iter()
                    .any(|a| a.name == argument.0)
                {
                    return Err(unknown(format!(
                        "The prompt {} takes no argument {:?}.",
                        prompt.name, argument.0
                    )));
                }
                (
                    &prompt.plugin,
                    CompletionRef::Prompt(prompt.descriptor.name.clone()),
                )
            }
            "ref/resource" => {
                let template = self
                    .templates
                    .iter()
                    .find(|t| t.descriptor.uri_template == reference.1 && t.visible_to(caller))
                    .ok_or_else(|| {
                        unknown(format!("Unknown resource template: {}", reference.1))
                    })?;
                if !template.pattern.variables().any(|v| v == argument.0) {
                    return Err(unknown(format!(
                        "The resource template {} has no variable {:?}.",
                        reference.1, argument.0
                    )));
                }
                (
                    &template.plugin,
                    CompletionRef::ResourceTemplate(reference.1.to_owned()),
                )
            }
            other => return Err(unknown(format!("Unknown reference type: {other}"))),
        };
        if !plugin.completes() {
            return Ok(Suggestions::default());
        }
        let (context, span) = call_context(caller, request_id, "complete");
        let complete = plugin.complete(&target, argument, resolved, &context);
        with_call_id(context.call_id.clone(), complete.instrument(span)).await
    }
}

/// The guest's context of one request of `caller`, and its span.
pub(super) fn call_context(
    caller: &Caller,
    request_id: &str,
    name: &'static str,
) -> (CallContext, tracing::Span) {
    let call_id = new_call_id();
    let span = tracing::error_span!(
        "offer",
        otel.name = name,
        call_id = %call_id,
        toolhost.instance_ms = tracing::field::Empty,
    );
    let context = CallContext {
        caller: caller.principal.clone(),
        request_id: request_id.to_owned(),
        call_id,
    };
    (context, span)
}

/// A URI a plugin may offer: it has a scheme, and not the host's.
fn check_uri(uri: &str) -> Result<(), String> {
    let scheme = uri
        .split_once(':')
        .map(|(scheme, _)| scheme)
        .unwrap_or_default();
    let valid = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !valid {
        return Err("not an absolute URI: it needs a scheme, as in `docs://guide`".into());
    }
    if scheme.eq_ignore_ascii_case(HOST_SCHEME) {
        return Err(format!(
            "the scheme `{HOST_SCHEME}:` is the host's own (stored results); use a scheme of the plugin's"
        ));
    }
    Ok(())
}

/// A URI template of RFC 6570 level 1: literals and `{name}` expressions.
#[derive(Debug, Clone, PartialEq, Eq)]
struct UriTemplate(Vec<Piece>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(String),
    Variable(String),
}

impl UriTemplate {
    fn parse(template: &str) -> Result<UriTemplate, String> {
        let mut pieces = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let end = rest.find('}').ok_or_else(|| {
                        format!("an expression opened with '{{' is not closed: {rest}")
                    })?;
                    let name = &rest[1..end];
                    let simple = !name.is_empty()
                        && name
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
                    if !simple {
                        return Err(format!(
                            "the expression {{{name}}} is not a simple variable: only {{name}} expressions (RFC 6570 level 1) are supported"
                        ));
                    }
                    if matches!(pieces.last(), Some(Piece::Variable(_))) {
                        return Err("two expressions in a row cannot be told apart: put a literal between them".into());
                    }
                    pieces.push(Piece::Variable(name.to_owned()));
                    rest = &rest[end + 1..];
                }
                found => {
                    let end = found.unwrap_or(rest.len());
                    if rest[..end].contains('}') {
                        return Err(format!("a '}}' without its '{{': {template}"));
                    }
                    pieces.push(Piece::Literal(rest[..end].to_owned()));
                    rest = &rest[end..];
                }
            }
        }
        Ok(UriTemplate(pieces))
    }

    fn variables(&self) -> impl Iterator<Item = &str> {
        self.0.iter().filter_map(|piece| match piece {
            Piece::Variable(name) => Some(name.as_str()),
            Piece::Literal(_) => None,
        })
    }

    /// The values of the variables when `uri` matches: each is non-empty and
    /// holds no `/`, `?` or `#` (a level-1 expansion encodes them).
    fn matches(&self, uri: &str) -> Option<Vec<(String, String)>> {
        let mut values = Vec::new();
        let mut rest = uri;
        let mut pieces = self.0.iter().peekable();
        while let Some(piece) = pieces.next() {
            match piece {
                Piece::Literal(literal) => rest = rest.strip_prefix(literal.as_str())?,
                Piece::Variable(name) => {
                    let end = match pieces.peek() {
                        Some(Piece::Literal(next)) => rest.get(1..)?.find(next.as_str())? + 1,
                        _ => rest.len(),
                    };
                    let value = &rest[..end];
                    if value.is_empty() || value.contains(['/', '?', '#']) {
                        return None;
                    }
                    values.push((name.clone(), value.to_owned()));
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_level_one_template_matches_its_expansions_only() {
        let template = UriTemplate::parse("test://template/{id}/data").unwrap();
        assert_eq!(
            template.matches("test://template/123/data"),
            Some(vec![("id".into(), "123".into())])
        );
        for other in [
            "test://template//data",
            "test://template/1/2/data",
            "test://template/123/data/more",
            "test://other/123/data",
        ] {
            assert_eq!(template.matches(other), None, "{other}");
        }
        let two = UriTemplate::parse("files://{dir}/{name}.txt").unwrap();
        assert_eq!(
            two.matches("files://docs/readme.txt"),
            Some(vec![
                ("dir".into(), "docs".into()),
                ("name".into(), "readme".into())
            ])
        );
        assert_eq!(two.variables().collect::<Vec<_>>(), ["dir", "name"]);
        let last = UriTemplate::parse("users://{id}").unwrap();
        assert_eq!(
            last.matches("users://7"),
            Some(vec![("id".into(), "7".into())])
        );
        assert_eq!(last.matches("users://7?x"), None);
    }

    #[test]
    fn templates_beyond_level_one_are_refused_with_the_reason() {
        for (template, says) in [
            ("a://{+path}", "not a simple variable"),
            ("a://{id", "not closed"),
            ("a://{x}{y}", "two expressions in a row"),
            ("a://x}", "without its"),
        ] {
            let error = UriTemplate::parse(template).unwrap_err();
            assert!(error.contains(says), "{template}: {error}");
        }
    }

    #[test]
    fn uris_need_a_scheme_of_their_own() {
        assert!(check_uri("test://static-text").is_ok());
        assert!(check_uri("urn:isbn:1").is_ok());
        assert!(
            check_uri("/no/scheme")
                .unwrap_err()
                .contains("needs a scheme")
        );
        assert!(
            check_uri("toolhost://results/x")
                .unwrap_err()
                .contains("the host's own")
        );
        assert!(check_uri("TOOLHOST:x").is_err());
    }
}
