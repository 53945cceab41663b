use serde_json::{Value, json};

use super::*;
use crate::store::kinds::builtin_type as builtin;

/// A custom resource type with `schema`.
fn custom(schema: Value) -> ResourceType {
    let mut rt = builtin("configmaps");
    rt.group = "example.com".into();
    rt.kind = "Widget".into();
    rt.plural = "widgets".into();
    rt.schema = Some(std::sync::Arc::new(schema));
    rt
}

/// `manager` applies `config` to `live` (`None`: the apply creates).
fn run(
    rt: &ResourceType,
    live: Option<&Value>,
    manager: &str,
    config: Value,
    force: bool,
) -> Result<Value, ApiError> {
    let request = Apply {
        manager,
        force,
        config: &config,
        subresource: None,
    };
    match live {
        Some(live) => apply(live, &request, rt),
        None => {
            let mut object = config.clone();
            object["metadata"]["managedFields"] =
                json!([created_by(manager, "Apply", &config, rt, None)]);
            Ok(object)
        }
    }
}

fn managers(object: &Value) -> Vec<(String, Value)> {
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["manager"].as_str().unwrap().to_string(),
                e["fieldsV1"].clone(),
            )
        })
        .collect()
}

fn cm(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data})
}

#[test]
fn managers_of_different_fields_share_the_object_each_owning_its_own() {
    let rt = builtin("configmaps");
    let a = run(&rt, None, "a", cm(json!({"x": "1"})), false).unwrap();
    let both = run(&rt, Some(&a), "b", cm(json!({"y": "2"})), false).unwrap();
    assert_eq!(both["data"], json!({"x": "1", "y": "2"}));
    assert_eq!(
        managers(&both),
        [
            ("a".to_string(), json!({"f:data": {"f:x": {}}})),
            ("b".to_string(), json!({"f:data": {"f:y": {}}}))
        ]
    );
    let entry = &both["metadata"]["managedFields"][1];
    assert_eq!(entry["operation"], "Apply");
    assert_eq!(entry["apiVersion"], "v1");
    assert_eq!(entry["fieldsType"], "FieldsV1");
}

#[test]
fn changing_a_field_another_manager_owns_conflicts_unless_forced() {
    let rt = builtin("configmaps");
    let a = run(&rt, None, "a", cm(json!({"x": "1", "y": "1"})), false).unwrap();
    // The same value: no conflict, both own it.
    let shared = run(&rt, Some(&a), "b", cm(json!({"x": "1"})), false).unwrap();
    assert_eq!(managers(&shared)[1].1, json!({"f:data": {"f:x": {}}}));
    let err = run(&rt, Some(&a), "b", cm(json!({"x": "2"})), false).unwrap_err();
    assert_eq!((err.code, err.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"a\": .data.x"
    );
    assert_eq!(
        err.details.unwrap()["causes"],
        json!([{"type": "FieldManagerConflict", "message": "conflict with \"a\"", "field": ".data.x"}])
    );
    let err = run(&rt, Some(&a), "b", cm(json!({"x": "2", "y": "2"})), false).unwrap_err();
    assert_eq!(
        err.message,
        "Apply failed with 2 conflicts: conflicts with \"a\":\n- .data.x\n- .data.y"
    );
    // Forced: the value and the field move to b.
    let forced = run(&rt, Some(&a), "b", cm(json!({"x": "2"})), true).unwrap();
    assert_eq!(forced["data"], json!({"x": "2", "y": "1"}));
    assert_eq!(
        managers(&forced),
        [
            ("a".to_string(), json!({"f:data": {"f:y": {}}})),
            ("b".to_string(), json!({"f:data": {"f:x": {}}}))
        ]
    );
}

/// A ConfigMap whose `x`, `y` and `z` manager `a` applied.
fn xyz_by_a(rt: &ResourceType) -> Value {
    run(
        rt,
        None,
        "a",
        cm(json!({"x": "1", "y": "1", "z": "1"})),
        false,
    )
    .unwrap()
}

#[test]
fn fields_a_manager_stops_applying_go_unless_another_owns_them() {
    let rt = builtin("configmaps");
    let a = xyz_by_a(&rt);
    let b = run(&rt, Some(&a), "b", cm(json!({"z": "1"})), false).unwrap();
    let dropped = run(&rt, Some(&b), "a", cm(json!({"x": "1"})), false).unwrap();
    assert_eq!(
        dropped["data"],
        json!({"x": "1", "z": "1"}),
        "y removed, z kept for b"
    );
    assert_eq!(managers(&dropped)[0].1, json!({"f:data": {"f:x": {}}}));
    // Re-applying the same configuration changes nothing, not even a time.
    let again = run(&rt, Some(&dropped), "a", cm(json!({"x": "1"})), false).unwrap();
    assert_eq!(again, dropped);
}

fn deployment(containers: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
           "spec": {"template": {"spec": {"containers": containers}}}})
}

