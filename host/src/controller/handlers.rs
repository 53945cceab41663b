//! Event handlers that turn changes of watched objects into keys of the
//! guest's primary kind, as its manifest maps them: the object itself
//! (primary), its controller owner (owned kinds), a label, an annotation,
//! its namespace, or a declared index of the primary objects.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::informer::DeltaObject;
use crate::informer::EventHandler;
use crate::informer::Indexer;
use crate::label_selector::LabelSelector;
use crate::object::Object;
use crate::runtime::manifest::KeyMapping;
use recon_api_semantics::Gvk;
use recon_api_semantics::mapping::{self, Watched};

/// Where keys go: the guest's queue.
pub trait KeySink: Send + Sync + 'static {
    /// Queues `key` (`namespace/name` or `name`).
    fn enqueue(&self, key: &str);
}

/// How a watched object maps to primary keys.
pub enum Mapping {
    /// The object is a primary object: its own key.
    Primary,
    /// As the manifest declares; `primary` is the primary kind, and
    /// `primary_caches` the primary objects' indexers, one per namespace
    /// watched (for `ByIndex`).
    Mapped {
        /// The rule.
        mapping: KeyMapping,
        /// The primary kind.
        primary: Gvk,
        /// The indexer name of a `ByIndex` mapping, private to the guest.
        index: Option<String>,
        /// The primary objects' caches.
        primary_caches: Vec<Arc<Indexer>>,
    },
}

impl Mapping {
    /// The primary keys `object` maps to.
    pub fn keys(&self, object: &Object) -> BTreeSet<String> {
        let mut keys = BTreeSet::new();
        match self {
            Mapping::Primary => {
                keys.insert(object.key().to_string());
            }
            Mapping::Mapped {
                mapping,
                primary,
                index,
                primary_caches,
            } => match mapping {
                KeyMapping::ControllerOwner => {
                    keys.extend(mapping::controller_owner_key(primary, object));
                }
                KeyMapping::Label(label) => keys.extend(mapping::label_key(label, object)),
                KeyMapping::Annotation(annotation) => {
                    keys.extend(mapping::annotation_key(annotation, object));
                }
                KeyMapping::Namespace => keys.extend(mapping::namespace_key(object)),
                KeyMapping::ByIndex(_) => {
                    let name = index.as_deref().unwrap_or_default();
                    for primary_cache in primary_caches {
                        if let Ok(found) = primary_cache.index_keys(name, object.name()) {
                            keys.extend(
                                found
                                    .into_iter()
                                    .filter(|key| mapping::index_key_admitted(object, key)),
                            );
                        }
                    }
                }
            },
        }
        keys
    }
}

impl Watched for Object {
    fn namespace(&self) -> &str {
        Object::namespace(self)
    }

    fn name(&self) -> &str {
        Object::name(self)
    }

    fn label(&self, key: &str) -> Option<&str> {
        Object::label(self, key)
    }

    fn annotation(&self, key: &str) -> Option<&str> {
        Object::annotation(self, key)
    }

    fn controller_owner(&self) -> Option<(&str, &str, &str)> {
        self.controller_ref()
            .map(|owner| (owner.api_version, owner.kind, owner.name))
    }
}

/// Enqueues the keys a watched kind's changes map to, for objects that
/// match its label selector (an informer shared with a wider need may
/// deliver others).
pub struct MappingHandler {
    mapping: Mapping,
    selector: LabelSelector,
    sink: Arc<dyn KeySink>,
}

impl MappingHandler {
    /// A handler sending `mapping`'s keys for objects matching `selector`
    /// to `sink`.
    pub fn new(mapping: Mapping, selector: LabelSelector, sink: Arc<dyn KeySink>) -> Self {
        MappingHandler {
            mapping,
            selector,
            sink,
        }
    }

    /// The keys of `object`, none when it does not match the selector.
    fn keys(&self, object: &Object) -> BTreeSet<String> {
        if self.selector.matches(object) {
            self.mapping.keys(object)
        } else {
            BTreeSet::new()
        }
    }

