//! The informers every guest shares: one per (kind, namespace, label
//! selector), however many guests need it. Guests' requirements are
//! gathered first, then each informer is built once with every guest's
//! declared indexes (under names private to each guest) and the fields all
//! of its guests agree to prune.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde_json::Value;

use super::indexes::{index_functions, indexer_name};
use crate::clock::SharedClock;
use crate::informer::lister_watcher::ListerWatcher;
use crate::informer::metrics::ReflectorMetricsProvider;
use crate::informer::object::Object;
use crate::informer::shared_informer::{InformerConfig, SharedInformer};
use crate::kube::Gvk;
use crate::runtime::manifest::{IndexSource, Manifest};

/// What identifies a shared informer.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InformerKey {
    /// The kind.
    pub kind: Gvk,
    /// The namespace watched; `None` for all.
    pub namespace: Option<String>,
    /// The label selector, if any.
    pub label_selector: Option<String>,
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
        Ok(())
    }
}

/// Why guests' requirements cannot be met.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("guest {guest}: {message}")]
pub struct PlanError {
    /// The guest.
    pub guest: String,
    /// What is wrong.
    pub message: String,
}

#[derive(Default)]
struct Planned {
    /// Paths every guest of this informer prunes; `None` until the first.
    prune: Option<BTreeSet<String>>,
    /// Every guest's indexes on this informer, under their indexer names.
    indexes: Vec<(String, IndexSource)>,
}

/// The informers guests need, gathered before any is built.
#[derive(Default)]
pub struct InformerPlan {
    planned: HashMap<InformerKey, Planned>,
    /// Per guest: the informer of each kind it reads.
    views: HashMap<String, HashMap<Gvk, InformerKey>>,
}

impl InformerPlan {
    /// An empty plan.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds what `manifest` needs, every kind watched in `namespace` (all
    /// when `None`). A kind the manifest names more than once with different
    /// label selectors is cached without a selector.
    pub fn add_guest(
        &mut self,
        manifest: &Manifest,
        namespace: Option<&str>,
    ) -> Result<(), PlanError> {
        let error = |message: String| PlanError {
            guest: manifest.name.clone(),
            message,
        };
        if self.views.contains_key(&manifest.name) {
            return Err(error(
                "another guest has the same name; names must be unique".into(),
            ));
        }
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
        let prune: BTreeSet<String> = manifest.prune_fields.iter().cloned().collect();
        let mut view: HashMap<Gvk, InformerKey> = HashMap::new();
        for (kind, selectors) in selectors {
            let label_selector = match selectors.len() {
                1 => selectors.into_iter().next().flatten(),
                _ => None,
            };
            let key = InformerKey {
                kind: kind.clone(),
                namespace: namespace.map(str::to_string),
                label_selector,
            };
            let planned = self.planned.entry(key.clone()).or_default();
            planned.prune = Some(match planned.prune.take() {
                None => prune.clone(),
                Some(agreed) => agreed.intersection(&prune).cloned().collect(),
            });
            for index in manifest.indexes.iter().filter(|i| i.kind == kind) {
                planned.indexes.push((
                    indexer_name(&manifest.name, &index.name),
                    index.source.clone(),
                ));
            }
            view.insert(kind, key);
        }
        self.views.insert(manifest.name.clone(), view);
        Ok(())
    }

    /// Builds every informer, each over the lister-watcher `source` makes
    /// for its key.
    pub fn build(
        self,
        clock: SharedClock,
        metrics: Option<&dyn ReflectorMetricsProvider>,
        mut source: impl FnMut(&InformerKey) -> Arc<dyn ListerWatcher>,
    ) -> InformerSet {
        let mut informers = HashMap::new();
        let mut keys: Vec<_> = self.planned.into_iter().collect();
        keys.sort_by(|a, b| a.0.cmp(&b.0));
        for (key, planned) in keys {
            let prune: Vec<String> = planned.prune.unwrap_or_default().into_iter().collect();
            let name = key.to_string();
            let config = InformerConfig {
                metrics: metrics.map(|provider| provider.reflector_metrics(&name)),
                name,
                transform: Some(prune_transform(prune)),
                indexers: index_functions(planned.indexes),
                clock: clock.clone(),
                ..InformerConfig::default()
            };
            let informer = SharedInformer::new(source(&key), config);
            informers.insert(key, informer);
        }
        InformerSet {
            informers,
            views: self.views,
        }
    }
}

