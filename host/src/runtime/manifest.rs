//! A guest's manifest as the host uses it: the WIT `controller-manifest`
//! checked once at load (names, kinds, selectors, index references), so the
//! controller wiring never meets a malformed one. Serializes to the JSON
//! `host inspect` prints.

use std::time::Duration;

use serde::Serialize;

use super::bindings::exports::recon::controller::reconciler as wit;
use super::bindings::recon::controller::types::Gvk as WitGvk;
use super::limits::is_dns_label;
use crate::kube::Gvk;
use crate::label_selector::LabelSelector;

/// Why a manifest was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid manifest: {0}")]
pub struct ManifestError(pub String);

/// How a change to a watched object becomes keys of the primary kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyMapping {
    /// The object's controller owner reference, when of the primary kind.
    ControllerOwner,
    /// This label holds the primary object's name (same namespace).
    Label(String),
    /// This annotation holds `namespace/name` or `name` of the primary object.
    Annotation(String),
    /// Primary objects (same namespace) whose index of this name holds the
    /// watched object's name.
    ByIndex(String),
}

/// A kind watched besides the primary kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Watch {
    /// The kind.
    pub kind: Gvk,
    /// How its changes map to primary keys.
    pub mapping: KeyMapping,
    /// Only matching objects are cached.
    pub label_selector: Option<String>,
}

/// Where a declared index takes its values from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IndexSource {
    /// A label's value.
    Label(String),
    /// An annotation's value.
    Annotation(String),
    /// The string or strings at a dot-separated path.
    Field(String),
    /// The uids of the owner references.
    OwnerUid,
}

/// A named index over the cached objects of one kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IndexSpec {
    /// Its name, unique per kind.
    pub name: String,
    /// The kind indexed.
    pub kind: Gvk,
    /// Where values come from.
    pub source: IndexSource,
}

/// A write verb a manifest may allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verb {
    /// POST.
    Create,
    /// PUT.
    Replace,
    /// PATCH (merge, JSON, apply).
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
    /// The kind.
    pub kind: Gvk,
    /// The verbs.
    pub verbs: Vec<Verb>,
}

/// A checked manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Manifest {
    /// The guest's name: field manager, metrics and log label.
    pub name: String,
    /// The kind reconciled.
    pub primary: Gvk,
    /// Only primary objects matching this are cached.
    pub primary_label_selector: Option<String>,
    /// Kinds whose controller owner references enqueue the owner.
    pub owns: Vec<Gvk>,
    /// Further kinds and their key mappings.
    pub watches: Vec<Watch>,
    /// Declared indexes.
    pub indexes: Vec<IndexSpec>,
    /// Replay every cached primary object this often.
    #[serde(serialize_with = "seconds")]
    pub resync_period: Option<Duration>,
    /// Parallel reconciles the guest asks for.
    pub concurrency: Option<u32>,
    /// Writes allowed.
    pub writes: Vec<Permission>,
    /// Paths dropped before caching, besides `metadata.managedFields`.
    pub prune_fields: Vec<String>,
}

fn seconds<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_str(&format!("{}s", d.as_secs_f64())),
        None => s.serialize_none(),
    }
}

fn gvk(kind: WitGvk, what: &str) -> Result<Gvk, ManifestError> {
    if kind.version.is_empty() || kind.kind.is_empty() {
        return Err(ManifestError(format!(
            "{what}: a kind needs a version and a kind (got group {:?}, version {:?}, kind {:?})",
            kind.group, kind.version, kind.kind
        )));
    }
    Ok(Gvk {
        group: kind.group,
        version: kind.version,
        kind: kind.kind,
    })
}

fn selector(s: Option<String>, what: &str) -> Result<Option<String>, ManifestError> {
    match s {
        Some(s) if s.trim().is_empty() => Ok(None),
        Some(s) => {
            LabelSelector::parse(&s)
                .map_err(|e| ManifestError(format!("{what}: label selector {s:?}: {e}")))?;
            Ok(Some(s))
        }
        None => Ok(None),
    }
}

/// The name is a field manager and a metrics label: a DNS-1123 label.
fn check_name(name: &str) -> Result<(), ManifestError> {
    if is_dns_label(name) {
        Ok(())
    } else {
        Err(ManifestError(format!(
            "name {name:?} must be a DNS label: 1-63 of a-z, 0-9 and '-', not starting or ending with '-'"
        )))
    }
}

