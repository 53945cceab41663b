//! Tests of the indexer: every IDX rule by id, KEY-08 identity, a model-based
//! property test and a readers-with-writers concurrency test.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

fn object(v: Value) -> Object {
    Object::from_json(&v.to_string()).unwrap()
}

fn pod(ns: &str, name: &str, rv: &str, labels: Value) -> Object {
    object(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"namespace": ns, "name": name, "resourceVersion": rv, "labels": labels},
    }))
}

fn users_pod(name: &str, users: &str) -> Object {
    object(
        json!({"metadata": {"namespace": "default", "name": name, "annotations": {"users": users}}}),
    )
}

/// The "byUser" index of IDX-20: the `users` annotation split on ",".
fn by_user() -> IndexFunc {
    index_func(|obj| {
        Ok(obj
            .annotation("users")
            .map(|u| u.split(',').map(Cow::Borrowed).collect())
            .unwrap_or_default())
    })
}

/// An index on one label's value.
fn label_index(label: &'static str) -> IndexFunc {
    index_func(move |obj| Ok(obj.label(label).map(Cow::Borrowed).into_iter().collect()))
}

/// An index on the "_"-separated parts of the `tags` label (many values).
fn tags_index() -> IndexFunc {
    index_func(|obj| {
        Ok(obj
            .label("tags")
            .map(|t| t.split('_').map(Cow::Borrowed).collect())
            .unwrap_or_default())
    })
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

fn names(objs: Vec<Object>) -> Vec<String> {
    sorted(objs.iter().map(|o| o.name().to_owned()).collect())
}

fn store() -> Indexer {
    Indexer::new(vec![
        (NAMESPACE_INDEX.to_owned(), namespace_index_func()),
        ("app".to_owned(), label_index("app")),
        ("tags".to_owned(), tags_index()),
    ])
}

// IDX-20: the worked example; values are used verbatim.
#[test]
fn idx_20_by_user_worked_example() {
    let store = Indexer::new(vec![("byUser".to_owned(), by_user())]);
    store.add(users_pod("one", "ernie,bert"));
    store.add(users_pod("two", "bert,oscar"));
    store.add(users_pod("three", "ernie, telsa"));
    assert_eq!(
        names(store.by_index("byUser", "ernie").unwrap()),
        ["one", "three"]
    );
    assert_eq!(
        names(store.by_index("byUser", "bert").unwrap()),
        ["one", "two"]
    );
    assert_eq!(
        names(store.by_index("byUser", " telsa").unwrap()),
        ["three"]
    );
    assert!(store.by_index("byUser", "telsa").unwrap().is_empty());
}

// IDX-20: S3's variant.
#[test]
fn idx_20_s3_variant() {
    let store = Indexer::new(vec![("byUser".to_owned(), by_user())]);
    store.add(users_pod("one", "user1"));
    store.add(users_pod("two", "user2"));
    store.add(users_pod("three", "user2"));
    assert_eq!(names(store.by_index("byUser", "user1").unwrap()), ["one"]);
    assert_eq!(
        names(store.by_index("byUser", "user2").unwrap()),
        ["three", "two"]
    );
}

// IDX-05: add is update; both return the previous object.
#[test]
fn idx_05_add_is_update() {
    let store = store();
    let v1 = pod("ns", "a", "1", json!({"app": "x"}));
    let v2 = pod("ns", "a", "2", json!({"app": "x"}));
    let v3 = pod("ns", "a", "3", json!({"app": "y"}));
    assert_eq!(store.add(v1.clone()), None);
    assert_eq!(store.add(v2.clone()), Some(v1));
    assert_eq!(store.update(v3.clone()), Some(v2));
    assert_eq!(store.len(), 1);
    assert_eq!(store.get_by_key("ns/a"), Some(v3.clone()));
    assert_eq!(store.by_index("app", "y").unwrap(), [v3]);
    assert!(store.by_index("app", "x").unwrap().is_empty());
    let fresh = store.update(pod("ns", "b", "1", json!({})));
    assert_eq!(fresh, None, "update of a missing key inserts, like add");
    assert_eq!(store.len(), 2);
}

// IDX-06: delete removes from the store and every index; missing is a no-op.
#[test]
fn idx_06_delete() {
    let store = store();
    let a = pod("ns", "a", "1", json!({"app": "x", "tags": "p_q"}));
    store.add(a.clone());
    assert_eq!(store.delete("ns/missing"), None);
    assert_eq!(store.delete("ns/a"), Some(a));
    assert_eq!(store.delete("ns/a"), None);
    assert!(store.is_empty());
    for index in [NAMESPACE_INDEX, "app", "tags"] {
        assert!(store.list_index_func_values(index).is_empty(), "{index}");
    }
}

// IDX-07: readers share the lock. Two `index` calls run their index function
// under the read lock and each waits for the other to be inside it; with an
// exclusive lock the first would wait alone until its timeout.
#[test]
fn idx_07_readers_run_in_parallel() {
    let state = Arc::new((Mutex::new((0, 0)), Condvar::new()));
    let gate = state.clone();
    let rendezvous = index_func(move |_| {
        let (lock, cv) = &*gate;
        let mut guard = lock.lock().unwrap();
        guard.0 += 1;
        cv.notify_all();
        let (mut guard, wait) = cv
            .wait_timeout_while(guard, Duration::from_secs(5), |(inside, _)| *inside < 2)
            .unwrap();
        if !wait.timed_out() {
            guard.1 += 1;
        }
        Ok(vec![])
    });
    let store = Indexer::new(vec![("rendezvous".to_owned(), rendezvous)]);
    let probe = pod("ns", "a", "1", json!({}));
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| store.index("rendezvous", &probe).unwrap());
        }
    });
    assert_eq!(*state.0.lock().unwrap(), (2, 2), "both readers met inside");
}