#[test]
fn associative_lists_merge_and_are_owned_item_by_item() {
    let rt = builtin("deployments");
    let apply = |live: Option<&Value>, manager: &str, name: &str, image: &str| {
        let containers = json!([{"name": name, "image": image}]);
        run(&rt, live, manager, deployment(containers), false)
    };
    let a = apply(None, "a", "app", "app:1").unwrap();
    let b = apply(Some(&a), "b", "sidecar", "proxy:1").unwrap();
    assert_eq!(
        b["spec"]["template"]["spec"]["containers"],
        json!([{"name": "app", "image": "app:1"}, {"name": "sidecar", "image": "proxy:1"}])
    );
    assert_eq!(
        managers(&b)[1].1,
        json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
            "k:{\"name\":\"sidecar\"}": {".": {}, "f:name": {}, "f:image": {}}}}}}})
    );
    let err = apply(Some(&b), "b", "app", "app:2").unwrap_err();
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"a\": .spec.template.spec.containers[name=\"app\"].image"
    );
    // b stops applying its sidecar: the item goes.
    let gone = apply(Some(&b), "b", "app", "app:1").unwrap();
    assert_eq!(
        gone["spec"]["template"]["spec"]["containers"],
        json!([{"name": "app", "image": "app:1"}])
    );
}

/// A list only the kind's OpenAPI schema declares associative (a Pod's
/// scheduling gates, keyed by name), and one it declares atomic (its
/// tolerations, which a strategic merge key does not name either).
#[test]
fn built_in_list_types_come_from_the_kind_s_openapi_schema() {
    let rt = builtin("pods");
    let pod = |spec: Value| json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec});
    let gate = |name: &str| json!({"schedulingGates": [{"name": name}]});
    let a = run(&rt, None, "a", pod(gate("a.example.com/quota")), false).unwrap();
    let b = run(&rt, Some(&a), "b", pod(gate("b.example.com/zone")), false).unwrap();
    assert_eq!(
        b["spec"]["schedulingGates"],
        json!([{"name": "a.example.com/quota"}, {"name": "b.example.com/zone"}])
    );
    assert_eq!(
        managers(&b)[1].1,
        json!({"f:spec": {"f:schedulingGates": {
            "k:{\"name\":\"b.example.com/zone\"}": {".": {}, "f:name": {}}}}})
    );
    let toleration = |key: &str| json!({"tolerations": [{"key": key, "operator": "Exists"}]});
    let a = run(&rt, None, "a", pod(toleration("x")), false).unwrap();
    let err = run(&rt, Some(&a), "b", pod(toleration("y")), false).unwrap_err();
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"a\": .spec.tolerations"
    );
}

/// A Deployment's selector, a LabelSelector, is an atomic map: owned
/// whole, so another manager's different selector conflicts with it as
/// one field.
#[test]
fn an_atomic_map_is_owned_and_replaced_whole() {
    let rt = builtin("deployments");
    let selector = |labels: Value| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
               "spec": {"selector": {"matchLabels": labels}}})
    };
    let a = run(&rt, None, "a", selector(json!({"app": "web"})), false).unwrap();
    assert_eq!(managers(&a)[0].1, json!({"f:spec": {"f:selector": {}}}));
    let err = run(
        &rt,
        Some(&a),
        "b",
        selector(json!({"app": "web", "tier": "front"})),
        false,
    )
    .unwrap_err();
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"a\": .spec.selector"
    );
    let forced = run(&rt, Some(&a), "b", selector(json!({"tier": "front"})), true).unwrap();
    assert_eq!(
        forced["spec"]["selector"],
        json!({"matchLabels": {"tier": "front"}})
    );
}

/// An owner reference is an atomic item of an associative list: owned as
/// its key, and replaced whole.
#[test]
fn an_atomic_list_item_is_owned_and_replaced_whole() {
    let rt = builtin("configmaps");
    let owned = |owner: Value| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "c", "ownerReferences": [owner]}})
    };
    let owner = |name: &str| json!({"apiVersion": "v1", "kind": "Pod", "name": name, "uid": "u1"});
    let mut controller = owner("p");
    controller["controller"] = json!(true);
    let a = run(&rt, None, "a", owned(controller), false).unwrap();
    assert_eq!(
        managers(&a)[0].1,
        json!({"f:metadata": {"f:ownerReferences": {"k:{\"uid\":\"u1\"}": {}}}})
    );
    let err = run(&rt, Some(&a), "b", owned(owner("q")), false).unwrap_err();
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"a\": .metadata.ownerReferences[uid=\"u1\"]"
    );
    let forced = run(&rt, Some(&a), "b", owned(owner("q")), true).unwrap();
    assert_eq!(
        forced["metadata"]["ownerReferences"],
        json!([{"apiVersion": "v1", "kind": "Pod", "name": "q", "uid": "u1"}])
    );
}

