//! How a change of a watched object names the primary objects to
//! reconcile: the rules of a manifest's key mappings, which the host's
//! event handlers apply to its caches and the SDK's `FakeCluster` applies
//! to its store, so a guest's tests see the keys the host would queue.
//!
//! Keys are `namespace/name`, or `name` for a cluster-scoped object
//! ([`object_key`], [`split_key`]). A mapped name is taken to be in the watched object's
//! namespace; an annotation may name another namespace (`namespace/name`).

use crate::Gvk;

/// What the rules read of a watched object.
pub trait Watched {
    /// `metadata.namespace`, empty for a cluster-scoped object.
    fn namespace(&self) -> &str;
    /// `metadata.name`.
    fn name(&self) -> &str;
    /// The value of a label.
    fn label(&self, key: &str) -> Option<&str>;
    /// The value of an annotation.
    fn annotation(&self, key: &str) -> Option<&str>;
    /// The `apiVersion`, `kind` and `name` of the owner reference marked
    /// `controller`.
    fn controller_owner(&self) -> Option<(&str, &str, &str)>;
}

/// The key of the object `name` in `namespace` (empty or none: cluster-scoped).
pub fn object_key(namespace: Option<&str>, name: &str) -> String {
    match namespace.filter(|ns| !ns.is_empty()) {
        Some(namespace) => format!("{namespace}/{name}"),
        None => name.to_string(),
    }
}

/// How two objects' keys order: as their keys' strings ([`object_key`])
/// compare, byte by byte, without joining them. The host hands a guest's
/// reads of several objects over in this order, so `a-b/x` comes before
/// `a/x` (`-` sorts below `/`), where ordering by namespace, then name,
/// would put `a/x` first.
pub fn cmp_keys(a: (Option<&str>, &str), b: (Option<&str>, &str)) -> std::cmp::Ordering {
    fn bytes<'a>((namespace, name): (Option<&'a str>, &'a str)) -> impl Iterator<Item = u8> + 'a {
        let namespace = namespace.filter(|ns| !ns.is_empty());
        namespace
            .into_iter()
            .flat_map(|ns| ns.bytes().chain(std::iter::once(b'/')))
            .chain(name.bytes())
    }
    bytes(a).cmp(bytes(b))
}

/// Splits a key back into `(namespace, name)`: no `/` gives `("", name)`,
/// exactly one gives `(namespace, name)`; more is not a key.
pub fn split_key(key: &str) -> Option<(&str, &str)> {
    let mut parts = key.split('/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(name), None, None) => Some(("", name)),
        (Some(namespace), Some(name), None) => Some((namespace, name)),
        _ => None,
    }
}

/// The primary key an owned object maps to: its controller owner, when
/// that is of the primary kind (any version of its group).
pub fn controller_owner_key(primary: &Gvk, object: &impl Watched) -> Option<String> {
    let (api_version, kind, name) = object.controller_owner()?;
    let owner = Gvk::from_api_version(api_version, kind);
    (owner.group == primary.group && owner.kind == primary.kind)
        .then(|| object_key(Some(object.namespace()), name))
}

/// The primary key a label names: the label's value, in the object's
/// namespace; none when the label is missing or empty.
pub fn label_key(label: &str, object: &impl Watched) -> Option<String> {
    let name = object.label(label).filter(|name| !name.is_empty())?;
    Some(object_key(Some(object.namespace()), name))
}

/// The primary key an annotation names: `namespace/name` as it is, or a
/// name in the object's namespace; none when missing or empty.
pub fn annotation_key(annotation: &str, object: &impl Watched) -> Option<String> {
    let value = object
        .annotation(annotation)
        .filter(|value| !value.is_empty())?;
    Some(if value.contains('/') {
        value.to_string()
    } else {
        object_key(Some(object.namespace()), value)
    })
}

/// The primary key of the object's namespace, as a `v1` `Namespace`
/// (cluster-scoped: its key is its name); none for a cluster-scoped object.
pub fn namespace_key(object: &impl Watched) -> Option<String> {
    let namespace = object.namespace();
    (!namespace.is_empty()).then(|| namespace.to_string())
}