// IDX-08: an index function error is a fatal invariant failure naming the
// key and the index.
#[test]
#[should_panic(expected = "index function \"failing\" failed for object \"ns/bad\"")]
fn idx_08_index_function_error_panics() {
    let failing = index_func(|obj| {
        if obj.name() == "bad" {
            Err(IndexError::Func("no value".to_owned()))
        } else {
            Ok(vec![])
        }
    });
    let store = Indexer::new(vec![("failing".to_owned(), failing)]);
    store.add(pod("ns", "good", "1", json!({})));
    store.add(pod("ns", "bad", "1", json!({})));
}

// IDX-08: the panic happens before any change, so the store stays consistent.
#[test]
fn idx_08_panic_leaves_store_unchanged() {
    let failing = index_func(|obj| match obj.label("fail") {
        Some(_) => Err(IndexError::Func("refused".to_owned())),
        None => Ok(vec![Cow::Borrowed(obj.namespace())]),
    });
    let store = Indexer::new(vec![("f".to_owned(), failing)]);
    let good = pod("ns", "a", "1", json!({}));
    store.add(good.clone());
    let add = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        store.add(pod("ns", "a", "2", json!({"fail": "1"})));
    }));
    assert!(add.is_err());
    let replace = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        store.replace(vec![pod("ns", "b", "2", json!({"fail": "1"}))]);
    }));
    assert!(replace.is_err());
    assert_eq!(store.list(), std::slice::from_ref(&good));
    assert_eq!(store.by_index("f", "ns").unwrap(), [good]);
}

// IDX-09: indices exist from registration but hold nothing until values
// appear; a registered, empty index answers queries without error.
#[test]
fn idx_09_indices_start_empty() {
    let store = store();
    assert!(store.list_index_func_values("app").is_empty());
    assert!(store.by_index("app", "x").unwrap().is_empty());
    assert!(store.index_keys("app", "x").unwrap().is_empty());
    store.add(pod("ns", "a", "1", json!({"app": "x"})));
    assert_eq!(store.list_index_func_values("app"), ["x"]);
}

