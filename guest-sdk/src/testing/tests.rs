//! The fake cluster's semantics, through the typed [`Context`] and the raw
//! [`Backend`] a guest sees.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use serde_json::json;

use super::*;
use crate::backend::{ApplyPatch, EventType, PatchBody, Propagation};
use crate::manifest::{KeyMapping, ManifestError};

/// A guest that may do anything to ConfigMaps and Deployments and record
/// events, caches Secrets labelled `managed=true` and every Pod through
/// watches, declares three indexes and prunes `data.big`.
struct Permissive;

impl Reconciler for Permissive {
    fn manifest() -> Manifest {
        Manifest::new::<ConfigMap>("permissive")
            .owns::<Deployment>()
            .watches_selected::<Secret>(KeyMapping::Label("app".into()), "managed=true")
            .watches::<Pod>(KeyMapping::ControllerOwner)
            .index::<ConfigMap>("by-app", IndexSource::Label("app".into()))
            .index::<Pod>(
                "by-claim",
                IndexSource::Field("spec.volumes.persistentVolumeClaim.claimName".into()),
            )
            .index::<Pod>("by-owner", IndexSource::OwnerUid)
            .writes::<ConfigMap>(&[
                Verb::Create,
                Verb::Replace,
                Verb::Patch,
                Verb::Delete,
                Verb::UpdateStatus,
            ])
            .writes::<Deployment>(&[
                Verb::Create,
                Verb::Replace,
                Verb::Patch,
                Verb::Delete,
                Verb::UpdateStatus,
            ])
            .records_events()
            .prune::<ConfigMap>("data.big")
            .keep_managed_fields::<Secret>()
    }

    /// Acts on the key's name, to exercise the queue and result handling.
    fn reconcile(ctx: &Context<'_>, request: Request) -> Result<Action> {
        let key = &request.key;
        match key.name.as_str() {
            "fail" => Err(Error::Unavailable(format!("attempt {}", request.attempt))),
            "requeue" => Ok(Action::Requeue),
            "later" => Ok(Action::RequeueAfter(Duration::from_secs(5))),
            "queue" => {
                ctx.enqueue(key)?;
                ctx.enqueue_after(key, Duration::from_millis(1500))?;
                ctx.enqueue_rate_limited(key)?;
                ctx.enqueue_rate_limited(key)?;
                let requeues = ctx.num_requeues(key);
                ctx.forget(key);
                ctx.info(
                    "queued",
                    &[("requeues", &requeues), ("after", &ctx.num_requeues(key))],
                );
                Ok(Action::Done)
            }
            _ => Ok(Action::Done),
        }
    }
}

/// A guest allowed nothing but reads of ConfigMaps labelled `tier=web`.
struct ReadOnly;

impl Reconciler for ReadOnly {
    fn manifest() -> Manifest {
        Manifest::new::<ConfigMap>("read-only").primary_selector("tier=web")
    }

    fn reconcile(_: &Context<'_>, _: Request) -> Result<Action> {
        Ok(Action::Done)
    }
}

fn config_map(namespace: &str, name: &str, data: &[(&str, &str)]) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.namespace = Some(namespace.into());
    cm.metadata.name = Some(name.into());
    cm.data = Some(
        data.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    cm
}

fn labelled<K: Object>(mut obj: K, labels: &[(&str, &str)]) -> K {
    obj.metadata_mut().labels = Some(
        labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    obj
}

fn deployment(namespace: &str, name: &str, replicas: i32) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"namespace": namespace, "name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}},
        },
        "status": {"availableReplicas": 7},
    }))
    .unwrap()
}

