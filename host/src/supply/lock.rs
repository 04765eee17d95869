//! What the operator has accepted, kept in the data directory: `toolhost.lock`
//! (one pin per plugin: the source, the digests, the signer and the approved
//! request, and a newer version waiting for approval) and the pulled components
//! under `oci/sha256/<hex>`, so a restart needs no registry.
//!
//! Both are written atomically (a temporary file renamed into place, mode
//! 0600); a component read back is checked against its digest every time.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::registry::sha256;
use super::request::Request;

/// The name of the lock file in the data directory.
pub const LOCK_FILE: &str = "toolhost.lock";

/// Every pin, by plugin name.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    #[serde(default)]
    pub plugin: BTreeMap<String, Pin>,
}

/// One plugin's accepted version.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    /// The source as configured when it was pinned; another source pins anew.
    pub source: String,
    #[serde(flatten)]
    pub version: Version,
    /// The request approved (first use, `toolhost approve`); absent: everything
    /// the configuration grants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved: Option<Request>,
    /// A newer version that requests more than approved, held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Version>,
}

/// One version of a component.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Version {
    /// The manifest digest a registry tag resolved to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<String>,
    /// `sha256:<hex>` of the component's bytes.
    pub component: String,
    pub size: u64,
    /// The trusted key that signed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
    /// What it requests (absent: no `toolhost:policy` section).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Request>,
}

impl Lock {
    /// Reads the lock of `data_dir`; none yet is an empty lock.
    ///
    /// # Errors
    ///
    /// A message naming the file when it cannot be read or parsed.
    pub fn read(data_dir: &Path) -> Result<Lock, String> {
        let path = data_dir.join(LOCK_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => toml::from_str(&text).map_err(|e| {
                format!(
                    "{}: {}; restore it from a backup, or delete it to pin every plugin anew",
                    path.display(),
                    e.message()
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Lock::default()),
            Err(e) => Err(format!("{}: cannot read it: {e}", path.display())),
        }
    }

    /// Writes the lock into `data_dir`, atomically.
    ///
    /// # Errors
    ///
    /// A message naming the file.
    pub fn write(&self, data_dir: &Path) -> Result<(), String> {
        let text = format!(
            "# Written by toolhost: the pinned version of each plugin and what it may request.\n# Change it with `toolhost update` and `toolhost approve`.\n\n{}",
            toml::to_string(self).expect("the lock serializes")
        );
        write_atomically(&data_dir.join(LOCK_FILE), text.as_bytes())
    }
}

/// The pulled components of `data_dir`, by digest.
pub struct Blobs {
    dir: PathBuf,
}

impl Blobs {
    pub fn new(data_dir: &Path) -> Blobs {
        Blobs {
            dir: data_dir.join("oci").join("sha256"),
        }
    }

    fn path(&self, digest: &str) -> Result<PathBuf, String> {
        let hex = digest.strip_prefix("sha256:").unwrap_or_default();
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("{digest:?} is not a sha256 digest"));
        }
        Ok(self.dir.join(hex))
    }

    /// The component of `digest`, checked against it.
    ///
    /// # Errors
    ///
    /// A message when it is missing or its bytes no longer match the digest.
    pub fn read(&self, digest: &str) -> Result<Vec<u8>, String> {
        let path = self.path(digest)?;
        let bytes = std::fs::read(&path).map_err(|e| {
            format!(
                "the pinned copy {} cannot be read ({e}); run toolhost update to pull it again",
                path.display()
            )
        })?;
        let found = sha256(&bytes);
        if found != digest {
            return Err(format!(
                "the pinned copy {} has digest {found}, not the pinned {digest}: it was changed on disk; delete it and run toolhost update to pull it again",
                path.display()
            ));
        }
        Ok(bytes)
    }

    /// Keeps `bytes` under their digest.
    ///
    /// # Errors
    ///
    /// A message naming the file.
    pub fn write(&self, digest: &str, bytes: &[u8]) -> Result<(), String> {
        let path = self.path(digest)?;
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| format!("{}: cannot create it: {e}", self.dir.display()))?;
        write_atomically(&path, bytes)
    }
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let partial = path.with_extension(format!("partial-{}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&partial)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&partial, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        format!("{}: cannot write it: {e}", path.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_round_trips_and_a_changed_blob_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = b"\0asm component".to_vec();
        let digest = sha256(&bytes);
        let blobs = Blobs::new(dir.path());
        blobs.write(&digest, &bytes).unwrap();
        assert_eq!(blobs.read(&digest).unwrap(), bytes);
        let mut lock = Lock::default();
        lock.plugin.insert(
            "calc".into(),
            Pin {
                source: "oci://127.0.0.1:5000/calc:1".into(),
                version: Version {
                    manifest: Some(format!("sha256:{}", "1".repeat(64))),
                    component: digest.clone(),
                    size: bytes.len() as u64,
                    signer: Some("alice".into()),
                    request: Some(Request::parse("env = [\"A\"]").unwrap()),
                },
                approved: Some(Request::parse("env = [\"A\"]").unwrap()),
                pending: None,
            },
        );
        lock.write(dir.path()).unwrap();
        let back = Lock::read(dir.path()).unwrap();
        assert_eq!(back.plugin["calc"].version, lock.plugin["calc"].version);
        let hex = digest.strip_prefix("sha256:").unwrap();
        std::fs::write(dir.path().join("oci/sha256").join(hex), b"other").unwrap();
        let err = blobs.read(&digest).unwrap_err();
        assert!(err.contains("it was changed on disk"), "{err}");
    }
}
