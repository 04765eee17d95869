//! Where a plugin's component comes from, and whether it may run: the step
//! between the catalog and the sandbox.
//!
//! [`Supply::configure`] reads the trust policy once; [`Supply::component`]
//! gives, per plugin, the bytes to compile and the policy they run under:
//!
//! - a **registry** source (`oci://`) runs its pinned copy from the data
//!   directory (checked against its digest); with no pin yet, the tag is
//!   resolved, pulled and pinned (trust on first use, logged with what it
//!   requests). A moved tag changes nothing until [`Supply::update`];
//! - a **file** source is read as before, and pinned only once it carries a
//!   `toolhost:policy` request, so a new file asking for more is refused;
//! - the signature is verified whenever the plugin requires one, each time the
//!   bytes are loaded;
//! - the policy is what the configuration grants narrowed to what the
//!   component requests ([`request::effective`]).
//!
//! A new version that requests more than was approved is held (registry) or
//! refused (file) until the operator runs `toolhost approve` ([`Supply::approve`]).

pub mod lock;
mod publish;
pub mod registry;
pub mod report;
pub mod request;
pub mod signature;

use std::path::PathBuf;

pub use publish::publish;

use crate::config::{Config, PluginConfig};
use crate::runtime::LoadError;
use lock::{Blobs, Lock, Pin, Version};
use registry::sha256;
use request::Request;
use signature::{Trust, Unverified};

/// The component of one plugin, ready to compile.
pub struct Supplied {
    pub bytes: Vec<u8>,
    /// The plugin with its effective policy.
    pub config: PluginConfig,
}

/// The bytes of a file source's component (`toolhost check` reads them too).
///
/// # Errors
///
/// A message saying how to get the file when it cannot be read.
pub fn read_component(plugin: &PluginConfig) -> Result<Vec<u8>, String> {
    std::fs::read(&plugin.path).map_err(|e| {
        format!(
            "cannot read the component: {e}; build it (make guests) or fix the path in {}",
            plugin.configured_in.display()
        )
    })
}

/// The trust policy and the data directory's pins.
pub struct Supply {
    data_dir: PathBuf,
    trust: Trust,
}

impl Supply {
    /// Reads the trust policy of `config`.
    ///
    /// # Errors
    ///
    /// A message naming a key file that cannot be read.
    pub fn configure(config: &Config) -> Result<Supply, String> {
        Ok(Supply {
            data_dir: config.host.data_dir.clone(),
            trust: Trust::configure(&config.trust)?,
        })
    }

    /// The bytes and the effective policy of `plugin` (see the module docs).
    ///
    /// # Errors
    ///
    /// A [`LoadError`] naming the source: unreadable, unreachable with no pin,
    /// tampered, unsigned or not signed by a trusted key, or requesting more
    /// than approved.
    pub async fn component(&self, plugin: &PluginConfig) -> Result<Supplied, LoadError> {
        let error = |problem: String| LoadError {
            path: plugin.path.display().to_string(),
            problem,
        };
        let (bytes, version) = match &plugin.registry {
            Some(source) => self.pinned_or_pulled(plugin, source).await.map_err(error)?,
            None => self.read_file(plugin).map_err(error)?,
        };
        let (policy, not_granted) = request::effective(&plugin.policy, version.request.as_ref());
        if !not_granted.is_empty() {
            tracing::warn!(
                plugin = %plugin.name,
                not_granted = %not_granted.join("; "),
                "the component requests what the configuration does not grant; it runs without it"
            );
        }
        let mut config = plugin.clone();
        config.policy = policy;
        Ok(Supplied { bytes, config })
    }

