//! The validation of PersistentVolumes, PersistentVolumeClaims and
//! StorageClasses, as kube-apiserver's `pkg/apis/core/validation` and
//! `pkg/apis/storage/validation` word it (v1.33, its feature gates at
//! their defaults: `RecoverVolumeExpansionFailure` on,
//! `VolumeAttributesClass` off).
//!
//! A claim (`ValidatePersistentVolumeClaimSpec`): its access modes, label
//! selector, storage request, class and volume mode, and its data source
//! and data source reference; an update (`ValidatePersistentVolumeClaimUpdate`)
//! keeps the class annotation, the spec but a bound claim's storage
//! request (and the volume name, set once, and a class set on a claim
//! that had none), a request at least the recorded capacity, and the
//! volume mode. A volume (`ValidatePersistentVolumeSpec`): its access
//! modes, a capacity of storage only, positive; its reclaim policy, node
//! affinity, exactly one source, each source's own fields (a local volume
//! needing node affinity), class and volume mode; an update
//! (`ValidatePersistentVolumeUpdate`) keeps its source, volume mode and
//! node affinity. A StorageClass (`ValidateStorageClass`): a provisioner
//! that is a qualified name, parameters within their limits, a reclaim
//! policy and binding mode it knows, allowed topologies with keys and
//! values once each; an update keeps its parameters, provisioner,
//! reclaim policy and binding mode.
//!
//! The two Forbidden causes upstream follows with a diff of the old and
//! new specs (a claim's spec, a volume's source) are given without it;
//! a Go value upstream shows with a pointer's address shows `(…)` there.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

use super::immutable::semantic;
use super::label_selector::{invalid_operator, label_name, label_selector, operator_and_key};
use super::{Cause, items, names, quantity, text, volume_source};

/// The causes of `object`, a PersistentVolume, PersistentVolumeClaim or
/// StorageClass, created (`old` none) or updated from `old`, in the order
/// upstream's `Validate…` and `Validate…Update` report them.
pub(super) fn validate(kind: &str, object: &Value, old: Option<&Value>, causes: &mut Vec<Cause>) {
    match kind {
        "PersistentVolumeClaim" => {
            claim_spec(spec_of(object), causes);
            if let Some(old) = old {
                claim_update(object, old, causes);
            }
        }
        "PersistentVolume" => {
            volume_spec(object, causes);
            if let Some(old) = old {
                volume_update(object, old, causes);
            }
        }
        "StorageClass" => {
            storage_class(object, causes);
            if let Some(old) = old {
                storage_class_update(object, old, causes);
            }
        }
        _ => {}
    }
}

fn spec_of(object: &Value) -> &Value {
    object.get("spec").unwrap_or(&Value::Null)
}

/// A field that is set: present and not null (a Go pointer not nil).
fn set<'v>(value: &'v Value, field: &str) -> Option<&'v Value> {
    value.get(field).filter(|v| !v.is_null())
}

/// `supportedAccessModes`, sorted as `sets.List` gives them.
const ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];
/// `supportedVolumeModes`, sorted.
const VOLUME_MODES: [&str; 2] = ["Block", "Filesystem"];
/// A PersistentVolume's `supportedReclaimPolicy`, sorted.
const VOLUME_RECLAIM_POLICIES: [&str; 3] = ["Delete", "Recycle", "Retain"];
/// `field is immutable`, `ValidateImmutableField`'s detail.
const IMMUTABLE: &str = "field is immutable";
/// The beta annotation that named a claim's class before the field did.
const BETA_CLASS_ANNOTATION: &str = "volume.beta.kubernetes.io/storage-class";

