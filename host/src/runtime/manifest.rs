//! A guest's manifest as the host uses it: the WIT `controller-manifest`
//! checked once at load (names, kinds, selectors, index references), so the
//! controller wiring never meets a malformed one. Serializes to the JSON
//! `host inspect` prints. Recording events is a declared write like any
//! other: `create` of [`event_kind`].

use std::collections::HashSet;
use std::time::Duration;

use serde::Serialize;

use super::bindings::exports::recon::controller::reconciler as wit;
use super::bindings::recon::controller::types::Gvk as WitGvk;
use crate::built_in_kinds::{built_in_kind, usable};
use crate::label_selector::LabelSelector;
use recon_api_semantics::Gvk;
pub use recon_api_semantics::manifest::{
    IndexSource, IndexSpec, KeyMapping, Permission, PrunedField, Verb, Watch, event_kind,
};
use recon_api_semantics::manifest::{allows, beyond_metadata, may_prune, namespace_kind};
use recon_api_semantics::names::is_dns_label;

/// The most watches (extra watched kinds) a manifest may declare.
pub const MAX_WATCHES: usize = 16;
/// The most owned kinds a manifest may declare.
pub const MAX_OWNS: usize = 16;
/// The most indexes a manifest may declare, all kinds together: the host
/// computes each on every change of the shared cache it is on.
pub const MAX_INDEXES: usize = 16;
/// The most kinds a manifest may declare writes of.
pub const MAX_WRITES: usize = 32;
/// The most fields a manifest may prune.
pub const MAX_PRUNE_FIELDS: usize = 32;
/// The most paths one index may read.
pub const MAX_INDEX_PATHS: usize = 16;
/// The longest string in a manifest: a selector, a path, a label or
/// annotation key, an index name, a kind.
pub const MAX_TEXT: usize = 4096;
/// The most segments of a field path (an index's or a pruned field's).
pub const MAX_PATH_SEGMENTS: usize = 16;

/// A field path a manifest reads ([`Manifest::field_paths`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPathUse<'a> {
    /// The kind whose objects it reads.
    pub kind: &'a Gvk,
    /// The dot-separated path.
    pub path: &'a str,
    /// What reads it: `index "by-owner"`, `prune field of KIND`.
    pub what: String,
    /// Whether an index reads it (and so must end at strings).
    pub indexed: bool,
}

/// Why a manifest was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid manifest: {0}")]
pub struct ManifestError(pub String);

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
    /// Fields dropped before caching, besides `metadata.managedFields`.
    pub prune_fields: Vec<PrunedField>,
    /// Kinds whose cached objects keep `metadata.managedFields`.
    pub keep_managed_fields: Vec<Gvk>,
    /// Kinds read as metadata only (listed and watched as
    /// `PartialObjectMetadata`).
    pub metadata_only: Vec<Gvk>,
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

