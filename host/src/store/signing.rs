//! Signed, expiring links to stored results.
//!
//! A link is `toolhost://results/<id>?exp=<unix seconds>&sig=<token>`, where the
//! token is HMAC-SHA256 over the id, the principal the result belongs to and the
//! expiry, under a key only the host (and its replicas) hold. A link that was
//! changed, has expired, or is presented by another principal does not verify, and
//! the caller learns nothing about why.

use std::io::Write as _;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The scheme and path every stored-result link starts with.
pub const LINK_PREFIX: &str = "toolhost://results/";

/// Signs and verifies links with one key.
#[derive(Clone)]
pub struct Signer {
    key: Vec<u8>,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Signer { key: <hidden> }")
    }
}

/// The parts of a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub id: String,
    pub expires: i64,
    pub signature: String,
}

impl Signer {
    /// A signer with `key` (at least 32 bytes are recommended).
    pub fn new(key: Vec<u8>) -> Self {
        Signer { key }
    }

    /// A key of 32 bytes for `purpose` (another signature than a link's, such
    /// as a stateless caller's `requestState`), derived from this key: whoever
    /// shares the key file shares it, and a token signed for one purpose never
    /// verifies as another's.
    pub fn derive(&self, purpose: &str) -> [u8; 32] {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key)
            .expect("HMAC takes a key of any length");
        mac.update(b"toolhost derived key\0");
        mac.update(purpose.as_bytes());
        mac.finalize().into_bytes().into()
    }

    /// The key in `path` (hex), created with 32 random bytes and mode 0600 when
    /// missing, so replicas can share it by sharing the file. A key file that
    /// exists must be private (mode 0600 or 0400): one the group or others can
    /// read is refused, since whoever reads it can sign links to any result.
    ///
    /// # Errors
    ///
    /// When the file cannot be read or written, is readable by others (the
    /// message says `chmod 600`), or does not hold hex.
    pub fn load_or_create(path: &Path) -> std::io::Result<Signer> {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                super::private::check(path, "the signing key")?;
                let key = decode_hex(text.trim()).ok_or_else(|| {
                    std::io::Error::other(format!("{} does not hold a hex key", path.display()))
                })?;
                return Ok(Signer::new(key));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let mut key = vec![0u8; 32];
        getrandom::fill(&mut key).map_err(|e| std::io::Error::other(e.to_string()))?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        // Written whole under a name of this process's, then linked into place:
        // replicas starting together never read a half-written key, and the
        // one that links second uses the first one's key.
        let mut tag = [0u8; 8];
        getrandom::fill(&mut tag).map_err(|e| std::io::Error::other(e.to_string()))?;
        let partial = path.with_extension(format!("partial-{}", u64::from_le_bytes(tag)));
        let written = super::private::create_new(&partial).and_then(|mut file| {
            let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
            file.write_all(hex.as_bytes())?;
            file.sync_all()
        });
        let linked = written.and_then(|()| std::fs::hard_link(&partial, path));
        let _ = std::fs::remove_file(&partial);
        match linked {
            Ok(()) => Ok(Signer::new(key)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Signer::load_or_create(path),
            Err(e) => Err(e),
        }
    }

    /// The link to result `id` of `principal`, valid until `expires` (unix seconds).
    pub fn link(&self, id: &str, principal: Option<&str>, expires: i64) -> String {
        let signature =
            URL_SAFE_NO_PAD.encode(self.mac(id, principal, expires).finalize().into_bytes());
        format!("{LINK_PREFIX}{id}?exp={expires}&sig={signature}")
    }

    /// The id behind `uri` when its signature holds for `principal` and it has not
    /// expired at `now` (unix seconds); `None` for every other case.
    pub fn verify(&self, uri: &str, principal: Option<&str>, now: i64) -> Option<String> {
        let link = parse(uri)?;
        if link.expires <= now {
            return None;
        }
        let signature = URL_SAFE_NO_PAD.decode(&link.signature).ok()?;
        self.mac(&link.id, principal, link.expires)
            .verify_slice(&signature)
            .ok()?;
        Some(link.id)
    }

    fn mac(&self, id: &str, principal: Option<&str>, expires: i64) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key)
            .expect("HMAC takes any key length");
        // Length-prefixed fields, so no two (id, principal, expiry) share a message.
        for field in [
            id.as_bytes(),
            principal.unwrap_or_default().as_bytes(),
            expires.to_string().as_bytes(),
        ] {
            mac.update(&(field.len() as u64).to_be_bytes());
            mac.update(field);
        }
        mac.update(&[u8::from(principal.is_some())]);
        mac
    }
}

/// Splits a link into its parts; `None` when it is not one.
pub fn parse(uri: &str) -> Option<Link> {
    let rest = uri.strip_prefix(LINK_PREFIX)?;
    let (id, query) = rest.split_once('?')?;
    let (mut expires, mut signature) = (None, None);
    for pair in query.split('&') {
        match pair.split_once('=')? {
            ("exp", value) => expires = value.parse().ok(),
            ("sig", value) => signature = Some(value.to_owned()),
            _ => return None,
        }
    }
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    Some(Link {
        id: id.to_owned(),
        expires: expires?,
        signature: signature?,
    })
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || text.is_empty() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signer() -> Signer {
        Signer::new(b"0123456789abcdef0123456789abcdef".to_vec())
    }

    #[test]
    fn a_link_verifies_for_its_principal_until_it_expires() {
        let link = signer().link("abc123", Some("alice"), 1_000);
        assert_eq!(
            signer().verify(&link, Some("alice"), 999).as_deref(),
            Some("abc123")
        );
        assert_eq!(
            signer().verify(&link, Some("alice"), 1_000),
            None,
            "expired"
        );
        assert_eq!(
            signer().verify(&link, Some("bob"), 999),
            None,
            "another principal"
        );
        assert_eq!(signer().verify(&link, None, 999), None, "no principal");
    }

    #[test]
    fn a_changed_link_does_not_verify() {
        let link = signer().link("abc123", None, 1_000);
        for tampered in [
            link.replace("abc123", "abc124"),
            link.replace("exp=1000", "exp=2000"),
            format!("{link}x"),
            link.replace("toolhost://", "https://"),
        ] {
            assert_eq!(signer().verify(&tampered, None, 0), None, "{tampered}");
        }
        let other_key = Signer::new(b"another key, another host........".to_vec());
        assert_eq!(other_key.verify(&link, None, 0), None);
    }

    #[test]
    fn replicas_starting_together_share_one_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("signing.key");
        let keys: Vec<Vec<u8>> = std::thread::scope(|scope| {
            let starts: Vec<_> = (0..16)
                .map(|_| scope.spawn(|| Signer::load_or_create(&path).unwrap().key))
                .collect();
            starts.into_iter().map(|s| s.join().unwrap()).collect()
        });
        assert!(keys.iter().all(|key| *key == keys[0]), "{keys:?}");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no partial file is left: {left:?}");
    }

    #[test]
    fn the_key_file_is_created_once_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys/signing.key");
        let first = Signer::load_or_create(&path).unwrap();
        let second = Signer::load_or_create(&path).unwrap();
        let link = first.link("id1", None, 10);
        assert_eq!(second.verify(&link, None, 0).as_deref(), Some("id1"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            assert_eq!(
                std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
                0o600
            );
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            let error = Signer::load_or_create(&path).unwrap_err().to_string();
            assert!(
                error.contains("the signing key") && error.contains("mode 0644"),
                "{error}"
            );
            assert!(
                error.contains(&format!("chmod 600 {}", path.display())),
                "{error}"
            );
        }
    }
}
