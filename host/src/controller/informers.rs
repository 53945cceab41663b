//! The informers every guest shares: one per (kind, namespace, label
//! selector), however many guests need it. A guest limited to namespaces
//! gets one informer per namespace and kind, one limited to none one per
//! kind for every namespace; a kind known to be cluster-scoped gets one
//! informer, in no namespace, whatever the guest's namespaces. Guests' requirements are gathered first, then
//! each informer is built once with every guest's declared indexes (under
//! names private to each guest) and the fields of its kind that all of its
//! guests agree to prune.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::indexes::{index_functions, indexer_name};
use super::view::{GuestView, KindView};
use crate::clock::SharedClock;
use crate::informer::ListerWatcher;
use crate::informer::{InformerConfig, SharedInformer};
use crate::informer::{Recoveries, ReflectorMetricsProvider};
use crate::kube::DiscoveredListerWatcher;
use crate::kube::Discovery;
use crate::kube::{ApiClient, Gvk};
use crate::object::{Compactor, Object};
use crate::policy::Namespaces;
use crate::runtime::manifest::{IndexSource, Manifest};
use tokio_util::sync::CancellationToken;

/// What identifies a shared informer.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InformerKey {
    /// The kind.
    pub kind: Gvk,
    /// The namespace watched; `None` for all.
    pub namespace: Option<String>,
    /// The label selector, if any.
    pub label_selector: Option<String>,
    /// Listed and watched as `PartialObjectMetadata`: its objects hold
    /// `metadata` alone. Never shared with an informer of whole objects,
    /// so a guest reading a kind as metadata only never sees the rest.
    pub metadata_only: bool,
}

impl std::fmt::Display for InformerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `apps/v1/Deployment`: short enough for logs and metric labels.
        write!(f, "{}/{}", self.kind.api_version(), self.kind.kind)?;
        if let Some(ns) = &self.namespace {
            write!(f, " in {ns}")?;
        }
        if let Some(selector) = &self.label_selector {
            write!(f, " ({selector})")?;
        }
        if self.metadata_only {
            f.write_str(" metadata only")?;
        }
        Ok(())
    }
}

impl InformerKey {
    /// The lister-watcher of this informer over the API server: its kind
    /// resolved through `discovery` on first use, so an informer can start
    /// before its CRD is installed.
    pub fn discovered(
        &self,
        client: &ApiClient,
        discovery: &Arc<Discovery>,
        form: &CacheForm,
    ) -> Arc<dyn ListerWatcher> {
        Arc::new(
            DiscoveredListerWatcher::new(
                client.clone(),
                Arc::clone(discovery),
                self.kind.clone(),
                self.namespace.clone(),
                self.label_selector.clone(),
            )
            .with_pruning(form.prune_managed_fields)
            .with_compactor(form.compactor.clone())
            .with_metadata_only(self.metadata_only),
        )
    }
}

/// Why guests' requirements cannot be met.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// Two guests have the same name, which keys their queues, metrics,
    /// indexes and grants.
    #[error("guest {guest}: another guest has the same name; names must be unique")]
    DuplicateName {
        /// The name.
        guest: String,
    },
}

#[derive(Default)]
struct Planned {
    /// Paths every guest of this informer prunes; `None` until the first.
    prune: Option<BTreeSet<String>>,
    /// Every guest's indexes on this informer, under their indexer names.
    indexes: Vec<(String, IndexSource)>,
    /// The shortest resync period a guest whose primary kind this is asks
    /// for: the informer's resync check period, without which no handler
    /// resyncs (INF-07).
    resync: Option<Duration>,
    /// The guests that read it.
    users: BTreeSet<String>,
}

/// What one guest needs of one informer.
struct Need {
    /// The paths it prunes of the informer's kind.
    prune: BTreeSet<String>,
    /// Its indexes on the informer, under their indexer names.
    indexes: Vec<(String, IndexSource)>,
    /// Its resync period, when this is its primary kind.
    resync: Option<Duration>,
}

/// Which informers one guest reads, and where it may act.
#[derive(Clone)]
struct PlannedView {
    namespaces: Namespaces,
    /// Per kind it reads, the informers of its namespaces.
    kinds: HashMap<Gvk, Vec<InformerKey>>,
}

/// Everything one guest needs: the informers, and its view of them.
struct GuestNeeds {
    informers: BTreeMap<InformerKey, Need>,
    view: PlannedView,
}