/// Refuses a manifest over the caps on counts ([`MAX_WATCHES`] and the
/// rest) and on every string ([`MAX_TEXT`]), in one pass over it, before
/// anything else looks at it.
fn check_sizes(m: &wit::ControllerManifest) -> Result<(), ManifestError> {
    for (what, count, max) in [
        ("watches", m.watches.len(), MAX_WATCHES),
        ("owned kinds", m.owns.len(), MAX_OWNS),
        ("indexes", m.indexes.len(), MAX_INDEXES),
        ("write permissions", m.writes.len(), MAX_WRITES),
        ("pruned fields", m.prune_fields.len(), MAX_PRUNE_FIELDS),
        (
            "kinds keeping managedFields",
            m.keep_managed_fields.len(),
            MAX_OWNS + MAX_WATCHES + 1,
        ),
        (
            "kinds read as metadata only",
            m.metadata_only.len(),
            MAX_OWNS + MAX_WATCHES + 1,
        ),
    ] {
        if count > max {
            return Err(ManifestError(format!(
                "{count} {what} declared; a manifest may declare at most {max}"
            )));
        }
    }
    fn kind(k: &WitGvk) -> [&str; 3] {
        [&k.group, &k.version, &k.kind]
    }
    fn source(s: &wit::IndexSource) -> Vec<&str> {
        match s {
            wit::IndexSource::Label(t)
            | wit::IndexSource::Annotation(t)
            | wit::IndexSource::Field(t) => vec![t],
            wit::IndexSource::Fields(paths) => paths.iter().map(String::as_str).collect(),
            wit::IndexSource::OwnerUid => vec![],
        }
    }
    fn mapping(k: &wit::KeyMapping) -> &str {
        match k {
            wit::KeyMapping::Label(t)
            | wit::KeyMapping::Annotation(t)
            | wit::KeyMapping::ByIndex(t) => t,
            wit::KeyMapping::ControllerOwner | wit::KeyMapping::Namespace => "",
        }
    }
    if let Some((name, count)) = m.indexes.iter().find_map(|i| match &i.source {
        wit::IndexSource::Fields(paths) if paths.len() > MAX_INDEX_PATHS => {
            Some((&i.name, paths.len()))
        }
        _ => None,
    }) {
        return Err(ManifestError(format!(
            "index {name:?} reads {count} paths; an index may read at most {MAX_INDEX_PATHS}"
        )));
    }
    let mut texts: Vec<&str> = vec![m.name.as_str()];
    texts.extend(kind(&m.primary));
    texts.extend(m.primary_label_selector.as_deref());
    texts.extend(m.owns.iter().flat_map(kind));
    for watch in &m.watches {
        texts.extend(kind(&watch.kind));
        texts.push(mapping(&watch.mapping));
        texts.extend(watch.label_selector.as_deref());
    }
    for index in &m.indexes {
        texts.extend(kind(&index.kind));
        texts.push(&index.name);
        texts.extend(source(&index.source));
    }
    texts.extend(m.writes.iter().flat_map(|w| kind(&w.kind)));
    for pruned in &m.prune_fields {
        texts.extend(kind(&pruned.kind));
        texts.push(&pruned.path);
    }
    texts.extend(m.keep_managed_fields.iter().flat_map(kind));
    texts.extend(m.metadata_only.iter().flat_map(kind));
    if let Some(long) = texts.iter().find(|t| t.len() > MAX_TEXT) {
        return Err(ManifestError(format!(
            "a string of {} bytes ({:?}…); a manifest's strings may be at most {MAX_TEXT} bytes",
            long.len(),
            &long[..long.floor_char_boundary(32)]
        )));
    }
    // There are five verbs: a longer list repeats them.
    if let Some(writes) = m.writes.iter().find(|w| w.verbs.len() > 5) {
        return Err(ManifestError(format!(
            "writes of {}: {} verbs listed; there are 5",
            writes.kind.kind,
            writes.verbs.len()
        )));
    }
    Ok(())
}

/// Checks a dot-separated field path of at most [`MAX_PATH_SEGMENTS`].
/// What a field path is for: an index reads the strings at its end, a
/// pruned field may be anything.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PathUse {
    Index,
    Prune,
}

/// Checks a field path of `kind`: its shape, and for a built-in kind that
/// it names fields the kind has (and, for an index, ends at strings).
fn check_path(
    kind: &Gvk,
    path: &str,
    what: &dyn std::fmt::Display,
    used: PathUse,
) -> Result<(), ManifestError> {
    if path.is_empty() || path.split('.').any(str::is_empty) {
        return Err(ManifestError(format!(
            "{what}: field path {path:?} is not a dot-separated path"
        )));
    }
    let segments = path.split('.').count();
    if segments > MAX_PATH_SEGMENTS {
        return Err(ManifestError(format!(
            "{what}: field path of {segments} segments; at most {MAX_PATH_SEGMENTS}"
        )));
    }
    // Custom resources (and kinds newer than this host) are not known.
    let Some(built_in) = built_in_kind(kind) else {
        return Ok(());
    };
    let reached = built_in.field_path(path);
    usable(built_in.kind, path, reached, used == PathUse::Index)
        .map_err(|error| ManifestError(format!("{what}: {error}")))
}

/// Checks a list of kinds (`what` in a refusal of one), each of which must
/// be watched and named once; `does` says what the manifest does with a
/// kind, and `unwatched` ends the refusal of a kind not watched.
fn watched_once(
    kinds: Vec<WitGvk>,
    what: &str,
    watched: &HashSet<&Gvk>,
    does: impl Fn(&Gvk) -> String,
    unwatched: &str,
) -> Result<Vec<Gvk>, ManifestError> {
    let mut checked: Vec<Gvk> = Vec::new();
    for kind in kinds {
        let kind = gvk(kind, what)?;
        if !watched.contains(&kind) {
            return Err(ManifestError(format!("{}, {unwatched}", does(&kind))));
        }
        if checked.contains(&kind) {
            return Err(ManifestError(format!("{} twice", does(&kind))));
        }
        checked.push(kind);
    }
    Ok(checked)
}

