//! `resources/list`, `resources/templates/list`, `resources/read` of plugin
//! resources and `completion/complete`, per revision. Stored results
//! (`toolhost://results/..`) are read by their signed link in `handler.rs` and
//! never listed; plugin resources are listed for the callers whose privileges
//! they need, and one a caller may not see reads as one that does not exist.

use rmcp::model::{
    CompleteRequestParams, CompleteResult, ListResourceTemplatesResult, ListResourcesResult,
    ReadResourceRequestParams, ReadResourceResponse, Reference, Resource, ResourceTemplate,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::json;

use super::asking::Subject;
use super::handler::{SERVER, Session, revision};
use crate::catalog::{self, Caller};
use crate::render::{self, Revision};
use crate::result::ErrorCode;
use crate::runtime::Offered;

/// The entry of `resource` in `resources/list` of `revision` (`title` from
/// 2025-06-18).
pub fn resource_listing(resource: &catalog::Resource, revision: Revision) -> Resource {
    let descriptor = &resource.descriptor;
    let mut listed = Resource::new(&descriptor.uri, &descriptor.name);
    listed.title = descriptor
        .title
        .clone()
        .filter(|_| revision.has_structured_content());
    listed.description = descriptor.description.clone();
    listed.mime_type = descriptor.mime.clone();
    listed.size = descriptor.size;
    listed
}

/// The entry of `template` in `resources/templates/list` of `revision`.
pub fn template_listing(template: &catalog::Template, revision: Revision) -> ResourceTemplate {
    let descriptor = &template.descriptor;
    let mut listed = ResourceTemplate::new(&descriptor.uri_template, &descriptor.name);
    listed.title = descriptor
        .title
        .clone()
        .filter(|_| revision.has_structured_content());
    listed.description = descriptor.description.clone();
    listed.mime_type = descriptor.mime.clone();
    listed
}

impl Session {
    pub(super) fn list_resources_for(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let caller = self.caller(context)?;
        let revision = revision(context);
        let catalog = self.server.catalog();
        let resources = catalog
            .resources()
            .iter()
            .filter(|r| r.visible_to(&caller))
            .map(|r| resource_listing(r, revision))
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    pub(super) fn list_templates_for(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let caller = self.caller(context)?;
        let revision = revision(context);
        let catalog = self.server.catalog();
        let templates = catalog
            .templates()
            .iter()
            .filter(|t| t.visible_to(&caller))
            .map(|t| template_listing(t, revision))
            .collect();
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    /// `resources/read` of a plugin's resource. The read may ask the caller
    /// questions as a tool does (see `mcp/asking.rs`).
    pub(super) async fn read_offered(
        &self,
        request: &ReadResourceRequestParams,
        caller: &Caller,
        context: &RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let subject = Subject {
            principal: caller.principal.as_deref(),
            method: "resources/read",
            name: uri,
            arguments: None,
        };
        let asking = self.asking(
            context,
            &subject,
            request.request_state.as_deref(),
            request.input_responses.as_ref(),
        )?;
        let catalog = self.server.catalog();
        match catalog
            .read_resource(uri, caller, &context.id.to_string(), asking.io(None))
            .await
        {
            Ok(Offered::Answer(contents)) => {
                Ok(render::resource::contents(&contents, revision(context), Some(SERVER)).into())
            }
            Ok(Offered::Asking(questions)) => self
                .input_required(&asking, questions, &subject)
                .map(ReadResourceResponse::InputRequired),
            Err(error) if error.code == ErrorCode::NotFound => Err(resource_not_found(uri)),
            Err(error) => Err(render::request_error::of(&error)),
        }
    }

    /// `resources/subscribe` (handshake era): to a resource the caller may
    /// read. Its `notifications/resources/updated` comes when a reload changes
    /// the plugin that serves it (a plugin's resources change only with it).
    pub(super) fn subscribe_for(
        &self,
        uri: String,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        no_subscribe_in_2026(context)?;
        let caller = self.caller(context)?;
        if !self.server.catalog().offers_resource(&uri, &caller) {
            return Err(resource_not_found(&uri));
        }
        self.subscriptions
            .lock()
            .expect("subscriptions lock")
            .insert(uri);
        Ok(())
    }

    /// `resources/unsubscribe`: ends a subscription (one that does not exist is
    /// no error).
    pub(super) fn unsubscribe_for(
        &self,
        uri: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        no_subscribe_in_2026(context)?;
        self.caller(context)?;
        self.subscriptions
            .lock()
            .expect("subscriptions lock")
            .remove(uri);
        Ok(())
    }

    /// `completion/complete` of a prompt argument or a template variable.
    pub(super) async fn complete_for(
        &self,
        request: CompleteRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let caller = self.caller(context)?;
        let reference = match &request.r#ref {
            Reference::Prompt(prompt) => ("ref/prompt", prompt.name.as_str()),
            Reference::Resource(template) => ("ref/resource", template.uri.as_str()),
            _ => {
                return Err(ErrorData::invalid_params(
                    "Unknown reference type: this toolhost completes prompt arguments (ref/prompt) and template variables (ref/resource)",
                    None,
                ));
            }
        };
        let mut resolved: Vec<(String, String)> = request
            .context
            .and_then(|c| c.arguments)
            .unwrap_or_default()
            .into_iter()
            .collect();
        resolved.sort();
        let argument = (
            request.argument.name.as_str(),
            request.argument.value.as_str(),
        );
        let catalog = self.server.catalog();
        let suggestions = catalog
            .complete(
                reference,
                argument,
                &resolved,
                &caller,
                &context.id.to_string(),
            )
            .await
            .map_err(|error| render::request_error::of(&error))?;
        Ok(render::resource::suggestions(
            &suggestions,
            revision(context),
            Some(SERVER),
        ))
    }
}

/// 2026-07-28 has no `resources/subscribe` or `unsubscribe`: a client names
/// the resources it follows in `subscriptions/listen`.
fn no_subscribe_in_2026(context: &RequestContext<RoleServer>) -> Result<(), ErrorData> {
    if revision(context).is_stateless() {
        return Err(ErrorData::method_not_found::<
            rmcp::model::SubscribeRequestMethod,
        >());
    }
    Ok(())
}

/// What a read of a resource no one offers answers (as one of a stored result
/// that does not exist).
pub fn resource_not_found(uri: &str) -> ErrorData {
    ErrorData::resource_not_found("Resource not found", Some(json!({ "uri": uri })))
}
