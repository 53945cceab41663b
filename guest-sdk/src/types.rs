//! The vocabulary every other module speaks: kinds ([`Gvk`]), object keys,
//! the metadata and JSON of cached objects ([`Meta`], [`RawObject`]), the
//! reconcile [`Request`] and [`Action`], and the [`Error`] every call can
//! return. The records here have exactly the shape of their WIT
//! counterparts in `recon:controller/types`, so on wasm the bindings use
//! them directly and nothing is converted on the way in or out.

use std::fmt;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A Kubernetes object the typed API can read and write: a k8s-openapi type
/// or a custom resource implementing [`k8s_openapi::Resource`] and
/// [`k8s_openapi::Metadata`] by hand (see the sample-controller example).
///
/// `apiVersion` and `kind` need not be serialized by the type: the SDK fills
/// them in from the `Resource` constants before anything is written.
pub trait Object:
    k8s_openapi::Resource + k8s_openapi::Metadata<Ty = ObjectMeta> + Serialize + DeserializeOwned
{
}

impl<K> Object for K where
    K: k8s_openapi::Resource
        + k8s_openapi::Metadata<Ty = ObjectMeta>
        + Serialize
        + DeserializeOwned
{
}

pub use recon_api_semantics::Gvk;

/// The kind of `K`.
pub fn gvk_of<K: k8s_openapi::Resource>() -> Gvk {
    Gvk::of::<K>()
}

/// Whether objects of `K` live in a namespace (k8s-openapi's
/// `NamespaceResourceScope`), as against cluster-scoped kinds.
pub fn is_namespaced<K: k8s_openapi::Resource>() -> bool
where
    K::Scope: 'static,
{
    std::any::TypeId::of::<K::Scope>()
        == std::any::TypeId::of::<k8s_openapi::NamespaceResourceScope>()
}

/// An object's identity: its namespace (none for cluster-scoped kinds) and name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    pub namespace: Option<String>,
    pub name: String,
}

impl ObjectKey {
    pub fn new(namespace: Option<&str>, name: &str) -> Self {
        Self {
            namespace: namespace.map(str::to_string),
            name: name.to_string(),
        }
    }

    /// The key of a namespaced object.
    pub fn namespaced(namespace: &str, name: &str) -> Self {
        Self::new(Some(namespace), name)
    }

    /// The key of a cluster-scoped object.
    pub fn cluster(name: &str) -> Self {
        Self::new(None, name)
    }

    /// The key of `obj`, from its metadata (an absent name is the empty string).
    pub fn of<K: Object>(obj: &K) -> Self {
        let meta = obj.metadata();
        Self {
            namespace: meta.namespace.clone(),
            name: meta.name.clone().unwrap_or_default(),
        }
    }
}

impl fmt::Display for ObjectKey {
    /// `namespace/name`, or `name` for a cluster-scoped object.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(namespace) => write!(f, "{namespace}/{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// A `metadata.ownerReferences` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
    pub controller: bool,
    pub block_owner_deletion: bool,
}

/// The metadata of a cached object, as the host parsed it: enough to decide
/// whether the object's JSON is worth reading at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meta {
    pub key: ObjectKey,
    pub uid: String,
    pub resource_version: String,
    /// `metadata.generation`; 0 when the kind has none.
    pub generation: i64,
    pub labels: Vec<(String, String)>,
    pub annotations: Vec<(String, String)>,
    pub owner_references: Vec<OwnerRef>,
    pub finalizers: Vec<String>,
    /// RFC 3339, set once deletion has been requested.
    pub deletion_timestamp: Option<String>,
}

impl Meta {
    /// The value of the label `key`.
    pub fn label(&self, key: &str) -> Option<&str> {
        lookup(&self.labels, key)
    }

    /// The value of the annotation `key`.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        lookup(&self.annotations, key)
    }

    /// The owner reference marked `controller`, if any.
    pub fn controller_owner(&self) -> Option<&OwnerRef> {
        self.owner_references.iter().find(|r| r.controller)
    }
}

fn lookup<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// A cached object (or one the server returned): its parsed metadata and the
/// whole object as JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawObject {
    pub meta: Meta,
    pub json: String,
}

impl RawObject {
    /// The object as `K`. A `PartialObjectMetadata` (an object of a kind
    /// the manifest reads as metadata only) does not parse as its kind's
    /// type, and the error says why.
    pub fn parse<K: DeserializeOwned>(&self) -> Result<K> {
        serde_json::from_str(&self.json).map_err(|e| {
            if self.is_partial_object_metadata() {
                Error::Invalid(format!(
                    "{} is cached as PartialObjectMetadata, since the manifest reads its kind as metadata only: read its metadata (get_meta, list_meta) or its JSON (get_raw) ({e})",
                    self.meta.key
                ))
            } else {
                e.into()
            }
        })
    }

