//! Deletion: finalizers, propagation (Background, Orphan), synchronous
//! garbage collection of dependents, namespace termination, and the public
//! delete and delete-collection calls.

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

    /// Background garbage collection: dependents none of whose owners exist.
    fn collect_dependents(&mut self, owner_uid: &str) {
        for (tk, key, obj) in self.dependents_of(owner_uid) {
            let orphaned = owner_uids(&obj).iter().all(|u| !self.uids.contains_key(u));
            if orphaned {
                self.delete_object(&tk, key, obj, PropagationPolicy::Background);
            }
        }
    }

    /// Deletes a stored object: finalizers delay it, namespaces terminate.
    fn delete_object(
        &mut self,
        tk: &TypeKey,
        key: ObjKey,
        obj: Arc<Value>,
        policy: PropagationPolicy,
    ) -> Arc<Value> {
        if policy == PropagationPolicy::Orphan
            && let Some(uid) = meta_str(&obj, "uid")
        {
            self.orphan_dependents(uid);
        }
        if tk.0.is_empty() && tk.1 == "namespaces" {
            return self.delete_namespace(&key.1, obj);
        }
        if finalizers_of(&obj) {
            if obj.pointer("/metadata/deletionTimestamp").is_some() {
                return obj;
            }
            let mut v = (*obj).clone();
            let m = meta_mut(&mut v);
            m.insert("deletionTimestamp".into(), json!(now_rfc3339()));
            m.insert("deletionGracePeriodSeconds".into(), json!(0));
            return self.commit(tk, key, v, WatchEventKind::Modified);
        }
        self.remove(tk, key, &obj)
    }

    fn orphan_dependents(&mut self, owner_uid: &str) {
        for (tk, key, obj) in self.dependents_of(owner_uid) {
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
        let policy = options
            .propagation_policy
            .unwrap_or(PropagationPolicy::Background);
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
