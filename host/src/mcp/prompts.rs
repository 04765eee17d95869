//! `prompts/list` entries per revision: a prompt's public name, its
//! description and arguments, and `title` from 2025-06-18 (the revision that
//! gave prompts and their arguments one).

use rmcp::model::{
    GetPromptRequestParams, GetPromptResponse, ListPromptsResult, Prompt, PromptArgument,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::json;

use super::asking::Subject;
use super::handler::{SERVER, Session, revision};
use crate::render::{self, Revision};
use crate::runtime::{Offered, PromptDescriptor};

/// The entry of the prompt `name` (its public name) in `prompts/list` of
/// `revision`.
pub fn listing(name: &str, descriptor: &PromptDescriptor, revision: Revision) -> Prompt {
    let titled = revision.has_structured_content();
    let arguments = descriptor
        .arguments
        .iter()
        .map(|argument| {
            let mut listed = PromptArgument::new(&argument.name).with_required(argument.required);
            listed.title = argument.title.clone().filter(|_| titled);
            listed.description = argument.description.clone();
            listed
        })
        .collect::<Vec<_>>();
    let mut listed = Prompt::new(
        name,
        descriptor.description.as_deref(),
        (!arguments.is_empty()).then_some(arguments),
    );
    listed.title = descriptor.title.clone().filter(|_| titled);
    listed
}

impl Session {
    /// `prompts/list`: the prompts the caller may see, as its revision lists them.
    pub(super) fn list_prompts_for(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let caller = self.caller(context)?;
        let revision = revision(context);
        let catalog = self.server.catalog();
        let prompts = catalog
            .prompts()
            .iter()
            .filter(|prompt| prompt.visible_to(&caller))
            .map(|prompt| listing(&prompt.name, &prompt.descriptor, revision))
            .collect();
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    /// `prompts/get`: fills in a prompt the caller may see. One it may not see
    /// answers exactly as one that does not exist. The prompt may ask the
    /// caller questions as a tool does: live in the handshake era, by an
    /// `input_required` answer in 2026-07-28.
    pub(super) async fn get_prompt_for(
        &self,
        request: GetPromptRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let caller = self.caller(context)?;
        let catalog = self.server.catalog();
        let Some(prompt) = catalog
            .prompt(&request.name)
            .filter(|prompt| prompt.visible_to(&caller))
        else {
            return Err(ErrorData::invalid_params(
                format!("Unknown prompt: {}", request.name),
                Some(json!({ "name": request.name })),
            ));
        };
        let subject = Subject {
            principal: caller.principal.as_deref(),
            method: "prompts/get",
            name: &request.name,
            arguments: request.arguments.as_ref(),
        };
        let asking = self.asking(
            context,
            &subject,
            request.request_state.as_deref(),
            request.input_responses.as_ref(),
        )?;
        let request_id = context.id.to_string();
        let filled = catalog
            .get_prompt(
                prompt,
                request.arguments.as_ref(),
                &caller,
                &request_id,
                asking.io(None),
            )
            .await
            .map_err(|error| render::request_error::of(&error))?;
        match filled {
            Offered::Answer(filled) => {
                Ok(render::prompt::filled(&filled, revision(context), Some(SERVER)).into())
            }
            Offered::Asking(questions) => self
                .input_required(&asking, questions, &subject)
                .map(GetPromptResponse::InputRequired),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::PromptArgument;

    fn descriptor() -> PromptDescriptor {
        PromptDescriptor {
            name: "review".into(),
            title: Some("Code review".into()),
            description: Some("Reviews a change.".into()),
            arguments: vec![PromptArgument {
                name: "diff".into(),
                title: Some("The diff".into()),
                description: None,
                required: true,
            }],
            required_privileges: vec!["code:read".into()],
        }
    }

    #[test]
    fn titles_are_listed_from_2025_06_18_and_privileges_never() {
        for revision in Revision::ALL {
            let listed =
                serde_json::to_value(listing("ns_review", &descriptor(), revision)).unwrap();
            let titled = revision >= Revision::V2025_06_18;
            assert_eq!(listed["name"], "ns_review");
            assert_eq!(
                listed.get("title").is_some(),
                titled,
                "{revision}: {listed}"
            );
            assert_eq!(
                listed["arguments"][0]["title"].is_string(),
                titled,
                "{revision}"
            );
            assert_eq!(listed["arguments"][0]["required"], true);
            assert!(!listed.to_string().contains("code:read"), "{listed}");
        }
    }
}
