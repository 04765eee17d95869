//! Components in OCI registries, in the CNCF layout for Wasm artifacts: a
//! manifest whose config has the media type `application/vnd.wasm.config.v0+json`
//! and whose one layer, `application/wasm`, is the component.
//!
//! Every exchange has a deadline and every download a size cap, checked against
//! the manifest before the blob is fetched and again while it streams in. TLS is
//! required except for a registry on a loopback address. Credentials come from
//! `TOOLHOST_REGISTRY_USERNAME` / `TOOLHOST_REGISTRY_PASSWORD`, else from the
//! docker-style `config.json` (`$DOCKER_CONFIG`, else `~/.docker`), else none.

use std::time::Duration;

use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use sha2::{Digest as _, Sha256};

use crate::config::OCI_SCHEME;

/// The media type of the config of a Wasm artifact.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The media type of the component layer.
pub const LAYER_MEDIA_TYPE: &str = "application/wasm";
/// The largest component pulled: 256 MiB.
pub const MAX_COMPONENT_BYTES: u64 = 256 << 20;
/// The deadline of one exchange with a registry.
const DEADLINE: Duration = Duration::from_secs(120);

/// A component pulled from a registry.
pub struct Pulled {
    /// The digest of the manifest (what a tag resolved to).
    pub manifest: String,
    /// The digest of the component layer (`sha256:<hex>`), checked.
    pub component: String,
    pub bytes: Vec<u8>,
}

/// The reference of an `oci://` source.
///
/// # Errors
///
/// A message when it does not parse.
pub fn reference(source: &str) -> Result<Reference, String> {
    let text = source.strip_prefix(OCI_SCHEME).unwrap_or(source);
    text.parse::<Reference>()
        .map_err(|e| format!("{source}: not a registry reference: {e}"))
}

/// The same repository at `digest`.
pub fn at_digest(reference: &Reference, digest: &str) -> Reference {
    Reference::with_digest(
        reference.registry().to_owned(),
        reference.repository().to_owned(),
        digest.to_owned(),
    )
}

fn client(reference: &Reference) -> Client {
    // The registry client's TLS uses the process's rustls provider: ring, as the
    // rest of the host. Installing it twice is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let registry = reference.resolve_registry().to_owned();
    let host = registry
        .rsplit_once(':')
        .map_or(registry.as_str(), |(host, _)| host);
    let loopback = host == "localhost"
        || host
            .trim_matches(['[', ']'])
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    let protocol = if loopback {
        ClientProtocol::HttpsExcept(vec![registry])
    } else {
        ClientProtocol::Https
    };
    Client::new(ClientConfig {
        protocol,
        ..ClientConfig::default()
    })
}

/// The credentials for `reference`'s registry.
fn auth(reference: &Reference) -> RegistryAuth {
    if let (Ok(user), Ok(password)) = (
        std::env::var("TOOLHOST_REGISTRY_USERNAME"),
        std::env::var("TOOLHOST_REGISTRY_PASSWORD"),
    ) {
        return RegistryAuth::Basic(user, password);
    }
    docker_auth(reference.resolve_registry()).unwrap_or(RegistryAuth::Anonymous)
}

/// `auths.<registry>.auth` (base64 of `user:password`) of the docker config.
fn docker_auth(registry: &str) -> Option<RegistryAuth> {
    use base64::Engine as _;
    let dir = match std::env::var_os("DOCKER_CONFIG") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => std::path::PathBuf::from(std::env::var_os("HOME")?).join(".docker"),
    };
    let text = std::fs::read_to_string(dir.join("config.json")).ok()?;
    let config: serde_json::Value = serde_json::from_str(&text).ok()?;
    let encoded = config["auths"][registry]["auth"].as_str()?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    let (user, password) = std::str::from_utf8(&decoded).ok()?.split_once(':')?;
    Some(RegistryAuth::Basic(user.to_owned(), password.to_owned()))
}

async fn deadline<T>(
    what: &str,
    source: &str,
    work: impl Future<Output = Result<T, oci_client::errors::OciDistributionError>>,
) -> Result<T, String> {
    match tokio::time::timeout(DEADLINE, work).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) => Err(format!("{what} {source} failed: {e}")),
        Err(_) => Err(format!(
            "{what} {source} took longer than {} s; is the registry reachable?",
            DEADLINE.as_secs()
        )),
    }
}

