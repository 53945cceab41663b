//! Tests of the store's API semantics, one section per verb (create,
//! update, patch, scale, delete, CRDs, list, watch), then performance,
//! properties and the wire forms; every test works on a fresh store.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::meta::{format_rfc3339, name_of, namespace_of};
use super::*;

fn store() -> Arc<Store> {
    Store::new(StoreConfig::default())
}

fn rt(s: &Store, group: &str, version: &str, plural: &str) -> ResourceType {
    s.resource_type(group, version, plural)
        .unwrap_or_else(|| panic!("{group}/{version}/{plural} not served"))
}

fn cm_type(s: &Store) -> ResourceType {
    rt(s, "", "v1", "configmaps")
}

fn cm(name: &str) -> Value {
    json!({"metadata": {"name": name}, "data": {"k": "v"}})
}

fn rv_of(v: &Value) -> u64 {
    v["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

fn drain(w: &mut Watch) -> Vec<(WatchEventKind, Value)> {
    let mut out = Vec::new();
    while let Some(e) = w.try_next() {
        out.push((e.kind, (*e.object).clone()));
    }
    out
}

fn names(events: &[(WatchEventKind, Value)]) -> Vec<(WatchEventKind, String)> {
    events
        .iter()
        .map(|(k, o)| (*k, o["metadata"]["name"].as_str().unwrap_or("").to_string()))
        .collect()
}

fn list_names(s: &Store, rt: &ResourceType, ns: Option<&str>, params: &ListParams) -> Vec<String> {
    s.list(rt, ns, params)
        .unwrap()
        .items
        .iter()
        .map(|o| o["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

fn deployment(name: &str) -> Value {
    json!({
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [
                {"name": "app", "image": "nginx:1", "ports": [{"containerPort": 80}], "env": [{"name": "A", "value": "1"}]},
                {"name": "sidecar", "image": "busybox"}
            ]}}
        }
    })
}

fn crd(scope: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": scope,
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wg"]},
            "versions": [
                {"name": "v1", "served": true, "storage": true, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}},
                {"name": "v1beta1", "served": true, "storage": false},
                {"name": "v0", "served": false, "storage": false}
            ]
        }
    })
}

fn crd_type(s: &Store) -> ResourceType {
    rt(s, "apiextensions.k8s.io", "v1", "customresourcedefinitions")
}

/// Creates the widgets CRD ([`crd`]) with `scope`; its served `v1` type.
fn serve_widgets(s: &Store, scope: &str) -> ResourceType {
    s.create(&crd_type(s), None, crd(scope), None).unwrap();
    rt(s, "example.com", "v1", "widgets")
}

fn deployments(s: &Store) -> ResourceType {
    rt(s, "apps", "v1", "deployments")
}

/// The deployments type and the deployment `web`, created in `default`.
fn create_web(s: &Store) -> (ResourceType, Value) {
    let d = deployments(s);
    let web = s
        .create(&d, Some("default"), deployment("web"), None)
        .unwrap();
    (d, web)
}

/// An object with only a name.
fn named(name: &str) -> Value {
    json!({"metadata": {"name": name}})
}

/// An object with a name and the finalizer `f`.
fn finalized(name: &str) -> Value {
    json!({"metadata": {"name": name, "finalizers": ["f"]}})
}

/// An object with a name and one label.
fn labelled(name: &str, key: &str, value: &str) -> Value {
    json!({"metadata": {"name": name, "labels": {key: value}}})
}

/// Creates a configmap ([`cm`]) of each name in `default`.
fn create_cms(s: &Store, t: &ResourceType, names: impl IntoIterator<Item = String>) {
    for name in names {
        s.create(t, Some("default"), cm(&name), None).unwrap();
    }
}

fn merge(body: Value) -> Patch {
    Patch {
        kind: PatchKind::Merge,
        body,
    }
}

/// List options for one page of at most `limit` items.
fn paged(limit: u64, continue_token: Option<String>) -> ListParams {
    ListParams {
        limit: Some(limit),
        continue_token,
        ..Default::default()
    }
}

// ------------------------------------------------------------ basics

#[test]
fn new_store_has_the_default_namespaces() {
    let s = store();
    let ns = rt(&s, "", "v1", "namespaces");
    assert_eq!(
        list_names(&s, &ns, None, &ListParams::default()),
        vec!["default", "kube-public", "kube-system"]
    );
    let d = s.get(&ns, None, "default").unwrap();
    assert_eq!(d["status"]["phase"], "Active");
    assert_eq!(d["kind"], "Namespace");
    assert_eq!(d["apiVersion"], "v1");
}

#[test]
fn builtin_kinds_have_real_names_and_subresources() {
    let s = store();
    let types = s.resource_types();
    let find = |g: &str, p: &str| {
        types
            .iter()
            .find(|t| t.group == g && t.plural == p)
            .unwrap()
    };
    assert_eq!(find("", "configmaps").short_names, vec!["cm"]);
    assert_eq!(find("", "configmaps").list_kind, "ConfigMapList");
    assert!(!find("", "namespaces").namespaced);
    assert!(!find("apiextensions.k8s.io", "customresourcedefinitions").namespaced);
    let d = find("apps", "deployments");
    assert!(d.status_subresource && d.scale_subresource);
    assert_eq!(d.short_names, vec!["deploy"]);
    assert_eq!(d.singular, "deployment");
    assert!(find("apps", "daemonsets").status_subresource);
    assert!(!find("apps", "daemonsets").scale_subresource);
    assert!(find("", "pods").status_subresource);
    assert!(find("events.k8s.io", "events").namespaced);
    assert!(find("coordination.k8s.io", "leases").namespaced);
    for (g, p, short) in [
        ("apps", "replicasets", "rs"),
        ("apps", "statefulsets", "sts"),
        ("apps", "daemonsets", "ds"),
        ("", "namespaces", "ns"),
        ("", "pods", "po"),
        ("", "services", "svc"),
        ("", "serviceaccounts", "sa"),
        ("", "events", "ev"),
        ("apiextensions.k8s.io", "customresourcedefinitions", "crd"),
    ] {
        assert!(find(g, p).short_names.iter().any(|s| s == short), "{p}");
    }
    assert!(s.resource_type("", "v1", "nothings").is_none());
}

#[test]
fn every_write_stamps_the_global_resource_version() {
    let s = store();
    let t = cm_type(&s);
    let start = s.resource_version();
    let a = s.create(&t, Some("default"), cm("a"), None).unwrap();
    assert_eq!(rv_of(&a), start + 1);
    let b = s.create(&t, Some("kube-system"), cm("b"), None).unwrap();
    assert_eq!(rv_of(&b), start + 2);
    let mut a2 = a.clone();
    a2["data"]["k"] = json!("w");
    let a2 = s.update(&t, Some("default"), "a", a2, None).unwrap().0;
    assert_eq!(rv_of(&a2), start + 3);
    let list = s.list(&t, None, &ListParams::default()).unwrap();
    assert_eq!(list.resource_version, start + 3);
    assert_eq!(s.resource_version(), start + 3);
    let deleted = s
        .delete(&t, Some("default"), "a", &DeleteOptions::default())
        .unwrap();
    assert_eq!(rv_of(&deleted), start + 4);
}

#[test]
fn list_items_are_sorted_by_namespace_and_name() {
    let s = store();
    let t = cm_type(&s);
    for (ns, n) in [
        ("kube-system", "a"),
        ("default", "z"),
        ("default", "b"),
        ("kube-public", "c"),
    ] {
        s.create(&t, Some(ns), cm(n), None).unwrap();
    }
    let list = s.list(&t, None, &ListParams::default()).unwrap();
    let keys: Vec<(String, String)> = list
        .items
        .iter()
        .map(|o| (namespace_of(o).to_string(), name_of(o).to_string()))
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    assert_eq!(
        list_names(&s, &t, Some("default"), &ListParams::default()),
        vec!["b", "z"]
    );
}

// ------------------------------------------------------------ create

#[test]
fn create_sets_uid_timestamp_generation_and_type() {
    let s = store();
    let t = cm_type(&s);
    let body = json!({"metadata": {"name": "a", "resourceVersion": "999", "uid": "client"}});
    let o = s.create(&t, Some("default"), body, None).unwrap();
    let uid = o["metadata"]["uid"].as_str().unwrap();
    assert_ne!(uid, "client");
    assert_eq!(uid.len(), 36);
    assert_eq!(&uid[14..15], "4");
    let ts = o["metadata"]["creationTimestamp"].as_str().unwrap();
    assert_eq!(ts.len(), 20);
    assert!(ts.ends_with('Z') && ts.as_bytes()[10] == b'T');
    // A ConfigMap has no generation (its strategy sets none).
    assert_eq!(o["metadata"].get("generation"), None);
    assert_eq!(o["metadata"]["namespace"], "default");
    assert_ne!(o["metadata"]["resourceVersion"], "999");
    assert_eq!(o["apiVersion"], "v1");
    assert_eq!(o["kind"], "ConfigMap");
}

#[test]
fn rfc3339_formatting_is_correct() {
    assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(format_rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(format_rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
}

#[test]
fn create_in_missing_namespace_is_404() {
    let s = store();
    let e = s
        .create(&cm_type(&s), Some("nope"), cm("a"), None)
        .unwrap_err();
    assert_eq!(e.code, 404);
    assert_eq!(e.reason, "NotFound");
    assert_eq!(e.message, "namespaces \"nope\" not found");
}

#[test]
fn create_in_terminating_namespace_is_403() {
    let s = store();
    let ns = rt(&s, "", "v1", "namespaces");
    let t = cm_type(&s);
    s.create(&ns, None, named("x"), None).unwrap();
    s.create(&t, Some("x"), finalized("held"), None).unwrap();
    s.delete(&ns, None, "x", &DeleteOptions::default()).unwrap();
    let e = s.create(&t, Some("x"), cm("b"), None).unwrap_err();
    assert_eq!(e.code, 403);
    assert_eq!(e.reason, "Forbidden");
    assert!(
        e.message.contains("because it is being terminated"),
        "{}",
        e.message
    );
}

#[test]
fn create_requires_name_or_generate_name() {
    let s = store();
    let t = cm_type(&s);
    let e = s
        .create(&t, Some("default"), json!({"metadata": {}}), None)
        .unwrap_err();
    assert_eq!(e.code, 422);
    let o = s
        .create(
            &t,
            Some("default"),
            json!({"metadata": {"generateName": "gen-"}}),
            None,
        )
        .unwrap();
    let name = o["metadata"]["name"].as_str().unwrap();
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");
    assert!(
        name[4..]
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    );
}

#[test]
fn create_existing_is_409_already_exists() {
    let s = store();
    let t = cm_type(&s);
    s.create(&t, Some("default"), cm("a"), None).unwrap();
    let e = s.create(&t, Some("default"), cm("a"), None).unwrap_err();
    assert_eq!(e.code, 409);
    assert_eq!(e.reason, "AlreadyExists");
    assert_eq!(e.message, "configmaps \"a\" already exists");
    let st = e.to_status();
    assert_eq!(st["kind"], "Status");
    assert_eq!(st["status"], "Failure");
    assert_eq!(st["code"], 409);
    assert_eq!(st["details"]["name"], "a");
}

#[test]
fn create_with_contradicting_api_version_or_kind_is_400() {
    let s = store();
    let t = cm_type(&s);
    for body in [
        json!({"apiVersion": "apps/v1", "metadata": {"name": "a"}}),
        json!({"kind": "Secret", "metadata": {"name": "a"}}),
        json!({"metadata": {"name": "a", "namespace": "kube-system"}}),
    ] {
        let e = s
            .create(&t, Some("default"), body.clone(), None)
            .unwrap_err();
        assert_eq!(e.code, 400, "{body}");
    }
}

/// As each kind's strategy: a create's status is dropped where the kind
/// has a status subresource (a custom resource gets none, a built-in kind
/// its initial status); elsewhere it is kept.
#[test]
fn create_drops_the_status_of_kinds_with_a_status_subresource() {
    let s = store();
    let d = deployments(&s);
    let mut body = deployment("web");
    body["status"] = json!({"replicas": 3});
    let o = s.create(&d, Some("default"), body, None).unwrap();
    assert_eq!(o["status"], json!({}));
    let pods = rt(&s, "", "v1", "pods");
    let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]},
                     "status": {"phase": "Running"}});
    let o = s.create(&pods, Some("default"), pod, None).unwrap();
    assert_eq!(
        o["status"],
        json!({"phase": "Pending", "qosClass": "BestEffort"})
    );
    // Written through the status subresource, it stays; the QoS class is
    // set at create and kept when a status leaves it out.
    let mut running = o.clone();
    running["status"] = json!({"phase": "Running"});
    let o = s
        .update(
            &pods,
            Some("default"),
            "p",
            running,
            Some(Subresource::Status),
        )
        .unwrap()
        .0;
    assert_eq!(
        o["status"],
        json!({"phase": "Running", "qosClass": "BestEffort"})
    );
}

