//! Deletion: finalizers, propagation, synchronous garbage collection of
//! dependents, namespace termination, and the public delete and
//! delete-collection calls.
//!
//! Propagation follows kube-apiserver's registry and the garbage
//! collector, run at once: the policy a delete asks for, else an `orphan`
//! or `foregroundDeletion` finalizer the object has, else its kind's
//! default (`Orphan` for v1 ReplicationControllers and batch/v1 Jobs, for
//! backward compatibility; `Background` otherwise).
//! - `Background`: the object goes (or waits for its finalizers), then
//!   each dependent none of whose owners is left.
//! - `Orphan`: the object gets a `deletionTimestamp` and the `orphan`
//!   finalizer, which the DELETE answers with; then its dependents lose
//!   their references to it, the finalizer goes, and so does the object.
//! - `Foreground`: the object gets a `deletionTimestamp` and the
//!   `foregroundDeletion` finalizer, which the DELETE answers with; then
//!   each dependent that blocks its owner's deletion
//!   (`blockOwnerDeletion`) and has no other owner left is deleted (in
//!   the foreground if it has dependents of its own), one that has another
//!   owner loses its reference instead, and once no blocking dependent is
//!   left the finalizer goes, then the object, then the remaining
//!   dependents in the background.
//!
//! A written object whose owners all do not exist is collected at once, as
//! the collector does once it finds them absent.

use std::sync::Arc;

use recon_api_semantics::writes::delete_precondition_failure;
use serde_json::{Value, json};

use super::meta::{
    finalizers_of, meta_mut, meta_str, name_of, namespace_of, now_rfc3339, owner_uids,
};
use super::{
    ApiError, DeleteOptions, ListParams, ObjKey, PropagationPolicy, ResourceType, State, Store,
    TypeKey, WatchEventKind, kinds, relabel,
};

/// The finalizer of a delete that orphans its dependents.
const ORPHAN: &str = "orphan";
/// The finalizer of a foreground delete.
const FOREGROUND: &str = "foregroundDeletion";

/// The policy a DELETE of `obj`, of the stored type `tk`, follows
/// (`shouldOrphanDependents`, `shouldDeleteDependents`): the one `asked`,
/// else the one an `orphan` or `foregroundDeletion` finalizer names, else
/// the kind's default.
fn delete_policy(tk: &TypeKey, obj: &Value, asked: Option<PropagationPolicy>) -> PropagationPolicy {
    if let Some(policy) = asked.or_else(|| finalizer_policy(obj)) {
        return policy;
    }
    // `DefaultGarbageCollectionPolicy` of v1 ReplicationControllers and
    // batch/v1 Jobs, the only versions served of them.
    match (tk.0.as_str(), tk.1.as_str()) {
        ("", "replicationcontrollers") | ("batch", "jobs") => PropagationPolicy::Orphan,
        _ => PropagationPolicy::Background,
    }
}

/// The policy an `orphan` or `foregroundDeletion` finalizer of `obj`
/// names.
fn finalizer_policy(obj: &Value) -> Option<PropagationPolicy> {
    if has_finalizer(obj, ORPHAN) {
        Some(PropagationPolicy::Orphan)
    } else if has_finalizer(obj, FOREGROUND) {
        Some(PropagationPolicy::Foreground)
    } else {
        None
    }
}

/// The policy the garbage collector deletes a dependent with
/// (`attemptToDeleteItem`): its finalizers', else `Background`.
fn collector_policy(obj: &Value) -> PropagationPolicy {
    finalizer_policy(obj).unwrap_or(PropagationPolicy::Background)
}

fn has_finalizer(obj: &Value, finalizer: &str) -> bool {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|list| list.iter().any(|f| f.as_str() == Some(finalizer)))
}

/// Whether `obj`'s reference to the owner `owner_uid` blocks the owner's
/// foreground deletion (`blockOwnerDeletion`).
fn blocks(obj: &Value, owner_uid: &str) -> bool {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|r| {
            r.get("uid").and_then(Value::as_str) == Some(owner_uid)
                && r.get("blockOwnerDeletion").and_then(Value::as_bool) == Some(true)
        })
}

