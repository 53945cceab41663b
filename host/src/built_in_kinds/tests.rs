//! The built-in kinds against k8s-openapi's own sources, and field paths
//! through them.

use std::path::Path;

use super::*;

/// One `impl crate::Resource for ...` of k8s-openapi's sources: its
/// group, version, kind and scope, and the module its file is in
/// (`api::apps::v1::deployment`).
struct OpenApiResource {
    group: String,
    version: String,
    kind: String,
    cluster_scoped: bool,
    subresource: bool,
    module: String,
}

/// Every resource type of the k8s-openapi (and API version feature)
/// this workspace builds, read from the crate's sources as Cargo
/// resolved them; discovery's own types (`apimachinery`) left out.
fn k8s_openapi_resources() -> Vec<OpenApiResource> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let run = |args: &[&str]| {
        let out = std::process::Command::new(&cargo)
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("run cargo");
        assert!(out.status.success(), "cargo {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    // This platform's packages only: the others were never downloaded.
    let about = run(&["-vV"]);
    let platform = about
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .expect("cargo names its host");
    let metadata = run(&[
        "metadata",
        "--format-version",
        "1",
        "--offline",
        "--filter-platform",
        platform,
    ]);
    let metadata: serde_json::Value = serde_json::from_str(&metadata).unwrap();
    let package = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "k8s-openapi")
        .expect("k8s-openapi among the packages");
    let node = metadata["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == package["id"])
        .expect("k8s-openapi resolved");
    let version = node["features"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f.as_str())
        .find(|f| f.starts_with("v1_"))
        .expect("an API version feature");
    let src = Path::new(package["manifest_path"].as_str().unwrap())
        .parent()
        .unwrap()
        .join("src")
        .join(version);
    let mut files = vec![src.clone()];
    let mut resources = Vec::new();
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let relative = path.strip_prefix(&src).unwrap().with_extension("");
        let module: Vec<&str> = relative.iter().map(|p| p.to_str().unwrap()).collect();
        if module[0] == "apimachinery" || module.last() == Some(&"mod") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for block in text.split("impl crate::Resource for ").skip(1) {
            let block = &block[..block.find('}').unwrap()];
            let constant = |name: &str| {
                let from = block
                    .find(&format!("const {name}: &'static str = \""))
                    .unwrap();
                let value = &block[from..];
                let value = &value[value.find('"').unwrap() + 1..];
                value[..value.find('"').unwrap()].to_string()
            };
            resources.push(OpenApiResource {
                group: constant("GROUP"),
                version: constant("VERSION"),
                kind: constant("KIND"),
                cluster_scoped: block.contains("type Scope = crate::ClusterResourceScope;"),
                subresource: block.contains("type Scope = crate::SubResourceScope;"),
                module: module.join("::"),
            });
        }
    }
    assert!(resources.len() > 50, "{} resources", resources.len());
    resources
}

/// The list holds every kind of k8s-openapi, and nothing else, each with
/// its scope and in the module its source file is in.
#[test]
fn every_kind_of_k8s_openapi_is_listed_with_its_scope() {
    let mut expected: Vec<(String, String, String, bool, String)> = k8s_openapi_resources()
        .into_iter()
        .filter(|r| !r.subresource)
        .map(|r| {
            let name = r.module.rsplit_once("::").unwrap().0.to_string();
            (r.group, r.version, r.kind, r.cluster_scoped, name)
        })
        .collect();
    expected.sort();
    let mut listed: Vec<(String, String, String, bool, String)> = built_in_kinds()
        .iter()
        .map(|k| {
            let module = k.rust_type.strip_prefix("k8s_openapi::").unwrap();
            let module = module.rsplit_once("::").unwrap().0.to_string();
            let owned = |s: &str| s.to_string();
            (
                owned(k.group),
                owned(k.version),
                owned(k.kind),
                k.cluster_scoped,
                module,
            )
        })
        .collect();
    listed.sort();
    assert_eq!(listed, expected);
    let namespace = built_in_kind(&Gvk::new("", "v1", "Namespace")).unwrap();
    assert!(namespace.cluster_scoped);
    assert_eq!(namespace.plural, "namespaces");
    let pod = built_in_kind(&Gvk::new("", "v1", "Pod")).unwrap();
    assert!(!pod.cluster_scoped);
    assert!(built_in_kind(&Gvk::new("example.com", "v1", "Widget")).is_none());
}

fn reach(kind: (&str, &str, &str), path: &str) -> Result<FieldEnd, FieldPathError> {
    let (group, version, kind) = kind;
    built_in_kind(&Gvk::new(group, version, kind))
        .unwrap()
        .field_path(path)
}

const DEPLOYMENT: (&str, &str, &str) = ("apps", "v1", "Deployment");

