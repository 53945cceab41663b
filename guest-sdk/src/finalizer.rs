//! Finalizers in the style of kube-rs's `finalizer` helper: [`finalizer`]
//! makes sure the object carries the finalizer before any
//! [`FinalizerEvent::Apply`] runs, runs [`FinalizerEvent::Cleanup`] once
//! deletion has been requested, and removes the finalizer only after cleanup
//! succeeded. Every change is a JSON patch guarded by a `test` operation, so
//! a concurrent change to the object fails the patch (the reconcile errs and
//! is retried with fresh data) instead of clobbering someone else's
//! finalizers.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Value, json};

use crate::context::Context;
use crate::types::{Action, Object, Result};

/// What the reconcile passed to [`finalizer`] is asked to do.
#[derive(Clone, Debug, PartialEq)]
pub enum FinalizerEvent<K> {
    /// The object is live and carries the finalizer: bring the world in line with it.
    Apply(K),
    /// Deletion was requested: release what the object holds. The finalizer
    /// is removed once this returns `Ok`.
    Cleanup(K),
}

/// Runs `reconcile` for `obj` under the finalizer `name`:
///
/// - live object without the finalizer: add it, then `Apply` the patched object;
/// - live object with the finalizer: `Apply`;
/// - deleted object with the finalizer: `Cleanup`, then remove the finalizer
///   and return cleanup's action;
/// - deleted object without the finalizer: nothing to do, [`Action::Done`].
///
/// Errors from `reconcile` are returned as they are and leave the
/// finalizer in place.
pub fn finalizer<K: Object>(
    ctx: &Context<'_>,
    name: &str,
    obj: K,
    reconcile: impl FnOnce(FinalizerEvent<K>) -> Result<Action>,
) -> Result<Action> {
    let meta = obj.metadata();
    let deleted = meta.deletion_timestamp.is_some();
    match (deleted, Removal::of(meta, name)) {
        (false, Some(_)) => reconcile(FinalizerEvent::Apply(obj)),
        (false, None) => {
            let obj = add(ctx, &obj, name)?;
            reconcile(FinalizerEvent::Apply(obj))
        }
        (true, Some(removal)) => {
            let action = reconcile(FinalizerEvent::Cleanup(obj))?;
            removal.patch::<K>(ctx)?;
            Ok(action)
        }
        (true, None) => Ok(Action::Done),
    }
}

/// Adds the finalizer `name` to `obj`; returns the object as stored. When
/// `obj` has finalizers, the patch tests they are still exactly those;
/// when it has none, it tests the resourceVersion (a `test` of an absent
/// member fails whatever value it names).
pub fn add<K: Object>(ctx: &Context<'_>, obj: &K, name: &str) -> Result<K> {
    let meta = obj.metadata();
    let operations = match meta.finalizers.as_deref() {
        Some(finalizers) if !finalizers.is_empty() => json!([
            {"op": "test", "path": "/metadata/finalizers", "value": finalizers},
            {"op": "add", "path": "/metadata/finalizers/-", "value": name},
        ]),
        _ => json!([
            {"op": "test", "path": "/metadata/resourceVersion", "value": meta.resource_version},
            {"op": "add", "path": "/metadata/finalizers", "value": [name]},
        ]),
    };
    let object_name = meta.name.as_deref().unwrap_or_default();
    ctx.patch_json(meta.namespace.as_deref(), object_name, &operations)
}

/// Removes the finalizer `name` from `obj`, testing that it is still at the
/// index where `obj` has it. Returns the object as stored, or `None` when
/// `obj` does not carry the finalizer (nothing is written). Once the last
/// finalizer of a deleted object is gone, the server removes the object
/// (and returns it as it was last).
pub fn remove<K: Object>(ctx: &Context<'_>, obj: &K, name: &str) -> Result<Option<K>> {
    Removal::of(obj.metadata(), name)
        .map(|removal| removal.patch(ctx))
        .transpose()
}

/// The patch removing one finalizer, taken from the metadata before the
/// object is handed to cleanup.
struct Removal {
    namespace: Option<String>,
    name: String,
    operations: Value,
}

impl Removal {
    /// `None` when `meta` does not carry `finalizer`.
    fn of(meta: &ObjectMeta, finalizer: &str) -> Option<Self> {
        let finalizers = meta.finalizers.as_deref().unwrap_or_default();
        let index = finalizers.iter().position(|f| f == finalizer)?;
        let path = format!("/metadata/finalizers/{index}");
        Some(Self {
            namespace: meta.namespace.clone(),
            name: meta.name.clone().unwrap_or_default(),
            operations: json!([
                {"op": "test", "path": path, "value": finalizer},
                {"op": "remove", "path": path},
            ]),
        })
    }