/// The Pod strategy's QoS class, computed at create once the Pod's
/// defaults have set the requests its limits imply; a quantity that does
/// not parse is the decoder's 400.
#[test]
fn a_created_pod_gets_its_qos_class() {
    let s = store();
    let pods = rt(&s, "", "v1", "pods");
    let pod = |name: &str, resources: Value| {
        json!({"metadata": {"name": name},
               "spec": {"containers": [{"name": "c", "image": "i", "resources": resources}]}})
    };
    let limited = pod("g", json!({"limits": {"cpu": "500m", "memory": "128Mi"}}));
    let o = s.create(&pods, Some("default"), limited, None).unwrap();
    assert_eq!(o["status"]["qosClass"], "Guaranteed");
    assert_eq!(
        o["spec"]["containers"][0]["resources"]["requests"],
        json!({"cpu": "500m", "memory": "128Mi"})
    );
    let requested = pod("b", json!({"requests": {"cpu": "0.1"}}));
    let o = s.create(&pods, Some("default"), requested, None).unwrap();
    assert_eq!(o["status"]["qosClass"], "Burstable");
    let malformed = pod("m", json!({"limits": {"memory": "lots"}}));
    let e = s
        .create(&pods, Some("default"), malformed, None)
        .unwrap_err();
    assert_eq!(e.code, 400);
    assert_eq!(
        e.message,
        "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular \
         expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    );
    // A Deployment's Pod template takes no requests from its limits.
    let d = deployments(&s);
    let mut body = deployment("web");
    body["spec"]["template"]["spec"]["containers"][0]["resources"] =
        json!({"limits": {"cpu": "1"}});
    let o = s.create(&d, Some("default"), body, None).unwrap();
    assert_eq!(
        o["spec"]["template"]["spec"]["containers"][0]["resources"],
        json!({"limits": {"cpu": "1"}})
    );
}

#[test]
fn create_records_the_field_manager() {
    let s = store();
    let o = s
        .create(&cm_type(&s), Some("default"), cm("a"), Some("kubectl"))
        .unwrap();
    let mf = &o["metadata"]["managedFields"][0];
    assert_eq!(mf["manager"], "kubectl");
    assert_eq!(mf["operation"], "Update");
    assert_eq!(mf["fieldsV1"]["f:data"]["f:k"], json!({}));
}

// ------------------------------------------------------------ update

#[test]
fn update_with_stale_resource_version_is_409() {
    let s = store();
    let t = cm_type(&s);
    let a = s.create(&t, Some("default"), cm("a"), None).unwrap();
    let mut b = a.clone();
    b["data"]["k"] = json!("1");
    s.update(&t, Some("default"), "a", b, None).unwrap();
    let mut stale = a.clone();
    stale["data"]["k"] = json!("2");
    let e = s.update(&t, Some("default"), "a", stale, None).unwrap_err();
    assert_eq!(e.code, 409);
    assert_eq!(e.reason, "Conflict");
    assert_eq!(
        e.message,
        "Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply your changes to the latest version and try again"
    );
}

#[test]
fn update_without_resource_version_is_unconditional() {
    let s = store();
    let t = cm_type(&s);
    s.create(&t, Some("default"), cm("a"), None).unwrap();
    let body = json!({"metadata": {"name": "a"}, "data": {"k": "new"}});
    let o = s.update(&t, Some("default"), "a", body, None).unwrap().0;
    assert_eq!(o["data"]["k"], "new");
}

/// Where the strategy says `AllowUnconditionalUpdate` is false (Leases,
/// CRDs, custom resources), a PUT must name the version it read; its
/// status too. A patch stays unconditional.
#[test]
fn leases_and_custom_resources_take_no_unconditional_update() {
    let s = store();
    let widgets = serve_widgets(&s, "Namespaced");
    let leases = rt(&s, "coordination.k8s.io", "v1", "leases");
    let w = json!({"metadata": {"name": "w"}, "spec": {"replicas": 1}});
    let created = s
        .create(&widgets, Some("default"), w.clone(), None)
        .unwrap();
    let lease = json!({"metadata": {"name": "l"}, "spec": {"holderIdentity": "a"}});
    s.create(&leases, Some("default"), lease.clone(), None)
        .unwrap();
    for (t, name, body, qualified) in [
        (&widgets, "w", &w, "widgets.example.com"),
        (&leases, "l", &lease, "leases.coordination.k8s.io"),
    ] {
        let subresources = if t.status_subresource {
            vec![None, Some(Subresource::Status)]
        } else {
            vec![None]
        };
        for subresource in subresources {
            let e = s
                .update(t, Some("default"), name, body.clone(), subresource)
                .unwrap_err();
            assert_eq!(e.code, 422, "{qualified} {subresource:?}");
            assert_eq!(
                e.message,
                format!(
                    "{qualified} \"{name}\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
                )
            );
            let details = e.details.as_ref().unwrap();
            assert_eq!(details["kind"], t.plural);
            assert_eq!(details["causes"][0]["field"], "metadata.resourceVersion");
        }
    }
    let mut versioned = created.clone();
    versioned["spec"]["replicas"] = json!(2);
    let o = s
        .update(&widgets, Some("default"), "w", versioned, None)
        .unwrap()
        .0;
    assert_eq!(o["spec"]["replicas"], 2);
    let o = s
        .patch(
            &widgets,
            Some("default"),
            "w",
            merge(json!({"spec": {"replicas": 3}})),
            None,
        )
        .unwrap();
    assert_eq!(o["spec"]["replicas"], 3);
    let e = s.update(
        &leases,
        Some("default"),
        "l",
        lease,
        Some(Subresource::Status),
    );
    assert_eq!(e.unwrap_err().code, 404, "a Lease has no status");
}

/// Where the strategy says `AllowCreateOnUpdate` (Leases, Services,
/// Events, RBAC objects), a PUT to a missing name creates the object;
/// elsewhere, and for a subresource, it is 404.
#[test]
fn a_put_creates_a_missing_lease_but_no_missing_config_map() {
    let s = store();
    let leases = rt(&s, "coordination.k8s.io", "v1", "leases");
    let lease = json!({"metadata": {"name": "l"}, "spec": {"holderIdentity": "a"}});
    let (o, created) = s
        .update(&leases, Some("default"), "l", lease.clone(), None)
        .unwrap();
    assert!(created);
    assert_eq!(o["spec"]["holderIdentity"], "a");
    assert!(o["metadata"]["uid"].is_string());
    let roles = rt(&s, "rbac.authorization.k8s.io", "v1", "clusterroles");
    let (_, created) = s
        .update(&roles, None, "r", json!({"rules": []}), None)
        .unwrap();
    assert!(created, "the name comes from the URL");
    // Updating it then is an update.
    let mut again = o.clone();
    again["spec"]["holderIdentity"] = json!("b");
    let (o, created) = s
        .update(&leases, Some("default"), "l", again, None)
        .unwrap();
    assert!(!created);
    assert_eq!(o["spec"]["holderIdentity"], "b");
    let e = s.update(
        &leases,
        Some("default"),
        "m",
        json!({"metadata": {"name": "n"}}),
        None,
    );
    assert_eq!(e.unwrap_err().code, 400, "the body's name is the URL's");
    let e = s.update(&cm_type(&s), Some("default"), "c", cm("c"), None);
    assert_eq!(e.unwrap_err().code, 404);
    let services = rt(&s, "", "v1", "services");
    let e = s.update(
        &services,
        Some("default"),
        "svc",
        json!({}),
        Some(Subresource::Status),
    );
    assert_eq!(e.unwrap_err().code, 404);
}

#[test]
fn update_preserves_system_metadata() {
    let s = store();
    let t = cm_type(&s);
    let a = s.create(&t, Some("default"), cm("a"), None).unwrap();
    let body = json!({"metadata": {"name": "a", "uid": "x", "creationTimestamp": "2000-01-01T00:00:00Z", "generation": 40}, "data": {"k": "z"}});
    let o = s.update(&t, Some("default"), "a", body, None).unwrap().0;
    assert_eq!(o["metadata"]["uid"], a["metadata"]["uid"]);
    assert_eq!(
        o["metadata"]["creationTimestamp"],
        a["metadata"]["creationTimestamp"]
    );
    // A ConfigMap has none, whatever the body says.
    assert_eq!(o["metadata"].get("generation"), None);
}

#[test]
fn update_of_missing_object_is_404_and_name_mismatch_is_400() {
    let s = store();
    let t = cm_type(&s);
    assert_eq!(
        s.update(&t, Some("default"), "a", cm("a"), None)
            .unwrap_err()
            .code,
        404
    );
    s.create(&t, Some("default"), cm("a"), None).unwrap();
    assert_eq!(
        s.update(&t, Some("default"), "a", cm("b"), None)
            .unwrap_err()
            .code,
        400
    );
}

#[test]
fn unchanged_update_does_not_write() {
    let s = store();
    let t = cm_type(&s);
    let a = s.create(&t, Some("default"), cm("a"), None).unwrap();
    let before = s.resource_version();
    let o = s
        .update(&t, Some("default"), "a", a.clone(), None)
        .unwrap()
        .0;
    assert_eq!(o, a);
    assert_eq!(s.resource_version(), before);
}

#[test]
fn spec_change_bumps_generation_status_change_does_not() {
    let s = store();
    let (d, o) = create_web(&s);
    assert_eq!(o["metadata"]["generation"], 1);
    let mut st = o.clone();
    st["status"] = json!({"replicas": 1});
    let o = s
        .update(&d, Some("default"), "web", st, Some(Subresource::Status))
        .unwrap()
        .0;
    assert_eq!(o["metadata"]["generation"], 1);
    assert_eq!(o["status"]["replicas"], 1);
    let mut meta = o.clone();
    meta["metadata"]["labels"]["extra"] = json!("yes");
    let o = s.update(&d, Some("default"), "web", meta, None).unwrap().0;
    assert_eq!(o["metadata"]["generation"], 1);
    assert_eq!(o["metadata"]["labels"]["extra"], "yes");
    let mut spec = o.clone();
    spec["spec"]["replicas"] = json!(5);
    let o = s.update(&d, Some("default"), "web", spec, None).unwrap().0;
    assert_eq!(o["metadata"]["generation"], 2);
    // A Deployment's annotations count too (the apps strategy).
    let mut noted = o.clone();
    noted["metadata"]["annotations"] = json!({"note": "x"});
    let o = s.update(&d, Some("default"), "web", noted, None).unwrap().0;
    assert_eq!(o["metadata"]["generation"], 3);
    // Kinds without a generation get none.
    let t = cm_type(&s);
    let c = s.create(&t, Some("default"), cm("a"), None).unwrap();
    let mut c2 = c.clone();
    c2["data"]["k"] = json!("changed");
    let c2 = s.update(&t, Some("default"), "a", c2, None).unwrap().0;
    assert_eq!(c2["metadata"].get("generation"), None);
}

#[test]
fn status_subresource_only_changes_status_main_resource_never_does() {
    let s = store();
    let d = deployments(&s);
    let o = s
        .create(&d, Some("default"), deployment("web"), None)
        .unwrap();
    let mut status = o.clone();
    status["status"] = json!({"replicas": 0});
    let o = s
        .update(
            &d,
            Some("default"),
            "web",
            status,
            Some(Subresource::Status),
        )
        .unwrap()
        .0;
    // Main resource: status ignored.
    let mut main = o.clone();
    main["status"] = json!({"replicas": 9});
    main["spec"]["replicas"] = json!(2);
    let o = s.update(&d, Some("default"), "web", main, None).unwrap().0;
    assert_eq!(o["status"]["replicas"], 0);
    assert_eq!(o["spec"]["replicas"], 2);
    // Status subresource: everything but status ignored.
    let mut sub = o.clone();
    sub["status"] = json!({"replicas": 2});
    sub["spec"]["replicas"] = json!(7);
    sub["metadata"]["labels"]["x"] = json!("y");
    let o = s
        .update(&d, Some("default"), "web", sub, Some(Subresource::Status))
        .unwrap()
        .0;
    assert_eq!(o["status"]["replicas"], 2);
    assert_eq!(o["spec"]["replicas"], 2);
    assert!(o["metadata"]["labels"].get("x").is_none());
    // Patches obey the same rule.
    let p = merge(json!({"status": {"replicas": 5}}));
    let o = s.patch(&d, Some("default"), "web", p, None).unwrap();
    assert_eq!(o["status"]["replicas"], 2);
    let p = merge(json!({"status": {"replicas": 5}, "spec": {"replicas": 9}}));
    let o = s
        .patch(&d, Some("default"), "web", p, Some(Subresource::Status))
        .unwrap();
    assert_eq!(o["status"]["replicas"], 5);
    assert_eq!(o["spec"]["replicas"], 2);
}

// ------------------------------------------------------------ patch

#[test]
fn merge_patch_follows_rfc7386() {
    let s = store();
    let t = cm_type(&s);
    s.create(
        &t,
        Some("default"),
        json!({"metadata": {"name": "a"}, "data": {"x": "1", "y": "2"}}),
        None,
    )
    .unwrap();
    let p = merge(json!({"data": {"x": null, "z": "3"}}));
    let o = s.patch(&t, Some("default"), "a", p, None).unwrap();
    assert_eq!(o["data"], json!({"y": "2", "z": "3"}));
}

#[test]
fn json_patch_applies_and_failed_test_is_422() {
    let s = store();
    let t = cm_type(&s);
    s.create(&t, Some("default"), cm("a"), None).unwrap();
    let p = Patch {
        kind: PatchKind::Json,
        body: json!([{"op": "test", "path": "/data/k", "value": "v"}, {"op": "add", "path": "/data/n", "value": "1"}]),
    };
    let o = s.patch(&t, Some("default"), "a", p, None).unwrap();
    assert_eq!(o["data"]["n"], "1");
    let p = Patch {
        kind: PatchKind::Json,
        body: json!([{"op": "test", "path": "/data/k", "value": "other"}]),
    };
    let e = s.patch(&t, Some("default"), "a", p, None).unwrap_err();
    assert_eq!(e.code, 422);
    let p = Patch {
        kind: PatchKind::Json,
        body: json!({"op": "nonsense"}),
    };
    assert_eq!(
        s.patch(&t, Some("default"), "a", p, None).unwrap_err().code,
        400
    );
}

#[test]
fn patch_with_stale_resource_version_is_409() {
    let s = store();
    let t = cm_type(&s);
    let a = s.create(&t, Some("default"), cm("a"), None).unwrap();
    let p = merge(
        json!({"metadata": {"resourceVersion": a["metadata"]["resourceVersion"]}, "data": {"k": "1"}}),
    );
    s.patch(&t, Some("default"), "a", p.clone(), None).unwrap();
    let p = merge(
        json!({"metadata": {"resourceVersion": a["metadata"]["resourceVersion"]}, "data": {"k": "2"}}),
    );
    assert_eq!(
        s.patch(&t, Some("default"), "a", p, None).unwrap_err().code,
        409
    );
}

#[test]
fn strategic_merge_merges_containers_by_name() {
    let s = store();
    let (d, _) = create_web(&s);
    let p = Patch {
        kind: PatchKind::StrategicMerge,
        body: json!({"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}, {"name": "new"}],
        "containers": [
            {"name": "app", "image": "nginx:2", "env": [{"name": "B", "value": "2"}],
             "$setElementOrder/env": [{"name": "A"}, {"name": "B"}]},
            {"name": "new", "image": "x"}
        ]}}}}),
    };
    let o = s.patch(&d, Some("default"), "web", p, None).unwrap();
    let cs = &o["spec"]["template"]["spec"]["containers"];
    assert_eq!(cs.as_array().unwrap().len(), 3);
    assert_eq!(cs[0]["name"], "app");
    assert_eq!(cs[0]["image"], "nginx:2");
    // The port keeps its protocol, defaulted at create.
    assert_eq!(
        cs[0]["ports"],
        json!([{"containerPort": 80, "protocol": "TCP"}])
    );
    assert_eq!(
        cs[0]["env"],
        json!([{"name": "A", "value": "1"}, {"name": "B", "value": "2"}])
    );
    assert_eq!(cs[1]["name"], "sidecar");
    assert_eq!(cs[2]["name"], "new");
    assert!(!o.to_string().contains("$setElementOrder"));
    assert_eq!(o["metadata"]["generation"], 2);
    // Deleting an element by key.
    let p = Patch {
        kind: PatchKind::StrategicMerge,
        body: json!({"spec": {"template": {"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}}}}),
    };
    let o = s.patch(&d, Some("default"), "web", p, None).unwrap();
    let names: Vec<&str> = o["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["app", "new"]);
}

#[test]
fn strategic_merge_on_custom_resources_is_unsupported() {
    let s = store();
    let w = serve_widgets(&s, "Namespaced");
    let spec = json!({"containers": [{"name": "x", "v": 1}]});
    s.create(
        &w,
        Some("default"),
        json!({"metadata": {"name": "a"}, "spec": spec}),
        None,
    )
    .unwrap();
    let p = Patch {
        kind: PatchKind::StrategicMerge,
        body: json!({"spec": {"containers": [{"name": "y"}]}}),
    };
    let e = s.patch(&w, Some("default"), "a", p, None).unwrap_err();
    assert_eq!((e.code, e.reason.as_str()), (415, "UnsupportedMediaType"));
    assert!(e.message.ends_with(
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    ));
    assert_eq!(s.get(&w, Some("default"), "a").unwrap()["spec"], spec);
}

#[test]
fn server_side_apply_creates_then_merges() {
    let s = store();
    let t = cm_type(&s);
    let apply = |body: Value, manager: &str| Patch {
        kind: PatchKind::Apply {
            field_manager: manager.into(),
            force: false,
        },
        body,
    };
    let o = s
        .patch(
            &t,
            Some("default"),
            "a",
            apply(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "labels": {"l": "1"}}, "data": {"x": "1"}}), "mgr"),
            None,
        )
        .unwrap();
    assert_eq!(o["data"], json!({"x": "1"}));
    assert_eq!(o["metadata"].get("generation"), None);
    let mf = o["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(mf.len(), 1);
    assert_eq!(mf[0]["manager"], "mgr");
    assert_eq!(mf[0]["operation"], "Apply");
    assert_eq!(mf[0]["fieldsType"], "FieldsV1");
    assert_eq!(mf[0]["apiVersion"], "v1");
    assert!(mf[0]["fieldsV1"]["f:data"].is_object());
    assert!(mf[0]["fieldsV1"]["f:metadata"]["f:labels"].is_object());
    let o = s
        .patch(
            &t,
            Some("default"),
            "a",
            apply(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"y": "2"}}), "other"),
            None,
        )
        .unwrap();
    assert_eq!(o["data"], json!({"x": "1", "y": "2"}));
    assert_eq!(o["metadata"]["labels"]["l"], "1");
    assert_eq!(o["metadata"]["managedFields"].as_array().unwrap().len(), 2);
    let o = s
        .patch(
            &t,
            Some("default"),
            "a",
            apply(
                json!({"metadata": {"name": "a"}, "data": {"y": "3"}}),
                "other",
            ),
            None,
        )
        .unwrap();
    assert_eq!(o["data"]["y"], "3");
    assert_eq!(o["metadata"]["managedFields"].as_array().unwrap().len(), 2);
}