    async fn pinned_or_pulled(
        &self,
        plugin: &PluginConfig,
        source: &str,
    ) -> Result<(Vec<u8>, Version), String> {
        let named = |problem: String| format!("plugin {}: {problem}", plugin.name);
        let mut lock = Lock::read(&self.data_dir)?;
        let blobs = Blobs::new(&self.data_dir);
        if let Some(pin) = lock.plugin.get(&plugin.name).filter(|p| p.source == source) {
            let bytes = blobs.read(&pin.version.component).map_err(named)?;
            self.verify(plugin, &pin.version.component, &bytes)?;
            if let Some(pending) = &pin.pending {
                tracing::warn!(
                    plugin = %plugin.name,
                    waiting = pending.manifest.as_deref().unwrap_or(&pending.component),
                    serving = pin.version.manifest.as_deref().unwrap_or(&pin.version.component),
                    more = %request::beyond(pending.request.as_ref(), pin.approved.as_ref()).join("; "),
                    "a newer version waits for approval: it requests more than approved; the pinned one serves until `toolhost approve {}`",
                    plugin.name
                );
            }
            return Ok((bytes, pin.version.clone()));
        }
        let pulled = registry::pull(source, None).await.map_err(named)?;
        let version = self.accept(
            plugin,
            &pulled.component,
            Some(pulled.manifest),
            &pulled.bytes,
        )?;
        blobs.write(&version.component, &pulled.bytes)?;
        tracing::info!(
            plugin = %plugin.name,
            source,
            manifest = version.manifest.as_deref().unwrap_or_default(),
            signer = version.signer.as_deref().unwrap_or("none"),
            requests = %request::summary(version.request.as_ref()),
            "pinned on first use"
        );
        lock.plugin.insert(
            plugin.name.clone(),
            Pin {
                source: source.to_owned(),
                approved: version.request.clone(),
                version: version.clone(),
                pending: None,
            },
        );
        lock.write(&self.data_dir)?;
        Ok((pulled.bytes, version))
    }

    fn read_file(&self, plugin: &PluginConfig) -> Result<(Vec<u8>, Version), String> {
        let bytes = read_component(plugin)?;
        let digest = sha256(&bytes);
        let version = self.accept(plugin, &digest, None, &bytes)?;
        let source = plugin.path.display().to_string();
        let mut lock = Lock::read(&self.data_dir)?;
        let pin = lock
            .plugin
            .get_mut(&plugin.name)
            .filter(|p| p.source == source);
        match pin {
            None if version.request.is_none() => return Ok((bytes, version)),
            None => {
                tracing::info!(
                    plugin = %plugin.name,
                    component = %digest,
                    requests = %request::summary(version.request.as_ref()),
                    "pinned on first use"
                );
                lock.plugin.insert(
                    plugin.name.clone(),
                    Pin {
                        source,
                        approved: version.request.clone(),
                        version: version.clone(),
                        pending: None,
                    },
                );
            }
            Some(pin) if pin.version == version && pin.pending.is_none() => {
                return Ok((bytes, version));
            }
            Some(pin) => {
                let more = request::beyond(version.request.as_ref(), pin.approved.as_ref());
                if !more.is_empty() {
                    let problem = format!(
                        "plugin {}: component {digest} requests more than was approved: {}; review it (toolhost plugins) and run `toolhost approve {}`",
                        plugin.name,
                        more.join("; "),
                        plugin.name
                    );
                    if pin.pending.as_ref() != Some(&version) {
                        pin.pending = Some(version);
                        lock.write(&self.data_dir)?;
                    }
                    return Err(problem);
                }
                pin.version = version.clone();
                pin.pending = None;
            }
        }
        lock.write(&self.data_dir)?;
        Ok((bytes, version))
    }

    /// The [`Version`] of `bytes` once its signature (when required) and its
    /// request check out.
    fn accept(
        &self,
        plugin: &PluginConfig,
        digest: &str,
        manifest: Option<String>,
        bytes: &[u8],
    ) -> Result<Version, String> {
        let signer = self.verify(plugin, digest, bytes)?;
        let request = Request::from_component(bytes)
            .map_err(|e| format!("plugin {}: component {digest}: {e}", plugin.name))?;
        Ok(Version {
            manifest,
            component: digest.to_owned(),
            size: bytes.len() as u64,
            signer,
            request,
        })
    }

