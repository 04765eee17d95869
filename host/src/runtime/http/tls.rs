//! Which servers guests' HTTPS requests trust: the system's CA certificates
//! (`/etc/ssl/certs` and its kin, read by `rustls-native-certs`) and, when the
//! operator sets `host.http_ca_file`, the CAs of that PEM file as well. rustls with
//! the `ring` provider; the certificate must name the host the request names.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;
use rustls::{ClientConfig, RootCertStore};

/// The trust of guests' HTTPS, shared by every plugin of a runtime.
#[derive(Debug, Default)]
pub struct HttpTls {
    extra: Vec<CertificateDer<'static>>,
    /// Built on the first HTTPS request: reading the system's roots takes a few
    /// milliseconds that a host without HTTP guests need not spend at start.
    config: OnceLock<Result<Arc<ClientConfig>, String>>,
}

impl HttpTls {
    /// The system's roots and, with `ca_file`, its certificates.
    ///
    /// # Errors
    ///
    /// A message naming `ca_file` when it cannot be read or holds no certificate.
    pub fn new(ca_file: Option<&Path>) -> Result<HttpTls, String> {
        let mut extra = Vec::new();
        if let Some(path) = ca_file {
            let problem = |e: String| format!("host.http_ca_file {}: {e}", path.display());
            for cert in CertificateDer::pem_file_iter(path).map_err(|e| problem(e.to_string()))? {
                extra.push(cert.map_err(|e| problem(e.to_string()))?);
            }
            if extra.is_empty() {
                return Err(problem(
                    "holds no PEM certificate (-----BEGIN CERTIFICATE-----)".into(),
                ));
            }
        }
        Ok(HttpTls {
            extra,
            config: OnceLock::new(),
        })
    }

    /// The client configuration of every HTTPS request.
    ///
    /// # Errors
    ///
    /// When no root at all could be loaded, or rustls refuses the configuration.
    pub fn client_config(&self) -> Result<Arc<ClientConfig>, String> {
        self.config
            .get_or_init(|| {
                let mut roots = RootCertStore::empty();
                let native = rustls_native_certs::load_native_certs();
                let (added, _ignored) = roots.add_parsable_certificates(native.certs);
                for cert in &self.extra {
                    roots
                        .add(cert.clone())
                        .map_err(|e| format!("host.http_ca_file: a certificate is not a CA rustls accepts: {e}"))?;
                }
                if added == 0 && self.extra.is_empty() {
                    return Err("no CA certificate was found on the system (install ca-certificates, or set host.http_ca_file)".into());
                }
                let provider = Arc::new(rustls::crypto::ring::default_provider());
                let config = ClientConfig::builder_with_provider(provider)
                    .with_safe_default_protocol_versions()
                    .map_err(|e| e.to_string())?
                    .with_root_certificates(roots)
                    .with_no_client_auth();
                Ok(Arc::new(config))
            })
            .clone()
    }
}
