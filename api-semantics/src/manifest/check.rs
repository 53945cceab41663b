//! The checks of a [`Manifest`] that the host applies when it loads a
//! guest, and the guest SDK's `FakeCluster` applies to the same manifest
//! in a guest's native tests: caps on counts and strings, names, kinds,
//! selectors, field paths' shape, and the references between the parts
//! (an index on a kind the manifest reads, a `by-index` mapping naming an
//! index of the primary kind). Linear in the manifest's size, caps first,
//! so a hostile manifest costs little to refuse. What only the host can
//! check (that a built-in kind has the fields a path names) it checks
//! after these.

use std::collections::HashSet;

use recon_label_selector::Selector;

use super::{IndexSource, KeyMapping, Manifest, beyond_metadata, may_prune, namespace_kind};
use crate::Gvk;
use crate::names::is_dns_label;

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

/// Why a manifest was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError(pub String);

impl std::fmt::Display for ManifestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid manifest: {}", self.0)
    }
}

impl std::error::Error for ManifestError {}

fn refuse<T>(why: String) -> Result<T, ManifestError> {
    Err(ManifestError(why))
}

impl Manifest {
    /// Checks the manifest as the host does when it loads a guest, in
    /// time linear in its size: the caps first ([`MAX_WATCHES`] and the
    /// rest), then the name (a DNS label), every kind, the selectors, the
    /// indexes (named, each name once per kind, on a kind the manifest
    /// reads, paths well formed), the key mappings (a `by-index` mapping
    /// names an index of the primary kind; the `namespace` mapping needs
    /// `v1` Namespaces as the primary kind), the concurrency, the pruned
    /// fields and the kinds keeping managedFields or read as metadata
    /// only. Whether a built-in kind has the fields a path names is the
    /// host's own check, after this one.
    pub fn validate(&self) -> Result<(), ManifestError> {
        self.check_sizes()?;
        check_name(&self.name)?;
        check_kind(&self.primary, "primary")?;
        check_selector(self.primary_label_selector.as_deref(), "primary")?;
        for kind in &self.owns {
            check_kind(kind, "owns")?;
        }
        let mut declared: HashSet<(&str, &Gvk)> = HashSet::new();
        for index in &self.indexes {
            let what = format!("index {:?}", index.name);
            check_kind(&index.kind, &what)?;
            if index.name.is_empty() {
                return refuse(format!("an index of {} has no name", index.kind));
            }
            if !declared.insert((&index.name, &index.kind)) {
                return refuse(format!(
                    "index {:?} of {} is declared twice",
                    index.name, index.kind
                ));
            }
            if index.source == IndexSource::Fields(Vec::new()) {
                return refuse(format!("index {:?} reads no paths", index.name));
            }
            for path in index.source.paths() {
                check_path(path, &what)?;
            }
        }
        let primary = &self.primary;
        for watch in &self.watches {
            let kind = &watch.kind;
            check_kind(kind, "watch")?;
            match &watch.mapping {
                KeyMapping::ByIndex(name) if !declared.contains(&(name.as_str(), primary)) => {
                    return refuse(format!(
                        "watch of {kind} maps keys through index {name:?}, which is not declared on the primary kind {primary}"
                    ));
                }
                KeyMapping::Namespace if *primary != namespace_kind() => {
                    return refuse(format!(
                        "watch of {kind} maps keys to the object's namespace, which needs the primary kind v1, Kind=Namespace (not {primary})"
                    ));
                }
                _ => {}
            }
            check_selector(watch.label_selector.as_deref(), &format!("watch of {kind}"))?;
        }
        let watched: HashSet<&Gvk> = self.watched_kinds().into_iter().collect();
        if let Some(index) = self.indexes.iter().find(|i| !watched.contains(&i.kind)) {
            return refuse(format!(
                "index {:?} is on {}, which the manifest does not watch",
                index.name, index.kind
            ));
        }
        if self.concurrency == Some(0) {
            return refuse("concurrency must be at least 1".into());
        }
        for permission in &self.writes {
            check_kind(&permission.kind, "writes")?;
        }
        for pruned in &self.prune_fields {
            let (kind, path) = (&pruned.kind, &pruned.path);
            check_kind(kind, "prune field")?;
            check_path(path, &format!("prune field of {kind}"))?;
            if !may_prune(path) {
                return refuse(format!(
                    "prune field {path:?} of {kind}: only metadata.managedFields may be pruned from metadata (the cache reads the rest)"
                ));
            }
            if !watched.contains(kind) {
                return refuse(format!(
                    "prune field {path:?} is on {kind}, which the manifest does not watch"
                ));
            }
        }
        watched_once(
            &self.keep_managed_fields,
            "keep managedFields",
            &watched,
            |kind| format!("keeps managedFields of {kind}"),
            "which the manifest does not watch",
        )?;
        watched_once(
            &self.metadata_only,
            "metadata only",
            &watched,
            |kind| format!("reads {kind} as metadata only"),
            "but the manifest does not watch it",
        )?;
        if let Some(beyond) =
            beyond_metadata(&self.metadata_only, &self.indexes, &self.prune_fields)
        {
            return refuse(format!("{beyond}: its cached objects hold metadata alone"));
        }
        Ok(())
    }