/// What `manifest` needs, every kind it reads in each of `namespaces` (a
/// kind of `cluster_scoped` once, in none). A kind the manifest names more
/// than once with different label selectors is cached without a selector.
fn guest_needs(
    manifest: &Manifest,
    namespaces: &Namespaces,
    cluster_scoped: &HashSet<Gvk>,
) -> GuestNeeds {
    let mut needs: Vec<(Gvk, Option<String>)> = vec![(
        manifest.primary.clone(),
        manifest.primary_label_selector.clone(),
    )];
    needs.extend(manifest.owns.iter().map(|kind| (kind.clone(), None)));
    needs.extend(
        manifest
            .watches
            .iter()
            .map(|w| (w.kind.clone(), w.label_selector.clone())),
    );
    // A kind needed with several selectors gets one informer without a
    // selector; the guest's handlers filter by their own selectors.
    let mut selectors: BTreeMap<Gvk, BTreeSet<Option<String>>> = BTreeMap::new();
    for (kind, label_selector) in needs {
        selectors.entry(kind).or_default().insert(label_selector);
    }
    let mut informers = BTreeMap::new();
    let mut kinds: HashMap<Gvk, Vec<InformerKey>> = HashMap::new();
    for (kind, selectors) in selectors {
        let label_selector = match selectors.len() {
            1 => selectors.into_iter().next().flatten(),
            _ => None,
        };
        let watched = if cluster_scoped.contains(&kind) {
            vec![None]
        } else {
            namespaces.watched()
        };
        for namespace in watched {
            let key = InformerKey {
                kind: kind.clone(),
                namespace,
                label_selector: label_selector.clone(),
                metadata_only: manifest.metadata_only.contains(&kind),
            };
            let need = Need {
                // managedFields go unless the guest keeps them: a field
                // like any other it prunes.
                prune: manifest
                    .prune_fields
                    .iter()
                    .filter(|pruned| pruned.kind == kind)
                    .map(|pruned| pruned.path.clone())
                    .chain(
                        (!manifest.keep_managed_fields.contains(&kind))
                            .then(|| MANAGED_FIELDS.to_string()),
                    )
                    .collect(),
                indexes: manifest
                    .indexes
                    .iter()
                    .filter(|i| i.kind == kind)
                    .map(|i| (indexer_name(&manifest.name, &i.name), i.source.clone()))
                    .collect(),
                resync: (kind == manifest.primary)
                    .then_some(manifest.resync_period)
                    .flatten()
                    .filter(|p| !p.is_zero()),
            };
            informers.insert(key.clone(), need);
            kinds.entry(kind.clone()).or_default().push(key);
        }
    }
    GuestNeeds {
        informers,
        view: PlannedView {
            namespaces: namespaces.clone(),
            kinds,
        },
    }
}

/// The informers guests need, gathered before any is built.
#[derive(Default)]
pub struct InformerPlan {
    planned: HashMap<InformerKey, Planned>,
    /// Per guest: the informers of each kind it reads.
    views: HashMap<String, PlannedView>,
    /// Kinds whose objects are in no namespace.
    cluster_scoped: HashSet<Gvk>,
}

impl InformerPlan {
    /// An empty plan, every kind taken to be namespaced.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty plan that knows which kinds are cluster-scoped: each of
    /// them is cached once, not once per namespace a guest acts in (a kind
    /// not known, such as a CRD not installed yet, is taken to be
    /// namespaced).
    pub fn with_cluster_scoped(kinds: HashSet<Gvk>) -> Self {
        InformerPlan {
            cluster_scoped: kinds,
            ..Self::default()
        }
    }

    /// Adds what `manifest` needs, every kind watched in each of
    /// `namespaces`. A kind the manifest names more than once with
    /// different label selectors is cached without a selector.
    pub fn add_guest(
        &mut self,
        manifest: &Manifest,
        namespaces: &Namespaces,
    ) -> Result<(), PlanError> {
        if self.views.contains_key(&manifest.name) {
            return Err(PlanError::DuplicateName {
                guest: manifest.name.clone(),
            });
        }
        let needs = guest_needs(manifest, namespaces, &self.cluster_scoped);
        for (key, need) in needs.informers {
            let planned = self.planned.entry(key).or_default();
            planned.prune = Some(match planned.prune.take() {
                None => need.prune,
                Some(agreed) => agreed.intersection(&need.prune).cloned().collect(),
            });
            if let Some(period) = need.resync {
                planned.resync = Some(planned.resync.map_or(period, |r| r.min(period)));
            }
            planned.indexes.extend(need.indexes);
            planned.users.insert(manifest.name.clone());
        }
        self.views.insert(manifest.name.clone(), needs.view);
        Ok(())
    }

    /// Builds every informer, each over the lister-watcher the `factory`'s
    /// source makes for its key; the informers stop when `stop` fires, or
    /// each once no guest needs it.
    pub fn build(self, factory: InformerFactory, stop: &CancellationToken) -> InformerSet {
        let mut entries = HashMap::new();
        let mut keys: Vec<_> = self.planned.into_iter().collect();
        keys.sort_by(|a, b| a.0.cmp(&b.0));
        for (key, planned) in keys {
            let prune = planned.prune.unwrap_or_default();
            let informer = factory.make(&key, &prune, planned.indexes.clone(), planned.resync);
            entries.insert(
                key,
                Entry {
                    informer,
                    prune,
                    indexes: planned.indexes.into_iter().collect(),
                    users: planned.users,
                    stop: stop.child_token(),
                },
            );
        }
        InformerSet {
            entries,
            views: self.views,
            cluster_scoped: self.cluster_scoped,
            factory,
            stop: stop.clone(),
        }
    }
}

/// The path of the field the caches drop unless a guest keeps it.
pub const MANAGED_FIELDS: &str = "metadata.managedFields";