#[test]
fn ports_are_keyed_by_number_and_protocol_tcp_when_omitted() {
    let rt = builtin("deployments");
    let apply = |live: Option<&Value>, manager: &str, ports: Value| {
        let mut container = json!({"name": "dns", "image": "dns:1"});
        if !ports.is_null() {
            container["ports"] = ports;
        }
        run(&rt, live, manager, deployment(json!([container])), false)
    };
    let a = apply(None, "a", json!([{"containerPort": 53, "name": "dns-tcp"}])).unwrap();
    // Another manager's 53/UDP is another item: no conflict, both stay.
    let b = apply(
        Some(&a),
        "b",
        json!([{"containerPort": 53, "protocol": "UDP", "name": "dns-udp"}]),
    )
    .unwrap();
    let ports = &b["spec"]["template"]["spec"]["containers"][0]["ports"];
    assert_eq!(
        *ports,
        json!([{"containerPort": 53, "name": "dns-tcp"},
               {"containerPort": 53, "protocol": "UDP", "name": "dns-udp"}])
    );
    let owned = |object: &Value, i: usize| {
        managers(object)[i].1["f:spec"]["f:template"]["f:spec"]["f:containers"]
            ["k:{\"name\":\"dns\"}"]["f:ports"]
            .clone()
    };
    assert_eq!(
        owned(&b, 0),
        json!({"k:{\"containerPort\":53,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}, "f:name": {}}})
    );
    assert_eq!(
        owned(&b, 1),
        json!({"k:{\"containerPort\":53,\"protocol\":\"UDP\"}": {".": {}, "f:containerPort": {}, "f:protocol": {}, "f:name": {}}})
    );
    // Naming the TCP port's protocol is the same item: b changing its name
    // conflicts with a.
    let err = apply(
        Some(&b),
        "b",
        json!([{"containerPort": 53, "protocol": "UDP", "name": "dns-udp"},
               {"containerPort": 53, "protocol": "TCP", "name": "renamed"}]),
    )
    .unwrap_err();
    assert!(
        err.message.contains(r#"conflict with "a""#),
        "{}",
        err.message
    );
    assert!(err.message.contains(".name"), "{}", err.message);
    // a stops applying its port: only the UDP one is left.
    let gone = apply(Some(&b), "a", Value::Null).unwrap();
    assert_eq!(
        gone["spec"]["template"]["spec"]["containers"][0]["ports"],
        json!([{"containerPort": 53, "protocol": "UDP", "name": "dns-udp"}])
    );
}

#[test]
fn a_custom_resource_s_list_map_key_default_stands_for_an_omitted_key() {
    let rt = custom(
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "listeners": {"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["port", "protocol"],
                      "items": {"type": "object", "properties": {
                          "port": {"type": "integer"},
                          "protocol": {"type": "string", "default": "HTTP"}}}}}}}}),
    );
    let widget = |listeners: Value| {
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w"}, "spec": {"listeners": listeners}})
    };
    let a = run(
        &rt,
        None,
        "a",
        widget(json!([{"port": 80, "protocol": "HTTP", "x": 1}])),
        false,
    )
    .unwrap();
    // The same item, its protocol omitted: b's change conflicts with a.
    let err = run(
        &rt,
        Some(&a),
        "b",
        widget(json!([{"port": 80, "x": 2}])),
        false,
    )
    .unwrap_err();
    assert!(
        err.message.contains(r#"conflict with "a""#),
        "{}",
        err.message
    );
    let forced = run(
        &rt,
        Some(&a),
        "b",
        widget(json!([{"port": 80, "x": 2}])),
        true,
    )
    .unwrap();
    assert_eq!(
        forced["spec"]["listeners"],
        json!([{"port": 80, "protocol": "HTTP", "x": 2}])
    );
}