// IDX-10, IDX-11: after an update the index holds exactly the new values,
// emptied values disappear, and unchanged values point at the new object.
#[test]
fn idx_10_11_index_update_rule() {
    let store = store();
    let steps = [
        ("a_b", vec!["a", "b"]),
        ("a", vec!["a"]),
        ("a", vec!["a"]),
        ("b_c_c", vec!["b", "c"]),
        ("c_d", vec!["c", "d"]),
        ("", vec![""]),
    ];
    for (rv, (tags, want)) in steps.iter().enumerate() {
        let obj = pod("ns", "x", &rv.to_string(), json!({"tags": tags}));
        store.update(obj.clone());
        assert_eq!(
            sorted(store.list_index_func_values("tags")),
            *want,
            "{tags}"
        );
        for value in want {
            assert_eq!(
                store.by_index("tags", value).unwrap(),
                std::slice::from_ref(&obj)
            );
        }
    }
    store.update(pod("ns", "x", "9", json!({})));
    assert!(store.list_index_func_values("tags").is_empty());
}

// IDX-10: updating an object whose value did not change replaces the object
// in the index, so no old version stays alive there.
#[test]
fn idx_10_unchanged_value_holds_current_object() {
    let store = store();
    let old = pod("ns", "a", "1", json!({"app": "x"}));
    store.add(old.clone());
    let new = pod("ns", "a", "2", json!({"app": "x"}));
    store.update(new.clone());
    assert_eq!(
        store.by_index("app", "x").unwrap()[0].resource_version(),
        "2"
    );
    assert_eq!(store.by_index(NAMESPACE_INDEX, "ns").unwrap(), [new]);
}

// IDX-12: `index` returns every object whose values overlap, once each.
#[test]
fn idx_12_index_overlap() {
    let store = store();
    store.add(pod("ns", "ab", "1", json!({"tags": "a_b"})));
    store.add(pod("ns", "bc", "1", json!({"tags": "b_c"})));
    store.add(pod("ns", "d", "1", json!({"tags": "d"})));
    store.add(pod("ns", "none", "1", json!({})));
    let probe = pod("other", "p", "1", json!({"tags": "a_c_z"}));
    assert_eq!(names(store.index("tags", &probe).unwrap()), ["ab", "bc"]);
    let single = pod("other", "p", "1", json!({"tags": "b"}));
    assert_eq!(names(store.index("tags", &single).unwrap()), ["ab", "bc"]);
    let probe_ns = pod("ns", "p", "1", json!({}));
    assert_eq!(store.index(NAMESPACE_INDEX, &probe_ns).unwrap().len(), 4);
    let failing = Indexer::new(vec![(
        "f".to_owned(),
        index_func(|_| Err(IndexError::Func("nope".to_owned()))),
    )]);
    assert_eq!(
        failing.index("f", &probe),
        Err(IndexError::Func("nope".to_owned()))
    );
}

// IDX-13: `index_keys` returns the storage keys filed under a value.
#[test]
fn idx_13_index_keys() {
    let store = store();
    store.add(pod("ns1", "a", "1", json!({"app": "x"})));
    store.add(pod("ns2", "b", "1", json!({"app": "x"})));
    store.add(pod("ns2", "c", "1", json!({"app": "y"})));
    assert_eq!(
        sorted(store.index_keys("app", "x").unwrap()),
        ["ns1/a", "ns2/b"]
    );
    assert!(store.index_keys("app", "z").unwrap().is_empty());
}

// IDX-14: `by_index` returns the stored objects filed under a value.
#[test]
fn idx_14_by_index() {
    let store = store();
    let a = pod("ns1", "a", "1", json!({"app": "x"}));
    store.add(a.clone());
    store.add(pod("ns2", "b", "1", json!({"app": "y"})));
    assert_eq!(store.by_index("app", "x").unwrap(), [a]);
}