    /// The same manifest under another name, which must be a DNS label.
    pub fn renamed(&self, name: &str) -> Result<Manifest, ManifestError> {
        check_name(name)?;
        Ok(Manifest {
            name: name.to_string(),
            ..self.clone()
        })
    }

    /// Refuses a manifest over the caps on counts ([`MAX_WATCHES`] and the
    /// rest) and on every string ([`MAX_TEXT`]), in one pass over it,
    /// before anything else looks at it.
    fn check_sizes(&self) -> Result<(), ManifestError> {
        let kinds_read = MAX_OWNS + MAX_WATCHES + 1;
        for (what, count, max) in [
            ("watches", self.watches.len(), MAX_WATCHES),
            ("owned kinds", self.owns.len(), MAX_OWNS),
            ("indexes", self.indexes.len(), MAX_INDEXES),
            ("write permissions", self.writes.len(), MAX_WRITES),
            ("pruned fields", self.prune_fields.len(), MAX_PRUNE_FIELDS),
            (
                "kinds keeping managedFields",
                self.keep_managed_fields.len(),
                kinds_read,
            ),
            (
                "kinds read as metadata only",
                self.metadata_only.len(),
                kinds_read,
            ),
        ] {
            if count > max {
                return refuse(format!(
                    "{count} {what} declared; a manifest may declare at most {max}"
                ));
            }
        }
        if let Some(index) = self
            .indexes
            .iter()
            .find(|i| i.source.paths().len() > MAX_INDEX_PATHS)
        {
            return refuse(format!(
                "index {:?} reads {} paths; an index may read at most {MAX_INDEX_PATHS}",
                index.name,
                index.source.paths().len()
            ));
        }
        fn kind(k: &Gvk) -> [&str; 3] {
            [&k.group, &k.version, &k.kind]
        }
        fn source(s: &IndexSource) -> Vec<&str> {
            match s {
                IndexSource::Label(t) | IndexSource::Annotation(t) => vec![t],
                IndexSource::Field(_) | IndexSource::Fields(_) | IndexSource::OwnerUid => {
                    s.paths().iter().map(String::as_str).collect()
                }
            }
        }
        fn mapping(k: &KeyMapping) -> &str {
            match k {
                KeyMapping::Label(t) | KeyMapping::Annotation(t) | KeyMapping::ByIndex(t) => t,
                KeyMapping::ControllerOwner | KeyMapping::Namespace => "",
            }
        }
        let mut texts: Vec<&str> = vec![self.name.as_str()];
        texts.extend(kind(&self.primary));
        texts.extend(self.primary_label_selector.as_deref());
        texts.extend(self.owns.iter().flat_map(kind));
        for watch in &self.watches {
            texts.extend(kind(&watch.kind));
            texts.push(mapping(&watch.mapping));
            texts.extend(watch.label_selector.as_deref());
        }
        for index in &self.indexes {
            texts.extend(kind(&index.kind));
            texts.push(&index.name);
            texts.extend(source(&index.source));
        }
        texts.extend(self.writes.iter().flat_map(|w| kind(&w.kind)));
        for pruned in &self.prune_fields {
            texts.extend(kind(&pruned.kind));
            texts.push(&pruned.path);
        }
        texts.extend(self.keep_managed_fields.iter().flat_map(kind));
        texts.extend(self.metadata_only.iter().flat_map(kind));
        if let Some(long) = texts.iter().find(|t| t.len() > MAX_TEXT) {
            return refuse(format!(
                "a string of {} bytes ({:?}…); a manifest's strings may be at most {MAX_TEXT} bytes",
                long.len(),
                &long[..long.floor_char_boundary(32)]
            ));
        }
        // There are five verbs: a longer list repeats them.
        if let Some(writes) = self.writes.iter().find(|w| w.verbs.len() > 5) {
            return refuse(format!(
                "writes of {}: {} verbs listed; there are 5",
                writes.kind.kind,
                writes.verbs.len()
            ));
        }
        Ok(())
    }
}

/// The name is a field manager and a metrics label: a DNS-1123 label.
fn check_name(name: &str) -> Result<(), ManifestError> {
    if is_dns_label(name) {
        Ok(())
    } else {
        refuse(format!(
            "name {name:?} must be a DNS label: 1-63 of a-z, 0-9 and '-', not starting or ending with '-'"
        ))
    }
}