    /// Whether this is a `PartialObjectMetadata` (meta.k8s.io/v1): the
    /// metadata alone of an object of a kind read as metadata only.
    pub fn is_partial_object_metadata(&self) -> bool {
        #[derive(serde::Deserialize)]
        struct Kind<'a> {
            #[serde(borrow)]
            kind: Option<&'a str>,
        }
        serde_json::from_str::<Kind<'_>>(&self.json)
            .is_ok_and(|k| k.kind == Some("PartialObjectMetadata"))
    }
}

/// Why a call failed; the same cases as the WIT `error`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The object does not exist.
    NotFound,
    /// A write lost a race: the object changed since it was read (HTTP 409).
    Conflict(String),
    /// A create found an object of that name already there (HTTP 409,
    /// reason `AlreadyExists`).
    AlreadyExists(String),
    /// The manifest does not allow this kind or verb, or the server refused (401/403).
    Forbidden(String),
    /// The request or the object is malformed (HTTP 400/422).
    Invalid(String),
    /// The server or the host is temporarily unable to serve; retrying later may work.
    Unavailable(String),
    /// An answer or a request over a size limit of the host: a cache read
    /// too large to hand over (narrow it: a namespace, a label selector,
    /// `list_meta`), or a write body over the API server's request limit.
    TooLarge(String),
    /// Anything else.
    Other(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotFound => f.write_str("not found"),
            Error::Conflict(m) => write!(f, "conflict: {m}"),
            Error::AlreadyExists(m) => write!(f, "already exists: {m}"),
            Error::Forbidden(m) => write!(f, "forbidden: {m}"),
            Error::Invalid(m) => write!(f, "invalid: {m}"),
            Error::Unavailable(m) => write!(f, "unavailable: {m}"),
            Error::TooLarge(m) => write!(f, "too large: {m}"),
            Error::Other(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

/// JSON that does not (de)serialize as the type expects is an invalid object.
impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::Invalid(format!("JSON: {e}"))
    }
}

impl From<recon_api_semantics::manifest::ManifestError> for Error {
    fn from(e: recon_api_semantics::manifest::ManifestError) -> Self {
        Error::Invalid(e.to_string())
    }
}

impl From<recon_label_selector::ParseError> for Error {
    fn from(e: recon_label_selector::ParseError) -> Self {
        Error::Invalid(e.0)
    }
}

/// The SDK's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// One reconcile call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub key: ObjectKey,
    /// Rate-limited requeues of this key so far (0 on a first attempt).
    pub attempt: u32,
}

/// What happens to the key after a successful reconcile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Reconciled: the host forgets the key's backoff history.
    Done,
    /// Queue the key again through the host's rate limiter.
    Requeue,
    /// Forget the key's history and queue it again after this delay.
    RequeueAfter(Duration),
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    #[test]
    fn gvk_of_core_and_grouped_kinds() {
        let cm = gvk_of::<ConfigMap>();
        assert_eq!(cm, Gvk::new("", "v1", "ConfigMap"));
        assert_eq!(cm.api_version(), "v1");
        let deploy = gvk_of::<Deployment>();
        assert_eq!(deploy.api_version(), "apps/v1");
        assert_eq!(deploy.to_string(), "apps/v1, Kind=Deployment");
    }

    #[test]
    fn object_keys_print_like_cache_keys() {
        assert_eq!(ObjectKey::namespaced("ns", "a").to_string(), "ns/a");
        assert_eq!(ObjectKey::cluster("node-1").to_string(), "node-1");
        let mut cm = ConfigMap::default();
        cm.metadata.namespace = Some("ns".into());
        cm.metadata.name = Some("a".into());
        assert_eq!(ObjectKey::of(&cm), ObjectKey::namespaced("ns", "a"));
    }

    #[test]
    fn namespaced_and_cluster_scoped_kinds_are_told_apart() {
        use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Node};
        assert!(is_namespaced::<ConfigMap>());
        assert!(!is_namespaced::<Namespace>());
        assert!(!is_namespaced::<Node>());
    }

    #[test]
    fn json_errors_are_invalid() {
        let err: Error = serde_json::from_str::<ConfigMap>("{").unwrap_err().into();
        assert!(matches!(err, Error::Invalid(m) if m.starts_with("JSON: ")));
    }

    #[test]
    fn meta_lookups() {
        let owner = OwnerRef {
            api_version: "v1".into(),
            kind: "Foo".into(),
            name: "f".into(),
            uid: "u".into(),
            controller: true,
            block_owner_deletion: true,
        };
        let meta = Meta {
            key: ObjectKey::namespaced("ns", "a"),
            uid: "1".into(),
            resource_version: "2".into(),
            generation: 1,
            labels: vec![("app".into(), "web".into())],
            annotations: vec![("note".into(), "x".into())],
            owner_references: vec![owner.clone()],
            finalizers: vec![],
            deletion_timestamp: None,
        };
        assert_eq!(meta.label("app"), Some("web"));
        assert_eq!(meta.label("tier"), None);
        assert_eq!(meta.annotation("note"), Some("x"));
        assert_eq!(meta.controller_owner(), Some(&owner));
    }
}
