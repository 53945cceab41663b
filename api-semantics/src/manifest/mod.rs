//! A reconciler's manifest (the WIT `controller-manifest`): the
//! [`Manifest`] the guest SDK builds, the checks the host applies when it
//! loads one and the SDK's `FakeCluster` applies to the same manifest
//! ([`Manifest::validate`]), and its parts: how watched objects map to
//! primary keys, what indexes read, which writes are allowed, and what
//! the cache prunes. One type on both sides, so they cannot drift apart.

mod builder;
mod check;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use check::{
    MAX_INDEX_PATHS, MAX_INDEXES, MAX_OWNS, MAX_PATH_SEGMENTS, MAX_PRUNE_FIELDS, MAX_TEXT,
    MAX_WATCHES, MAX_WRITES, ManifestError,
};

use crate::Gvk;

/// A reconciler's manifest: the kind it reconciles and everything the
/// host needs to wire it up. Build one with [`Manifest::for_kind`] (or,
/// with the `k8s-openapi` feature, `Manifest::new::<K>`) and the builder
/// methods; [`Manifest::validate`] applies the host's checks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Manifest {
    /// Unique among the guests of one host: a DNS label, the field
    /// manager and the metrics and log label.
    pub name: String,
    /// The kind whose keys are reconciled.
    pub primary: Gvk,
    /// Only primary objects matching this selector are cached.
    pub primary_label_selector: Option<String>,
    /// Kinds the primary objects own (controller owner references); a
    /// change enqueues the owner.
    pub owns: Vec<Gvk>,
    /// Further kinds and their key mappings.
    pub watches: Vec<Watch>,
    /// Declared indexes.
    pub indexes: Vec<IndexSpec>,
    /// Replay every cached primary object this often.
    #[serde(serialize_with = "seconds")]
    pub resync_period: Option<Duration>,
    /// Parallel reconciles; `None` leaves it to the host.
    pub concurrency: Option<u32>,
    /// Writes allowed.
    pub writes: Vec<Permission>,
    /// Fields dropped from objects before caching, besides
    /// `metadata.managedFields`.
    pub prune_fields: Vec<PrunedField>,
    /// Kinds whose cached objects keep `metadata.managedFields`.
    pub keep_managed_fields: Vec<Gvk>,
    /// Kinds read as metadata only (listed and watched as
    /// `PartialObjectMetadata`).
    pub metadata_only: Vec<Gvk>,
}

/// A resync period as `host inspect` prints it: `600s`.
fn seconds<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_str(&format!("{}s", d.as_secs_f64())),
        None => s.serialize_none(),
    }
}

/// A field path a manifest reads ([`Manifest::field_paths`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPathUse<'a> {
    /// The kind whose objects it reads.
    pub kind: &'a Gvk,
    /// The dot-separated path.
    pub path: &'a str,
    /// What reads it, as the manifest's errors name it: `index
    /// "by-owner"`, `prune field of KIND`.
    pub what: String,
    /// Whether an index reads it (and so must end at strings).
    pub indexed: bool,
}

impl Manifest {
    /// Whether the manifest allows `verb` on `kind`.
    pub fn allows(&self, kind: &Gvk, verb: Verb) -> bool {
        allows(&self.writes, kind, verb)
    }

    /// Whether the manifest allows recording events: `create` of
    /// [`event_kind`].
    pub fn allows_events(&self) -> bool {
        self.allows(&event_kind(), Verb::Create)
    }

    /// Every kind the guest reads from the cache: primary, owned, watched,
    /// each once.
    pub fn watched_kinds(&self) -> Vec<&Gvk> {
        let mut kinds = vec![&self.primary];
        for kind in self.owns.iter().chain(self.watches.iter().map(|w| &w.kind)) {
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
        kinds
    }

    /// Every field path the manifest reads, with its kind, what reads it
    /// and whether an index does.
    pub fn field_paths(&self) -> Vec<FieldPathUse<'_>> {
        let mut uses = Vec::new();
        for index in &self.indexes {
            for path in index.source.paths() {
                uses.push(FieldPathUse {
                    kind: &index.kind,
                    path,
                    what: format!("index {:?}", index.name),
                    indexed: true,
                });
            }
        }
        for pruned in &self.prune_fields {
            uses.push(FieldPathUse {
                kind: &pruned.kind,
                path: &pruned.path,
                what: format!("prune field of {}", pruned.kind),
                indexed: false,
            });
        }
        uses
    }
}

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