/// The form of an informer's cached objects, which its lister-watcher
/// gives them as they arrive.
#[derive(Debug, Clone)]
pub struct CacheForm {
    /// Drop `metadata.managedFields` (no guest of the informer keeps them).
    pub prune_managed_fields: bool,
    /// Compress them with the informer's compactor (when compression is on).
    pub compactor: Option<Arc<Compactor>>,
}

/// The lister-watcher of each informer, given the form of its cache.
pub type InformerSource =
    Arc<dyn Fn(&InformerKey, &CacheForm) -> Arc<dyn ListerWatcher> + Send + Sync>;

/// Makes informers: at the start, and for a guest's new version.
#[derive(Clone)]
pub struct InformerFactory {
    /// The informers' time source.
    pub clock: SharedClock,
    /// Exports each informer's reflector metrics, named after it.
    pub metrics: Option<Arc<dyn ReflectorMetricsProvider>>,
    /// Lists and watches for each informer.
    pub source: InformerSource,
    /// Compress each informer's cached objects with a dictionary it
    /// learns from its first objects.
    pub compression: bool,
    /// The API server's recoveries, which end the informers' backoffs.
    pub recoveries: Option<Recoveries>,
}

impl InformerFactory {
    fn make(
        &self,
        key: &InformerKey,
        prune: &BTreeSet<String>,
        indexes: Vec<(String, IndexSource)>,
        resync: Option<Duration>,
    ) -> Arc<SharedInformer> {
        let name = key.to_string();
        let form = CacheForm {
            prune_managed_fields: prune.contains(MANAGED_FIELDS),
            compactor: self.compression.then(|| Arc::new(Compactor::new())),
        };
        let config = InformerConfig {
            metrics: self
                .metrics
                .as_ref()
                .map(|provider| provider.reflector_metrics(&name)),
            name,
            transform: Some(prune_transform(
                prune.iter().cloned().collect(),
                form.compactor.clone(),
            )),
            indexers: index_functions(indexes),
            default_resync_period: resync.unwrap_or(Duration::ZERO),
            clock: self.clock.clone(),
            recoveries: self.recoveries.clone(),
            ..InformerConfig::default()
        };
        SharedInformer::new((self.source)(key, &form), config)
    }
}

/// Drops the `paths` from every object (`metadata.managedFields` among
/// them, unless a guest keeps them), then compresses it with `compactor`
/// (objects the lister-watcher compressed already, and left whole, pass
/// through).
fn prune_transform(
    mut paths: Vec<String>,
    compactor: Option<Arc<Compactor>>,
) -> crate::informer::TransformFn {
    let managed_fields = paths.iter().any(|p| p == MANAGED_FIELDS);
    paths.retain(|p| p != MANAGED_FIELDS);
    Arc::new(move |object: Object| {
        let object = if managed_fields {
            object.without_managed_fields()
        } else {
            object
        };
        let object = pruned(object, &paths)?;
        Ok(match &compactor {
            Some(compactor) => compactor.compact(object),
            None => object,
        })
    })
}

/// `object` without the members at `paths`.
fn pruned(object: Object, paths: &[String]) -> Result<Object, crate::informer::ProcessFailure> {
    if paths.is_empty() {
        return Ok(object);
    }
    let mut value: Value = serde_json::from_str(&object.json()).map_err(|e| e.to_string())?;
    let mut changed = false;
    for path in paths {
        changed |= remove_path(&mut value, path);
    }
    if !changed {
        return Ok(object);
    }
    Ok(Object::from_json(&value.to_string())?)
}

/// Removes the member at a dot-separated path; true when something was.
fn remove_path(value: &mut Value, path: &str) -> bool {
    let (parent, last) = match path.rsplit_once('.') {
        Some((parent, last)) => (Some(parent), last),
        None => (None, path),
    };
    let mut target = value;
    if let Some(parent) = parent {
        for segment in parent.split('.') {
            match target.get_mut(segment) {
                Some(next) => target = next,
                None => return false,
            }
        }
    }
    target
        .as_object_mut()
        .is_some_and(|map| map.remove(last).is_some())
}

/// One running informer and who reads it.
struct Entry {
    informer: Arc<SharedInformer>,
    /// The paths its transform drops.
    prune: BTreeSet<String>,
    /// Its declared indexes by indexer name.
    indexes: HashMap<String, IndexSource>,
    /// The guests that read it.
    users: BTreeSet<String>,
    /// Stops it.
    stop: CancellationToken,
}

/// Why a guest's new version cannot have the informers it needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RewireError {
    /// A cache it keeps reading drops fields the new version reads.
    #[error(
        "the cache {informer} drops {fields}, which the new version no longer prunes; \
         restart the host to cache them"
    )]
    Pruned {
        /// The informer.
        informer: String,
        /// The fields, comma-separated.
        fields: String,
    },
    /// An index keeps its name and changes what it reads.
    #[error("index {index:?} of {informer} reads another source in the new version; rename it")]
    IndexChanged {
        /// The informer.
        informer: String,
        /// The index's name.
        index: String,
    },
}

/// A guest's new version's informers, prepared: those it adds are built
/// (the caller starts them), nothing shared has changed yet.
pub struct Rewiring {
    guest: String,
    needs: GuestNeeds,
    /// The informers it adds, and what stops each.
    added: Vec<(InformerKey, Arc<SharedInformer>, CancellationToken)>,
}