/// Drops `metadata.managedFields` and the `paths` from every object.
fn prune_transform(paths: Vec<String>) -> crate::informer::delta_fifo::TransformFn {
    Arc::new(move |object: Object| {
        let object = object.without_managed_fields();
        if paths.is_empty() {
            return Ok(object);
        }
        let mut value: Value = serde_json::from_str(object.json()).map_err(|e| e.to_string())?;
        let mut changed = false;
        for path in &paths {
            changed |= remove_path(&mut value, path);
        }
        if !changed {
            return Ok(object);
        }
        Object::from_json(&value.to_string()).map_err(|e| e.to_string())
    })
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

/// The built informers and which of them each guest reads.
pub struct InformerSet {
    informers: HashMap<InformerKey, Arc<SharedInformer>>,
    views: HashMap<String, HashMap<Gvk, InformerKey>>,
}

impl InformerSet {
    /// Every informer, in a stable order.
    pub fn all(&self) -> Vec<(&InformerKey, &Arc<SharedInformer>)> {
        let mut all: Vec<_> = self.informers.iter().collect();
        all.sort_by(|a, b| a.0.cmp(b.0));
        all
    }

    /// The informer of each kind `guest` reads.
    pub fn view(&self, guest: &str) -> HashMap<Gvk, Arc<SharedInformer>> {
        self.views
            .get(guest)
            .map(|view| {
                view.iter()
                    .map(|(kind, key)| (kind.clone(), Arc::clone(&self.informers[key])))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// How many informers there are.
    pub fn len(&self) -> usize {
        self.informers.len()
    }

    /// True when no guest needs any informer.
    pub fn is_empty(&self) -> bool {
        self.informers.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::informer::fake_source::FakeSource;
    use crate::runtime::manifest::{IndexSpec, KeyMapping, Watch};

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
            prune_fields: prune.iter().map(|p| p.to_string()).collect(),
        }
    }

    #[test]
    fn guests_share_one_informer_per_kind_namespace_and_selector() {
        let mut plan = InformerPlan::new();
        plan.add_guest(&manifest("a", &["data", "spec.x"]), None)
            .unwrap();
        plan.add_guest(&manifest("b", &["data"]), None).unwrap();
        let mut other = manifest("c", &[]);
        other.watches[0].label_selector = Some("app=y".into());
        plan.add_guest(&other, None).unwrap();
        let mut built = Vec::new();
        let set = plan.build(crate::clock::SystemClock::shared(), None, |key| {
            built.push(key.clone());
            FakeSource::new() as Arc<dyn ListerWatcher>
        });
        // ConfigMap, Deployment, Secret(app=x), Secret(app=y).
        assert_eq!(set.len(), 4);
        assert_eq!(built.len(), 4);
        let a = set.view("a");
        let b = set.view("b");
        let c = set.view("c");
        let secret = Gvk::new("", "v1", "Secret");
        let cm = Gvk::new("", "v1", "ConfigMap");
        assert!(Arc::ptr_eq(&a[&secret], &b[&secret]));
        assert!(!Arc::ptr_eq(&a[&secret], &c[&secret]));
        assert!(Arc::ptr_eq(&a[&cm], &c[&cm]));
        let names = a[&cm].indexer().index_names();
        for guest in ["a", "b", "c"] {
            assert!(names.contains(&indexer_name(guest, "by-app")), "{names:?}");
        }
        assert!(set.view("nobody").is_empty());
    }

    #[test]
    fn duplicate_names_are_refused() {
        let mut plan = InformerPlan::new();
        plan.add_guest(&manifest("a", &[]), None).unwrap();
        let err = plan.add_guest(&manifest("a", &[]), None).unwrap_err();
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
        plan.add_guest(&twice, Some("ns")).unwrap();
        let mut keys = Vec::new();
        let set = plan.build(crate::clock::SystemClock::shared(), None, |key| {
            keys.push(key.clone());
            FakeSource::new() as Arc<dyn ListerWatcher>
        });
        assert_eq!(set.len(), 3);
        assert!(keys.contains(&InformerKey {
            kind: Gvk::new("", "v1", "Secret"),
            namespace: Some("ns".into()),
            label_selector: None,
        }));
    }

    #[test]
    fn pruning_keeps_only_what_every_guest_prunes() {
        let transform = prune_transform(vec!["data".into(), "spec.x".into(), "nope.y".into()]);
        let object = Object::from_json(
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","managedFields":[{}]},"data":{"k":"v"},"spec":{"x":1,"y":2}}"#,
        )
        .unwrap();
        let pruned = transform(object).unwrap();
        let value: Value = serde_json::from_str(pruned.json()).unwrap();
        assert!(value.get("data").is_none());
        assert_eq!(value["spec"], serde_json::json!({"y": 2}));
        assert!(value["metadata"].get("managedFields").is_none());
        assert_eq!(pruned.name(), "a");
    }
}
