//! The built-in kinds as the k8s-openapi this host is built with defines
//! them: group, version, kind, resource name and scope of each, and a check
//! of a dot-separated field path (an index's, a pruned field's) against the
//! kind's type, so that a misspelt path is refused at load instead of
//! matching nothing for ever. Custom resources are not known here.
//!
//! The check walks the type's own `Deserialize`: every struct of
//! k8s-openapi names its JSON fields to the deserializer, so a deserializer
//! that answers with the path's next segment alone learns, segment by
//! segment, whether the field exists and what it holds, without a schema
//! table of its own.

use std::any::TypeId;
use std::fmt;
use std::sync::LazyLock;

use k8s_openapi::serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess,
    Visitor,
};
use k8s_openapi::{ClusterResourceScope, Resource, api, apiextensions_apiserver, kube_aggregator};
use recon_api_semantics::Gvk;

/// One built-in kind.
pub struct BuiltInKind {
    /// The API group; empty for the core group.
    pub group: &'static str,
    /// The API version within the group.
    pub version: &'static str,
    /// The kind.
    pub kind: &'static str,
    /// The resource name in URLs (`deployments`).
    pub plural: &'static str,
    /// Whether its objects have no namespace.
    pub cluster_scoped: bool,
    /// The Rust type: `k8s_openapi::api::apps::v1::Deployment`.
    pub rust_type: &'static str,
    /// Walks a path (as segments) through the type.
    walk: fn(&[&str]) -> Result<(), Walk>,
}

impl BuiltInKind {
    fn of<T: Resource + DeserializeOwned + 'static>(rust_type: &'static str) -> BuiltInKind {
        BuiltInKind {
            group: T::GROUP,
            version: T::VERSION,
            kind: T::KIND,
            plural: T::URL_PATH_SEGMENT,
            cluster_scoped: TypeId::of::<T::Scope>() == TypeId::of::<ClusterResourceScope>(),
            rust_type,
            walk: |segments| T::deserialize(Walker { rest: segments }).map(drop),
        }
    }

    /// What the dot-separated `path` reaches in this kind's objects, or
    /// why it reaches nothing.
    pub fn field_path(&self, path: &str) -> Result<FieldEnd, FieldPathError> {
        self.field_path_as(self.kind, path)
    }

    /// As [`BuiltInKind::field_path`], with errors naming `kind`.
    fn field_path_as(&self, kind: &str, path: &str) -> Result<FieldEnd, FieldPathError> {
        let segments: Vec<&str> = path.split('.').collect();
        let error = |rest: usize, problem| {
            let at = segments.len() - rest;
            FieldPathError {
                kind: kind.to_string(),
                path: path.to_string(),
                at: segments[..at].join("."),
                problem: Box::new(problem),
            }
        };
        let segment = |rest: usize| segments[segments.len() - rest].to_string();
        match (self.walk)(&segments) {
            Err(Walk::Ended(end)) => Ok(end),
            // A type read through something the walk cannot follow: taken
            // as it is, so that a valid path is never refused.
            Ok(()) | Err(Walk::Other) => Ok(FieldEnd::Any),
            Err(Walk::NoField {
                rest,
                type_name,
                fields,
            }) => Err(error(
                rest,
                Problem::NoField {
                    segment: segment(rest),
                    type_name: type_name.to_string(),
                    fields: fields.iter().map(|f| f.to_string()).collect(),
                },
            )),
            Err(Walk::Below { rest, end }) => Err(error(
                rest,
                Problem::Below {
                    segment: segment(rest),
                    end,
                },
            )),
        }
    }
}

/// What a path into the fields every object has (`metadata`, `apiVersion`,
/// `kind`: its first segment is one of them) reaches in any object, errors
/// naming `kind`, or `None` for a path elsewhere.
pub fn object_field_path(kind: &str, path: &str) -> Option<Result<FieldEnd, FieldPathError>> {
    let first = path.split('.').next().unwrap_or_default();
    if !matches!(first, "metadata" | "apiVersion" | "kind") {
        return None;
    }
    // Any kind's metadata is an ObjectMeta; a ConfigMap's will do.
    let any = built_in_kind(&Gvk::new("", "v1", "ConfigMap"))?;
    Some(any.field_path_as(kind, path))
}

/// Every built-in kind of this host's k8s-openapi (its subresources, such
/// as `Scale`, are not kinds one reads).
pub fn built_in_kinds() -> &'static [BuiltInKind] {
    &KINDS
}

/// The built-in kind `gvk`, if it is one.
pub fn built_in_kind(gvk: &Gvk) -> Option<&'static BuiltInKind> {
    KINDS
        .iter()
        .find(|k| k.group == gvk.group && k.version == gvk.version && k.kind == gvk.kind)
}

