//! Lists: the list options and their checks, label and field selectors,
//! paging over consistent snapshots with `continue` tokens (a list at
//! resourceVersion "0" is served whole, as a real server's watch cache
//! serves it), `Store::list`, and a page's wire form (`ListBody`).

use std::ops::Bound;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use recon_label_selector::Selector as LabelSelector;
use serde_json::{Map, Value, json};

use super::schema::Cause;
use super::selector::{self, FieldSelector, labels_match};
use super::{ApiError, ObjKey, ResourceType, State, Store, TypeKey, events, relabel};

/// List options, as strings straight from the query.
#[derive(Debug, Clone, Default)]
pub struct ListParams {
    pub label_selector: Option<String>,
    pub field_selector: Option<String>,
    pub limit: Option<u64>,
    pub continue_token: Option<String>,
    pub resource_version: Option<String>,
    pub resource_version_match: Option<String>,
}

/// One page of a list.
#[derive(Debug, Clone)]
pub struct ListResult {
    pub items: Vec<Arc<Value>>,
    /// The list's resourceVersion (the snapshot's).
    pub resource_version: u64,
    pub continue_token: Option<String>,
    /// Items left after this page (only without selectors, as the real server).
    pub remaining_item_count: Option<u64>,
}

/// The continue message of the real server's 410.
pub const CONTINUE_EXPIRED_MESSAGE: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retry with the inconsistent list.";

fn encode_continue(rv: u64, last: &ObjKey) -> String {
    // As the real server: raw URL-safe base64 of a small JSON document.
    URL_SAFE_NO_PAD
        .encode(json!({"v": "meta.k8s.io/v1", "rv": rv, "ns": last.0, "name": last.1}).to_string())
}

fn decode_continue(token: &str) -> Option<(u64, ObjKey)> {
    let v: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(token).ok()?).ok()?;
    Some((
        v.get("rv")?.as_u64()?,
        (
            v.get("ns")?.as_str()?.to_string(),
            v.get("name")?.as_str()?.to_string(),
        ),
    ))
}

pub(super) fn parse_rv(s: &str) -> Result<u64, ApiError> {
    s.parse::<u64>()
        .map_err(|_| ApiError::bad_request(format!("invalid resource version {s:?}")))
}

/// What a list or a watch selects: the type as served, the namespace
/// (`None` for every namespace, and always for cluster-scoped types) and
/// the selectors. An open watch keeps its selection.
pub(super) struct Selection {
    pub(super) rt: ResourceType,
    pub(super) tk: TypeKey,
    pub(super) namespace: Option<String>,
    pub(super) labels: LabelSelector,
    pub(super) fields: FieldSelector,
}

impl Selection {
    /// 404 when `rt` is not served, 400 when a selector does not parse.
    pub(super) fn new(
        state: &State,
        rt: &ResourceType,
        namespace: Option<&str>,
        label: Option<&str>,
        field: Option<&str>,
    ) -> Result<Self, ApiError> {
        let rt = state.served(rt)?;
        let labels = LabelSelector::parse(label.unwrap_or(""))
            .map_err(|e| ApiError::bad_request(format!("unable to parse requirement: {e}")))?;
        let mut fields = FieldSelector::parse_for(
            field.unwrap_or(""),
            selector::kind_fields(&rt.group, &rt.plural),
        )
        .map_err(ApiError::bad_request)?;
        if events::is_events_api(&rt) {
            for requirement in &mut fields.requirements {
                requirement.path = events::core_field(&requirement.path);
            }
        }
        Ok(Self {
            tk: rt.storage_key(),
            namespace: namespace
                .filter(|n| rt.namespaced && !n.is_empty())
                .map(str::to_string),
            rt,
            labels,
            fields,
        })
    }

    /// Whether `obj` matches both the label and the field selector; its
    /// namespace is the caller's to check (a list ranges over it).
    pub(super) fn selects(&self, obj: &Value) -> bool {
        labels_match(&self.labels, obj) && self.fields.matches(obj)
    }

    /// Whether neither selector leaves any object out.
    pub(super) fn selects_all(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }
}