/// Checks the kinds read as metadata only: each watched, named once, and
/// with its index and prune paths under `metadata`, since nothing else of
/// such a kind is cached.
fn metadata_only(
    kinds: Vec<WitGvk>,
    watched: &HashSet<&Gvk>,
    indexes: &[IndexSpec],
    prune_fields: &[PrunedField],
) -> Result<Vec<Gvk>, ManifestError> {
    let metadata_only = watched_once(
        kinds,
        "metadata only",
        watched,
        |kind| format!("reads {kind} as metadata only"),
        "but the manifest does not watch it",
    )?;
    if let Some(beyond) = beyond_metadata(&metadata_only, indexes, prune_fields) {
        return Err(ManifestError(format!(
            "{beyond}: its cached objects hold metadata alone"
        )));
    }
    Ok(metadata_only)
}

impl Manifest {
    /// Checks the record a guest's `manifest()` returned, in time linear
    /// in its size.
    pub fn from_wit(m: wit::ControllerManifest) -> Result<Manifest, ManifestError> {
        check_sizes(&m)?;
        check_name(&m.name)?;
        let primary = gvk(m.primary, "primary")?;
        let primary_label_selector = selector(m.primary_label_selector, "primary")?;
        let owns = m
            .owns
            .into_iter()
            .map(|k| gvk(k, "owns"))
            .collect::<Result<Vec<_>, _>>()?;
        let mut indexes = Vec::new();
        let mut declared: HashSet<(String, Gvk)> = HashSet::new();
        for index in m.indexes {
            let kind = gvk(index.kind, &format!("index {:?}", index.name))?;
            if index.name.is_empty() {
                return Err(ManifestError(format!("an index of {kind} has no name")));
            }
            if !declared.insert((index.name.clone(), kind.clone())) {
                return Err(ManifestError(format!(
                    "index {:?} of {kind} is declared twice",
                    index.name
                )));
            }
            let source = match index.source {
                wit::IndexSource::Label(l) => IndexSource::Label(l),
                wit::IndexSource::Annotation(a) => IndexSource::Annotation(a),
                wit::IndexSource::Field(f) => {
                    check_path(
                        &kind,
                        &f,
                        &format_args!("index {:?}", index.name),
                        PathUse::Index,
                    )?;
                    IndexSource::Field(f)
                }
                wit::IndexSource::Fields(paths) => {
                    if paths.is_empty() {
                        return Err(ManifestError(format!(
                            "index {:?} reads no paths",
                            index.name
                        )));
                    }
                    for path in &paths {
                        check_path(
                            &kind,
                            path,
                            &format_args!("index {:?}", index.name),
                            PathUse::Index,
                        )?;
                    }
                    IndexSource::Fields(paths)
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
                    if !declared.contains(&(name.clone(), primary.clone())) {
                        return Err(ManifestError(format!(
                            "watch of {kind} maps keys through index {name:?}, which is not declared on the primary kind {primary}"
                        )));
                    }
                    KeyMapping::ByIndex(name)
                }
                wit::KeyMapping::Namespace => {
                    if primary != namespace_kind() {
                        return Err(ManifestError(format!(
                            "watch of {kind} maps keys to the object's namespace, which needs the primary kind v1, Kind=Namespace (not {primary})"
                        )));
                    }
                    KeyMapping::Namespace
                }
            };
            let label_selector = selector(watch.label_selector, &format!("watch of {kind}"))?;
            watches.push(Watch {
                kind,
                mapping,
                label_selector,
            });
        }
        let watched: HashSet<&Gvk> = std::iter::once(&primary)
            .chain(&owns)
            .chain(watches.iter().map(|w| &w.kind))
            .collect();
        if let Some(index) = indexes.iter().find(|i| !watched.contains(&i.kind)) {
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
        let mut prune_fields = Vec::new();
        for pruned in m.prune_fields {
            let kind = gvk(pruned.kind, "prune field")?;
            let path = pruned.path;
            check_path(
                &kind,
                &path,
                &format_args!("prune field of {kind}"),
                PathUse::Prune,
            )?;
            if !may_prune(&path) {
                return Err(ManifestError(format!(
                    "prune field {path:?} of {kind}: only metadata.managedFields may be pruned from metadata (the cache reads the rest)"
                )));
            }
            if !watched.contains(&kind) {
                return Err(ManifestError(format!(
                    "prune field {path:?} is on {kind}, which the manifest does not watch"
                )));
            }
            prune_fields.push(PrunedField { kind, path });
        }
        let keep_managed_fields = watched_once(
            m.keep_managed_fields,
            "keep managedFields",
            &watched,
            |kind| format!("keeps managedFields of {kind}"),
            "which the manifest does not watch",
        )?;
        let metadata_only = metadata_only(m.metadata_only, &watched, &indexes, &prune_fields)?;
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
            prune_fields,
            keep_managed_fields,
            metadata_only,
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
        allows(&self.writes, kind, verb)
    }

    /// Whether the manifest allows recording events (`create` of [`event_kind`]).
    pub fn records_events(&self) -> bool {
        self.allows(&event_kind(), Verb::Create)
    }

    /// Every field path the manifest reads, with its kind, what reads it
    /// (as the manifest's errors name it) and whether an index does.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(group: &str, version: &str, kind: &str) -> WitGvk {
        WitGvk {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
        }
    }