fn owner_ref(owner: &ConfigMap) -> OwnerReference {
    OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: owner.metadata.name.clone().unwrap(),
        uid: owner.metadata.uid.clone().unwrap(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

fn rv<K: Object>(obj: &K) -> u64 {
    obj.metadata()
        .resource_version
        .as_deref()
        .unwrap()
        .parse()
        .unwrap()
}

fn data(cm: &ConfigMap) -> BTreeMap<String, String> {
    cm.data.clone().unwrap_or_default()
}

// ------------------------------------------------------------------ writes

#[test]
fn create_assigns_server_metadata_and_drops_status() {
    let cluster = FakeCluster::new::<Permissive>();
    let ctx = cluster.context();
    let created = ctx.create(&deployment("ns", "web", 2)).unwrap();
    let meta = &created.metadata;
    assert_eq!(
        meta.uid.as_deref(),
        Some("00000000-0000-0000-0000-000000000001")
    );
    assert_eq!(meta.resource_version.as_deref(), Some("1"));
    assert_eq!(meta.generation, Some(1));
    assert_eq!(
        meta.creation_timestamp.as_ref().map(|t| t.0.to_string()),
        Some(NOW.to_string())
    );
    assert_eq!(created.status, None, "create drops status");
    assert_eq!(cluster.get::<Deployment>(Some("ns"), "web"), Some(created));
    assert_eq!(
        cluster.writes(),
        vec![Write {
            verb: Verb::Create,
            kind: gvk_of::<Deployment>(),
            key: ObjectKey::namespaced("ns", "web"),
        }]
    );
    let again = ctx.create(&deployment("ns", "web", 2));
    assert!(matches!(again, Err(Error::AlreadyExists(m)) if m.contains("already exists")));
}

#[test]
fn create_checks_name_namespace_and_type() {
    let cluster = FakeCluster::new::<Permissive>();
    let backend: &dyn Backend = &cluster;
    let cm = gvk_of::<ConfigMap>();
    let create = |json: &str| backend.write(&cm, Some("ns"), WriteOp::Create { json });
    let invalid = |r: Result<Option<RawObject>>| matches!(r, Err(Error::Invalid(_)));
    assert!(invalid(create("{}")));
    assert!(invalid(create("[]")));
    assert!(invalid(create("not json")));
    assert!(invalid(create(
        r#"{"metadata": {"name": "a", "namespace": "other"}}"#
    )));
    assert!(invalid(create(
        r#"{"kind": "Secret", "metadata": {"name": "a"}}"#
    )));
    let generated = create(r#"{"metadata": {"generateName": "cm-"}}"#)
        .unwrap()
        .expect("a create answers with the object");
    assert!(generated.meta.key.name.starts_with("cm-"));
    assert_eq!(generated.meta.key.namespace.as_deref(), Some("ns"));
    let stored: ConfigMap = generated.parse().unwrap();
    assert_eq!(stored.metadata.name, Some(generated.meta.key.name.clone()));
}

#[test]
fn resource_versions_and_generations_follow_changes() {
    let cluster = FakeCluster::new::<Permissive>();
    let ctx = cluster.context();
    let created = ctx.create(&deployment("ns", "web", 1)).unwrap();

    // Unchanged: nothing is written, the version stays.
    let same = ctx.replace(&created).unwrap();
    assert_eq!(rv(&same), rv(&created));

    // Metadata only: a new version, the same generation.
    let relabelled = ctx
        .replace(&labelled(created.clone(), &[("team", "a")]))
        .unwrap();
    assert_eq!(rv(&relabelled), rv(&created) + 1);
    assert_eq!(relabelled.metadata.generation, Some(1));

    // Spec: a new generation.
    let mut scaled = relabelled.clone();
    scaled.spec.as_mut().unwrap().replicas = Some(3);
    let scaled = ctx.replace(&scaled).unwrap();
    assert_eq!(scaled.metadata.generation, Some(2));
    assert_eq!(scaled.metadata.uid, created.metadata.uid);
    assert_eq!(
        scaled.metadata.creation_timestamp,
        created.metadata.creation_timestamp
    );

    // A Deployment's annotations bump it too, as the apps strategy does.
    let mut noted = scaled.clone();
    noted.metadata.annotations = Some([("note".to_string(), "x".to_string())].into());
    let noted = ctx.replace(&noted).unwrap();
    assert_eq!(noted.metadata.generation, Some(3));

    // A ConfigMap has no generation, as on a real server.
    let cm = ctx.create(&config_map("ns", "a", &[("k", "v")])).unwrap();
    assert_eq!(cm.metadata.generation, None);
    let changed = ctx.replace(&config_map("ns", "a", &[("k", "w")])).unwrap();
    assert_eq!(changed.metadata.generation, None);
    assert_eq!(changed.metadata.uid, cm.metadata.uid);
}

#[test]
fn replace_is_optimistic_with_a_resource_version_and_unconditional_without() {
    let cluster = FakeCluster::new::<Permissive>();
    let ctx = cluster.context();
    let first = ctx.create(&config_map("ns", "a", &[("k", "1")])).unwrap();
    let mut update = first.clone();
    update.data = Some(BTreeMap::from([("k".into(), "2".into())]));
    let second = ctx.replace(&update).unwrap();

    // `first` is stale now.
    let mut stale = first.clone();
    stale.data = Some(BTreeMap::from([("k".into(), "3".into())]));
    assert!(matches!(ctx.replace(&stale), Err(Error::Conflict(_))));
    assert!(matches!(ctx.update_status(&stale), Err(Error::Conflict(_))));
    assert_eq!(
        data(&cluster.get::<ConfigMap>(Some("ns"), "a").unwrap())["k"],
        "2"
    );

    // Without a version the last writer wins.
    let blind = ctx.replace(&config_map("ns", "a", &[("k", "4")])).unwrap();
    assert_eq!(data(&blind)["k"], "4");
    assert_eq!(rv(&blind), rv(&second) + 1);

    assert_eq!(
        ctx.replace(&config_map("ns", "missing", &[])),
        Err(Error::NotFound)
    );
}

/// A guest that holds Leases: its replaces must name the version they read.
struct LeaseHolder;

impl Reconciler for LeaseHolder {
    fn manifest() -> Manifest {
        Manifest::new::<Lease>("lease-holder").writes::<Lease>(&[Verb::Create, Verb::Replace])
    }

    fn reconcile(_: &Context<'_>, _: Request) -> Result<Action> {
        Ok(Action::Done)
    }
}

#[test]
fn a_lease_replace_must_name_the_version_it_read() {
    let cluster = FakeCluster::new::<LeaseHolder>();
    let ctx = cluster.context();
    let lease = |holder: &str| Lease {
        metadata: ObjectMeta {
            name: Some("lock".into()),
            namespace: Some("ns".into()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(holder.into()),
            ..LeaseSpec::default()
        }),
    };
    let held = ctx.create(&lease("a")).unwrap();
    assert_eq!(
        ctx.replace(&lease("b")),
        Err(Error::Invalid(
            "Lease \"lock\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be \
             specified for an update"
                .into()
        ))
    );
    let mut taken = lease("b");
    taken.metadata.resource_version = held.metadata.resource_version.clone();
    let taken = ctx.replace(&taken).unwrap();
    assert_eq!(taken.spec.unwrap().holder_identity.as_deref(), Some("b"));
}

#[test]
fn status_writes_change_only_status_and_other_writes_keep_it() {
    let cluster = FakeCluster::new::<Permissive>();
    let ctx = cluster.context();
    let created = ctx.create(&deployment("ns", "web", 1)).unwrap();

    let mut with_status = deployment("ns", "web", 5);
    with_status.metadata.resource_version = created.metadata.resource_version.clone();
    let updated = ctx.update_status(&with_status).unwrap();
    assert_eq!(updated.status.as_ref().unwrap().available_replicas, Some(7));
    assert_eq!(
        updated.spec.as_ref().unwrap().replicas,
        Some(1),
        "spec ignored"
    );
    assert_eq!(updated.metadata.generation, Some(1));

    let patched: Deployment = ctx
        .patch_status(
            Some("ns"),
            "web",
            &json!({"status": {"availableReplicas": 2}, "spec": {"replicas": 9}}),
        )
        .unwrap();
    assert_eq!(patched.status.as_ref().unwrap().available_replicas, Some(2));
    assert_eq!(patched.spec.as_ref().unwrap().replicas, Some(1));

    // A replace of the main resource cannot touch status.
    let mut replaced = patched.clone();
    replaced.status.as_mut().unwrap().available_replicas = Some(0);
    replaced.spec.as_mut().unwrap().replicas = Some(4);
    let replaced = ctx.replace(&replaced).unwrap();
    assert_eq!(
        replaced.status.as_ref().unwrap().available_replicas,
        Some(2)
    );
    assert_eq!(replaced.spec.as_ref().unwrap().replicas, Some(4));

    let verbs: Vec<Verb> = cluster.writes().iter().map(|w| w.verb).collect();
    assert_eq!(
        verbs,
        vec![
            Verb::Create,
            Verb::UpdateStatus,
            Verb::UpdateStatus,
            Verb::Replace
        ]
    );
}

#[test]
fn merge_and_json_patches() {
    let cluster = FakeCluster::new::<Permissive>();
    let ctx = cluster.context();
    let created = ctx
        .create(&config_map("ns", "a", &[("keep", "1"), ("drop", "2")]))
        .unwrap();

    let merged: ConfigMap = ctx
        .patch_merge(
            Some("ns"),
            "a",
            &json!({"data": {"drop": null, "new": "3"}}),
        )
        .unwrap();
    assert_eq!(
        data(&merged),
        BTreeMap::from([("keep".into(), "1".into()), ("new".into(), "3".into())])
    );

    let patched: ConfigMap = ctx
        .patch_json(
            Some("ns"),
            "a",
            &json!([
                {"op": "test", "path": "/data/keep", "value": "1"},
                {"op": "replace", "path": "/data/keep", "value": "one"},
            ]),
        )
        .unwrap();
    assert_eq!(data(&patched)["keep"], "one");

    // A failed test is the API server's 422, and nothing changes.
    let failed = ctx.patch_json::<ConfigMap>(
        Some("ns"),
        "a",
        &json!([
            {"op": "test", "path": "/data/keep", "value": "1"},
            {"op": "remove", "path": "/data/keep"},
        ]),
    );
    assert!(matches!(failed, Err(Error::Invalid(m)) if m.contains("rejected")));
    assert_eq!(
        cluster.get::<ConfigMap>(Some("ns"), "a"),
        Some(patched.clone())
    );

    // A patch naming a stale resourceVersion conflicts; the current one is fine.
    let stale = ctx.patch_merge::<ConfigMap>(
        Some("ns"),
        "a",
        &json!({"metadata": {"resourceVersion": created.metadata.resource_version}, "data": {"x": "y"}}),
    );
    assert!(matches!(stale, Err(Error::Conflict(_))));
    let current: ConfigMap = ctx
        .patch_merge(
            Some("ns"),
            "a",
            &json!({"metadata": {"resourceVersion": patched.metadata.resource_version}, "data": {"x": "y"}}),
        )
        .unwrap();
    assert_eq!(data(&current)["x"], "y");

    assert_eq!(
        ctx.patch_merge::<ConfigMap>(Some("ns"), "missing", &json!({})),
        Err(Error::NotFound)
    );
    assert!(matches!(
        ctx.patch_merge::<ConfigMap>(Some("ns"), "a", &json!([1])),
        Err(Error::Invalid(_))
    ));
}

#[test]
fn apply_creates_then_merges_the_intent() {
    let cluster = FakeCluster::new::<Permissive>();
    let ctx = cluster.context();
    let created = ctx
        .apply(&config_map("ns", "a", &[("one", "1"), ("two", "2")]))
        .unwrap();
    assert_eq!(created.metadata.generation, None);
    assert_eq!(cluster.writes()[0].verb, Verb::Patch);

    // The approximation: fields the new intent omits stay.
    let applied = ctx
        .apply_with_force(&config_map("ns", "a", &[("two", "2b")]), false)
        .unwrap();
    assert_eq!(
        data(&applied),
        BTreeMap::from([("one".into(), "1".into()), ("two".into(), "2b".into())])
    );
    assert_eq!(applied.metadata.uid, created.metadata.uid);

    // Applying the same intent again writes nothing new.
    let again = ctx.apply(&config_map("ns", "a", &[("two", "2b")])).unwrap();
    assert_eq!(rv(&again), rv(&applied));

    // The raw form needs a JSON object.
    let not_an_object = cluster.write(
        &gvk_of::<ConfigMap>(),
        Some("ns"),
        WriteOp::Patch {
            name: "a",
            body: &PatchBody::Apply(ApplyPatch {
                json: "[]".into(),
                force: true,
            }),
            status: false,
        },
    );
    assert!(matches!(not_an_object, Err(Error::Invalid(_))));
}

#[test]
fn writes_need_the_manifests_permission() {
    let cluster = FakeCluster::new::<Permissive>();
    let ctx = cluster.context();
    let mut secret = Secret::default();
    secret.metadata.namespace = Some("ns".into());
    secret.metadata.name = Some("s".into());
    assert!(matches!(ctx.create(&secret), Err(Error::Forbidden(m)) if m.contains("Create")));
    assert!(matches!(
        ctx.delete::<Secret>(Some("ns"), "s", &DeleteOptions::default()),
        Err(Error::Forbidden(_))
    ));

    let read_only = FakeCluster::new::<ReadOnly>();
    let ctx = read_only.context();
    read_only.insert(&config_map("ns", "a", &[]));
    assert!(matches!(
        ctx.create(&config_map("ns", "b", &[])),
        Err(Error::Forbidden(_))
    ));
    assert!(matches!(
        ctx.apply(&config_map("ns", "a", &[])),
        Err(Error::Forbidden(_))
    ));
    assert!(matches!(
        ctx.patch_status::<ConfigMap>(Some("ns"), "a", &json!({})),
        Err(Error::Forbidden(_))
    ));
    assert!(read_only.writes().is_empty());

    // Events need the manifest's permission too.
    let cm = read_only.get::<ConfigMap>(Some("ns"), "a").unwrap();
    let refused = ctx.event(&cm, EventType::Warning, "Odd", "Check", "something odd");
    let Err(Error::Forbidden(message)) = refused else {
        panic!("an undeclared event: {refused:?}");
    };
    assert!(
        message.contains("read-only") && message.contains("records_events"),
        "{message}"
    );
    assert!(read_only.events().is_empty());

    let permissive = FakeCluster::new::<Permissive>();
    let cm = permissive.insert(&config_map("ns", "a", &[]));
    permissive
        .context()
        .event(&cm, EventType::Warning, "Odd", "Check", "something odd")
        .unwrap();
    assert_eq!(
        permissive.events(),
        vec![Event {
            regarding_kind: gvk_of::<ConfigMap>(),
            regarding: ObjectKey::namespaced("ns", "a"),
            regarding_uid: cm.metadata.uid.clone().unwrap(),
            event_type: EventType::Warning,
            reason: "Odd".into(),
            action: "Check".into(),
            note: "something odd".into(),
        }]
    );
}

// ------------------------------------------------------------------- reads

#[test]
fn the_cache_holds_only_what_the_manifest_watches() {
    let cluster = FakeCluster::new::<ReadOnly>();
    let ctx = cluster.context();
    cluster.insert(&labelled(config_map("ns", "web", &[]), &[("tier", "web")]));
    cluster.insert(&labelled(config_map("ns", "db", &[]), &[("tier", "db")]));
    cluster.insert(&deployment("ns", "d", 1));

    assert!(ctx.get::<ConfigMap>(Some("ns"), "web").unwrap().is_some());
    assert_eq!(
        ctx.get::<ConfigMap>(Some("ns"), "db").unwrap(),
        None,
        "outside the primary selector"
    );
    let names: Vec<String> = ctx
        .list_meta::<ConfigMap>(None, None)
        .unwrap()
        .into_iter()
        .map(|m| m.key.name)
        .collect();
    assert_eq!(names, vec!["web".to_string()]);
    assert!(matches!(
        ctx.get::<Deployment>(Some("ns"), "d"),
        Err(Error::Forbidden(_))
    ));
    assert!(matches!(
        ctx.list::<Secret>(None, None),
        Err(Error::Forbidden(_))
    ));
}

#[test]
fn watches_admit_objects_through_their_selectors() {
    let cluster = FakeCluster::new::<Permissive>();
    let ctx = cluster.context();
    let mut managed = labelled(Secret::default(), &[("managed", "true")]);
    managed.metadata.namespace = Some("ns".into());
    managed.metadata.name = Some("managed".into());
    let mut other = Secret::default();
    other.metadata.namespace = Some("ns".into());
    other.metadata.name = Some("other".into());
    cluster.insert(&managed);
    cluster.insert(&other);
    let secrets: Vec<Secret> = ctx.list(Some("ns"), None).unwrap();
    assert_eq!(secrets.len(), 1);
    assert_eq!(secrets[0].metadata.name.as_deref(), Some("managed"));
    assert_eq!(ctx.get::<Secret>(Some("ns"), "other").unwrap(), None);
}

#[test]
fn lists_filter_by_namespace_and_selector_in_key_order() {
    let cluster = FakeCluster::new::<Permissive>();
    let ctx = cluster.context();
    // `a-b/w` orders before `a/y` as the host orders keys (`-` before `/`),
    // where namespace-then-name would put it after `a/z`.
    for (ns, name, app) in [
        ("b", "x", "web"),
        ("a", "z", "web"),
        ("a-b", "w", "db"),
        ("a", "y", "db"),
    ] {
        cluster.insert(&labelled(config_map(ns, name, &[]), &[("app", app)]));
    }
    let keys =
        |items: Vec<Meta>| -> Vec<String> { items.iter().map(|m| m.key.to_string()).collect() };
    assert_eq!(
        keys(ctx.list_meta::<ConfigMap>(None, None).unwrap()),
        ["a-b/w", "a/y", "a/z", "b/x"]
    );
    assert_eq!(
        keys(ctx.list_meta::<ConfigMap>(Some("a"), None).unwrap()),
        ["a/y", "a/z"]
    );
    assert_eq!(
        keys(ctx.list_meta::<ConfigMap>(None, Some("app=web")).unwrap()),
        ["a/z", "b/x"]
    );
    assert_eq!(
        keys(
            ctx.list_meta::<ConfigMap>(None, Some("app notin (web)"))
                .unwrap()
        ),
        ["a-b/w", "a/y"]
    );
    let typed: Vec<ConfigMap> = ctx.list(Some("b"), Some("app")).unwrap();
    assert_eq!(typed[0].metadata.name.as_deref(), Some("x"));
    assert!(matches!(
        ctx.list::<ConfigMap>(None, Some("app in (")),
        Err(Error::Invalid(_))
    ));
}

#[test]
fn reads_drop_managed_fields_and_prune_fields() {
    let cluster = FakeCluster::new::<Permissive>();
    let ctx = cluster.context();
    let mut cm = config_map("ns", "a", &[("big", "xxxx"), ("small", "x")]);
    cm.metadata.managed_fields = Some(vec![Default::default()]);
    cluster.insert(&cm);
    let cached = ctx.get::<ConfigMap>(Some("ns"), "a").unwrap().unwrap();
    assert_eq!(cached.metadata.managed_fields, None);
    assert_eq!(
        data(&cached),
        BTreeMap::from([("small".into(), "x".into())])
    );
    let raw = ctx
        .get_raw(&gvk_of::<ConfigMap>(), Some("ns"), "a")
        .unwrap()
        .unwrap();
    assert!(!raw.json.contains("xxxx"));
    assert_eq!(raw.meta.key, ObjectKey::namespaced("ns", "a"));
    // The stored object is whole.
    let stored = cluster.get::<ConfigMap>(Some("ns"), "a").unwrap();
    assert_eq!(data(&stored)["big"], "xxxx");
    // The manifest keeps the Secrets' managedFields.
    let mut secret = Secret::default();
    secret.metadata.namespace = Some("ns".into());
    secret.metadata.name = Some("s".into());
    secret.metadata.labels = Some(BTreeMap::from([("managed".into(), "true".into())]));
    secret.metadata.managed_fields = Some(vec![Default::default()]);
    cluster.insert(&secret);
    let cached = ctx.get::<Secret>(Some("ns"), "s").unwrap().unwrap();
    assert_eq!(cached.metadata.managed_fields.map(|m| m.len()), Some(1));
}

/// A guest that reads Secrets as metadata only, indexed by a label.
struct SecretNames;

impl Reconciler for SecretNames {
    fn manifest() -> Manifest {
        Manifest::new::<ConfigMap>("secret-names")
            .watches::<Secret>(KeyMapping::Label("app".into()))
            .index::<Secret>("by-app", IndexSource::Label("app".into()))
            .metadata_only::<Secret>()
    }

    fn reconcile(_: &Context<'_>, _: Request) -> Result<Action> {
        Ok(Action::Done)
    }
}

#[test]
fn a_kind_read_as_metadata_only_is_cached_as_partial_object_metadata() {
    let cluster = FakeCluster::new::<SecretNames>();
    let ctx = cluster.context();
    let mut secret = Secret::default();
    secret.metadata.namespace = Some("ns".into());
    secret.metadata.name = Some("token".into());
    secret.metadata.labels = Some(BTreeMap::from([("app".into(), "web".into())]));
    secret.string_data = None;
    secret.data = Some(BTreeMap::from([(
        "password".into(),
        k8s_openapi::ByteString(b"hunter2".to_vec()),
    )]));
    cluster.insert(&secret);
    let raw = ctx
        .get_raw(&gvk_of::<Secret>(), Some("ns"), "token")
        .unwrap()
        .unwrap();
    let cached: serde_json::Value = serde_json::from_str(&raw.json).unwrap();
    assert_eq!(cached["kind"], "PartialObjectMetadata");
    assert_eq!(cached["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(cached["metadata"]["labels"]["app"], "web");
    assert!(cached.get("data").is_none(), "{cached}");
    let meta = ctx
        .get_meta::<Secret>(Some("ns"), "token")
        .unwrap()
        .unwrap();
    assert_eq!(meta.key, ObjectKey::namespaced("ns", "token"));
    assert_eq!(ctx.list_meta::<Secret>(None, None).unwrap().len(), 1);
    let indexed = ctx
        .by_index_raw(&gvk_of::<Secret>(), "by-app", "web")
        .unwrap();
    assert_eq!(indexed.len(), 1);
    assert!(!indexed[0].json.contains("hunter2"));
    // A typed read of the whole kind cannot parse what is cached, and
    // says why.
    assert!(raw.is_partial_object_metadata());
    match ctx.get::<Secret>(Some("ns"), "token") {
        Err(Error::Invalid(message)) => assert!(
            message.starts_with("ns/token is cached as PartialObjectMetadata, since the manifest reads its kind as metadata only"),
            "{message}"
        ),
        other => panic!("a typed read of a metadata-only kind: {other:?}"),
    }
    // The stored object is whole.
    let stored = cluster.get::<Secret>(Some("ns"), "token").unwrap();
    assert!(stored.data.is_some());
}

#[test]
fn metadata_only_kinds_are_watched_and_indexed_by_metadata() {
    let watched = Manifest::new::<ConfigMap>("m").metadata_only::<Secret>();
    assert!(matches!(watched.validate(), Err(ManifestError(m)) if m.contains("does not watch it")));
    let by_data = SecretNames::manifest()
        .index::<Secret>("by-data", IndexSource::Field("data.password".into()));
    assert!(
        matches!(by_data.validate(), Err(ManifestError(m)) if m.contains("reads as metadata only"))
    );
    assert!(SecretNames::manifest().validate().is_ok());
}

#[test]
fn declared_indexes_answer_by_index() {
    let cluster = FakeCluster::new::<Permissive>();
    let ctx = cluster.context();
    let owner = cluster.insert(&config_map("ns", "owner", &[]));
    cluster.insert(&labelled(config_map("ns", "a", &[]), &[("app", "web")]));
    cluster.insert(&labelled(config_map("other", "b", &[]), &[("app", "web")]));
    cluster.insert(&labelled(config_map("ns", "c", &[]), &[("app", "db")]));
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"namespace": "ns", "name": "p", "ownerReferences": [owner_ref(&owner)]},
        "spec": {"containers": [], "volumes": [
            {"name": "one", "persistentVolumeClaim": {"claimName": "data-1"}},
            {"name": "two", "persistentVolumeClaim": {"claimName": "data-2"}},
            {"name": "three", "emptyDir": {}},
        ]},
    }))
    .unwrap();
    cluster.insert(&pod);

    let names = |items: Vec<RawObject>| -> Vec<String> {
        items.into_iter().map(|o| o.meta.key.to_string()).collect()
    };
    assert_eq!(
        names(
            ctx.by_index_raw(&gvk_of::<ConfigMap>(), "by-app", "web")
                .unwrap()
        ),
        ["ns/a", "other/b"]
    );
    let pods: Vec<Pod> = ctx.by_index("by-claim", "data-2").unwrap();
    assert_eq!(pods.len(), 1);
    assert!(
        ctx.by_index::<Pod>("by-claim", "data-3")
            .unwrap()
            .is_empty()
    );
    let owned: Vec<Pod> = ctx
        .by_index("by-owner", owner.metadata.uid.as_deref().unwrap())
        .unwrap();
    assert_eq!(owned.len(), 1);
    assert!(matches!(
        ctx.by_index::<ConfigMap>("by-claim", "x"),
        Err(Error::Invalid(_))
    ));
}

// ------------------------------------------------------------------ delete

#[test]
fn delete_honours_finalizers() {
    let cluster = FakeCluster::new::<Permissive>();
    let ctx = cluster.context();
    let mut cm = config_map("ns", "a", &[]);
    cm.metadata.finalizers = Some(vec!["one".into(), "two".into()]);
    let created = ctx.create(&cm).unwrap();

    ctx.delete::<ConfigMap>(Some("ns"), "a", &DeleteOptions::default())
        .unwrap();
    let deleting = cluster.get::<ConfigMap>(Some("ns"), "a").unwrap();
    assert_eq!(
        deleting
            .metadata
            .deletion_timestamp
            .as_ref()
            .map(|t| t.0.to_string()),
        Some(NOW.to_string())
    );
    assert_eq!(rv(&deleting), rv(&created) + 1);

    // No new finalizers while deleting.
    let mut more = deleting.clone();
    more.metadata.finalizers = Some(vec!["one".into(), "two".into(), "three".into()]);
    assert!(matches!(ctx.replace(&more), Err(Error::Invalid(m)) if m.contains("finalizers")));

    let mut fewer = deleting.clone();
    fewer.metadata.finalizers = Some(vec!["two".into()]);
    ctx.replace(&fewer).unwrap();
    assert!(cluster.get::<ConfigMap>(Some("ns"), "a").is_some());

    let last: ConfigMap = ctx
        .patch_json(
            Some("ns"),
            "a",
            &json!([{"op": "remove", "path": "/metadata/finalizers/0"}]),
        )
        .unwrap();
    assert_eq!(last.metadata.name.as_deref(), Some("a"));
    assert_eq!(cluster.get::<ConfigMap>(Some("ns"), "a"), None);
    assert_eq!(
        ctx.delete::<ConfigMap>(Some("ns"), "a", &DeleteOptions::default()),
        Err(Error::NotFound)
    );
}

#[test]
fn delete_checks_preconditions() {
    let cluster = FakeCluster::new::<Permissive>();
    let ctx = cluster.context();
    let cm = ctx.create(&config_map("ns", "a", &[])).unwrap();
    let wrong_uid = DeleteOptions {
        precondition_uid: Some("someone-else".into()),
        ..DeleteOptions::default()
    };
    assert!(matches!(
        ctx.delete::<ConfigMap>(Some("ns"), "a", &wrong_uid),
        Err(Error::Conflict(m)) if m.contains("UID")
    ));
    let stale = DeleteOptions {
        precondition_resource_version: Some("0".into()),
        ..DeleteOptions::default()
    };
    assert!(matches!(
        ctx.delete::<ConfigMap>(Some("ns"), "a", &stale),
        Err(Error::Conflict(m)) if m.contains("ResourceVersion")
    ));
    let exact = DeleteOptions {
        precondition_uid: cm.metadata.uid.clone(),
        precondition_resource_version: cm.metadata.resource_version.clone(),
        ..DeleteOptions::default()
    };
    ctx.delete::<ConfigMap>(Some("ns"), "a", &exact).unwrap();
    assert_eq!(cluster.get::<ConfigMap>(Some("ns"), "a"), None);
    assert_eq!(cluster.writes().last().unwrap().verb, Verb::Delete);
}

#[test]
fn deleting_an_owner_collects_or_orphans_its_dependents() {
    let cluster = FakeCluster::new::<Permissive>();
    let ctx = cluster.context();
    let owner = ctx.create(&config_map("ns", "owner", &[])).unwrap();
    let other_owner = ctx.create(&config_map("ns", "other-owner", &[])).unwrap();
    let owned = |name: &str, owners: &[&ConfigMap]| {
        let mut d = deployment("ns", name, 1);
        d.metadata.owner_references = Some(owners.iter().map(|o| owner_ref(o)).collect());
        ctx.create(&d).unwrap()
    };
    owned("only", &[&owner]);
    owned("shared", &[&owner, &other_owner]);
    let mut finalized = deployment("ns", "finalized", 1);
    finalized.metadata.owner_references = Some(vec![owner_ref(&owner)]);
    finalized.metadata.finalizers = Some(vec!["keep".into()]);
    ctx.create(&finalized).unwrap();

    cluster.delete::<ConfigMap>(Some("ns"), "owner").unwrap();
    assert_eq!(cluster.get::<Deployment>(Some("ns"), "only"), None);
    assert!(
        cluster.get::<Deployment>(Some("ns"), "shared").is_some(),
        "another owner remains"
    );
    let finalized = cluster.get::<Deployment>(Some("ns"), "finalized").unwrap();
    assert!(finalized.metadata.deletion_timestamp.is_some());

    owned("orphan", &[&other_owner]);
    let orphan = DeleteOptions {
        propagation: Some(Propagation::Orphan),
        ..DeleteOptions::default()
    };
    ctx.delete::<ConfigMap>(Some("ns"), "other-owner", &orphan)
        .unwrap();
    let orphaned = cluster.get::<Deployment>(Some("ns"), "orphan").unwrap();
    assert_eq!(orphaned.metadata.owner_references, None);
    assert!(cluster.get::<Deployment>(Some("ns"), "shared").is_some());
}

// ------------------------------------------------------ reconcile and queue

#[test]
fn reconcile_results_update_the_attempt_count_as_the_host_does() {
    let cluster = FakeCluster::new::<Permissive>();
    let fail = ObjectKey::namespaced("ns", "fail");
    assert_eq!(
        cluster.reconcile(&fail),
        Err(Error::Unavailable("attempt 0".into()))
    );
    assert_eq!(
        cluster.reconcile(&fail),
        Err(Error::Unavailable("attempt 1".into()))
    );
    let requeue = ObjectKey::namespaced("ns", "requeue");
    assert_eq!(cluster.reconcile(&requeue), Ok(Action::Requeue));
    assert_eq!(cluster.num_requeues(&requeue), 1);
    let later = ObjectKey::namespaced("ns", "later");
    assert_eq!(
        cluster.reconcile(&later),
        Ok(Action::RequeueAfter(Duration::from_secs(5)))
    );
    assert_eq!(cluster.num_requeues(&later), 0);
    assert_eq!(cluster.num_requeues(&fail), 2);
}

#[test]
fn queue_calls_and_logs_are_recorded() {
    let cluster = FakeCluster::new::<Permissive>();
    let key = ObjectKey::namespaced("ns", "queue");
    assert_eq!(cluster.reconcile(&key), Ok(Action::Done));
    assert_eq!(
        cluster.queue_calls(),
        vec![
            QueueCall::Enqueue(key.clone()),
            QueueCall::EnqueueAfter(key.clone(), Duration::from_millis(1500)),
            QueueCall::EnqueueRateLimited(key.clone()),
            QueueCall::EnqueueRateLimited(key.clone()),
            QueueCall::Forget(key.clone()),
        ]
    );
    assert_eq!(
        cluster.logs(),
        vec![LogLine {
            level: Level::Info,
            message: "queued".into(),
            fields: vec![
                ("requeues".into(), "2".into()),
                ("after".into(), "0".into())
            ],
        }]
    );
    cluster.clear_records();
    assert!(cluster.queue_calls().is_empty());
    assert!(cluster.logs().is_empty());
}

#[test]
fn queue_calls_refuse_keys_the_host_refuses() {
    let cluster = FakeCluster::new::<Permissive>();
    let ctx = cluster.context();
    let bad = [
        ObjectKey::namespaced("Not_A_Label", "a"),
        ObjectKey::namespaced("ns", ""),
        ObjectKey::namespaced("ns", "a/b"),
        ObjectKey::cluster(&"n".repeat(254)),
    ];
    for key in &bad {
        for result in [
            ctx.enqueue(key),
            ctx.enqueue_after(key, Duration::from_secs(1)),
            ctx.enqueue_rate_limited(key),
        ] {
            assert!(
                matches!(&result, Err(Error::Invalid(m)) if m.starts_with("invalid key: ")),
                "{key:?}: {result:?}"
            );
        }
        assert_eq!(cluster.num_requeues(key), 0);
    }
    assert!(cluster.queue_calls().is_empty());
    let good = ObjectKey::cluster(&"n".repeat(253));
    assert_eq!(ctx.enqueue(&good), Ok(()));
    assert_eq!(cluster.queue_calls(), vec![QueueCall::Enqueue(good)]);
}

#[test]
#[should_panic(expected = "invalid manifest")]
fn an_invalid_manifest_is_refused() {
    struct Invalid;
    impl Reconciler for Invalid {
        fn manifest() -> Manifest {
            Manifest::new::<ConfigMap>("invalid").primary_selector("a in (")
        }
        fn reconcile(_: &Context<'_>, _: Request) -> Result<Action> {
            Ok(Action::Done)
        }
    }
    FakeCluster::new::<Invalid>();
}

// ------------------------------------------------------------------ key mapping

fn keys(cluster: &FakeCluster) -> Vec<String> {
    cluster
        .take_pending_keys()
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn changes_queue_the_primary_keys_the_manifest_maps_them_to() {
    let cluster = FakeCluster::new::<Permissive>();
    // The primary kind: its own key.
    let owner = cluster.insert(&config_map("ns", "a", &[]));
    assert_eq!(keys(&cluster), ["ns/a"]);
    // An owned kind: its controller owner, when of the primary kind.
    let mut owned = deployment("ns", "d", 1);
    owned.metadata.owner_references = Some(vec![owner_ref(&owner)]);
    cluster.insert(&owned);
    assert_eq!(keys(&cluster), ["ns/a"]);
    let mut foreign = deployment("ns", "e", 1);
    foreign.metadata.owner_references = Some(vec![OwnerReference {
        kind: "ReplicaSet".into(),
        api_version: "apps/v1".into(),
        ..owner_ref(&owner)
    }]);
    cluster.insert(&foreign);
    assert_eq!(keys(&cluster), Vec::<String>::new());
    // A watched kind with a selector: only the objects it admits, mapped by
    // the label, before and after a change.
    let secret = |labels: &[(&str, &str)]| {
        let mut s = Secret::default();
        s.metadata.namespace = Some("ns".into());
        s.metadata.name = Some("s".into());
        labelled(s, labels)
    };
    cluster.insert(&secret(&[("app", "b")]));
    assert_eq!(keys(&cluster), Vec::<String>::new());
    cluster.insert(&secret(&[("app", "b"), ("managed", "true")]));
    assert_eq!(keys(&cluster), ["ns/b"]);
    cluster.insert(&secret(&[("app", "c"), ("managed", "true")]));
    assert_eq!(keys(&cluster), ["ns/b", "ns/c"]);
    // Deleting the owner collects its dependent: both changes are mapped.
    cluster.delete::<ConfigMap>(Some("ns"), "a").unwrap();
    assert_eq!(keys(&cluster), ["ns/a"]);
    assert!(cluster.get::<Deployment>(Some("ns"), "d").is_none());
}

#[test]
fn the_reconcilers_own_writes_queue_keys_too() {
    struct Creator;
    impl Reconciler for Creator {
        fn manifest() -> Manifest {
            Manifest::new::<ConfigMap>("creator")
                .owns::<Deployment>()
                .writes::<Deployment>(&[Verb::Create])
        }
        fn reconcile(ctx: &Context<'_>, request: Request) -> Result<Action> {
            let owner: ConfigMap = ctx
                .get(request.key.namespace.as_deref(), &request.key.name)?
                .expect("the primary object");
            let mut child = deployment("ns", "child", 1);
            child.metadata.owner_references = Some(vec![owner_ref(&owner)]);
            ctx.create(&child)?;
            Ok(Action::Done)
        }
    }
    let cluster = FakeCluster::new::<Creator>();
    cluster.insert(&config_map("ns", "a", &[]));
    cluster.clear_records();
    assert_eq!(
        cluster.reconcile(&ObjectKey::namespaced("ns", "a")),
        Ok(Action::Done)
    );
    // The host would see the Deployment created and queue its owner again.
    assert_eq!(keys(&cluster), ["ns/a"]);
}

#[test]
fn index_mappings_find_primary_objects_in_the_watched_objects_namespace() {
    struct ByIndex;
    impl Reconciler for ByIndex {
        fn manifest() -> Manifest {
            Manifest::new::<ConfigMap>("by-index")
                .index::<ConfigMap>("by-secret", IndexSource::Field("data.secret".into()))
                .watches::<Secret>(KeyMapping::ByIndex("by-secret".into()))
        }
        fn reconcile(_: &Context<'_>, _: Request) -> Result<Action> {
            Ok(Action::Done)
        }
    }
    let cluster = FakeCluster::new::<ByIndex>();
    cluster.insert(&config_map("ns", "uses-s", &[("secret", "s")]));
    cluster.insert(&config_map("ns", "uses-t", &[("secret", "t")]));
    cluster.insert(&config_map("other", "uses-s", &[("secret", "s")]));
    cluster.clear_records();
    let mut s = Secret::default();
    s.metadata.namespace = Some("ns".into());
    s.metadata.name = Some("s".into());
    cluster.insert(&s);
    assert_eq!(keys(&cluster), ["ns/uses-s"]);
}

#[test]
fn namespace_mappings_queue_the_namespace_and_fields_indexes_read_every_path() {
    struct PerNamespace;
    impl Reconciler for PerNamespace {
        fn manifest() -> Manifest {
            Manifest::new::<Namespace>("per-namespace")
                .watches::<ConfigMap>(KeyMapping::Namespace)
                .index::<Namespace>(
                    "by-secret",
                    IndexSource::Fields(vec![
                        "metadata.labels.secret".into(),
                        "metadata.annotations.secret".into(),
                    ]),
                )
                .watches::<Secret>(KeyMapping::ByIndex("by-secret".into()))
                .prune::<ConfigMap>("data")
        }
        fn reconcile(_: &Context<'_>, _: Request) -> Result<Action> {
            Ok(Action::Done)
        }
    }
    let cluster = FakeCluster::new::<PerNamespace>();
    let namespace = |name: &str, labels: &[(&str, &str)], annotations: &[(&str, &str)]| {
        let map = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        Namespace {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels: Some(map(labels)),
                annotations: Some(map(annotations)),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        }
    };
    cluster.insert(&namespace("a", &[("secret", "s")], &[]));
    cluster.insert(&namespace("b", &[], &[("secret", "s")]));
    cluster.insert(&namespace("c", &[("secret", "t")], &[]));
    cluster.clear_records();
    cluster.insert(&config_map("a", "settings", &[("k", "v")]));
    assert_eq!(keys(&cluster), ["a"]);
    cluster.clear_records();
    // The index finds the Namespaces that name the Secret, whichever
    // namespace the Secret is in: a cluster-scoped primary object is in none.
    let mut s = Secret::default();
    s.metadata.namespace = Some("c".into());
    s.metadata.name = Some("s".into());
    cluster.insert(&s);
    assert_eq!(keys(&cluster), ["a", "b"]);
    // ConfigMaps are cached without `data`; nothing else is pruned.
    let ctx = cluster.context();
    let cached = ctx
        .get::<ConfigMap>(Some("a"), "settings")
        .unwrap()
        .unwrap();
    assert_eq!(cached.data, None);
    let cached = ctx.get::<Namespace>(None, "a").unwrap().unwrap();
    assert_eq!(
        crate::meta::ObjectMetaExt::label(&cached.metadata, "secret"),
        Some("s")
    );
}

#[test]
fn ensure_labels_writes_only_what_is_missing_and_if_exists_writes_tolerate_not_found() {
    let cluster = FakeCluster::new::<Permissive>();
    let cm = cluster.insert(&ConfigMap {
        metadata: ObjectMeta {
            namespace: Some("default".into()),
            name: Some("a".into()),
            labels: Some(BTreeMap::from([("x".to_string(), "1".to_string())])),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    });
    let ctx = cluster.context();
    cluster.clear_records();
    assert_eq!(ctx.ensure_labels(&cm, &[("x", "1")]), Ok(None));
    assert!(
        cluster.writes().is_empty(),
        "nothing missing, nothing written"
    );
    let patched = ctx
        .ensure_labels(&cm, &[("x", "1"), ("y", "2")])
        .unwrap()
        .expect("a patch");
    assert_eq!(patched.label("y"), Some("2"));
    assert_eq!(cluster.writes().len(), 1);
    let annotated = ctx
        .ensure_annotations(&cm, &[("team", "a")])
        .unwrap()
        .expect("a patch");
    assert_eq!(annotated.annotation("team"), Some("a"));
    assert_eq!(
        annotated.label("y"),
        Some("2"),
        "the stored object's metadata"
    );
    // Metadata-only reads and merge patches: nothing is parsed into a type.
    let meta = ctx
        .get_meta::<ConfigMap>(Some("default"), "a")
        .unwrap()
        .unwrap();
    assert_eq!(meta.annotation("team"), Some("a"));
    assert_eq!(meta.resource_version, annotated.resource_version);
    assert_eq!(ctx.get_meta::<ConfigMap>(Some("default"), "nope"), Ok(None));
    let merged = ctx
        .patch_merge_meta::<ConfigMap>(
            Some("default"),
            "a",
            &json!({"metadata": {"labels": {"z": "3"}}}),
        )
        .unwrap();
    assert_eq!(merged.label("z"), Some("3"));

    let options = DeleteOptions::default();
    assert_eq!(
        ctx.delete_if_exists::<ConfigMap>(Some("default"), "a", &options),
        Ok(true)
    );
    assert_eq!(
        ctx.delete_if_exists::<ConfigMap>(Some("default"), "a", &options),
        Ok(false)
    );
    assert_eq!(
        ctx.patch_merge_if_exists::<ConfigMap>(Some("default"), "a", &json!({})),
        Ok(None)
    );
    assert_eq!(
        ctx.delete::<ConfigMap>(Some("default"), "a", &options),
        Err(Error::NotFound),
        "the plain delete still reports it"
    );
}
