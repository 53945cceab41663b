//! Kubernetes' sample-controller
//! (<https://github.com/kubernetes/sample-controller>, `controller.go`) as a
//! recon reconciler: every `Foo` gets a Deployment named
//! `spec.deploymentName` in its namespace, running `spec.replicas` nginx
//! pods, and the Foo's `status.availableReplicas` follows the Deployment's.
//! [`SampleController::reconcile`] is the original `syncHandler`, step by
//! step; the host provides what the Go controller wires by hand (informers
//! on Foos and Deployments, mapping a Deployment's change to its
//! controlling Foo, the rate-limited workqueue, the event recorder).

#![allow(
    clippy::disallowed_names,
    reason = "the custom resource is called Foo, and a Foo is a `foo`"
)]

mod foo;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use k8s_openapi::Resource;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use recon_guest_sdk::{
    Action, Context, Error, EventType, Manifest, Reconciler, Request, Result, Verb,
};

pub use foo::{Foo, FooSpec, FooStatus};

/// The event reason when a Foo is synced.
pub const SUCCESS_SYNCED: &str = "Synced";
/// The event reason when a Foo's Deployment exists but belongs to someone else.
pub const ERR_RESOURCE_EXISTS: &str = "ErrResourceExists";
/// The event note when a Foo is synced.
pub const MESSAGE_RESOURCE_SYNCED: &str = "Foo synced successfully";

/// The event note when the Deployment `name` exists but is not this Foo's.
pub fn message_resource_exists(name: &str) -> String {
    format!("Resource {name:?} already exists and is not managed by Foo")
}

pub struct SampleController;

impl Reconciler for SampleController {
    fn manifest() -> Manifest {
        Manifest::new::<Foo>("sample-controller")
            .owns::<Deployment>()
            .writes::<Deployment>(&[Verb::Create, Verb::Replace])
            .writes::<Foo>(&[Verb::UpdateStatus])
            .records_events()
    }

    fn reconcile(ctx: &Context<'_>, request: Request) -> Result<Action> {
        let key = &request.key;
        let namespace = key.namespace.as_deref();

        // The Foo may no longer exist, in which case we stop processing.
        let Some(foo) = ctx.get::<Foo>(namespace, &key.name)? else {
            ctx.error(
                "Foo referenced by item in work queue no longer exists",
                &[("objectReference", key)],
            );
            return Ok(Action::Done);
        };

        let deployment_name = &foo.spec.deployment_name;
        if deployment_name.is_empty() {
            // Absorb the error: a requeue would not help. The next change
            // to the Foo queues it again.
            ctx.error(
                "Deployment name missing from object reference",
                &[("objectReference", key)],
            );
            return Ok(Action::Done);
        }

        // The Deployment named in the Foo's spec; create it if it is missing.
        let deployment = match ctx.get::<Deployment>(namespace, deployment_name)? {
            Some(deployment) => deployment,
            None => ctx.create(&new_deployment(&foo))?,
        };

        // A Deployment this Foo does not control is someone else's: warn and fail.
        if !is_controlled_by(&deployment, &foo) {
            let message = message_resource_exists(deployment_name);
            ctx.event(
                &foo,
                EventType::Warning,
                ERR_RESOURCE_EXISTS,
                "Sync",
                &message,
            )?;
            return Err(Error::AlreadyExists(message));
        }

        // Follow the Foo's replicas (the API server defaults a Deployment's to 1).
        let deployment = match foo.spec.replicas {
            Some(desired)
                if desired
                    != deployment
                        .spec
                        .as_ref()
                        .and_then(|s| s.replicas)
                        .unwrap_or(1) =>
            {
                ctx.debug(
                    "Update deployment resource",
                    &[
                        ("desiredReplicas", &desired),
                        ("deployment", &deployment_name),
                    ],
                );
                ctx.replace(&new_deployment(&foo))?
            }
            _ => deployment,
        };

        // Finally, the Foo's status reflects the current state of the world.
        update_foo_status(ctx, &foo, &deployment)?;

        ctx.event(
            &foo,
            EventType::Normal,
            SUCCESS_SYNCED,
            "Sync",
            MESSAGE_RESOURCE_SYNCED,
        )?;
        Ok(Action::Done)
    }
}

recon_guest_sdk::export_reconciler!(SampleController);

/// `metav1.IsControlledBy`: the Deployment's controller reference is the Foo.
fn is_controlled_by(deployment: &Deployment, foo: &Foo) -> bool {
    let controller = deployment
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true));
    match (controller, &foo.metadata.uid) {
        (Some(owner), Some(uid)) => &owner.uid == uid,
        _ => false,
    }
}

/// Writes the Deployment's available replicas into a copy of the Foo's
/// status (never modify what the cache returned).
fn update_foo_status(ctx: &Context<'_>, foo: &Foo, deployment: &Deployment) -> Result<Foo> {
    let mut foo_copy = foo.clone();
    foo_copy.status = Some(FooStatus {
        available_replicas: deployment
            .status
            .as_ref()
            .and_then(|s| s.available_replicas)
            .unwrap_or(0),
    });
    ctx.update_status(&foo_copy)
}

/// The Deployment a Foo asks for: nginx pods labelled `app: nginx` and
/// `controller: <foo>`, controlled by the Foo.
pub fn new_deployment(foo: &Foo) -> Deployment {
    let foo_name = foo.metadata.name.clone().unwrap_or_default();
    let labels = BTreeMap::from([
        ("app".to_string(), "nginx".to_string()),
        ("controller".to_string(), foo_name.clone()),
    ]);
    Deployment {
        metadata: ObjectMeta {
            name: Some(foo.spec.deployment_name.clone()),
            namespace: foo.metadata.namespace.clone(),
            owner_references: Some(vec![OwnerReference {
                api_version: Foo::API_VERSION.to_string(),
                kind: Foo::KIND.to_string(),
                name: foo_name,
                uid: foo.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..ObjectMeta::default()
        },
        spec: Some(DeploymentSpec {
            replicas: foo.spec.replicas,
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "nginx".to_string(),
                        image: Some("nginx:latest".to_string()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }),
        status: None,
    }
}
