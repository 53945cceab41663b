//! The [`Manifest`]: everything the host needs to wire a reconciler up (the
//! WIT `controller-manifest`), with a builder. Which kinds are cached (the
//! primary kind, owned kinds, watches), how changes map to primary keys,
//! declared indexes, and which writes are allowed (recording events among
//! them: [`Manifest::records_events`]). The conversion to the WIT
//! record lives in the wasm backend; `testing::FakeCluster` reads
//! the manifest to enforce the same rules the host does. Its parts (key
//! mappings, indexes, verbs, pruned fields) are the host's own types, from
//! `recon_api_semantics::manifest`.

use std::time::Duration;

use k8s_openapi::Resource;

pub use recon_api_semantics::manifest::{
    IndexSource, IndexSpec, KeyMapping, Permission, PrunedField, Verb, Watch, event_kind,
};
use recon_api_semantics::manifest::{allows, beyond_metadata, may_prune, namespace_kind};

use crate::selector::Selector;
use crate::types::{Error, Gvk, Result, gvk_of};

/// A reconciler's manifest. Build one with [`Manifest::new`] and the
/// builder methods:
///
/// ```
/// use std::time::Duration;
/// use k8s_openapi::api::apps::v1::Deployment;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_guest_sdk::{KeyMapping, Manifest, Verb};
///
/// let manifest = Manifest::new::<Deployment>("web")
///     .watches::<ConfigMap>(KeyMapping::Label("app".into()))
///     .resync_every(Duration::from_secs(600))
///     .writes::<ConfigMap>(&[Verb::Create, Verb::Patch]);
/// assert!(manifest.allows(&recon_guest_sdk::gvk_of::<ConfigMap>(), Verb::Patch));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// Unique among the guests of one host; the field manager and metrics label.
    pub name: String,
    /// The kind whose keys are reconciled.
    pub primary: Gvk,
    /// Only primary objects matching this selector are cached.
    pub primary_label_selector: Option<String>,
    /// Kinds the primary objects own (controller owner references); a change
    /// enqueues the owner.
    pub owns: Vec<Gvk>,
    pub watches: Vec<Watch>,
    pub indexes: Vec<IndexSpec>,
    /// Replay every cached primary object this often.
    pub resync_period: Option<Duration>,
    /// Parallel reconciles; `None` leaves it to the host.
    pub concurrency: Option<u32>,
    pub writes: Vec<Permission>,
    /// Fields dropped from objects before caching (besides
    /// `metadata.managedFields`).
    pub prune_fields: Vec<PrunedField>,
    /// Kinds whose cached objects keep `metadata.managedFields`.
    pub keep_managed_fields: Vec<Gvk>,
    /// Kinds read as metadata only ([`Manifest::metadata_only`]).
    pub metadata_only: Vec<Gvk>,
}

impl Manifest {
    /// A manifest named `name` reconciling keys of `K`.
    pub fn new<K: Resource>(name: &str) -> Self {
        Self::for_kind(name, gvk_of::<K>())
    }

    /// A manifest named `name` reconciling keys of a kind known only by its [`Gvk`].
    pub fn for_kind(name: &str, primary: Gvk) -> Self {
        Self {
            name: name.to_string(),
            primary,
            primary_label_selector: None,
            owns: Vec::new(),
            watches: Vec::new(),
            indexes: Vec::new(),
            resync_period: None,
            concurrency: None,
            writes: Vec::new(),
            prune_fields: Vec::new(),
            keep_managed_fields: Vec::new(),
            metadata_only: Vec::new(),
        }
    }

    /// Cache (and reconcile) only primary objects matching `selector`.
    pub fn primary_selector(mut self, selector: &str) -> Self {
        self.primary_label_selector = Some(selector.to_string());
        self
    }

    /// Objects of `K` owned by a primary object enqueue their controller owner.
    pub fn owns<K: Resource>(self) -> Self {
        self.owns_kind(gvk_of::<K>())
    }

    pub fn owns_kind(mut self, kind: Gvk) -> Self {
        self.owns.push(kind);
        self
    }

    /// Watch every object of `K`; `mapping` turns a change into primary keys.
    pub fn watches<K: Resource>(self, mapping: KeyMapping) -> Self {
        self.watch(Watch {
            kind: gvk_of::<K>(),
            mapping,
            label_selector: None,
        })
    }