// ------------------------------------------------------------ scale

/// A custom resource's scale reads and writes the paths its CRD names:
/// replicas wherever they are kept, missing ones 0, and the selector as
/// the string at `labelSelectorPath`.
#[test]
fn a_custom_resources_scale_follows_its_crds_paths() {
    let s = store();
    let crd = json!({
        "metadata": {"name": "pools.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "pools", "singular": "pool", "kind": "Pool"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                          "subresources": {"status": {}, "scale": {
                              "specReplicasPath": ".spec.size",
                              "statusReplicasPath": ".status.ready",
                              "labelSelectorPath": ".status.selector"}}}],
        },
    });
    s.create(&crd_type(&s), None, crd, None).unwrap();
    let pools = rt(&s, "example.com", "v1", "pools");
    let pool = json!({"metadata": {"name": "p"}, "spec": {"replicas": 9}});
    s.create(&pools, Some("default"), pool, None).unwrap();
    let scale = s.get_scale(&pools, Some("default"), "p").unwrap();
    assert_eq!(
        (&scale["spec"]["replicas"], &scale["status"]["replicas"]),
        (&json!(0), &json!(0)),
        "spec.replicas is not the CRD's path"
    );
    assert!(scale["status"].get("selector").is_none());
    let status = merge(json!({"status": {"ready": 2, "selector": "app=pool"}}));
    s.patch(
        &pools,
        Some("default"),
        "p",
        status,
        Some(Subresource::Status),
    )
    .unwrap();
    let scaled = merge(json!({"spec": {"replicas": 3}}));
    let scale = s
        .patch(
            &pools,
            Some("default"),
            "p",
            scaled,
            Some(Subresource::Scale),
        )
        .unwrap();
    assert_eq!(scale["spec"]["replicas"], 3);
    assert_eq!(
        scale["status"],
        json!({"replicas": 2, "selector": "app=pool"})
    );
    let stored = s.get(&pools, Some("default"), "p").unwrap();
    assert_eq!(stored["spec"], json!({"replicas": 9, "size": 3}));
}

#[test]
fn scale_subresource_reads_and_writes_spec_replicas() {
    let s = store();
    let (d, _) = create_web(&s);
    let sc = s.get_scale(&d, Some("default"), "web").unwrap();
    assert_eq!(sc["kind"], "Scale");
    assert_eq!(sc["apiVersion"], "autoscaling/v1");
    assert_eq!(sc["spec"]["replicas"], 1);
    assert_eq!(sc["status"]["selector"], "app=web");
    let mut sc2 = sc.clone();
    sc2["spec"]["replicas"] = json!(4);
    let out = s
        .update(&d, Some("default"), "web", sc2, Some(Subresource::Scale))
        .unwrap()
        .0;
    assert_eq!(out["spec"]["replicas"], 4);
    let obj = s.get(&d, Some("default"), "web").unwrap();
    assert_eq!(obj["spec"]["replicas"], 4);
    assert_eq!(obj["metadata"]["generation"], 2);
    // Stale scale → 409.
    assert_eq!(
        s.update(&d, Some("default"), "web", sc, Some(Subresource::Scale))
            .unwrap_err()
            .code,
        409
    );
    let p = merge(json!({"spec": {"replicas": 6}}));
    let out = s
        .patch(&d, Some("default"), "web", p, Some(Subresource::Scale))
        .unwrap();
    assert_eq!(out["spec"]["replicas"], 6);
    assert_eq!(
        s.get_scale(&cm_type(&s), Some("default"), "x")
            .unwrap_err()
            .code,
        404
    );
}

// ------------------------------------------------------------ delete

#[test]
fn delete_returns_the_object_and_get_is_404() {
    let s = store();
    let t = cm_type(&s);
    s.create(&t, Some("default"), cm("a"), None).unwrap();
    let d = s
        .delete(&t, Some("default"), "a", &DeleteOptions::default())
        .unwrap();
    assert_eq!(d["metadata"]["name"], "a");
    assert_eq!(s.get(&t, Some("default"), "a").unwrap_err().code, 404);
    assert_eq!(
        s.delete(&t, Some("default"), "a", &DeleteOptions::default())
            .unwrap_err()
            .code,
        404
    );
}