/// Whether a primary key found through an index (whose values are the
/// watched objects' names) may be queued for `object`: a namespaced object
/// names primary objects of its own namespace only; a cluster-scoped one
/// names them in every namespace; and a cluster-scoped primary object (a
/// key without a namespace) is named by objects of any namespace.
pub fn index_key_admitted(object: &impl Watched, key: &str) -> bool {
    object.namespace().is_empty()
        || !key.contains('/')
        || key
            .strip_prefix(object.namespace())
            .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fake {
        namespace: &'static str,
        labels: &'static [(&'static str, &'static str)],
        annotations: &'static [(&'static str, &'static str)],
        owner: Option<(&'static str, &'static str, &'static str)>,
    }

    impl Watched for Fake {
        fn namespace(&self) -> &str {
            self.namespace
        }
        fn name(&self) -> &str {
            "watched"
        }
        fn label(&self, key: &str) -> Option<&str> {
            self.labels.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
        }
        fn annotation(&self, key: &str) -> Option<&str> {
            self.annotations
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| *v)
        }
        fn controller_owner(&self) -> Option<(&str, &str, &str)> {
            self.owner
        }
    }

    const PLAIN: Fake = Fake {
        namespace: "ns",
        labels: &[("app", "web"), ("empty", "")],
        annotations: &[("to", "other/target"), ("local", "target"), ("empty", "")],
        owner: Some(("apps/v1beta1", "Deployment", "web")),
    };

    #[test]
    fn a_namespaced_object_maps_to_its_namespace_a_cluster_scoped_one_to_none() {
        assert_eq!(namespace_key(&PLAIN), Some("ns".into()));
        let node = Fake {
            namespace: "",
            ..PLAIN
        };
        assert_eq!(namespace_key(&node), None);
    }

    #[test]
    fn owners_of_the_primary_kind_in_any_version_map() {
        let deployment = Gvk::new("apps", "v1", "Deployment");
        assert_eq!(
            controller_owner_key(&deployment, &PLAIN),
            Some("ns/web".into())
        );
        let replica_set = Gvk::new("apps", "v1", "ReplicaSet");
        assert_eq!(controller_owner_key(&replica_set, &PLAIN), None);
        let no_owner = Fake {
            owner: None,
            ..PLAIN
        };
        assert_eq!(controller_owner_key(&deployment, &no_owner), None);
    }

    #[test]
    fn labels_and_annotations_name_primary_objects() {
        assert_eq!(label_key("app", &PLAIN), Some("ns/web".into()));
        assert_eq!(label_key("empty", &PLAIN), None);
        assert_eq!(label_key("missing", &PLAIN), None);
        assert_eq!(annotation_key("to", &PLAIN), Some("other/target".into()));
        assert_eq!(annotation_key("local", &PLAIN), Some("ns/target".into()));
        assert_eq!(annotation_key("empty", &PLAIN), None);
        let cluster_scoped = Fake {
            namespace: "",
            ..PLAIN
        };
        assert_eq!(label_key("app", &cluster_scoped), Some("web".into()));
    }

    #[test]
    fn index_keys_stay_in_the_watched_objects_namespace() {
        assert!(index_key_admitted(&PLAIN, "ns/a"));
        assert!(!index_key_admitted(&PLAIN, "ns2/a"));
        assert!(!index_key_admitted(&PLAIN, "nsx/a"));
        assert!(index_key_admitted(&PLAIN, "a-namespace"));
        let cluster_scoped = Fake {
            namespace: "",
            ..PLAIN
        };
        assert!(index_key_admitted(&cluster_scoped, "any/a"));
        assert_eq!(object_key(None, "n"), "n");
        assert_eq!(object_key(Some(""), "n"), "n");
        assert_eq!(object_key(Some("ns"), "n"), "ns/n");
        assert_eq!(split_key("n"), Some(("", "n")));
        assert_eq!(split_key("ns/n"), Some(("ns", "n")));
        assert_eq!(split_key("a/b/c"), None);
    }

    #[test]
    fn keys_order_as_their_strings_not_by_namespace_then_name() {
        use std::cmp::Ordering::*;
        assert_eq!(cmp_keys((Some("a-b"), "x"), (Some("a"), "x")), Less);
        assert_eq!(cmp_keys((Some("a"), "x"), (Some("a"), "y")), Less);
        assert_eq!(cmp_keys((Some(""), "n"), (None, "n")), Equal);
        assert_eq!(cmp_keys((None, "b"), (None, "a")), Greater);
    }

    proptest::proptest! {
        #[test]
        fn keys_order_as_the_joined_keys_do(
            a in (proptest::option::of("[a-c./-]{0,4}"), "[a-c./-]{0,4}"),
            b in (proptest::option::of("[a-c./-]{0,4}"), "[a-c./-]{0,4}"),
        ) {
            let joined = |(ns, name): &(Option<String>, String)| object_key(ns.as_deref(), name);
            proptest::prop_assert_eq!(
                cmp_keys((a.0.as_deref(), &a.1), (b.0.as_deref(), &b.1)),
                joined(&a).cmp(&joined(&b))
            );
        }
    }
}
