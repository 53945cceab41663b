//! Objects: create and update (PUT, and where patches and subresource
//! writes end) with their names, namespaces, resourceVersion and generation
//! rules, the apiVersion/kind checks of a body, the scale subresource, and
//! the public get / create / update calls.

use std::sync::Arc;

use recon_api_semantics::object::{Generation, equal_but_resource_version, keep_server_metadata};
use serde_json::{Map, Value, json};

use super::meta::{
    encode_string_data, finalizers_of, meta_mut, meta_str, name_of, namespace_of, new_uid,
    now_rfc3339, owner_uids, random_suffix,
};
use super::{
    ApiError, ObjKey, ResourceType, State, Store, Subresource, WatchEventKind, apply, cel,
    defaults, disabled_fields, events, kinds, names, namespace_type, qos, relabel, schema,
    service_alloc, times, typed, validation,
};

impl State {
    fn check_type_fields(rt: &ResourceType, body: &mut Value) -> Result<(), ApiError> {
        if !body.is_object() {
            return Err(ApiError::bad_request(
                "the body of the request must be a JSON object",
            ));
        }
        let api_version = rt.api_version();
        match body.get("apiVersion").and_then(Value::as_str) {
            None | Some("") => body["apiVersion"] = json!(api_version),
            Some(v) if v == api_version => {}
            Some(v) => {
                return Err(ApiError::bad_request(format!(
                    "the API version in the data ({v}) does not match the expected API version ({api_version})"
                )));
            }
        }
        match body.get("kind").and_then(Value::as_str) {
            None | Some("") => body["kind"] = json!(rt.kind),
            Some(k) if k == rt.kind => {}
            Some(k) => {
                return Err(ApiError::bad_request(format!(
                    "the kind in the data ({k}) does not match the expected kind ({})",
                    rt.kind
                )));
            }
        }
        Ok(())
    }

    /// A built-in kind's written body as its API type reads it: its times
    /// decoded, the fields the type lacks dropped, a value it cannot read a
    /// 400.
    fn read_typed(rt: &ResourceType, body: &mut Value) -> Result<(), ApiError> {
        times::normalize(&rt.group, &rt.version, &rt.kind, body)
            .map_err(|e| undecodable(rt, &e))?;
        let unknown = typed::read(rt, body).map_err(|why| undecodable(rt, &why))?;
        typed::drop_fields(body, &unknown);
        Ok(())
    }

    /// A custom resource's schema on a written object: undeclared fields
    /// pruned, defaults filled in, then validated (422 with every cause).
    fn apply_schema(
        rt: &ResourceType,
        name: &str,
        object: &mut Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let Some(schema) = &rt.schema else {
            return Ok(());
        };
        schema::prune_and_default(schema, object);
        let mut causes = schema::validate(schema, object);
        // As apiextensions' strategy: the rules run unless a value has the
        // wrong type (`hasBlockingErr`).
        if !causes.iter().any(|c| c.body.contains("must be of type")) {
            causes.extend(cel::check(schema, object, old));
        }
        if causes.is_empty() {
            Ok(())
        } else {
            Err(ApiError::invalid_causes(rt, name, &causes))
        }
    }

    /// What a Service's registry allocates before it validates a write
    /// (`service_alloc`): on create (`old` none) or update, the other
    /// Services' cluster IPs and node ports taken. A refusal is the
    /// server's 422 or 500, and hands out nothing.
    fn allocate_service(
        &mut self,
        rt: &ResourceType,
        name: &str,
        key: &ObjKey,
        service: &mut Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let others = self
            .objects
            .get(&(String::new(), "services".to_string()))
            .into_iter()
            .flat_map(|all| all.iter())
            // An update's own addresses and ports are its to keep; a
            // create's namesake holds its own.
            .filter(|(k, _)| old.is_none() || *k != key)
            .map(|(_, service)| service.as_ref());
        let mut taken = service_alloc::Taken::of(others);
        let cursor = self.last_cluster_ip;
        let allocated = match old {
            None => service_alloc::create(service, &mut taken, &mut self.last_cluster_ip),
            Some(old) => service_alloc::update(service, old, &mut taken, &mut self.last_cluster_ip),
        };
        if allocated.is_err() {
            self.last_cluster_ip = cursor;
        }
        allocated.map_err(|refusal| match refusal {
            service_alloc::Refusal::Invalid(causes) => ApiError::invalid_causes(rt, name, &causes),
            service_alloc::Refusal::Internal(message) => ApiError::internal(&message),
        })
    }

