//! The parts of a reconciler's manifest (the WIT `controller-manifest`)
//! that the host and the guest SDK both speak: how watched objects map to
//! primary keys, what indexes read, which writes are allowed, and what the
//! cache prunes. The host checks a manifest built of them at load; the
//! SDK builds one and its `FakeCluster` enforces it; both use these types,
//! so they cannot drift apart.

use serde::{Deserialize, Serialize};

use crate::Gvk;

/// How a change to a watched object becomes keys of the primary kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyMapping {
    /// The object's controller owner reference, when it is of the primary kind.
    ControllerOwner,
    /// The named label holds the primary object's name, in the object's namespace.
    Label(String),
    /// The named annotation holds `namespace/name` or `name` of the primary object.
    Annotation(String),
    /// Every primary object, in the watched object's namespace, whose index
    /// of this name holds the watched object's name; a cluster-scoped
    /// watched object names primary objects in every namespace, and a
    /// cluster-scoped primary object is named from any namespace.
    ByIndex(String),
    /// The watched object's namespace, as the key of a `v1` `Namespace`
    /// primary object; a cluster-scoped object maps to none.
    Namespace,
}

/// A kind watched besides the primary kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Watch {
    pub kind: Gvk,
    pub mapping: KeyMapping,
    /// Only objects matching this selector are cached and mapped.
    pub label_selector: Option<String>,
}

/// Where a declared index takes its values from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IndexSource {
    /// The value of this label.
    Label(String),
    /// The value of this annotation.
    Annotation(String),
    /// The string, or strings of a list, at this dot-separated path
    /// (`spec.secretName`, `spec.volumes.secret.secretName`); lists on the
    /// way are descended into.
    Field(String),
    /// The strings at any of these paths, together (every ConfigMap a pod
    /// template names, from volumes and env references alike).
    Fields(Vec<String>),
    /// The uids of the object's owner references.
    OwnerUid,
}

/// A named index over the cached objects of one kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IndexSpec {
    /// Unique per kind.
    pub name: String,
    pub kind: Gvk,
    pub source: IndexSource,
}

/// A write verb a manifest may allow (and an operator's policy may grant).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verb {
    /// POST.
    Create,
    /// PUT.
    Replace,
    /// PATCH: merge, JSON and apply patches.
    Patch,
    /// DELETE.
    Delete,
    /// PUT or PATCH of the status subresource.
    UpdateStatus,
}

impl Verb {
    /// The WIT spelling, used in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Create => "create",
            Verb::Replace => "replace",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::UpdateStatus => "update-status",
        }
    }
}

/// Writes allowed on one kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Permission {
    pub kind: Gvk,
    pub verbs: Vec<Verb>,
}

/// A field dropped from one kind's objects before they are cached.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct PrunedField {
    pub kind: Gvk,
    /// A dot-separated path.
    pub path: String,
}

/// The kind a guest creates to record events: `events.k8s.io/v1` Event. A
/// manifest that does not allow `create` on it records none.
pub fn event_kind() -> Gvk {
    Gvk::new("events.k8s.io", "v1", "Event")
}

/// The kind whose objects the `namespace` key mapping names.
pub fn namespace_kind() -> Gvk {
    Gvk::new("", "v1", "Namespace")
}

/// Whether `writes` allow `verb` on `kind`.
pub fn allows(writes: &[Permission], kind: &Gvk, verb: Verb) -> bool {
    writes
        .iter()
        .any(|p| p.kind == *kind && p.verbs.contains(&verb))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_allow_the_verbs_they_list_on_their_kind() {
        let writes = [Permission {
            kind: event_kind(),
            verbs: vec![Verb::Create],
        }];
        assert!(allows(&writes, &event_kind(), Verb::Create));
        assert!(!allows(&writes, &event_kind(), Verb::Delete));
        assert!(!allows(&writes, &namespace_kind(), Verb::Create));
        assert_eq!(Verb::UpdateStatus.as_str(), "update-status");
    }
}