    fn send(&self, keys: BTreeSet<String>) {
        for key in keys {
            self.sink.enqueue(&key);
        }
    }
}

impl EventHandler for MappingHandler {
    fn on_add(&self, object: &Object, _: bool) {
        self.send(self.keys(object));
    }

    /// Both the old and the new state's keys: a changed owner or label
    /// wakes both primaries, as controller-runtime's handlers do.
    fn on_update(&self, old: &Object, new: &Object) {
        let mut keys = self.keys(old);
        keys.extend(self.keys(new));
        self.send(keys);
    }

    fn on_delete(&self, object: &DeltaObject) {
        match (object.object(), &self.mapping) {
            (Some(object), _) => self.send(self.keys(object)),
            (None, Mapping::Primary) => self.sink.enqueue(object.key()),
            (None, Mapping::Mapped { .. }) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use parking_lot::Mutex;

    use super::*;
    use crate::informer::NAMESPACE_INDEX;

    #[derive(Default)]
    struct Keys(Mutex<Vec<String>>);

    impl KeySink for Keys {
        fn enqueue(&self, key: &str) {
            self.0.lock().push(key.to_string());
        }
    }

    fn object(json: &str) -> Object {
        Object::from_json(json).unwrap()
    }

    fn foo() -> Gvk {
        Gvk::new("samplecontroller.k8s.io", "v1alpha1", "Foo")
    }

    fn mapped(mapping: KeyMapping, index: Option<&str>, cache: Arc<Indexer>) -> Mapping {
        Mapping::Mapped {
            mapping,
            primary: foo(),
            index: index.map(str::to_string),
            primary_caches: vec![cache],
        }
    }

    fn deployment(owner: &str) -> Object {
        object(&format!(
            r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"name":"d","namespace":"ns",
            "labels":{{"foo":"f1"}},"annotations":{{"owner":"other/f9","local":"f2"}},
            "ownerReferences":[{owner}]}}}}"#
        ))
    }

    #[test]
    fn controller_owner_maps_to_the_owner_of_the_primary_kind_only() {
        let cache = Arc::new(Indexer::with_namespace_index());
        let m = mapped(KeyMapping::ControllerOwner, None, cache);
        let owned = deployment(
            r#"{"apiVersion":"samplecontroller.k8s.io/v1alpha1","kind":"Foo","name":"f1","uid":"u","controller":true}"#,
        );
        assert_eq!(m.keys(&owned), BTreeSet::from(["ns/f1".to_string()]));
        let not_controller = deployment(
            r#"{"apiVersion":"samplecontroller.k8s.io/v1alpha1","kind":"Foo","name":"f1","uid":"u"}"#,
        );
        assert!(m.keys(&not_controller).is_empty());
        let other_kind = deployment(
            r#"{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"r","uid":"u","controller":true}"#,
        );
        assert!(m.keys(&other_kind).is_empty());
    }

    #[test]
    fn labels_and_annotations_name_the_primary() {
        let cache = Arc::new(Indexer::with_namespace_index());
        let d = deployment(r#"{"apiVersion":"v1","kind":"X","name":"x","uid":"u"}"#);
        let by_label = mapped(KeyMapping::Label("foo".into()), None, Arc::clone(&cache));
        assert_eq!(by_label.keys(&d), BTreeSet::from(["ns/f1".to_string()]));
        let qualified = mapped(
            KeyMapping::Annotation("owner".into()),
            None,
            Arc::clone(&cache),
        );
        assert_eq!(qualified.keys(&d), BTreeSet::from(["other/f9".to_string()]));
        let local = mapped(
            KeyMapping::Annotation("local".into()),
            None,
            Arc::clone(&cache),
        );
        assert_eq!(local.keys(&d), BTreeSet::from(["ns/f2".to_string()]));
        let missing = mapped(KeyMapping::Label("nope".into()), None, cache);
        assert!(missing.keys(&d).is_empty());
    }

    #[test]
    fn an_object_maps_to_its_namespace() {
        let cache = Arc::new(Indexer::with_namespace_index());
        let by_namespace = Mapping::Mapped {
            mapping: KeyMapping::Namespace,
            primary: Gvk::new("", "v1", "Namespace"),
            index: None,
            primary_caches: vec![cache],
        };
        let d = deployment(r#"{"apiVersion":"v1","kind":"X","name":"x","uid":"u"}"#);
        assert_eq!(by_namespace.keys(&d), BTreeSet::from(["ns".to_string()]));
        let node = object(r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}"#);
        assert!(by_namespace.keys(&node).is_empty());
    }

    const BY_SECRET: &str = "g/by-secret";

    /// Foos indexed by `spec.secret`.
    fn foos(foos: &[(&str, &str, &str)]) -> Arc<Indexer> {
        let cache = Arc::new(Indexer::new(vec![
            (
                NAMESPACE_INDEX.to_string(),
                crate::informer::namespace_index_func(),
            ),
            (
                BY_SECRET.to_string(),
                super::super::indexes::index_function(
                    &crate::runtime::manifest::IndexSource::Field("spec.secret".into()),
                ),
            ),
        ]));
        for (ns, name, secret) in foos {
            cache.add(object(&format!(
                r#"{{"apiVersion":"samplecontroller.k8s.io/v1alpha1","kind":"Foo","metadata":{{"name":"{name}","namespace":"{ns}"}},"spec":{{"secret":"{secret}"}}}}"#
            )));
        }
        cache
    }

    fn secret(namespace: &str) -> Object {
        object(&format!(
            r#"{{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"s","namespace":"{namespace}"}}}}"#
        ))
    }

    #[test]
    fn by_index_finds_primaries_in_the_same_namespace() {
        let cache = foos(&[("ns", "a", "s"), ("ns", "b", "t"), ("other", "c", "s")]);
        let m = mapped(
            KeyMapping::ByIndex("by-secret".into()),
            Some(BY_SECRET),
            cache,
        );
        assert_eq!(m.keys(&secret("ns")), BTreeSet::from(["ns/a".to_string()]));
    }

    #[test]
    fn by_index_looks_in_the_primary_cache_of_every_namespace() {
        let m = Mapping::Mapped {
            mapping: KeyMapping::ByIndex("by-secret".into()),
            primary: foo(),
            index: Some(BY_SECRET.to_string()),
            primary_caches: vec![
                foos(&[("ns", "a", "s"), ("ns", "b", "t")]),
                foos(&[("other", "c", "s")]),
            ],
        };
        assert_eq!(m.keys(&secret("ns")), BTreeSet::from(["ns/a".to_string()]));
        assert_eq!(
            m.keys(&secret("other")),
            BTreeSet::from(["other/c".to_string()])
        );
    }

    #[test]
    fn updates_wake_old_and_new_owners_and_deletes_use_the_last_state() {
        let keys = Arc::new(Keys::default());
        let cache = Arc::new(Indexer::with_namespace_index());
        let handler = MappingHandler::new(
            mapped(KeyMapping::Label("foo".into()), None, cache),
            LabelSelector::default(),
            Arc::clone(&keys) as Arc<dyn KeySink>,
        );
        let old = object(
            r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"x","namespace":"ns","labels":{"foo":"a"}}}"#,
        );
        let new = object(
            r#"{"apiVersion":"v1","kind":"X","metadata":{"name":"x","namespace":"ns","labels":{"foo":"b"}}}"#,
        );
        handler.on_update(&old, &new);
        handler.on_delete(&DeltaObject::Object(new.clone()));
        assert_eq!(*keys.0.lock(), ["ns/a", "ns/b", "ns/b"]);

        let primary_keys = Arc::new(Keys::default());
        let primary = MappingHandler::new(
            Mapping::Primary,
            LabelSelector::parse("foo=b").unwrap(),
            Arc::clone(&primary_keys) as Arc<dyn KeySink>,
        );
        primary.on_add(&new, true);
        primary.on_add(&old, true);
        primary.on_update(&old, &new);
        assert_eq!(
            *primary_keys.0.lock(),
            ["ns/x", "ns/x"],
            "objects outside the selector are ignored"
        );
    }
}
