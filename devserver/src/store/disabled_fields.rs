//! Fields behind feature gates that kube-apiserver v1.33 leaves off, dropped
//! from a written pod spec as the strategies' `dropDisabledFields` drop them
//! before validation, unless the object being updated already used them:
//! image volumes (`ImageVolume`, beta and off in v1.33), each with the
//! mounts of every container that name it (`dropImageVolumes`), and a
//! projected volume's `clusterTrustBundle` sources
//! (`ClusterTrustBundleProjection`, beta and off).

use serde_json::Value;

use super::defaults::containers_mut;

/// Drops the disabled fields from the pod spec of `object`, written as
/// `group`/`kind` over `old` (none for a create).
pub fn drop(group: &str, kind: &str, object: &mut Value, old: Option<&Value>) {
    let Some(pointer) = pod_spec_pointer(group, kind) else {
        return;
    };
    let old_spec = old.and_then(|old| old.pointer(pointer));
    let Some(spec) = object.pointer_mut(pointer) else {
        return;
    };
    if !old_spec.is_some_and(uses_image_volumes) {
        drop_image_volumes(spec);
    }
    if !old_spec.is_some_and(uses_cluster_trust_bundles) {
        for volume in volumes_mut(spec) {
            for source in projected_sources_mut(volume) {
                if let Some(source) = source.as_object_mut() {
                    source.remove("clusterTrustBundle");
                }
            }
        }
    }
}

/// `dropImageVolumes`: the image volumes, and the mounts naming them.
fn drop_image_volumes(spec: &mut Value) {
    let names: Vec<String> = volumes(spec)
        .iter()
        .filter(|volume| is_image_volume(volume))
        .filter_map(|volume| {
            volume
                .get("name")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .collect();
    if let Some(volumes) = spec.get_mut("volumes").and_then(Value::as_array_mut) {
        volumes.retain(|volume| !is_image_volume(volume));
    }
    for container in containers_mut(spec) {
        if let Some(mounts) = container
            .get_mut("volumeMounts")
            .and_then(Value::as_array_mut)
        {
            mounts.retain(|mount| {
                !mount
                    .get("name")
                    .and_then(Value::as_str)
                    .is_some_and(|name| names.iter().any(|n| n == name))
            });
        }
    }
}

fn is_image_volume(volume: &Value) -> bool {
    volume.get("image").is_some_and(|v| !v.is_null())
}

/// Where a kind keeps its pod spec.
fn pod_spec_pointer(group: &str, kind: &str) -> Option<&'static str> {
    match (group, kind) {
        ("", "Pod") => Some("/spec"),
        ("", "ReplicationController")
        | ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet")
        | ("batch", "Job") => Some("/spec/template/spec"),
        ("batch", "CronJob") => Some("/spec/jobTemplate/spec/template/spec"),
        _ => None,
    }
}

fn volumes(spec: &Value) -> &[Value] {
    spec.get("volumes")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn volumes_mut(spec: &mut Value) -> impl Iterator<Item = &mut Value> {
    spec.get_mut("volumes")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}

fn projected_sources_mut(volume: &mut Value) -> impl Iterator<Item = &mut Value> {
    volume
        .pointer_mut("/projected/sources")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}

/// `imageVolumesInUse`.
fn uses_image_volumes(spec: &Value) -> bool {
    volumes(spec).iter().any(is_image_volume)
}

/// `hasClusterTrustBundleProjection`.
fn uses_cluster_trust_bundles(spec: &Value) -> bool {
    volumes(spec).iter().any(|volume| {
        volume
            .pointer("/projected/sources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|source| {
                source
                    .get("clusterTrustBundle")
                    .is_some_and(|b| !b.is_null())
            })
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_new_pod_spec_loses_image_volumes_their_mounts_and_trust_bundle_projections() {
        let spec = json!({"volumes": [
            {"name": "tools", "image": {"reference": "tools:1"}},
            {"name": "certs", "projected": {"sources": [
                {"clusterTrustBundle": {"signerName": "example.com/ca", "path": "ca.pem"}},
                {"configMap": {"name": "extra"}},
            ]}},
        ], "containers": [{"name": "app", "volumeMounts": [
            {"name": "tools", "mountPath": "/tools"}, {"name": "certs", "mountPath": "/certs"}]}]});
        let mut deployment = json!({"spec": {"template": {"spec": spec}}});
        drop("apps", "Deployment", &mut deployment, None);
        let dropped = &deployment["spec"]["template"]["spec"];
        assert_eq!(
            dropped["volumes"],
            json!([
                {"name": "certs", "projected": {"sources": [{}, {"configMap": {"name": "extra"}}]}},
            ])
        );
        assert_eq!(
            dropped["containers"][0]["volumeMounts"],
            json!([{"name": "certs", "mountPath": "/certs"}])
        );
        // An update of an object that used them keeps them.
        let old = json!({"spec": spec});
        let mut pod = json!({"spec": spec});
        drop("", "Pod", &mut pod, Some(&old));
        assert_eq!(pod["spec"], spec);
        // Other kinds are left as they are.
        let mut config_map = json!({"data": {"image": "x"}});
        drop("", "ConfigMap", &mut config_map, None);
        assert_eq!(config_map, json!({"data": {"image": "x"}}));
    }
}
