//! HTTPS with a CA and a client certificate taken from the kubeconfig:
//! the transport `kube-client` builds (rustls, ring) against a loopback
//! server that requires a client certificate signed by the same CA.

use std::sync::Arc;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType, IsCa, KeyPair,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::TlsAcceptor;

use crate::clock::SystemClock;
use crate::kube::config::{ConnectOptions, connect};
use crate::kube::discovery::{ApiResource, Gvk};
use crate::kube::rate_limit::ClientRateLimiter;
use crate::kube::status::ApiErrorKind;
use crate::kube::test_support::temp_dir;

struct Pki {
    ca_pem: String,
    server: (CertificateDer<'static>, PrivateKeyDer<'static>),
    client_pem: String,
    client_key_pem: String,
    ca_der: CertificateDer<'static>,
}

fn pki() -> Pki {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, "recon test CA");
    ca_params.distinguished_name = name;
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();

    let server_key = KeyPair::generate().unwrap();
    let server_cert = CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&server_key, &ca)
        .unwrap();

    let client_key = KeyPair::generate().unwrap();
    let mut client_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, "recon-host");
    client_params.distinguished_name = name;
    let client_cert = client_params.signed_by(&client_key, &ca).unwrap();

    Pki {
        ca_pem: ca.pem(),
        ca_der: ca.der().clone(),
        server: (
            server_cert.der().clone(),
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der())),
        ),
        client_pem: client_cert.pem(),
        client_key_pem: client_key.serialize_pem(),
    }
}

async fn start_mtls_server(pki: &Pki) -> (u16, tokio::task::JoinHandle<()>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(pki.ca_der.clone()).unwrap();
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .unwrap();
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(vec![pki.server.0.clone()], pki.server.1.clone_key())
        .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let app = axum::Router::new().fallback(|| async {
        (
            [(http::header::CONTENT_TYPE, "application/json")],
            "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"tls\",\"namespace\":\"ns\"}}",
        )
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        // Bounded: a test makes a handful of connections.
        for _ in 0..16 {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            let app = app.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tls), TowerToHyperService::new(app))
                    .await;
            });
        }
    });
    (port, task)
}

#[tokio::test]
async fn https_with_a_ca_and_a_client_certificate_from_the_kubeconfig() {
    let pki = pki();
    let (port, server) = start_mtls_server(&pki).await;
    let dir = temp_dir();
    for (file, contents) in [
        ("ca.pem", &pki.ca_pem),
        ("client.pem", &pki.client_pem),
        ("client-key.pem", &pki.client_key_pem),
    ] {
        std::fs::write(dir.join(file), contents).unwrap();
    }
    // Relative paths are resolved against the kubeconfig's directory.
    let kubeconfig = format!(
        "apiVersion: v1
kind: Config
current-context: mtls
clusters:
- name: mtls
  cluster:
    server: https://127.0.0.1:{port}
    certificate-authority: ca.pem
users:
- name: cert
  user:
    client-certificate: client.pem
    client-key: client-key.pem
- name: anonymous
  user: {{}}
contexts:
- name: mtls
  context:
    cluster: mtls
    user: cert
- name: anonymous
  context:
    cluster: mtls
    user: anonymous
"
    );
    let path = dir.join("config");
    std::fs::write(&path, kubeconfig).unwrap();
    let res = ApiResource::new(Gvk::new("", "v1", "ConfigMap"), "configmaps", true);
    // A read of `ns/tls` as the user of `context`.
    let read_as = async |context: &str| {
        let options = ConnectOptions {
            kubeconfig: Some(path.clone()),
            context: Some(context.to_string()),
            in_cluster: false,
        };
        let client = connect(
            &options,
            ClientRateLimiter::unlimited(SystemClock::shared()),
        )
        .await
        .unwrap();
        client.get(&res, Some("ns"), "tls").await
    };

    let object = read_as("mtls").await.unwrap();
    assert_eq!(object.key(), "ns/tls");

    // Without the client certificate the handshake fails: a clear error,
    // no panic.
    let error = read_as("anonymous").await.unwrap_err();
    assert!(
        matches!(error.kind, ApiErrorKind::Other | ApiErrorKind::Unavailable),
        "{error}"
    );
    server.abort();
}
