//! Who calls over HTTP: bearer tokens from the configuration, each standing for a
//! principal with privileges. Tokens are compared in constant time.

use std::collections::BTreeSet;

use crate::catalog::Caller;
use crate::config::TokenConfig;

/// The configured tokens.
#[derive(Debug, Clone, Default)]
pub struct Tokens {
    entries: Vec<(String, Caller)>,
}

impl Tokens {
    /// Reads the tokens, resolving `token_env` from the environment.
    ///
    /// # Errors
    ///
    /// A message naming the variable when a `token_env` is not set.
    pub fn from_config(tokens: &[TokenConfig]) -> Result<Tokens, String> {
        let mut entries = Vec::new();
        for token in tokens {
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
            entries.push((secret, caller));
        }
        Ok(Tokens { entries })
    }

    /// Whether any token is configured (then every HTTP request needs one).
    pub fn required(&self) -> bool {
        !self.entries.is_empty()
    }

    /// The caller a bearer token stands for.
    pub fn caller(&self, bearer: &str) -> Option<Caller> {
        self.entries
            .iter()
            .find(|(secret, _)| constant_time_eq(secret.as_bytes(), bearer.as_bytes()))
            .map(|(_, caller)| caller.clone())
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
