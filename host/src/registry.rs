//! Guests from OCI registries. `host push` publishes a component as a Wasm
//! OCI artifact — the layout of wasm-pkg-tools (`wkg`) and Kubewarden: an
//! `application/vnd.wasm.config.v0+json` config and one `application/wasm`
//! layer — and a guest named `oci://REGISTRY/REPO:TAG` or
//! `oci://REGISTRY/REPO@sha256:…` is pulled, its manifest and layer
//! checked against their digests, and cached by the layer's digest (checked
//! again on every use). Credentials come from the Docker config file;
//! plain HTTP is used only for registries named insecure.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::manifest::{OciDescriptor, OciImageManifest, OciManifest};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use sha2::{Digest as _, Sha256};

/// How a guest in a registry is named on the command line.
pub const SCHEME: &str = "oci://";
/// The media type of the component layer.
pub const WASM_LAYER: &str = "application/wasm";
/// The media type of the artifact's config.
pub const WASM_CONFIG: &str = "application/vnd.wasm.config.v0+json";

/// The first eight bytes of a WebAssembly component (magic, version 0x0d,
/// layer 1).
const COMPONENT_HEADER: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];

/// How to reach registries.
#[derive(Debug, Clone, Default)]
pub struct RegistryOptions {
    /// Registries (`HOST:PORT`) spoken to over plain HTTP.
    pub insecure: Vec<String>,
    /// The Docker config file with credentials; `None` looks in
    /// `$DOCKER_CONFIG/config.json`, then `~/.docker/config.json`.
    pub docker_config: Option<PathBuf>,
}

/// Why a guest could not be pushed or pulled.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error(
        "{reference:?}: not an OCI reference (REGISTRY/REPOSITORY:TAG or @sha256:DIGEST): {source}"
    )]
    Reference {
        reference: String,
        #[source]
        source: oci_client::ParseError,
    },
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{what}: not a WebAssembly component")]
    NotAComponent { what: String },
    #[error("{reference}: cannot reach the registry: {detail}{hint}")]
    Unreachable {
        reference: String,
        detail: String,
        /// How to reach a registry that serves plain HTTP, when that may be
        /// the cause.
        hint: String,
    },
    #[error(
        "{reference}: the registry refused access (401/403): {detail}; credentials come from the \
         Docker config file ($DOCKER_CONFIG/config.json or ~/.docker/config.json)"
    )]
    Unauthorized { reference: String, detail: String },
    #[error("{reference}: not found in the registry: {detail}")]
    NotFound { reference: String, detail: String },
    #[error("{reference}: digest mismatch: expected {expected}, got {actual}")]
    DigestMismatch {
        reference: String,
        expected: String,
        actual: String,
    },
    #[error("{reference}: not a Wasm artifact (one {WASM_LAYER} layer): {found}")]
    NotWasm { reference: String, found: String },
    #[error("{reference}: {source}")]
    Registry {
        reference: String,
        #[source]
        source: OciDistributionError,
    },
    #[error("{}: not a Docker config file: {detail}", .path.display())]
    DockerConfig { path: PathBuf, detail: String },
    #[error("{reference}: no cache directory to pull it into (--cache-dir)")]
    NoCache { reference: String },
}

/// A guest's component on disk, and the digest of its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Component {
    pub path: PathBuf,
    /// `sha256:HEX`.
    pub digest: String,
}

/// The component a guest names: the file itself, or for `oci://REF` the
/// component pulled into `cache_dir/oci` (whose digest the pull checked).
pub async fn resolve(
    guest: &Path,
    options: &RegistryOptions,
    cache_dir: Option<&Path>,
) -> Result<Component, RegistryError> {
    let Some(reference) = oci_reference(guest) else {
        let bytes = tokio::fs::read(guest)
            .await
            .map_err(|source| RegistryError::Io {
                path: guest.to_path_buf(),
                source,
            })?;
        return Ok(Component {
            path: guest.to_path_buf(),
            digest: sha256(&bytes),
        });
    };
    let cache = cache_dir.ok_or_else(|| RegistryError::NoCache {
        reference: reference.to_string(),
    })?;
    pull(reference, options, &cache.join("oci")).await
}