#[test]
fn finalizers_delay_deletion() {
    let s = store();
    let t = cm_type(&s);
    s.create(
        &t,
        Some("default"),
        json!({"metadata": {"name": "a", "finalizers": ["x/y"]}}),
        None,
    )
    .unwrap();
    let mut w = s
        .watch(
            &t,
            Some("default"),
            &WatchParams {
                resource_version: Some(s.resource_version().to_string()),
                ..Default::default()
            },
        )
        .unwrap();
    let d = s
        .delete(&t, Some("default"), "a", &DeleteOptions::default())
        .unwrap();
    assert!(d["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(d["metadata"]["deletionGracePeriodSeconds"], 0);
    let o = s.get(&t, Some("default"), "a").unwrap();
    assert!(o["metadata"]["deletionTimestamp"].is_string());
    // Deleting again changes nothing.
    s.delete(&t, Some("default"), "a", &DeleteOptions::default())
        .unwrap();
    let p = merge(json!({"metadata": {"finalizers": null}}));
    s.patch(&t, Some("default"), "a", p, None).unwrap();
    assert_eq!(s.get(&t, Some("default"), "a").unwrap_err().code, 404);
    let ev = names(&drain(&mut w));
    assert_eq!(
        ev,
        vec![
            (WatchEventKind::Modified, "a".into()),
            (WatchEventKind::Deleted, "a".into())
        ]
    );
}

#[test]
fn delete_preconditions_mismatch_is_409() {
    let s = store();
    let t = cm_type(&s);
    let a = s.create(&t, Some("default"), cm("a"), None).unwrap();
    let delete = |options: DeleteOptions| s.delete(&t, Some("default"), "a", &options);
    let e = delete(DeleteOptions {
        precondition_uid: Some("other".into()),
        ..Default::default()
    })
    .unwrap_err();
    assert_eq!(e.code, 409);
    assert!(e.message.contains("Precondition failed: UID"));
    let e = delete(DeleteOptions {
        precondition_resource_version: Some("1".into()),
        ..Default::default()
    })
    .unwrap_err();
    assert_eq!(e.code, 409);
    delete(DeleteOptions {
        precondition_uid: a["metadata"]["uid"].as_str().map(str::to_string),
        precondition_resource_version: a["metadata"]["resourceVersion"]
            .as_str()
            .map(str::to_string),
        ..Default::default()
    })
    .unwrap();
}

fn owned(name: &str, owners: &[&Value]) -> Value {
    let refs: Vec<Value> = owners
        .iter()
        .map(|o| json!({"apiVersion": o["apiVersion"], "kind": o["kind"], "name": o["metadata"]["name"], "uid": o["metadata"]["uid"], "controller": true}))
        .collect();
    let container = json!([{"name": "c", "image": "i"}]);
    // A ReplicaSet owns Pods; a Deployment owns ReplicaSets.
    let spec = if owners.iter().any(|o| o["kind"] == "ReplicaSet") {
        json!({"containers": container})
    } else {
        json!({"selector": {"matchLabels": {"app": name}},
               "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": container}}})
    };
    json!({"metadata": {"name": name, "ownerReferences": refs}, "spec": spec})
}

#[test]
fn garbage_collects_dependents_of_deleted_owner() {
    let s = store();
    let (d, dep) = create_web(&s);
    let rs = rt(&s, "apps", "v1", "replicasets");
    let pods = rt(&s, "", "v1", "pods");
    let r = s
        .create(&rs, Some("default"), owned("web-1", &[&dep]), None)
        .unwrap();
    s.create(&pods, Some("default"), owned("web-1-a", &[&r]), None)
        .unwrap();
    let mut held = owned("web-1-b", &[&r]);
    held["metadata"]["finalizers"] = json!(["keep"]);
    s.create(&pods, Some("default"), held, None).unwrap();
    // A second owner that still exists keeps its dependent.
    let other = s
        .create(&cm_type(&s), Some("default"), cm("other"), None)
        .unwrap();
    s.create(&pods, Some("default"), owned("shared", &[&r, &other]), None)
        .unwrap();
    let mut w = watch_now(&s, &pods);
    s.delete(&d, Some("default"), "web", &DeleteOptions::default())
        .unwrap();
    assert_eq!(s.get(&rs, Some("default"), "web-1").unwrap_err().code, 404);
    assert_eq!(
        s.get(&pods, Some("default"), "web-1-a").unwrap_err().code,
        404
    );
    let b = s.get(&pods, Some("default"), "web-1-b").unwrap();
    assert!(b["metadata"]["deletionTimestamp"].is_string());
    // Its other owner left, the shared Pod stays, without the reference to
    // the owner that went.
    let shared = s.get(&pods, Some("default"), "shared").unwrap();
    let refs = shared["metadata"]["ownerReferences"].as_array().unwrap();
    assert_eq!(refs.len(), 1);
    assert_eq!(refs[0]["uid"], other["metadata"]["uid"]);
    let ev = names(&drain(&mut w));
    assert!(ev.contains(&(WatchEventKind::Deleted, "web-1-a".into())));
    assert!(ev.contains(&(WatchEventKind::Modified, "web-1-b".into())));
}

/// [`owned`], its references blocking their owners' deletion.
fn blocking(name: &str, owners: &[&Value]) -> Value {
    let mut object = owned(name, owners);
    for r in object["metadata"]["ownerReferences"]
        .as_array_mut()
        .unwrap()
    {
        r["blockOwnerDeletion"] = json!(true);
    }
    object
}

#[test]
fn orphan_propagation_answers_with_the_orphan_finalizer_then_removes_the_owner() {
    let s = store();
    let (d, dep) = create_web(&s);
    let rs = rt(&s, "apps", "v1", "replicasets");
    s.create(&rs, Some("default"), owned("web-1", &[&dep]), None)
        .unwrap();
    let mut w = watch_now(&s, &d);
    let answer = s
        .delete(
            &d,
            Some("default"),
            "web",
            &DeleteOptions {
                propagation_policy: Some(PropagationPolicy::Orphan),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(answer["metadata"]["finalizers"], json!(["orphan"]));
    assert!(answer["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(s.get(&d, Some("default"), "web").unwrap_err().code, 404);
    let r = s.get(&rs, Some("default"), "web-1").unwrap();
    assert!(r["metadata"].get("ownerReferences").is_none());
    let events: Vec<WatchEventKind> = drain(&mut w).into_iter().map(|(k, _)| k).collect();
    assert_eq!(events, [WatchEventKind::Modified, WatchEventKind::Deleted]);
}

#[test]
fn a_v1_replication_controller_orphans_its_dependents_unless_asked_otherwise() {
    let s = store();
    let rcs = rt(&s, "", "v1", "replicationcontrollers");
    let pods = rt(&s, "", "v1", "pods");
    let rc = json!({"metadata": {"name": "rc"}, "spec": {"selector": {"app": "a"},
        "template": {"metadata": {"labels": {"app": "a"}},
                     "spec": {"containers": [{"name": "c", "image": "i"}]}}}});
    let rc = s.create(&rcs, Some("default"), rc, None).unwrap();
    let mut pod = owned("p", &[]);
    pod["metadata"]["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "ReplicationController",
        "name": "rc", "uid": rc["metadata"]["uid"], "controller": true}]);
    pod["spec"] = json!({"containers": [{"name": "c", "image": "i"}]});
    s.create(&pods, Some("default"), pod, None).unwrap();
    let answer = s
        .delete(&rcs, Some("default"), "rc", &DeleteOptions::default())
        .unwrap();
    assert_eq!(answer["metadata"]["finalizers"], json!(["orphan"]));
    let left = s.get(&pods, Some("default"), "p").unwrap();
    assert!(left["metadata"].get("ownerReferences").is_none());
}

#[test]
fn foreground_propagation_deletes_blocking_dependents_before_their_owner() {
    let s = store();
    let (d, dep) = create_web(&s);
    let rs = rt(&s, "apps", "v1", "replicasets");
    let pods = rt(&s, "", "v1", "pods");
    let set = s
        .create(&rs, Some("default"), blocking("web-1", &[&dep]), None)
        .unwrap();
    // A blocking Pod held by its own finalizer, and one that does not block.
    let mut held = blocking("held", &[&set]);
    held["metadata"]["finalizers"] = json!(["f"]);
    s.create(&pods, Some("default"), held, None).unwrap();
    s.create(&pods, Some("default"), owned("free", &[&set]), None)
        .unwrap();
    let foreground = DeleteOptions {
        propagation_policy: Some(PropagationPolicy::Foreground),
        ..Default::default()
    };
    let answer = s.delete(&d, Some("default"), "web", &foreground).unwrap();
    assert_eq!(
        answer["metadata"]["finalizers"],
        json!(["foregroundDeletion"])
    );
    // The held Pod blocks the ReplicaSet, which blocks the Deployment.
    let waiting = s.get(&d, Some("default"), "web").unwrap();
    assert_eq!(
        waiting["metadata"]["finalizers"],
        json!(["foregroundDeletion"])
    );
    let set = s.get(&rs, Some("default"), "web-1").unwrap();
    assert_eq!(set["metadata"]["finalizers"], json!(["foregroundDeletion"]));
    // The Pod that does not block goes at once: its owner waits for none.
    assert_eq!(s.get(&pods, Some("default"), "free").unwrap_err().code, 404);
    // Its finalizer removed, the held Pod goes, then its owners in turn.
    let p = Patch {
        kind: PatchKind::Json,
        body: json!([{"op": "remove", "path": "/metadata/finalizers"}]),
    };
    s.patch(&pods, Some("default"), "held", p, None).unwrap();
    assert_eq!(s.get(&rs, Some("default"), "web-1").unwrap_err().code, 404);
    assert_eq!(s.get(&d, Some("default"), "web").unwrap_err().code, 404);
}

#[test]
fn a_dependent_of_two_owners_deleted_in_the_foreground_is_deleted_once() {
    let s = store();
    let t = cm_type(&s);
    let reference = |owner: &Value| {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "name": owner["metadata"]["name"],
               "uid": owner["metadata"]["uid"], "blockOwnerDeletion": true})
    };
    let po = s.create(&t, Some("default"), cm("po"), None).unwrap();
    let mut pd1 = cm("pd1");
    pd1["metadata"]["ownerReferences"] = json!([reference(&po)]);
    let pd1 = s.create(&t, Some("default"), pd1, None).unwrap();
    let mut pd2 = cm("pd2");
    pd2["metadata"]["ownerReferences"] = json!([reference(&po), reference(&pd1)]);
    s.create(&t, Some("default"), pd2, None).unwrap();
    let mut w = watch_now(&s, &t);
    let foreground = DeleteOptions {
        propagation_policy: Some(PropagationPolicy::Foreground),
        ..Default::default()
    };
    s.delete(&t, Some("default"), "po", &foreground).unwrap();
    let deleted: Vec<String> = names(&drain(&mut w))
        .into_iter()
        .filter(|(kind, _)| *kind == WatchEventKind::Deleted)
        .map(|(_, name)| name)
        .collect();
    assert_eq!(deleted, ["pd2", "pd1", "po"]);
}

#[test]
fn a_foreground_owner_is_released_when_its_blocking_dependent_lets_go() {
    let s = store();
    let t = cm_type(&s);
    let owner = s.create(&t, Some("default"), cm("owner"), None).unwrap();
    let mut held = cm("held");
    held["metadata"]["finalizers"] = json!(["f"]);
    held["metadata"]["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "ConfigMap",
        "name": "owner", "uid": owner["metadata"]["uid"], "blockOwnerDeletion": true}]);
    s.create(&t, Some("default"), held, None).unwrap();
    let foreground = DeleteOptions {
        propagation_policy: Some(PropagationPolicy::Foreground),
        ..Default::default()
    };
    s.delete(&t, Some("default"), "owner", &foreground).unwrap();
    assert!(s.get(&t, Some("default"), "owner").is_ok());
    // The dependent drops its reference: the owner waits no more.
    let p = Patch {
        kind: PatchKind::Merge,
        body: json!({"metadata": {"ownerReferences": null}}),
    };
    s.patch(&t, Some("default"), "held", p, None).unwrap();
    assert_eq!(s.get(&t, Some("default"), "owner").unwrap_err().code, 404);
}