/// A kind needs a version and a kind; the core group is `""`.
fn check_kind(kind: &Gvk, what: &str) -> Result<(), ManifestError> {
    if kind.version.is_empty() || kind.kind.is_empty() {
        return refuse(format!(
            "{what}: a kind needs a version and a kind (got group {:?}, version {:?}, kind {:?})",
            kind.group, kind.version, kind.kind
        ));
    }
    Ok(())
}

/// A selector parses as the API server parses it; a blank one selects
/// everything.
fn check_selector(selector: Option<&str>, what: &str) -> Result<(), ManifestError> {
    match selector {
        Some(s) if !s.trim().is_empty() => match Selector::parse(s) {
            Ok(_) => Ok(()),
            Err(e) => refuse(format!("{what}: label selector {s:?}: {e}")),
        },
        _ => Ok(()),
    }
}

/// A field path is dot-separated, of at most [`MAX_PATH_SEGMENTS`].
fn check_path(path: &str, what: &str) -> Result<(), ManifestError> {
    if path.is_empty() || path.split('.').any(str::is_empty) {
        return refuse(format!(
            "{what}: field path {path:?} is not a dot-separated path"
        ));
    }
    let segments = path.split('.').count();
    if segments > MAX_PATH_SEGMENTS {
        return refuse(format!(
            "{what}: field path of {segments} segments; at most {MAX_PATH_SEGMENTS}"
        ));
    }
    Ok(())
}

/// Checks a list of kinds (`what` in a refusal of one), each of which must
/// be watched and named once; `does` says what the manifest does with a
/// kind, and `unwatched` ends the refusal of a kind not watched.
fn watched_once(
    kinds: &[Gvk],
    what: &str,
    watched: &HashSet<&Gvk>,
    does: impl Fn(&Gvk) -> String,
    unwatched: &str,
) -> Result<(), ManifestError> {
    let mut seen: HashSet<&Gvk> = HashSet::new();
    for kind in kinds {
        check_kind(kind, what)?;
        if !watched.contains(kind) {
            return refuse(format!("{}, {unwatched}", does(kind)));
        }
        if !seen.insert(kind) {
            return refuse(format!("{} twice", does(kind)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::{KeyMapping, Watch};

    fn configmaps() -> Gvk {
        Gvk::new("", "v1", "ConfigMap")
    }

    fn mirror() -> Manifest {
        Manifest::for_kind("mirror", configmaps())
            .watch(Watch {
                kind: Gvk::new("", "v1", "Secret"),
                mapping: KeyMapping::ByIndex("by-secret".into()),
                label_selector: Some(" ".into()),
            })
            .index_kind(
                "by-secret",
                configmaps(),
                IndexSource::Field("data.secret".into()),
            )
    }

    fn refused(m: &Manifest) -> String {
        m.validate().unwrap_err().0
    }

    #[test]
    fn a_renamed_manifest_is_checked_again() {
        assert_eq!(mirror().validate(), Ok(()), "a blank selector selects all");
        assert_eq!(mirror().renamed("mirror-b").unwrap().name, "mirror-b");
        assert_eq!(
            mirror().renamed("Mirror B").unwrap_err().to_string(),
            "invalid manifest: name \"Mirror B\" must be a DNS label: 1-63 of a-z, 0-9 and '-', not starting or ending with '-'"
        );
    }

    #[test]
    fn the_caps_are_checked_before_the_rest() {
        let mut m = mirror().owns_kind(Gvk::new("", "", ""));
        assert_eq!(
            refused(&m),
            "owns: a kind needs a version and a kind (got group \"\", version \"\", kind \"\")"
        );
        m.watches = vec![m.watches[0].clone(); MAX_WATCHES + 1];
        assert_eq!(
            refused(&m),
            "17 watches declared; a manifest may declare at most 16"
        );
    }

    #[test]
    fn references_between_the_parts_hold() {
        let m = mirror().watch(Watch {
            kind: Gvk::new("", "v1", "Pod"),
            mapping: KeyMapping::ByIndex("by-pod".into()),
            label_selector: None,
        });
        assert_eq!(
            refused(&m),
            "watch of v1, Kind=Pod maps keys through index \"by-pod\", which is not declared on the primary kind v1, Kind=ConfigMap"
        );
        let m = mirror().index_kind("by-owner", Gvk::new("", "v1", "Pod"), IndexSource::OwnerUid);
        assert_eq!(
            refused(&m),
            "index \"by-owner\" is on v1, Kind=Pod, which the manifest does not watch"
        );
        assert_eq!(
            refused(&mirror().concurrency(0)),
            "concurrency must be at least 1"
        );
        assert_eq!(
            refused(&mirror().primary_selector("a in (")),
            "primary: label selector \"a in (\": ".to_string()
                + &Selector::parse("a in (").unwrap_err().to_string()
        );
    }
}