    fn configmaps() -> WitGvk {
        kind("", "v1", "ConfigMap")
    }

    fn manifest() -> wit::ControllerManifest {
        wit::ControllerManifest {
            name: "mirror".into(),
            primary: configmaps(),
            primary_label_selector: None,
            owns: vec![kind("apps", "v1", "Deployment")],
            watches: vec![wit::Watch {
                kind: kind("", "v1", "Secret"),
                mapping: wit::KeyMapping::ByIndex("by-secret".into()),
                label_selector: Some("app=web".into()),
            }],
            indexes: vec![wit::IndexSpec {
                name: "by-secret".into(),
                kind: configmaps(),
                source: wit::IndexSource::Field("data.secret".into()),
            }],
            resync_period: None,
            concurrency: Some(2),
            writes: vec![wit::Permission {
                kind: configmaps(),
                verbs: vec![wit::Verb::Create, wit::Verb::Patch],
            }],
            prune_fields: vec![pruned("data.big")],
            keep_managed_fields: vec![],
            metadata_only: vec![],
        }
    }

    fn pruned(path: &str) -> wit::PrunedField {
        wit::PrunedField {
            kind: configmaps(),
            path: path.into(),
        }
    }

    fn refused(m: wit::ControllerManifest) -> String {
        Manifest::from_wit(m).unwrap_err().0
    }

    /// Why the well-formed manifest is refused once `change` has changed it.
    fn refused_after(change: impl FnOnce(&mut wit::ControllerManifest)) -> String {
        let mut m = manifest();
        change(&mut m);
        refused(m)
    }

    fn field_index(i: usize) -> wit::IndexSpec {
        wit::IndexSpec {
            name: format!("i-{i}"),
            kind: configmaps(),
            source: wit::IndexSource::Field(format!("data.k{i}")),
        }
    }

    #[test]
    fn a_well_formed_manifest_is_taken() {
        let m = Manifest::from_wit(manifest()).unwrap();
        assert_eq!(m.name, "mirror");
        assert!(m.allows(&Gvk::new("", "v1", "ConfigMap"), Verb::Patch));
        assert!(!m.allows(&Gvk::new("", "v1", "ConfigMap"), Verb::Delete));
        assert_eq!(m.watched_kinds().len(), 3);
    }

    #[test]
    fn counts_over_their_caps_are_refused_before_anything_else() {
        let mut m = manifest();
        m.indexes = (0..MAX_INDEXES).map(field_index).collect();
        m.watches.clear();
        assert!(
            Manifest::from_wit(m.clone()).is_ok(),
            "the cap itself is allowed"
        );
        // A hundred thousand indexes are refused at once, however bad they
        // are otherwise.
        m.indexes = (0..100_000).map(field_index).collect();
        m.name = "Not A Name".into();
        assert_eq!(
            refused(m),
            "100000 indexes declared; a manifest may declare at most 16"
        );
        for (build, what, max) in [
            (
                Box::new(|m: &mut wit::ControllerManifest, n| {
                    m.watches = vec![m.watches[0].clone(); n]
                }) as Box<dyn Fn(&mut wit::ControllerManifest, usize)>,
                "watches",
                MAX_WATCHES,
            ),
            (
                Box::new(|m, n| m.owns = vec![configmaps(); n]),
                "owned kinds",
                MAX_OWNS,
            ),
            (
                Box::new(|m, n| m.writes = vec![m.writes[0].clone(); n]),
                "write permissions",
                MAX_WRITES,
            ),
            (
                Box::new(|m, n| m.prune_fields = vec![pruned("data.x"); n]),
                "pruned fields",
                MAX_PRUNE_FIELDS,
            ),
        ] {
            assert_eq!(
                refused_after(|m| build(m, max + 1)),
                format!(
                    "{} {what} declared; a manifest may declare at most {max}",
                    max + 1
                )
            );
        }
    }