impl Rewiring {
    /// The informers the new version adds, to start, and what stops each.
    pub fn added(
        &self,
    ) -> impl Iterator<Item = (&InformerKey, &Arc<SharedInformer>, &CancellationToken)> {
        self.added
            .iter()
            .map(|(key, informer, stop)| (key, informer, stop))
    }

    /// Stops the informers it added: the new version is not taken.
    pub fn abandon(self) {
        for (_, _, stop) in &self.added {
            stop.cancel();
        }
    }
}

/// The built informers and which of them each guest reads.
pub struct InformerSet {
    entries: HashMap<InformerKey, Entry>,
    views: HashMap<String, PlannedView>,
    cluster_scoped: HashSet<Gvk>,
    factory: InformerFactory,
    /// The parent of every informer's stop.
    stop: CancellationToken,
}

impl InformerSet {
    /// Every informer and what stops it, in a stable order.
    pub fn all(&self) -> Vec<(&InformerKey, &Arc<SharedInformer>, &CancellationToken)> {
        let mut all: Vec<_> = self
            .entries
            .iter()
            .map(|(key, entry)| (key, &entry.informer, &entry.stop))
            .collect();
        all.sort_by(|a, b| a.0.cmp(b.0));
        all
    }

    /// The informers of each kind `guest` reads, and its namespaces; an
    /// empty view, in no namespace, for a guest not planned.
    pub fn view(&self, guest: &str) -> GuestView {
        let Some(view) = self.views.get(guest) else {
            return GuestView::new(Namespaces::Only(BTreeSet::new()), HashMap::new());
        };
        self.view_of(view, &HashMap::new())
    }

    fn view_of(
        &self,
        view: &PlannedView,
        added: &HashMap<&InformerKey, &Arc<SharedInformer>>,
    ) -> GuestView {
        let kinds = view
            .kinds
            .iter()
            .map(|(kind, keys)| {
                let informers = keys
                    .iter()
                    .map(|key| match self.entries.get(key) {
                        Some(entry) => Arc::clone(&entry.informer),
                        None => Arc::clone(added[key]),
                    })
                    .collect();
                (kind.clone(), KindView::new(informers))
            })
            .collect();
        GuestView::new(view.namespaces.clone(), kinds)
    }

    /// How many informers there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no guest needs any informer.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Prepares the informers of `manifest`, a new version of a planned
    /// guest acting in `namespaces`: checks that the informers it keeps
    /// sharing can serve it (they drop no field it reads; its indexes of a
    /// name read what they read) and builds those it adds, with its
    /// indexes and pruned fields, stopped by the set's stop. Nothing
    /// shared changes until [`InformerSet::commit`].
    pub fn prepare(
        &self,
        manifest: &Manifest,
        namespaces: &Namespaces,
    ) -> Result<Rewiring, RewireError> {
        let needs = guest_needs(manifest, namespaces, &self.cluster_scoped);
        for (key, need) in &needs.informers {
            let Some(entry) = self.entries.get(key) else {
                continue;
            };
            let read: Vec<&str> = entry
                .prune
                .difference(&need.prune)
                .map(String::as_str)
                .collect();
            if !read.is_empty() {
                return Err(RewireError::Pruned {
                    informer: key.to_string(),
                    fields: read.join(", "),
                });
            }
            for (name, source) in &need.indexes {
                if entry.indexes.get(name).is_some_and(|had| had != source) {
                    return Err(RewireError::IndexChanged {
                        informer: key.to_string(),
                        index: name.clone(),
                    });
                }
            }
        }
        let added = needs
            .informers
            .iter()
            .filter(|(key, _)| !self.entries.contains_key(*key))
            .map(|(key, need)| {
                let informer =
                    self.factory
                        .make(key, &need.prune, need.indexes.clone(), need.resync);
                (key.clone(), informer, self.stop.child_token())
            })
            .collect();
        Ok(Rewiring {
            guest: manifest.name.clone(),
            needs,
            added,
        })
    }

    /// The view the prepared version will have.
    pub fn prepared_view(&self, rewiring: &Rewiring) -> GuestView {
        let added = rewiring
            .added
            .iter()
            .map(|(key, informer, _)| (key, informer))
            .collect();
        self.view_of(&rewiring.needs.view, &added)
    }