/// What a field path reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldEnd {
    /// A string, or a list of strings.
    String,
    /// A number, a boolean, a null.
    Scalar(&'static str),
    /// An object of named fields.
    Object,
    /// A map (labels, data).
    Map,
    /// A value of any shape (free-form JSON, an int-or-string).
    Any,
}

impl FieldEnd {
    /// Whether an index reads values here: strings (or lists of them), or
    /// a value of any shape.
    pub fn indexable(self) -> bool {
        matches!(self, FieldEnd::String | FieldEnd::Any)
    }
}

/// Whether what `path` of `kind` reached serves its use: a pruned field may
/// be anything, an index (`indexed`) reads strings.
pub fn usable(
    kind: &str,
    path: &str,
    reached: Result<FieldEnd, FieldPathError>,
    indexed: bool,
) -> Result<(), FieldPathError> {
    match reached? {
        end if end.indexable() || !indexed => Ok(()),
        end => Err(FieldPathError::not_indexable(kind, path, end)),
    }
}

impl fmt::Display for FieldEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldEnd::String => f.write_str("a string"),
            FieldEnd::Scalar(what) => f.write_str(what),
            FieldEnd::Object => f.write_str("an object"),
            FieldEnd::Map => f.write_str("a map"),
            FieldEnd::Any => f.write_str("a value of any shape"),
        }
    }
}

/// Why a field path reaches nothing in a kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPathError {
    /// The kind.
    pub kind: String,
    /// The whole path.
    pub path: String,
    /// The part of the path that holds.
    pub at: String,
    /// What is wrong after it.
    pub problem: Box<Problem>,
}

/// What is wrong at a field path's failing segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The object there has no field of that name.
    NoField {
        /// The segment.
        segment: String,
        /// The type of the object.
        type_name: String,
        /// Its fields.
        fields: Vec<String>,
    },
    /// The path goes on below a value without fields.
    Below {
        /// The segment.
        segment: String,
        /// What the value is.
        end: FieldEnd,
    },
    /// The path ends at a value an index does not read.
    NotIndexable(FieldEnd),
}

impl FieldPathError {
    /// `path` of `kind` ends at `end`, which an index does not read.
    pub fn not_indexable(kind: &str, path: &str, end: FieldEnd) -> FieldPathError {
        FieldPathError {
            kind: kind.to_string(),
            path: path.to_string(),
            at: path.to_string(),
            problem: Box::new(Problem::NotIndexable(end)),
        }
    }
}

impl fmt::Display for FieldPathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Problem::NotIndexable(end) = &*self.problem {
            return write!(
                f,
                "field path {:?} of {} ends at {end}; an index reads strings",
                self.path, self.kind
            );
        }
        let at = match self.at.as_str() {
            "" => format!("a {}", self.kind),
            at => format!("{}'s {at}", self.kind),
        };
        write!(f, "field path {:?}: ", self.path)?;
        match &*self.problem {
            Problem::NoField {
                segment,
                type_name,
                fields,
            } => {
                write!(f, "{at} ({type_name}) has no field {segment:?}")?;
                match closest(segment, fields) {
                    Some(near) => write!(f, "; did you mean {near:?}?"),
                    None => write!(f, "; its fields are {}", fields.join(", ")),
                }
            }
            Problem::Below { segment, end } => {
                write!(f, "{at} is {end}, which has no field {segment:?}")
            }
            Problem::NotIndexable(_) => Ok(()),
        }
    }
}

impl std::error::Error for FieldPathError {}

/// The field of `fields` nearest `segment` (at most two edits away), if
/// one is.
fn closest<'a>(segment: &str, fields: &'a [String]) -> Option<&'a str> {
    fields
        .iter()
        .map(|field| (edit_distance(segment, field), field.as_str()))
        .filter(|(distance, _)| *distance <= 2)
        .min()
        .map(|(_, field)| field)
}

/// The Levenshtein distance between `a` and `b`, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != *cb))
                .min(above + 1)
                .min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

/// How a walk ended: as an error, so that it stops the type's
/// deserializer wherever it is.
#[derive(Debug)]
enum Walk {
    /// The path ended on this.
    Ended(FieldEnd),
    /// The object `rest` segments before the path's end has no field of
    /// the next segment's name.
    NoField {
        rest: usize,
        type_name: &'static str,
        fields: &'static [&'static str],
    },
    /// The path goes on, `rest` segments before its end, below `end`.
    Below { rest: usize, end: FieldEnd },
    /// Anything else the type's deserializer said (its words are not
    /// needed: such a path is taken as it is).
    Other,
}

