//! `toolhost publish`: the author's side of distribution. The component gets the
//! policy it requests (a `toolhost:policy` section), then a signature over all of
//! it, then goes to a registry as a CNCF Wasm artifact.

use std::path::Path;

use super::registry;
use super::request::{self, Request};
use super::signature;
use crate::config::OCI_SCHEME;

/// Publishes the component file `component` to `target` (`oci://...:TAG`, or a
/// file path to write the result there instead), with
/// the request in the TOML file `policy` and a signature by the secret key in
/// `key`, each when given. Returns one line naming the digests.
///
/// # Errors
///
/// A message naming the file or the target that failed.
pub async fn publish(
    component: &Path,
    target: &str,
    policy: Option<&Path>,
    key: Option<&Path>,
) -> Result<String, String> {
    let mut bytes = std::fs::read(component)
        .map_err(|e| format!("{}: cannot read the component: {e}", component.display()))?;
    if let Some(policy) = policy {
        let text = std::fs::read_to_string(policy)
            .map_err(|e| format!("{}: cannot read the policy: {e}", policy.display()))?;
        let requested = Request::parse(&text).map_err(|e| format!("{}: {e}", policy.display()))?;
        bytes = request::embed(&bytes, &requested)
            .map_err(|e| format!("{}: {e}", component.display()))?;
    }
    if let Some(key) = key {
        bytes =
            signature::sign(&bytes, key).map_err(|e| format!("{}: {e}", component.display()))?;
    }
    let digest = registry::sha256(&bytes);
    let size = bytes.len();
    let signed = if key.is_some() {
        ", signed"
    } else {
        ", unsigned"
    };
    if !target.starts_with(OCI_SCHEME) {
        // A file target: the same component, for operators who copy files.
        std::fs::write(target, &bytes).map_err(|e| format!("{target}: cannot write it: {e}"))?;
        return Ok(format!(
            "wrote {target}: component {digest} ({size} bytes{signed})"
        ));
    }
    let manifest = registry::push(target, bytes).await?;
    Ok(format!(
        "published {} to {target}: manifest {manifest}, component {digest} ({size} bytes{signed})",
        component.display(),
    ))
}