    /// Makes the prepared version's informers the guest's: those it adds
    /// join the set, its new indexes are built on those it keeps, and
    /// those no guest reads any more stop. Answers the keys of the
    /// informers added and of those stopped.
    pub fn commit(&mut self, rewiring: Rewiring) -> (Vec<InformerKey>, Vec<InformerKey>) {
        let Rewiring {
            guest,
            needs,
            added,
        } = rewiring;
        let mut added_keys = Vec::new();
        for (key, informer, stop) in added {
            let need = &needs.informers[&key];
            self.entries.insert(
                key.clone(),
                Entry {
                    informer,
                    prune: need.prune.clone(),
                    indexes: need.indexes.iter().cloned().collect(),
                    users: BTreeSet::new(),
                    stop,
                },
            );
            added_keys.push(key);
        }
        // The guest's indexes that its new version no longer declares stop
        // being computed, on every informer.
        let own = indexer_name(&guest, "");
        for (key, entry) in &mut self.entries {
            let declared = needs.informers.get(key).map(|need| &need.indexes);
            let dropped: Vec<String> = entry
                .indexes
                .keys()
                .filter(|name| name.starts_with(&own))
                .filter(|name| !declared.is_some_and(|d| d.iter().any(|(n, _)| n == *name)))
                .cloned()
                .collect();
            if !dropped.is_empty() {
                entry.informer.indexer().remove_indexers(&dropped);
                entry.indexes.retain(|name, _| !dropped.contains(name));
            }
        }
        for (key, need) in needs.informers {
            let entry = self.entries.get_mut(&key).expect("kept or added");
            let new: Vec<(String, IndexSource)> = need
                .indexes
                .into_iter()
                .filter(|(name, _)| !entry.indexes.contains_key(name))
                .collect();
            if !new.is_empty() {
                // Names were checked free: the guest's own, not yet there.
                if let Err(e) = entry
                    .informer
                    .indexer()
                    .extend_indexers(index_functions(new.clone()))
                {
                    tracing::error!(informer = %key, "index not added: {e}");
                }
                entry.indexes.extend(new);
            }
            entry.users.insert(guest.clone());
        }
        let view = needs.view;
        let mut stopped = Vec::new();
        self.entries.retain(|key, entry| {
            let reads = view
                .kinds
                .get(&key.kind)
                .is_some_and(|keys| keys.contains(key));
            if !reads {
                entry.users.remove(&guest);
            }
            if entry.users.is_empty() {
                entry.stop.cancel();
                stopped.push(key.clone());
                false
            } else {
                true
            }
        });
        self.views.insert(guest, view);
        stopped.sort();
        (added_keys, stopped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::informer::fake_source::FakeSource;
    use crate::runtime::manifest::{IndexSpec, KeyMapping, PrunedField, Watch};

    /// Builds `plan` over fake sources: the set, and the keys built in order.
    fn build(plan: InformerPlan) -> (InformerSet, Vec<InformerKey>) {
        let built = Arc::new(parking_lot::Mutex::new(Vec::new()));
        let seen = Arc::clone(&built);
        let factory = InformerFactory {
            clock: crate::clock::SystemClock::shared(),
            metrics: None,
            recoveries: None,
            source: Arc::new(move |key: &InformerKey, _| {
                seen.lock().push(key.clone());
                FakeSource::new() as Arc<dyn ListerWatcher>
            }),
            compression: true,
        };
        let set = plan.build(factory, &CancellationToken::new());
        let keys = built.lock().clone();
        (set, keys)
    }

    fn manifest(name: &str, prune: &[&str]) -> Manifest {
        Manifest {
            name: name.into(),
            primary: Gvk::new("", "v1", "ConfigMap"),
            primary_label_selector: None,
            owns: vec![Gvk::new("apps", "v1", "Deployment")],
            watches: vec![Watch {
                kind: Gvk::new("", "v1", "Secret"),
                mapping: KeyMapping::Label("owner".into()),
                label_selector: Some("app=x".into()),
            }],
            indexes: vec![IndexSpec {
                name: "by-app".into(),
                kind: Gvk::new("", "v1", "ConfigMap"),
                source: IndexSource::Label("app".into()),
            }],
            resync_period: None,
            concurrency: None,
            writes: vec![],
            prune_fields: prune
                .iter()
                .map(|path| PrunedField {
                    kind: Gvk::new("", "v1", "ConfigMap"),
                    path: path.to_string(),
                })
                .collect(),
            keep_managed_fields: vec![],
            metadata_only: vec![],
        }
    }

    #[test]
    fn guests_share_one_informer_per_kind_namespace_and_selector() {
        let mut plan = InformerPlan::new();
        plan.add_guest(&manifest("a", &["data", "spec.x"]), &Namespaces::All)
            .unwrap();
        plan.add_guest(&manifest("b", &["data"]), &Namespaces::All)
            .unwrap();
        let mut other = manifest("c", &[]);
        other.watches[0].label_selector = Some("app=y".into());
        plan.add_guest(&other, &Namespaces::All).unwrap();
        let (set, built) = build(plan);
        // ConfigMap, Deployment, Secret(app=x), Secret(app=y).
        assert_eq!(set.len(), 4);
        assert_eq!(built.len(), 4);
        let a = set.view("a");
        let b = set.view("b");
        let c = set.view("c");
        let secret = Gvk::new("", "v1", "Secret");
        let cm = Gvk::new("", "v1", "ConfigMap");
        let only = |view: &GuestView, kind: &Gvk| {
            let informers = view.kind(kind).unwrap().informers();
            assert_eq!(informers.len(), 1, "one informer for every namespace");
            Arc::clone(&informers[0])
        };
        assert!(Arc::ptr_eq(&only(&a, &secret), &only(&b, &secret)));
        assert!(!Arc::ptr_eq(&only(&a, &secret), &only(&c, &secret)));
        assert!(Arc::ptr_eq(&only(&a, &cm), &only(&c, &cm)));
        let names = only(&a, &cm).indexer().index_names();
        for guest in ["a", "b", "c"] {
            assert!(names.contains(&indexer_name(guest, "by-app")), "{names:?}");
        }
        let nobody = set.view("nobody");
        assert!(nobody.kind(&cm).is_none() && nobody.namespaces().is_empty());
    }

    #[test]
    fn a_kind_read_as_metadata_only_has_informers_of_its_own() {
        let secret = Gvk::new("", "v1", "Secret");
        let mut plan = InformerPlan::new();
        let mut names_only = manifest("names", &[]);
        names_only.metadata_only = vec![secret.clone()];
        plan.add_guest(&names_only, &Namespaces::All).unwrap();
        plan.add_guest(&manifest("whole", &[]), &Namespaces::All)
            .unwrap();
        let mut also_names = manifest("also", &[]);
        also_names.metadata_only = vec![secret.clone()];
        plan.add_guest(&also_names, &Namespaces::All).unwrap();
        let (set, keys) = build(plan);
        let mut secrets: Vec<String> = keys
            .iter()
            .filter(|key| key.kind == secret)
            .map(ToString::to_string)
            .collect();
        secrets.sort();
        assert_eq!(
            secrets,
            ["v1/Secret (app=x)", "v1/Secret (app=x) metadata only"]
        );
        let informer =
            |guest: &str| Arc::clone(&set.view(guest).kind(&secret).unwrap().informers()[0]);
        assert!(Arc::ptr_eq(&informer("names"), &informer("also")));
        assert!(!Arc::ptr_eq(&informer("names"), &informer("whole")));
    }

    #[test]
    fn a_guest_limited_to_namespaces_reads_one_informer_per_namespace_and_kind() {
        let namespaces =
            |names: &[&str]| Namespaces::Only(names.iter().map(|n| n.to_string()).collect());
        let mut plan = InformerPlan::new();
        plan.add_guest(&manifest("a", &[]), &namespaces(&["default", "team-a"]))
            .unwrap();
        plan.add_guest(&manifest("b", &[]), &namespaces(&["team-a"]))
            .unwrap();
        plan.add_guest(&manifest("c", &[]), &Namespaces::All)
            .unwrap();
        let (set, keys) = build(plan);
        // Three kinds in default, in team-a, and in every namespace.
        assert_eq!(set.len(), 9);
        let cm = Gvk::new("", "v1", "ConfigMap");
        assert!(keys.contains(&InformerKey {
            kind: cm.clone(),
            namespace: Some("team-a".into()),
            label_selector: None,
            metadata_only: false,
        }));
        let (a, b, c) = (set.view("a"), set.view("b"), set.view("c"));
        assert_eq!(a.namespaces(), &namespaces(&["default", "team-a"]));
        assert_eq!(a.kind(&cm).unwrap().informers().len(), 2);
        assert_eq!(c.kind(&cm).unwrap().informers().len(), 1);
        // b's team-a informer is a's.
        let b_informer = &b.kind(&cm).unwrap().informers()[0];
        assert!(
            a.kind(&cm)
                .unwrap()
                .informers()
                .iter()
                .any(|i| Arc::ptr_eq(i, b_informer))
        );
        assert!(
            !c.kind(&cm)
                .unwrap()
                .informers()
                .iter()
                .any(|i| Arc::ptr_eq(i, b_informer))
        );
    }

    /// INF-07: the informer of a guest's primary kind resyncs as often as
    /// the most eager of its guests asks; kinds no guest resyncs do not.
    #[test]
    fn a_primary_kind_s_informer_resyncs_as_its_guests_ask() {
        let mut plan = InformerPlan::new();
        let mut a = manifest("a", &[]);
        a.resync_period = Some(Duration::from_secs(900));
        let mut b = manifest("b", &[]);
        b.resync_period = Some(Duration::from_secs(600));
        for guest in [a, b, manifest("c", &[])] {
            plan.add_guest(&guest, &Namespaces::All).unwrap();
        }
        let (set, _) = build(plan);
        let view = set.view("a");
        let check = |kind: Gvk| view.kind(&kind).unwrap().informers()[0].resync_check_period();
        assert_eq!(
            check(Gvk::new("", "v1", "ConfigMap")),
            Duration::from_secs(600)
        );
        assert_eq!(check(Gvk::new("apps", "v1", "Deployment")), Duration::ZERO);
    }

    #[test]
    fn a_cluster_scoped_kind_is_cached_once_whatever_the_namespaces() {
        let namespace = Gvk::new("", "v1", "Namespace");
        let mut guest = manifest("a", &[]);
        guest.watches[0].kind = namespace.clone();
        guest.watches[0].label_selector = None;
        let mut plan = InformerPlan::with_cluster_scoped(HashSet::from([namespace.clone()]));
        let namespaces = Namespaces::Only(BTreeSet::from(["x".to_string(), "y".to_string()]));
        plan.add_guest(&guest, &namespaces).unwrap();
        let (set, keys) = build(plan);
        let mut keys: Vec<String> = keys.iter().map(ToString::to_string).collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "apps/v1/Deployment in x",
                "apps/v1/Deployment in y",
                "v1/ConfigMap in x",
                "v1/ConfigMap in y",
                "v1/Namespace",
            ]
        );
        assert_eq!(set.view("a").kind(&namespace).unwrap().informers().len(), 1);
    }