impl State {
    /// Removes an object for good, then collects what depended on it.
    pub(super) fn remove(&mut self, tk: &TypeKey, key: ObjKey, obj: &Value) -> Arc<Value> {
        let removed = self.commit(tk, key.clone(), obj.clone(), WatchEventKind::Deleted);
        if kinds::is_crd_type(&tk.0, &tk.1) {
            self.unserve_crd(obj);
        }
        if let Some(uid) = meta_str(obj, "uid") {
            self.collect_dependents(uid);
        }
        // An owner deleted in the foreground may have waited for this one.
        for owner in owner_uids(obj) {
            self.finish_foreground(&owner);
        }
        // A terminating namespace goes once its last object is gone.
        if !key.0.is_empty() {
            let ns = key.0.clone();
            if let Some(nsobj) = self.namespace_obj(&ns)
                && nsobj.pointer("/metadata/deletionTimestamp").is_some()
            {
                self.finish_namespace(&ns);
            }
        }
        removed
    }

    /// The stored dependents of the owner `owner_uid`, in key order.
    fn dependents_of(&self, owner_uid: &str) -> Vec<(TypeKey, ObjKey, Arc<Value>)> {
        let mut deps: Vec<_> = self
            .dependents
            .get(owner_uid)
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        deps.sort();
        deps.into_iter()
            .filter_map(|(tk, key)| {
                let obj = self.lookup(&tk, &key)?;
                Some((tk, key, obj))
            })
            .collect()
    }

    /// Background garbage collection after the owner `owner_uid` went: a
    /// dependent none of whose owners exist is deleted, one with another
    /// owner loses its reference to this one.
    fn collect_dependents(&mut self, owner_uid: &str) {
        for (tk, key, obj) in self.dependents_of(owner_uid) {
            let orphaned = owner_uids(&obj).iter().all(|u| !self.uids.contains_key(u));
            if orphaned {
                let policy = collector_policy(&obj);
                self.delete_object(&tk, key, obj, policy);
            } else {
                // Another owner is left: the dangling reference goes.
                self.drop_owner_reference(&tk, key, &obj, owner_uid);
            }
        }
    }

    /// The collector's look at a written object: one whose owner
    /// references all name owners that do not exist (a uid never seen, or
    /// one gone) is deleted, as the collector deletes the dependents of an
    /// owner it finds absent; the write's answer is the object as written.
    pub(super) fn collect_if_dangling(&mut self, tk: &TypeKey, key: ObjKey, obj: &Arc<Value>) {
        let owners = owner_uids(obj);
        if owners.is_empty() || owners.iter().any(|uid| self.uids.contains_key(uid)) {
            return;
        }
        let policy = collector_policy(obj);
        self.delete_object(tk, key, obj.clone(), policy);
    }

    /// Deletes a stored object as `policy` says (see the module doc):
    /// finalizers delay it, namespaces terminate. Returns the object as
    /// the DELETE answers: removed, or pending with its deletion started.
    fn delete_object(
        &mut self,
        tk: &TypeKey,
        key: ObjKey,
        obj: Arc<Value>,
        policy: PropagationPolicy,
    ) -> Arc<Value> {
        if tk.0.is_empty() && tk.1 == "namespaces" {
            if policy == PropagationPolicy::Orphan
                && let Some(uid) = meta_str(&obj, "uid")
            {
                self.orphan_dependents(uid);
            }
            return self.delete_namespace(&key.1, obj);
        }
        let finalizer = match policy {
            PropagationPolicy::Background => None,
            PropagationPolicy::Orphan => Some(ORPHAN),
            PropagationPolicy::Foreground => Some(FOREGROUND),
        };
        if !finalizers_of(&obj) && finalizer.is_none() {
            return self.remove(tk, key, &obj);
        }
        let pending = self.start_deletion(tk, key.clone(), &obj, finalizer);
        let Some(uid) = meta_str(&obj, "uid").map(str::to_string) else {
            return pending;
        };
        match policy {
            PropagationPolicy::Background => {}
            PropagationPolicy::Orphan => {
                self.orphan_dependents(&uid);
                self.drop_finalizer(tk, key, ORPHAN);
            }
            PropagationPolicy::Foreground => {
                self.delete_blocking_dependents(&uid);
                self.finish_foreground(&uid);
            }
        }
        pending
    }

