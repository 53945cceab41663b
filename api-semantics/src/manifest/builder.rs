//! The builder of a [`Manifest`]: a method per thing a reconciler
//! declares, each naming kinds by [`Gvk`], and with the `k8s-openapi`
//! feature a typed twin naming them by a k8s-openapi type (`owns::<K>()`
//! beside `owns_kind(gvk)`).

use std::time::Duration;

use super::{IndexSource, IndexSpec, Manifest, Permission, PrunedField, Verb, Watch, event_kind};
use crate::Gvk;

impl Manifest {
    /// A manifest named `name` reconciling keys of the kind `primary`.
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

    /// Objects of `kind` owned by a primary object enqueue their
    /// controller owner.
    pub fn owns_kind(mut self, kind: Gvk) -> Self {
        self.owns.push(kind);
        self
    }

    /// Watch the objects of `watch.kind`, mapped to primary keys by
    /// `watch.mapping`.
    pub fn watch(mut self, watch: Watch) -> Self {
        self.watches.push(watch);
        self
    }

    /// Declare the index `name` over cached objects of `kind`.
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

    /// Run up to `n` reconciles in parallel (the host caps it).
    pub fn concurrency(mut self, n: u32) -> Self {
        self.concurrency = Some(n);
        self
    }

    /// Allow `verbs` on `kind` (added to any verbs already allowed).
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

    /// Allow recording events: `create` of `events.k8s.io/v1` Events
    /// ([`event_kind`]), which is how the host records them. Without it
    /// the host answers `forbidden`.
    pub fn records_events(self) -> Self {
        self.writes_kind(event_kind(), &[Verb::Create])
    }

    /// Drop the dot-separated `path` from objects of `kind` before they
    /// are cached (a field the reconciler never reads: `data` of a
    /// ConfigMap it only lists). A cache shared with other guests drops
    /// it only when they all prune it.
    pub fn prune_kind(mut self, kind: Gvk, path: &str) -> Self {
        self.prune_fields.push(PrunedField {
            kind,
            path: path.to_string(),
        });
        self
    }

    /// Keep `metadata.managedFields` in the cached objects of `kind`,
    /// which the host drops by default (a reconciler that reads field
    /// ownership). A cache shared with other guests keeps them when any
    /// of them asks; they take memory (the host's benchmarks measure it).
    pub fn keep_managed_fields_of(mut self, kind: Gvk) -> Self {
        if !self.keep_managed_fields.contains(&kind) {
            self.keep_managed_fields.push(kind);
        }
        self
    }

    /// Read `kind` as metadata only, as client-go's metadata informers do:
    /// the host lists and watches it as `PartialObjectMetadata`, so its
    /// cached objects hold `metadata` alone and never the rest (a
    /// Secret's data, say), whatever other guests read of the kind. Index
    /// and prune paths of the kind must lie under `metadata`. The guest
    /// SDK reads such objects with `Context::get_meta` and
    /// `Context::list_meta`; its untyped `Context::get` of the kind fails
    /// saying so.
    pub fn metadata_only_of(mut self, kind: Gvk) -> Self {
        if !self.metadata_only.contains(&kind) {
            self.metadata_only.push(kind);
        }
        self
    }
}

/// The builder methods that name kinds by their k8s-openapi types.
#[cfg(feature = "k8s-openapi")]
impl Manifest {
    /// A manifest named `name` reconciling keys of `K`.
    pub fn new<K: k8s_openapi::Resource>(name: &str) -> Self {
        Self::for_kind(name, Gvk::of::<K>())
    }

    /// Objects of `K` owned by a primary object enqueue their controller
    /// owner.
    pub fn owns<K: k8s_openapi::Resource>(self) -> Self {
        self.owns_kind(Gvk::of::<K>())
    }

    /// Watch every object of `K`; `mapping` turns a change into primary
    /// keys.
    pub fn watches<K: k8s_openapi::Resource>(self, mapping: super::KeyMapping) -> Self {
        self.watch(Watch {
            kind: Gvk::of::<K>(),
            mapping,
            label_selector: None,
        })
    }

    /// Watch the objects of `K` matching `selector`.
    pub fn watches_selected<K: k8s_openapi::Resource>(
        self,
        mapping: super::KeyMapping,
        selector: &str,
    ) -> Self {
        self.watch(Watch {
            kind: Gvk::of::<K>(),
            mapping,
            label_selector: Some(selector.to_string()),
        })
    }

    /// Declare the index `name` over cached objects of `K`.
    pub fn index<K: k8s_openapi::Resource>(self, name: &str, source: IndexSource) -> Self {
        self.index_kind(name, Gvk::of::<K>(), source)
    }

    /// Allow `verbs` on `K` (added to any verbs already allowed).
    pub fn writes<K: k8s_openapi::Resource>(self, verbs: &[Verb]) -> Self {
        self.writes_kind(Gvk::of::<K>(), verbs)
    }

    /// Drop the dot-separated `path` from objects of `K` before they are
    /// cached ([`Manifest::prune_kind`]).
    pub fn prune<K: k8s_openapi::Resource>(self, path: &str) -> Self {
        self.prune_kind(Gvk::of::<K>(), path)
    }

    /// Keep `metadata.managedFields` in the cached objects of `K`
    /// ([`Manifest::keep_managed_fields_of`]).
    pub fn keep_managed_fields<K: k8s_openapi::Resource>(self) -> Self {
        self.keep_managed_fields_of(Gvk::of::<K>())
    }

    /// Read `K` as metadata only ([`Manifest::metadata_only_of`]).
    pub fn metadata_only<K: k8s_openapi::Resource>(self) -> Self {
        self.metadata_only_of(Gvk::of::<K>())
    }
}