    /// The signer of `bytes`, when `plugin` requires one.
    fn verify(
        &self,
        plugin: &PluginConfig,
        digest: &str,
        bytes: &[u8],
    ) -> Result<Option<String>, String> {
        if !plugin.require_signature {
            return Ok(None);
        }
        let expected = self.trust.expected(&plugin.signers);
        match self.trust.signer(bytes, &plugin.signers) {
            Ok(signer) => Ok(Some(signer)),
            Err(Unverified::Unsigned) => Err(format!(
                "plugin {}: component {digest} is not signed; the trust policy requires a signature by {expected} (sign it with `toolhost publish --sign KEY`)",
                plugin.name
            )),
            Err(Unverified::NotByTrustedKey) => Err(format!(
                "plugin {}: component {digest} has no valid signature by {expected}: it is signed by another key, or was changed after signing",
                plugin.name
            )),
        }
    }

    /// Resolves the tag of a registry plugin again; pins the new version when it
    /// requests no more than approved, holds it otherwise. Returns one line
    /// saying what happened.
    ///
    /// # Errors
    ///
    /// A message when the registry cannot be reached or the new version is
    /// refused (its signature); the pinned version stays.
    pub async fn update(&self, plugin: &PluginConfig) -> Result<String, String> {
        let Some(source) = &plugin.registry else {
            return Ok(format!(
                "{}: a file source; its pin follows the file, nothing to pull",
                plugin.name
            ));
        };
        let mut lock = Lock::read(&self.data_dir)?;
        let manifest = registry::resolve(source).await?;
        let mut pin = lock
            .plugin
            .get_mut(&plugin.name)
            .filter(|p| p.source == *source);
        if let Some(pin) = pin.as_deref_mut()
            && pin.version.manifest.as_deref() == Some(manifest.as_str())
        {
            // The tag is back where the pin is: a held version is moot.
            if pin.pending.take().is_some() {
                lock.write(&self.data_dir)?;
            }
            return Ok(format!("{}: up to date at {manifest}", plugin.name));
        }
        let pulled = registry::pull(source, Some(&manifest)).await?;
        let version = self
            .accept(
                plugin,
                &pulled.component,
                Some(pulled.manifest),
                &pulled.bytes,
            )
            .map_err(|e| format!("{e}; refused, the pinned version stays"))?;
        Blobs::new(&self.data_dir).write(&version.component, &pulled.bytes)?;
        let line = match pin {
            None => {
                let line = format!(
                    "{}: pinned {manifest}, requesting {}",
                    plugin.name,
                    request::summary(version.request.as_ref())
                );
                lock.plugin.insert(
                    plugin.name.clone(),
                    Pin {
                        source: source.clone(),
                        approved: version.request.clone(),
                        version,
                        pending: None,
                    },
                );
                line
            }
            Some(pin) => {
                let old = pin.version.manifest.clone().unwrap_or_default();
                let more = request::beyond(version.request.as_ref(), pin.approved.as_ref());
                if more.is_empty() {
                    pin.version = version;
                    pin.pending = None;
                    format!("{}: updated {old} -> {manifest}", plugin.name)
                } else {
                    pin.pending = Some(version);
                    format!(
                        "{}: {manifest} requests more than approved: {}; held, {old} keeps serving until `toolhost approve {}`",
                        plugin.name,
                        more.join("; "),
                        plugin.name
                    )
                }
            }
        };
        lock.write(&self.data_dir)?;
        Ok(line)
    }

    /// Approves the version of plugin `name` that waits: it becomes the pin, and
    /// what it requests the approved request.
    ///
    /// # Errors
    ///
    /// A message when nothing waits for approval.
    pub fn approve(&self, name: &str) -> Result<String, String> {
        let mut lock = Lock::read(&self.data_dir)?;
        let Some(pin) = lock.plugin.get_mut(name) else {
            return Err(format!(
                "no plugin {name} is pinned in {}; `toolhost plugins` lists them",
                self.data_dir.join(lock::LOCK_FILE).display()
            ));
        };
        let Some(pending) = pin.pending.take() else {
            return Err(format!(
                "plugin {name}: nothing waits for approval; {} is pinned",
                pin.version
                    .manifest
                    .as_deref()
                    .unwrap_or(&pin.version.component)
            ));
        };
        let line = format!(
            "{name}: approved {}, requesting {}",
            pending.manifest.as_deref().unwrap_or(&pending.component),
            request::summary(pending.request.as_ref())
        );
        pin.approved = pending.request.clone();
        pin.version = pending;
        lock.write(&self.data_dir)?;
        Ok(line)
    }
}