    /// Sets the object's `deletionTimestamp` (once) and adds `finalizer`
    /// (if it has none such); the object as it then stands.
    fn start_deletion(
        &mut self,
        tk: &TypeKey,
        key: ObjKey,
        obj: &Arc<Value>,
        finalizer: Option<&str>,
    ) -> Arc<Value> {
        let started = obj.pointer("/metadata/deletionTimestamp").is_some();
        let has = |f: &str| has_finalizer(obj, f);
        if started && finalizer.is_none_or(has) {
            return obj.clone();
        }
        let mut v = (**obj).clone();
        let m = meta_mut(&mut v);
        if !started {
            m.insert("deletionTimestamp".into(), json!(now_rfc3339()));
            m.insert("deletionGracePeriodSeconds".into(), json!(0));
        }
        if let Some(finalizer) = finalizer.filter(|f| !has(f)) {
            let list = m.entry("finalizers").or_insert_with(|| json!([]));
            if let Some(list) = list.as_array_mut() {
                list.push(json!(finalizer));
            }
        }
        self.commit(tk, key, v, WatchEventKind::Modified)
    }

    /// Removes `finalizer` from a stored object being deleted; the object
    /// goes when it was the last.
    fn drop_finalizer(&mut self, tk: &TypeKey, key: ObjKey, finalizer: &str) {
        let Some(obj) = self.lookup(tk, &key) else {
            return;
        };
        let mut v = (*obj).clone();
        if let Some(list) = v
            .pointer_mut("/metadata/finalizers")
            .and_then(Value::as_array_mut)
        {
            list.retain(|f| f.as_str() != Some(finalizer));
            if list.is_empty() {
                meta_mut(&mut v).remove("finalizers");
            }
        }
        if finalizers_of(&v) {
            self.commit(tk, key, v, WatchEventKind::Modified);
        } else {
            self.remove(tk, key, &v);
        }
    }

    /// The foreground deletion of the owner `owner_uid`: each dependent
    /// that blocks it loses its reference when another owner of it is
    /// left, else is deleted (in the foreground if it has dependents).
    fn delete_blocking_dependents(&mut self, owner_uid: &str) {
        for (tk, key, obj) in self.dependents_of(owner_uid) {
            if !blocks(&obj, owner_uid) {
                continue;
            }
            let other_owner = owner_uids(&obj)
                .iter()
                .any(|u| u != owner_uid && self.solid(u));
            if other_owner {
                self.drop_owner_reference(&tk, key, &obj, owner_uid);
                continue;
            }
            let has_dependents =
                meta_str(&obj, "uid").is_some_and(|uid| !self.dependents_of(uid).is_empty());
            let policy = if has_dependents {
                PropagationPolicy::Foreground
            } else {
                collector_policy(&obj)
            };
            self.delete_object(&tk, key, obj, policy);
        }
    }

    /// Whether the owner `uid` exists and is not being deleted in the
    /// foreground.
    fn solid(&self, uid: &str) -> bool {
        self.uids
            .get(uid)
            .and_then(|(tk, key)| self.lookup(tk, key))
            .is_some_and(|owner| {
                owner.pointer("/metadata/deletionTimestamp").is_none()
                    || !has_finalizer(&owner, FOREGROUND)
            })
    }

    /// Ends the foreground deletion of the owner `owner_uid` once no
    /// dependent blocks it: its `foregroundDeletion` finalizer goes.
    fn finish_foreground(&mut self, owner_uid: &str) {
        let Some((tk, key)) = self.uids.get(owner_uid).cloned() else {
            return;
        };
        let Some(owner) = self.lookup(&tk, &key) else {
            return;
        };
        if owner.pointer("/metadata/deletionTimestamp").is_none()
            || !has_finalizer(&owner, FOREGROUND)
        {
            return;
        }
        let blocked = self
            .dependents_of(owner_uid)
            .iter()
            .any(|(_, _, dependent)| blocks(dependent, owner_uid));
        if !blocked {
            self.drop_finalizer(&tk, key, FOREGROUND);
        }
    }

    fn drop_owner_reference(&mut self, tk: &TypeKey, key: ObjKey, obj: &Value, owner_uid: &str) {
        let mut v = obj.clone();
        if let Some(refs) = v
            .pointer_mut("/metadata/ownerReferences")
            .and_then(Value::as_array_mut)
        {
            refs.retain(|r| r.get("uid").and_then(Value::as_str) != Some(owner_uid));
            if refs.is_empty() {
                meta_mut(&mut v).remove("ownerReferences");
            }
        }
        self.commit(tk, key, v, WatchEventKind::Modified);
    }