/// The error refusing `path` through a Deployment, which ends in `ending`.
fn deployment_error_ending(path: &str, ending: &str) -> FieldPathError {
    let error = reach(DEPLOYMENT, path).unwrap_err();
    assert!(error.to_string().ends_with(ending), "{error}");
    error
}

#[test]
fn paths_through_objects_lists_and_maps_reach_what_they_name() {
    let cases = [
        (
            DEPLOYMENT,
            "spec.template.spec.volumes.configMap.name",
            FieldEnd::String,
        ),
        (
            DEPLOYMENT,
            "spec.template.spec.containers.env.valueFrom.configMapKeyRef.name",
            FieldEnd::String,
        ),
        (
            DEPLOYMENT,
            "spec.template.spec.containers.args",
            FieldEnd::String,
        ),
        (DEPLOYMENT, "spec.replicas", FieldEnd::Scalar("an integer")),
        (DEPLOYMENT, "spec.paused", FieldEnd::Scalar("a boolean")),
        (DEPLOYMENT, "spec.template", FieldEnd::Object),
        (DEPLOYMENT, "metadata.labels", FieldEnd::Map),
        (DEPLOYMENT, "metadata.labels.app", FieldEnd::String),
        (DEPLOYMENT, "metadata.managedFields", FieldEnd::Object),
        (DEPLOYMENT, "metadata.managedFields.fieldsV1", FieldEnd::Any),
        (DEPLOYMENT, "metadata.creationTimestamp", FieldEnd::String),
        (DEPLOYMENT, "apiVersion", FieldEnd::String),
        (("", "v1", "ConfigMap"), "data", FieldEnd::Map),
        (("", "v1", "ConfigMap"), "binaryData.key", FieldEnd::String),
        (
            ("", "v1", "Service"),
            "spec.ports.targetPort",
            FieldEnd::Any,
        ),
        // A quantity reads any JSON.
        (("", "v1", "Pod"), "spec.overhead.cpu", FieldEnd::Any),
        (("", "v1", "Node"), "spec.podCIDRs", FieldEnd::String),
        (
            ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "spec.versions.schema.openAPIV3Schema.properties.spec.type",
            FieldEnd::String,
        ),
    ];
    for (kind, path, end) in cases {
        assert_eq!(reach(kind, path), Ok(end), "{kind:?} {path}");
    }
}

#[test]
fn every_kind_walks_to_its_name() {
    for kind in built_in_kinds() {
        assert_eq!(
            kind.field_path("metadata.name"),
            Ok(FieldEnd::String),
            "{}",
            kind.rust_type
        );
    }
}

#[test]
fn a_misspelt_path_names_the_field_it_lacks_and_the_nearest_one() {
    let error = reach(DEPLOYMENT, "spec.template.spec.volume.configMap.nme").unwrap_err();
    assert_eq!(error.at, "spec.template.spec");
    assert_eq!(
        error.to_string(),
        "field path \"spec.template.spec.volume.configMap.nme\": Deployment's spec.template.spec (PodSpec) has no field \"volume\"; did you mean \"volumes\"?"
    );
    deployment_error_ending(
        "spec.template.spec.volumes.configMap.nme",
        "Deployment's spec.template.spec.volumes.configMap (ConfigMapVolumeSource) has no field \"nme\"; did you mean \"name\"?",
    );
    deployment_error_ending(
        "sepc",
        "a Deployment (Deployment) has no field \"sepc\"; did you mean \"spec\"?",
    );
    // Nothing near: every field is listed.
    let error = reach(DEPLOYMENT, "spec.colour").unwrap_err();
    assert!(
        error.to_string().contains(
            "(DeploymentSpec) has no field \"colour\"; its fields are minReadySeconds, paused,"
        ),
        "{error}"
    );
}

#[test]
fn a_path_below_a_value_without_fields_says_what_the_value_is() {
    let error = deployment_error_ending(
        "spec.replicas.count",
        "Deployment's spec.replicas is an integer, which has no field \"count\"",
    );
    assert_eq!(
        *error.problem,
        Problem::Below {
            segment: "count".into(),
            end: FieldEnd::Scalar("an integer")
        }
    );
    deployment_error_ending(
        "metadata.labels.app.name",
        "Deployment's metadata.labels.app is a string, which has no field \"name\"",
    );
}

#[test]
fn edit_distance_counts_insertions_deletions_and_substitutions() {
    assert_eq!(edit_distance("", ""), 0);
    assert_eq!(edit_distance("volume", "volumes"), 1);
    assert_eq!(edit_distance("nme", "name"), 1);
    assert_eq!(edit_distance("sepc", "spec"), 2);
    assert_eq!(edit_distance("kitten", "sitting"), 3);
    let fields = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    assert_eq!(
        closest("colour", &fields(&["color", "colours"])),
        Some("color")
    );
    assert_eq!(closest("xyz", &fields(&["spec", "status"])), None);
}