#[test]
fn owners_in_a_cycle_are_deleted_in_the_foreground_without_end() {
    let s = store();
    let t = cm_type(&s);
    // One object that blocks its own deletion waits, as upstream's does.
    let alone = s.create(&t, Some("default"), cm("alone"), None).unwrap();
    let p = Patch {
        kind: PatchKind::Merge,
        body: json!({"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap",
            "name": "alone", "uid": alone["metadata"]["uid"], "blockOwnerDeletion": true}]}}),
    };
    s.patch(&t, Some("default"), "alone", p, None).unwrap();
    let foreground = DeleteOptions {
        propagation_policy: Some(PropagationPolicy::Foreground),
        ..Default::default()
    };
    s.delete(&t, Some("default"), "alone", &foreground).unwrap();
    // Two that own each other: the collector unblocks the cycle.
    let a = s.create(&t, Some("default"), cm("a"), None).unwrap();
    let mut b = cm("b");
    b["metadata"]["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "ConfigMap",
        "name": "a", "uid": a["metadata"]["uid"], "blockOwnerDeletion": true}]);
    let b = s.create(&t, Some("default"), b, None).unwrap();
    let p = Patch {
        kind: PatchKind::Merge,
        body: json!({"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap",
            "name": "b", "uid": b["metadata"]["uid"], "blockOwnerDeletion": true}]}}),
    };
    s.patch(&t, Some("default"), "a", p, None).unwrap();
    s.delete(&t, Some("default"), "a", &foreground).unwrap();
    assert_eq!(s.get(&t, Some("default"), "a").unwrap_err().code, 404);
    assert_eq!(s.get(&t, Some("default"), "b").unwrap_err().code, 404);
}

#[test]
fn a_second_delete_puts_its_policy_s_finalizer_in_place_of_the_first_s() {
    let s = store();
    let (d, _) = create_web(&s);
    let mut held = deployment("held");
    held["metadata"]["finalizers"] = json!(["orphan"]);
    s.create(&d, Some("default"), held, None).unwrap();
    let background = DeleteOptions {
        propagation_policy: Some(PropagationPolicy::Background),
        ..Default::default()
    };
    // A Background delete drops the `orphan` finalizer; none left, it goes.
    s.delete(&d, Some("default"), "held", &background).unwrap();
    assert_eq!(s.get(&d, Some("default"), "held").unwrap_err().code, 404);
    // A delete that starts a deletion bumps the generation.
    let mut kept = deployment("kept");
    kept["metadata"]["finalizers"] = json!(["f"]);
    let created = s.create(&d, Some("default"), kept, None).unwrap();
    let answer = s.delete(&d, Some("default"), "kept", &background).unwrap();
    assert_eq!(
        answer["metadata"]["generation"],
        created["metadata"]["generation"].as_i64().unwrap() + 1
    );
    let foreground = DeleteOptions {
        propagation_policy: Some(PropagationPolicy::Foreground),
        ..Default::default()
    };
    let again = s.delete(&d, Some("default"), "kept", &foreground).unwrap();
    assert_eq!(
        again["metadata"]["finalizers"],
        json!(["f", "foregroundDeletion"])
    );
    assert_eq!(
        again["metadata"]["generation"],
        answer["metadata"]["generation"]
    );
}

#[test]
fn a_foreground_dependent_with_another_owner_loses_its_reference_and_stays() {
    let s = store();
    let (d, dep) = create_web(&s);
    let other = s
        .create(&d, Some("default"), deployment("other"), None)
        .unwrap();
    let rs = rt(&s, "apps", "v1", "replicasets");
    s.create(
        &rs,
        Some("default"),
        blocking("shared", &[&dep, &other]),
        None,
    )
    .unwrap();
    let foreground = DeleteOptions {
        propagation_policy: Some(PropagationPolicy::Foreground),
        ..Default::default()
    };
    s.delete(&d, Some("default"), "web", &foreground).unwrap();
    assert_eq!(s.get(&d, Some("default"), "web").unwrap_err().code, 404);
    let shared = s.get(&rs, Some("default"), "shared").unwrap();
    let refs = shared["metadata"]["ownerReferences"].as_array().unwrap();
    assert_eq!(refs.len(), 1);
    assert_eq!(refs[0]["name"], "other");
}

#[test]
fn an_object_whose_owners_do_not_exist_is_collected_once_written() {
    let s = store();
    let t = cm_type(&s);
    let mut w = watch_now(&s, &t);
    let mut orphan = cm("orphan");
    orphan["metadata"]["ownerReferences"] =
        json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost", "uid": "never"}]);
    let created = s.create(&t, Some("default"), orphan, None).unwrap();
    assert_eq!(created["metadata"]["name"], "orphan");
    assert_eq!(s.get(&t, Some("default"), "orphan").unwrap_err().code, 404);
    assert_eq!(
        names(&drain(&mut w)),
        [
            (WatchEventKind::Added, "orphan".to_string()),
            (WatchEventKind::Deleted, "orphan".to_string())
        ]
    );
    // One owner that exists keeps it, without the dangling reference.
    let owner = s.create(&t, Some("default"), cm("owner"), None).unwrap();
    let mut kept = cm("kept");
    kept["metadata"]["ownerReferences"] = json!([
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost", "uid": "never"},
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]},
    ]);
    s.create(&t, Some("default"), kept, None).unwrap();
    let kept = s.get(&t, Some("default"), "kept").unwrap();
    assert_eq!(
        kept["metadata"]["ownerReferences"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    // An owner is looked up in the dependent's namespace: one elsewhere
    // with the right uid is absent.
    let ns = rt(&s, "", "v1", "namespaces");
    s.create(&ns, None, named("other"), None).unwrap();
    let mut elsewhere = cm("elsewhere");
    elsewhere["metadata"]["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "ConfigMap",
        "name": "owner", "uid": owner["metadata"]["uid"]}]);
    s.create(&t, Some("other"), elsewhere, None).unwrap();
    assert_eq!(s.get(&t, Some("other"), "elsewhere").unwrap_err().code, 404);
    // An owner of a kind not served cannot be looked up: the object stays.
    let mut unknown = cm("unknown");
    unknown["metadata"]["ownerReferences"] = json!([{"apiVersion": "example.com/v1",
        "kind": "Widget", "name": "w", "uid": "w-1"}]);
    s.create(&t, Some("default"), unknown, None).unwrap();
    assert!(s.get(&t, Some("default"), "unknown").is_ok());
}

