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
//!   the collector looks at each of its dependents (below).
//! - `Orphan`: the object gets a `deletionTimestamp` and the `orphan`
//!   finalizer, which the DELETE answers with; then its dependents lose
//!   their references to it, the finalizer goes, and so does the object.
//! - `Foreground`: the object gets a `deletionTimestamp` and the
//!   `foregroundDeletion` finalizer, which the DELETE answers with; then
//!   the collector looks at each of its dependents, and the finalizer goes
//!   (then the object) once no dependent left blocks it
//!   (`blockOwnerDeletion`), however that comes about: deleted, or its
//!   reference dropped or unblocked by a write.
//!
//! A delete puts its policy's finalizer in place of the other's
//! (`deletionFinalizersForGarbageCollection`): an object left with no
//! finalizer goes at once, a second delete may change the policy, and the
//! first delete that leaves an object pending bumps its generation.
//!
//! The collector's look at one object (`attemptToDeleteItem`), after any
//! write of it and when one of its owners goes or starts a foreground
//! deletion: each owner reference is looked up by kind and name in the
//! object's namespace and its uid compared (an owner of a kind not served
//! cannot be, and counts as present). An object with an owner left loses
//! its references to the owners that are gone or deleting in the
//! foreground; one with none left is deleted, in the foreground if an
//! owner waits for it and it has dependents of its own (its references
//! unblocked first if one of those waits too, which ends a cycle), else as
//! its finalizers say. An object already being deleted is left alone, so
//! the work ends however objects own each other.
//!
//! A Namespace's delete terminates the namespace; its policy's finalizers
//! are not added.

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

/// Whether `obj` is being deleted in the foreground, waiting for its
/// dependents (`isDeletingDependents`).
fn deleting_dependents(obj: &Value) -> bool {
    obj.pointer("/metadata/deletionTimestamp").is_some() && has_finalizer(obj, FOREGROUND)
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

/// What the collector makes of one owner reference (`classifyReferences`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// The owner exists and is not being deleted in the foreground (or its
    /// kind is not served, which the collector cannot look up and leaves).
    Solid,
    /// The owner is being deleted in the foreground, waiting for its
    /// dependents.
    Waiting,
    /// The owner does not exist: no object of its kind and name in the
    /// dependent's namespace (or the cluster, for a cluster-scoped kind),
    /// or one with another uid.
    Dangling,
}