    #[test]
    fn long_strings_deep_paths_and_repeated_verbs_are_refused() {
        assert!(
            refused_after(
                |m| m.watches[0].label_selector = Some(format!("app in ({})", "a,".repeat(10_000)))
            )
            .starts_with("a string of 20009 bytes (\"app in (a,a,")
        );
        assert_eq!(
            refused_after(
                |m| m.indexes[0].source = wit::IndexSource::Field(vec!["a"; 17].join("."))
            ),
            "index \"by-secret\": field path of 17 segments; at most 16"
        );
        assert_eq!(
            refused_after(|m| m.prune_fields = vec![pruned("data..x")]),
            "prune field of v1, Kind=ConfigMap: field path \"data..x\" is not a dot-separated path"
        );
        assert_eq!(
            refused_after(
                |m| m.indexes[0].source = wit::IndexSource::Fields(vec!["data.a".into(); 17])
            ),
            "index \"by-secret\" reads 17 paths; an index may read at most 16"
        );
        assert_eq!(
            refused_after(|m| m.writes[0].verbs = vec![wit::Verb::Create; 6]),
            "writes of ConfigMap: 6 verbs listed; there are 5"
        );
    }

    #[test]
    fn indexes_are_unique_and_mappings_name_declared_ones() {
        assert_eq!(
            refused_after(|m| m.indexes.push(m.indexes[0].clone())),
            "index \"by-secret\" of v1, Kind=ConfigMap is declared twice"
        );
        assert!(
            refused_after(|m| m.watches[0].mapping = wit::KeyMapping::ByIndex("nope".into()))
                .contains("maps keys through index \"nope\", which is not declared")
        );
        assert_eq!(
            refused_after(|m| {
                m.indexes[0].kind = kind("", "v1", "Pod");
                m.indexes[0].source = wit::IndexSource::Field("spec.nodeName".into());
                m.watches[0].mapping = wit::KeyMapping::Label("x".into());
            }),
            "index \"by-secret\" is on v1, Kind=Pod, which the manifest does not watch"
        );
    }

    #[test]
    fn an_index_reads_several_paths_each_checked() {
        let mut m = manifest();
        m.indexes[0].source =
            wit::IndexSource::Fields(vec!["data.a".into(), "metadata.annotations.source".into()]);
        let taken = Manifest::from_wit(m.clone()).unwrap();
        assert_eq!(
            taken.indexes[0].source,
            IndexSource::Fields(vec!["data.a".into(), "metadata.annotations.source".into()])
        );
        m.indexes[0].source = wit::IndexSource::Fields(vec!["data.a".into(), "x.".into()]);
        assert_eq!(
            refused(m.clone()),
            "index \"by-secret\": field path \"x.\" is not a dot-separated path"
        );
        m.indexes[0].source = wit::IndexSource::Fields(vec![]);
        assert_eq!(refused(m), "index \"by-secret\" reads no paths");
    }

    #[test]
    fn the_namespace_mapping_needs_namespaces_as_the_primary_kind() {
        let mut m = manifest();
        m.watches[0].mapping = wit::KeyMapping::Namespace;
        assert_eq!(
            refused(m.clone()),
            "watch of v1, Kind=Secret maps keys to the object's namespace, which needs the primary kind v1, Kind=Namespace (not v1, Kind=ConfigMap)"
        );
        m.primary = kind("", "v1", "Namespace");
        m.indexes.clear();
        m.prune_fields.clear();
        let taken = Manifest::from_wit(m).unwrap();
        assert_eq!(taken.watches[0].mapping, KeyMapping::Namespace);
    }

    #[test]
    fn pruned_fields_belong_to_a_watched_kind() {
        let taken = Manifest::from_wit(manifest()).unwrap();
        assert_eq!(
            taken.prune_fields,
            [PrunedField {
                kind: Gvk::new("", "v1", "ConfigMap"),
                path: "data.big".into()
            }]
        );
        assert_eq!(
            refused_after(|m| {
                m.prune_fields[0].kind = kind("", "v1", "Pod");
                m.prune_fields[0].path = "spec.overhead".into();
            }),
            "prune field \"spec.overhead\" is on v1, Kind=Pod, which the manifest does not watch"
        );
        assert!(
            refused_after(|m| m.prune_fields = vec![pruned("metadata.labels")])
                .contains("only metadata.managedFields may be pruned")
        );
    }

