//! A guest's view of the shared informers: for each kind it reads, the
//! informers of the namespaces it may act in — one per namespace, or one
//! for every namespace, as controller-runtime's multi-namespace cache keeps
//! them — read as one cache (`get`, `list` and `by-index` answered across
//! them), and those namespaces, which bound its reads, writes and events.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::informer::SharedInformer;
use crate::informer::{IndexError, Indexer, NAMESPACE_INDEX};
use crate::object::Object;
use crate::policy::Namespaces;
use recon_api_semantics::Gvk;

/// The informers of one kind a guest reads.
#[derive(Clone)]
pub struct KindView {
    informers: Vec<Arc<SharedInformer>>,
}

impl KindView {
    /// A view over `informers`, each of other namespaces.
    pub fn new(informers: Vec<Arc<SharedInformer>>) -> Self {
        KindView { informers }
    }

    /// The informers.
    pub fn informers(&self) -> &[Arc<SharedInformer>] {
        &self.informers
    }

    /// The informers' caches.
    pub fn indexers(&self) -> Vec<Arc<Indexer>> {
        self.informers
            .iter()
            .map(|informer| Arc::clone(informer.indexer()))
            .collect()
    }

    /// The object under `key` (`namespace/name` or `name`), if cached.
    pub fn get(&self, key: &str) -> Option<Object> {
        self.informers
            .iter()
            .find_map(|informer| informer.indexer().get_by_key(key))
    }

    /// The objects in `namespace`, or in every namespace watched (`None`),
    /// in no particular order (a guest's import orders what it hands over,
    /// once it knows the answer is not too large).
    pub fn list(&self, namespace: Option<&str>) -> Result<Vec<Object>, IndexError> {
        match namespace {
            Some(namespace) => self.by_index(NAMESPACE_INDEX, namespace),
            None => Ok(merged(
                self.informers
                    .iter()
                    .map(|informer| informer.indexer().list())
                    .collect(),
            )),
        }
    }

    /// The objects whose index `index` holds `value`, in no particular order.
    pub fn by_index(&self, index: &str, value: &str) -> Result<Vec<Object>, IndexError> {
        let mut answers = Vec::with_capacity(self.informers.len());
        for informer in &self.informers {
            answers.push(informer.indexer().by_index(index, value)?);
        }
        Ok(merged(answers))
    }
}

/// The informers' answers as one, an object that several hold (a
/// cluster-scoped kind watched "in" several namespaces) once, in no
/// particular order. One informer's answer is passed on as it is; several
/// are joined in one pass, not sorted: the answer may yet be refused as too
/// large, and ordering it is left to whoever hands it over.
fn merged(mut answers: Vec<Vec<Object>>) -> Vec<Object> {
    if answers.len() == 1 {
        return answers.swap_remove(0);
    }
    let mut objects: Vec<Object> = answers.into_iter().flatten().collect();
    let first: Vec<bool> = {
        let mut seen = HashSet::with_capacity(objects.len());
        objects.iter().map(|o| seen.insert(o.key())).collect()
    };
    let mut first = first.into_iter();
    objects.retain(|_| first.next() == Some(true));
    objects
}

/// What one guest reads, and where it may act.
#[derive(Clone)]
pub struct GuestView {
    namespaces: Namespaces,
    kinds: HashMap<Gvk, KindView>,
}

impl GuestView {
    /// A view of `kinds` for a guest acting in `namespaces`.
    pub fn new(namespaces: Namespaces, kinds: HashMap<Gvk, KindView>) -> Self {
        GuestView { namespaces, kinds }
    }

    /// Where the guest may read, write and record events.
    pub fn namespaces(&self) -> &Namespaces {
        &self.namespaces
    }

    /// The informers of `kind`, if the guest reads it.
    pub fn kind(&self, kind: &Gvk) -> Option<&KindView> {
        self.kinds.get(kind)
    }

    /// Every informer the guest reads.
    pub fn informers(&self) -> impl Iterator<Item = &Arc<SharedInformer>> {
        self.kinds.values().flat_map(KindView::informers)
    }

    /// True once every informer the guest reads has synced.
    pub fn has_synced(&self) -> bool {
        self.informers().all(|informer| informer.has_synced())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::json;

    use super::*;
    use crate::informer::InformerConfig;
    use crate::informer::ListerWatcher;
    use crate::informer::fake_source::FakeSource;

    /// An informer (never run) whose cache holds `objects`.
    fn informer(objects: &[serde_json::Value]) -> Arc<SharedInformer> {
        let informer = SharedInformer::new(
            FakeSource::new() as Arc<dyn ListerWatcher>,
            InformerConfig::default(),
        );
        let cached: Vec<Object> = objects
            .iter()
            .map(|o| Object::from_json(&o.to_string()).unwrap())
            .collect();
        informer.indexer().replace(cached);
        informer
    }

    fn configmap(namespace: &str, name: &str, app: &str) -> serde_json::Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"namespace": namespace, "name": name, "labels": {"app": app}}})
    }

    /// The objects' keys, sorted: the view answers in no particular order.
    fn keys(objects: Vec<Object>) -> Vec<String> {
        let mut keys: Vec<String> = objects.iter().map(|o| o.key().to_string()).collect();
        keys.sort();
        keys
    }

    #[test]
    fn reads_are_answered_across_the_namespaces_informers() {
        let view = KindView::new(vec![
            informer(&[
                configmap("default", "a", "x"),
                configmap("default", "b", "y"),
            ]),
            informer(&[configmap("team-a", "a", "x")]),
        ]);
        assert_eq!(view.get("team-a/a").unwrap().key(), "team-a/a");
        assert_eq!(view.get("default/b").unwrap().key(), "default/b");
        assert!(view.get("kube-system/a").is_none());
        assert_eq!(
            keys(view.list(None).unwrap()),
            ["default/a", "default/b", "team-a/a"]
        );
        assert_eq!(keys(view.list(Some("team-a")).unwrap()), ["team-a/a"]);
        assert!(view.list(Some("kube-system")).unwrap().is_empty());
        assert!(view.by_index("nope", "x").is_err());
    }

    #[test]
    fn an_object_several_informers_hold_is_read_once() {
        let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}});
        // A cluster-scoped kind watched "in" two namespaces: both list it.
        let view = KindView::new(vec![
            informer(std::slice::from_ref(&node)),
            informer(&[node]),
        ]);
        assert_eq!(keys(view.list(None).unwrap()), ["n1"]);
        assert_eq!(view.indexers().len(), 2);
    }

    #[test]
    fn a_guest_view_knows_its_namespaces_and_kinds() {
        let kind = Gvk::new("", "v1", "ConfigMap");
        let namespaces = Namespaces::Only(BTreeSet::from(["default".to_string()]));
        let view = GuestView::new(
            namespaces.clone(),
            HashMap::from([(kind.clone(), KindView::new(vec![informer(&[])]))]),
        );
        assert_eq!(view.namespaces(), &namespaces);
        assert!(view.kind(&kind).is_some());
        assert!(view.kind(&Gvk::new("", "v1", "Secret")).is_none());
        assert!(!view.has_synced(), "nothing has run");
    }
}
