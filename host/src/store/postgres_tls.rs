//! TLS for the PostgreSQL store: the `sslmode` of the connection string, with
//! rustls (the `ring` provider) and the system's CA certificates or
//! `store.ca_file`.
//!
//! libpq's modes, as toolhost reads them:
//!
//! | `sslmode` | TLS | the server's certificate |
//! |---|---|---|
//! | `disable` | never | not looked at |
//! | `prefer` (the default, as in libpq) | when the server offers it | as `require` |
//! | `require` | always | chain checked against `store.ca_file` when it is set (as libpq does when a root certificate file exists); nothing is checked without it |
//! | `verify-ca` | always | chain checked against the trusted CAs; any host name |
//! | `verify-full` | always | chain checked, and the certificate must name the host connected to |
//!
//! The trusted CAs are those of `store.ca_file` when it is set, else the
//! system's (`/etc/ssl/certs` and its kin, read by `rustls-native-certs`): a
//! private CA does not widen to every public one. Connections over a Unix socket
//! never use TLS (as in libpq). `tokio-postgres` itself knows only `disable`,
//! `prefer` and `require`, so [`split_sslmode`] takes the parameter out of the
//! string before it is parsed.

use std::path::Path;
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::StoreError;

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Result<SslMode, StoreError> {
        Ok(match value {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(StoreError(format!(
                    "PostgreSQL URL: sslmode {other:?} is unknown; use disable, prefer, require, verify-ca or verify-full"
                )));
            }
        })
    }

    /// What `tokio-postgres` is told: whether TLS is tried and whether it is required.
    pub fn negotiation(self) -> tokio_postgres::config::SslMode {
        match self {
            SslMode::Disable => tokio_postgres::config::SslMode::Disable,
            SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
                tokio_postgres::config::SslMode::Require
            }
        }
    }

    /// Whether a connection in this mode knows whom it talks to.
    pub fn authenticates(self, ca_file: Option<&Path>) -> bool {
        match self {
            SslMode::Disable | SslMode::Prefer => false,
            SslMode::Require => ca_file.is_some(),
            SslMode::VerifyCa | SslMode::VerifyFull => true,
        }
    }
}

/// The connection string without its `sslmode`, and the mode it named
/// (`prefer` when none). Both forms are read: the URL
/// (`postgres://…?sslmode=verify-full&…`) and key=value pairs
/// (`host=… sslmode=verify-full`).
///
/// # Errors
///
/// An unknown mode, or a mode given twice.
pub fn split_sslmode(url: &str) -> Result<(String, SslMode), StoreError> {
    let mut found = Vec::new();
    let rest = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        match url.split_once('?') {
            None => url.to_owned(),
            Some((base, query)) => {
                let kept: Vec<&str> = query
                    .split('&')
                    .filter(|pair| match pair.split_once('=') {
                        Some(("sslmode", value)) => {
                            found.push(value.to_owned());
                            false
                        }
                        _ => true,
                    })
                    .collect();
                if kept.is_empty() {
                    base.to_owned()
                } else {
                    format!("{base}?{}", kept.join("&"))
                }
            }
        }
    } else {
        key_value_without_sslmode(url, &mut found)
    };
    let mode = match found.as_slice() {
        [] => SslMode::Prefer,
        [one] => SslMode::parse(one)?,
        _ => {
            return Err(StoreError(
                "PostgreSQL URL: sslmode is given more than once".into(),
            ));
        }
    };
    Ok((rest, mode))
}

/// Removes `sslmode = value` (spaces around `=` allowed, as libpq allows them)
/// from a key=value string; other pairs stay as written.
fn key_value_without_sslmode(text: &str, found: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = find_key(rest, "sslmode") {
        let after = rest[start + "sslmode".len()..].trim_start();
        let Some(after) = after.strip_prefix('=') else {
            out.push_str(&rest[..start + "sslmode".len()]);
            rest = &rest[start + "sslmode".len()..];
            continue;
        };
        let after = after.trim_start();
        let end = after.find(char::is_whitespace).unwrap_or(after.len());
        found.push(after[..end].trim_matches('\'').to_owned());
        out.push_str(&rest[..start]);
        rest = &after[end..];
    }
    out.push_str(rest);
    out.trim().to_owned()
}

/// Where `key` starts as a key: at the start or after whitespace.
fn find_key(text: &str, key: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = text[from..].find(key).map(|i| i + from) {
        if i == 0 || text[..i].ends_with(char::is_whitespace) {
            return Some(i);
        }
        from = i + key.len();
    }
    None
}