    #[test]
    fn duplicate_names_are_refused() {
        let mut plan = InformerPlan::new();
        plan.add_guest(&manifest("a", &[]), &Namespaces::All)
            .unwrap();
        let err = plan
            .add_guest(&manifest("a", &[]), &Namespaces::All)
            .unwrap_err();
        assert!(err.to_string().contains("same name"), "{err}");
    }

    #[test]
    fn a_kind_needed_with_several_selectors_is_cached_without_one() {
        let mut twice = manifest("t", &[]);
        twice.watches.push(Watch {
            kind: Gvk::new("", "v1", "Secret"),
            mapping: KeyMapping::Label("x".into()),
            label_selector: Some("other".into()),
        });
        let mut plan = InformerPlan::new();
        plan.add_guest(
            &twice,
            &Namespaces::Only(BTreeSet::from(["ns".to_string()])),
        )
        .unwrap();
        let (set, keys) = build(plan);
        assert_eq!(set.len(), 3);
        assert!(keys.contains(&InformerKey {
            kind: Gvk::new("", "v1", "Secret"),
            namespace: Some("ns".into()),
            label_selector: None,
            metadata_only: false,
        }));
    }

    #[test]
    fn a_kind_s_informer_prunes_what_every_guest_prunes_of_that_kind() {
        let mut plan = InformerPlan::new();
        plan.add_guest(&manifest("a", &["data", "spec.x"]), &Namespaces::All)
            .unwrap();
        plan.add_guest(&manifest("b", &["data"]), &Namespaces::All)
            .unwrap();
        let pruned = |plan: &InformerPlan, kind: Gvk, selector: Option<&str>| {
            let key = InformerKey {
                kind,
                namespace: None,
                label_selector: selector.map(str::to_string),
                metadata_only: false,
            };
            plan.planned[&key].prune.clone().unwrap()
        };
        let managed = || MANAGED_FIELDS.to_string();
        assert_eq!(
            pruned(&plan, Gvk::new("", "v1", "ConfigMap"), None),
            BTreeSet::from(["data".to_string(), managed()])
        );
        // The guests prune ConfigMaps only: their Deployments and Secrets
        // are cached whole but for their managedFields.
        assert_eq!(
            pruned(&plan, Gvk::new("apps", "v1", "Deployment"), None),
            BTreeSet::from([managed()])
        );
        assert_eq!(
            pruned(&plan, Gvk::new("", "v1", "Secret"), Some("app=x")),
            BTreeSet::from([managed()])
        );
        // A third guest keeps the Deployments' managedFields: the shared
        // cache keeps them, and still drops the ConfigMaps'.
        let mut keeper = manifest("c", &["data"]);
        keeper.keep_managed_fields = vec![Gvk::new("apps", "v1", "Deployment")];
        plan.add_guest(&keeper, &Namespaces::All).unwrap();
        assert!(pruned(&plan, Gvk::new("apps", "v1", "Deployment"), None).is_empty());
        assert_eq!(
            pruned(&plan, Gvk::new("", "v1", "ConfigMap"), None),
            BTreeSet::from(["data".to_string(), managed()])
        );
    }

