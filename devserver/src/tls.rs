//! The dev server's throw-away PKI: a self-signed CA generated at start and a
//! server certificate for `127.0.0.1`, `::1` and `localhost` signed by it.
//!
//! Nothing is written to disk except the CA certificate, which goes into the
//! kubeconfig so that kubectl and kube-client verify the server normally.

use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A freshly generated CA and the server TLS configuration that uses it.
pub struct DevPki {
    /// PEM of the CA certificate (what clients must trust).
    pub ca_pem: String,
    /// rustls server configuration with ALPN `h2` and `http/1.1`.
    pub server_config: Arc<rustls::ServerConfig>,
}

/// Errors while generating the certificates or building the TLS configuration.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("generating dev server certificates: {0}")]
    Rcgen(#[from] rcgen::Error),
    #[error("building the TLS server configuration: {0}")]
    Rustls(#[from] rustls::Error),
}

/// Generate a CA and a server certificate for the loopback names.
pub fn generate() -> Result<DevPki, TlsError> {
    let ca_key = KeyPair::generate()?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    let mut ca_dn = DistinguishedName::new();
    ca_dn.push(DnType::CommonName, "recon dev-server CA");
    ca_params.distinguished_name = ca_dn;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca = CertifiedIssuer::self_signed(ca_params, ca_key)?;

    let server_key = KeyPair::generate()?;
    let mut params = CertificateParams::new(vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ])?;
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, "recon dev-server");
    params.distinguished_name = dn;
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let server_cert = params.signed_by(&server_key, &ca)?;

    let chain = vec![
        CertificateDer::from(server_cert.der().to_vec()),
        CertificateDer::from(ca.der().to_vec()),
    ];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(DevPki {
        ca_pem: ca.pem(),
        server_config: Arc::new(config),
    })
}
