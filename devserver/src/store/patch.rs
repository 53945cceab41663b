//! The PATCH verb ([`PatchKind`]: merge, JSON, strategic merge and
//! server-side apply) on objects and their status and scale; strategic
//! merge patch, and the managed-fields record of server-side apply.
//!
//! Strategic merge is JSON merge patch (maps merge recursively, `null`
//! deletes) plus the patch strategies of the built-in kinds' lists, as
//! their OpenAPI schemas give them ([`built_in_schemas`]:
//! `x-kubernetes-patch-strategy: merge` with an
//! `x-kubernetes-patch-merge-key`, items merged by that key; without one, a
//! primitive list merged as a set), and the patch directives kubectl
//! sends: `$patch: replace|delete|merge`, `$setElementOrder/<field>`,
//! `$retainKeys` and `$deleteFromPrimitiveList/<field>`. Directives never end
//! up in stored objects. Other lists are replaced, as merge patch does. A
//! custom resource refuses it (415), as the server's handler for custom
//! resources does.

use serde_json::{Map, Value, json};

use super::meta::{meta_mut, meta_str};
use super::{
    ApiError, ResourceType, State, Store, Subresource, apply, built_in_schemas, kinds, relabel,
};

/// Merge, JSON, strategic merge or server-side apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchKind {
    Merge,
    Json,
    StrategicMerge,
    Apply { field_manager: String, force: bool },
}

/// A patch request.
#[derive(Debug, Clone)]
pub struct Patch {
    pub kind: PatchKind,
    pub body: Value,
}

/// What a patch stored.
#[derive(Debug, Clone)]
pub struct Patched {
    /// The object as stored.
    pub object: Value,
    /// Whether the patch created it (201, where an update answers 200).
    pub created: bool,
}

impl Patched {
    fn updated(stored: &Value) -> Patched {
        Patched {
            object: stored.clone(),
            created: false,
        }
    }
}

impl Store {
    /// Patches an object (PATCH), or its status or scale.
    pub fn patch(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        patch: Patch,
        subresource: Option<Subresource>,
    ) -> Result<Value, ApiError> {
        self.patch_as(rt, namespace, name, patch, subresource, None)
            .map(|patched| patched.object)
    }

    /// [`Store::patch`] by `manager`: a patch other than an apply makes it
    /// the owner of the fields it changes (its `fieldManager`, else its
    /// client's user agent); an apply names its own. Says whether the
    /// patch created the object (an apply of one that did not exist).
    pub fn patch_as(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        patch: Patch,
        subresource: Option<Subresource>,
        manager: Option<&str>,
    ) -> Result<Patched, ApiError> {
        let mut state = self.shared.lock();
        let rt = state.served(rt)?;
        let key = State::obj_key(&rt, namespace, name);
        let existing = state.lookup(&rt.storage_key(), &key);
        let builtin =
            !kinds::is_crd_type(&rt.group, &rt.plural) && state.builtin.contains(&rt.key());
        if patch.kind == PatchKind::StrategicMerge && !rt.is_built_in() {
            // A custom resource has no Go type to take merge keys from:
            // its handler accepts the other three patch types only.
            return Err(ApiError::new(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
            ));
        }
        if let PatchKind::Apply {
            field_manager,
            force,
        } = &patch.kind
        {
            if !patch.body.is_object() {
                return Err(ApiError::bad_request(
                    "the applied configuration must be a JSON object",
                ));
            }
            if field_manager.is_empty() {
                return Err(ApiError::new(
                    422,
                    "Invalid",
                    "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
                ));
            }
            let request = apply::Apply {
                manager: field_manager,
                force: *force,
                config: &patch.body,
                subresource,
            };
            let Some(existing) = existing else {
                if subresource.is_some() {
                    return Err(ApiError::not_found(&rt, name));
                }
                let mut body = patch.body.clone();
                meta_mut(&mut body).insert("name".into(), json!(name));
                let entry =
                    apply::created_by(field_manager, "Apply", &patch.body, &rt, subresource);
                let stored = state.create(&rt, namespace, body, Some(entry))?;
                return Ok(Patched {
                    object: (*stored).clone(),
                    created: true,
                });
            };
            let target = apply::apply(&relabel(&existing, &rt), &request, &rt)?;
            let target = unconditional(target, &existing);
            let stored = state.update(&rt, namespace, name, target, subresource, None)?;
            return Ok(Patched::updated(&stored));
        }
        let existing = existing.ok_or_else(|| ApiError::not_found(&rt, name))?;
        let base = if subresource == Some(Subresource::Scale) {
            if !rt.scale_subresource {
                return Err(ApiError::resource_not_served());
            }
            State::scale_of(&rt, &existing)
        } else {
            (*relabel(&existing, &rt)).clone()
        };
        let mut target = base;
        match &patch.kind {
            PatchKind::Merge => {
                if !patch.body.is_object() {
                    return Err(ApiError::bad_request(
                        "merge patch body must be a JSON object",
                    ));
                }
                json_patch::merge(&mut target, &patch.body);
            }
            PatchKind::StrategicMerge => {
                // A Scale is not the kind's schema; it has no lists.
                let schema = builtin
                    .then(|| built_in_schemas::name_of_kind(&rt.group, &rt.version, &rt.kind))
                    .flatten()
                    .filter(|_| subresource != Some(Subresource::Scale))
                    .and_then(built_in_schemas::get);
                strategic_merge(&mut target, &patch.body, schema).map_err(ApiError::bad_request)?;
            }
            PatchKind::Json => {
                let ops: json_patch::Patch = serde_json::from_value(patch.body.clone())
                    .map_err(|e| ApiError::bad_request(format!("invalid JSON patch: {e}")))?;
                // A failed `test` (or any op that cannot apply) is 422
                // Invalid, with no word of which.
                json_patch::patch(&mut target, &ops).map_err(|_| ApiError::json_patch_failed())?;
            }
            PatchKind::Apply { .. } => unreachable!("handled above"),
        }
        if subresource == Some(Subresource::Scale) {
            return state
                .update_scale(&rt, namespace, name, &target)
                .map(|scale| Patched::updated(&scale));
        }
        let target = unconditional(target, &existing);
        let stored = state.update(&rt, namespace, name, target, subresource, manager)?;
        Ok(Patched::updated(&stored))
    }
}

