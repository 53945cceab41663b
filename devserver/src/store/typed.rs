//! Built-in kinds read as kube-apiserver's typed decoder reads them: into
//! their API types (k8s-openapi's, of the Kubernetes version the dev server
//! serves), so a field the type lacks is unknown, and a value of another
//! type is a 400. Unknown fields are warned about, refused under
//! `fieldValidation=Strict`, and dropped from what is stored, as the
//! decoder drops them; custom resources' unknown fields are their schema's
//! (`schema`), but for their metadata's, which `ObjectMeta` reads here too.

use k8s_openapi::api::{
    apps, autoscaling, batch, coordination, core, discovery, events, networking, policy, rbac,
    scheduling, storage,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::ResourceType;

/// The fields of `body` that the kind's API type lacks, as the server names
/// them (`spec.template.spec.containers[0].imagePullPolicyX`), sorted; none
/// for a kind without a type here (custom resources). Strategic merge
/// directives (`$patch`, ...) are not fields. `Err`: why the type cannot
/// read `body` (a value of the wrong type, say), naming the field.
pub fn read(rt: &ResourceType, body: &Value) -> Result<Vec<String>, String> {
    let read = match (rt.group.as_str(), rt.kind.as_str()) {
        ("", "Namespace") => read_as::<core::v1::Namespace>,
        ("", "ConfigMap") => read_as::<core::v1::ConfigMap>,
        ("", "Secret") => read_as::<core::v1::Secret>,
        ("", "Pod") => read_as::<core::v1::Pod>,
        ("", "Service") => read_as::<core::v1::Service>,
        ("", "ServiceAccount") => read_as::<core::v1::ServiceAccount>,
        ("", "Event") => read_as::<core::v1::Event>,
        ("", "Node") => read_as::<core::v1::Node>,
        ("", "PersistentVolume") => read_as::<core::v1::PersistentVolume>,
        ("", "PersistentVolumeClaim") => read_as::<core::v1::PersistentVolumeClaim>,
        ("", "Endpoints") => read_as::<core::v1::Endpoints>,
        ("", "ReplicationController") => read_as::<core::v1::ReplicationController>,
        ("", "ResourceQuota") => read_as::<core::v1::ResourceQuota>,
        ("", "LimitRange") => read_as::<core::v1::LimitRange>,
        ("events.k8s.io", "Event") => read_as::<events::v1::Event>,
        ("apps", "Deployment") => read_as::<apps::v1::Deployment>,
        ("apps", "ReplicaSet") => read_as::<apps::v1::ReplicaSet>,
        ("apps", "StatefulSet") => read_as::<apps::v1::StatefulSet>,
        ("apps", "DaemonSet") => read_as::<apps::v1::DaemonSet>,
        ("batch", "Job") => read_as::<batch::v1::Job>,
        ("batch", "CronJob") => read_as::<batch::v1::CronJob>,
        ("autoscaling", "HorizontalPodAutoscaler") => {
            read_as::<autoscaling::v2::HorizontalPodAutoscaler>
        }
        ("policy", "PodDisruptionBudget") => read_as::<policy::v1::PodDisruptionBudget>,
        ("discovery.k8s.io", "EndpointSlice") => read_as::<discovery::v1::EndpointSlice>,
        ("networking.k8s.io", "Ingress") => read_as::<networking::v1::Ingress>,
        ("networking.k8s.io", "NetworkPolicy") => read_as::<networking::v1::NetworkPolicy>,
        ("networking.k8s.io", "IngressClass") => read_as::<networking::v1::IngressClass>,
        ("storage.k8s.io", "StorageClass") => read_as::<storage::v1::StorageClass>,
        ("scheduling.k8s.io", "PriorityClass") => read_as::<scheduling::v1::PriorityClass>,
        ("coordination.k8s.io", "Lease") => read_as::<coordination::v1::Lease>,
        ("rbac.authorization.k8s.io", "Role") => read_as::<rbac::v1::Role>,
        ("rbac.authorization.k8s.io", "RoleBinding") => read_as::<rbac::v1::RoleBinding>,
        ("rbac.authorization.k8s.io", "ClusterRole") => read_as::<rbac::v1::ClusterRole>,
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => {
            read_as::<rbac::v1::ClusterRoleBinding>
        }
        ("apiextensions.k8s.io", "CustomResourceDefinition") => read_as::<CustomResourceDefinition>,
        _ => return Ok(custom_resource_metadata(body)),
    };
    read(body)
}

/// The fields of a custom resource's `metadata` that `ObjectMeta` lacks
/// (`metadata.foo`), which apiextensions-apiserver drops and warns about
/// as it reads the metadata; its schema prunes the rest. A metadata the
/// type cannot read is left to the checks after.
fn custom_resource_metadata(body: &Value) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Metadata {
        #[serde(rename = "metadata")]
        _metadata: Option<ObjectMeta>,
    }
    let Some(metadata) = body.get("metadata") else {
        return Vec::new();
    };
    read_as::<Metadata>(&serde_json::json!({ "metadata": metadata })).unwrap_or_default()
}

