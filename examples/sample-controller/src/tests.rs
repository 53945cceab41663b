//! Each branch of the sync handler, through the SDK's fake cluster.

use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus};
use recon_guest_sdk::testing::{FakeCluster, LogLine};
use recon_guest_sdk::{Action, Error, Event, EventType, Level, ObjectKey, Verb, gvk_of};

use super::*;

fn foo(name: &str, deployment_name: &str, replicas: Option<i32>) -> Foo {
    Foo {
        metadata: ObjectMeta {
            namespace: Some("default".into()),
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        spec: FooSpec {
            deployment_name: deployment_name.into(),
            replicas,
        },
        status: None,
    }
}

fn key(name: &str) -> ObjectKey {
    ObjectKey::namespaced("default", name)
}

fn deployment(cluster: &FakeCluster, name: &str) -> Deployment {
    cluster
        .get::<Deployment>(Some("default"), name)
        .expect("the Deployment exists")
}

/// The reconcile's one log line, an error saying `message`.
#[track_caller]
fn only_error_log(cluster: &FakeCluster, message: &str) -> LogLine {
    let mut logs = cluster.logs();
    assert_eq!(logs.len(), 1);
    let log = logs.remove(0);
    assert_eq!(log.level, Level::Error);
    assert_eq!(log.message, message);
    log
}

fn replicas(deployment: &Deployment) -> Option<i32> {
    deployment.spec.as_ref().unwrap().replicas
}

fn available(cluster: &FakeCluster, name: &str) -> Option<i32> {
    let foo = cluster.get::<Foo>(Some("default"), name).unwrap();
    foo.status.map(|s| s.available_replicas)
}

/// What the Deployment controller would do: report available replicas.
fn set_available(cluster: &FakeCluster, name: &str, available: i32) {
    let mut d = deployment(cluster, name);
    d.status = Some(DeploymentStatus {
        available_replicas: Some(available),
        ..DeploymentStatus::default()
    });
    cluster.insert(&d);
}

fn event(foo: &Foo, event_type: EventType, reason: &str, note: &str) -> Event {
    Event {
        regarding_kind: gvk_of::<Foo>(),
        regarding: ObjectKey::namespaced("default", foo.metadata.name.as_deref().unwrap()),
        regarding_uid: foo.metadata.uid.clone().unwrap(),
        event_type,
        reason: reason.into(),
        action: "Sync".into(),
        note: note.into(),
    }
}

fn verbs(cluster: &FakeCluster) -> Vec<(Verb, String)> {
    cluster
        .writes()
        .into_iter()
        .map(|w| (w.verb, w.kind.kind))
        .collect()
}

#[test]
fn the_manifest_is_the_sample_controllers() {
    let m = SampleController::manifest();
    assert_eq!(m.name, "sample-controller");
    assert_eq!(m.primary, gvk_of::<Foo>());
    assert_eq!(m.primary.api_version(), "samplecontroller.k8s.io/v1alpha1");
    assert_eq!(m.owns, vec![gvk_of::<Deployment>()]);
    assert!(m.allows(&gvk_of::<Deployment>(), Verb::Create));
    assert!(m.allows(&gvk_of::<Deployment>(), Verb::Replace));
    assert!(m.allows(&gvk_of::<Foo>(), Verb::UpdateStatus));
    assert!(!m.allows(&gvk_of::<Foo>(), Verb::Replace));
    assert!(m.allows_events(), "it records Synced and ErrResourceExists");
    assert_eq!(m.validate(), Ok(()));
}

#[test]
fn a_new_foo_gets_its_deployment() {
    let cluster = FakeCluster::new::<SampleController>();
    let foo = cluster.insert(&foo("example-foo", "example-foo", Some(1)));
    assert_eq!(cluster.reconcile(&key("example-foo")), Ok(Action::Done));

    let d = deployment(&cluster, "example-foo");
    let labels = BTreeMap::from([
        ("app".to_string(), "nginx".to_string()),
        ("controller".to_string(), "example-foo".to_string()),
    ]);
    let spec = d.spec.as_ref().unwrap();
    assert_eq!(spec.replicas, Some(1));
    assert_eq!(spec.selector.match_labels.as_ref(), Some(&labels));
    let template = &spec.template;
    assert_eq!(
        template.metadata.as_ref().unwrap().labels.as_ref(),
        Some(&labels)
    );
    let containers = &template.spec.as_ref().unwrap().containers;
    assert_eq!(containers.len(), 1);
    assert_eq!(containers[0].name, "nginx");
    assert_eq!(containers[0].image.as_deref(), Some("nginx:latest"));
    assert_eq!(
        d.metadata.owner_references,
        Some(vec![OwnerReference {
            api_version: "samplecontroller.k8s.io/v1alpha1".into(),
            kind: "Foo".into(),
            name: "example-foo".into(),
            uid: foo.metadata.uid.clone().unwrap(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }])
    );

    assert_eq!(available(&cluster, "example-foo"), Some(0));
    assert_eq!(
        verbs(&cluster),
        [
            (Verb::Create, "Deployment".to_string()),
            (Verb::UpdateStatus, "Foo".to_string())
        ]
    );
    assert_eq!(
        cluster.events(),
        [event(
            &foo,
            EventType::Normal,
            SUCCESS_SYNCED,
            MESSAGE_RESOURCE_SYNCED
        )]
    );
}

#[test]
fn the_deployments_available_replicas_are_copied_into_the_status() {
    let cluster = FakeCluster::new::<SampleController>();
    cluster.insert(&foo("example-foo", "example-foo", Some(2)));
    cluster.reconcile(&key("example-foo")).unwrap();
    set_available(&cluster, "example-foo", 2);

    cluster.clear_records();
    assert_eq!(cluster.reconcile(&key("example-foo")), Ok(Action::Done));
    assert_eq!(available(&cluster, "example-foo"), Some(2));
    assert_eq!(verbs(&cluster), [(Verb::UpdateStatus, "Foo".to_string())]);
    let foo = cluster.get::<Foo>(Some("default"), "example-foo").unwrap();
    assert_eq!(
        foo.metadata.generation,
        Some(1),
        "status writes leave the spec alone"
    );

    // In sync: the status update changes nothing.
    let version = foo.metadata.resource_version.clone();
    cluster.reconcile(&key("example-foo")).unwrap();
    let foo = cluster.get::<Foo>(Some("default"), "example-foo").unwrap();
    assert_eq!(foo.metadata.resource_version, version);
}

#[test]
fn a_replicas_change_is_followed() {
    let cluster = FakeCluster::new::<SampleController>();
    let mut f = cluster.insert(&foo("example-foo", "example-foo", Some(1)));
    cluster.reconcile(&key("example-foo")).unwrap();
    assert_eq!(replicas(&deployment(&cluster, "example-foo")), Some(1));

    f.spec.replicas = Some(3);
    cluster.insert(&f);
    cluster.clear_records();
    assert_eq!(cluster.reconcile(&key("example-foo")), Ok(Action::Done));
    let d = deployment(&cluster, "example-foo");
    assert_eq!(replicas(&d), Some(3));
    assert_eq!(d.metadata.generation, Some(2));
    assert_eq!(
        verbs(&cluster),
        [
            (Verb::Replace, "Deployment".to_string()),
            (Verb::UpdateStatus, "Foo".to_string())
        ]
    );

    // Without replicas in the Foo, the Deployment's are left alone.
    f.spec.replicas = None;
    cluster.insert(&f);
    cluster.clear_records();
    cluster.reconcile(&key("example-foo")).unwrap();
    assert_eq!(replicas(&deployment(&cluster, "example-foo")), Some(3));
    assert_eq!(verbs(&cluster), [(Verb::UpdateStatus, "Foo".to_string())]);
}

#[test]
fn a_deployment_owned_by_someone_else_is_an_error_and_a_warning() {
    let cluster = FakeCluster::new::<SampleController>();
    let foo = cluster.insert(&foo("example-foo", "taken", Some(1)));
    let mut foreign = new_deployment(&foo);
    foreign.metadata.owner_references = None;
    let foreign = cluster.insert(&foreign);

    let message = r#"Resource "taken" already exists and is not managed by Foo"#;
    assert_eq!(message_resource_exists("taken"), message);
    assert_eq!(
        cluster.reconcile(&key("example-foo")),
        Err(Error::AlreadyExists(message.into()))
    );
    assert_eq!(
        cluster.events(),
        [event(
            &foo,
            EventType::Warning,
            ERR_RESOURCE_EXISTS,
            message
        )]
    );
    assert!(cluster.writes().is_empty());
    assert_eq!(deployment(&cluster, "taken"), foreign);
    assert_eq!(available(&cluster, "example-foo"), None);

    // Another Foo's Deployment is someone else's too.
    let mut other = new_deployment(&foo);
    other.metadata.name = Some("others".into());
    other.metadata.owner_references.as_mut().unwrap()[0].uid = "another-foo".into();
    cluster.insert(&other);
    cluster.insert(&self::foo("second", "others", Some(1)));
    assert!(matches!(
        cluster.reconcile(&key("second")),
        Err(Error::AlreadyExists(_))
    ));
}

#[test]
fn a_deleted_foo_is_done() {
    let cluster = FakeCluster::new::<SampleController>();
    assert_eq!(cluster.reconcile(&key("gone")), Ok(Action::Done));
    assert!(cluster.writes().is_empty());
    assert!(cluster.events().is_empty());
    let log = only_error_log(
        &cluster,
        "Foo referenced by item in work queue no longer exists",
    );
    assert_eq!(
        log.fields,
        [("objectReference".to_string(), "default/gone".to_string())]
    );
}

#[test]
fn a_foo_without_a_deployment_name_is_dropped_without_requeue() {
    let cluster = FakeCluster::new::<SampleController>();
    cluster.insert(&foo("nameless", "", Some(1)));
    assert_eq!(cluster.reconcile(&key("nameless")), Ok(Action::Done));
    assert!(cluster.writes().is_empty());
    assert!(cluster.events().is_empty());
    assert!(cluster.list::<Deployment>(None).is_empty());
    only_error_log(&cluster, "Deployment name missing from object reference");
}

#[test]
fn deleting_the_foo_collects_its_deployment() {
    let cluster = FakeCluster::new::<SampleController>();
    cluster.insert(&foo("example-foo", "example-foo", Some(1)));
    cluster.reconcile(&key("example-foo")).unwrap();
    cluster
        .delete::<Foo>(Some("default"), "example-foo")
        .unwrap();
    assert!(cluster.list::<Deployment>(None).is_empty());
    assert_eq!(cluster.reconcile(&key("example-foo")), Ok(Action::Done));
}

#[test]
fn the_example_foo_round_trips_as_json() {
    let json = serde_json::json!({
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": "example-foo"},
        "spec": {"deploymentName": "example-foo", "replicas": 1},
        "status": {"availableReplicas": 1},
    });
    let foo: Foo = serde_json::from_value(json).unwrap();
    assert_eq!(foo.spec.deployment_name, "example-foo");
    assert_eq!(foo.spec.replicas, Some(1));
    assert_eq!(
        foo.status,
        Some(FooStatus {
            available_replicas: 1
        })
    );
    let back = serde_json::to_value(&foo).unwrap();
    assert_eq!(back["spec"]["deploymentName"], "example-foo");
    assert_eq!(back["status"]["availableReplicas"], 1);
}

#[test]
fn a_change_of_the_deployment_requeues_its_foo_as_the_host_would() {
    let cluster = FakeCluster::new::<SampleController>();
    cluster.insert(&foo("example-foo", "example-foo", Some(1)));
    assert_eq!(cluster.take_pending_keys(), [key("example-foo")]);
    // The reconcile creates the Deployment (owned by the Foo) and updates
    // the Foo's status: both changes queue the Foo again.
    cluster.reconcile(&key("example-foo")).unwrap();
    assert_eq!(cluster.take_pending_keys(), [key("example-foo")]);
    // The Deployment controller reports replicas: the owner is queued, as
    // `owns::<Deployment>()` maps it.
    set_available(&cluster, "example-foo", 1);
    assert_eq!(cluster.take_pending_keys(), [key("example-foo")]);
    // Once in sync, a reconcile writes nothing and queues nothing.
    cluster.reconcile(&key("example-foo")).unwrap();
    cluster.take_pending_keys();
    cluster.reconcile(&key("example-foo")).unwrap();
    assert_eq!(cluster.take_pending_keys(), []);
}