/// The digest a tag (or digest) resolves to now.
///
/// # Errors
///
/// A message naming the source when the registry cannot be asked.
pub async fn resolve(source: &str) -> Result<String, String> {
    let reference = reference(source)?;
    let client = client(&reference);
    deadline(
        "resolving",
        source,
        client.fetch_manifest_digest(&reference, &auth(&reference)),
    )
    .await
}

/// Pulls the component `source` names.
///
/// # Errors
///
/// A message naming the source: unreachable registry, no such tag, not a Wasm
/// artifact, a layer over [`MAX_COMPONENT_BYTES`], or a digest that does not
/// match the bytes.
pub async fn pull(source: &str, at: Option<&str>) -> Result<Pulled, String> {
    let configured = reference(source)?;
    let reference = match at {
        Some(digest) => at_digest(&configured, digest),
        None => configured,
    };
    let client = client(&reference);
    let auth = auth(&reference);
    let (manifest, digest) = deadline(
        "pulling the manifest of",
        source,
        client.pull_image_manifest(&reference, &auth),
    )
    .await?;
    if let Some(wanted) = reference.digest()
        && wanted != digest
    {
        return Err(format!(
            "{source}: the registry answered manifest {digest} for {wanted}"
        ));
    }
    let layers: Vec<_> = manifest
        .layers
        .iter()
        .filter(|layer| layer.media_type == LAYER_MEDIA_TYPE)
        .collect();
    let [layer] = layers[..] else {
        return Err(format!(
            "{source}: manifest {digest} has {} layers of type {LAYER_MEDIA_TYPE}; a Wasm component artifact has exactly one (publish it with toolhost publish)",
            layers.len()
        ));
    };
    if manifest.config.media_type != CONFIG_MEDIA_TYPE {
        tracing::warn!(
            source,
            config = %manifest.config.media_type,
            "the artifact's config is not {CONFIG_MEDIA_TYPE}; loading its {LAYER_MEDIA_TYPE} layer anyway"
        );
    }
    let size = u64::try_from(layer.size).unwrap_or(u64::MAX);
    if size > MAX_COMPONENT_BYTES {
        return Err(format!(
            "{source}: the component layer has {size} bytes; at most {MAX_COMPONENT_BYTES} are pulled"
        ));
    }
    let mut bytes = Capped {
        bytes: Vec::with_capacity(usize::try_from(size).unwrap_or(0)),
        max: size,
    };
    deadline(
        "pulling the component of",
        source,
        client.pull_blob(&reference, layer, &mut bytes),
    )
    .await?;
    let bytes = bytes.bytes;
    let component = sha256(&bytes);
    if component != layer.digest {
        return Err(format!(
            "{source}: the component pulled has digest {component}, the manifest says {}",
            layer.digest
        ));
    }
    Ok(Pulled {
        manifest: digest,
        component,
        bytes,
    })
}

/// Pushes `component` to `target` (an `oci://` reference with a tag) as a Wasm
/// artifact; returns the manifest's digest.
///
/// # Errors
///
/// A message naming the target when the push fails.
pub async fn push(target: &str, component: Vec<u8>) -> Result<String, String> {
    let reference = reference(target)?;
    let client = client(&reference);
    let auth = auth(&reference);
    let layer_digest = sha256(&component);
    let config = serde_json::json!({
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": [layer_digest],
    });
    let layer = ImageLayer::new(component, LAYER_MEDIA_TYPE.to_owned(), None);
    let config = Config::new(
        serde_json::to_vec(&config).expect("JSON"),
        CONFIG_MEDIA_TYPE.to_owned(),
        None,
    );
    deadline(
        "pushing",
        target,
        client.push(&reference, &[layer], config, &auth, None),
    )
    .await?;
    deadline(
        "resolving",
        target,
        client.fetch_manifest_digest(&reference, &auth),
    )
    .await
}

/// `sha256:<hex>` of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// A writer that refuses more than `max` bytes.
struct Capped {
    bytes: Vec<u8>,
    max: u64,
}

impl tokio::io::AsyncWrite for Capped {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        if self.bytes.len() as u64 + buf.len() as u64 > self.max {
            return std::task::Poll::Ready(Err(std::io::Error::other(format!(
                "the blob is larger than the {} bytes its manifest gives",
                self.max
            ))));
        }
        self.bytes.extend_from_slice(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}