fn read_as<T: DeserializeOwned>(body: &Value) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut note = |path: serde_ignored::Path| {
        let field = field_path(&path);
        if !field.split('.').any(|part| part.starts_with('$')) {
            fields.push(field);
        }
    };
    let ignored = serde_ignored::Deserializer::new(body, &mut note);
    serde_path_to_error::deserialize::<_, T>(ignored).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            e.inner().to_string()
        } else {
            format!("{path}: {}", e.inner())
        }
    })?;
    fields.sort();
    Ok(fields)
}

/// A path as the server writes it: fields joined by `.`, list indexes in
/// brackets.
fn field_path(path: &serde_ignored::Path) -> String {
    use serde_ignored::Path;
    match path {
        Path::Root => String::new(),
        Path::Seq { parent, index } => format!("{}[{index}]", field_path(parent)),
        Path::Map { parent, key } => {
            let parent = field_path(parent);
            if parent.is_empty() {
                key.clone()
            } else {
                format!("{parent}.{key}")
            }
        }
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => field_path(parent),
    }
}

/// Drops `fields` (as [`read`] names them) from `object`.
pub fn drop_fields(object: &mut Value, fields: &[String]) {
    for field in fields {
        let mut node = &mut *object;
        let mut parts = split(field).peekable();
        while let Some(part) = parts.next() {
            let last = parts.peek().is_none();
            let next = match (&part, &mut *node) {
                (Part::Field(name), Value::Object(map)) if last => {
                    map.remove(*name);
                    break;
                }
                (Part::Field(name), Value::Object(map)) => map.get_mut(*name),
                (Part::Index(i), Value::Array(items)) if !last => items.get_mut(*i),
                _ => None,
            };
            match next {
                Some(next) => node = next,
                None => break,
            }
        }
    }
}

enum Part<'a> {
    Field(&'a str),
    Index(usize),
}

/// `a.b[2].c` as `a`, `b`, `2`, `c`.
fn split(field: &str) -> impl Iterator<Item = Part<'_>> {
    field.split('.').flat_map(|segment| {
        let (name, indexes) = segment.split_once('[').unwrap_or((segment, ""));
        let indexes = indexes
            .split('[')
            .filter_map(|i| i.trim_end_matches(']').parse().ok())
            .map(Part::Index);
        std::iter::once(Part::Field(name)).chain(indexes.collect::<Vec<_>>())
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::store::kinds::{self, builtin_type as builtin};

    #[test]
    fn fields_a_kind_s_type_lacks_are_unknown_and_dropped() {
        let deployments = builtin("deployments");
        let mut body = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "bogus": 1},
            "spec": {"replicas": 2, "extra": {"a": 1}, "selector": {},
                     "template": {"spec": {"containers": [
                         {"name": "a", "image": "i"},
                         {"name": "b", "image": "i", "imagePullPolicyX": "Always"}]}}}});
        let unknown = read(&deployments, &body).unwrap();
        assert_eq!(
            unknown,
            [
                "metadata.bogus",
                "spec.extra",
                "spec.template.spec.containers[1].imagePullPolicyX"
            ]
        );
        drop_fields(&mut body, &unknown);
        assert_eq!(read(&deployments, &body).unwrap(), Vec::<String>::new());
        assert_eq!(body["spec"]["replicas"], 2);
        assert_eq!(
            body["spec"]["template"]["spec"]["containers"][1]["name"],
            "b"
        );
        // A patch's part, and strategic merge directives.
        let patch = json!({"spec": {"replicas": 3, "$retainKeys": ["replicas"], "nope": 1}});
        assert_eq!(read(&deployments, &patch).unwrap(), ["spec.nope"]);
        // A value of the wrong type: the type cannot read it.
        assert_eq!(
            read(&deployments, &json!({"spec": {"replicas": "2"}})).unwrap_err(),
            "spec.replicas: invalid type: string \"2\", expected i32"
        );
        // Custom resources have their schema instead.
        let mut widgets = builtin("configmaps");
        widgets.group = "example.com".into();
        widgets.kind = "Widget".into();
        assert_eq!(read(&widgets, &json!({"x": 1})), Ok(Vec::new()));
    }

    #[test]
    fn every_built_in_kind_the_dev_server_serves_has_its_type() {
        for rt in kinds::builtin_types() {
            let object = json!({"apiVersion": rt.api_version(), "kind": rt.kind,
                                "metadata": {"name": "x"}, "unknownTopLevel": true});
            assert_eq!(
                read(&rt, &object),
                Ok(vec!["unknownTopLevel".to_string()]),
                "{}/{}",
                rt.group,
                rt.kind
            );
        }
    }
}