    #[test]
    fn a_new_version_adds_informers_and_indexes_and_releases_what_it_drops() {
        let mut plan = InformerPlan::new();
        plan.add_guest(&manifest("a", &["data"]), &Namespaces::All)
            .unwrap();
        plan.add_guest(&manifest("b", &["data"]), &Namespaces::All)
            .unwrap();
        let (mut set, _) = build(plan);
        let configmaps = InformerKey {
            kind: Gvk::new("", "v1", "ConfigMap"),
            namespace: None,
            label_selector: None,
            metadata_only: false,
        };
        let deployments = InformerKey {
            kind: Gvk::new("apps", "v1", "Deployment"),
            ..configmaps.clone()
        };
        let configmap_informer = |set: &InformerSet| {
            Arc::clone(&set.view("a").kind(&configmaps.kind).unwrap().informers()[0])
        };
        let kept = configmap_informer(&set);
        // a's next version: Pods instead of Deployments, one more index.
        let mut next = manifest("a", &["data", "spec"]);
        next.owns = vec![Gvk::new("", "v1", "Pod")];
        next.indexes.push(IndexSpec {
            name: "by-team".into(),
            kind: configmaps.kind.clone(),
            source: IndexSource::Label("team".into()),
        });
        let rewiring = set.prepare(&next, &Namespaces::All).unwrap();
        let added: Vec<String> = rewiring.added().map(|(key, ..)| key.to_string()).collect();
        assert_eq!(added, ["v1/Pod"]);
        let view = set.prepared_view(&rewiring);
        assert!(view.kind(&Gvk::new("", "v1", "Pod")).is_some());
        let (started, stopped) = set.commit(rewiring);
        assert_eq!(started.len(), 1);
        assert!(stopped.is_empty(), "b still reads Deployments");
        assert!(Arc::ptr_eq(&configmap_informer(&set), &kept), "kept warm");
        assert!(
            kept.indexer()
                .index_names()
                .contains(&indexer_name("a", "by-team"))
        );
        assert!(set.view("a").kind(&deployments.kind).is_none());
        // b's next version drops Deployments too: nobody reads them.
        let mut next_b = manifest("b", &["data"]);
        next_b.owns.clear();
        let rewiring = set.prepare(&next_b, &Namespaces::All).unwrap();
        let stop = set.entries[&deployments].stop.clone();
        let (_, stopped) = set.commit(rewiring);
        assert_eq!(stopped, [deployments]);
        assert!(stop.is_cancelled());
        assert_eq!(set.len(), 3, "ConfigMap, Secret and Pod");
        // a's third version drops its first index: no longer computed; b's
        // index of the same name and a's other one stay.
        let mut third = next.clone();
        third.indexes.retain(|index| index.name != "by-app");
        let rewiring = set.prepare(&third, &Namespaces::All).unwrap();
        set.commit(rewiring);
        let mut names = kept.indexer().index_names();
        names.sort();
        assert_eq!(
            names,
            [
                indexer_name("a", "by-team"),
                indexer_name("b", "by-app"),
                crate::informer::NAMESPACE_INDEX.to_string(),
            ]
        );
        assert_eq!(
            set.entries[&configmaps].indexes.len(),
            2,
            "{:?}",
            set.entries[&configmaps].indexes
        );
    }