    /// Watch the objects of `K` matching `selector`.
    pub fn watches_selected<K: Resource>(self, mapping: KeyMapping, selector: &str) -> Self {
        self.watch(Watch {
            kind: gvk_of::<K>(),
            mapping,
            label_selector: Some(selector.to_string()),
        })
    }

    pub fn watch(mut self, watch: Watch) -> Self {
        self.watches.push(watch);
        self
    }

    /// Declare the index `name` over cached objects of `K`.
    pub fn index<K: Resource>(self, name: &str, source: IndexSource) -> Self {
        self.index_kind(name, gvk_of::<K>(), source)
    }

    pub fn index_kind(mut self, name: &str, kind: Gvk, source: IndexSource) -> Self {
        self.indexes.push(IndexSpec {
            name: name.to_string(),
            kind,
            source,
        });
        self
    }

    /// Replay every cached primary object every `period`.
    pub fn resync_every(mut self, period: Duration) -> Self {
        self.resync_period = Some(period);
        self
    }

    /// Run up to `n` reconciles in parallel.
    pub fn concurrency(mut self, n: u32) -> Self {
        self.concurrency = Some(n);
        self
    }

    /// Allow `verbs` on `K` (added to any verbs already allowed).
    pub fn writes<K: Resource>(self, verbs: &[Verb]) -> Self {
        self.writes_kind(gvk_of::<K>(), verbs)
    }

    pub fn writes_kind(mut self, kind: Gvk, verbs: &[Verb]) -> Self {
        let index = match self.writes.iter().position(|p| p.kind == kind) {
            Some(index) => index,
            None => {
                self.writes.push(Permission {
                    kind,
                    verbs: Vec::new(),
                });
                self.writes.len() - 1
            }
        };
        let allowed = &mut self.writes[index].verbs;
        for verb in verbs {
            if !allowed.contains(verb) {
                allowed.push(*verb);
            }
        }
        self
    }

    /// Allow recording events ([`Context::event`](crate::Context::event)):
    /// `create` of `events.k8s.io/v1` Events, which is how the host records
    /// them. Without it the host answers `forbidden`.
    pub fn records_events(self) -> Self {
        self.writes_kind(event_kind(), &[Verb::Create])
    }

    /// Drop the dot-separated `path` from objects of `K` before they are
    /// cached (a field the reconciler never reads: `data` of a ConfigMap
    /// it only lists). A cache shared with other guests drops it only
    /// when they all prune it.
    pub fn prune<K: Resource>(self, path: &str) -> Self {
        self.prune_kind(gvk_of::<K>(), path)
    }

    pub fn prune_kind(mut self, kind: Gvk, path: &str) -> Self {
        self.prune_fields.push(PrunedField {
            kind,
            path: path.to_string(),
        });
        self
    }

    /// Keep `metadata.managedFields` in the cached objects of `K`, which
    /// the host drops by default (a reconciler that reads field
    /// ownership). A cache shared with other guests keeps them when any
    /// of them asks; they take memory (the host's benchmarks measure it).
    pub fn keep_managed_fields<K: Resource>(self) -> Self {
        self.keep_managed_fields_of(gvk_of::<K>())
    }

    pub fn keep_managed_fields_of(mut self, kind: Gvk) -> Self {
        if !self.keep_managed_fields.contains(&kind) {
            self.keep_managed_fields.push(kind);
        }
        self
    }

    /// Read `K` as metadata only, as client-go's metadata informers do:
    /// the host lists and watches it as `PartialObjectMetadata`, so its
    /// cached objects hold `metadata` alone and never the rest (a Secret's
    /// data, say), whatever other guests read of the kind. Read them with
    /// [`Context::get_meta`] and [`Context::list_meta`], or untyped:
    /// [`Context::get`] of `K` fails with [`Error::Invalid`] saying so.
    /// Index and prune paths of `K` must lie under `metadata`.
    ///
    /// [`Context::get_meta`]: crate::Context::get_meta
    /// [`Context::list_meta`]: crate::Context::list_meta
    /// [`Context::get`]: crate::Context::get
    pub fn metadata_only<K: Resource>(self) -> Self {
        self.metadata_only_of(gvk_of::<K>())
    }