    #[test]
    fn managed_fields_are_kept_only_of_watched_kinds_each_once() {
        let mut m = manifest();
        m.keep_managed_fields = vec![kind("apps", "v1", "Deployment")];
        let taken = Manifest::from_wit(m.clone()).unwrap();
        assert_eq!(
            taken.keep_managed_fields,
            [Gvk::new("apps", "v1", "Deployment")]
        );
        m.keep_managed_fields.push(kind("apps", "v1", "Deployment"));
        assert_eq!(
            refused(m.clone()),
            "keeps managedFields of apps/v1, Kind=Deployment twice"
        );
        m.keep_managed_fields = vec![kind("", "v1", "Pod")];
        assert_eq!(
            refused(m),
            "keeps managedFields of v1, Kind=Pod, which the manifest does not watch"
        );
    }

    #[test]
    fn kinds_read_as_metadata_only_are_watched_named_once_and_indexed_by_metadata() {
        let secrets = || kind("", "v1", "Secret");
        let mut m = manifest();
        m.metadata_only = vec![secrets()];
        m.indexes.push(wit::IndexSpec {
            name: "by-owner".into(),
            kind: secrets(),
            source: wit::IndexSource::Fields(vec!["metadata.labels.owner".into()]),
        });
        let taken = Manifest::from_wit(m.clone()).unwrap();
        assert_eq!(taken.metadata_only, [Gvk::new("", "v1", "Secret")]);
        let mut twice = m.clone();
        twice.metadata_only.push(secrets());
        assert_eq!(
            refused(twice),
            "reads v1, Kind=Secret as metadata only twice"
        );
        let mut unwatched = m.clone();
        unwatched.metadata_only = vec![kind("", "v1", "Pod")];
        assert_eq!(
            refused(unwatched),
            "reads v1, Kind=Pod as metadata only, but the manifest does not watch it"
        );
        let mut by_data = m.clone();
        by_data.indexes[1].source = wit::IndexSource::Field("data.token".into());
        assert_eq!(
            refused(by_data),
            "index \"by-owner\" reads \"data.token\" of v1, Kind=Secret, which the manifest reads as metadata only: its cached objects hold metadata alone"
        );
        let mut pruning = m;
        pruning.metadata_only = vec![configmaps()];
        pruning.indexes.truncate(0);
        pruning.watches[0].mapping = wit::KeyMapping::Label("app".into());
        assert_eq!(
            refused(pruning),
            "prune field \"data.big\" of v1, Kind=ConfigMap, which the manifest reads as metadata only: its cached objects hold metadata alone"
        );
    }

    #[test]
    fn field_paths_of_built_in_kinds_name_fields_they_have() {
        assert_eq!(
            refused_after(|m| m.indexes[0].source = wit::IndexSource::Field("dta.secret".into())),
            "index \"by-secret\": field path \"dta.secret\": a ConfigMap (ConfigMap) has no field \"dta\"; did you mean \"data\"?"
        );
        assert_eq!(
            refused_after(|m| m.indexes[0].source =
                wit::IndexSource::Fields(vec!["data.a".into(), "metadata.labels".into()])),
            "index \"by-secret\": field path \"metadata.labels\" of ConfigMap ends at a map; an index reads strings"
        );
        assert_eq!(
            refused_after(|m| m.prune_fields = vec![pruned("immutable.x")]),
            "prune field of v1, Kind=ConfigMap: field path \"immutable.x\": ConfigMap's immutable is a boolean, which has no field \"x\""
        );
        // A pruned field may be anything; an index may read a list's strings.
        let mut m = manifest();
        m.prune_fields = vec![pruned("data"), pruned("immutable")];
        m.indexes[0].source = wit::IndexSource::Field("metadata.finalizers".into());
        Manifest::from_wit(m).unwrap();
        // A custom resource's paths are not known to the host.
        let mut m = manifest();
        let foo = kind("samplecontroller.k8s.io", "v1alpha1", "Foo");
        m.owns.push(foo.clone());
        m.indexes[0].kind = foo.clone();
        m.indexes[0].source = wit::IndexSource::Field("spec.anything".into());
        m.watches[0].mapping = wit::KeyMapping::Label("x".into());
        Manifest::from_wit(m).unwrap();
    }
}