#[test]
fn namespace_deletion_removes_its_objects() {
    let s = store();
    let ns = rt(&s, "", "v1", "namespaces");
    let t = cm_type(&s);
    s.create(&ns, None, named("x"), None).unwrap();
    s.create(&t, Some("x"), cm("a"), None).unwrap();
    s.create(&t, Some("x"), finalized("held"), None).unwrap();
    s.create(&t, Some("default"), cm("a"), None).unwrap();
    let out = s.delete(&ns, None, "x", &DeleteOptions::default()).unwrap();
    assert_eq!(out["status"]["phase"], "Terminating");
    assert!(out["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(s.get(&t, Some("x"), "a").unwrap_err().code, 404);
    assert!(s.get(&t, Some("x"), "held").unwrap()["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(
        s.get(&ns, None, "x").unwrap()["status"]["phase"],
        "Terminating"
    );
    // The last finalizer goes → the object goes → the namespace goes.
    let p = Patch {
        kind: PatchKind::Json,
        body: json!([{"op": "remove", "path": "/metadata/finalizers"}]),
    };
    s.patch(&t, Some("x"), "held", p, None).unwrap();
    assert_eq!(s.get(&ns, None, "x").unwrap_err().code, 404);
    assert!(s.get(&t, Some("default"), "a").is_ok());
    // An empty namespace goes at once.
    s.create(&ns, None, named("y"), None).unwrap();
    s.delete(&ns, None, "y", &DeleteOptions::default()).unwrap();
    assert_eq!(s.get(&ns, None, "y").unwrap_err().code, 404);
}

// ------------------------------------------------------------ CRDs

#[test]
fn crd_creation_serves_its_kind() {
    let s = store();
    let crds = crd_type(&s);
    let c = s.create(&crds, None, crd("Namespaced"), None).unwrap();
    let conds = c["status"]["conditions"].as_array().unwrap();
    for t in ["Established", "NamesAccepted"] {
        assert!(
            conds
                .iter()
                .any(|x| x["type"] == t && x["status"] == "True"),
            "{t}"
        );
    }
    assert_eq!(c["status"]["acceptedNames"]["kind"], "Widget");
    let v1 = rt(&s, "example.com", "v1", "widgets");
    assert!(v1.namespaced && v1.status_subresource && v1.scale_subresource);
    assert_eq!(v1.short_names, vec!["wg"]);
    assert_eq!(v1.list_kind, "WidgetList");
    let beta = rt(&s, "example.com", "v1beta1", "widgets");
    assert!(!beta.status_subresource);
    assert!(s.resource_type("example.com", "v0", "widgets").is_none());
    assert_eq!(
        s.resource_types()
            .iter()
            .filter(|t| t.group == "example.com")
            .count(),
        2
    );
    let o = s
        .create(
            &v1,
            Some("default"),
            json!({"metadata": {"name": "w"}, "spec": {"replicas": 2}}),
            None,
        )
        .unwrap();
    assert_eq!(o["apiVersion"], "example.com/v1");
    assert_eq!(o["kind"], "Widget");
    assert_eq!(
        s.get(&beta, Some("default"), "w").unwrap()["apiVersion"],
        "example.com/v1beta1"
    );
    assert_eq!(
        s.get_scale(&v1, Some("default"), "w").unwrap()["spec"]["replicas"],
        2
    );
    // Invalid CRDs are 422.
    let mut bad = crd("Namespaced");
    bad["metadata"]["name"] = json!("wrong");
    assert_eq!(s.create(&crds, None, bad, None).unwrap_err().code, 422);
}

#[test]
fn cluster_scoped_crd_ignores_namespaces() {
    let s = store();
    let w = serve_widgets(&s, "Cluster");
    assert!(!w.namespaced);
    let o = s.create(&w, None, named("c"), None).unwrap();
    assert!(o["metadata"].get("namespace").is_none());
    assert!(s.get(&w, None, "c").is_ok());
}

#[test]
fn crd_deletion_stops_serving_and_deletes_objects() {
    let s = store();
    let w = serve_widgets(&s, "Namespaced");
    let crds = crd_type(&s);
    s.create(&w, Some("default"), named("a"), None).unwrap();
    let mut watch = watch_now(&s, &w);
    s.delete(
        &crds,
        None,
        "widgets.example.com",
        &DeleteOptions::default(),
    )
    .unwrap();
    assert!(s.resource_type("example.com", "v1", "widgets").is_none());
    assert_eq!(s.get(&w, Some("default"), "a").unwrap_err().code, 404);
    assert_eq!(
        names(&drain(&mut watch)),
        vec![(WatchEventKind::Deleted, "a".into())]
    );
    let rt_now = tokio_test_block(async move { watch.next().await.is_none() });
    assert!(rt_now, "the watch ends");
    // Re-creating serves an empty kind.
    s.create(&crds, None, crd("Namespaced"), None).unwrap();
    assert!(
        s.list(&w, None, &ListParams::default())
            .unwrap()
            .items
            .is_empty()
    );
}

fn tokio_test_block<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

// ------------------------------------------------------------ list

#[test]
fn label_and_field_selectors_filter_lists() {
    let s = store();
    let t = cm_type(&s);
    for (n, app) in [("a", "web"), ("b", "db"), ("c", "web")] {
        s.create(&t, Some("default"), labelled(n, "app", app), None)
            .unwrap();
    }
    s.create(&t, Some("default"), cm("d"), None).unwrap();
    let p = |l: &str, f: &str| ListParams {
        label_selector: Some(l.into()),
        field_selector: Some(f.into()),
        ..Default::default()
    };
    assert_eq!(list_names(&s, &t, None, &p("app=web", "")), vec!["a", "c"]);
    assert_eq!(
        list_names(&s, &t, None, &p("app in (web,db)", "metadata.name!=a")),
        vec!["b", "c"]
    );
    assert_eq!(list_names(&s, &t, None, &p("!app", "")), vec!["d"]);
    assert_eq!(
        list_names(
            &s,
            &t,
            None,
            &p("", "metadata.namespace=default,metadata.name=b")
        ),
        vec!["b"]
    );
    let e = s.list(&t, None, &p("app in (web", "")).unwrap_err();
    assert_eq!(e.code, 400);
    assert_eq!(e.reason, "BadRequest");
    let e = s.list(&t, None, &p("", "spec.x=1")).unwrap_err();
    assert_eq!(e.code, 400);
    assert!(e.message.contains("spec.x"));
}

#[test]
fn continue_token_pages_over_a_consistent_snapshot() {
    let s = store();
    let t = cm_type(&s);
    create_cms(&s, &t, (0..10).map(|i| format!("c{i:02}")));
    let first = s.list(&t, None, &paged(4, None)).unwrap();
    assert_eq!(first.items.len(), 4);
    assert_eq!(first.remaining_item_count, Some(6));
    let list_rv = first.resource_version;
    // Writes after the first page do not show in later pages.
    s.delete(&t, Some("default"), "c05", &DeleteOptions::default())
        .unwrap();
    s.create(&t, Some("default"), cm("c99"), None).unwrap();
    let mut all: Vec<String> = first.items.iter().map(|o| name_of(o).to_string()).collect();
    let mut token = first.continue_token;
    while let Some(tok) = token {
        let page = s.list(&t, None, &paged(4, Some(tok))).unwrap();
        assert_eq!(page.resource_version, list_rv);
        all.extend(page.items.iter().map(|o| name_of(o).to_string()));
        token = page.continue_token;
    }
    let expected: Vec<String> = (0..10).map(|i| format!("c{i:02}")).collect();
    assert_eq!(all, expected);
    // Exactly `limit` items at the end: no token.
    let all10 = s.list(&t, Some("default"), &paged(10, None)).unwrap();
    assert!(all10.continue_token.is_none());
}

/// As kube-apiserver 1.28's watch cache: a list at resourceVersion "0"
/// (or "0" not older than) is served whole whatever the limit; with
/// another version, no version, or Exact it pages.
#[test]
fn a_list_at_version_zero_ignores_the_limit_as_the_watch_cache_does() {
    let s = store();
    let t = cm_type(&s);
    create_cms(&s, &t, (0..10).map(|i| format!("c{i:02}")));
    let at = |rv: Option<&str>, matching: Option<&str>| ListParams {
        resource_version: rv.map(String::from),
        resource_version_match: matching.map(String::from),
        ..paged(4, None)
    };
    for whole in [at(Some("0"), None), at(Some("0"), Some("NotOlderThan"))] {
        let page = s.list(&t, None, &whole).unwrap();
        assert_eq!(page.items.len(), 10, "{whole:?}");
        assert_eq!(page.continue_token, None);
        assert_eq!(page.remaining_item_count, None);
    }
    let current = s
        .list(&t, None, &ListParams::default())
        .unwrap()
        .resource_version;
    let current = current.to_string();
    for paged in [
        at(None, None),
        at(Some(&current), None),
        at(Some(&current), Some("NotOlderThan")),
        at(Some(&current), Some("Exact")),
    ] {
        let page = s.list(&t, None, &paged).unwrap();
        assert_eq!(page.items.len(), 4, "{paged:?}");
        assert!(page.continue_token.is_some(), "{paged:?}");
    }
}

#[test]
fn continue_token_after_compaction_is_410() {
    let s = store();
    let t = cm_type(&s);
    create_cms(&s, &t, (0..3).map(|i| format!("c{i}")));
    let first = s.list(&t, None, &paged(1, None)).unwrap();
    s.compact();
    let e = s
        .list(&t, None, &paged(1, first.continue_token))
        .unwrap_err();
    assert_eq!(e.code, 410);
    assert_eq!(e.reason, "Expired");
    assert_eq!(e.message, CONTINUE_EXPIRED_MESSAGE);
    let e = s
        .list(
            &t,
            None,
            &ListParams {
                continue_token: Some("garbage".into()),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(e.code, 400);
}

#[test]
fn continue_snapshots_are_bounded() {
    let s = Store::new(StoreConfig {
        snapshot_limit: 2,
        ..Default::default()
    });
    let t = cm_type(&s);
    create_cms(&s, &t, (0..3).map(|i| format!("c{i}")));
    let mut tokens = Vec::new();
    for i in 0..3 {
        tokens.push(s.list(&t, None, &paged(1, None)).unwrap().continue_token);
        s.create(&t, Some("default"), cm(&format!("x{i}")), None)
            .unwrap();
    }
    let page = |tok: Option<String>| s.list(&t, None, &paged(1, tok));
    assert_eq!(page(tokens[0].clone()).unwrap_err().code, 410);
    assert!(page(tokens[1].clone()).is_ok());
    assert!(page(tokens[2].clone()).is_ok());
}

/// An immutable Secret's data cannot change through `stringData`: the
/// server folds it into `data` before it validates the update.
#[test]
fn an_immutable_secrets_data_does_not_change_through_string_data() {
    let s = store();
    let t = rt(&s, "", "v1", "secrets");
    let secret = json!({"metadata": {"name": "s"}, "immutable": true, "stringData": {"a": "a"}});
    s.create(&t, Some("default"), secret, None).unwrap();
    let again = json!({"metadata": {"name": "s"}, "immutable": true, "data": {"a": "YQ=="}, "stringData": {"a": "changed"}});
    let e = s.update(&t, Some("default"), "s", again, None).unwrap_err();
    assert_eq!(e.code, 422);
    assert!(e.message.contains("data: Forbidden"), "{}", e.message);
    assert_eq!(
        s.get(&t, Some("default"), "s").unwrap()["data"]["a"],
        "YQ=="
    );
}

/// A Service update that edits `clusterIPs` is refused, one that leaves
/// both IP fields out keeps them, and one clearing `clusterIP` alone is a
/// change too.
#[test]
fn a_services_cluster_ips_stay_as_allocated() {
    let s = store();
    let t = rt(&s, "", "v1", "services");
    let svc = json!({"metadata": {"name": "svc"}, "spec": {"ports": [{"port": 80}]}});
    let created = s.create(&t, Some("default"), svc, None).unwrap();
    let ip = created["spec"]["clusterIP"].as_str().unwrap().to_string();
    let mut moved = created.clone();
    moved["spec"]["clusterIPs"] = json!(["10.96.9.9"]);
    let e = s
        .update(&t, Some("default"), "svc", moved, None)
        .unwrap_err();
    assert_eq!(e.code, 422, "{}", e.message);
    let bare = json!({"metadata": {"name": "svc"}, "spec": {"ports": [{"port": 81}]}});
    let (kept, _) = s.update(&t, Some("default"), "svc", bare, None).unwrap();
    assert_eq!(kept["spec"]["clusterIP"], ip);
    assert_eq!(kept["spec"]["clusterIPs"], json!([ip]));
}

/// `resourceVersionMatch=Exact` lists the state as it was at that
/// version, every later create, update and delete undone, until the
/// history that reaches back to it is compacted (then 410).
#[test]
fn an_exact_list_at_an_older_version_is_the_state_then() {
    let s = store();
    let t = cm_type(&s);
    s.create(&t, Some("default"), cm("a"), None).unwrap();
    s.create(&t, Some("default"), cm("b"), None).unwrap();
    let then = s.resource_version();
    let mut changed = s.get(&t, Some("default"), "a").unwrap();
    changed["data"] = json!({"k": "changed"});
    s.update(&t, Some("default"), "a", changed, None).unwrap();
    s.delete(&t, Some("default"), "b", &DeleteOptions::default())
        .unwrap();
    s.create(&t, Some("default"), cm("c"), None).unwrap();
    let exact = |rv: u64| ListParams {
        resource_version: Some(rv.to_string()),
        resource_version_match: Some("Exact".into()),
        ..Default::default()
    };
    let past = s.list(&t, None, &exact(then)).unwrap();
    assert_eq!(past.resource_version, then);
    let names: Vec<&str> = past
        .items
        .iter()
        .map(|o| o["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(past.items[0]["data"], cm("a")["data"]);
    // Paged, the later pages come from the same past.
    let first = s
        .list(
            &t,
            None,
            &ListParams {
                limit: Some(1),
                ..exact(then)
            },
        )
        .unwrap();
    let rest = s
        .list(
            &t,
            None,
            &ListParams {
                continue_token: first.continue_token.clone(),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(rest.items[0]["metadata"]["name"], "b");
    s.compact();
    assert_eq!(s.list(&t, None, &exact(then)).unwrap_err().code, 410);
}

#[test]
fn list_resource_version_semantics() {
    let s = store();
    let t = cm_type(&s);
    s.create(&t, Some("default"), cm("a"), None).unwrap();
    let cur = s.resource_version();
    let p = |rv: &str, m: Option<&str>| ListParams {
        resource_version: Some(rv.into()),
        resource_version_match: m.map(str::to_string),
        ..Default::default()
    };
    for rv in ["", "0", "1", &cur.to_string()] {
        assert_eq!(
            s.list(&t, None, &p(rv, None)).unwrap().resource_version,
            cur,
            "{rv}"
        );
    }
    let e = s
        .list(&t, None, &p(&(cur + 5).to_string(), None))
        .unwrap_err();
    assert_eq!(e.code, 504);
    assert_eq!(e.reason, "Timeout");
    assert_eq!(
        e.details.as_ref().unwrap()["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
    assert!(e.message.starts_with("Too large resource version"));
    assert_eq!(
        s.list(&t, None, &p(&cur.to_string(), Some("Exact")))
            .unwrap()
            .resource_version,
        cur
    );
    // Exact at a version before `a` existed: the state then, empty.
    let before = s.list(&t, None, &p("1", Some("Exact"))).unwrap();
    assert_eq!((before.resource_version, before.items.len()), (1, 0));
    assert_eq!(
        s.list(&t, None, &p("1", Some("NotOlderThan")))
            .unwrap()
            .resource_version,
        cur
    );
    assert_eq!(s.list(&t, None, &p("abc", None)).unwrap_err().code, 400);
}

// ------------------------------------------------------------ watch

fn watch_from(s: &Store, t: &ResourceType, rv: &str) -> Watch {
    s.watch(
        t,
        None,
        &WatchParams {
            resource_version: Some(rv.into()),
            ..Default::default()
        },
    )
    .unwrap()
}

/// A watch of `t` in every namespace from the store's current version.
fn watch_now(s: &Store, t: &ResourceType) -> Watch {
    watch_from(s, t, &s.resource_version().to_string())
}

#[test]
fn watch_replays_history_after_version_then_live() {
    let s = store();
    let t = cm_type(&s);
    let a = s.create(&t, Some("default"), cm("a"), None).unwrap();
    s.create(&t, Some("default"), cm("b"), None).unwrap();
    s.delete(&t, Some("default"), "a", &DeleteOptions::default())
        .unwrap();
    let mut w = watch_from(&s, &t, a["metadata"]["resourceVersion"].as_str().unwrap());
    s.create(&t, Some("default"), cm("c"), None).unwrap();
    assert_eq!(
        names(&drain(&mut w)),
        vec![
            (WatchEventKind::Added, "b".into()),
            (WatchEventKind::Deleted, "a".into()),
            (WatchEventKind::Added, "c".into()),
        ]
    );
}

#[test]
fn watch_without_version_starts_with_added_for_every_object() {
    let s = store();
    let t = cm_type(&s);
    s.create(&t, Some("default"), cm("a"), None).unwrap();
    s.create(&t, Some("kube-system"), cm("b"), None).unwrap();
    for rv in [None, Some(""), Some("0")] {
        let mut w = s
            .watch(
                &t,
                None,
                &WatchParams {
                    resource_version: rv.map(str::to_string),
                    ..Default::default()
                },
            )
            .unwrap();
        assert_eq!(
            names(&drain(&mut w)),
            vec![
                (WatchEventKind::Added, "a".into()),
                (WatchEventKind::Added, "b".into())
            ]
        );
    }
    let mut w = s
        .watch(&t, Some("kube-system"), &WatchParams::default())
        .unwrap();
    s.create(&t, Some("default"), cm("c"), None).unwrap();
    assert_eq!(
        names(&drain(&mut w)),
        vec![(WatchEventKind::Added, "b".into())]
    );
}

#[test]
fn watch_from_compacted_version_gets_410_error_event() {
    let s = store();
    let t = cm_type(&s);
    s.create(&t, Some("default"), cm("a"), None).unwrap();
    s.compact();
    let cur = s.resource_version();
    let mut w = watch_from(&s, &t, "1");
    let ev = drain(&mut w);
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].0, WatchEventKind::Error);
    let st = &ev[0].1;
    assert_eq!(st["kind"], "Status");
    assert_eq!(st["code"], 410);
    assert_eq!(st["reason"], "Expired");
    assert_eq!(
        st["message"],
        format!("too old resource version: 1 ({cur})")
    );
    assert!(tokio_test_block(async move { w.next().await.is_none() }));
    // The current version still works.
    let mut ok = watch_from(&s, &t, &cur.to_string());
    s.create(&t, Some("default"), cm("b"), None).unwrap();
    assert_eq!(
        names(&drain(&mut ok)),
        vec![(WatchEventKind::Added, "b".into())]
    );
}

#[test]
fn history_is_trimmed_to_its_limit() {
    let s = Store::new(StoreConfig {
        history_limit: 5,
        ..Default::default()
    });
    let t = cm_type(&s);
    create_cms(&s, &t, (0..10).map(|i| format!("c{i}")));
    let cur = s.resource_version();
    let mut old = watch_from(&s, &t, &(cur - 6).to_string());
    assert_eq!(drain(&mut old)[0].0, WatchEventKind::Error);
    let mut ok = watch_from(&s, &t, &(cur - 5).to_string());
    assert_eq!(drain(&mut ok).len(), 5);
}

#[test]
fn label_selector_transitions_become_added_and_deleted() {
    let s = store();
    let t = cm_type(&s);
    let mut w = s
        .watch(
            &t,
            None,
            &WatchParams {
                label_selector: Some("app=web".into()),
                ..Default::default()
            },
        )
        .unwrap();
    let start = s.resource_version();
    s.create(&t, Some("default"), labelled("a", "app", "db"), None)
        .unwrap();
    let set = |app: &str| merge(json!({"metadata": {"labels": {"app": app}}}));
    s.patch(&t, Some("default"), "a", set("web"), None).unwrap();
    s.patch(
        &t,
        Some("default"),
        "a",
        merge(json!({"data": {"x": "1"}})),
        None,
    )
    .unwrap();
    let left = s.patch(&t, Some("default"), "a", set("db"), None).unwrap();
    s.delete(&t, Some("default"), "a", &DeleteOptions::default())
        .unwrap();
    let expected = vec![
        (WatchEventKind::Added, "a".to_string()),
        (WatchEventKind::Modified, "a".to_string()),
        (WatchEventKind::Deleted, "a".to_string()),
    ];
    let events = drain(&mut w);
    assert_eq!(names(&events), expected);
    // Leaving the selector: the object as it last matched, at the version
    // of the change that made it leave (as the watch cache sends it).
    let deleted = &events[2].1;
    assert_eq!(deleted["metadata"]["labels"]["app"], "web");
    assert_eq!(deleted["data"]["x"], "1");
    assert_eq!(
        deleted["metadata"]["resourceVersion"],
        left["metadata"]["resourceVersion"]
    );
    // Replay applies the same transitions.
    let mut replay = s
        .watch(
            &t,
            None,
            &WatchParams {
                resource_version: Some(start.to_string()),
                label_selector: Some("app=web".into()),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(names(&drain(&mut replay)), expected);
}

#[test]
fn drop_watches_closes_every_stream() {
    let s = store();
    let t = cm_type(&s);
    let mut a = s.watch(&t, None, &WatchParams::default()).unwrap();
    let mut b = s
        .watch(
            &rt(&s, "", "v1", "namespaces"),
            None,
            &WatchParams::default(),
        )
        .unwrap();
    assert_eq!(s.watch_count(), 2);
    s.drop_watches();
    assert_eq!(s.watch_count(), 0);
    drain(&mut b);
    assert!(tokio_test_block(async move {
        a.next().await.is_none() && b.next().await.is_none()
    }));
}

#[test]
fn watch_from_future_version_waits_for_it() {
    let s = store();
    let t = cm_type(&s);
    let cur = s.resource_version();
    let mut w = watch_from(&s, &t, &(cur + 1).to_string());
    s.create(&t, Some("default"), cm("a"), None).unwrap();
    s.create(&t, Some("default"), cm("b"), None).unwrap();
    assert_eq!(
        names(&drain(&mut w)),
        vec![(WatchEventKind::Added, "b".into())]
    );
}

#[test]
fn bookmark_only_when_every_event_was_taken() {
    let s = store();
    let t = cm_type(&s);
    let mut w = watch_now(&s, &t);
    assert_eq!(w.bookmark(), Some(s.resource_version()));
    s.create(&t, Some("default"), cm("a"), None).unwrap();
    assert_eq!(w.bookmark(), None);
    drain(&mut w);
    assert_eq!(w.bookmark(), Some(s.resource_version()));
    // Writes to other types advance the version a bookmark may carry.
    s.create(
        &rt(&s, "", "v1", "secrets"),
        Some("default"),
        named("s"),
        None,
    )
    .unwrap();
    assert_eq!(w.bookmark(), Some(s.resource_version()));
    let b = bookmark_object(&t, 7);
    assert_eq!(
        b,
        json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"resourceVersion": "7"}})
    );
}

#[test]
fn async_watch_receives_live_events() {
    let s = store();
    let t = cm_type(&s);
    let mut w = watch_now(&s, &t);
    let s2 = s.clone();
    let t2 = t.clone();
    let got = tokio_test_block(async move {
        let writer = tokio::spawn(async move {
            s2.create(&t2, Some("default"), cm("a"), None).unwrap();
        });
        let ev = w.next().await.unwrap();
        writer.await.unwrap();
        ev
    });
    assert_eq!(got.kind, WatchEventKind::Added);
}

// ------------------------------------------------------------ performance

#[test]
fn ten_thousand_configmaps_page_and_watch_quickly() {
    let s = store();
    let t = cm_type(&s);
    let started = std::time::Instant::now();
    let mut w = s.watch(&t, None, &WatchParams::default()).unwrap();
    for i in 0..10_000 {
        s.create(&t, Some("default"), json!({"metadata": {"name": format!("cm-{i:05}"), "labels": {"i": (i % 7).to_string()}}, "data": {"k": "v"}}), None)
            .unwrap();
    }
    let mut count = 0;
    let mut token = None;
    loop {
        let page = s.list(&t, None, &paged(500, token)).unwrap();
        count += page.items.len();
        token = page.continue_token;
        if token.is_none() {
            break;
        }
    }
    assert_eq!(count, 10_000);
    assert_eq!(drain(&mut w).len(), 10_000);
    let mut replay = s.watch(&t, None, &WatchParams::default()).unwrap();
    assert_eq!(drain(&mut replay).len(), 10_000);
    let elapsed = started.elapsed();
    assert!(elapsed < std::time::Duration::from_secs(20), "{elapsed:?}");
}

// ------------------------------------------------------------ property

mod prop {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Create(u8, u8),
        Update(u8, u8),
        Delete(u8),
        Finalize(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..8, 0u8..3).prop_map(|(n, l)| Op::Create(n, l)),
            (0u8..8, 0u8..3).prop_map(|(n, l)| Op::Update(n, l)),
            (0u8..8).prop_map(Op::Delete),
            (0u8..8).prop_map(Op::Finalize),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn watch_replay_from_zero_equals_list(ops in proptest::collection::vec(op(), 1..60), with_selector in any::<bool>()) {
            let s = store();
            let t = cm_type(&s);
            let selector = with_selector.then(|| "l in (0,1)".to_string());
            let mut live = s.watch(&t, None, &WatchParams { label_selector: selector.clone(), ..Default::default() }).unwrap();
            let start = s.resource_version();
            for op in ops {
                let name = |n: u8| format!("o{n}");
                match op {
                    Op::Create(n, l) => {
                        let mut body = json!({"metadata": {"name": name(n), "labels": {"l": l.to_string()}}});
                        if l == 2 { body["metadata"]["finalizers"] = json!(["f"]); }
                        let _ = s.create(&t, Some("default"), body, None);
                    }
                    Op::Update(n, l) => {
                        let p = merge(json!({"metadata": {"labels": {"l": l.to_string()}}, "data": {"x": l.to_string()}}));
                        let _ = s.patch(&t, Some("default"), &name(n), p, None);
                    }
                    Op::Delete(n) => { let _ = s.delete(&t, Some("default"), &name(n), &DeleteOptions::default()); }
                    Op::Finalize(n) => {
                        let p = merge(json!({"metadata": {"finalizers": null}}));
                        let _ = s.patch(&t, Some("default"), &name(n), p, None);
                    }
                }
            }
            let listed: BTreeMap<String, Value> = s
                .list(&t, None, &ListParams { label_selector: selector.clone(), ..Default::default() })
                .unwrap()
                .items
                .iter()
                .map(|o| (name_of(o).to_string(), (**o).clone()))
                .collect();
            let mut paged = BTreeMap::new();
            let mut token = None;
            loop {
                let page = s
                    .list(&t, None, &ListParams { label_selector: selector.clone(), limit: Some(3), continue_token: token, ..Default::default() })
                    .unwrap();
                for o in &page.items {
                    paged.insert(name_of(o).to_string(), (**o).clone());
                }
                token = page.continue_token;
                if token.is_none() { break; }
            }
            prop_assert_eq!(&paged, &listed);
            let mut replay = s.watch(&t, None, &WatchParams { resource_version: Some(start.to_string()), label_selector: selector, ..Default::default() }).unwrap();
            for w in [&mut live, &mut replay] {
                let mut map = BTreeMap::new();
                for (kind, obj) in drain(w) {
                    let n = name_of(&obj).to_string();
                    match kind {
                        WatchEventKind::Added => { prop_assert!(map.insert(n, obj).is_none()); }
                        WatchEventKind::Modified => { prop_assert!(map.insert(n, obj).is_some()); }
                        WatchEventKind::Deleted => { prop_assert!(map.remove(&n).is_some()); }
                        WatchEventKind::Error | WatchEventKind::Bookmark => {
                            prop_assert!(false, "{kind:?} event")
                        }
                    }
                }
                prop_assert_eq!(&map, &listed);
            }
        }
    }
}

// ------------------------------------------------------------ wire forms and extras

/// A watch list (`sendInitialEvents=true`) sends the current objects as
/// ADDED and then a BOOKMARK annotated as their end, whatever version it
/// names; `false` sends none and starts at the current version.
#[test]
fn a_watch_list_sends_the_current_objects_then_marks_their_end() {
    let s = store();
    let t = cm_type(&s);
    s.create(&t, Some("default"), cm("a"), None).unwrap();
    let old = s.resource_version();
    s.create(&t, Some("default"), cm("b"), None).unwrap();
    let now = s.resource_version();
    let params = |rv: Option<u64>, send| WatchParams {
        resource_version: rv.map(|rv| rv.to_string()),
        send_initial_events: Some(send),
        ..Default::default()
    };
    for rv in [None, Some(old)] {
        let mut w = s.watch(&t, None, &params(rv, true)).unwrap();
        let events = drain(&mut w);
        let kinds: Vec<WatchEventKind> = events.iter().map(|(kind, _)| *kind).collect();
        assert_eq!(
            kinds,
            [
                WatchEventKind::Added,
                WatchEventKind::Added,
                WatchEventKind::Bookmark
            ],
            "{rv:?}"
        );
        let end = &events[2].1;
        assert_eq!(
            end["metadata"]["annotations"]["k8s.io/initial-events-end"],
            "true"
        );
        assert_eq!(end["metadata"]["resourceVersion"], now.to_string());
    }
    let mut quiet = s.watch(&t, None, &params(None, false)).unwrap();
    assert!(drain(&mut quiet).is_empty());
    s.create(&t, Some("default"), cm("c"), None).unwrap();
    let later = drain(&mut quiet);
    assert_eq!(later.len(), 1);
    assert_eq!(name_of(&later[0].1), "c");
}

#[test]
fn store_and_watch_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Store>();
    send_sync::<Arc<Store>>();
    send::<Watch>();
    send_sync::<ApiError>();
}

#[test]
fn list_body_and_watch_event_serialize_as_the_wire_forms() {
    let s = store();
    let t = cm_type(&s);
    s.create(&t, Some("default"), cm("a"), None).unwrap();
    s.create(&t, Some("default"), cm("b"), None).unwrap();
    let r = s.list(&t, None, &paged(1, None)).unwrap();
    let v = serde_json::to_value(ListBody { rt: &t, result: &r }).unwrap();
    assert_eq!(v["kind"], "ConfigMapList");
    assert_eq!(v["apiVersion"], "v1");
    assert_eq!(
        v["metadata"]["resourceVersion"],
        r.resource_version.to_string()
    );
    assert!(v["metadata"]["continue"].is_string());
    assert_eq!(v["metadata"]["remainingItemCount"], 1);
    assert_eq!(v["items"][0]["metadata"]["name"], "a");
    // A built-in kind's items lack their type, as the typed encoder
    // writes them; a custom resource's keep it, and a get has it.
    assert!(v["items"][0].get("kind").is_none() && v["items"][0].get("apiVersion").is_none());
    assert_eq!(
        s.get(&t, Some("default"), "a").unwrap()["kind"],
        "ConfigMap"
    );
    let widgets = serve_widgets(&s, "Namespaced");
    let widget =
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}});
    s.create(&widgets, Some("default"), widget, None).unwrap();
    let r = s.list(&widgets, None, &ListParams::default()).unwrap();
    let v = serde_json::to_value(ListBody {
        rt: &widgets,
        result: &r,
    })
    .unwrap();
    assert_eq!(
        (&v["items"][0]["kind"], &v["items"][0]["apiVersion"]),
        (&json!("Widget"), &json!("example.com/v1"))
    );
    assert_eq!(v["metadata"]["continue"], "", "an unstructured list's");
    let mut w = s.watch(&t, None, &WatchParams::default()).unwrap();
    let ev = serde_json::to_value(w.try_next().unwrap()).unwrap();
    assert_eq!(ev["type"], "ADDED");
    assert_eq!(ev["object"]["metadata"]["name"], "a");
    assert_eq!(bookmark_event(&t, 3)["type"], "BOOKMARK");
}

#[test]
fn status_subresource_of_a_kind_without_one_is_404() {
    let s = store();
    let t = cm_type(&s);
    let a = s.create(&t, Some("default"), cm("a"), None).unwrap();
    assert_eq!(
        s.update(&t, Some("default"), "a", a, Some(Subresource::Status))
            .unwrap_err()
            .code,
        404
    );
}

#[test]
fn delete_collection_deletes_what_the_list_selects() {
    let s = store();
    let t = cm_type(&s);
    for (n, l) in [("a", "x"), ("b", "y"), ("c", "x")] {
        s.create(&t, Some("default"), labelled(n, "l", l), None)
            .unwrap();
    }
    let out = s
        .delete_collection(
            &t,
            Some("default"),
            &ListParams {
                label_selector: Some("l=x".into()),
                ..Default::default()
            },
            &DeleteOptions::default(),
        )
        .unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(
        list_names(&s, &t, Some("default"), &ListParams::default()),
        vec!["b"]
    );
}

#[test]
fn unserved_type_is_404() {
    let s = store();
    let mut t = cm_type(&s);
    t.plural = "nothings".into();
    let e = s.get(&t, Some("default"), "a").unwrap_err();
    assert_eq!(e.code, 404);
    assert_eq!(
        e.message,
        "the server could not find the requested resource"
    );
}

#[test]
fn list_version_option_combinations_are_checked() {
    let s = store();
    let t = cm_type(&s);
    let p = |rv: Option<&str>, m: Option<&str>, c: Option<&str>| ListParams {
        resource_version: rv.map(str::to_string),
        resource_version_match: m.map(str::to_string),
        continue_token: c.map(str::to_string),
        ..Default::default()
    };
    assert_eq!(
        s.list(&t, None, &p(None, Some("Exact"), None))
            .unwrap_err()
            .code,
        422
    );
    assert_eq!(
        s.list(&t, None, &p(Some("0"), Some("Exact"), None))
            .unwrap_err()
            .code,
        422
    );
    assert_eq!(
        s.list(&t, None, &p(Some("1"), Some("Sometimes"), None))
            .unwrap_err()
            .code,
        422
    );
    assert!(
        s.list(&t, None, &p(Some("0"), Some("NotOlderThan"), None))
            .is_ok()
    );
    assert_eq!(
        s.list(&t, None, &p(Some("5"), None, Some("abc")))
            .unwrap_err()
            .code,
        400
    );
    assert_eq!(
        s.list(&t, None, &p(None, Some("Exact"), Some("abc")))
            .unwrap_err()
            .code,
        422
    );
}

#[test]
fn secret_string_data_is_encoded_into_data() {
    let s = store();
    let t = rt(&s, "", "v1", "secrets");
    let o = s
        .create(&t, Some("default"), json!({"metadata": {"name": "s"}, "data": {"a": "eA=="}, "stringData": {"b": "hello", "c": "hi!"}}), None)
        .unwrap();
    assert!(o.get("stringData").is_none());
    assert_eq!(
        o["data"],
        json!({"a": "eA==", "b": "aGVsbG8=", "c": "aGkh"})
    );
    let p = merge(json!({"stringData": {"a": "x"}}));
    let o = s.patch(&t, Some("default"), "s", p, None).unwrap();
    assert_eq!(o["data"]["a"], "eA==");
    assert!(o.get("stringData").is_none());
}

#[test]
fn reapplying_the_same_configuration_writes_nothing() {
    let s = store();
    let t = cm_type(&s);
    let apply = Patch {
        kind: PatchKind::Apply {
            field_manager: "m".into(),
            force: true,
        },
        body: json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"x": "1"}}),
    };
    let first = s
        .patch(&t, Some("default"), "a", apply.clone(), None)
        .unwrap();
    let rv = s.resource_version();
    let again = s.patch(&t, Some("default"), "a", apply, None).unwrap();
    assert_eq!(first, again);
    assert_eq!(s.resource_version(), rv);
}