impl IndexSource {
    /// The field paths it reads: none for a label, an annotation or owner
    /// uids.
    pub fn paths(&self) -> &[String] {
        match self {
            IndexSource::Field(path) => std::slice::from_ref(path),
            IndexSource::Fields(paths) => paths,
            IndexSource::Label(_) | IndexSource::Annotation(_) | IndexSource::OwnerUid => &[],
        }
    }
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

/// A path a manifest declares of a kind it reads as metadata only that
/// lies outside `metadata`, which the cached objects of such a kind
/// (`PartialObjectMetadata`) do not hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BeyondMetadata<'a> {
    /// An index reads `path`.
    Index { index: &'a IndexSpec, path: &'a str },
    /// A pruned field.
    Pruned(&'a PrunedField),
}

impl std::fmt::Display for BeyondMetadata<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BeyondMetadata::Index { index, path } => write!(
                f,
                "index {:?} reads {path:?} of {}, which the manifest reads as metadata only",
                index.name, index.kind
            ),
            BeyondMetadata::Pruned(pruned) => write!(
                f,
                "prune field {:?} of {}, which the manifest reads as metadata only",
                pruned.path, pruned.kind
            ),
        }
    }
}

/// The first index path or pruned field of a kind in `metadata_only` that
/// lies outside `metadata`; `None` when all of them lie under it.
pub fn beyond_metadata<'a>(
    metadata_only: &[Gvk],
    indexes: &'a [IndexSpec],
    prune_fields: &'a [PrunedField],
) -> Option<BeyondMetadata<'a>> {
    let outside = |path: &str| path != "metadata" && !path.starts_with("metadata.");
    indexes
        .iter()
        .filter(|index| metadata_only.contains(&index.kind))
        .find_map(|index| {
            let path = index.source.paths().iter().find(|p| outside(p))?;
            Some(BeyondMetadata::Index { index, path })
        })
        .or_else(|| {
            prune_fields
                .iter()
                .find(|p| metadata_only.contains(&p.kind) && outside(&p.path))
                .map(BeyondMetadata::Pruned)
        })
}

/// Whether a manifest may prune the field at the dot-separated `path`:
/// anything outside `metadata`, and in it `metadata.managedFields` alone,
/// since the cache reads the rest of an object's metadata.
pub fn may_prune(path: &str) -> bool {
    !(path == "metadata" || path.starts_with("metadata.") && path != "metadata.managedFields")
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
    fn only_paths_under_metadata_suit_a_kind_read_as_metadata_only() {
        let secret = Gvk::new("", "v1", "Secret");
        let index = |path: &str| IndexSpec {
            name: "i".into(),
            kind: secret.clone(),
            source: IndexSource::Fields(vec!["metadata.labels.app".into(), path.into()]),
        };
        let pruned = |path: &str| PrunedField {
            kind: secret.clone(),
            path: path.into(),
        };
        let within = [index("metadata.annotations.owner")];
        let prune_within = [pruned("metadata.managedFields")];
        assert_eq!(
            beyond_metadata(std::slice::from_ref(&secret), &within, &prune_within),
            None
        );
        let beyond = [index("data.token")];
        assert_eq!(
            beyond_metadata(std::slice::from_ref(&secret), &beyond, &prune_within),
            Some(BeyondMetadata::Index {
                index: &beyond[0],
                path: "data.token"
            })
        );
        let prune_beyond = [pruned("metadatax")];
        assert_eq!(
            beyond_metadata(std::slice::from_ref(&secret), &within, &prune_beyond),
            Some(BeyondMetadata::Pruned(&prune_beyond[0]))
        );
        // Whole kinds may index and prune anything.
        assert_eq!(beyond_metadata(&[], &beyond, &prune_beyond), None);
    }

    #[test]
    fn only_managed_fields_may_be_pruned_from_metadata() {
        assert!(may_prune("data"));
        assert!(may_prune("spec.template"));
        assert!(may_prune("metadatax"));
        assert!(may_prune("metadata.managedFields"));
        assert!(!may_prune("metadata"));
        assert!(!may_prune("metadata.labels"));
        assert!(!may_prune("metadata.managedFields.manager"));
    }

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