/// The TLS connector for `mode`, trusting `ca_file` (PEM) or the system's CAs.
///
/// # Errors
///
/// When `ca_file` cannot be read or holds no certificate, or a verifying mode
/// finds no CA to trust.
pub fn connector(mode: SslMode, ca_file: Option<&Path>) -> Result<MakeRustlsConnect, StoreError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| StoreError(format!("TLS setup: {e}")))?;
    let verifier: Arc<dyn ServerCertVerifier> = match (mode, ca_file) {
        (SslMode::Disable, _) | (SslMode::Prefer | SslMode::Require, None) => {
            Arc::new(Unverified(provider))
        }
        (SslMode::Prefer | SslMode::Require | SslMode::VerifyCa, _) => {
            Arc::new(AnyName(webpki(roots(ca_file)?, &provider)?))
        }
        (SslMode::VerifyFull, _) => webpki(roots(ca_file)?, &provider)?,
    };
    let config = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// The CAs of `ca_file`, or the system's.
fn roots(ca_file: Option<&Path>) -> Result<RootCertStore, StoreError> {
    let mut roots = RootCertStore::empty();
    match ca_file {
        Some(path) => {
            let certificates = CertificateDer::pem_file_iter(path)
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|e| {
                    StoreError(format!(
                        "store.ca_file {}: cannot read PEM certificates: {e}",
                        path.display()
                    ))
                })?;
            let (added, _) = roots.add_parsable_certificates(certificates);
            if added == 0 {
                return Err(StoreError(format!(
                    "store.ca_file {}: holds no usable CA certificate (PEM, \"BEGIN CERTIFICATE\")",
                    path.display()
                )));
            }
        }
        None => {
            let system = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(system.certs);
            if roots.is_empty() {
                return Err(StoreError(
                    "sslmode verify-ca and verify-full need a CA to trust: the system has none; set store.ca_file to the CA that signed the server's certificate".into(),
                ));
            }
        }
    }
    Ok(roots)
}

fn webpki(
    roots: RootCertStore,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<dyn ServerCertVerifier>, StoreError> {
    let verifier: Arc<WebPkiServerVerifier> =
        WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .build()
            .map_err(|e| StoreError(format!("TLS setup: {e}")))?;
    Ok(verifier)
}

/// `verify-ca`: the chain must lead to a trusted CA; the name is not checked.
/// webpki checks the name last, so a name error means the chain held.
#[derive(Debug)]
struct AnyName(Arc<dyn ServerCertVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// `prefer` and `require` without `store.ca_file`: encrypted, but any
/// certificate is taken (libpq's behaviour). The handshake's signatures are
/// still checked, so the session key belongs to the certificate shown.
#[derive(Debug)]
struct Unverified(Arc<CryptoProvider>);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sslmode_is_taken_out_of_both_forms() {
        for (url, rest, mode) in [
            ("postgres://u@h/db", "postgres://u@h/db", SslMode::Prefer),
            (
                "postgres://u@h/db?sslmode=verify-full",
                "postgres://u@h/db",
                SslMode::VerifyFull,
            ),
            (
                "postgresql://u@h/db?connect_timeout=3&sslmode=verify-ca&application_name=x",
                "postgresql://u@h/db?connect_timeout=3&application_name=x",
                SslMode::VerifyCa,
            ),
            (
                "host=h user=u sslmode=require dbname=d",
                "host=h user=u  dbname=d",
                SslMode::Require,
            ),
            ("host=h sslmode = disable", "host=h", SslMode::Disable),
            (
                "sslmode='verify-full' host=h",
                "host=h",
                SslMode::VerifyFull,
            ),
            (
                "host=h application_name=nosslmode=x",
                "host=h application_name=nosslmode=x",
                SslMode::Prefer,
            ),
        ] {
            assert_eq!(
                split_sslmode(url).unwrap(),
                (rest.to_owned(), mode),
                "{url}"
            );
        }
    }

    #[test]
    fn an_unknown_or_repeated_sslmode_is_refused() {
        let unknown = split_sslmode("postgres://h/db?sslmode=allow-anything")
            .unwrap_err()
            .to_string();
        assert!(
            unknown.contains("\"allow-anything\" is unknown"),
            "{unknown}"
        );
        let twice = split_sslmode("host=h sslmode=disable sslmode=verify-full")
            .unwrap_err()
            .to_string();
        assert!(twice.contains("more than once"), "{twice}");
    }

    #[test]
    fn a_ca_file_without_certificates_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ca.pem");
        std::fs::write(&path, "not a certificate").unwrap();
        let error = connector(SslMode::VerifyFull, Some(&path))
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains(&format!("store.ca_file {}", path.display())),
            "{error}"
        );
        let missing = dir.path().join("missing.pem");
        let error = connector(SslMode::VerifyCa, Some(&missing))
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("cannot read"), "{error}");
    }
}