/// `errors.NewInvalid` of `ListOptions.meta.k8s.io` for one field: the
/// cause's `reason` (`FieldValueForbidden`, ...) and `body`.
fn invalid_list_options(field: &str, reason: &'static str, body: &str) -> ApiError {
    ApiError::invalid_options(
        "ListOptions",
        &[Cause::new(field, reason, body.to_string())],
    )
}

/// The real server's checks of resourceVersion / resourceVersionMatch /
/// continue combinations.
fn validate_list_versions(params: &ListParams, has_continue: bool) -> Result<(), ApiError> {
    let rv = params.resource_version.as_deref().unwrap_or("");
    let rv_match = params.resource_version_match.as_deref().unwrap_or("");
    if has_continue && !rv_match.is_empty() {
        return Err(invalid_list_options(
            "resourceVersionMatch",
            "FieldValueForbidden",
            "Forbidden: resourceVersionMatch is forbidden when continue is provided",
        ));
    }
    if has_continue && !rv.is_empty() && rv != "0" {
        return Err(ApiError::bad_request(
            "specifying resource version is not allowed when using continue",
        ));
    }
    match rv_match {
        "" => Ok(()),
        _ if rv.is_empty() => Err(invalid_list_options(
            "resourceVersionMatch",
            "FieldValueForbidden",
            "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        )),
        "Exact" if rv == "0" => Err(invalid_list_options(
            "resourceVersionMatch",
            "FieldValueForbidden",
            "Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
        )),
        "Exact" | "NotOlderThan" => Ok(()),
        other => Err(invalid_list_options(
            "resourceVersionMatch",
            "FieldValueNotSupported",
            &format!(
                "Unsupported value: \"{other}\": supported values: \"Exact\", \"NotOlderThan\", \"\""
            ),
        )),
    }
}

impl Store {
    /// A page of objects, sorted by (namespace, name).
    pub fn list(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        params: &ListParams,
    ) -> Result<ListResult, ApiError> {
        let mut state = self.shared.lock();
        let selection = Selection::new(
            &state,
            rt,
            namespace,
            params.label_selector.as_deref(),
            params.field_selector.as_deref(),
        )?;
        let ns_filter = selection.namespace.as_deref();
        let continue_token = params.continue_token.as_deref().filter(|t| !t.is_empty());
        validate_list_versions(params, continue_token.is_some())?;
        let (snap_rv, objects, start) = if let Some(token) = continue_token {
            let (rv, last) = decode_continue(token)
                .ok_or_else(|| ApiError::bad_request("continue key is not valid"))?;
            let snap = state
                .snapshots
                .iter()
                .find(|s| s.tk == selection.tk && s.rv == rv)
                .filter(|_| rv >= state.compacted)
                .ok_or_else(|| ApiError::expired(CONTINUE_EXPIRED_MESSAGE))?;
            (rv, snap.objects.clone(), Some(last))
        } else {
            let current = state.rv;
            let mut exact_at = None;
            if let Some(s) = params.resource_version.as_deref().filter(|s| !s.is_empty()) {
                let n = parse_rv(s)?;
                if n > current {
                    return Err(ApiError::too_large_resource_version(n, current));
                }
                // A paginated list at a version, with no match stated, is
                // Exact: the legacy semantics the API documents.
                let legacy_paged = params
                    .resource_version_match
                    .as_deref()
                    .is_none_or(str::is_empty)
                    && n != 0
                    && params.limit.is_some_and(|l| l > 0);
                if params.resource_version_match.as_deref() == Some("Exact") || legacy_paged {
                    exact_at = Some(n);
                }
            }
            match exact_at {
                // A snapshot at an older version, as etcd serves one
                // until it compacts it away.
                Some(n) => {
                    let objects = state.objects_at(&selection.tk, n).ok_or_else(|| {
                        ApiError::expired("The resourceVersion for the provided list is too old.")
                    })?;
                    (n, objects, None)
                }
                None => {
                    let objects = state
                        .objects
                        .get(&selection.tk)
                        .cloned()
                        .unwrap_or_default();
                    (current, objects, None)
                }
            }
        };
        // As kube-apiserver 1.28's watch cache: a list at resourceVersion
        // "0" (not older than, not a continuation) is served whole from the
        // cache, whatever the limit; so is client-go's first list.
        let from_cache = continue_token.is_none()
            && params.resource_version.as_deref() == Some("0")
            && matches!(
                params.resource_version_match.as_deref(),
                None | Some("") | Some("NotOlderThan")
            );
        let limit = params
            .limit
            .filter(|l| *l > 0 && !from_cache)
            .map(|l| l as usize);
        let lower = match (&start, ns_filter) {
            (Some(last), _) => Bound::Excluded(last.clone()),
            (None, Some(ns)) => Bound::Included((ns.to_string(), String::new())),
            (None, None) => Bound::Unbounded,
        };
        let mut items = Vec::new();
        let mut last_key: Option<ObjKey> = None;
        let mut more = false;
        let mut iter = objects.range((lower, Bound::Unbounded));
        for (k, obj) in iter.by_ref() {
            if let Some(ns) = ns_filter
                && k.0 != ns
            {
                if k.0.as_str() > ns {
                    break;
                }
                continue;
            }
            if !selection.selects(obj) {
                continue;
            }
            if limit.is_some_and(|l| items.len() >= l) {
                more = true;
                break;
            }
            items.push(relabel(obj, &selection.rt));
            last_key = Some(k.clone());
        }
        let mut result = ListResult {
            items,
            resource_version: snap_rv,
            continue_token: None,
            remaining_item_count: None,
        };
        if more && let Some(last) = last_key {
            if selection.selects_all() {
                let remaining = objects
                    .range((Bound::Excluded(last.clone()), Bound::Unbounded))
                    .take_while(|(k, _)| ns_filter.is_none_or(|ns| k.0 == ns))
                    .count();
                result.remaining_item_count = Some(remaining as u64);
            }
            result.continue_token = Some(encode_continue(snap_rv, &last));
            state.keep_snapshot(&selection.tk, snap_rv, &objects);
        }
        Ok(result)
    }
}

/// Serializes a list page as the API server's `<Kind>List` without copying
/// the items: `{"kind", "apiVersion", "metadata": {"resourceVersion",
/// "continue"?, "remainingItemCount"?}, "items": [...]}`. Items of a
/// built-in kind come without `kind` and `apiVersion`, as the server's
/// typed list encoder writes them; a custom resource's keep theirs, and
/// its list's metadata always has a `continue`.
pub struct ListBody<'a> {
    pub rt: &'a ResourceType,
    pub result: &'a ListResult,
}

impl serde::Serialize for ListBody<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut meta = Map::new();
        meta.insert(
            "resourceVersion".into(),
            json!(self.result.resource_version.to_string()),
        );
        // A custom resource's list is unstructured, and always has a
        // `continue`, empty on the last page.
        match &self.result.continue_token {
            Some(c) => {
                meta.insert("continue".into(), json!(c));
            }
            None if !self.rt.is_built_in() => {
                meta.insert("continue".into(), json!(""));
            }
            None => {}
        }
        if let Some(n) = self.result.remaining_item_count {
            meta.insert("remainingItemCount".into(), json!(n));
        }
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("kind", &self.rt.list_kind)?;
        map.serialize_entry("apiVersion", &self.rt.api_version())?;
        map.serialize_entry("metadata", &meta)?;
        let built_in = self.rt.is_built_in();
        let items: Vec<Item<'_>> = self
            .result
            .items
            .iter()
            .map(|item| Item {
                object: item,
                type_meta: !built_in,
            })
            .collect();
        map.serialize_entry("items", &items)?;
        map.end()
    }
}

/// A list item, with or without its `kind` and `apiVersion`.
struct Item<'a> {
    object: &'a Value,
    type_meta: bool,
}

impl serde::Serialize for Item<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let Value::Object(members) = self.object else {
            return self.object.serialize(serializer);
        };
        let kept = members
            .iter()
            .filter(|(key, _)| self.type_meta || !matches!(key.as_str(), "kind" | "apiVersion"));
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in kept {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}