/// The registry reference of a guest named `oci://…`; `None` for a path.
pub fn oci_reference(guest: &Path) -> Option<&str> {
    guest.to_str()?.strip_prefix(SCHEME)
}

fn parse(reference: &str) -> Result<Reference, RegistryError> {
    reference
        .parse()
        .map_err(|source| RegistryError::Reference {
            reference: reference.to_string(),
            source,
        })
}

/// A client that speaks plain HTTP to the insecure registries.
fn client(options: &RegistryOptions) -> Client {
    // reqwest's rustls uses the process's crypto provider: the host's ring.
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::new(ClientConfig {
        protocol: ClientProtocol::HttpsExcept(options.insecure.clone()),
        ..ClientConfig::default()
    })
}

/// The credentials for `reference`'s registry in the Docker config file,
/// if there is one; else anonymous.
fn auth(reference: &Reference, options: &RegistryOptions) -> Result<RegistryAuth, RegistryError> {
    let path = match &options.docker_config {
        Some(path) => path.clone(),
        None => match std::env::var_os("DOCKER_CONFIG") {
            Some(dir) => PathBuf::from(dir).join("config.json"),
            None => match std::env::var_os("HOME") {
                Some(home) => PathBuf::from(home).join(".docker/config.json"),
                None => return Ok(RegistryAuth::Anonymous),
            },
        },
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && options.docker_config.is_none() => {
            return Ok(RegistryAuth::Anonymous);
        }
        Err(source) => return Err(RegistryError::Io { path, source }),
    };
    let bad = |detail: String| RegistryError::DockerConfig {
        path: path.clone(),
        detail,
    };
    #[derive(serde::Deserialize)]
    struct DockerConfig {
        #[serde(default)]
        auths: BTreeMap<String, DockerAuth>,
    }
    #[derive(serde::Deserialize)]
    struct DockerAuth {
        auth: Option<String>,
    }
    let config: DockerConfig = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let registry = reference.resolve_registry();
    // Keys are `host[:port]`, sometimes with a scheme and a path
    // (`https://index.docker.io/v1/`).
    let found = config.auths.iter().find(|(key, _)| {
        let host = key.split_once("://").map_or(key.as_str(), |(_, rest)| rest);
        host.split('/').next() == Some(registry)
    });
    let Some((
        key,
        DockerAuth {
            auth: Some(encoded),
        },
    )) = found
    else {
        return Ok(RegistryAuth::Anonymous);
    };
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|e| bad(format!("auths.{key}.auth: {e}")))?;
    let decoded =
        String::from_utf8(decoded).map_err(|_| bad(format!("auths.{key}.auth: not UTF-8")))?;
    let (user, password) = decoded
        .split_once(':')
        .ok_or_else(|| bad(format!("auths.{key}.auth: not USER:PASSWORD")))?;
    Ok(RegistryAuth::Basic(user.to_string(), password.to_string()))
}