    #[test]
    fn a_new_version_cannot_read_what_a_kept_cache_drops_or_change_an_index() {
        let mut plan = InformerPlan::new();
        plan.add_guest(&manifest("a", &["data"]), &Namespaces::All)
            .unwrap();
        let (set, _) = build(plan);
        let refused = set
            .prepare(&manifest("a", &[]), &Namespaces::All)
            .err()
            .unwrap();
        assert_eq!(
            refused.to_string(),
            "the cache v1/ConfigMap drops data, which the new version no longer prunes; \
             restart the host to cache them"
        );
        let mut changed = manifest("a", &["data"]);
        changed.indexes[0].source = IndexSource::Label("other".into());
        let refused = set.prepare(&changed, &Namespaces::All).err().unwrap();
        assert!(
            matches!(&refused, RewireError::IndexChanged { index, .. } if index == "a/by-app"),
            "{refused}"
        );
        // Pruning more than the cache does is fine: the guest sees more.
        let more = set
            .prepare(&manifest("a", &["data", "spec"]), &Namespaces::All)
            .unwrap();
        assert_eq!(more.added().count(), 0);
        more.abandon();
    }

    #[test]
    fn pruning_keeps_only_what_every_guest_prunes() {
        let transform = prune_transform(
            vec![
                "data".into(),
                "spec.x".into(),
                "nope.y".into(),
                MANAGED_FIELDS.into(),
            ],
            None,
        );
        let object = Object::from_json(
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","managedFields":[{}]},"data":{"k":"v"},"spec":{"x":1,"y":2}}"#,
        )
        .unwrap();
        let pruned = transform(object).unwrap();
        let value: Value = serde_json::from_str(&pruned.json()).unwrap();
        assert!(value.get("data").is_none());
        assert_eq!(value["spec"], serde_json::json!({"y": 2}));
        assert!(value["metadata"].get("managedFields").is_none());
        assert_eq!(pruned.name(), "a");

        // Without managedFields among the paths, a guest keeps them.
        let kept = prune_transform(vec!["data".into()], None)(
            Object::from_json(
                r#"{"metadata":{"name":"a","managedFields":[{"manager":"m"}]},"data":{"k":"v"}}"#,
            )
            .unwrap(),
        )
        .unwrap();
        assert!(kept.has_managed_fields());
        assert!(!kept.json().contains(r#""data""#));
    }

    #[test]
    fn the_transform_compresses_what_it_pruned() {
        let config_map = |i: usize| {
            Object::from_json(&format!(
                r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"c{i}","namespace":"default","labels":{{"app":"web"}}}},"data":{{"settings.yaml":"replicas: 3\nimage: registry.example.com/web:1.2.{i}\nlog: debug\n"}},"spec":{{"x":{i},"y":"a long value every config map of this kind shares"}}}}"#
            ))
            .unwrap()
        };
        let compactor = Arc::new(Compactor::new());
        let transform = prune_transform(vec!["spec.x".into()], Some(Arc::clone(&compactor)));
        let mut last = None;
        for i in 0..crate::object::compression::SAMPLES + 1 {
            last = Some(transform(config_map(i)).unwrap());
        }
        let last = last.unwrap();
        assert!(
            last.is_compressed(),
            "compressed once the dictionary is trained"
        );
        let value: Value = serde_json::from_str(&last.json()).unwrap();
        assert_eq!(
            value["spec"],
            serde_json::json!({"y": "a long value every config map of this kind shares"})
        );
        assert_eq!(last.label("app"), Some("web"));
        // An object compressed as it arrived is pruned and compressed again.
        let packed = compactor.compact(config_map(900));
        assert!(packed.is_compressed());
        let again = transform(packed).unwrap();
        assert!(again.is_compressed());
        assert!(!again.json().contains("\"x\""));
    }
}