impl Manifest {
    /// Checks the record a guest's `manifest()` returned.
    pub fn from_wit(m: wit::ControllerManifest) -> Result<Manifest, ManifestError> {
        check_name(&m.name)?;
        let primary = gvk(m.primary, "primary")?;
        let primary_label_selector = selector(m.primary_label_selector, "primary")?;
        let owns = m
            .owns
            .into_iter()
            .map(|k| gvk(k, "owns"))
            .collect::<Result<Vec<_>, _>>()?;
        let mut indexes = Vec::new();
        for index in m.indexes {
            let kind = gvk(index.kind, &format!("index {:?}", index.name))?;
            if index.name.is_empty() {
                return Err(ManifestError(format!("an index of {kind} has no name")));
            }
            if indexes
                .iter()
                .any(|i: &IndexSpec| i.name == index.name && i.kind == kind)
            {
                return Err(ManifestError(format!(
                    "index {:?} of {kind} is declared twice",
                    index.name
                )));
            }
            let source = match index.source {
                wit::IndexSource::Label(l) => IndexSource::Label(l),
                wit::IndexSource::Annotation(a) => IndexSource::Annotation(a),
                wit::IndexSource::Field(f) => {
                    if f.is_empty() || f.split('.').any(str::is_empty) {
                        return Err(ManifestError(format!(
                            "index {:?}: field path {f:?} is not a dot-separated path",
                            index.name
                        )));
                    }
                    IndexSource::Field(f)
                }
                wit::IndexSource::OwnerUid => IndexSource::OwnerUid,
            };
            indexes.push(IndexSpec {
                name: index.name,
                kind,
                source,
            });
        }
        let mut watches = Vec::new();
        for watch in m.watches {
            let kind = gvk(watch.kind, "watch")?;
            let mapping = match watch.mapping {
                wit::KeyMapping::ControllerOwner => KeyMapping::ControllerOwner,
                wit::KeyMapping::Label(l) => KeyMapping::Label(l),
                wit::KeyMapping::Annotation(a) => KeyMapping::Annotation(a),
                wit::KeyMapping::ByIndex(name) => {
                    if !indexes.iter().any(|i| i.name == name && i.kind == primary) {
                        return Err(ManifestError(format!(
                            "watch of {kind} maps keys through index {name:?}, which is not declared on the primary kind {primary}"
                        )));
                    }
                    KeyMapping::ByIndex(name)
                }
            };
            let label_selector = selector(watch.label_selector, &format!("watch of {kind}"))?;
            watches.push(Watch {
                kind,
                mapping,
                label_selector,
            });
        }
        let watched = |kind: &Gvk| {
            *kind == primary || owns.contains(kind) || watches.iter().any(|w| w.kind == *kind)
        };
        if let Some(index) = indexes.iter().find(|i| !watched(&i.kind)) {
            return Err(ManifestError(format!(
                "index {:?} is on {}, which the manifest does not watch",
                index.name, index.kind
            )));
        }
        if m.concurrency == Some(0) {
            return Err(ManifestError("concurrency must be at least 1".into()));
        }
        let mut writes = Vec::new();
        for permission in m.writes {
            let kind = gvk(permission.kind, "writes")?;
            let verbs = permission
                .verbs
                .into_iter()
                .map(|v| match v {
                    wit::Verb::Create => Verb::Create,
                    wit::Verb::Replace => Verb::Replace,
                    wit::Verb::Patch => Verb::Patch,
                    wit::Verb::Delete => Verb::Delete,
                    wit::Verb::UpdateStatus => Verb::UpdateStatus,
                })
                .collect();
            writes.push(Permission { kind, verbs });
        }
        for path in &m.prune_fields {
            if path.is_empty() || path.split('.').any(str::is_empty) {
                return Err(ManifestError(format!(
                    "prune field {path:?} is not a dot-separated path"
                )));
            }
            if path == "metadata"
                || path.starts_with("metadata.") && path != "metadata.managedFields"
            {
                return Err(ManifestError(format!(
                    "prune field {path:?}: only metadata.managedFields may be pruned from metadata (the cache reads the rest)"
                )));
            }
        }
        Ok(Manifest {
            name: m.name,
            primary,
            primary_label_selector,
            owns,
            watches,
            indexes,
            resync_period: m.resync_period.map(Duration::from_nanos),
            concurrency: m.concurrency,
            writes,
            prune_fields: m.prune_fields,
        })
    }

    /// The same manifest under another name.
    pub fn renamed(&self, name: &str) -> Result<Manifest, ManifestError> {
        check_name(name)?;
        Ok(Manifest {
            name: name.to_string(),
            ..self.clone()
        })
    }

    /// Whether the manifest allows `verb` on `kind`.
    pub fn allows(&self, kind: &Gvk, verb: Verb) -> bool {
        self.writes
            .iter()
            .any(|p| p.kind == *kind && p.verbs.contains(&verb))
    }

    /// Every kind the guest reads from the cache: primary, owned, watched.
    pub fn watched_kinds(&self) -> Vec<&Gvk> {
        let mut kinds = vec![&self.primary];
        for kind in self.owns.iter().chain(self.watches.iter().map(|w| &w.kind)) {
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
        kinds
    }
}