// IDX-15: `list_index_func_values` lists the values present in an index.
#[test]
fn idx_15_list_index_func_values() {
    let store = store();
    store.add(pod("ns1", "a", "1", json!({"tags": "p_q"})));
    store.add(pod("ns2", "b", "1", json!({"tags": "q_r"})));
    assert_eq!(
        sorted(store.list_index_func_values("tags")),
        ["p", "q", "r"]
    );
    assert_eq!(
        sorted(store.list_index_func_values(NAMESPACE_INDEX)),
        ["ns1", "ns2"]
    );
    assert!(store.list_index_func_values("unknown").is_empty());
}

// IDX-16: registered indexers are listed; adding indexers is refused once
// the store holds data, and for a name already taken.
#[test]
fn idx_16_indexers_registration() {
    let store = Indexer::with_namespace_index();
    assert_eq!(store.index_names(), [NAMESPACE_INDEX]);
    store
        .add_indexers(vec![("app".to_owned(), label_index("app"))])
        .unwrap();
    let registered = store.get_indexers();
    assert_eq!(registered.len(), 2);
    assert_eq!(registered[1].0, "app");
    let conflict = store.add_indexers(vec![(NAMESPACE_INDEX.to_owned(), namespace_index_func())]);
    assert_eq!(
        conflict,
        Err(IndexError::Conflict(NAMESPACE_INDEX.to_owned()))
    );
    let twice = store.add_indexers(vec![
        ("t".to_owned(), tags_index()),
        ("t".to_owned(), tags_index()),
    ]);
    assert_eq!(twice, Err(IndexError::Conflict("t".to_owned())));
    assert_eq!(
        store.index_names(),
        [NAMESPACE_INDEX, "app"],
        "nothing added on error"
    );

    store.add(pod("ns", "a", "1", json!({"tags": "x"})));
    let late = store.add_indexers(vec![("tags".to_owned(), tags_index())]);
    assert_eq!(late, Err(IndexError::NotEmpty(1)));
    assert_eq!(
        late.unwrap_err().to_string(),
        "cannot add indexers to a store that already holds 1 objects"
    );
}

// Beyond IDX-16: an index added to a store holding data is built over it,
// and then kept up to date like the others.
#[test]
fn extended_indexers_are_built_over_what_is_stored() {
    let store = Indexer::with_namespace_index();
    store.add(pod("ns", "a", "1", json!({"tags": "x_y"})));
    store.add(pod("ns", "b", "1", json!({"tags": "y"})));
    store
        .extend_indexers(vec![("tags".to_owned(), tags_index())])
        .unwrap();
    assert_eq!(
        sorted(store.index_keys("tags", "y").unwrap()),
        ["ns/a", "ns/b"]
    );
    assert_eq!(store.index_keys("tags", "x").unwrap(), ["ns/a"]);
    store.add(pod("ns", "c", "1", json!({"tags": "x"})));
    store.delete("ns/a");
    assert_eq!(store.index_keys("tags", "x").unwrap(), ["ns/c"]);
    assert_eq!(
        store.extend_indexers(vec![("tags".to_owned(), tags_index())]),
        Err(IndexError::Conflict("tags".to_owned()))
    );
}

// Beyond client-go: a removed index is no longer computed or served, and
// the indices left keep working.
#[test]
fn removed_indexers_are_gone_and_the_others_stay() {
    let store = Indexer::with_namespace_index();
    store.add(pod("ns", "a", "1", json!({"tags": "x_y"})));
    store
        .extend_indexers(vec![("tags".to_owned(), tags_index())])
        .unwrap();
    store.remove_indexers(&["tags".to_owned(), "not-there".to_owned()]);
    assert_eq!(store.index_names(), [NAMESPACE_INDEX]);
    assert_eq!(
        store.index_keys("tags", "x"),
        Err(IndexError::UnknownIndex("tags".to_owned()))
    );
    store.add(pod("ns", "b", "1", json!({"tags": "x"})));
    store.delete("ns/a");
    assert_eq!(store.index_keys(NAMESPACE_INDEX, "ns").unwrap(), ["ns/b"]);
    // The name is free again.
    store
        .extend_indexers(vec![("tags".to_owned(), tags_index())])
        .unwrap();
    assert_eq!(store.index_keys("tags", "x").unwrap(), ["ns/b"]);
}