/// A patched object whose `resourceVersion` is the current one, without
/// it: a patch that sets another version conflicts, otherwise a patch is
/// unconditional.
fn unconditional(mut target: Value, existing: &Value) -> Value {
    if meta_str(&target, "resourceVersion") == meta_str(existing, "resourceVersion") {
        meta_mut(&mut target).remove("resourceVersion");
    }
    target
}

/// How a list merges in a strategic merge patch: by `Some(key)` for maps
/// keyed by it, `Some(None)` for a primitive list merged as a set, `None`
/// when the patch replaces it; from the list's schema (`None`: unknown).
fn patch_merge(list: Option<&Value>) -> Option<Option<&str>> {
    let list = list?;
    let strategy = list["x-kubernetes-patch-strategy"].as_str()?;
    strategy
        .split(',')
        .any(|s| s == "merge")
        .then(|| list["x-kubernetes-patch-merge-key"].as_str())
}

/// Errors of a malformed strategic patch (400 BadRequest).
pub type PatchResult<T> = Result<T, String>;

/// Applies a strategic merge patch with the patch strategies of `schema`,
/// a built-in kind's; without one, lists are replaced, as with merge patch.
pub fn strategic_merge(
    target: &mut Value,
    patch: &Value,
    schema: Option<&Value>,
) -> PatchResult<()> {
    if !patch.is_object() {
        return Err("strategic merge patch body must be a JSON object".into());
    }
    let t = std::mem::take(target);
    *target = merge_value(Some(t), patch, schema)?.unwrap_or(Value::Null);
    Ok(())
}

/// Merges `patch` into `target` (absent when the field is new); `None`
/// means the field is deleted.
/// `schema` is the value's (`None`: unknown).
fn merge_value(
    target: Option<Value>,
    patch: &Value,
    schema: Option<&Value>,
) -> PatchResult<Option<Value>> {
    match patch {
        Value::Null => Ok(None),
        Value::Object(pmap) => {
            let directive = pmap.get("$patch").and_then(Value::as_str);
            match directive {
                Some("delete") => return Ok(None),
                Some("replace") => {
                    return Ok(Some(
                        merge_value(None, &strip_directive(pmap), schema)?
                            .unwrap_or(Value::Object(Map::new())),
                    ));
                }
                Some("merge") | None => {}
                Some(other) => return Err(format!("unknown patch directive $patch: {other}")),
            }
            let mut tmap = match target {
                Some(Value::Object(m)) => m,
                _ => Map::new(),
            };
            merge_map(&mut tmap, pmap, schema)?;
            Ok(Some(Value::Object(tmap)))
        }
        Value::Array(items) => Ok(Some(Value::Array(
            items
                .iter()
                .map(|i| merge_value(None, i, items_of(schema)))
                .collect::<PatchResult<Vec<_>>>()?
                .into_iter()
                .flatten()
                .collect(),
        ))),
        other => Ok(Some(other.clone())),
    }
}

