//! One request's questions to its caller, for each request that may ask:
//! `tools/call`, `prompts/get` and `resources/read`.
//!
//! A client with a session (handshake era) is asked live, on the request's
//! own stream ([`input::Live`]). A stateless caller (2026-07-28) sends its
//! answers with the request: the retry replays them ([`input::Replay`]), after
//! its `requestState` has been verified for the same [`Subject`], and a
//! request that stops at new questions is answered `input_required` with a
//! state bound to that subject.

use std::sync::Arc;

use rmcp::model::{InputRequiredResult, InputResponses, JsonObject};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use super::handler::{SERVER, Session, revision};
use super::input::{self, Binding, Replay};
use crate::render;
use crate::result::Question;
use crate::runtime::{Asker, CallIo, EventSender};

/// What a request's questions are about: the caller, the method, the tool,
/// prompt or resource it names, and the arguments the answers hold for.
pub(super) struct Subject<'a> {
    pub principal: Option<&'a str>,
    pub method: &'static str,
    pub name: &'a str,
    pub arguments: Option<&'a JsonObject>,
}

impl Subject<'_> {
    /// Runs `f` with the binding of a `requestState` to this subject. The text
    /// of the arguments is made here, only for a request that sends a state or
    /// stops to ask.
    fn bound<T>(&self, f: impl FnOnce(&Binding<'_>) -> T) -> T {
        let arguments = input::arguments_text(self.arguments);
        f(&Binding {
            principal: self.principal,
            method: self.method,
            name: self.name,
            arguments: &arguments,
        })
    }
}

/// How one request's questions reach its caller.
#[derive(Clone)]
pub(super) struct Asking {
    asker: Arc<dyn Asker>,
    /// The replay of a stateless caller's answers; `None` for a client that
    /// is asked live.
    replay: Option<Arc<Replay>>,
}

impl Asking {
    /// The [`CallIo`] of the request's instance: `events` and this asker.
    pub(super) fn io(&self, events: Option<EventSender>) -> CallIo {
        CallIo {
            events,
            asker: Some(self.asker.clone()),
        }
    }

    /// Whether the caller is asked by an `input_required` answer (stateless),
    /// not live.
    pub(super) fn is_stateless(&self) -> bool {
        self.replay.is_some()
    }
}

impl Session {
    /// How the questions of the request in `context` about `subject` reach
    /// its caller; a stateless caller's `state` and `responses` are checked
    /// here, before anything runs.
    ///
    /// # Errors
    ///
    /// `-32602` for a `requestState` that does not verify for `subject`
    /// (altered, expired, another caller's, or for another tool, prompt,
    /// resource or arguments).
    pub(super) fn asking(
        &self,
        context: &RequestContext<RoleServer>,
        subject: &Subject<'_>,
        state: Option<&str>,
        responses: Option<&InputResponses>,
    ) -> Result<Asking, ErrorData> {
        let revision = revision(context);
        if !revision.is_stateless() {
            let live = input::Live {
                peer: context.peer.clone(),
                origin: context.id.clone(),
                revision,
            };
            return Ok(Asking {
                asker: Arc::new(live),
                replay: None,
            });
        }
        let capabilities = context.meta.client_capabilities();
        self.replaying(subject, state, responses, capabilities)
    }

    /// How a stateless caller's answers reach the questions about `subject`:
    /// `responses` to the round of `state`, replayed, for a caller that
    /// declared `capabilities`. A retried request gets its own; a task's tool,
    /// run again once its questions are answered, those its row holds.
    ///
    /// # Errors
    ///
    /// `-32602` for a state that does not verify for `subject` (altered,
    /// expired, another caller's, or for another tool, prompt, resource or
    /// arguments).
    pub(super) fn replaying(
        &self,
        subject: &Subject<'_>,
        state: Option<&str>,
        responses: Option<&InputResponses>,
        capabilities: Option<rmcp::model::ClientCapabilities>,
    ) -> Result<Asking, ErrorData> {
        let states = &self.server.states;
        let replay = match state {
            Some(state) => subject
                .bound(|binding| states.replay(Some((state, binding)), responses, capabilities)),
            None => states.replay(None, responses, capabilities),
        }?;
        let replay = Arc::new(replay);
        Ok(Asking {
            asker: replay.clone(),
            replay: Some(replay),
        })
    }

    /// The 2026-07-28 answer to a request about `subject` that stopped at
    /// `questions`: the questions under their keys and a state that carries
    /// the answers the guest got so far.
    ///
    /// # Errors
    ///
    /// An internal error for a caller that is asked live (its asker never
    /// stops a guest), or a question rmcp cannot write.
    pub(super) fn input_required(
        &self,
        asking: &Asking,
        questions: Vec<Question>,
        subject: &Subject<'_>,
    ) -> Result<InputRequiredResult, ErrorData> {
        let Some(replay) = &asking.replay else {
            return Err(ErrorData::internal_error(
                "the request stopped to ask a client that is asked live",
                None,
            ));
        };
        let required = subject.bound(|binding| {
            self.server
                .states
                .input_required(replay, questions, binding)
        });
        render::input::input_required(&required, Some(SERVER))
            .map_err(|why| ErrorData::internal_error(why, None))
    }
}