// IDX-17: an unknown index name is an error for index, index_keys, by_index.
#[test]
fn idx_17_unknown_index_is_an_error() {
    let store = store();
    let obj = pod("ns", "a", "1", json!({}));
    store.add(obj.clone());
    let unknown = Err(IndexError::UnknownIndex("nope".to_owned()));
    assert_eq!(store.index("nope", &obj), unknown.clone().map(|()| vec![]));
    assert_eq!(
        store.by_index("nope", "x"),
        unknown.clone().map(|()| vec![])
    );
    assert_eq!(store.index_keys("nope", "x"), unknown.map(|()| vec![]));
    assert_eq!(
        IndexError::UnknownIndex("nope".to_owned()).to_string(),
        "index with name \"nope\" does not exist"
    );
}

// IDX-18: replace swaps every item and rebuilds every index from scratch.
#[test]
fn idx_18_replace_rebuilds_indices() {
    let store = store();
    store.add(pod("old", "a", "1", json!({"app": "x", "tags": "t1"})));
    store.add(pod("old", "b", "1", json!({"app": "y"})));
    let b2 = pod("new", "b", "3", json!({"app": "z"}));
    store.replace(vec![
        pod("new", "b", "2", json!({"app": "w"})),
        pod("new", "c", "1", json!({"app": "x", "tags": "t2_t3"})),
        b2.clone(),
    ]);
    assert_eq!(sorted(store.list_keys()), ["new/b", "new/c"]);
    assert_eq!(store.get_by_key("new/b"), Some(b2), "the last one wins");
    assert_eq!(store.get_by_key("old/a"), None);
    assert_eq!(
        sorted(store.list_index_func_values(NAMESPACE_INDEX)),
        ["new"]
    );
    assert_eq!(sorted(store.list_index_func_values("app")), ["x", "z"]);
    assert_eq!(sorted(store.list_index_func_values("tags")), ["t2", "t3"]);
    assert_eq!(names(store.by_index("app", "x").unwrap()), ["c"]);
    store.replace(Vec::new());
    assert!(store.is_empty());
    assert!(store.list_index_func_values("app").is_empty());
}

// IDX-19: the namespace index files objects under their namespace and
// cluster-scoped objects under "".
#[test]
fn idx_19_namespace_index() {
    let store = Indexer::with_namespace_index();
    store.add(pod("ns1", "a", "1", json!({})));
    store.add(pod("ns1", "b", "1", json!({})));
    store.add(object(
        json!({"kind": "Node", "metadata": {"name": "node-1"}}),
    ));
    assert_eq!(
        names(store.by_index(NAMESPACE_INDEX, "ns1").unwrap()),
        ["a", "b"]
    );
    assert_eq!(
        names(store.by_index(NAMESPACE_INDEX, "").unwrap()),
        ["node-1"]
    );
    let node = object(json!({"metadata": {"name": "n"}}));
    assert_eq!(namespace_index_func()(&node).unwrap(), [""]);
}

// IDX-21: get_by_key is the read path: the object and whether it exists.
#[test]
fn idx_21_get_by_key() {
    let store = store();
    let a = pod("ns", "a", "1", json!({}));
    store.add(a.clone());
    assert_eq!(store.get_by_key("ns/a"), Some(a));
    assert_eq!(store.get_by_key("ns/b"), None);
    assert_eq!(store.get_by_key("a"), None);
}

// KEY-08: identity is namespace plus name; a new UID under the same name is
// an update of the same entry.
#[test]
fn key_08_identity_ignores_uid() {
    let store = Indexer::with_namespace_index();
    let make =
        |uid: &str| object(json!({"metadata": {"namespace": "ns", "name": "a", "uid": uid}}));
    store.add(make("uid-1"));
    let previous = store.add(make("uid-2")).unwrap();
    assert_eq!(previous.uid(), "uid-1");
    assert_eq!(store.len(), 1);
    assert_eq!(store.get_by_key("ns/a").unwrap().uid(), "uid-2");
}