#[test]
fn a_custom_resource_s_list_types_come_from_its_schema() {
    let rt = custom(
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                  "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object"}},
        "args": {"type": "array", "items": {"type": "string"}}}}}}),
    );
    let widget = |spec: Value| json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec});
    let a = run(
        &rt,
        None,
        "a",
        widget(json!({"tags": ["x"], "ports": [{"name": "web", "port": 80}], "args": ["1"]})),
        false,
    )
    .unwrap();
    let b = run(
        &rt,
        Some(&a),
        "b",
        widget(json!({"tags": ["y"], "ports": [{"name": "metrics", "port": 9090}]})),
        false,
    )
    .unwrap();
    assert_eq!(b["spec"]["tags"], json!(["x", "y"]));
    assert_eq!(
        b["spec"]["ports"],
        json!([{"name": "web", "port": 80}, {"name": "metrics", "port": 9090}])
    );
    assert_eq!(
        managers(&b)[1].1,
        json!({"f:spec": {"f:tags": {"v:\"y\"": {}},
                          "f:ports": {"k:{\"name\":\"metrics\"}": {".": {}, "f:name": {}, "f:port": {}}}}})
    );
    // An atomic list is one field: replacing it conflicts.
    let err = run(&rt, Some(&b), "b", widget(json!({"args": ["2"]})), false).unwrap_err();
    assert!(
        err.message.ends_with("conflict with \"a\": .spec.args"),
        "{}",
        err.message
    );
    // A set item a manager stops applying goes.
    let dropped = run(
        &rt,
        Some(&b),
        "a",
        widget(json!({"ports": [{"name": "web", "port": 80}], "args": ["1"]})),
        false,
    )
    .unwrap();
    assert_eq!(dropped["spec"]["tags"], json!(["y"]));
    assert_eq!(
        FieldSet::from_v1(&managers(&dropped)[0].1).to_v1(),
        managers(&dropped)[0].1,
        "FieldsV1 reads back as written"
    );
}

#[test]
fn an_update_manager_conflicts_by_name_operation_and_version() {
    let rt = builtin("configmaps");
    let mut live = cm(json!({"x": "1"}));
    live["metadata"]["managedFields"] = json!([{
        "manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "v1",
        "time": "2024-01-02T03:04:05Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:x": {}}}}]);
    let err = run(&rt, Some(&live), "kubectl", cm(json!({"x": "2"})), false).unwrap_err();
    assert_eq!(
        err.message,
        "Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using v1 at 2024-01-02T03:04:05Z: .data.x"
    );
}

#[test]
fn set_operations_keep_what_each_side_owns() {
    let a = FieldSet::from_v1(&json!({"f:a": {}, "f:m": {"f:x": {}, "f:y": {}},
                                       "f:l": {"k:{\"n\":1}": {".": {}, "f:n": {}, "f:v": {}}}}));
    let b = FieldSet::from_v1(&json!({"f:m": {"f:y": {}}, "f:l": {"k:{\"n\":1}": {"f:v": {}}}}));
    assert_eq!(
        a.minus(&b, false).to_v1(),
        json!({"f:a": {}, "f:m": {"f:x": {}}, "f:l": {"k:{\"n\":1}": {".": {}, "f:n": {}}}})
    );
    // For removal, an item another manager has fields of stays.
    assert_eq!(
        a.minus(&b, true).to_v1(),
        json!({"f:a": {}, "f:m": {"f:x": {}}, "f:l": {"k:{\"n\":1}": {"f:n": {}}}})
    );
    assert_eq!(
        a.intersect(&b).to_v1(),
        json!({"f:m": {"f:y": {}}, "f:l": {"k:{\"n\":1}": {"f:v": {}}}})
    );
    assert_eq!(b.union(&a).to_v1(), a.to_v1());
}

#[test]
fn an_update_owns_what_it_changes_and_takes_it_from_everyone_else() {
    let rt = builtin("configmaps");
    let a = xyz_by_a(&rt);
    // An editor changes x, adds w and removes z.
    let mut edited = cm(json!({"x": "2", "y": "1", "w": "1"}));
    edited["metadata"]["managedFields"] = a["metadata"]["managedFields"].clone();
    record_update(&a, &mut edited, "editor", &rt, None);
    assert_eq!(
        managers(&edited),
        [
            ("a".to_string(), json!({"f:data": {"f:y": {}}})),
            (
                "editor".to_string(),
                json!({"f:data": {"f:w": {}, "f:x": {}}})
            )
        ]
    );
    let entry = &edited["metadata"]["managedFields"][1];
    assert_eq!(
        (entry["operation"].as_str(), entry["apiVersion"].as_str()),
        (Some("Update"), Some("v1"))
    );
    // The applier now conflicts with the editor over x.
    let err = run(
        &rt,
        Some(&edited),
        "a",
        cm(json!({"x": "1", "y": "1"})),
        false,
    )
    .unwrap_err();
    assert!(
        err.message
            .contains("conflict with \"editor\" using v1 at "),
        "{}",
        err.message
    );
    // A write that changes nothing records nothing.
    let mut same = edited.clone();
    record_update(&edited, &mut same, "someone", &rt, None);
    assert_eq!(same, edited);
}
