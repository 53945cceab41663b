//! The `Foo` custom resource (`samplecontroller.k8s.io/v1alpha1`, namespaced,
//! plural `foos`, with a status subresource; `artifacts/crd.yaml` defines
//! it). A custom resource becomes usable with the SDK's typed API by
//! implementing k8s-openapi's `Resource` (its group, version, kind, plural
//! and scope) and `Metadata` (access to its `ObjectMeta`) by hand, next to
//! serde's derives. `apiVersion` and `kind` need not be fields: the SDK
//! fills them in when it writes.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::{Metadata, NamespaceResourceScope, Resource};
use serde::{Deserialize, Serialize};

/// A Foo: "run a Deployment named `spec.deploymentName` with `spec.replicas` replicas".
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Foo {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: FooSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<FooStatus>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FooSpec {
    #[serde(default)]
    pub deployment_name: String,
    /// Optional, as the `*int32` of the original: without it the
    /// Deployment's replicas are left to the Deployment's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FooStatus {
    #[serde(default)]
    pub available_replicas: i32,
}

impl Resource for Foo {
    const API_VERSION: &'static str = "samplecontroller.k8s.io/v1alpha1";
    const GROUP: &'static str = "samplecontroller.k8s.io";
    const KIND: &'static str = "Foo";
    const VERSION: &'static str = "v1alpha1";
    const URL_PATH_SEGMENT: &'static str = "foos";
    type Scope = NamespaceResourceScope;
}

impl Metadata for Foo {
    type Ty = ObjectMeta;

    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}
