//! Who calls over HTTP: bearer tokens from the configuration, each standing for a
//! principal with privileges. Tokens are compared in constant time.
//!
//! Each token has an id the audit log names instead of the token: `token-N`,
//! the position (from 1) of its `[[token]]` table in the configuration file.
//! It tells two tokens of one principal apart (a rotation) and reveals nothing
//! of the token; reordering the tables changes it.

use std::collections::BTreeSet;

use crate::catalog::Caller;
use crate::config::TokenConfig;

/// The configured tokens.
#[derive(Debug, Clone, Default)]
pub struct Tokens {
    entries: Vec<(String, Caller, TokenId)>,
}

/// The id of a configured token (`token-N`), never the token itself; it
/// travels beside the [`Caller`] in an HTTP request's extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenId(pub String);

impl Tokens {
    /// Reads the tokens, resolving `token_env` from the environment.
    ///
    /// # Errors
    ///
    /// A message naming the variable when a `token_env` is not set.
    pub fn from_config(tokens: &[TokenConfig]) -> Result<Tokens, String> {
        let mut entries = Vec::new();
        for (index, token) in tokens.iter().enumerate() {
            let secret = match (&token.token, &token.token_env) {
                (Some(secret), _) => secret.clone(),
                (None, Some(name)) => std::env::var(name).map_err(|_| {
                    format!(
                        "token of principal {:?}: environment variable {name} is not set",
                        token.principal
                    )
                })?,
                (None, None) => unreachable!("the configuration checks that one is set"),
            };
            let caller = Caller {
                principal: Some(token.principal.clone()),
                privileges: Some(token.privileges.iter().cloned().collect::<BTreeSet<_>>()),
            };
            entries.push((secret, caller, TokenId(format!("token-{}", index + 1))));
        }
        Ok(Tokens { entries })
    }

    /// Whether any token is configured (then every HTTP request needs one).
    pub fn required(&self) -> bool {
        !self.entries.is_empty()
    }

    /// The caller a bearer token stands for.
    pub fn caller(&self, bearer: &str) -> Option<Caller> {
        self.authenticate(bearer).map(|(caller, _)| caller)
    }

    /// The caller a bearer token stands for, and the token's id.
    pub fn authenticate(&self, bearer: &str) -> Option<(Caller, TokenId)> {
        self.entries
            .iter()
            .find(|(secret, _, _)| constant_time_eq(secret.as_bytes(), bearer.as_bytes()))
            .map(|(_, caller, id)| (caller.clone(), id.clone()))
    }

    /// The principals of the tokens, each once, in the configuration's order.
    pub fn principals(&self) -> Vec<&str> {
        let mut principals: Vec<&str> = Vec::new();
        for (_, caller, _) in &self.entries {
            let principal = caller.principal.as_deref().unwrap_or_default();
            if !principals.contains(&principal) {
                principals.push(principal);
            }
        }
        principals
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