fn strip_directive(pmap: &Map<String, Value>) -> Value {
    let mut m = pmap.clone();
    m.remove("$patch");
    Value::Object(m)
}

fn merge_map(
    tmap: &mut Map<String, Value>,
    pmap: &Map<String, Value>,
    schema: Option<&Value>,
) -> PatchResult<()> {
    let mut orders: Vec<(&str, &Vec<Value>)> = Vec::new();
    let mut retain: Option<Vec<String>> = None;
    for (k, pv) in pmap {
        if k == "$patch" {
            continue;
        }
        if k == "$retainKeys" {
            let keys = pv.as_array().ok_or("$retainKeys must be a list")?;
            retain = Some(
                keys.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect(),
            );
            continue;
        }
        if let Some(field) = k.strip_prefix("$setElementOrder/") {
            let order = pv.as_array().ok_or("$setElementOrder must be a list")?;
            orders.push((field, order));
            continue;
        }
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            let remove = pv
                .as_array()
                .ok_or("$deleteFromPrimitiveList must be a list")?;
            if let Some(Value::Array(list)) = tmap.get_mut(field) {
                list.retain(|x| !remove.contains(x));
            }
            continue;
        }
        if k.starts_with('$') {
            return Err(format!("unknown patch directive {k}"));
        }
        let child = property(schema, k);
        let merged = match (pv, tmap.remove(k)) {
            (Value::Array(pitems), Some(Value::Array(titems))) => {
                Some(merge_list(k, titems, pitems, child)?)
            }
            (pv, existing) => merge_value(existing, pv, child)?,
        };
        if let Some(v) = merged {
            tmap.insert(k.clone(), v);
        }
    }
    for (field, order) in orders {
        if let Some(Value::Array(list)) = tmap.get_mut(field) {
            reorder(list, order, patch_merge(property(schema, field)).flatten());
        }
    }
    if let Some(keys) = retain {
        tmap.retain(|k, _| keys.iter().any(|r| r == k));
    }
    Ok(())
}

/// `schema` is the list's (`None`: unknown).
fn merge_list(
    field: &str,
    mut titems: Vec<Value>,
    pitems: &[Value],
    schema: Option<&Value>,
) -> PatchResult<Value> {
    // A `{"$patch": "replace"}` element replaces the whole list.
    let replace = pitems.iter().any(|i| {
        i.get("$patch").and_then(Value::as_str) == Some("replace")
            && i.as_object().is_some_and(|m| m.len() == 1)
    });
    if replace {
        let rest: Vec<Value> = pitems
            .iter()
            .filter(|i| i.get("$patch").is_none())
            .cloned()
            .collect();
        return merge_value(None, &Value::Array(rest), schema)
            .map(|v| v.unwrap_or(Value::Array(Vec::new())));
    }
    let key = match patch_merge(schema) {
        Some(Some(key)) => key,
        Some(None) => {
            for p in pitems {
                if !titems.contains(p) {
                    titems.push(p.clone());
                }
            }
            return Ok(Value::Array(titems));
        }
        None => {
            return merge_value(None, &Value::Array(pitems.to_vec()), schema)
                .map(|v| v.unwrap_or(Value::Array(Vec::new())));
        }
    };
    let items = items_of(schema);
    for p in pitems {
        let Some(pk) = p.get(key) else {
            return Err(format!(
                "map in list {field} does not contain merge key {key}"
            ));
        };
        let pos = titems.iter().position(|t| t.get(key) == Some(pk));
        let delete = p.get("$patch").and_then(Value::as_str) == Some("delete");
        match (pos, delete) {
            (Some(i), true) => {
                titems.remove(i);
            }
            (None, true) => {}
            (Some(i), false) => {
                let t = std::mem::take(&mut titems[i]);
                match merge_value(Some(t), p, items)? {
                    Some(v) => titems[i] = v,
                    None => {
                        titems.remove(i);
                    }
                }
            }
            (None, false) => {
                if let Some(v) = merge_value(None, p, items)? {
                    titems.push(v);
                }
            }
        }
    }
    Ok(Value::Array(titems))
}

/// The schema of the field `name` of a map of schema `schema`.
fn property<'s>(schema: Option<&'s Value>, name: &str) -> Option<&'s Value> {
    built_in_schemas::resolve(schema?)
        .get("properties")?
        .get(name)
}