/// Access modes at `field`, each supported, `ReadWriteOncePod` alone.
fn access_modes(spec: &Value, field: &str, causes: &mut Vec<Cause>) {
    let (mut once_pod, mut other) = (false, false);
    for mode in items(spec.get("accessModes")) {
        let mode = mode.as_str().unwrap_or_default();
        if !ACCESS_MODES.contains(&mode) {
            causes.push(Cause::not_supported(field, mode, &ACCESS_MODES));
        } else if mode == "ReadWriteOncePod" {
            once_pod = true;
        } else {
            other = true;
        }
    }
    if once_pod && other {
        causes.push(Cause::forbidden(
            field,
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
}

/// `ValidateClassName` (a DNS subdomain) of a class name at `field`.
fn class_name(name: &str, field: &str, causes: &mut Vec<Cause>) {
    for problem in names::dns1123_subdomain(name) {
        causes.push(names::invalid(field, name, problem));
    }
}

/// A quantity's value in nano units and as `Quantity.String()` writes it.
fn quantity_of(value: &Value) -> Option<(i128, String)> {
    let written = value.as_str()?;
    Some((quantity::parse(written)?, quantity::canonical(written)?))
}

/// `ValidatePositiveQuantityValue`.
fn positive(value: &Value, field: &str, causes: &mut Vec<Cause>) {
    if let Some((nanos, shown)) = quantity_of(value)
        && nanos <= 0
    {
        causes.push(names::invalid(
            field,
            &shown,
            "must be greater than zero".into(),
        ));
    }
}

/// `ValidatePersistentVolumeClaimSpec`.
fn claim_spec(spec: &Value, causes: &mut Vec<Cause>) {
    if items(spec.get("accessModes")).is_empty() {
        causes.push(Cause::required(
            "spec.accessModes",
            "at least 1 access mode is required",
        ));
    }
    if let Some(selector) = set(spec, "selector") {
        label_selector(selector, "spec.selector", causes);
    }
    access_modes(spec, "spec.accessModes", causes);
    match spec.pointer("/resources/requests/storage") {
        None => causes.push(Cause::required("spec.resources[storage]", "")),
        Some(storage) => positive(storage, "spec.resources[storage]", causes),
    }
    if let Some(class) = set(spec, "storageClassName").and_then(Value::as_str)
        && !class.is_empty()
    {
        class_name(class, "spec.storageClassName", causes);
    }
    if let Some(mode) = set(spec, "volumeMode").and_then(Value::as_str)
        && !VOLUME_MODES.contains(&mode)
    {
        causes.push(Cause::not_supported("spec.volumeMode", mode, &VOLUME_MODES));
    }
    let source = set(spec, "dataSource");
    let reference = set(spec, "dataSourceRef");
    if let Some(source) = source {
        data_source(source, "spec.dataSource", causes);
    }
    if let Some(reference) = reference {
        data_source(reference, "spec.dataSourceRef", causes);
        if let Some(namespace) = set(reference, "namespace").and_then(Value::as_str)
            && !namespace.is_empty()
        {
            for problem in names::dns1123_label(namespace) {
                causes.push(names::invalid(
                    "spec.dataSourceRef.namespace",
                    namespace,
                    problem,
                ));
            }
        }
    }
    let cross_namespace = reference
        .and_then(|r| set(r, "namespace"))
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty());
    let detail = match (source, reference) {
        (Some(_), Some(_)) if cross_namespace => {
            Some("may not be specified when dataSourceRef.namespace is specified")
        }
        (None, _) | (_, None) => None,
        (Some(source), Some(reference)) => {
            // The API group is a pointer, told apart from an empty one.
            let same = set(source, "apiGroup") == set(reference, "apiGroup")
                && ["/kind", "/name"]
                    .iter()
                    .all(|field| text(source, field) == text(reference, field));
            (!same).then_some("must match dataSourceRef")
        }
    };
    if let Some(detail) = detail {
        causes.push(Cause::new(
            "spec",
            "FieldValueInvalid",
            format!("Invalid value: {}: {detail}", go_path("dataSource")),
        ));
    }
}

/// `%#v` of the `*field.Path` of a spec's child `name`, which upstream
/// shows as the invalid value (the parent's address is left out).
fn go_path(name: &str) -> String {
    format!("field.Path{{name:{name:?}, index:\"\", parent:(*field.Path)(…)}}")
}

/// `validateDataSource` and `validateDataSourceRef`: a name and kind, a
/// claim when no API group names another kind, an API group that is a
/// DNS subdomain.
fn data_source(source: &Value, path: &str, causes: &mut Vec<Cause>) {
    if text(source, "/name").is_empty() {
        causes.push(Cause::required(&format!("{path}.name"), ""));
    }
    let kind = text(source, "/kind");
    if kind.is_empty() {
        causes.push(Cause::required(&format!("{path}.kind"), ""));
    }
    let group = text(source, "/apiGroup");
    if group.is_empty() && kind != "PersistentVolumeClaim" {
        causes.push(names::invalid(
            path,
            kind,
            "must be 'PersistentVolumeClaim' when referencing the default apiGroup".into(),
        ));
    }
    if !group.is_empty() {
        for problem in names::dns1123_subdomain(group) {
            causes.push(names::invalid(&format!("{path}.apiGroup"), group, problem));
        }
    }
}

/// The quantity at `pointer` in nano units; zero when absent, as a Go
/// map lookup of a missing resource gives it.
fn storage_nanos(value: &Value, pointer: &str) -> i128 {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .and_then(quantity::parse)
        .unwrap_or(0)
}

/// `ValidatePersistentVolumeClaimUpdate` past the new claim's own checks.
fn claim_update(new: &Value, old: &Value, causes: &mut Vec<Cause>) {
    let (spec, was) = (spec_of(new), spec_of(old));
    let annotation = |o: &Value| -> Option<String> {
        o.pointer("/metadata/annotations")
            .and_then(|a| a.get(BETA_CLASS_ANNOTATION))
            .map(|v| v.as_str().unwrap_or_default().to_string())
    };
    let (new_annotation, old_annotation) = (annotation(new), annotation(old));
    let (new_class, old_class) = (class_of(spec), class_of(was));
    // `validateStorageClassUpgradeFromAnnotation`: a class that the old
    // claim named only by its annotation may move to the field.
    let from_annotation = old_annotation.as_deref().is_some_and(|before| {
        old_class.is_none()
            && new_class == Some(before)
            && new_annotation.as_deref().is_none_or(|now| now == before)
    });
    // The class both specs are compared with.
    let mut compared_class = new_class;
    if from_annotation {
        compared_class = None;
    } else {
        let (now, before) = (
            new_annotation.clone().unwrap_or_default(),
            old_annotation.clone().unwrap_or_default(),
        );
        if now != before {
            causes.push(names::invalid(
                &format!("metadata.annotations.{BETA_CLASS_ANNOTATION}"),
                &now,
                IMMUTABLE.into(),
            ));
        }
        // `validateStorageClassUpgradeFromNil`: a claim without a class
        // may be given one (its annotation's, if it has one).
        if let Some(now) = new_class
            && old_class.is_none()
            && old_annotation.as_deref().is_none_or(|a| a == now)
        {
            compared_class = None;
        }
    }
    let bound = text(new, "/status/phase") == "Bound";
    let mut now = spec.clone();
    let mut before = was.clone();
    if text(was, "/volumeName").is_empty() {
        // The volume name may be set once.
        set_field(&mut before, "volumeName", spec.get("volumeName").cloned());
    }
    if bound
        && set(spec, "resources")
            .and_then(|r| set(r, "requests"))
            .is_some()
    {
        let storage = was.pointer("/resources/requests/storage").cloned();
        if let Some(requests) = now
            .pointer_mut("/resources/requests")
            .and_then(Value::as_object_mut)
        {
            requests.insert("storage".into(), storage.unwrap_or(json_zero()));
        }
    }
    // With `VolumeAttributesClass` off the server drops a class name the
    // old claim did not have, and a bound claim may change one it had.
    if set(was, "volumeAttributesClassName").is_none()
        || bound && set(spec, "volumeAttributesClassName").is_some()
    {
        set_field(
            &mut now,
            "volumeAttributesClassName",
            was.get("volumeAttributesClassName").cloned(),
        );
    }
    set_field(&mut now, "storageClassName", None);
    set_field(&mut before, "storageClassName", None);
    let same = compared_class == old_class
        && semantic(Some(&canonical_quantities(&now)))
            == semantic(Some(&canonical_quantities(&before)));
    if !same {
        causes.push(Cause::forbidden(
            "spec",
            "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
        ));
    }
    let new_size = storage_nanos(spec, "/resources/requests/storage");
    let old_size = storage_nanos(was, "/resources/requests/storage");
    let recorded = storage_nanos(old, "/status/capacity/storage");
    // With `RecoverVolumeExpansionFailure`, a request may shrink back to
    // above the capacity the claim has.
    if new_size < old_size && new_size <= recorded {
        causes.push(Cause::forbidden(
            "spec.resources.requests.storage",
            "field can not be less than status.capacity",
        ));
    }
    immutable_string(spec, was, "volumeMode", "volumeMode", causes);
    attributes_class_kept(spec, was, causes);
}

/// With `VolumeAttributesClass` off, a volume's or claim's attributes
/// class may not change; the server drops a new one the old object did
/// not have, so only one it had can.
fn attributes_class_kept(spec: &Value, was: &Value, causes: &mut Vec<Cause>) {
    let field = "volumeAttributesClassName";
    if set(was, field).is_some() && set(spec, field) != set(was, field) {
        causes.push(Cause::forbidden(
            "spec.volumeAttributesClassName",
            "update is forbidden when the VolumeAttributesClass feature gate is disabled",
        ));
    }
}

/// A claim's class name, when set.
fn class_of(spec: &Value) -> Option<&str> {
    set(spec, "storageClassName").map(|v| v.as_str().unwrap_or_default())
}

/// A zero quantity, as a Go map lookup of a missing key gives it.
fn json_zero() -> Value {
    Value::String("0".into())
}

/// Sets (`Some`) or removes (`None`) `field` of an object.
fn set_field(object: &mut Value, field: &str, value: Option<Value>) {
    if let Some(map) = object.as_object_mut() {
        match value {
            Some(value) => map.insert(field.into(), value),
            None => map.remove(field),
        };
    }
}

/// A claim spec with its requests and limits in canonical form, as
/// semantic equality compares quantities by value.
fn canonical_quantities(spec: &Value) -> Value {
    let mut spec = spec.clone();
    for list in ["requests", "limits"] {
        if let Some(map) = spec
            .pointer_mut(&format!("/resources/{list}"))
            .and_then(Value::as_object_mut)
        {
            for value in map.values_mut() {
                if let Some(canonical) = value.as_str().and_then(quantity::canonical) {
                    *value = Value::String(canonical);
                }
            }
        }
    }
    spec
}

/// `ValidateImmutableField` of a string pointer `field` of two specs,
/// reported at `path` (upstream names a volume mode `volumeMode`, without
/// `spec.`).
fn immutable_string(spec: &Value, was: &Value, field: &str, path: &str, causes: &mut Vec<Cause>) {
    let (now, before) = (set(spec, field), set(was, field));
    if now.and_then(Value::as_str) != before.and_then(Value::as_str) {
        let shown = match now.and_then(Value::as_str) {
            Some(value) => value.to_string(),
            None => "null".into(),
        };
        causes.push(names::invalid(path, &shown, IMMUTABLE.into()));
    }
}

/// The sources of a PersistentVolume in the order
/// `ValidatePersistentVolumeSpec` checks them, each with the path its
/// checks report (upstream names a GCE disk's `persistentDisk` and a
/// CephFS volume's `cephfs` there, its second source `cephFS`).
const VOLUME_SOURCES: [(&str, &str); 22] = [
    ("hostPath", "hostPath"),
    ("gcePersistentDisk", "persistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("nfs", "nfs"),
    ("rbd", "rbd"),
    ("quobyte", "quobyte"),
    ("cephfs", "cephfs"),
    ("iscsi", "iscsi"),
    ("cinder", "cinder"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("scaleIO", "scaleIO"),
    ("local", "local"),
    ("storageos", "storageos"),
    ("csi", "csi"),
];

/// `ValidatePersistentVolumeSpec` of a PersistentVolume.
fn volume_spec(object: &Value, causes: &mut Vec<Cause>) {
    let spec = spec_of(object);
    if items(spec.get("accessModes")).is_empty() {
        causes.push(Cause::required("spec.accessModes", ""));
    }
    access_modes(spec, "spec.accessModes", causes);
    let capacity = spec.get("capacity").and_then(Value::as_object);
    let entries = capacity.map_or(0, Map::len);
    if entries == 0 {
        causes.push(Cause::required("spec.capacity", ""));
    }
    if !capacity.is_some_and(|c| c.contains_key("storage")) || entries > 1 {
        causes.push(Cause::new(
            "spec.capacity",
            "FieldValueNotSupported",
            format!(
                "Unsupported value: {}: supported values: \"storage\"",
                go_resource_list(capacity)
            ),
        ));
    }
    let mut keys: Vec<&String> = capacity.into_iter().flatten().map(|(k, _)| k).collect();
    keys.sort();
    for key in keys {
        let value = &capacity.expect("a key of the capacity")[key.as_str()];
        let field = format!("spec.capacity[{key}]");
        if let Some(nanos) = value.as_str().and_then(quantity::parse) {
            // `Quantity.Value()`: whole units, rounded away from zero.
            let units = nanos / 1_000_000_000 - i128::from(nanos % 1_000_000_000 < 0);
            if units < 0 {
                causes.push(Cause::invalid_number(
                    &field,
                    i64::try_from(units).unwrap_or(i64::MIN),
                    "must be a valid resource quantity",
                ));
            }
        }
        positive(value, &field, causes);
    }
    let policy = text(spec, "/persistentVolumeReclaimPolicy");
    if !policy.is_empty() && !VOLUME_RECLAIM_POLICIES.contains(&policy) {
        causes.push(Cause::not_supported(
            "spec.persistentVolumeReclaimPolicy",
            policy,
            &VOLUME_RECLAIM_POLICIES,
        ));
    }
    let affinity = set(spec, "nodeAffinity");
    if let Some(affinity) = affinity {
        match set(affinity, "required") {
            Some(required) => node_selector(required, "spec.nodeAffinity.required", causes),
            None => causes.push(Cause::required(
                "spec.nodeAffinity.required",
                "must specify required node constraints",
            )),
        }
    }
    let mut count = 0;
    for (field, path) in VOLUME_SOURCES {
        let Some(source) = set(spec, field) else {
            continue;
        };
        // A flex volume is checked whatever came before it.
        if count > 0 && field != "flexVolume" {
            let named = if field == "cephfs" { "cephFS" } else { field };
            causes.push(Cause::forbidden(
                &format!("spec.{named}"),
                "may not specify more than 1 volume type",
            ));
            continue;
        }
        count += 1;
        pv_source(field, source, &format!("spec.{path}"), object, causes);
        if field == "local" && affinity.is_none() {
            causes.push(Cause::required(
                "spec.nodeAffinity",
                "Local volume requires node affinity",
            ));
        }
    }
    if count == 0 {
        causes.push(Cause::required("spec", "must specify a volume type"));
    }
    if let Some(host_path) = set(spec, "hostPath")
        && clean_path(text(host_path, "/path")) == "/"
        && policy == "Recycle"
    {
        causes.push(Cause::forbidden(
            "spec.persistentVolumeReclaimPolicy",
            "may not be 'recycle' for a hostPath mount of '/'",
        ));
    }
    let class = text(spec, "/storageClassName");
    if !class.is_empty() {
        class_name(class, "spec.storageClassName", causes);
    }
    if let Some(mode) = set(spec, "volumeMode").and_then(Value::as_str)
        && !VOLUME_MODES.contains(&mode)
    {
        causes.push(Cause::not_supported("spec.volumeMode", mode, &VOLUME_MODES));
    }
}

/// Go's `path.Clean`, enough to tell whether a path is the root.
fn clean_path(path: &str) -> String {
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            ".." if rooted => {}
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

/// `ValidateNodeSelector` of a volume's required node affinity: at least
/// one term, each requirement's operator, key and label values, each
/// field requirement on `metadata.name`.
fn node_selector(selector: &Value, path: &str, causes: &mut Vec<Cause>) {
    let at = format!("{path}.nodeSelectorTerms");
    let terms = items(selector.get("nodeSelectorTerms"));
    if terms.is_empty() {
        causes.push(Cause::required(
            &at,
            "must have at least one node selector term",
        ));
        return;
    }
    for (i, term) in terms.iter().enumerate() {
        let term_at = format!("{at}[{i}]");
        for (j, requirement) in items(term.get("matchExpressions")).iter().enumerate() {
            let at = format!("{term_at}.matchExpressions[{j}]");
            operator_and_key(requirement, &at, true, causes);
            for (k, value) in items(requirement.get("values")).iter().enumerate() {
                let value = value.as_str().unwrap_or_default();
                for problem in names::label_value(value) {
                    causes.push(names::invalid(&format!("{at}.values[{k}]"), value, problem));
                }
            }
        }
        for (j, requirement) in items(term.get("matchFields")).iter().enumerate() {
            let at = format!("{term_at}.matchFields[{j}]");
            let values = items(requirement.get("values"));
            match text(requirement, "/operator") {
                "In" | "NotIn" if values.len() != 1 => causes.push(Cause::required(
                    &format!("{at}.values"),
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                )),
                "In" | "NotIn" => {}
                other => causes.push(invalid_operator(&at, other)),
            }
            let key = text(requirement, "/key");
            if key != "metadata.name" {
                causes.push(names::invalid(
                    &format!("{at}.key"),
                    key,
                    "not a valid field selector key".into(),
                ));
                continue;
            }
            for (k, value) in values.iter().enumerate() {
                let value = value.as_str().unwrap_or_default();
                for problem in names::dns1123_subdomain(value) {
                    causes.push(names::invalid(&format!("{at}.values[{k}]"), value, problem));
                }
            }
        }
    }
}

/// `InclusiveRangeError(0, 255)`, of a LUN.
const LUN: &str = "must be between 0 and 255, inclusive";

static IQN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"iqn\.\d{4}-\d{2}\.([[:alnum:]-.]+)(:[^,;*&$|\s]+)$").expect("a valid pattern")
});
static EUI: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^eui.[[:alnum:]]{16}$").expect("a valid pattern"));
static NAA: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^naa.[[:alnum:]]{32}$").expect("a valid pattern"));

/// Whether an iSCSI name is of a known format and matches it.
pub(super) fn iscsi_name_valid(name: &str) -> bool {
    if name.starts_with("iqn") {
        IQN.is_match(name)
    } else if name.starts_with("eui") {
        EUI.is_match(name)
    } else if name.starts_with("naa") {
        NAA.is_match(name)
    } else {
        false
    }
}

/// The checks of one PersistentVolume source `kind` at `at`, as each
/// `validate…PersistentVolumeSource` (or the Pod volume's, where the PV
/// shares it) has them.
fn pv_source(kind: &str, source: &Value, at: &str, object: &Value, causes: &mut Vec<Cause>) {
    let required = |field: &str, causes: &mut Vec<Cause>| {
        if text(source, &format!("/{field}")).is_empty() {
            causes.push(Cause::required(&format!("{at}.{field}"), ""));
        }
    };
    match kind {
        "hostPath" => {
            let parent = at.trim_end_matches(".hostPath");
            volume_source::host_path(source, parent, causes);
        }
        "glusterfs" => {
            required("endpoints", causes);
            required("path", causes);
            if let Some(namespace) = set(source, "endpointsNamespace").and_then(Value::as_str) {
                let field = format!("{at}.endpointsNamespace");
                if namespace.is_empty() {
                    causes.push(names::invalid(
                        &field,
                        "",
                        "if the endpointnamespace is set, it must be a valid namespace name".into(),
                    ));
                } else {
                    for problem in names::dns1123_label(namespace) {
                        causes.push(names::invalid(&field, namespace, problem));
                    }
                }
            }
        }
        "iscsi" => iscsi(source, at, text(object, "/metadata/name"), causes),
        "cinder" | "storageos" => {
            if kind == "cinder" {
                required("volumeID", causes);
            } else {
                storageos_names(source, at, causes);
            }
            if let Some(secret) = set(source, "secretRef") {
                for field in ["name", "namespace"] {
                    if text(secret, &format!("/{field}")).is_empty() {
                        causes.push(Cause::required(&format!("{at}.secretRef.{field}"), ""));
                    }
                }
            }
        }
        "azureFile" => {
            required("secretName", causes);
            required("shareName", causes);
            if set(source, "secretNamespace").is_some() {
                required("secretNamespace", causes);
            }
        }
        // The sources whose checks a PV shares with a Pod's volume.
        "gcePersistentDisk"
        | "awsElasticBlockStore"
        | "flocker"
        | "nfs"
        | "rbd"
        | "cephfs"
        | "quobyte"
        | "fc"
        | "flexVolume"
        | "vsphereVolume"
        | "photonPersistentDisk"
        | "portworxVolume"
        | "azureDisk" => {
            let parent = at.rsplit_once('.').map_or(at, |(parent, _)| parent);
            volume_source::check(kind, source, parent, causes);
        }
        "scaleIO" => {
            for field in ["gateway", "system", "volumeName"] {
                required(field, causes);
            }
        }
        "local" => {
            let path = text(source, "/path");
            if path.is_empty() {
                causes.push(Cause::required(&format!("{at}.path"), ""));
            } else if path.split('/').any(|part| part == "..") {
                causes.push(names::invalid(
                    &format!("{at}.path"),
                    path,
                    "must not contain '..'".into(),
                ));
            }
        }
        "csi" => csi(source, at, causes),
        _ => {}
    }
}

/// A StorageOS volume's name and namespace, each an RFC 1123 label.
fn storageos_names(source: &Value, at: &str, causes: &mut Vec<Cause>) {
    let name = text(source, "/volumeName");
    let field = format!("{at}.volumeName");
    if name.is_empty() {
        causes.push(Cause::required(&field, ""));
    }
    let namespace = text(source, "/volumeNamespace");
    for (value, field) in [(name, field), (namespace, format!("{at}.volumeNamespace"))] {
        if !value.is_empty() {
            for problem in names::dns1123_label(value) {
                causes.push(names::invalid(&field, value, problem));
            }
        }
    }
}

/// `validateISCSIPersistentVolumeSource`.
fn iscsi(source: &Value, at: &str, volume: &str, causes: &mut Vec<Cause>) {
    let portal = text(source, "/targetPortal");
    if portal.is_empty() {
        causes.push(Cause::required(&format!("{at}.targetPortal"), ""));
    }
    let initiator = set(source, "initiatorName").map(|v| v.as_str().unwrap_or_default());
    if initiator.is_some() && volume.len() + 1 + portal.len() > 64 {
        causes.push(names::invalid(
            &format!("{at}.targetportal"),
            portal,
            "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified.".into(),
        ));
    }
    let iqn = text(source, "/iqn");
    if iqn.is_empty() {
        causes.push(Cause::required(&format!("{at}.iqn"), ""));
    } else if !iscsi_name_valid(iqn) {
        causes.push(names::invalid(
            &format!("{at}.iqn"),
            iqn,
            "must be valid format".into(),
        ));
    }
    let lun = source.get("lun").and_then(Value::as_i64).unwrap_or(0);
    if !(0..=255).contains(&lun) {
        causes.push(Cause::invalid_number(&format!("{at}.lun"), lun, LUN));
    }
    let chap = ["chapAuthDiscovery", "chapAuthSession"]
        .iter()
        .any(|f| source.get(*f).and_then(Value::as_bool) == Some(true));
    let secret = set(source, "secretRef");
    if chap && secret.is_none() {
        causes.push(Cause::required(&format!("{at}.secretRef"), ""));
    }
    if secret.is_some_and(|s| text(s, "/name").is_empty()) {
        causes.push(Cause::required(&format!("{at}.secretRef.name"), ""));
    }
    if let Some(initiator) = initiator {
        let field = format!("{at}.initiatorname");
        let known = ["iqn", "eui", "naa"]
            .iter()
            .any(|p| initiator.starts_with(p));
        if !known || !iscsi_name_valid(initiator) {
            causes.push(names::invalid(
                &field,
                initiator,
                "must be valid format".into(),
            ));
        }
    }
}

/// `validateCSIPersistentVolumeSource`: a driver name, a volume handle,
/// and each secret reference named, in a namespace.
fn csi(source: &Value, at: &str, causes: &mut Vec<Cause>) {
    csi_driver_name(text(source, "/driver"), &format!("{at}.driver"), causes);
    if text(source, "/volumeHandle").is_empty() {
        causes.push(Cause::required(&format!("{at}.volumeHandle"), ""));
    }
    for field in [
        "controllerPublishSecretRef",
        "controllerExpandSecretRef",
        "nodePublishSecretRef",
        "nodeExpandSecretRef",
    ] {
        let Some(secret) = set(source, field) else {
            continue;
        };
        let at = format!("{at}.{field}");
        let name = text(secret, "/name");
        if name.is_empty() {
            causes.push(Cause::required(&format!("{at}.name"), ""));
        } else {
            for problem in names::dns1123_subdomain(name) {
                causes.push(names::invalid(&format!("{at}.name"), name, problem));
            }
        }
        let namespace = text(secret, "/namespace");
        if namespace.is_empty() {
            causes.push(Cause::required(&format!("{at}.namespace"), ""));
        } else {
            for problem in names::dns1123_label(namespace) {
                causes.push(names::invalid(
                    &format!("{at}.namespace"),
                    namespace,
                    problem,
                ));
            }
        }
    }
}

/// `ValidateCSIDriverName`.
pub(super) fn csi_driver_name(driver: &str, field: &str, causes: &mut Vec<Cause>) {
    if driver.is_empty() {
        causes.push(Cause::required(field, ""));
    }
    if driver.len() > 63 {
        causes.push(Cause::too_long(field, 63));
    }
    for problem in names::dns1123_subdomain(&driver.to_lowercase()) {
        causes.push(names::invalid(field, driver, problem));
    }
}

/// The source fields of a PersistentVolume's spec.
fn volume_source_of(spec: &Value) -> Map<String, Value> {
    VOLUME_SOURCES
        .iter()
        .filter_map(|(field, _)| set(spec, field).map(|v| (field.to_string(), v.clone())))
        .collect()
}

/// `ValidatePersistentVolumeUpdate` past the new volume's own checks.
fn volume_update(new: &Value, old: &Value, causes: &mut Vec<Cause>) {
    let (spec, was) = (spec_of(new), spec_of(old));
    let mut now = volume_source_of(spec);
    let before = volume_source_of(was);
    // A CSI volume may be given the secret to expand it with.
    if set(was, "csi").is_some_and(|c| set(c, "controllerExpandSecretRef").is_none())
        && let Some(csi) = now.get_mut("csi").and_then(Value::as_object_mut)
    {
        csi.remove("controllerExpandSecretRef");
    }
    if semantic(Some(&Value::Object(now))) != semantic(Some(&Value::Object(before))) {
        causes.push(Cause::forbidden(
            "spec.persistentvolumesource",
            "spec.persistentvolumesource is immutable after creation",
        ));
    }
    immutable_string(spec, was, "volumeMode", "volumeMode", causes);
    if let Some(before) = set(was, "nodeAffinity") {
        let now = set(spec, "nodeAffinity");
        if semantic(now) != semantic(Some(before)) {
            let shown = match now {
                None => "\"null\"".to_string(),
                Some(affinity) => match set(affinity, "required") {
                    None => "core.VolumeNodeAffinity{Required:(*core.NodeSelector)(nil)}".into(),
                    Some(_) => "core.VolumeNodeAffinity{Required:(*core.NodeSelector)(…)}".into(),
                },
            };
            causes.push(Cause::new(
                "nodeAffinity",
                "FieldValueInvalid",
                format!("Invalid value: {shown}: {IMMUTABLE}"),
            ));
        }
    }
    attributes_class_kept(spec, was, causes);
}

/// Go's `%#v` of a `core.ResourceList` (the capacity upstream refuses),
/// each quantity as `ParseQuantity` builds it.
fn go_resource_list(list: Option<&Map<String, Value>>) -> String {
    let Some(list) = list.filter(|l| !l.is_empty()) else {
        return if list.is_some() {
            "core.ResourceList{}".into()
        } else {
            "core.ResourceList(nil)".into()
        };
    };
    let mut entries: Vec<(&String, &Value)> = list.iter().collect();
    entries.sort_by_key(|(k, _)| *k);
    let shown: Vec<String> = entries
        .iter()
        .map(|(k, v)| format!("{k:?}:{}", go_quantity(v.as_str().unwrap_or_default())))
        .collect();
    format!("core.ResourceList{{{}}}", shown.join(", "))
}

/// Go's `%#v` of a `resource.Quantity` parsed from `written`: its
/// integer amount and scale, the text kept when it is in canonical form,
/// and its format. A quantity upstream holds as an `inf.Dec` shows its
/// pointer as `(…)`.
fn go_quantity(written: &str) -> String {
    let show = |value: i128, scale: i32, kept: &str, format: &str| {
        format!(
            "resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:{scale}}}, d:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:{kept:?}, Format:{format:?}}}"
        )
    };
    if written == "0" {
        return show(0, 0, "0", "DecimalSI");
    }
    let big = |format: &str| {
        format!(
            "resource.Quantity{{i:resource.int64Amount{{value:0, scale:0}}, d:resource.infDecAmount{{Dec:(*inf.Dec)(…)}}, s:\"\", Format:{format:?}}}"
        )
    };
    let (positive, rest) = match written.as_bytes().first() {
        Some(b'-') => (false, &written[1..]),
        Some(b'+') => (true, &written[1..]),
        _ => (true, written),
    };
    let split = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(split);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let mut whole = whole.trim_start_matches('0');
    if whole.is_empty() {
        whole = "0";
    }
    let (base2, exponent, format) = match suffix {
        "" => (false, 0, "DecimalSI"),
        "n" => (false, -9, "DecimalSI"),
        "u" => (false, -6, "DecimalSI"),
        "m" => (false, -3, "DecimalSI"),
        "k" => (false, 3, "DecimalSI"),
        "M" => (false, 6, "DecimalSI"),
        "G" => (false, 9, "DecimalSI"),
        "T" => (false, 12, "DecimalSI"),
        "P" => (false, 15, "DecimalSI"),
        "E" => (false, 18, "DecimalSI"),
        "Ki" => (true, 10, "BinarySI"),
        "Mi" => (true, 20, "BinarySI"),
        "Gi" => (true, 30, "BinarySI"),
        "Ti" => (true, 40, "BinarySI"),
        "Pi" => (true, 50, "BinarySI"),
        "Ei" => (true, 60, "BinarySI"),
        other => match other[1..].parse::<i32>() {
            Ok(exponent) => (false, exponent, "DecimalExponent"),
            Err(_) => return big("DecimalSI"),
        },
    };
    let digits = (whole.len() + fraction.len()) as i32;
    let (precision, mantissa) = if base2 {
        if fraction.is_empty() {
            (
                15 - whole.len() as i32 - (exponent as f32 * 3.0 / 10.0) as i32 - 1,
                1i128 << exponent,
            )
        } else {
            (-1, 1)
        }
    } else {
        (18 - digits, 1)
    };
    let scale = if base2 { 0 } else { exponent } - fraction.len() as i32;
    if precision < 0 || scale < -9 {
        return big(format);
    }
    let shifted = format!("{whole}{fraction}");
    let Ok(value) = shifted.parse::<i128>() else {
        return big(format);
    };
    let mut result = value * mantissa;
    if result > i128::from(i64::MAX) {
        return big(format);
    }
    if !positive {
        result = -result;
    }
    let canonical = if base2 {
        exponent % 10 == 0 && value & 7 != 0
    } else {
        scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0')
    };
    show(result, scale, if canonical { written } else { "" }, format)
}

/// The most parameters a StorageClass may have, and their most bytes.
const MAX_PARAMETERS: usize = 512;
const MAX_PARAMETERS_SIZE: usize = 256 * 1024;
/// A StorageClass's `supportedReclaimPolicy`, sorted.
const CLASS_RECLAIM_POLICIES: [&str; 2] = ["Delete", "Retain"];
/// `supportedVolumeBindingModes`, sorted.
const BINDING_MODES: [&str; 2] = ["Immediate", "WaitForFirstConsumer"];

/// `ValidateStorageClass` past its metadata.
fn storage_class(class: &Value, causes: &mut Vec<Cause>) {
    let provisioner = text(class, "/provisioner");
    if provisioner.is_empty() {
        causes.push(Cause::required("provisioner", ""));
    } else {
        // Checked, and shown, in lower case.
        let lower = provisioner.to_lowercase();
        for problem in names::qualified_name(&lower) {
            causes.push(names::invalid("provisioner", &lower, problem));
        }
    }
    let parameters = class.get("parameters").and_then(Value::as_object);
    if parameters.map_or(0, Map::len) > MAX_PARAMETERS {
        causes.push(Cause::too_long("parameters", MAX_PARAMETERS));
    } else {
        let mut size = 0;
        for (key, value) in parameters.into_iter().flatten() {
            if key.is_empty() {
                causes.push(names::invalid(
                    "parameters",
                    "",
                    "field can not be empty.".into(),
                ));
            }
            size += key.len() + value.as_str().unwrap_or_default().len();
        }
        if size > MAX_PARAMETERS_SIZE {
            causes.push(Cause::too_long("parameters", MAX_PARAMETERS_SIZE));
        }
    }
    let policy = text(class, "/reclaimPolicy");
    if !policy.is_empty() && !CLASS_RECLAIM_POLICIES.contains(&policy) {
        causes.push(Cause::not_supported(
            "reclaimPolicy",
            policy,
            &CLASS_RECLAIM_POLICIES,
        ));
    }
    match set(class, "volumeBindingMode").and_then(Value::as_str) {
        None => causes.push(Cause::required("volumeBindingMode", "")),
        Some(mode) if !BINDING_MODES.contains(&mode) => {
            causes.push(Cause::not_supported(
                "volumeBindingMode",
                mode,
                &BINDING_MODES,
            ));
        }
        Some(_) => {}
    }
    allowed_topologies(items(class.get("allowedTopologies")), causes);
}

/// `validateAllowedTopologies`: each term's requirements (values given,
/// each once; a key that is a label name, once per term), and no term
/// the same as another. Upstream starts its list of seen terms with one
/// empty term for each term there is, so a term without requirements is
/// reported once for each of those and each empty term before it.
fn allowed_topologies(terms: &[Value], causes: &mut Vec<Cause>) {
    type Term = Vec<(String, Vec<String>)>;
    let mut seen: Vec<Term> = vec![Vec::new(); terms.len()];
    for (i, term) in terms.iter().enumerate() {
        let at = format!("allowedTopologies[{i}].matchLabelExpressions");
        let mut keyed: Term = Vec::new();
        for (j, requirement) in items(term.get("matchLabelExpressions")).iter().enumerate() {
            let requirement_at = format!("{at}[{j}]");
            let values_at = format!("{requirement_at}.values");
            let values = items(requirement.get("values"));
            if values.is_empty() {
                causes.push(Cause::required(&values_at, ""));
            }
            let mut unique: Vec<String> = Vec::new();
            for (k, value) in values.iter().enumerate() {
                let value = value.as_str().unwrap_or_default().to_string();
                if unique.contains(&value) {
                    causes.push(Cause::duplicate(&format!("{values_at}[{k}]"), &value));
                } else {
                    unique.push(value);
                }
            }
            unique.sort();
            let key = text(requirement, "/key");
            label_name(key, &format!("{requirement_at}.key"), causes);
            if let Some(entry) = keyed.iter_mut().find(|(k, _)| k == key) {
                causes.push(Cause::duplicate(&format!("{requirement_at}.key"), key));
                entry.1 = unique;
            } else {
                keyed.push((key.to_string(), unique));
            }
        }
        keyed.sort();
        for earlier in &seen {
            if *earlier == keyed {
                causes.push(Cause::duplicate(&at, ""));
            }
        }
        seen.push(keyed);
    }
}

/// `ValidateStorageClassUpdate` past its metadata: parameters,
/// provisioner, reclaim policy and binding mode unchanged. The stored
/// class has no empty parameters (storage drops them), and upstream
/// compares with `reflect.DeepEqual`, to which an empty map is not none.
fn storage_class_update(class: &Value, old: &Value, causes: &mut Vec<Cause>) {
    let now = set(class, "parameters");
    let before = set(old, "parameters").filter(|p| p.as_object().is_some_and(|m| !m.is_empty()));
    if now != before {
        causes.push(Cause::forbidden(
            "parameters",
            "updates to parameters are forbidden.",
        ));
    }
    if text(class, "/provisioner") != text(old, "/provisioner") {
        causes.push(Cause::forbidden(
            "provisioner",
            "updates to provisioner are forbidden.",
        ));
    }
    if text(class, "/reclaimPolicy") != text(old, "/reclaimPolicy") {
        causes.push(Cause::forbidden(
            "reclaimPolicy",
            "updates to reclaimPolicy are forbidden.",
        ));
    }
    immutable_string(class, old, "volumeBindingMode", "volumeBindingMode", causes);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(kind: &str, object: &Value, old: Option<&Value>) -> Vec<String> {
        let mut causes = Vec::new();
        validate(kind, object, old, &mut causes);
        causes.iter().map(Cause::message).collect()
    }

    /// A claim as defaulting leaves it, with `spec` merged in.
    fn claim(spec: Value) -> Value {
        let mut claim = json!({"metadata": {"name": "data", "namespace": "default"},
            "spec": {"accessModes": ["ReadWriteOnce"], "volumeMode": "Filesystem",
                "resources": {"requests": {"storage": "1Gi"}}},
            "status": {"phase": "Pending"}});
        for (field, value) in spec.as_object().unwrap() {
            claim["spec"][field] = value.clone();
        }
        claim
    }

    /// A volume as defaulting leaves it, with `spec` merged in.
    fn volume(spec: Value) -> Value {
        let mut volume = json!({"metadata": {"name": "pv1"},
            "spec": {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"},
                "persistentVolumeReclaimPolicy": "Retain", "volumeMode": "Filesystem",
                "hostPath": {"path": "/data", "type": ""}},
            "status": {"phase": "Pending"}});
        for (field, value) in spec.as_object().unwrap() {
            volume["spec"][field] = value.clone();
        }
        volume
    }

    fn class(fields: Value) -> Value {
        let mut class = json!({"metadata": {"name": "fast"}, "provisioner": "example.com/disk",
            "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"});
        for (field, value) in fields.as_object().unwrap() {
            class[field] = value.clone();
        }
        class
    }

    #[test]
    fn a_claim_needs_access_modes_and_a_positive_storage_request() {
        assert!(messages("PersistentVolumeClaim", &claim(json!({})), None).is_empty());
        let bad = claim(json!({"accessModes": [], "resources": {}}));
        assert_eq!(
            messages("PersistentVolumeClaim", &bad, None),
            [
                "spec.accessModes: Required value: at least 1 access mode is required",
                "spec.resources[storage]: Required value",
            ]
        );
        let bad = claim(
            json!({"accessModes": ["ReadWriteOncePod", "ReadWriteOnce", "WriteOnly"],
            "resources": {"requests": {"storage": "0"}}}),
        );
        assert_eq!(
            messages("PersistentVolumeClaim", &bad, None),
            [
                "spec.accessModes: Unsupported value: \"WriteOnly\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"",
                "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
                "spec.resources[storage]: Invalid value: \"0\": must be greater than zero",
            ]
        );
        let negative = claim(json!({"resources": {"requests": {"storage": "-1.5Gi"}}}));
        assert_eq!(
            messages("PersistentVolumeClaim", &negative, None),
            ["spec.resources[storage]: Invalid value: \"-1536Mi\": must be greater than zero"]
        );
    }

    #[test]
    fn a_claims_selector_class_mode_and_data_sources_are_checked_in_order() {
        let bad = claim(json!({
            "selector": {"matchExpressions": [{"key": "tier", "operator": "Has"}]},
            "storageClassName": "Fast_SSD",
            "volumeMode": "Raw",
            "dataSource": {"kind": "VolumeSnapshot", "name": ""},
            "dataSourceRef": {"apiGroup": "Snapshot.Storage", "kind": "VolumeSnapshot", "name": "snap"},
        }));
        assert_eq!(
            messages("PersistentVolumeClaim", &bad, None),
            [
                "spec.selector.matchExpressions[0].operator: Invalid value: \"Has\": not a valid selector operator",
                "spec.storageClassName: Invalid value: \"Fast_SSD\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "spec.volumeMode: Unsupported value: \"Raw\": supported values: \"Block\", \"Filesystem\"",
                "spec.dataSource.name: Required value",
                "spec.dataSource: Invalid value: \"VolumeSnapshot\": must be 'PersistentVolumeClaim' when referencing the default apiGroup",
                "spec.dataSourceRef.apiGroup: Invalid value: \"Snapshot.Storage\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "spec: Invalid value: field.Path{name:\"dataSource\", index:\"\", parent:(*field.Path)(…)}: must match dataSourceRef",
            ]
        );
        // An empty class name asks for no class; a matching pair is fine.
        let ok = claim(json!({"storageClassName": "",
            "dataSource": {"kind": "PersistentVolumeClaim", "name": "src"},
            "dataSourceRef": {"kind": "PersistentVolumeClaim", "name": "src"}}));
        assert!(messages("PersistentVolumeClaim", &ok, None).is_empty());
    }

    #[test]
    fn a_claims_spec_is_immutable_but_a_bound_claims_request_may_grow() {
        let old = claim(json!({}));
        let mut grown = claim(json!({"resources": {"requests": {"storage": "2Gi"}}}));
        // Unbound: the request is part of the immutable spec.
        assert_eq!(
            messages("PersistentVolumeClaim", &grown, Some(&old)),
            [
                "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"
            ]
        );
        let mut bound_old = old.clone();
        bound_old["status"] = json!({"phase": "Bound", "capacity": {"storage": "1Gi"}});
        grown["status"] = bound_old["status"].clone();
        assert!(messages("PersistentVolumeClaim", &grown, Some(&bound_old)).is_empty());
        // The same size written otherwise is no change.
        let same = claim(json!({"resources": {"requests": {"storage": "1024Mi"}}}));
        assert!(messages("PersistentVolumeClaim", &same, Some(&old)).is_empty());
        // Shrinking to the recorded capacity or below is refused; back
        // above it (recovering from a failed expansion) is not.
        let mut expanding = bound_old.clone();
        expanding["spec"]["resources"]["requests"]["storage"] = json!("4Gi");
        let mut shrunk = expanding.clone();
        shrunk["spec"]["resources"]["requests"]["storage"] = json!("1Gi");
        assert_eq!(
            messages("PersistentVolumeClaim", &shrunk, Some(&expanding)),
            [
                "spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"
            ]
        );
        shrunk["spec"]["resources"]["requests"]["storage"] = json!("2Gi");
        assert!(messages("PersistentVolumeClaim", &shrunk, Some(&expanding)).is_empty());
        // The volume mode is reported at `volumeMode`, after the spec.
        let block = claim(json!({"volumeMode": "Block"}));
        assert_eq!(
            messages("PersistentVolumeClaim", &block, Some(&old)),
            [
                "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
                "volumeMode: Invalid value: \"Block\": field is immutable",
            ]
        );
    }

    #[test]
    fn a_claims_volume_name_and_a_missing_class_may_be_set_once() {
        let old = claim(json!({}));
        let named = claim(json!({"volumeName": "pv1", "storageClassName": "fast"}));
        assert!(messages("PersistentVolumeClaim", &named, Some(&old)).is_empty());
        let renamed = claim(json!({"volumeName": "pv2", "storageClassName": "fast"}));
        assert_eq!(
            messages("PersistentVolumeClaim", &renamed, Some(&named)).len(),
            1
        );
        let reclassed = claim(json!({"volumeName": "pv1", "storageClassName": "slow"}));
        assert_eq!(
            messages("PersistentVolumeClaim", &reclassed, Some(&named)).len(),
            1
        );
        // The beta annotation's class may move to the field; the
        // annotation may not change.
        let mut annotated = claim(json!({}));
        annotated["metadata"]["annotations"] = json!({BETA_CLASS_ANNOTATION: "fast"});
        let mut moved = claim(json!({"storageClassName": "fast"}));
        moved["metadata"]["annotations"] = annotated["metadata"]["annotations"].clone();
        assert!(messages("PersistentVolumeClaim", &moved, Some(&annotated)).is_empty());
        let mut changed = claim(json!({}));
        changed["metadata"]["annotations"] = json!({BETA_CLASS_ANNOTATION: "slow"});
        assert_eq!(
            messages("PersistentVolumeClaim", &changed, Some(&annotated)),
            [
                "metadata.annotations.volume.beta.kubernetes.io/storage-class: Invalid value: \"slow\": field is immutable"
            ]
        );
    }

    #[test]
    fn a_volume_needs_modes_a_storage_capacity_and_one_source() {
        assert!(messages("PersistentVolume", &volume(json!({})), None).is_empty());
        let mut bare = volume(json!({"accessModes": [], "persistentVolumeReclaimPolicy": "Keep"}));
        let spec = bare["spec"].as_object_mut().unwrap();
        spec.remove("capacity");
        spec.remove("hostPath");
        assert_eq!(
            messages("PersistentVolume", &bare, None),
            [
                "spec.accessModes: Required value",
                "spec.capacity: Required value",
                "spec.capacity: Unsupported value: core.ResourceList(nil): supported values: \"storage\"",
                "spec.persistentVolumeReclaimPolicy: Unsupported value: \"Keep\": supported values: \"Delete\", \"Recycle\", \"Retain\"",
                "spec: Required value: must specify a volume type",
            ]
        );
        let bad = volume(json!({"capacity": {"storage": "-1", "cpu": "500m"},
            "volumeMode": "Raw", "storageClassName": "Fast"}));
        assert_eq!(
            messages("PersistentVolume", &bad, None),
            [
                "spec.capacity: Unsupported value: core.ResourceList{\"cpu\":resource.Quantity{i:resource.int64Amount{value:500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"500m\", Format:\"DecimalSI\"}, \"storage\":resource.Quantity{i:resource.int64Amount{value:-1, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"-1\", Format:\"DecimalSI\"}}: supported values: \"storage\"",
                "spec.capacity[storage]: Invalid value: -1: must be a valid resource quantity",
                "spec.capacity[storage]: Invalid value: \"-1\": must be greater than zero",
                "spec.storageClassName: Invalid value: \"Fast\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "spec.volumeMode: Unsupported value: \"Raw\": supported values: \"Block\", \"Filesystem\"",
            ]
        );
    }

    #[test]
    fn a_volumes_sources_are_one_and_each_checked() {
        let two = volume(json!({"nfs": {"server": "", "path": "exports"}, "csi": {"driver": "x"}}));
        assert_eq!(
            messages("PersistentVolume", &two, None),
            [
                "spec.nfs: Forbidden: may not specify more than 1 volume type",
                "spec.csi: Forbidden: may not specify more than 1 volume type",
            ]
        );
        let mut nfs = volume(json!({"nfs": {"server": "", "path": "exports"}}));
        nfs["spec"].as_object_mut().unwrap().remove("hostPath");
        assert_eq!(
            messages("PersistentVolume", &nfs, None),
            [
                "spec.nfs.server: Required value",
                "spec.nfs.path: Invalid value: \"exports\": must be an absolute path",
            ]
        );
        let mut flex = volume(json!({"flexVolume": {"options": {"kubernetes.io/x": "1"}}}));
        flex["spec"].as_object_mut().unwrap().remove("hostPath");
        assert_eq!(
            messages("PersistentVolume", &flex, None),
            [
                "spec.flexVolume.driver: Required value",
                "spec.flexVolume.options[kubernetes.io/x]: Invalid value: \"kubernetes.io/x\": kubernetes.io and k8s.io namespaces are reserved",
            ]
        );
        // A GCE disk is checked at `persistentDisk`, as upstream names it.
        let mut gce = volume(json!({"gcePersistentDisk": {"partition": 300}}));
        gce["spec"].as_object_mut().unwrap().remove("hostPath");
        assert_eq!(
            messages("PersistentVolume", &gce, None),
            [
                "spec.persistentDisk.pdName: Required value",
                "spec.persistentDisk.partition: Invalid value: 300: must be between 1 and 255, inclusive",
            ]
        );
        let host = volume(json!({"hostPath": {"path": "/a/../b", "type": "Folder"}}));
        assert_eq!(
            messages("PersistentVolume", &host, None),
            [
                "spec.hostPath.path: Invalid value: \"/a/../b\": must not contain '..'",
                "spec.hostPath.type: Unsupported value: \"Folder\": supported values: \"\", \"BlockDevice\", \"CharDevice\", \"Directory\", \"DirectoryOrCreate\", \"File\", \"FileOrCreate\", \"Socket\"",
            ]
        );
        let root = volume(json!({"hostPath": {"path": "/tmp/..", "type": ""},
            "persistentVolumeReclaimPolicy": "Recycle"}));
        assert_eq!(
            messages("PersistentVolume", &root, None),
            [
                "spec.hostPath.path: Invalid value: \"/tmp/..\": must not contain '..'",
                "spec.persistentVolumeReclaimPolicy: Forbidden: may not be 'recycle' for a hostPath mount of '/'",
            ]
        );
        // A GCE disk's checks name the field `persistentDisk`.
        let mut gce = volume(json!({"gcePersistentDisk": {"pdName": "", "partition": 300}}));
        gce["spec"].as_object_mut().unwrap().remove("hostPath");
        assert_eq!(
            messages("PersistentVolume", &gce, None),
            [
                "spec.persistentDisk.pdName: Required value",
                "spec.persistentDisk.partition: Invalid value: 300: must be between 1 and 255, inclusive",
            ]
        );
    }

    #[test]
    fn a_local_volume_needs_node_affinity_and_a_csi_volume_a_driver_and_handle() {
        let mut local = volume(json!({"local": {"path": "/mnt/disks/ssd1"}}));
        local["spec"].as_object_mut().unwrap().remove("hostPath");
        assert_eq!(
            messages("PersistentVolume", &local, None),
            ["spec.nodeAffinity: Required value: Local volume requires node affinity"]
        );
        local["spec"]["nodeAffinity"] = json!({"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["node 1"]}]},
            {"matchFields": [{"key": "metadata.uid", "operator": "Exists"}]}]}});
        assert_eq!(
            messages("PersistentVolume", &local, None),
            [
                "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: \"node 1\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
                "spec.nodeAffinity.required.nodeSelectorTerms[1].matchFields[0].operator: Invalid value: \"Exists\": not a valid selector operator",
                "spec.nodeAffinity.required.nodeSelectorTerms[1].matchFields[0].key: Invalid value: \"metadata.uid\": not a valid field selector key",
            ]
        );
        local["spec"]["nodeAffinity"] = json!({});
        assert_eq!(
            messages("PersistentVolume", &local, None),
            ["spec.nodeAffinity.required: Required value: must specify required node constraints"]
        );
        let mut csi = volume(json!({"csi": {"driver": "",
            "nodePublishSecretRef": {"name": "creds"}}}));
        csi["spec"].as_object_mut().unwrap().remove("hostPath");
        let found = messages("PersistentVolume", &csi, None);
        assert_eq!(found[0], "spec.csi.driver: Required value");
        assert_eq!(
            found[2..],
            [
                "spec.csi.volumeHandle: Required value",
                "spec.csi.nodePublishSecretRef.namespace: Required value",
            ]
        );
    }

    #[test]
    fn a_volumes_source_mode_and_affinity_are_immutable() {
        let old = volume(json!({"nodeAffinity": {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}));
        let mut new = old.clone();
        new["spec"]["hostPath"]["path"] = json!("/other");
        new["spec"]["volumeMode"] = json!("Block");
        new["spec"].as_object_mut().unwrap().remove("nodeAffinity");
        assert_eq!(
            messages("PersistentVolume", &new, Some(&old)),
            [
                "spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation",
                "volumeMode: Invalid value: \"Block\": field is immutable",
                "nodeAffinity: Invalid value: \"null\": field is immutable",
            ]
        );
        // Capacity, class and reclaim policy may change; a CSI volume may
        // gain its expansion secret.
        let csi = |extra: Value| {
            let mut v =
                volume(json!({"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"}}));
            v["spec"].as_object_mut().unwrap().remove("hostPath");
            for (k, value) in extra.as_object().unwrap() {
                v["spec"]["csi"][k] = value.clone();
            }
            v
        };
        let mut grown =
            csi(json!({"controllerExpandSecretRef": {"name": "s", "namespace": "kube-system"}}));
        grown["spec"]["capacity"]["storage"] = json!("2Gi");
        grown["spec"]["persistentVolumeReclaimPolicy"] = json!("Delete");
        assert!(messages("PersistentVolume", &grown, Some(&csi(json!({})))).is_empty());
    }

    #[test]
    fn a_storage_class_has_a_qualified_provisioner_and_known_policies() {
        assert!(messages("StorageClass", &class(json!({})), None).is_empty());
        let bad = class(
            json!({"provisioner": "Example.com/Disk!", "parameters": {"": "x"},
            "reclaimPolicy": "Recycle", "volumeBindingMode": "Later"}),
        );
        assert_eq!(
            messages("StorageClass", &bad, None),
            [
                "provisioner: Invalid value: \"example.com/disk!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                "parameters: Invalid value: \"\": field can not be empty.",
                "reclaimPolicy: Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\"",
                "volumeBindingMode: Unsupported value: \"Later\": supported values: \"Immediate\", \"WaitForFirstConsumer\"",
            ]
        );
        let empty = class(json!({"provisioner": ""}));
        assert_eq!(
            messages("StorageClass", &empty, None),
            ["provisioner: Required value"]
        );
        let many: Map<String, Value> = (0..513).map(|i| (format!("k{i}"), json!("v"))).collect();
        let big = class(json!({"parameters": many}));
        assert_eq!(
            messages("StorageClass", &big, None),
            ["parameters: Too long: may not be more than 512 bytes"]
        );
        let huge = class(json!({"parameters": {"k": "v".repeat(256 * 1024)}}));
        assert_eq!(
            messages("StorageClass", &huge, None),
            ["parameters: Too long: may not be more than 262144 bytes"]
        );
    }

    #[test]
    fn allowed_topologies_have_values_keys_once_and_no_repeated_terms() {
        let term = json!({"matchLabelExpressions": [
            {"key": "topology.kubernetes.io/zone", "values": ["a", "b"]}]});
        let ok = class(json!({"allowedTopologies": [term]}));
        assert!(messages("StorageClass", &ok, None).is_empty());
        let bad = class(json!({"allowedTopologies": [
            {"matchLabelExpressions": [
                {"key": "zone", "values": []},
                {"key": "zone", "values": ["a", "a"]},
                {"key": "bad key", "values": ["x"]}]},
            term, term]}));
        assert_eq!(
            messages("StorageClass", &bad, None),
            [
                "allowedTopologies[0].matchLabelExpressions[0].values: Required value",
                "allowedTopologies[0].matchLabelExpressions[1].values[1]: Duplicate value: \"a\"",
                "allowedTopologies[0].matchLabelExpressions[1].key: Duplicate value: \"zone\"",
                "allowedTopologies[0].matchLabelExpressions[2].key: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                "allowedTopologies[2].matchLabelExpressions: Duplicate value: \"\"",
            ]
        );
        // An empty term equals each of the empty terms upstream's list of
        // seen terms starts with.
        let empty = class(json!({"allowedTopologies": [{}]}));
        assert_eq!(
            messages("StorageClass", &empty, None),
            ["allowedTopologies[0].matchLabelExpressions: Duplicate value: \"\""]
        );
    }

    #[test]
    fn a_storage_class_keeps_its_parameters_provisioner_and_policies() {
        let old = class(json!({"parameters": {"type": "gp3"}}));
        let same = class(
            json!({"parameters": {"type": "gp3"}, "allowVolumeExpansion": true,
            "mountOptions": ["debug"]}),
        );
        assert!(messages("StorageClass", &same, Some(&old)).is_empty());
        let changed = class(
            json!({"parameters": {"type": "io2"}, "provisioner": "example.com/other",
            "reclaimPolicy": "Retain", "volumeBindingMode": "WaitForFirstConsumer"}),
        );
        assert_eq!(
            messages("StorageClass", &changed, Some(&old)),
            [
                "parameters: Forbidden: updates to parameters are forbidden.",
                "provisioner: Forbidden: updates to provisioner are forbidden.",
                "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.",
                "volumeBindingMode: Invalid value: \"WaitForFirstConsumer\": field is immutable",
            ]
        );
    }

    #[test]
    fn quantities_show_as_go_shows_them() {
        assert_eq!(
            go_quantity("1Gi"),
            "resource.Quantity{i:resource.int64Amount{value:1073741824, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"1Gi\", Format:\"BinarySI\"}"
        );
        assert_eq!(
            go_quantity("1000"),
            "resource.Quantity{i:resource.int64Amount{value:1000, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"\", Format:\"DecimalSI\"}"
        );
        assert_eq!(
            go_quantity("1.5G"),
            "resource.Quantity{i:resource.int64Amount{value:15, scale:8}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"\", Format:\"DecimalSI\"}"
        );
        assert_eq!(clean_path("/tmp/.."), "/");
        assert_eq!(clean_path("//"), "/");
        assert_eq!(clean_path("/a/./b/"), "/a/b");
    }
}