    fn patch<K: Object>(self, ctx: &Context<'_>) -> Result<K> {
        ctx.patch_json(self.namespace.as_deref(), &self.name, &self.operations)
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use proptest::prelude::*;

    use super::*;
    use crate::manifest::{Manifest, Verb};
    use crate::reconciler::Reconciler;
    use crate::testing::{FakeCluster, LogLine};
    use crate::types::{Error, ObjectKey, Request};

    const NAME: &str = "recon.dev/test";

    /// Runs the finalizer helper over ConfigMaps, logging which event ran;
    /// cleanup of `stuck` fails.
    struct Finalized;

    impl Reconciler for Finalized {
        fn manifest() -> Manifest {
            Manifest::new::<ConfigMap>("finalized").writes::<ConfigMap>(&[Verb::Patch])
        }

        fn reconcile(ctx: &Context<'_>, request: Request) -> Result<Action> {
            let key = &request.key;
            let Some(cm) = ctx.get::<ConfigMap>(key.namespace.as_deref(), &key.name)? else {
                return Ok(Action::Done);
            };
            finalizer(ctx, NAME, cm, |event| match event {
                FinalizerEvent::Apply(cm) => {
                    let finalizers = cm.metadata.finalizers.unwrap_or_default().join(",");
                    ctx.info("apply", &[("finalizers", &finalizers)]);
                    Ok(Action::Done)
                }
                FinalizerEvent::Cleanup(cm) if cm.metadata.name.as_deref() == Some("stuck") => {
                    Err(Error::Unavailable("cleanup failed".into()))
                }
                FinalizerEvent::Cleanup(_) => {
                    ctx.info("cleanup", &[]);
                    Ok(Action::RequeueAfter(std::time::Duration::from_secs(1)))
                }
            })
        }
    }

    fn config_map(name: &str, finalizers: &[&str]) -> ConfigMap {
        let mut cm = ConfigMap::default();
        cm.metadata.namespace = Some("ns".into());
        cm.metadata.name = Some(name.into());
        if !finalizers.is_empty() {
            cm.metadata.finalizers = Some(finalizers.iter().map(|f| f.to_string()).collect());
        }
        cm
    }

    fn finalizers_of(cluster: &FakeCluster, name: &str) -> Vec<String> {
        cluster
            .get::<ConfigMap>(Some("ns"), name)
            .expect("the object exists")
            .metadata
            .finalizers
            .unwrap_or_default()
    }

    fn messages(cluster: &FakeCluster) -> Vec<String> {
        cluster
            .logs()
            .into_iter()
            .map(
                |LogLine {
                     message, fields, ..
                 }| match fields.first() {
                    Some((k, v)) => format!("{message} {k}={v}"),
                    None => message,
                },
            )
            .collect()
    }

    fn key(name: &str) -> ObjectKey {
        ObjectKey::namespaced("ns", name)
    }

    /// A cluster holding the config map `name`, given the finalizer by a
    /// first reconcile and then deleted.
    fn deleted_after_first_reconcile(name: &str) -> FakeCluster {
        let cluster = FakeCluster::new::<Finalized>();
        cluster.insert(&config_map(name, &[]));
        cluster.reconcile(&key(name)).unwrap();
        cluster.delete::<ConfigMap>(Some("ns"), name).unwrap();
        cluster
    }

    #[test]
    fn the_finalizer_is_added_before_apply() {
        let cluster = FakeCluster::new::<Finalized>();
        cluster.insert(&config_map("a", &[]));
        assert_eq!(cluster.reconcile(&key("a")), Ok(Action::Done));
        assert_eq!(messages(&cluster), ["apply finalizers=recon.dev/test"]);
        assert_eq!(finalizers_of(&cluster, "a"), [NAME]);
        assert_eq!(cluster.writes().len(), 1);

        // Next time it is there: Apply, and nothing written.
        cluster.clear_records();
        assert_eq!(cluster.reconcile(&key("a")), Ok(Action::Done));
        assert_eq!(messages(&cluster), ["apply finalizers=recon.dev/test"]);
        assert!(cluster.writes().is_empty());
    }

    #[test]
    fn other_finalizers_are_kept() {
        let cluster = FakeCluster::new::<Finalized>();
        cluster.insert(&config_map("a", &["first", "second"]));
        cluster.reconcile(&key("a")).unwrap();
        assert_eq!(finalizers_of(&cluster, "a"), ["first", "second", NAME]);

        cluster.delete::<ConfigMap>(Some("ns"), "a").unwrap();
        cluster.clear_records();
        assert_eq!(
            cluster.reconcile(&key("a")),
            Ok(Action::RequeueAfter(std::time::Duration::from_secs(1))),
            "cleanup's action"
        );
        assert_eq!(messages(&cluster), ["cleanup"]);
        assert_eq!(finalizers_of(&cluster, "a"), ["first", "second"]);
    }

    #[test]
    fn cleanup_runs_on_deletion_and_then_the_object_goes() {
        let cluster = deleted_after_first_reconcile("a");
        assert!(cluster.get::<ConfigMap>(Some("ns"), "a").is_some());
        cluster.clear_records();
        cluster.reconcile(&key("a")).unwrap();
        assert_eq!(messages(&cluster), ["cleanup"]);
        assert_eq!(cluster.get::<ConfigMap>(Some("ns"), "a"), None);
        assert_eq!(cluster.reconcile(&key("a")), Ok(Action::Done));
    }

    #[test]
    fn a_failed_cleanup_keeps_the_finalizer() {
        let cluster = deleted_after_first_reconcile("stuck");
        assert_eq!(
            cluster.reconcile(&key("stuck")),
            Err(Error::Unavailable("cleanup failed".into()))
        );
        assert_eq!(finalizers_of(&cluster, "stuck"), [NAME]);
    }

    #[test]
    fn a_deleted_object_without_the_finalizer_is_left_alone() {
        let cluster = FakeCluster::new::<Finalized>();
        cluster.insert(&config_map("a", &["someone-else"]));
        cluster.delete::<ConfigMap>(Some("ns"), "a").unwrap();
        assert_eq!(cluster.reconcile(&key("a")), Ok(Action::Done));
        assert!(cluster.logs().is_empty());
        assert!(cluster.writes().is_empty());
        assert_eq!(finalizers_of(&cluster, "a"), ["someone-else"]);
    }

    #[test]
    fn remove_without_the_finalizer_writes_nothing() {
        let cluster = FakeCluster::new::<Finalized>();
        let cm = cluster.insert(&config_map("a", &["other"]));
        assert_eq!(remove(&cluster.context(), &cm, NAME), Ok(None));
        assert!(cluster.writes().is_empty());
    }

    fn finalizer_names() -> impl Strategy<Value = Vec<String>> {
        proptest::collection::btree_set("[a-z]{1,6}(/[a-z]{1,6})?", 0..5)
            .prop_map(|names| names.into_iter().collect())
    }

    fn refs(names: &[String]) -> Vec<&str> {
        names.iter().map(String::as_str).collect()
    }

    proptest! {
        #[test]
        fn add_then_remove_leaves_the_other_finalizers_in_order(others in finalizer_names()) {
            let cluster = FakeCluster::new::<Finalized>();
            let ctx = cluster.context();
            let cm = cluster.insert(&config_map("a", &refs(&others)));
            let added = add(&ctx, &cm, NAME).unwrap();
            let mut expected = others.clone();
            expected.push(NAME.to_string());
            prop_assert_eq!(added.metadata.finalizers.clone().unwrap(), expected);
            let removed = remove(&ctx, &added, NAME).unwrap().unwrap();
            prop_assert_eq!(removed.metadata.finalizers.unwrap_or_default(), others);
        }

        #[test]
        fn a_concurrent_change_fails_the_add_instead_of_being_clobbered(
            others in finalizer_names(),
        ) {
            let cluster = FakeCluster::new::<Finalized>();
            let ctx = cluster.context();
            let stale = cluster.insert(&config_map("a", &refs(&others)));
            let mut changed = others.clone();
            changed.push("intruder".to_string());
            cluster.insert(&config_map("a", &refs(&changed)));
            prop_assert!(matches!(add(&ctx, &stale, NAME), Err(Error::Invalid(_))));
            prop_assert_eq!(finalizers_of(&cluster, "a"), changed);
        }

        #[test]
        fn a_concurrent_change_fails_the_remove_instead_of_removing_another(
            others in finalizer_names().prop_filter("one to drop", |o| !o.is_empty()),
        ) {
            let cluster = FakeCluster::new::<Finalized>();
            let ctx = cluster.context();
            let mut all = others.clone();
            all.push(NAME.to_string());
            let stale = cluster.insert(&config_map("a", &refs(&all)));
            // Someone removes the first finalizer: ours moves down one place.
            let shifted: Vec<String> = all[1..].to_vec();
            cluster.insert(&config_map("a", &refs(&shifted)));
            prop_assert!(matches!(remove(&ctx, &stale, NAME), Err(Error::Invalid(_))));
            prop_assert_eq!(finalizers_of(&cluster, "a"), shifted);
        }
    }
}