    pub(super) fn create(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        mut body: Value,
        managed: Option<Value>,
    ) -> Result<Arc<Value>, ApiError> {
        let rt = self.served(rt)?;
        Self::check_type_fields(&rt, &mut body)?;
        Self::read_typed(&rt, &mut body)?;
        let mut body = stored_form(&rt, body);
        let tk = rt.storage_key();
        let meta = meta_mut(&mut body);
        // Namespace.
        let ns = if rt.namespaced {
            let body_ns = meta.get("namespace").and_then(Value::as_str).unwrap_or("");
            let ns = match namespace {
                Some(ns) if !ns.is_empty() => {
                    if !body_ns.is_empty() && body_ns != ns {
                        return Err(ApiError::bad_request(
                            "the namespace of the provided object does not match the namespace sent on the request",
                        ));
                    }
                    ns.to_string()
                }
                _ if !body_ns.is_empty() => body_ns.to_string(),
                _ => {
                    return Err(ApiError::bad_request(
                        "a namespace is required for namespaced resources",
                    ));
                }
            };
            meta.insert("namespace".into(), json!(ns));
            ns
        } else {
            meta.remove("namespace");
            String::new()
        };
        // Name.
        let name = match meta.get("name").and_then(Value::as_str) {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => match meta.get("generateName").and_then(Value::as_str) {
                Some(prefix) if !prefix.is_empty() => {
                    let prefix = prefix.to_string();
                    loop {
                        let candidate = format!("{prefix}{}", random_suffix());
                        if self.lookup(&tk, &(ns.clone(), candidate.clone())).is_none() {
                            break candidate;
                        }
                    }
                }
                _ => {
                    let cause = schema::Cause {
                        field: "metadata.name".into(),
                        reason: "FieldValueRequired",
                        body: "Required value: name or generateName is required".into(),
                    };
                    return Err(ApiError::invalid_causes(&rt, "", &[cause]));
                }
            },
        };
        let meta = meta_mut(&mut body);
        meta.insert("name".into(), json!(name));
        if rt.namespaced {
            match self.namespace_obj(&ns) {
                None => return Err(ApiError::not_found(&namespace_type(), &ns)),
                Some(n) if n.pointer("/metadata/deletionTimestamp").is_some() => {
                    return Err(ApiError::forbidden(
                        &rt,
                        &name,
                        &format!(
                            "unable to create new content in namespace {ns} because it is being terminated"
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        // The metadata's causes come first in the strategy's validation,
        // which runs after the registry allocated and before the storage
        // finds the name taken.
        let mut causes = names::metadata_causes(&rt, meta_mut(&mut body), Some(&name));
        let key = (ns, name.clone());
        let meta = meta_mut(&mut body);
        meta.remove("resourceVersion");
        meta.remove("deletionTimestamp");
        meta.remove("deletionGracePeriodSeconds");
        meta.remove("selfLink");
        meta.insert("uid".into(), json!(new_uid()));
        meta.insert("creationTimestamp".into(), json!(now_rfc3339()));
        if let Some(generation) = Generation::of(&tk.0, &rt.kind).at_create() {
            meta.insert("generation".into(), json!(generation));
        }
        if let Some(entry) = managed {
            meta.insert("managedFields".into(), json!([entry]));
        }
        if tk.0.is_empty() && tk.1 == "namespaces" {
            body["status"] = json!({"phase": "Active"});
        } else if rt.status_subresource {
            // A kind with a status subresource takes no status at create
            // (but a Node): its strategy starts it afresh.
            let sent = body.as_object_mut().and_then(|o| o.remove("status"));
            if let Some(status) = initial_status(&rt, sent) {
                body["status"] = status;
            }
        }
        // A Job's labels are its template's when defaulting finds it without
        // its own (`SetDefaults_Job` shares the map), so the labels its
        // strategy generates are its own too.
        let job = rt.group == "batch" && rt.kind == "Job";
        let job_labels_shared = job && validation::job_labels_shared(&body);
        Self::decode_and_default(&rt, &mut body)?;
        disabled_fields::drop(&rt.group, &rt.kind, &mut body, None);
        if job {
            validation::generate_job_selector(&mut body, job_labels_shared);
        }
        // The registry allocates before it validates, and releases what it
        // allocated when the create fails.
        let cursor = self.last_cluster_ip;
        if rt.group.is_empty() && rt.kind == "Service" {
            self.allocate_service(&rt, &name, &key, &mut body, None)?;
        }
        causes.extend(validation::create_causes(&rt.group, &rt.kind, &body));
        if !causes.is_empty() {
            self.last_cluster_ip = cursor;
            return Err(ApiError::invalid_causes(&rt, &name, &causes));
        }
        if rt.group.is_empty() && rt.kind == "Pod" {
            body["status"]["qosClass"] = json!(pod_qos_class(&rt, &body)?);
        }
        Self::apply_schema(&rt, &name, &mut body, None)?;
        if kinds::is_crd_type(&tk.0, &tk.1) {
            let spec = kinds::parse_crd(&body).map_err(|e| ApiError::invalid(&rt, &name, &e))?;
            let now = now_rfc3339();
            let condition = |t: &str, reason: &str, message: &str| json!({"type": t, "status": "True", "lastTransitionTime": now, "reason": reason, "message": message});
            body["status"] = json!({
                "conditions": [
                    condition("NamesAccepted", "NoConflicts", "no conflicts found"),
                    condition("Established", "InitialNamesAccepted", "the initial names have been accepted"),
                ],
                "acceptedNames": {
                    "plural": spec.plural, "singular": spec.singular, "kind": spec.kind,
                    "listKind": spec.list_kind, "shortNames": spec.short_names,
                },
                "storedVersions": body.pointer("/spec/versions").and_then(Value::as_array)
                    .map(|vs| vs.iter().filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
                        .filter_map(|v| v.get("name").cloned()).collect::<Vec<_>>())
                    .unwrap_or_default(),
            });
        }
        if self.lookup(&tk, &key).is_some() {
            self.last_cluster_ip = cursor;
            return Err(ApiError::already_exists(&rt, &name));
        }
        Ok(self.store_written(&rt, key, body, WatchEventKind::Added))
    }

    /// Replaces an object (PUT, patches and subresources all end here);
    /// `manager`, when given, is recorded as the owner of the fields the
    /// write changes (an `Update` in `managedFields`).
    pub(super) fn update(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        mut body: Value,
        subresource: Option<Subresource>,
        manager: Option<&str>,
    ) -> Result<Arc<Value>, ApiError> {
        let rt = self.served(rt)?;
        if subresource == Some(Subresource::Status) && !rt.status_subresource {
            return Err(ApiError::resource_not_served());
        }
        let tk = rt.storage_key();
        let (key, existing) = self.existing(&rt, namespace, name)?;
        Self::check_type_fields(&rt, &mut body)?;
        Self::read_typed(&rt, &mut body)?;
        let mut body = stored_form(&rt, body);
        check_name(&body, name)?;
        if rt.namespaced {
            let body_ns = meta_str(&body, "namespace").unwrap_or("");
            if !body_ns.is_empty() && body_ns != key.0 {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
        }
        let current_rv = meta_str(&existing, "resourceVersion").unwrap_or("");
        match meta_str(&body, "resourceVersion") {
            Some(rv) if !rv.is_empty() && rv != current_rv => {
                return Err(ApiError::conflict(&rt, name));
            }
            _ => {}
        }
        let mut new = match subresource {
            Some(Subresource::Status) => {
                let mut v = (*existing).clone();
                match body.get("status") {
                    Some(s) => v["status"] = s.clone(),
                    None => {
                        if let Some(m) = v.as_object_mut() {
                            m.remove("status");
                        }
                    }
                }
                if rt.group.is_empty() && rt.kind == "Pod" {
                    keep_qos_class(&existing, &mut v);
                }
                v
            }
            _ => {
                if rt.status_subresource {
                    match existing.get("status") {
                        Some(s) => body["status"] = s.clone(),
                        None => {
                            if let Some(m) = body.as_object_mut() {
                                m.remove("status");
                            }
                        }
                    }
                }
                body
            }
        };
        // System metadata is the server's.
        let old_meta = existing.get("metadata").cloned().unwrap_or_default();
        let meta = meta_mut(&mut new);
        meta.insert("name".into(), json!(name));
        if rt.namespaced {
            meta.insert("namespace".into(), json!(key.0));
        } else {
            meta.remove("namespace");
        }
        keep_server_metadata(old_meta.as_object().unwrap_or(&Map::new()), meta);
        meta.remove("selfLink");
        if !meta.contains_key("managedFields")
            && let Some(mf) = old_meta.get("managedFields")
        {
            meta.insert("managedFields".into(), mf.clone());
        }
        Self::decode_and_default(&rt, &mut new)?;
        disabled_fields::drop(&rt.group, &rt.kind, &mut new, Some(&existing));
        // Before validation, as the server patches them in: a Service
        // keeps the cluster IPs allocated to it, and its registry
        // allocates what the update needs (not for a status write, whose
        // spec is the stored one).
        let cursor = self.last_cluster_ip;
        if rt.group.is_empty() && rt.kind == "Service" {
            keep_cluster_ip(&existing, &mut new);
            if subresource != Some(Subresource::Status) {
                self.allocate_service(&rt, name, &key, &mut new, Some(&existing))?;
            }
        }
        // A status write meets the kind's status strategy, not its own.
        let causes = if subresource == Some(Subresource::Status) {
            validation::status_update_causes(&rt.group, &rt.kind, &new, &existing)
        } else {
            validation::update_causes(&rt.group, &rt.kind, &new, &existing)
        };
        if !causes.is_empty() {
            self.last_cluster_ip = cursor;
            return Err(ApiError::invalid_causes(&rt, name, &causes));
        }
        if rt.group.is_empty() && rt.kind == "Pod" {
            // Checks the quantities; the class set at create stays.
            pod_qos_class(&rt, &new)?;
        }
        let causes = names::metadata_causes(&rt, meta_mut(&mut new), None);
        if !causes.is_empty() {
            return Err(ApiError::invalid_causes(&rt, name, &causes));
        }
        Self::apply_schema(&rt, name, &mut new, Some(&existing))?;
        if Generation::of(&tk.0, &rt.kind).bumped(&existing, &new) {
            let g = old_meta
                .get("generation")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            meta_mut(&mut new).insert("generation".into(), json!(g + 1));
        }
        if kinds::is_crd_type(&tk.0, &tk.1) {
            kinds::parse_crd(&new).map_err(|e| ApiError::invalid(&rt, name, &e))?;
        }
        if let Some(manager) = manager {
            apply::record_update(&existing, &mut new, manager, &rt, subresource);
        }
        if equal_but_resource_version(&new, &existing) {
            return Ok(relabel(&existing, &rt));
        }
        let is_namespace = tk.0.is_empty() && tk.1 == "namespaces";
        if new.pointer("/metadata/deletionTimestamp").is_some() && !finalizers_of(&new) {
            if is_namespace {
                // A namespace goes only once it is empty as well.
                let name = key.1.clone();
                let stored = self.commit(&tk, key, new, WatchEventKind::Modified);
                self.finish_namespace(&name);
                return Ok(relabel(&stored, &rt));
            }
            let removed = self.remove(&tk, key, &new);
            return Ok(relabel(&removed, &rt));
        }
        Ok(self.store_written(&rt, key, new, WatchEventKind::Modified))
    }

    /// What the server does to a written body before it validates it, on
    /// create and update alike: a Secret's `stringData` folded into `data`
    /// (its conversion to the internal type), the kind's defaults.
    fn decode_and_default(rt: &ResourceType, body: &mut Value) -> Result<(), ApiError> {
        if rt.group.is_empty() && rt.kind == "Secret" {
            encode_string_data(body);
        }
        // A built-in kind's spec is a Go struct, which its JSON always
        // shows: `{}` where a body has none.
        let has_spec = super::built_in_schemas::name_of_kind(&rt.group, &rt.version, &rt.kind)
            .and_then(super::built_in_schemas::get)
            .is_some_and(|schema| schema.pointer("/properties/spec").is_some());
        if has_spec
            && let Some(object) = body.as_object_mut()
            && object.get("spec").is_none_or(Value::is_null)
        {
            object.insert("spec".into(), json!({}));
        }
        defaults::apply(&rt.group, &rt.kind, body);
        Ok(())
    }

    /// Commits a created or updated object as written, a CRD served; the
    /// object as `rt` shows it.
    fn store_written(
        &mut self,
        rt: &ResourceType,
        key: ObjKey,
        obj: Value,
        kind: WatchEventKind,
    ) -> Arc<Value> {
        let tk = rt.storage_key();
        let owners_before = self
            .lookup(&tk, &key)
            .map(|old| owner_uids(&old))
            .unwrap_or_default();
        let stored = self.commit(&tk, key.clone(), obj, kind);
        if kinds::is_crd_type(&tk.0, &tk.1) {
            self.serve_crd(&stored);
        }
        // The collector sees the write: the object's owners may be gone,
        // and an owner waiting in the foreground may wait for it no more.
        self.attempt_to_delete(&tk, key);
        for owner in owners_before.iter().chain(&owner_uids(&stored)) {
            self.finish_foreground(owner);
        }
        relabel(&stored, rt)
    }

    pub(super) fn scale_of(rt: &ResourceType, obj: &Value) -> Value {
        // A custom resource's from its CRD's paths, missing numbers 0, as
        // apiextensions' `scaleFromCustomResource` reads them.
        let (spec_replicas, status_replicas, selector) = match &rt.scale_paths {
            Some(paths) => (
                obj.pointer(&paths.spec_replicas)
                    .and_then(Value::as_i64)
                    .unwrap_or(0),
                obj.pointer(&paths.status_replicas)
                    .and_then(Value::as_i64)
                    .unwrap_or(0),
                paths
                    .label_selector
                    .as_deref()
                    .and_then(|p| obj.pointer(p))
                    .and_then(Value::as_str)
                    .map(str::to_string),
            ),
            None => (
                obj.pointer("/spec/replicas")
                    .and_then(Value::as_i64)
                    .unwrap_or(1),
                obj.pointer("/status/replicas")
                    .and_then(Value::as_i64)
                    .unwrap_or(0),
                obj.pointer("/spec/selector")
                    .filter(|s| s.is_object())
                    .and_then(|selector| {
                        if rt.group.is_empty() && rt.kind == "ReplicationController" {
                            Some(super::selector::set_selector_text(selector))
                        } else {
                            super::selector::label_selector_text(selector)
                        }
                    })
                    .filter(|text| !text.is_empty()),
            ),
        };
        let mut scale = json!({
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {
                "name": name_of(obj),
                "uid": obj.pointer("/metadata/uid").cloned().unwrap_or(Value::Null),
                "resourceVersion": obj.pointer("/metadata/resourceVersion").cloned().unwrap_or(Value::Null),
                "creationTimestamp": obj.pointer("/metadata/creationTimestamp").cloned().unwrap_or(Value::Null),
            },
            "spec": {"replicas": spec_replicas},
            "status": {"replicas": status_replicas},
        });
        if rt.namespaced {
            scale["metadata"]["namespace"] = json!(namespace_of(obj));
        }
        if let Some(s) = selector {
            scale["status"]["selector"] = json!(s);
        }
        scale
    }

    pub(super) fn update_scale(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        scale: &Value,
    ) -> Result<Value, ApiError> {
        let rt = self.served_with_scale(rt)?;
        let (_, existing) = self.existing(&rt, namespace, name)?;
        let replicas = scale
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .ok_or_else(|| ApiError::invalid(&rt, name, "spec.replicas: Required value"))?;
        if replicas < 0 {
            return Err(ApiError::invalid(
                &rt,
                name,
                &format!(
                    "spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0"
                ),
            ));
        }
        let mut new = (*existing).clone();
        let path = rt
            .scale_paths
            .as_ref()
            .map_or("/spec/replicas", |paths| paths.spec_replicas.as_str());
        set_at(&mut new, path, json!(replicas));
        if let Some(rv) = meta_str(scale, "resourceVersion") {
            meta_mut(&mut new).insert("resourceVersion".into(), json!(rv));
        }
        let stored = self.update(&rt, namespace, name, new, None, None)?;
        Ok(Self::scale_of(&rt, &stored))
    }
}

impl Store {
    /// One object.
    pub fn get(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, ApiError> {
        let state = self.shared.lock();
        let rt = state.served(rt)?;
        let (_, obj) = state.existing(&rt, namespace, name)?;
        Ok((*relabel(&obj, &rt)).clone())
    }

    /// The autoscaling/v1 `Scale` of a deployment, replica set, stateful set
    /// (or a CRD with a scale subresource).
    pub fn get_scale(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, ApiError> {
        let state = self.shared.lock();
        let rt = state.served_with_scale(rt)?;
        let (_, obj) = state.existing(&rt, namespace, name)?;
        Ok(State::scale_of(&rt, &obj))
    }

    /// Sets `spec.replicas` from a `Scale` (its resourceVersion, when set,
    /// must be current); returns the new `Scale`.
    pub fn update_scale(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        scale: Value,
    ) -> Result<Value, ApiError> {
        self.shared.lock().update_scale(rt, namespace, name, &scale)
    }

    /// Creates an object (POST). `field_manager` records a managedFields
    /// entry with operation `Update`.
    pub fn create(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        body: Value,
        field_manager: Option<&str>,
    ) -> Result<Value, ApiError> {
        let managed = field_manager.map(|m| apply::created_by(m, "Update", &body, rt, None));
        let stored = self.shared.lock().create(rt, namespace, body, managed)?;
        Ok((*stored).clone())
    }

    /// Replaces an object (PUT), or its status or scale, as the kind's
    /// strategy allows: a missing object is created where
    /// [`ResourceType::create_on_update`] (the second value is then
    /// `true`, a 201), and a body without `resourceVersion` is refused
    /// unless [`ResourceType::unconditional_update`].
    pub fn update(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        body: Value,
        subresource: Option<Subresource>,
    ) -> Result<(Value, bool), ApiError> {
        self.update_as(rt, namespace, name, body, subresource, None)
    }

    /// [`Store::update`] by `manager`, the owner of the fields it changes
    /// (its `fieldManager`, else its client's user agent).
    pub fn update_as(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        body: Value,
        subresource: Option<Subresource>,
        manager: Option<&str>,
    ) -> Result<(Value, bool), ApiError> {
        let mut state = self.shared.lock();
        if subresource == Some(Subresource::Scale) {
            return Ok((state.update_scale(rt, namespace, name, &body)?, false));
        }
        let rt = state.served(rt)?;
        if subresource == Some(Subresource::Status) && !rt.status_subresource {
            return Err(ApiError::resource_not_served());
        }
        let key = State::obj_key(&rt, namespace, name);
        if state.lookup(&rt.storage_key(), &key).is_none() {
            if !rt.create_on_update || subresource.is_some() {
                return Err(ApiError::not_found(&rt, name));
            }
            check_name(&body, name)?;
            let mut body = body;
            meta_mut(&mut body).insert("name".into(), json!(name));
            let managed = manager.map(|m| apply::created_by(m, "Update", &body, &rt, None));
            let created = state.create(&rt, namespace, body, managed)?;
            return Ok(((*created).clone(), true));
        }
        let unversioned = meta_str(&body, "resourceVersion").is_none_or(str::is_empty);
        if unversioned && !rt.unconditional_update {
            return Err(ApiError::resource_version_required(&rt, name));
        }
        let stored = state.update(&rt, namespace, name, body, subresource, manager)?;
        Ok(((*stored).clone(), false))
    }
}

/// A written body as it is stored: an events.k8s.io Event as its core
/// Event.
fn stored_form(rt: &ResourceType, body: Value) -> Value {
    if events::is_events_api(rt) {
        events::to_core(body)
    } else {
        body
    }
}

/// A name in an update's body must be the URL's.
fn check_name(body: &Value, name: &str) -> Result<(), ApiError> {
    match meta_str(body, "name") {
        Some(body_name) if !body_name.is_empty() && body_name != name => {
            Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )))
        }
        _ => Ok(()),
    }
}

/// An updated Service's cluster IPs as the server makes them before it
/// validates: `clusterIPs` follows a `clusterIP` changed or cleared alone
/// (`NormalizeClusterIPs`), and what the update leaves out of the IPs
/// allocated to it, and their families, is kept (`patchAllocatedValues`),
/// unless it is or becomes an `ExternalName`, which has none.
fn keep_cluster_ip(existing: &Value, new: &mut Value) {
    let ip = |o: &Value| {
        o.pointer("/spec/clusterIP")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let ips = |o: &Value| {
        o.pointer("/spec/clusterIPs")
            .filter(|v| !v.is_null())
            .cloned()
    };
    let (old_ip, old_ips) = (ip(existing), ips(existing));
    let (mut new_ip, mut new_ips) = (ip(new), ips(new));
    let empty = |list: &Option<Value>| {
        list.as_ref()
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
    };
    if !empty(&old_ips) && empty(&new_ips) && old_ip == new_ip {
        new_ips.clone_from(&old_ips);
    }
    if old_ip != new_ip && new_ips == old_ips {
        new_ips = (!new_ip.is_empty()).then(|| json!([new_ip]));
    }
    let external =
        |o: &Value| o.pointer("/spec/type").and_then(Value::as_str) == Some("ExternalName");
    let has_ips = !external(existing) && !external(new);
    let (Some(old), Some(spec)) = (
        existing.get("spec").and_then(Value::as_object),
        new.get_mut("spec").and_then(Value::as_object_mut),
    ) else {
        return;
    };
    if has_ips {
        if new_ip.is_empty() {
            new_ip.clone_from(&old_ip);
        }
        if empty(&new_ips) && !empty(&old_ips) {
            new_ips.clone_from(&old_ips);
        }
        for field in ["ipFamilies", "ipFamilyPolicy"] {
            if !spec.contains_key(field)
                && let Some(value) = old.get(field)
            {
                spec.insert(field.into(), value.clone());
            }
        }
    }
    match new_ip.is_empty() {
        true => spec.remove("clusterIP"),
        false => spec.insert("clusterIP".into(), json!(new_ip)),
    };
    match new_ips {
        Some(list) => spec.insert("clusterIPs".into(), list),
        None => spec.remove("clusterIPs"),
    };
}

/// Sets the member at JSON `pointer` in `value`, making the objects on
/// the way (`unstructured.SetNestedField`).
fn set_at(value: &mut Value, pointer: &str, field: Value) {
    let mut node = value;
    let mut segments = pointer.trim_start_matches('/').split('/').peekable();
    while let Some(segment) = segments.next() {
        if !node.is_object() {
            *node = json!({});
        }
        let map = node.as_object_mut().expect("made an object above");
        if segments.peek().is_none() {
            map.insert(segment.to_string(), field);
            return;
        }
        node = map.entry(segment).or_insert_with(|| json!({}));
    }
}

/// A Pod's status written without a QoS class keeps the one it has: the
/// class is set at create and never changes (the Pod status strategy).
fn keep_qos_class(existing: &Value, new: &mut Value) {
    let Some(class) = existing.pointer("/status/qosClass") else {
        return;
    };
    if let Some(status) = new.get_mut("status").and_then(Value::as_object_mut) {
        status.entry("qosClass").or_insert_with(|| class.clone());
    }
}

/// A Pod's QoS class, or the 400 a real server answers when it cannot
/// decode one of its containers' resource quantities.
fn pod_qos_class(rt: &ResourceType, pod: &Value) -> Result<&'static str, ApiError> {
    qos::pod_qos_class(pod).map_err(|why| undecodable(rt, &why))
}

/// The 400 of a body kube-apiserver's decoder refuses for `why`.
fn undecodable(rt: &ResourceType, why: &str) -> ApiError {
    ApiError::bad_request(format!(
        "{kind} in version \"{version}\" cannot be handled as a {kind}: {why}",
        kind = rt.kind,
        version = rt.version
    ))
}

/// A created Node's status: the one it was `sent`, over the structs Go
/// always writes (`daemonEndpoints.kubeletEndpoint.Port` 0, and `nodeInfo`'s
/// fields without `omitempty`, as its schema requires them, `""`).
fn node_status(sent: Option<Value>) -> Value {
    let mut status = match sent {
        Some(Value::Object(status)) => status,
        _ => Map::new(),
    };
    let endpoint = status
        .entry("daemonEndpoints")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .map(|endpoints| {
            endpoints
                .entry("kubeletEndpoint")
                .or_insert_with(|| json!({}))
        });
    if let Some(Value::Object(endpoint)) = endpoint {
        endpoint.entry("Port").or_insert(json!(0));
    }
    let required = super::built_in_schemas::get("io.k8s.api.core.v1.NodeSystemInfo")
        .and_then(|schema| schema.get("required"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(info) = status
        .entry("nodeInfo")
        .or_insert_with(|| json!({}))
        .as_object_mut()
    {
        for field in required.iter().filter_map(Value::as_str) {
            info.entry(field).or_insert(json!(""));
        }
    }
    Value::Object(status)
}

/// The status a created object of `rt` (a kind with a status subresource)
/// starts with, as kube-apiserver's strategy for the kind sets it in
/// `PrepareForCreate` and Go's JSON encoding then writes it: a zero status
/// shows its fields without `omitempty` as 0 and its struct fields as `{}`.
/// None for a custom resource; the status it was `sent` with for a Node,
/// whose strategy keeps it; `Pending` for a Pod (its QoS class is added
/// once its defaults are in), a claim (its defaults' phase) and a volume
/// (with the time of that phase).
fn initial_status(rt: &ResourceType, sent: Option<Value>) -> Option<Value> {
    if !recon_api_semantics::is_built_in_group(&rt.group) {
        return None;
    }
    Some(match (rt.group.as_str(), rt.kind.as_str()) {
        ("", "Node") => node_status(sent),
        ("", "Pod" | "PersistentVolumeClaim") => json!({"phase": "Pending"}),
        ("", "PersistentVolume") => {
            json!({"phase": "Pending", "lastPhaseTransitionTime": now_rfc3339()})
        }
        ("", "Service") | ("networking.k8s.io", "Ingress") => json!({"loadBalancer": {}}),
        ("", "ReplicationController") | ("apps", "ReplicaSet") => json!({"replicas": 0}),
        ("apps", "StatefulSet") => json!({"replicas": 0, "availableReplicas": 0}),
        ("apps", "DaemonSet") => json!({
            "currentNumberScheduled": 0,
            "numberMisscheduled": 0,
            "desiredNumberScheduled": 0,
            "numberReady": 0,
        }),
        ("autoscaling", "HorizontalPodAutoscaler") => {
            json!({"currentMetrics": null, "desiredReplicas": 0})
        }
        ("policy", "PodDisruptionBudget") => json!({
            "disruptionsAllowed": 0,
            "currentHealthy": 0,
            "desiredHealthy": 0,
            "expectedPods": 0,
        }),
        _ => json!({}),
    })
}