#[test]
fn namespace_with_finalizers_goes_when_finalized_and_empty() {
    let s = store();
    let ns = rt(&s, "", "v1", "namespaces");
    let t = cm_type(&s);
    s.create(&ns, None, finalized("x"), None).unwrap();
    s.create(&t, Some("x"), finalized("held"), None).unwrap();
    s.delete(&ns, None, "x", &DeleteOptions::default()).unwrap();
    let p = merge(json!({"metadata": {"finalizers": null}}));
    s.patch(&ns, None, "x", p.clone(), None).unwrap();
    assert!(s.get(&ns, None, "x").is_ok(), "still holds an object");
    s.patch(&t, Some("x"), "held", p, None).unwrap();
    assert_eq!(s.get(&ns, None, "x").unwrap_err().code, 404);
}

#[test]
fn event_field_selectors_of_kubectl_describe_work() {
    let s = store();
    let ev = rt(&s, "", "v1", "events");
    s.create(&ev, Some("default"), json!({"metadata": {"name": "e1"}, "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default", "uid": "u1"}, "reason": "Started"}), None).unwrap();
    s.create(&ev, Some("default"), json!({"metadata": {"name": "e2"}, "involvedObject": {"kind": "Pod", "name": "q", "namespace": "default", "uid": "u2"}}), None).unwrap();
    let p = ListParams {
        field_selector: Some(
            "involvedObject.name=p,involvedObject.namespace=default,involvedObject.uid=u1".into(),
        ),
        ..Default::default()
    };
    assert_eq!(list_names(&s, &ev, Some("default"), &p), vec!["e1"]);
    // Configmaps have no such field.
    let e = s.list(&cm_type(&s), None, &p).unwrap_err();
    assert_eq!(e.code, 400);
    assert!(e.message.contains("involvedObject.name"), "{}", e.message);
}