impl State {
    /// Removes an object for good, then collects what depended on it.
    pub(super) fn remove(&mut self, tk: &TypeKey, key: ObjKey, obj: &Value) -> Arc<Value> {
        let removed = self.commit(tk, key.clone(), obj.clone(), WatchEventKind::Deleted);
        if kinds::is_crd_type(&tk.0, &tk.1) {
            self.unserve_crd(obj);
        }
        if let Some(uid) = meta_str(obj, "uid") {
            for (tk, key) in self.dependents_of(uid) {
                self.attempt_to_delete(&tk, key);
            }
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

    /// Where the stored dependents of the owner `owner_uid` are, in key
    /// order (each looked up again when its turn comes, as earlier turns
    /// may have changed it).
    fn dependents_of(&self, owner_uid: &str) -> Vec<(TypeKey, ObjKey)> {
        let mut deps: Vec<_> = self
            .dependents
            .get(owner_uid)
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        deps.sort();
        deps
    }

    /// The owner the reference `reference` of an object in `namespace`
    /// names, as the collector finds it (`isDangling`): looked up by kind
    /// and name, its uid compared.
    fn owner(&self, namespace: &str, reference: &Value) -> Owner {
        let field = |name: &str| reference.get(name).and_then(Value::as_str).unwrap_or("");
        let (group, version) = field("apiVersion")
            .split_once('/')
            .unwrap_or(("", field("apiVersion")));
        let served = self
            .types
            .values()
            .flat_map(|t| &t.versions)
            .find(|rt| rt.group == group && rt.version == version && rt.kind == field("kind"));
        let Some(rt) = served else {
            return Owner::Solid;
        };
        let namespace = if rt.namespaced { namespace } else { "" };
        let key: ObjKey = (namespace.to_string(), field("name").to_string());
        match self.lookup(&rt.storage_key(), &key) {
            Some(owner) if meta_str(&owner, "uid") == Some(field("uid")) => {
                if deleting_dependents(&owner) {
                    Owner::Waiting
                } else {
                    Owner::Solid
                }
            }
            _ => Owner::Dangling,
        }
    }

    /// The collector's look at the stored object at `tk`/`key`
    /// (`attemptToDeleteItem`), after a write of it or a change to one of
    /// its owners. An object being deleted is left as it is. One with an
    /// owner left loses its references to the owners that are gone or
    /// waiting in the foreground; one with none left is deleted: in the
    /// foreground if an owner waits for it and it has dependents of its
    /// own (its references then made non-blocking if one of those waits
    /// too, which breaks a cycle), else as its finalizers say.
    pub(super) fn attempt_to_delete(&mut self, tk: &TypeKey, key: ObjKey) {
        let Some(obj) = self.lookup(tk, &key) else {
            return;
        };
        let references: Vec<Value> = obj
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if references.is_empty() || obj.pointer("/metadata/deletionTimestamp").is_some() {
            return;
        }
        let owners: Vec<Owner> = references.iter().map(|r| self.owner(&key.0, r)).collect();
        if owners.contains(&Owner::Solid) {
            if owners.iter().any(|o| *o != Owner::Solid) {
                let mut v = (*obj).clone();
                let mut kept = owners.iter();
                if let Some(refs) = v
                    .pointer_mut("/metadata/ownerReferences")
                    .and_then(Value::as_array_mut)
                {
                    refs.retain(|_| kept.next() == Some(&Owner::Solid));
                }
                self.commit(tk, key, v, WatchEventKind::Modified);
            }
            return;
        }
        let dependents = meta_str(&obj, "uid")
            .map(|uid| self.dependents_of(uid))
            .unwrap_or_default();
        let policy = if owners.contains(&Owner::Waiting) && !dependents.is_empty() {
            let cycle = dependents.iter().any(|(dtk, dkey)| {
                self.lookup(dtk, dkey)
                    .is_some_and(|d| deleting_dependents(&d))
            });
            if cycle {
                self.unblock_owner_references(tk, key.clone(), &obj);
            }
            PropagationPolicy::Foreground
        } else {
            collector_policy(&obj)
        };
        if let Some(obj) = self.lookup(tk, &key) {
            self.delete_object(tk, key, obj, policy);
        }
    }

    /// Sets `blockOwnerDeletion` false on each of an object's references.
    fn unblock_owner_references(&mut self, tk: &TypeKey, key: ObjKey, obj: &Value) {
        let mut v = obj.clone();
        for r in v
            .pointer_mut("/metadata/ownerReferences")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if r.get("blockOwnerDeletion").and_then(Value::as_bool) == Some(true) {
                r["blockOwnerDeletion"] = json!(false);
            }
        }
        self.commit(tk, key, v, WatchEventKind::Modified);
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
        // `deletionFinalizersForGarbageCollection`: the policy's finalizer
        // in place of the other's.
        let mut finalizers: Vec<Value> = obj
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        finalizers.retain(|f| f.as_str() != Some(ORPHAN) && f.as_str() != Some(FOREGROUND));
        match policy {
            PropagationPolicy::Background => {}
            PropagationPolicy::Orphan => finalizers.push(json!(ORPHAN)),
            PropagationPolicy::Foreground => finalizers.push(json!(FOREGROUND)),
        }
        if finalizers.is_empty() {
            return self.remove(tk, key, &obj);
        }
        let pending = self.start_deletion(tk, key.clone(), &obj, finalizers);
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
                for (dtk, dkey) in self.dependents_of(&uid) {
                    self.attempt_to_delete(&dtk, dkey);
                }
                self.finish_foreground(&uid);
            }
        }
        pending
    }

    /// `markAsDeleting` with `finalizers`: the object's
    /// `deletionTimestamp` set (once, its generation bumped with it) and
    /// its finalizers these; the object as it then stands.
    fn start_deletion(
        &mut self,
        tk: &TypeKey,
        key: ObjKey,
        obj: &Arc<Value>,
        finalizers: Vec<Value>,
    ) -> Arc<Value> {
        let started = obj.pointer("/metadata/deletionTimestamp").is_some();
        let unchanged =
            obj.pointer("/metadata/finalizers") == Some(&Value::Array(finalizers.clone()));
        if started && unchanged {
            return obj.clone();
        }
        let mut v = (**obj).clone();
        let m = meta_mut(&mut v);
        if !started {
            m.insert("deletionTimestamp".into(), json!(now_rfc3339()));
            m.insert("deletionGracePeriodSeconds".into(), json!(0));
            if let Some(generation) = m
                .get("generation")
                .and_then(Value::as_i64)
                .filter(|g| *g > 0)
            {
                m.insert("generation".into(), json!(generation + 1));
            }
        }
        m.insert("finalizers".into(), Value::Array(finalizers));
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

    /// Ends the foreground deletion of the owner `owner_uid` once no
    /// dependent blocks it (`processDeletingDependentsItem`): its
    /// `foregroundDeletion` finalizer goes.
    pub(super) fn finish_foreground(&mut self, owner_uid: &str) {
        let Some((tk, key)) = self.uids.get(owner_uid).cloned() else {
            return;
        };
        let Some(owner) = self.lookup(&tk, &key) else {
            return;
        };
        if !deleting_dependents(&owner) {
            return;
        }
        let blocked = self.dependents_of(owner_uid).iter().any(|(dtk, dkey)| {
            self.lookup(dtk, dkey)
                .is_some_and(|dependent| blocks(&dependent, owner_uid))
        });
        if !blocked {
            self.drop_finalizer(&tk, key, FOREGROUND);
        }
    }

    /// The garbage collector's orphaning: each dependent of the owner
    /// `owner_uid` loses its reference to it.
    fn orphan_dependents(&mut self, owner_uid: &str) {
        for (tk, key) in self.dependents_of(owner_uid) {
            let Some(obj) = self.lookup(&tk, &key) else {
                continue;
            };
            let mut v = (*obj).clone();
            if let Some(refs) = v
                .pointer_mut("/metadata/ownerReferences")
                .and_then(Value::as_array_mut)
            {
                refs.retain(|r| r.get("uid").and_then(Value::as_str) != Some(owner_uid));
                if refs.is_empty() {
                    meta_mut(&mut v).remove("ownerReferences");
                }
            }
            self.commit(&tk, key, v, WatchEventKind::Modified);
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
