//! Signatures embedded in the component (the `wasmsign2` format: Ed25519 over
//! every section, in a `signature` custom section), so one scheme serves files
//! and registries alike and verifies offline.
//!
//! [`Trust::configure`] reads the operator's public keys once per load; a
//! component is verified against the keys its plugin allows before its first load,
//! on every update and at every start from its pinned copy.

use std::path::Path;

use wasmsign2::{KeyPair, PublicKey, SecretKey, WSError};

use crate::config::TrustConfig;

/// The operator's public keys, read.
#[derive(Default)]
pub struct Trust {
    keys: Vec<(String, PublicKey)>,
}

impl Trust {
    /// Reads every key of `[trust.keys]`.
    ///
    /// # Errors
    ///
    /// A message naming the key and its file when a file cannot be read or holds
    /// no public key.
    pub fn configure(config: &TrustConfig) -> Result<Trust, String> {
        let mut keys = Vec::new();
        for (name, path) in &config.keys {
            let key = PublicKey::from_any_file(path).map_err(|e| {
                format!(
                    "{name} = {}: holds no public key this host reads ({e}); make a pair with toolhost keygen",
                    path.display()
                )
            })?;
            keys.push((name.clone(), key));
        }
        Ok(Trust { keys })
    }

    /// The name of the first allowed key (`signers`; empty allows every key) that
    /// signed `component`, or `None` when it has no signature by any of them.
    ///
    /// # Errors
    ///
    /// [`Unverified`] for a component with no signature at all, or with none by
    /// an allowed key.
    pub fn signer(&self, component: &[u8], signers: &[String]) -> Result<String, Unverified> {
        let mut signed = false;
        for (name, key) in self.allowed(signers) {
            match key.verify(&mut &component[..], None) {
                Ok(()) => return Ok(name.to_owned()),
                Err(WSError::NoSignatures) => {}
                Err(_) => signed = true,
            }
        }
        if signed || self.allowed(signers).next().is_none() {
            Err(Unverified::NotByTrustedKey)
        } else {
            Err(Unverified::Unsigned)
        }
    }

    fn allowed<'a>(
        &'a self,
        signers: &'a [String],
    ) -> impl Iterator<Item = (&'a str, &'a PublicKey)> {
        self.keys
            .iter()
            .filter(move |(name, _)| signers.is_empty() || signers.contains(name))
            .map(|(name, key)| (name.as_str(), key))
    }

    /// The names of the keys `signers` allows, for messages.
    pub fn expected(&self, signers: &[String]) -> String {
        let names: Vec<&str> = self.allowed(signers).map(|(name, _)| name).collect();
        names.join(", ")
    }
}

/// Why a component has no acceptable signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unverified {
    /// It carries no signature.
    Unsigned,
    /// It is signed, but not by an allowed key, or changed since it was signed.
    NotByTrustedKey,
}

/// `component` with a signature by the secret key in `key_file` (a file
/// `toolhost keygen` wrote).
///
/// # Errors
///
/// A message when the key cannot be read or the component cannot be parsed.
pub fn sign(component: &[u8], key_file: &Path) -> Result<Vec<u8>, String> {
    let key = SecretKey::from_any_file(key_file).map_err(|e| {
        format!(
            "{}: holds no secret key this host reads ({e}); make a pair with toolhost keygen",
            key_file.display()
        )
    })?;
    let module = wasmsign2::Module::deserialize(&mut &component[..])
        .map_err(|e| format!("the component cannot be parsed for signing: {e}"))?;
    let signed = key
        .sign(module, None)
        .map_err(|e| format!("signing failed: {e}"))?;
    let mut out = Vec::with_capacity(component.len() + 256);
    signed
        .serialize(&mut out)
        .map_err(|e| format!("writing the signed component failed: {e}"))?;
    Ok(out)
}

/// A new key pair: the secret key in `<out>` (0600), the public one in `<out>.pub`.
///
/// # Errors
///
/// A message naming the file that could not be written; an existing file is
/// never overwritten.
pub fn keygen(out: &Path) -> Result<std::path::PathBuf, String> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let public = out.with_extension("pub");
    let pair = KeyPair::generate();
    let open = |path: &Path, mode: u32| {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(path)
            .map_err(|e| {
                format!(
                    "{}: {e} (an existing key is never overwritten)",
                    path.display()
                )
            })
    };
    let (mut secret_file, mut public_file) = (open(out, 0o600)?, open(&public, 0o644)?);
    secret_file
        .write_all(pair.sk.to_pem().as_bytes())
        .map_err(|e| format!("{}: {e}", out.display()))?;
    public_file
        .write_all(pair.pk.to_pem().as_bytes())
        .map_err(|e| format!("{}: {e}", public.display()))?;
    Ok(public)
}