/// The schema of the items of a list of schema `schema`.
fn items_of(schema: Option<&Value>) -> Option<&Value> {
    schema?.get("items")
}

/// Orders `list` as `order` says (by merge key for lists of maps, by value
/// for primitive lists); elements not named keep their relative order after.
fn reorder(list: &mut [Value], order: &[Value], key: Option<&str>) {
    let ident = |v: &Value| -> Value {
        match key {
            Some(k) => v.get(k).cloned().unwrap_or(Value::Null),
            None => v.clone(),
        }
    };
    let position = |v: &Value| {
        let id = ident(v);
        order
            .iter()
            .position(|o| match key {
                Some(k) => o.get(k) == Some(&id),
                None => *o == id,
            })
            .unwrap_or(usize::MAX)
    };
    list.sort_by_key(|v| position(v));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(name: &str) -> Option<&'static Value> {
        Some(built_in_schemas::get(name).expect("a built-in schema"))
    }

    #[test]
    fn directives_never_reach_the_result() {
        let mut t = json!({"spec": {"a": 1, "b": 2, "list": ["x", "y"], "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
        let p = json!({"spec": {
            "$deleteFromPrimitiveList/list": ["x"],
            "strategy": {"$retainKeys": ["type"], "type": "Recreate"},
            "m": {"$patch": "replace", "only": true},
            "b": null
        }});
        strategic_merge(&mut t, &p, schema("io.k8s.api.apps.v1.Deployment")).unwrap();
        assert_eq!(
            t,
            json!({"spec": {"a": 1, "list": ["y"], "strategy": {"type": "Recreate"}, "m": {"only": true}}})
        );
        assert!(!t.to_string().contains('$'));
    }

    #[test]
    fn lists_replace_without_a_schema() {
        let mut t = json!({"containers": [{"name": "a", "image": "1"}]});
        strategic_merge(&mut t, &json!({"containers": [{"name": "b"}]}), None).unwrap();
        assert_eq!(t, json!({"containers": [{"name": "b"}]}));
    }

    #[test]
    fn set_element_order_and_patch_delete_in_lists() {
        let mut t = json!({"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]});
        let p = json!({
            "$setElementOrder/containers": [{"name": "c"}, {"name": "a"}],
            "containers": [{"name": "b", "$patch": "delete"}, {"name": "c", "image": "x"}]
        });
        strategic_merge(&mut t, &p, schema("io.k8s.api.core.v1.PodSpec")).unwrap();
        assert_eq!(
            t,
            json!({"containers": [{"name": "c", "image": "x"}, {"name": "a"}]})
        );
    }

    #[test]
    fn ports_merge_by_container_port_in_containers_and_port_in_services() {
        let mut pod =
            json!({"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80}]}]}});
        let p = json!({"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 81}]}]}});
        strategic_merge(&mut pod, &p, schema("io.k8s.api.core.v1.Pod")).unwrap();
        assert_eq!(
            pod,
            json!({"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 81}]}]}})
        );
        let mut service = json!({"spec": {"ports": [{"port": 80, "name": "http"}]}});
        let p = json!({"spec": {"ports": [{"port": 443}]}});
        strategic_merge(&mut service, &p, schema("io.k8s.api.core.v1.Service")).unwrap();
        assert_eq!(
            service,
            json!({"spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443}]}})
        );
    }

    /// Lists the schema gives a patch strategy merge by it (a Pod's
    /// scheduling gates by name, its finalizers as a set), others are
    /// replaced (its tolerations).
    #[test]
    fn the_kind_s_schema_says_how_each_list_merges() {
        let mut pod = json!({
            "metadata": {"finalizers": ["a"]},
            "spec": {"schedulingGates": [{"name": "x"}], "tolerations": [{"key": "k", "operator": "Exists"}]},
        });
        let p = json!({
            "metadata": {"finalizers": ["b"]},
            "spec": {"schedulingGates": [{"name": "y"}], "tolerations": [{"key": "j", "operator": "Exists"}]},
        });
        strategic_merge(&mut pod, &p, schema("io.k8s.api.core.v1.Pod")).unwrap();
        assert_eq!(
            pod,
            json!({
                "metadata": {"finalizers": ["a", "b"]},
                "spec": {"schedulingGates": [{"name": "x"}, {"name": "y"}], "tolerations": [{"key": "j", "operator": "Exists"}]},
            })
        );
    }
}