/// `sha256:HEX` of `bytes`.
fn sha256(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Names what went wrong talking to the registry about `reference`.
fn classify(
    reference: &Reference,
    insecure: &[String],
    error: OciDistributionError,
) -> RegistryError {
    let reference_text = reference.whole();
    let unauthorized = |detail: String| RegistryError::Unauthorized {
        reference: reference_text.clone(),
        detail,
    };
    let not_found = |detail: String| RegistryError::NotFound {
        reference: reference_text.clone(),
        detail,
    };
    match error {
        OciDistributionError::DigestError(oci_client::errors::DigestError::VerificationError {
            expected,
            actual,
        }) => RegistryError::DigestMismatch {
            reference: reference_text,
            expected,
            actual,
        },
        OciDistributionError::UnauthorizedError { url } => unauthorized(url),
        OciDistributionError::AuthenticationFailure(detail) => unauthorized(detail),
        OciDistributionError::ImageManifestNotFoundError(detail) => not_found(detail),
        OciDistributionError::ServerError {
            code: 404,
            url,
            message,
        } => not_found(format!("{url}: {message}")),
        OciDistributionError::ServerError {
            code: 401 | 403,
            url,
            message,
        } => unauthorized(format!("{url}: {message}")),
        OciDistributionError::RegistryError { envelope, url } => {
            let codes: Vec<&OciErrorCode> = envelope.errors.iter().map(|e| &e.code).collect();
            let detail = format!("{url}: {envelope}");
            if codes.iter().any(|c| {
                matches!(
                    c,
                    OciErrorCode::ManifestUnknown
                        | OciErrorCode::NameUnknown
                        | OciErrorCode::BlobUnknown
                        | OciErrorCode::NotFound
                )
            }) {
                not_found(detail)
            } else if codes
                .iter()
                .any(|c| matches!(c, OciErrorCode::Unauthorized | OciErrorCode::Denied))
            {
                unauthorized(detail)
            } else {
                RegistryError::Registry {
                    reference: reference_text,
                    source: OciDistributionError::RegistryError { envelope, url },
                }
            }
        }
        OciDistributionError::RequestError(e)
            if e.is_connect() || e.is_timeout() || e.is_request() =>
        {
            let registry = reference.resolve_registry();
            let hint = match insecure.iter().any(|r| r == registry) {
                true => String::new(),
                false => format!(
                    " (spoken to over HTTPS; if it serves plain HTTP, name it with \
                     --insecure-registry {registry})"
                ),
            };
            let mut detail = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                detail.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            RegistryError::Unreachable {
                reference: reference_text,
                detail,
                hint,
            }
        }
        source => RegistryError::Registry {
            reference: reference_text,
            source,
        },
    }
}

/// Publishes the component at `path` as `reference`; returns the pushed
/// manifest's digest (`sha256:…`).
pub async fn push(
    path: &Path,
    reference: &str,
    options: &RegistryOptions,
) -> Result<String, RegistryError> {
    let parsed = parse(reference)?;
    let component = std::fs::read(path).map_err(|source| RegistryError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if !component.starts_with(&COMPONENT_HEADER) {
        return Err(RegistryError::NotAComponent {
            what: path.display().to_string(),
        });
    }
    let layer_digest = sha256(&component);
    let config = serde_json::json!({
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": [layer_digest],
    });
    let config = Config::new(
        serde_json::to_vec(&config).expect("a JSON value serializes"),
        WASM_CONFIG.to_string(),
        None,
    );
    let title = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let layer = ImageLayer::new(
        component,
        WASM_LAYER.to_string(),
        Some(BTreeMap::from([(
            "org.opencontainers.image.title".to_string(),
            title,
        )])),
    );
    let layers = [layer];
    let manifest = OciImageManifest::build(&layers, &config, None);
    let client = client(options);
    let auth = auth(&parsed, options)?;
    let classify = |e| classify(&parsed, &options.insecure, e);
    client
        .push(&parsed, &layers, config, &auth, Some(manifest))
        .await
        .map_err(classify)?;
    client
        .fetch_manifest_digest(&parsed, &auth)
        .await
        .map_err(classify)
}

/// Pulls the guest `reference` into `cache` (unless a copy with the right
/// digest is there) and returns the component in it.
pub async fn pull(
    reference: &str,
    options: &RegistryOptions,
    cache: &Path,
) -> Result<Component, RegistryError> {
    let parsed = parse(reference)?;
    let client = client(options);
    let auth = auth(&parsed, options)?;
    let classify = |e| classify(&parsed, &options.insecure, e);
    let (manifest, _digest) = client
        .pull_manifest(&parsed, &auth)
        .await
        .map_err(classify)?;
    let layer = wasm_layer(reference, &manifest)?;
    let hex = layer
        .digest
        .strip_prefix("sha256:")
        .filter(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .ok_or_else(|| RegistryError::NotWasm {
            reference: reference.to_string(),
            found: format!("a layer digest {:?} that is not sha256", layer.digest),
        })?;
    let dir = cache.join("sha256");
    let path = dir.join(format!("{hex}.wasm"));
    let pulled = Component {
        path: path.clone(),
        digest: layer.digest.clone(),
    };
    if let Ok(cached) = std::fs::read(&path)
        && sha256(&cached) == layer.digest
    {
        return Ok(pulled);
    }
    let mut component = Vec::new();
    client
        .pull_blob(&parsed, &layer, &mut component)
        .await
        .map_err(classify)?;
    if !component.starts_with(&COMPONENT_HEADER) {
        return Err(RegistryError::NotAComponent {
            what: format!("{reference} (layer {})", layer.digest),
        });
    }
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| RegistryError::Io { path, source }
    };
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(&dir).map_err(io(&dir))?;
    // Written aside and renamed, so a reader never sees half a component.
    let partial = dir.join(format!("{hex}.wasm.{}.partial", std::process::id()));
    let mut file = std::fs::File::create(&partial).map_err(io(&partial))?;
    file.write_all(&component).map_err(io(&partial))?;
    file.sync_all().map_err(io(&partial))?;
    std::fs::rename(&partial, &path).map_err(io(&path))?;
    Ok(pulled)
}

/// The one `application/wasm` layer of an artifact's manifest.
fn wasm_layer(reference: &str, manifest: &OciManifest) -> Result<OciDescriptor, RegistryError> {
    let not_wasm = |found: String| RegistryError::NotWasm {
        reference: reference.to_string(),
        found,
    };
    let OciManifest::Image(image) = manifest else {
        return Err(not_wasm("an image index".to_string()));
    };
    match &image.layers[..] {
        [layer] if layer.media_type == WASM_LAYER => Ok(layer.clone()),
        layers => Err(not_wasm(format!(
            "layers of media types [{}]",
            layers
                .iter()
                .map(|l| l.media_type.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(text: &str) -> Reference {
        text.parse().unwrap()
    }

    fn docker_config(text: &str) -> RegistryOptions {
        let path = std::env::temp_dir().join(format!(
            "recon-docker-config-{}-{}.json",
            std::process::id(),
            fastrand::u64(..)
        ));
        std::fs::write(&path, text).unwrap();
        RegistryOptions {
            docker_config: Some(path),
            ..RegistryOptions::default()
        }
    }

    #[test]
    fn guests_in_registries_are_named_with_the_oci_scheme() {
        assert_eq!(
            oci_reference(Path::new("oci://127.0.0.1:5000/guests/mirror:v1")),
            Some("127.0.0.1:5000/guests/mirror:v1")
        );
        assert_eq!(oci_reference(Path::new("guests/mirror.wasm")), None);
        assert!(matches!(
            parse("127.0.0.1:5000/Guests:v1"),
            Err(RegistryError::Reference { .. })
        ));
    }

    #[test]
    fn credentials_come_from_the_docker_config_file() {
        let options = docker_config(
            r#"{"auths": {
                "127.0.0.1:5000": {"auth": "YWxpY2U6c2VjcmV0"},
                "https://index.docker.io/v1/": {"auth": "Ym9iOmh1bnRlcjI="}
            }}"#,
        );
        let alice = auth(&reference("127.0.0.1:5000/guests/mirror:v1"), &options).unwrap();
        assert!(matches!(&alice, RegistryAuth::Basic(u, p) if u == "alice" && p == "secret"));
        let bob = auth(&reference("docker.io/library/mirror:v1"), &options).unwrap();
        assert!(matches!(&bob, RegistryAuth::Basic(u, p) if u == "bob" && p == "hunter2"));
        let other = auth(&reference("ghcr.io/guests/mirror:v1"), &options).unwrap();
        assert!(matches!(other, RegistryAuth::Anonymous));

        let broken = docker_config(r#"{"auths": {"127.0.0.1:5000": {"auth": "not base64!"}}}"#);
        let error = auth(&reference("127.0.0.1:5000/guests/mirror:v1"), &broken).unwrap_err();
        assert!(
            error.to_string().contains("auths.127.0.0.1:5000.auth"),
            "{error}"
        );
    }

    #[test]
    fn an_artifact_must_have_one_wasm_layer() {
        let layer = |media_type: &str| OciDescriptor {
            media_type: media_type.to_string(),
            digest: format!("sha256:{}", "a".repeat(64)),
            ..OciDescriptor::default()
        };
        let image = |layers| {
            OciManifest::Image(OciImageManifest {
                layers,
                ..OciImageManifest::default()
            })
        };
        assert!(wasm_layer("r", &image(vec![layer(WASM_LAYER)])).is_ok());
        let tar = "application/vnd.oci.image.layer.v1.tar+gzip";
        let error = wasm_layer("r", &image(vec![layer(tar)])).unwrap_err();
        assert!(error.to_string().contains(tar), "{error}");
        assert!(wasm_layer("r", &image(vec![layer(WASM_LAYER), layer(WASM_LAYER)])).is_err());
    }
}