impl fmt::Display for Walk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

impl std::error::Error for Walk {}

impl de::Error for Walk {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Walk::Other
    }
}

/// A deserializer whose document is the path `rest`: each object has the
/// next segment as its only field, each list one element, and the end is
/// reported as [`Walk::Ended`].
struct Walker<'a> {
    rest: &'a [&'a str],
}

impl Walker<'_> {
    /// A value without fields: the end of the path, or an error below it.
    fn leaf<T>(self, end: FieldEnd) -> Result<T, Walk> {
        Err(match self.rest.len() {
            0 => Walk::Ended(end),
            rest => Walk::Below { rest, end },
        })
    }

    /// An object or map whose one entry is the path's next segment.
    fn entry<'de, V: Visitor<'de>>(self, visitor: V, end: FieldEnd) -> Result<V::Value, Walk> {
        let Some((first, rest)) = self.rest.split_first() else {
            return Err(Walk::Ended(end));
        };
        visitor.visit_map(Entry {
            key: Some(first),
            value: Some(Walker { rest }),
        })
    }
}

/// The one entry of an object or map on the path.
struct Entry<'a> {
    key: Option<&'a str>,
    value: Option<Walker<'a>>,
}

impl<'de> MapAccess<'de> for Entry<'_> {
    type Error = Walk;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Walk> {
        match self.key.take() {
            Some(key) => seed.deserialize(key.into_deserializer()).map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Walk> {
        match self.value.take() {
            Some(value) => seed.deserialize(value),
            // Asked for a second value: not a walk this knows.
            None => Err(Walk::Other),
        }
    }
}

/// The one element of a list on the path: lists are descended into.
struct Element<'a>(Option<Walker<'a>>);

impl<'de> SeqAccess<'de> for Element<'_> {
    type Error = Walk;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Walk> {
        self.0
            .take()
            .map(|walker| seed.deserialize(walker))
            .transpose()
    }
}

/// `deserialize_*` methods for values without fields.
macro_rules! leaves {
    ($($method:ident => $end:expr),* $(,)?) => {
        $(fn $method<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Walk> {
            self.leaf($end)
        })*
    };
}