#[derive(Debug, Clone)]
enum Op {
    Add(usize, usize, Option<String>, Option<String>),
    Delete(usize),
    Replace(Vec<(usize, usize, Option<String>, Option<String>)>),
}

const KEYS: usize = 8;
const NAMESPACES: usize = 3;

fn label_value() -> impl Strategy<Value = Option<String>> {
    proptest::option::of(prop_oneof!["[ab]{0,2}", "[ab_]{0,5}", "[a\"\\\\é_]{0,4}"])
}

fn op() -> impl Strategy<Value = Op> {
    let item = || (0..KEYS, 0..NAMESPACES, label_value(), label_value());
    prop_oneof![
        6 => item().prop_map(|(k, n, a, t)| Op::Add(k, n, a, t)),
        2 => (0..KEYS).prop_map(Op::Delete),
        1 => proptest::collection::vec(item(), 0..6).prop_map(Op::Replace),
    ]
}

fn namespace(n: usize) -> String {
    if n == 0 {
        String::new()
    } else {
        format!("ns{n}")
    }
}

fn model_object(
    k: usize,
    n: usize,
    app: &Option<String>,
    tags: &Option<String>,
    rv: usize,
) -> Object {
    let mut labels = serde_json::Map::new();
    if let Some(app) = app {
        labels.insert("app".into(), json!(app));
    }
    if let Some(tags) = tags {
        labels.insert("tags".into(), json!(tags));
    }
    pod(
        &namespace(n),
        &format!("obj-{k}"),
        &rv.to_string(),
        Value::Object(labels),
    )
}

/// Every index's expected contents: index → value → keys.
fn model_indices(
    model: &BTreeMap<String, Object>,
) -> BTreeMap<&'static str, BTreeMap<String, BTreeSet<String>>> {
    let mut out: BTreeMap<&'static str, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (key, obj) in model {
        let mut file = |index: &'static str, value: &str| {
            out.entry(index)
                .or_default()
                .entry(value.to_owned())
                .or_default()
                .insert(key.clone());
        };
        file(NAMESPACE_INDEX, obj.namespace());
        if let Some(app) = obj.label("app") {
            file("app", app);
        }
        if let Some(tags) = obj.label("tags") {
            for t in tags.split('_') {
                file("tags", t);
            }
        }
    }
    out
}

fn check_against_model(
    store: &Indexer,
    model: &BTreeMap<String, Object>,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(store.len(), model.len());
    prop_assert_eq!(
        sorted(store.list_keys()),
        model.keys().cloned().collect::<Vec<_>>()
    );
    let mut listed = store.list();
    listed.sort_by(|a, b| a.key().cmp(b.key()));
    prop_assert_eq!(listed, model.values().cloned().collect::<Vec<_>>());
    for k in 0..KEYS {
        for n in 0..NAMESPACES {
            let key = match namespace(n) {
                ns if ns.is_empty() => format!("obj-{k}"),
                ns => format!("{ns}/obj-{k}"),
            };
            prop_assert_eq!(store.get_by_key(&key), model.get(&key).cloned());
        }
    }
    let indices = model_indices(model);
    for index in [NAMESPACE_INDEX, "app", "tags"] {
        let want = indices.get(index).cloned().unwrap_or_default();
        prop_assert_eq!(
            sorted(store.list_index_func_values(index)),
            want.keys().cloned().collect::<Vec<_>>()
        );
        for (value, keys) in &want {
            let mut objs = store.by_index(index, value).unwrap();
            objs.sort_by(|a, b| a.key().cmp(b.key()));
            let expected: Vec<Object> = keys.iter().map(|k| model[k].clone()).collect();
            prop_assert_eq!(objs, expected, "by_index({}, {:?})", index, value);
            prop_assert_eq!(
                sorted(store.index_keys(index, value).unwrap()),
                keys.iter().cloned().collect::<Vec<_>>()
            );
        }
    }
    Ok(())
}