#[test]
fn core_and_events_api_events_are_one_storage() {
    let s = store();
    let core = rt(&s, "", "v1", "events");
    let api = rt(&s, "events.k8s.io", "v1", "events");
    let mut watch = s
        .watch(&api, Some("default"), &WatchParams::default())
        .unwrap();
    // Recorded through the core API, seen through events.k8s.io.
    s.create(&core, Some("default"), json!({"metadata": {"name": "old"}, "involvedObject": {"kind": "Pod", "name": "p"}, "message": "started", "reason": "Started", "source": {"component": "kubelet"}, "count": 3}), None).unwrap();
    let seen = drain(&mut watch);
    assert_eq!(seen.len(), 1);
    let (kind, event) = &seen[0];
    assert_eq!(*kind, WatchEventKind::Added);
    assert_eq!(event["apiVersion"], "events.k8s.io/v1");
    assert_eq!(event["regarding"]["name"], "p");
    assert_eq!(event["note"], "started");
    assert_eq!(event["deprecatedSource"]["component"], "kubelet");
    assert_eq!(event["deprecatedCount"], 3);
    assert!(event.get("message").is_none() && event.get("involvedObject").is_none());
    // Recorded through events.k8s.io, read through the core API.
    let created = s.create(&api, Some("default"), json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "new"}, "eventTime": "2024-01-02T03:04:05.000000Z", "regarding": {"kind": "Pod", "name": "q"}, "note": "pulled", "reason": "Pulled", "action": "Pull", "reportingController": "kubelet", "reportingInstance": "node-1", "type": "Normal"}), None).unwrap();
    assert_eq!(created["apiVersion"], "events.k8s.io/v1");
    assert_eq!(created["note"], "pulled");
    let stored = s.get(&core, Some("default"), "new").unwrap();
    assert_eq!(stored["apiVersion"], "v1");
    assert_eq!(stored["involvedObject"]["name"], "q");
    assert_eq!(stored["message"], "pulled");
    assert_eq!(stored["reportingComponent"], "kubelet");
    assert_eq!(
        stored["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );
    // One list of both, under either API; field selectors by each API's names.
    let all = ListParams::default();
    assert_eq!(
        list_names(&s, &core, Some("default"), &all),
        vec!["new", "old"]
    );
    assert_eq!(
        list_names(&s, &api, Some("default"), &all),
        vec!["new", "old"]
    );
    let by = |f: &str| ListParams {
        field_selector: Some(f.into()),
        ..Default::default()
    };
    assert_eq!(
        list_names(&s, &api, None, &by("regarding.name=p")),
        vec!["old"]
    );
    assert_eq!(
        list_names(&s, &api, None, &by("reportingController=kubelet")),
        vec!["new"]
    );
    assert_eq!(
        list_names(&s, &core, None, &by("involvedObject.name=q")),
        vec!["new"]
    );
    assert_eq!(
        s.list(&core, None, &by("regarding.name=q"))
            .unwrap_err()
            .code,
        400
    );
    // A merge patch through events.k8s.io reaches the core Event's field,
    // which that API keeps immutable; through the core API it changes.
    let refused = s
        .patch(
            &api,
            Some("default"),
            "old",
            merge(json!({"note": "restarted"})),
            None,
        )
        .unwrap_err();
    assert_eq!(refused.code, 422);
    assert_eq!(
        refused.details.unwrap()["causes"][0]["field"],
        "message",
        "the server names the core Event's field"
    );
    s.patch(
        &core,
        Some("default"),
        "old",
        merge(json!({"message": "restarted"})),
        None,
    )
    .unwrap();
    assert_eq!(
        s.get(&api, Some("default"), "old").unwrap()["note"],
        "restarted"
    );
    // Deleted through one API, gone from both, and the other's watch saw it.
    drain(&mut watch);
    s.delete(&core, Some("default"), "new", &DeleteOptions::default())
        .unwrap();
    assert_eq!(s.get(&api, Some("default"), "new").unwrap_err().code, 404);
    let seen = drain(&mut watch);
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].0, WatchEventKind::Deleted);
    assert_eq!(seen[0].1["note"], "pulled");
}

#[test]
fn apply_without_field_manager_is_422() {
    let s = store();
    let p = Patch {
        kind: PatchKind::Apply {
            field_manager: String::new(),
            force: false,
        },
        body: json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}),
    };
    assert_eq!(
        s.patch(&cm_type(&s), Some("default"), "a", p, None)
            .unwrap_err()
            .code,
        422
    );
}

#[test]
fn fault_injection_errors_have_the_real_status_shape() {
    let st = ApiError::too_many_requests(2).to_status();
    assert_eq!(st["code"], 429);
    assert_eq!(st["reason"], "TooManyRequests");
    assert_eq!(st["details"]["retryAfterSeconds"], 2);
    let st = ApiError::internal("boom").to_status();
    assert_eq!(st["code"], 500);
    assert_eq!(st["reason"], "InternalError");
    assert_eq!(ApiError::unauthorized().code, 401);
}