    /// The garbage collector's orphaning: each dependent of the owner
    /// `owner_uid` loses its reference to it.
    fn orphan_dependents(&mut self, owner_uid: &str) {
        for (tk, key, obj) in self.dependents_of(owner_uid) {
            self.drop_owner_reference(&tk, key, &obj, owner_uid);
        }
    }

    fn delete_namespace(&mut self, name: &str, obj: Arc<Value>) -> Arc<Value> {
        let nstk: TypeKey = (String::new(), "namespaces".into());
        let key: ObjKey = (String::new(), name.to_string());
        if obj.pointer("/metadata/deletionTimestamp").is_none() {
            let mut v = (*obj).clone();
            meta_mut(&mut v).insert("deletionTimestamp".into(), json!(now_rfc3339()));
            v["status"] = json!({"phase": "Terminating"});
            self.commit(&nstk, key.clone(), v, WatchEventKind::Modified);
        }
        let namespaced: Vec<TypeKey> = self
            .types
            .iter()
            .filter(|(_, t)| t.versions.first().is_some_and(|v| v.namespaced))
            .map(|(k, _)| k.clone())
            .collect();
        for tk in namespaced {
            let keys: Vec<ObjKey> = self
                .objects
                .get(&tk)
                .map(|m| {
                    m.range((name.to_string(), String::new())..)
                        .take_while(|(k, _)| k.0 == name)
                        .map(|(k, _)| k.clone())
                        .collect()
                })
                .unwrap_or_default();
            for k in keys {
                if let Some(o) = self.lookup(&tk, &k) {
                    self.delete_object(&tk, k, o, PropagationPolicy::Background);
                }
            }
        }
        self.finish_namespace(name);
        self.namespace_obj(name)
            .or_else(|| {
                self.history
                    .iter()
                    .rev()
                    .find(|h| h.tk == nstk && name_of(&h.object) == name)
                    .map(|h| h.object.clone())
            })
            .unwrap_or(obj)
    }

    /// Removes a terminating namespace once nothing is left in it.
    pub(super) fn finish_namespace(&mut self, ns: &str) {
        let empty = self.objects.iter().all(|(_, m)| {
            m.range((ns.to_string(), String::new())..)
                .next()
                .is_none_or(|(k, _)| k.0 != ns)
        });
        if !empty {
            return;
        }
        let nstk: TypeKey = (String::new(), "namespaces".into());
        let key: ObjKey = (String::new(), ns.to_string());
        if let Some(obj) = self.lookup(&nstk, &key)
            && obj.pointer("/metadata/deletionTimestamp").is_some()
            && !finalizers_of(&obj)
        {
            self.remove(&nstk, key, &obj);
        }
    }
}

impl Store {
    /// Deletes an object; returns the deleted object, or the object with
    /// `deletionTimestamp` set while finalizers remain.
    pub fn delete(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<Value, ApiError> {
        let mut state = self.shared.lock();
        let rt = state.served(rt)?;
        let tk = rt.storage_key();
        let (key, obj) = state.existing(&rt, namespace, name)?;
        if let Some(why) = delete_precondition_failure(
            &obj,
            options.precondition_uid.as_deref(),
            options.precondition_resource_version.as_deref(),
        ) {
            return Err(ApiError::conflict_message(&rt, name, &why));
        }
        let policy = delete_policy(&tk, &obj, options.propagation_policy);
        let result = state.delete_object(&tk, key, obj, policy);
        Ok((*relabel(&result, &rt)).clone())
    }

    /// Deletes every object a list with `params` returns (DELETE on the
    /// collection), each as [`Store::delete`] would; returns what each
    /// delete returned.
    pub fn delete_collection(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        params: &ListParams,
        options: &DeleteOptions,
    ) -> Result<Vec<Value>, ApiError> {
        let params = ListParams {
            limit: None,
            continue_token: None,
            ..params.clone()
        };
        let items = self.list(rt, namespace, &params)?.items;
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let ns = Some(namespace_of(&item)).filter(|n| !n.is_empty());
            match self.delete(rt, ns, name_of(&item), options) {
                Ok(v) => out.push(v),
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }
}