impl<'de> Deserializer<'de> for Walker<'_> {
    type Error = Walk;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        type_name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Walk> {
        match self.rest.first() {
            Some(first) if !fields.contains(first) => Err(Walk::NoField {
                rest: self.rest.len(),
                type_name,
                fields,
            }),
            _ => self.entry(visitor, FieldEnd::Object),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Walk> {
        self.entry(visitor, FieldEnd::Map)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Walk> {
        visitor.visit_seq(Element(Some(self)))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Walk> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Walk> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: V,
    ) -> Result<V::Value, Walk> {
        self.leaf(FieldEnd::Scalar("null"))
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Walk> {
        self.leaf(FieldEnd::Any)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        _: V,
    ) -> Result<V::Value, Walk> {
        self.leaf(FieldEnd::Any)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Walk> {
        self.leaf(FieldEnd::Any)
    }

    leaves! {
        deserialize_any => FieldEnd::Any,
        deserialize_ignored_any => FieldEnd::Any,
        deserialize_bool => FieldEnd::Scalar("a boolean"),
        deserialize_i8 => FieldEnd::Scalar("an integer"),
        deserialize_i16 => FieldEnd::Scalar("an integer"),
        deserialize_i32 => FieldEnd::Scalar("an integer"),
        deserialize_i64 => FieldEnd::Scalar("an integer"),
        deserialize_u8 => FieldEnd::Scalar("an integer"),
        deserialize_u16 => FieldEnd::Scalar("an integer"),
        deserialize_u32 => FieldEnd::Scalar("an integer"),
        deserialize_u64 => FieldEnd::Scalar("an integer"),
        deserialize_f32 => FieldEnd::Scalar("a number"),
        deserialize_f64 => FieldEnd::Scalar("a number"),
        deserialize_unit => FieldEnd::Scalar("null"),
        deserialize_char => FieldEnd::String,
        deserialize_str => FieldEnd::String,
        deserialize_string => FieldEnd::String,
        deserialize_identifier => FieldEnd::String,
        // Base64 text in JSON.
        deserialize_bytes => FieldEnd::String,
        deserialize_byte_buf => FieldEnd::String,
    }
}

/// Every resource type of k8s-openapi's API version feature, apart from
/// subresources; a test keeps the list equal to k8s-openapi's sources.
static KINDS: LazyLock<Vec<BuiltInKind>> = LazyLock::new(|| {
    macro_rules! kinds {
        ($($($segment:ident)::+),* $(,)?) => {
            vec![$(BuiltInKind::of::<$($segment)::+>(
                concat!("k8s_openapi" $(, "::", stringify!($segment))+)
            )),*]
        };
    }
    kinds![
        api::admissionregistration::v1::MutatingWebhookConfiguration,
        api::admissionregistration::v1::ValidatingAdmissionPolicy,
        api::admissionregistration::v1::ValidatingAdmissionPolicyBinding,
        api::admissionregistration::v1::ValidatingWebhookConfiguration,
        api::admissionregistration::v1alpha1::MutatingAdmissionPolicy,
        api::admissionregistration::v1alpha1::MutatingAdmissionPolicyBinding,
        api::admissionregistration::v1beta1::ValidatingAdmissionPolicy,
        api::admissionregistration::v1beta1::ValidatingAdmissionPolicyBinding,
        api::apiserverinternal::v1alpha1::StorageVersion,
        api::apps::v1::ControllerRevision,
        api::apps::v1::DaemonSet,
        api::apps::v1::Deployment,
        api::apps::v1::ReplicaSet,
        api::apps::v1::StatefulSet,
        api::authentication::v1::SelfSubjectReview,
        api::authentication::v1::TokenReview,
        api::authorization::v1::LocalSubjectAccessReview,
        api::authorization::v1::SelfSubjectAccessReview,
        api::authorization::v1::SelfSubjectRulesReview,
        api::authorization::v1::SubjectAccessReview,
        api::autoscaling::v1::HorizontalPodAutoscaler,
        api::autoscaling::v2::HorizontalPodAutoscaler,
        api::batch::v1::CronJob,
        api::batch::v1::Job,
        api::certificates::v1::CertificateSigningRequest,
        api::certificates::v1alpha1::ClusterTrustBundle,
        api::certificates::v1beta1::ClusterTrustBundle,
        api::coordination::v1::Lease,
        api::coordination::v1alpha2::LeaseCandidate,
        api::coordination::v1beta1::LeaseCandidate,
        api::core::v1::Binding,
        api::core::v1::ComponentStatus,
        api::core::v1::ConfigMap,
        api::core::v1::Endpoints,
        api::core::v1::Event,
        api::core::v1::LimitRange,
        api::core::v1::Namespace,
        api::core::v1::Node,
        api::core::v1::PersistentVolume,
        api::core::v1::PersistentVolumeClaim,
        api::core::v1::Pod,
        api::core::v1::PodTemplate,
        api::core::v1::ReplicationController,
        api::core::v1::ResourceQuota,
        api::core::v1::Secret,
        api::core::v1::Service,
        api::core::v1::ServiceAccount,
        api::discovery::v1::EndpointSlice,
        api::events::v1::Event,
        api::flowcontrol::v1::FlowSchema,
        api::flowcontrol::v1::PriorityLevelConfiguration,
        api::networking::v1::Ingress,
        api::networking::v1::IngressClass,
        api::networking::v1::IPAddress,
        api::networking::v1::NetworkPolicy,
        api::networking::v1::ServiceCIDR,
        api::networking::v1beta1::IPAddress,
        api::networking::v1beta1::ServiceCIDR,
        api::node::v1::RuntimeClass,
        api::policy::v1::PodDisruptionBudget,
        api::rbac::v1::ClusterRole,
        api::rbac::v1::ClusterRoleBinding,
        api::rbac::v1::Role,
        api::rbac::v1::RoleBinding,
        api::resource::v1alpha3::DeviceClass,
        api::resource::v1alpha3::DeviceTaintRule,
        api::resource::v1alpha3::ResourceClaim,
        api::resource::v1alpha3::ResourceClaimTemplate,
        api::resource::v1alpha3::ResourceSlice,
        api::resource::v1beta1::DeviceClass,
        api::resource::v1beta1::ResourceClaim,
        api::resource::v1beta1::ResourceClaimTemplate,
        api::resource::v1beta1::ResourceSlice,
        api::resource::v1beta2::DeviceClass,
        api::resource::v1beta2::ResourceClaim,
        api::resource::v1beta2::ResourceClaimTemplate,
        api::resource::v1beta2::ResourceSlice,
        api::scheduling::v1::PriorityClass,
        api::storage::v1::CSIDriver,
        api::storage::v1::CSINode,
        api::storage::v1::CSIStorageCapacity,
        api::storage::v1::StorageClass,
        api::storage::v1::VolumeAttachment,
        api::storage::v1alpha1::VolumeAttributesClass,
        api::storage::v1beta1::VolumeAttributesClass,
        api::storagemigration::v1alpha1::StorageVersionMigration,
        apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
        kube_aggregator::pkg::apis::apiregistration::v1::APIService,
    ]
});

#[cfg(test)]
mod tests;