    pub fn metadata_only_of(mut self, kind: Gvk) -> Self {
        if !self.metadata_only.contains(&kind) {
            self.metadata_only.push(kind);
        }
        self
    }

    /// Whether the manifest allows `verb` on `kind`.
    pub fn allows(&self, kind: &Gvk, verb: Verb) -> bool {
        allows(&self.writes, kind, verb)
    }

    /// Whether the manifest allows recording events ([`Manifest::records_events`]).
    pub fn allows_events(&self) -> bool {
        self.allows(&event_kind(), Verb::Create)
    }

    /// Checks what the host would refuse at load time: an empty name,
    /// selectors that do not parse, index names used twice for one kind,
    /// and `by-index` mappings naming no index of the primary kind.
    pub fn validate(&self) -> Result<()> {
        if self.name.is_empty() {
            return Err(Error::Invalid("the manifest's name is empty".into()));
        }
        let selectors = self.primary_label_selector.iter().chain(
            self.watches
                .iter()
                .filter_map(|w| w.label_selector.as_ref()),
        );
        for selector in selectors {
            Selector::parse(selector)?;
        }
        for (i, index) in self.indexes.iter().enumerate() {
            if index.name.is_empty() {
                return Err(Error::Invalid(format!(
                    "an index over {} has no name",
                    index.kind
                )));
            }
            if self.indexes[..i]
                .iter()
                .any(|other| other.name == index.name && other.kind == index.kind)
            {
                return Err(Error::Invalid(format!(
                    "index {:?} is declared twice for {}",
                    index.name, index.kind
                )));
            }
        }
        for watch in &self.watches {
            if let KeyMapping::ByIndex(name) = &watch.mapping
                && !self
                    .indexes
                    .iter()
                    .any(|i| &i.name == name && i.kind == self.primary)
            {
                return Err(Error::Invalid(format!(
                    "the watch of {} maps by index {name:?}, which is not declared for {}",
                    watch.kind, self.primary
                )));
            }
            if watch.mapping == KeyMapping::Namespace && self.primary != namespace_kind() {
                return Err(Error::Invalid(format!(
                    "the watch of {} maps to the object's namespace, which needs the primary kind v1 Namespace (not {})",
                    watch.kind, self.primary
                )));
            }
        }
        if let Some(index) = self
            .indexes
            .iter()
            .find(|i| i.source == IndexSource::Fields(Vec::new()))
        {
            return Err(Error::Invalid(format!(
                "index {:?} of {} reads no paths",
                index.name, index.kind
            )));
        }
        let read = |kind: &Gvk| {
            *kind == self.primary
                || self.owns.contains(kind)
                || self.watches.iter().any(|w| w.kind == *kind)
        };
        for pruned in &self.prune_fields {
            let path = &pruned.path;
            if !may_prune(path) {
                return Err(Error::Invalid(format!(
                    "prune field {path:?} of {}: only metadata.managedFields may be pruned from metadata",
                    pruned.kind
                )));
            }
            if !read(&pruned.kind) {
                return Err(Error::Invalid(format!(
                    "prune field {path:?} is on {}, which the manifest does not watch",
                    pruned.kind
                )));
            }
        }
        if let Some(kind) = self.keep_managed_fields.iter().find(|k| !read(k)) {
            return Err(Error::Invalid(format!(
                "keeps managedFields of {kind}, which the manifest does not watch"
            )));
        }
        if let Some(kind) = self.metadata_only.iter().find(|k| !read(k)) {
            return Err(Error::Invalid(format!(
                "reads {kind} as metadata only, but the manifest does not watch it"
            )));
        }
        if let Some(beyond) =
            beyond_metadata(&self.metadata_only, &self.indexes, &self.prune_fields)
        {
            return Err(Error::Invalid(beyond.to_string()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};

    use super::*;

    #[test]
    fn the_builder_fills_every_field() {
        let m = Manifest::new::<Deployment>("web")
            .primary_selector("tier=frontend")
            .owns::<ConfigMap>()
            .watches_selected::<Secret>(KeyMapping::ByIndex("secrets".into()), "managed")
            .index::<Deployment>("secrets", IndexSource::Field("spec.secretName".into()))
            .resync_every(Duration::from_secs(60))
            .concurrency(4)
            .writes::<ConfigMap>(&[Verb::Create])
            .writes::<ConfigMap>(&[Verb::Create, Verb::Delete])
            .prune::<ConfigMap>("data");
        assert_eq!(m.name, "web");
        assert_eq!(m.primary, gvk_of::<Deployment>());
        assert_eq!(m.primary_label_selector.as_deref(), Some("tier=frontend"));
        assert_eq!(m.owns, vec![gvk_of::<ConfigMap>()]);
        assert_eq!(
            m.watches,
            vec![Watch {
                kind: gvk_of::<Secret>(),
                mapping: KeyMapping::ByIndex("secrets".into()),
                label_selector: Some("managed".into()),
            }]
        );
        assert_eq!(m.indexes.len(), 1);
        assert_eq!(m.resync_period, Some(Duration::from_secs(60)));
        assert_eq!(m.concurrency, Some(4));
        assert_eq!(
            m.writes,
            vec![Permission {
                kind: gvk_of::<ConfigMap>(),
                verbs: vec![Verb::Create, Verb::Delete],
            }]
        );
        assert_eq!(
            m.prune_fields,
            vec![PrunedField {
                kind: gvk_of::<ConfigMap>(),
                path: "data".into()
            }]
        );
        assert!(m.allows(&gvk_of::<ConfigMap>(), Verb::Delete));
        assert!(!m.allows(&gvk_of::<ConfigMap>(), Verb::Patch));
        assert!(!m.allows(&gvk_of::<Secret>(), Verb::Create));
        assert!(!m.allows_events());
        assert_eq!(m.validate(), Ok(()));
    }

    #[test]
    fn recording_events_is_a_create_of_events_k8s_io_events() {
        let m = Manifest::new::<ConfigMap>("m").records_events();
        assert_eq!(
            m.writes,
            vec![Permission {
                kind: Gvk::new("events.k8s.io", "v1", "Event"),
                verbs: vec![Verb::Create],
            }]
        );
        assert!(m.allows_events());
        assert!(!Manifest::new::<ConfigMap>("m").allows_events());
    }

    #[test]
    fn validate_names_what_the_host_would_refuse() {
        let invalid = |m: Manifest| matches!(m.validate(), Err(Error::Invalid(_)));
        assert!(invalid(Manifest::new::<ConfigMap>("")));
        assert!(invalid(
            Manifest::new::<ConfigMap>("m").primary_selector("a in (")
        ));
        assert!(invalid(
            Manifest::new::<ConfigMap>("m")
                .index::<ConfigMap>("i", IndexSource::OwnerUid)
                .index::<ConfigMap>("i", IndexSource::Label("a".into()))
        ));
        assert!(invalid(
            Manifest::new::<ConfigMap>("m")
                .watches::<Secret>(KeyMapping::ByIndex("missing".into()))
        ));
        assert!(invalid(
            Manifest::new::<ConfigMap>("m")
                .index::<Secret>("by-secret", IndexSource::OwnerUid)
                .watches::<Secret>(KeyMapping::ByIndex("by-secret".into()))
        ));
        assert!(invalid(
            Manifest::new::<ConfigMap>("m").watches::<Secret>(KeyMapping::Namespace)
        ));
        assert!(
            Manifest::new::<Namespace>("m")
                .watches::<Secret>(KeyMapping::Namespace)
                .validate()
                .is_ok()
        );
        assert!(invalid(
            Manifest::new::<ConfigMap>("m").index::<ConfigMap>("i", IndexSource::Fields(vec![]))
        ));
        assert!(invalid(
            Manifest::new::<ConfigMap>("m").prune::<Secret>("data")
        ));
        assert!(invalid(
            Manifest::new::<ConfigMap>("m").prune::<ConfigMap>("metadata.labels")
        ));
        assert!(invalid(
            Manifest::new::<ConfigMap>("m").keep_managed_fields::<Secret>()
        ));
        let kept = Manifest::new::<ConfigMap>("m")
            .keep_managed_fields::<ConfigMap>()
            .keep_managed_fields::<ConfigMap>();
        assert!(kept.validate().is_ok());
        assert_eq!(kept.keep_managed_fields, [gvk_of::<ConfigMap>()]);
    }
}