proptest! {
    // IDX-05, IDX-06, IDX-10, IDX-11, IDX-14, IDX-15, IDX-18 against a model
    // that recomputes every index from scratch.
    #[test]
    fn matches_model(ops in proptest::collection::vec(op(), 1..40)) {
        let store = store();
        let mut model: BTreeMap<String, Object> = BTreeMap::new();
        for (rv, op) in ops.into_iter().enumerate() {
            match op {
                Op::Add(k, n, app, tags) => {
                    let obj = model_object(k, n, &app, &tags, rv);
                    let previous = model.insert(obj.key().to_owned(), obj.clone());
                    prop_assert_eq!(store.add(obj), previous);
                }
                Op::Delete(k) => {
                    let key = model.keys().nth(k % model.len().max(1)).cloned().unwrap_or_default();
                    prop_assert_eq!(store.delete(&key), model.remove(&key));
                }
                Op::Replace(items) => {
                    let objs: Vec<Object> = items
                        .iter()
                        .map(|(k, n, app, tags)| model_object(*k, *n, app, tags, rv))
                        .collect();
                    model = objs.iter().map(|o| (o.key().to_owned(), o.clone())).collect();
                    store.replace(objs);
                }
            }
            check_against_model(&store, &model)?;
        }
    }
}

// IDX-07 with writers: readers running beside writers always see, under one
// read lock, an index consistent with the objects it returns, only known
// keys, and per key versions that never go backwards.
#[test]
fn readers_beside_writers_see_consistent_state() {
    const OBJECTS: usize = 64;
    const WRITERS: usize = 2;
    const ROUNDS: usize = 200;
    let store = Indexer::new(vec![
        (NAMESPACE_INDEX.to_owned(), namespace_index_func()),
        ("version".to_owned(), label_index("version")),
    ]);
    let make = |i: usize, version: usize| {
        pod(
            &format!("ns{}", i % 4),
            &format!("obj-{i}"),
            &version.to_string(),
            json!({"version": (version % 3).to_string()}),
        )
    };
    store.replace((0..OBJECTS).map(|i| make(i, 0)).collect());

    std::thread::scope(|s| {
        for w in 0..WRITERS {
            let (store, make) = (&store, &make);
            s.spawn(move || {
                for version in 1..=ROUNDS {
                    for i in (w..OBJECTS).step_by(WRITERS) {
                        store.update(make(i, version));
                    }
                }
            });
        }
        for _ in 0..2 {
            let store = &store;
            s.spawn(move || {
                let mut seen = vec![0usize; OBJECTS];
                for round in 0..ROUNDS {
                    for ns in 0..4 {
                        let in_ns = store.by_index(NAMESPACE_INDEX, &format!("ns{ns}")).unwrap();
                        assert_eq!(in_ns.len(), OBJECTS / 4);
                        assert!(in_ns.iter().all(|o| o.namespace() == format!("ns{ns}")));
                    }
                    let value = (round % 3).to_string();
                    let filed = store.by_index("version", &value).unwrap();
                    assert!(
                        filed
                            .iter()
                            .all(|o| o.label("version") == Some(value.as_str()))
                    );
                    for (i, last) in seen.iter_mut().enumerate() {
                        let obj = store.get_by_key(&format!("ns{}/obj-{i}", i % 4)).unwrap();
                        let version: usize = obj.resource_version().parse().unwrap();
                        assert!(version >= *last, "versions never go backwards");
                        assert_eq!(
                            obj.label("version"),
                            Some((version % 3).to_string().as_str())
                        );
                        *last = version;
                    }
                }
            });
        }
    });
    assert_eq!(store.len(), OBJECTS);
    let total: usize = (0..3)
        .map(|v| store.by_index("version", &v.to_string()).unwrap().len())
        .sum();
    assert_eq!(total, OBJECTS);
    assert!(
        store
            .list()
            .iter()
            .all(|o| o.resource_version() == ROUNDS.to_string())
    );
}
