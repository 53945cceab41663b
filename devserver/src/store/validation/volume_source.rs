//! A Pod volume's source, as kube-apiserver v1.33's `validateVolumeSource`
//! (`pkg/apis/core/validation/validation.go`) checks the one source of a
//! volume it checks: each source's own `validate…VolumeSource`, in
//! upstream's order and words ([`pod_volume`]), among them a host path
//! (set, without `..`, of a supported type), an empty directory's size
//! limit, a Git repository, NFS, iSCSI, Gluster, Ceph, Cinder, Flex,
//! Fibre Channel, Azure, vSphere, Quobyte, Photon, Portworx, ScaleIO and
//! StorageOS volumes, a ConfigMap's or Secret's name, file modes and
//! items (`validateKeyToPath`: a key, and a relative path without `..`),
//! a claim's name, downward API files, projections, a CSI driver and its
//! secret, and an ephemeral volume's claim template. [`check`] holds the
//! checks a PersistentVolume's source shares.
//!
//! Upstream's field paths are kept where they are odd: a downward API
//! volume's items are reported at the volume (`downwardAPI.path`, no
//! index), a projected token's path at `projected.path`, a CSI secret's
//! name at `csi.name`, a GCE disk at `persistentDisk`, an iSCSI initiator
//! at `initiatorname`.
//!
//! Left out: what needs the volume's or Pod's name (an iSCSI volume with
//! an initiator whose `<volume name>:<targetPortal>` passes 64
//! characters, an ephemeral volume whose claim name `<pod>-<volume>` is
//! not a DNS subdomain); image volumes and projected ClusterTrustBundles,
//! which v1.33 drops from a Pod with their feature gates (`ImageVolume`,
//! `ClusterTrustBundleProjection`) off by default, so they are not
//! checked here; `emptyDir.medium`, which upstream does not check either.

use serde_json::Value;

use super::label_selector::labels;
use super::{Cause, env, invalid_list, items, names, quantity, storage, strings, text};

/// `fileModeErrorMsg`.
const FILE_MODE: &str = "must be a number between 0 and 0777 (octal), both inclusive";
/// `pdPartitionErrorMsg`: `InclusiveRangeError(1, 255)`.
const PARTITION: &str = "must be between 1 and 255, inclusive";
/// `InclusiveRangeError(0, 255)`, of a LUN.
const LUN: &str = "must be between 0 and 255, inclusive";
/// A Quobyte registry's detail.
const REGISTRY: &str = "must be a host:port pair or multiple pairs separated by commas";
/// An iSCSI name of no known format.
const ISCSI_PREFIX: &str = "must be valid format starting with iqn, eui, or naa";
/// A reserved Flex option's detail.
const RESERVED_OPTION: &str = "kubernetes.io and k8s.io namespaces are reserved";
/// `supportedHostPathTypes`, sorted as `sets.List` gives them.
const HOST_PATH_TYPES: [&str; 8] = [
    "",
    "BlockDevice",
    "CharDevice",
    "Directory",
    "DirectoryOrCreate",
    "File",
    "FileOrCreate",
    "Socket",
];
/// An Azure disk's `supportedCachingModes`, sorted.
const CACHING_MODES: [&str; 3] = ["None", "ReadOnly", "ReadWrite"];
/// An Azure disk's `supportedDiskKinds`, sorted.
const DISK_KINDS: [&str; 3] = ["Dedicated", "Managed", "Shared"];
/// `validVolumeDownwardAPIFieldPathExpressions`, sorted.
const VOLUME_FIELD_PATHS: [&str; 5] = [
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
];
/// The fields of a template's metadata other than its labels and
/// annotations, by their JSON name and the name upstream's
/// `validateFieldAllowList` gives them (the Go field's, first letter
/// lowered), in the order of `ObjectMeta`.
const TEMPLATE_META_FIELDS: [(&str, &str); 13] = [
    ("name", "name"),
    ("generateName", "generateName"),
    ("namespace", "namespace"),
    ("selfLink", "selfLink"),
    ("uid", "uID"),
    ("resourceVersion", "resourceVersion"),
    ("generation", "generation"),
    ("creationTimestamp", "creationTimestamp"),
    ("deletionTimestamp", "deletionTimestamp"),
    ("deletionGracePeriodSeconds", "deletionGracePeriodSeconds"),
    ("ownerReferences", "ownerReferences"),
    ("finalizers", "finalizers"),
    ("managedFields", "managedFields"),
];
/// `TotalAnnotationSizeLimitB`.
const ANNOTATIONS_LIMIT: usize = 256 * 1024;

/// The source `kind` (`configMap`, `hostPath`, ...) of the Pod volume at
/// `path`, as `validateVolumeSource` checks the first source it finds.
pub(super) fn pod_volume(kind: &str, source: &Value, path: &str, causes: &mut Vec<Cause>) {
    let at = format!("{path}.{kind}");
    match kind {
        "emptyDir" => empty_dir(source, &at, causes),
        "hostPath" => host_path(source, path, causes),
        "gitRepo" => {
            required(source, &at, "repository", causes);
            let directory = text(source, "/directory");
            local_descending_path(directory, &format!("{at}.directory"), causes);
        }
        "secret" => projected_keys(source, "secretName", &at, causes),
        "configMap" => projected_keys(source, "name", &at, causes),
        "iscsi" => iscsi(source, &at, causes),
        "glusterfs" => {
            required(source, &at, "endpoints", causes);
            required(source, &at, "path", causes);
        }
        "persistentVolumeClaim" => required(source, &at, "claimName", causes),
        "cinder" => {
            required(source, &at, "volumeID", causes);
            secret_ref_name(source, &at, causes);
        }
        "downwardAPI" => {
            file_mode(source, "defaultMode", &at, causes);
            for file in items(source.get("items")) {
                downward_api_file(file, &at, causes);
            }
        }
        "azureFile" => {
            required(source, &at, "secretName", causes);
            required(source, &at, "shareName", causes);
        }
        "storageos" => storageos(source, &at, causes),
        "projected" => projected(source, &at, causes),
        "scaleIO" => {
            for field in ["gateway", "system", "volumeName"] {
                required(source, &at, field, causes);
            }
        }
        "csi" => csi(source, &at, causes),
        "ephemeral" => ephemeral(source, &at, causes),
        _ => check(kind, source, path, causes),
    }
}

/// The checks of the source `kind` at `path` that a Pod's volume shares
/// with a PersistentVolume's (upstream's same `validate…VolumeSource`):
/// a host path's path (`validateHostPathVolumeSource` but its type, which
/// [`host_path`] checks after this for a Pod or a PersistentVolume), a GCE disk (at `persistentDisk`, as upstream
/// names it), an EBS volume, NFS, Flocker, Ceph block devices and file
/// systems, Quobyte, Flex, Fibre Channel, vSphere, Photon, Portworx and
/// Azure disks.
pub(super) fn check(kind: &str, source: &Value, path: &str, causes: &mut Vec<Cause>) {
    let at = format!("{path}.{kind}");
    match kind {
        "hostPath" => {
            let host_path = text(source, "/path");
            let field = format!("{at}.path");
            if host_path.is_empty() {
                causes.push(Cause::required(&field, ""));
            } else if has_backsteps(host_path) {
                causes.push(backsteps(&field, host_path));
            }
        }
        "gcePersistentDisk" => {
            let at = format!("{path}.persistentDisk");
            required(source, &at, "pdName", causes);
            partition(source, &at, causes);
        }
        "awsElasticBlockStore" => {
            required(source, &at, "volumeID", causes);
            partition(source, &at, causes);
        }
        "nfs" => nfs(source, &at, causes),
        "flocker" => flocker(source, &at, causes),
        "rbd" => {
            required_list(source, &at, "monitors", causes);
            required(source, &at, "image", causes);
        }
        "cephfs" => required_list(source, &at, "monitors", causes),
        "quobyte" => quobyte(source, &at, causes),
        "flexVolume" => flex_volume(source, &at, causes),
        "vsphereVolume" => required(source, &at, "volumePath", causes),
        "photonPersistentDisk" => required(source, &at, "pdID", causes),
        "portworxVolume" => required(source, &at, "volumeID", causes),
        "azureDisk" => azure_disk(source, &at, causes),
        "fc" => fc(source, &at, causes),
        _ => {}
    }
}

/// A field that is set: present and not null (a Go pointer not nil).
fn set<'v>(value: &'v Value, field: &str) -> Option<&'v Value> {
    value.get(field).filter(|v| !v.is_null())
}

/// `field.Required` of the string `field` of `source` at `at` when empty.
fn required(source: &Value, at: &str, field: &str, causes: &mut Vec<Cause>) {
    if text(source, &format!("/{field}")).is_empty() {
        causes.push(Cause::required(&format!("{at}.{field}"), ""));
    }
}

/// `field.Required` of the list `field` of `source` at `at` when empty.
fn required_list(source: &Value, at: &str, field: &str, causes: &mut Vec<Cause>) {
    if items(source.get(field)).is_empty() {
        causes.push(Cause::required(&format!("{at}.{field}"), ""));
    }
}

/// A `secretRef`, when set, with a name (Cinder, StorageOS).
fn secret_ref_name(source: &Value, at: &str, causes: &mut Vec<Cause>) {
    if let Some(secret) = set(source, "secretRef") {
        required(secret, &format!("{at}.secretRef"), "name", causes);
    }
}

/// A GCE or EBS disk's partition, 0 to 255 (the message says from 1).
fn partition(source: &Value, at: &str, causes: &mut Vec<Cause>) {
    if let Some(partition) = source["partition"].as_i64()
        && !(0..=255).contains(&partition)
    {
        causes.push(Cause::invalid_number(
            &format!("{at}.partition"),
            partition,
            PARTITION,
        ));
    }
}

/// A quantity as written: a string, or a JSON number.
pub(super) fn quantity_text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(written) => Some(written.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// An empty directory's size limit, not negative (in upstream's
/// `validateVolumeSource` itself).
fn empty_dir(source: &Value, at: &str, causes: &mut Vec<Cause>) {
    let limit = quantity_text(source.get("sizeLimit")).and_then(|q| quantity::parse(&q));
    if limit.is_some_and(|nanos| nanos < 0) {
        causes.push(Cause::forbidden(
            &format!("{at}.sizeLimit"),
            "SizeLimit field must be a valid resource quantity",
        ));
    }
}

/// `validateHostPathType`: a set type is a supported one.
/// A host path volume of a Pod or a PersistentVolume: its path
/// (`validateHostPathVolumeSource`), then, where it has one, its type.
pub(super) fn host_path(source: &Value, path: &str, causes: &mut Vec<Cause>) {
    check("hostPath", source, path, causes);
    if !text(source, "/path").is_empty() {
        host_path_type(source, &format!("{path}.hostPath"), causes);
    }
}

fn host_path_type(source: &Value, at: &str, causes: &mut Vec<Cause>) {
    if let Some(kind) = set(source, "type").and_then(Value::as_str)
        && !HOST_PATH_TYPES.contains(&kind)
    {
        causes.push(Cause::not_supported(
            &format!("{at}.type"),
            kind,
            &HOST_PATH_TYPES,
        ));
    }
}

/// `validateNFSVolumeSource`: a server, and an absolute path (an empty
/// one is both required and not absolute).
fn nfs(source: &Value, at: &str, causes: &mut Vec<Cause>) {
    required(source, at, "server", causes);
    required(source, at, "path", causes);
    let target = text(source, "/path");
    if !target.starts_with('/') {
        causes.push(names::invalid(
            &format!("{at}.path"),
            target,
            "must be an absolute path".into(),
        ));
    }
}

/// `validateFlockerVolumeSource`: one of a dataset name (without `/`) and
/// UUID.
fn flocker(source: &Value, at: &str, causes: &mut Vec<Cause>) {
    let name = text(source, "/datasetName");
    let uuid = text(source, "/datasetUUID");
    if name.is_empty() && uuid.is_empty() {
        causes.push(Cause::required(
            at,
            "one of datasetName and datasetUUID is required",
        ));
    }
    if !name.is_empty() && !uuid.is_empty() {
        causes.push(names::invalid(
            at,
            "resource",
            "datasetName and datasetUUID can not be specified simultaneously".into(),
        ));
    }
    if name.contains('/') {
        causes.push(names::invalid(
            &format!("{at}.datasetName"),
            name,
            "must not contain '/'".into(),
        ));
    }
}

/// `validateQuobyteVolumeSource`: a registry of `host:port` pairs (or a
/// tenant too long, reported instead), and a volume.
fn quobyte(source: &Value, at: &str, causes: &mut Vec<Cause>) {
    let registry = text(source, "/registry");
    let registry_at = format!("{at}.registry");
    if registry.is_empty() {
        causes.push(Cause::required(&registry_at, REGISTRY));
    } else if text(source, "/tenant").len() >= 65 {
        causes.push(Cause::required(
            &format!("{at}.tenant"),
            "must be a UUID and may not exceed a length of 64 characters",
        ));
    } else {
        for pair in registry.split(',') {
            if !host_port(pair) {
                causes.push(names::invalid(&registry_at, registry, REGISTRY.into()));
            }
        }
    }
    required(source, at, "volume", causes);
}

/// Whether Go's `net.SplitHostPort` takes `pair`: a last colon before the
/// port, a bracketed host right before it or a host without colons, and
/// no stray brackets.
fn host_port(pair: &str) -> bool {
    let Some(colon) = pair.rfind(':') else {
        return false;
    };
    let after_host = if pair.starts_with('[') {
        match pair.find(']') {
            Some(end) if end + 1 == colon => end + 1,
            _ => return false,
        }
    } else if pair[..colon].contains(':') {
        return false;
    } else {
        0
    };
    let opening_from = usize::from(pair.starts_with('['));
    !pair[opening_from..].contains('[') && !pair[after_host..].contains(']')
}

/// `validateFlexVolumeSource`: a driver, and no option in a Kubernetes
/// namespace (upstream goes through a Go map; here by key).
fn flex_volume(source: &Value, at: &str, causes: &mut Vec<Cause>) {
    required(source, at, "driver", causes);
    let mut keys: Vec<&String> = source
        .get("options")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|options| options.keys())
        .collect();
    keys.sort();
    for key in keys {
        let namespace = key.split_once('/').map_or(key.as_str(), |(ns, _)| ns);
        let normalized = format!(".{}", namespace.to_lowercase());
        if normalized.ends_with(".kubernetes.io") || normalized.ends_with(".k8s.io") {
            causes.push(names::invalid(
                &format!("{at}.options[{key}]"),
                key,
                RESERVED_OPTION.into(),
            ));
        }
    }
}

/// `validateAzureDisk`: a disk name and URI, a supported caching mode and
/// kind, and a URI of the kind's form.
fn azure_disk(source: &Value, at: &str, causes: &mut Vec<Cause>) {
    required(source, at, "diskName", causes);
    required(source, at, "diskURI", causes);
    if let Some(mode) = set(source, "cachingMode").and_then(Value::as_str)
        && !CACHING_MODES.contains(&mode)
    {
        causes.push(Cause::not_supported(
            &format!("{at}.cachingMode"),
            mode,
            &CACHING_MODES,
        ));
    }
    let kind = set(source, "kind").and_then(Value::as_str);
    if let Some(kind) = kind
        && !DISK_KINDS.contains(&kind)
    {
        causes.push(Cause::not_supported(
            &format!("{at}.kind"),
            kind,
            &DISK_KINDS,
        ));
    }
    let uri = text(source, "/diskURI");
    let uri_at = format!("{at}.diskURI");
    match kind {
        Some("Managed") if !uri.starts_with("/subscriptions/") => {
            causes.push(Cause::not_supported(
                &uri_at,
                uri,
                &["/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"],
            ));
        }
        Some(kind) if kind != "Managed" && !uri.starts_with("https://") => {
            causes.push(Cause::not_supported(
                &uri_at,
                uri,
                &["https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"],
            ));
        }
        _ => {}
    }
}

/// `validateISCSIVolumeSource`: a target portal, an IQN of a known
/// format, a LUN of 0 to 255, a secret for CHAP, an initiator name of a
/// known format.
fn iscsi(source: &Value, at: &str, causes: &mut Vec<Cause>) {
    required(source, at, "targetPortal", causes);
    let iqn = text(source, "/iqn");
    let iqn_at = format!("{at}.iqn");
    if iqn.is_empty() {
        causes.push(Cause::required(&iqn_at, ""));
    } else if !iscsi_prefixed(iqn) {
        causes.push(names::invalid(&iqn_at, iqn, ISCSI_PREFIX.into()));
    } else if !storage::iscsi_name_valid(iqn) {
        causes.push(names::invalid(&iqn_at, iqn, "must be valid format".into()));
    }
    let lun = source["lun"].as_i64().unwrap_or(0);
    if !(0..=255).contains(&lun) {
        causes.push(Cause::invalid_number(&format!("{at}.lun"), lun, LUN));
    }
    let chap = ["discoveryCHAPAuth", "sessionCHAPAuth"]
        .iter()
        .any(|field| source[field].as_bool() == Some(true));
    if chap && set(source, "secretRef").is_none() {
        causes.push(Cause::required(&format!("{at}.secretRef"), ""));
    }
    if let Some(initiator) = set(source, "initiatorName").and_then(Value::as_str) {
        let field = format!("{at}.initiatorname");
        if !iscsi_prefixed(initiator) {
            causes.push(names::invalid(&field, initiator, ISCSI_PREFIX.into()));
        } else if !storage::iscsi_name_valid(initiator) {
            causes.push(names::invalid(
                &field,
                initiator,
                "must be valid format".into(),
            ));
        }
    }
}

/// Whether an iSCSI name starts as one of the known formats does.
fn iscsi_prefixed(name: &str) -> bool {
    ["iqn", "eui", "naa"].iter().any(|p| name.starts_with(p))
}

/// `validateFCVolumeSource`: target WWNs (with a LUN of 0 to 255) or
/// WWIDs, not both.
fn fc(source: &Value, at: &str, causes: &mut Vec<Cause>) {
    let wwns = strings(source.get("targetWWNs"));
    let wwids = items(source.get("wwids"));
    let wwns_at = format!("{at}.targetWWNs");
    if wwns.is_empty() && wwids.is_empty() {
        causes.push(Cause::required(
            &wwns_at,
            "must specify either targetWWNs or wwids, but not both",
        ));
    }
    if !wwns.is_empty() && !wwids.is_empty() {
        causes.push(invalid_list(
            &wwns_at,
            &wwns,
            "targetWWNs and wwids can not be specified simultaneously",
        ));
    }
    if !wwns.is_empty() {
        let lun_at = format!("{at}.lun");
        match set(source, "lun").and_then(Value::as_i64) {
            None => causes.push(Cause::required(
                &lun_at,
                "lun is required if targetWWNs is specified",
            )),
            Some(lun) if !(0..=255).contains(&lun) => {
                causes.push(Cause::invalid_number(&lun_at, lun, LUN));
            }
            Some(_) => {}
        }
    }
}

/// `validateStorageOSVolumeSource`: a volume name and namespace that are
/// RFC 1123 labels, and a named secret.
fn storageos(source: &Value, at: &str, causes: &mut Vec<Cause>) {
    let name = text(source, "/volumeName");
    if name.is_empty() {
        causes.push(Cause::required(&format!("{at}.volumeName"), ""));
    } else {
        dns1123_label(name, &format!("{at}.volumeName"), causes);
    }
    let namespace = text(source, "/volumeNamespace");
    if !namespace.is_empty() {
        dns1123_label(namespace, &format!("{at}.volumeNamespace"), causes);
    }
    secret_ref_name(source, at, causes);
}

/// `ValidateDNS1123Label`.
fn dns1123_label(value: &str, at: &str, causes: &mut Vec<Cause>) {
    for problem in names::dns1123_label(value) {
        causes.push(names::invalid(at, value, problem));
    }
}

/// `validateCSIVolumeSource`: a driver name (`ValidateCSIDriverName`), and
/// a node publish secret's name, a DNS subdomain reported at `csi.name`.
fn csi(source: &Value, at: &str, causes: &mut Vec<Cause>) {
    storage::csi_driver_name(text(source, "/driver"), &format!("{at}.driver"), causes);
    if let Some(secret) = set(source, "nodePublishSecretRef") {
        let name = text(secret, "/name");
        if name.is_empty() {
            causes.push(Cause::required(
                &format!("{at}.nodePublishSecretRef.name"),
                "",
            ));
        } else {
            for problem in names::dns1123_subdomain(name) {
                causes.push(names::invalid(&format!("{at}.name"), name, problem));
            }
        }
    }
}

/// `validateEphemeralVolumeSource`: a claim template
/// (`ValidatePersistentVolumeClaimTemplate`) whose metadata has only
/// labels and annotations (`ValidateTemplateObjectMeta`) and whose spec
/// is a claim's (`validation/storage.rs`, its paths put under the
/// template's).
fn ephemeral(source: &Value, at: &str, causes: &mut Vec<Cause>) {
    let template_at = format!("{at}.volumeClaimTemplate");
    let Some(template) = set(source, "volumeClaimTemplate") else {
        causes.push(Cause::required(&template_at, ""));
        return;
    };
    template_metadata(
        template.get("metadata").unwrap_or(&Value::Null),
        &format!("{template_at}.metadata"),
        causes,
    );
    let mut claim = Vec::new();
    storage::validate("PersistentVolumeClaim", template, None, &mut claim);
    for mut cause in claim {
        cause.field = format!("{template_at}.{}", cause.field);
        causes.push(cause);
    }
}

/// `ValidateTemplateObjectMeta`: annotations (`ValidateAnnotations`: keys
/// qualified names whatever their case, within the total size), labels,
/// and no other field set (`validateFieldAllowList`: `cannot be set`).
fn template_metadata(meta: &Value, at: &str, causes: &mut Vec<Cause>) {
    let annotations_at = format!("{at}.annotations");
    let mut total = 0;
    let annotations = meta.get("annotations").and_then(Value::as_object);
    for (key, value) in annotations.into_iter().flatten() {
        for problem in names::qualified_name(&key.to_lowercase()) {
            causes.push(names::invalid(&annotations_at, key, problem));
        }
        total += key.len() + value.as_str().unwrap_or_default().len();
    }
    if total > ANNOTATIONS_LIMIT {
        causes.push(Cause::too_long(&annotations_at, ANNOTATIONS_LIMIT));
    }
    labels(meta.get("labels"), &format!("{at}.labels"), causes);
    for (field, shown) in TEMPLATE_META_FIELDS {
        let written = match meta.get(field) {
            None | Some(Value::Null) => false,
            Some(Value::String(value)) => !value.is_empty(),
            // `generation` is a number, zero when unset; the grace
            // period a pointer, set even at zero.
            Some(Value::Number(number)) => field != "generation" || number.as_i64() != Some(0),
            Some(_) => true,
        };
        if written {
            causes.push(Cause::forbidden(&format!("{at}.{shown}"), "cannot be set"));
        }
    }
}

/// `validateProjectedVolumeSource` and `validateProjectionSources`: a
/// default mode, and each source of at most one kind: a Secret's or
/// ConfigMap's name and items, downward API files, a service account
/// token of 10 minutes to 2^32 seconds with a path (reported at
/// `projected.path`); the paths of items and files once across sources.
fn projected(source: &Value, at: &str, causes: &mut Vec<Cause>) {
    file_mode(source, "defaultMode", at, causes);
    let mut paths = Vec::new();
    for (i, projection) in items(source.get("sources")).iter().enumerate() {
        let source_at = format!("{at}.sources[{i}]");
        let mut kinds = 0;
        for kind in ["secret", "configMap"] {
            let Some(object) = set(projection, kind) else {
                continue;
            };
            kinds += 1;
            let kind_at = format!("{source_at}.{kind}");
            required(object, &kind_at, "name", causes);
            for (j, item) in items(object.get("items")).iter().enumerate() {
                key_to_path(item, &format!("{kind_at}.items[{j}]"), causes);
                once(
                    text(item, "/path"),
                    text(object, "/name"),
                    &mut paths,
                    at,
                    causes,
                );
            }
        }
        if let Some(downward) = set(projection, "downwardAPI") {
            kinds += 1;
            let kind_at = format!("{source_at}.downwardAPI");
            for file in items(downward.get("items")) {
                downward_api_file(file, &kind_at, causes);
                let path = text(file, "/path");
                once(path, path, &mut paths, at, causes);
            }
        }
        if let Some(token) = set(projection, "serviceAccountToken") {
            kinds += 1;
            service_account_token(token, &source_at, at, causes);
        }
        if kinds > 1 {
            causes.push(Cause::forbidden(
                &source_at,
                "may not specify more than 1 volume type per source",
            ));
        }
    }
}

/// A projected item's `path` among the `paths` taken before it: a second
/// one is refused at the volume `at`, showing `shown` (upstream shows a
/// Secret's or ConfigMap's name there, a file's path).
fn once<'v>(
    path: &'v str,
    shown: &str,
    paths: &mut Vec<&'v str>,
    at: &str,
    causes: &mut Vec<Cause>,
) {
    if path.is_empty() {
        return;
    }
    if paths.contains(&path) {
        causes.push(names::invalid(
            at,
            shown,
            "conflicting duplicate paths".into(),
        ));
    } else {
        paths.push(path);
    }
}

/// A projected service account token of the source at `source_at`: 10
/// minutes to 2^32 seconds, and a path, which upstream reports at the
/// volume's `at` (`projected.path`); a Pod's token path is local.
fn service_account_token(token: &Value, source_at: &str, at: &str, causes: &mut Vec<Cause>) {
    let seconds_at = format!("{source_at}.serviceAccountToken.expirationSeconds");
    let seconds = token["expirationSeconds"].as_i64().unwrap_or(0);
    if seconds < 10 * 60 {
        causes.push(Cause::invalid_number(
            &seconds_at,
            seconds,
            "may not specify a duration less than 10 minutes",
        ));
    }
    if seconds > 1 << 32 {
        causes.push(Cause::invalid_number(
            &seconds_at,
            seconds,
            "may not specify a duration larger than 2^32 seconds",
        ));
    }
    let path = text(token, "/path");
    let path_at = format!("{at}.path");
    if path.is_empty() {
        causes.push(Cause::required(&path_at, ""));
    } else {
        local_non_reserved_path(path, &path_at, causes);
    }
}

/// `validateDownwardAPIVolumeFile` of `file`, reported at `at` (the
/// volume or projection, not the item, as upstream does): a local path,
/// exactly one of a pod field and a container resource, a file mode.
fn downward_api_file(file: &Value, at: &str, causes: &mut Vec<Cause>) {
    let path = text(file, "/path");
    let path_at = format!("{at}.path");
    if path.is_empty() {
        causes.push(Cause::required(&path_at, ""));
    }
    local_non_reserved_path(path, &path_at, causes);
    match (set(file, "fieldRef"), set(file, "resourceFieldRef")) {
        (Some(field_ref), resource_ref) => {
            env::object_field(
                field_ref,
                &format!("{at}.fieldRef"),
                &VOLUME_FIELD_PATHS,
                causes,
            );
            if resource_ref.is_some() {
                causes.push(names::invalid(
                    at,
                    "resource",
                    "fieldRef and resourceFieldRef can not be specified simultaneously".into(),
                ));
            }
        }
        (None, Some(resource_ref)) => {
            env::resource_field(
                resource_ref,
                &format!("{at}.resourceFieldRef"),
                true,
                causes,
            );
        }
        (None, None) => causes.push(Cause::required(
            at,
            "one of fieldRef and resourceFieldRef is required",
        )),
    }
    file_mode(file, "mode", at, causes);
}

/// A ConfigMap or Secret volume: its object's name (in `name_field`), its
/// default mode, and each item (`validateKeyToPath`).
fn projected_keys(source: &Value, name_field: &str, at: &str, causes: &mut Vec<Cause>) {
    required(source, at, name_field, causes);
    file_mode(source, "defaultMode", at, causes);
    for (i, item) in items(source.get("items")).iter().enumerate() {
        key_to_path(item, &format!("{at}.items[{i}]"), causes);
    }
}

/// `validateKeyToPath`: a key, a local path not starting with `..`, a
/// file mode.
fn key_to_path(item: &Value, at: &str, causes: &mut Vec<Cause>) {
    required(item, at, "key", causes);
    let item_path = text(item, "/path");
    let path_at = format!("{at}.path");
    if item_path.is_empty() {
        causes.push(Cause::required(&path_at, ""));
    }
    local_non_reserved_path(item_path, &path_at, causes);
    file_mode(item, "mode", at, causes);
}

/// A file mode `field` of `object`, when set: 0 to 0777.
fn file_mode(object: &Value, field: &str, at: &str, causes: &mut Vec<Cause>) {
    if let Some(mode) = object[field].as_i64()
        && !(0..=0o777).contains(&mode)
    {
        causes.push(Cause::invalid_number(
            &format!("{at}.{field}"),
            mode,
            FILE_MODE,
        ));
    }
}

/// `validateLocalDescendingPath`: relative, no `..` element.
pub(super) fn local_descending_path(target: &str, at: &str, causes: &mut Vec<Cause>) {
    if target.starts_with('/') {
        causes.push(names::invalid(at, target, "must be a relative path".into()));
    }
    if has_backsteps(target) {
        causes.push(backsteps(at, target));
    }
}

/// `validateLocalNonReservedPath`: a local descending path not starting
/// with `..`.
fn local_non_reserved_path(target: &str, at: &str, causes: &mut Vec<Cause>) {
    local_descending_path(target, at, causes);
    if target.starts_with("..") && !target.starts_with("../") {
        causes.push(names::invalid(
            at,
            target,
            "must not start with '..'".into(),
        ));
    }
}

/// Whether `target` has a `..` element (`validatePathNoBacksteps`).
fn has_backsteps(target: &str) -> bool {
    target.split('/').any(|part| part == "..")
}

fn backsteps(at: &str, target: &str) -> Cause {
    names::invalid(at, target, "must not contain '..'".into())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(kind: &str, source: Value) -> Vec<String> {
        let mut causes = Vec::new();
        pod_volume(kind, &source, "spec.volumes[0]", &mut causes);
        causes
            .iter()
            .map(|c| format!("{}: {}", c.field, c.body))
            .collect()
    }

    #[test]
    fn config_map_and_secret_volumes_need_a_name_modes_and_item_paths() {
        let at = "spec.volumes[0].configMap";
        assert_eq!(
            messages(
                "configMap",
                json!({"defaultMode": 1000, "items": [
                    {"path": "/etc/x", "mode": -1},
                    {"key": "k", "path": "a/../b"},
                    {"key": "k", "path": "..data"},
                    {"key": "k"},
                ]})
            ),
            [
                format!("{at}.name: Required value"),
                format!(
                    "{at}.defaultMode: Invalid value: 1000: must be a number between 0 and 0777 (octal), both inclusive"
                ),
                format!("{at}.items[0].key: Required value"),
                format!("{at}.items[0].path: Invalid value: \"/etc/x\": must be a relative path"),
                format!(
                    "{at}.items[0].mode: Invalid value: -1: must be a number between 0 and 0777 (octal), both inclusive"
                ),
                format!("{at}.items[1].path: Invalid value: \"a/../b\": must not contain '..'"),
                format!("{at}.items[2].path: Invalid value: \"..data\": must not start with '..'"),
                format!("{at}.items[3].path: Required value"),
            ]
        );
        assert_eq!(
            messages(
                "secret",
                json!({"defaultMode": 420, "items": [{"key": "tls.crt", "path": "cert"}]})
            ),
            ["spec.volumes[0].secret.secretName: Required value"]
        );
        assert!(messages("configMap", json!({"name": "app", "defaultMode": 0o644})).is_empty());
    }

    #[test]
    fn claims_and_host_paths_are_named() {
        assert_eq!(
            messages("persistentVolumeClaim", json!({"readOnly": true})),
            ["spec.volumes[0].persistentVolumeClaim.claimName: Required value"]
        );
        assert_eq!(
            messages("hostPath", json!({"path": "/var/../etc"})),
            [
                "spec.volumes[0].hostPath.path: Invalid value: \"/var/../etc\": must not contain '..'"
            ]
        );
        assert_eq!(
            messages("hostPath", json!({})),
            ["spec.volumes[0].hostPath.path: Required value"]
        );
    }

    #[test]
    fn host_paths_have_a_known_type_and_empty_dirs_no_negative_limit() {
        assert_eq!(
            messages("hostPath", json!({"path": "/data", "type": "Folder"})),
            [
                "spec.volumes[0].hostPath.type: Unsupported value: \"Folder\": supported values: \"\", \"BlockDevice\", \"CharDevice\", \"Directory\", \"DirectoryOrCreate\", \"File\", \"FileOrCreate\", \"Socket\""
            ]
        );
        assert!(messages("hostPath", json!({"path": "/data", "type": "Directory"})).is_empty());
        // The path check alone leaves the type to `host_path`.
        let mut causes = Vec::new();
        check(
            "hostPath",
            &json!({"path": "/data", "type": "Folder"}),
            "spec",
            &mut causes,
        );
        assert!(causes.is_empty());
        assert_eq!(
            messages("emptyDir", json!({"sizeLimit": "-1Gi"})),
            [
                "spec.volumes[0].emptyDir.sizeLimit: Forbidden: SizeLimit field must be a valid resource quantity"
            ]
        );
        assert!(messages("emptyDir", json!({"sizeLimit": "1Gi", "medium": "Memory"})).is_empty());
    }

    #[test]
    fn nfs_and_git_volumes_name_their_server_repository_and_paths() {
        assert_eq!(
            messages("nfs", json!({})),
            [
                "spec.volumes[0].nfs.server: Required value",
                "spec.volumes[0].nfs.path: Required value",
                "spec.volumes[0].nfs.path: Invalid value: \"\": must be an absolute path",
            ]
        );
        assert_eq!(
            messages("nfs", json!({"server": "nfs.local", "path": "exports"})),
            ["spec.volumes[0].nfs.path: Invalid value: \"exports\": must be an absolute path"]
        );
        assert_eq!(
            messages("gitRepo", json!({"directory": "/x/../y"})),
            [
                "spec.volumes[0].gitRepo.repository: Required value",
                "spec.volumes[0].gitRepo.directory: Invalid value: \"/x/../y\": must be a relative path",
                "spec.volumes[0].gitRepo.directory: Invalid value: \"/x/../y\": must not contain '..'",
            ]
        );
    }

    #[test]
    fn downward_api_files_are_reported_at_the_volume() {
        let field = |path: &str| json!({"apiVersion": "v1", "fieldPath": path});
        let supported = "supported values: \"metadata.annotations\", \"metadata.labels\", \"metadata.name\", \"metadata.namespace\", \"metadata.uid\"";
        let at = "spec.volumes[0].downwardAPI";
        assert_eq!(
            messages(
                "downwardAPI",
                json!({"defaultMode": 512, "items": [
                    {"fieldRef": field("spec.nodeName")},
                    {"path": "a", "fieldRef": {"apiVersion": "v2", "fieldPath": "metadata.name"}},
                    {"path": "b"},
                    {"path": "c", "fieldRef": field("metadata.name"),
                        "resourceFieldRef": {"containerName": "app", "resource": "limits.cpu"}},
                    {"path": "d", "resourceFieldRef": {"resource": "limits.cpu"}},
                    {"path": "e", "resourceFieldRef": {"containerName": "app", "resource": "limits.cpu", "divisor": "2"}},
                    {"path": "f", "resourceFieldRef": {"containerName": "app", "resource": "limits.gpu"}},
                    {"path": "g", "fieldRef": field("spec.host")},
                    {"path": "h", "fieldRef": field("metadata.uid['x']")},
                    {"path": "i", "fieldRef": field("metadata.labels['app']"), "mode": 1024},
                ]})
            ),
            [
                format!(
                    "{at}.defaultMode: Invalid value: 512: must be a number between 0 and 0777 (octal), both inclusive"
                ),
                format!("{at}.path: Required value"),
                format!(
                    "{at}.fieldRef.fieldPath: Unsupported value: \"spec.nodeName\": {supported}"
                ),
                format!(
                    "{at}.fieldRef.fieldPath: Invalid value: \"metadata.name\": error converting fieldPath: unsupported pod version: v2"
                ),
                format!("{at}: Required value: one of fieldRef and resourceFieldRef is required"),
                format!(
                    "{at}: Invalid value: \"resource\": fieldRef and resourceFieldRef can not be specified simultaneously"
                ),
                format!("{at}.resourceFieldRef.containerName: Required value"),
                format!(
                    "{at}.resourceFieldRef.divisor: Invalid value: \"limits.cpu\": only divisor's values 1m and 1 are supported with the cpu resource"
                ),
                format!(
                    "{at}.resourceFieldRef.resource: Unsupported value: \"limits.gpu\": supported values: \"limits.cpu\", \"limits.ephemeral-storage\", \"limits.memory\", \"requests.cpu\", \"requests.ephemeral-storage\", \"requests.memory\""
                ),
                format!(
                    "{at}.fieldRef.fieldPath: Unsupported value: \"spec.nodeName\": {supported}"
                ),
                format!(
                    "{at}.fieldRef.fieldPath: Invalid value: \"metadata.uid['x']\": error converting fieldPath: field label does not support subscript: metadata.uid['x']"
                ),
                format!(
                    "{at}.mode: Invalid value: 1024: must be a number between 0 and 0777 (octal), both inclusive"
                ),
            ]
        );
        let bad_key = messages(
            "downwardAPI",
            json!({"items": [{"path": "a", "fieldRef": field("metadata.annotations['Bad Key']")},
                {"path": "b", "resourceFieldRef": {"containerName": "app", "resource": "requests.memory", "divisor": "2Ki"}},
                {"path": "c", "resourceFieldRef": {"containerName": "app", "resource": "requests.memory", "divisor": "1Mi"}}]}),
        );
        assert_eq!(
            super::super::fields_of(&bad_key),
            [
                format!("{at}.fieldRef").as_str(),
                &format!("{at}.resourceFieldRef.divisor")
            ]
        );
        assert!(bad_key[0].starts_with(&format!("{at}.fieldRef: Invalid value: \"bad key\": ")));
        assert!(bad_key[1].ends_with(
            "Invalid value: \"requests.memory\": only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the memory resource"
        ));
    }

    #[test]
    fn projections_are_of_one_kind_with_paths_once_and_tokens_of_a_sane_life() {
        let at = "spec.volumes[0].projected";
        let name =
            |path: &str| json!({"apiVersion": "v1", "fieldPath": "metadata.name", "path": path});
        assert_eq!(
            messages(
                "projected",
                json!({"sources": [
                    {"secret": {"items": [{"key": "k", "path": "p"}]}},
                    {"configMap": {"name": "cm", "items": [{"key": "k", "path": "p"}]},
                     "downwardAPI": {"items": [{"path": "p", "fieldRef": name("p")}]}},
                    {"serviceAccountToken": {"expirationSeconds": 60}},
                    {"serviceAccountToken": {"path": "../token", "expirationSeconds": 5_000_000_000_i64}},
                    {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}},
                    {},
                ]})
            ),
            [
                format!("{at}.sources[0].secret.name: Required value"),
                format!("{at}: Invalid value: \"cm\": conflicting duplicate paths"),
                format!("{at}: Invalid value: \"p\": conflicting duplicate paths"),
                format!(
                    "{at}.sources[1]: Forbidden: may not specify more than 1 volume type per source"
                ),
                format!(
                    "{at}.sources[2].serviceAccountToken.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes"
                ),
                format!("{at}.path: Required value"),
                format!(
                    "{at}.sources[3].serviceAccountToken.expirationSeconds: Invalid value: 5000000000: may not specify a duration larger than 2^32 seconds"
                ),
                format!("{at}.path: Invalid value: \"../token\": must not contain '..'"),
            ]
        );
    }

    #[test]
    fn csi_volumes_name_a_driver_and_their_secret() {
        let found = messages(
            "csi",
            json!({"driver": "", "nodePublishSecretRef": {"name": "Bad_Name"}}),
        );
        assert_eq!(
            super::super::fields_of(&found),
            [
                "spec.volumes[0].csi.driver",
                "spec.volumes[0].csi.driver",
                "spec.volumes[0].csi.name"
            ]
        );
        assert_eq!(found[0], "spec.volumes[0].csi.driver: Required value");
        assert!(found[2].starts_with(
            "spec.volumes[0].csi.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"
        ));
        assert_eq!(
            messages(
                "csi",
                json!({"driver": format!("{}.Example.com", "d".repeat(60)), "nodePublishSecretRef": {}})
            ),
            [
                "spec.volumes[0].csi.driver: Too long: may not be more than 63 bytes",
                "spec.volumes[0].csi.nodePublishSecretRef.name: Required value",
            ]
        );
        assert!(messages("csi", json!({"driver": "csi.Example.com"})).is_empty());
    }

    #[test]
    fn ephemeral_volumes_have_a_claim_template_with_only_labels_and_annotations() {
        let at = "spec.volumes[0].ephemeral.volumeClaimTemplate";
        assert_eq!(
            messages("ephemeral", json!({})),
            [format!("{at}: Required value")]
        );
        let found = messages(
            "ephemeral",
            json!({"volumeClaimTemplate": {
                "metadata": {"name": "scratch", "uid": "u-1", "finalizers": [],
                    "generation": 0, "deletionGracePeriodSeconds": 0,
                    "annotations": {"a b": "x"}, "labels": {"tier": "not ok!"}, "creationTimestamp": null},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}),
        );
        assert_eq!(
            super::super::fields_of(&found),
            [
                format!("{at}.metadata.annotations").as_str(),
                &format!("{at}.metadata.labels"),
                &format!("{at}.metadata.name"),
                &format!("{at}.metadata.uID"),
                &format!("{at}.metadata.deletionGracePeriodSeconds"),
                &format!("{at}.metadata.finalizers"),
            ]
        );
        assert_eq!(
            found[2..],
            [
                format!("{at}.metadata.name: Forbidden: cannot be set"),
                format!("{at}.metadata.uID: Forbidden: cannot be set"),
                format!("{at}.metadata.deletionGracePeriodSeconds: Forbidden: cannot be set"),
                format!("{at}.metadata.finalizers: Forbidden: cannot be set"),
            ]
        );
        assert_eq!(
            messages(
                "ephemeral",
                json!({"volumeClaimTemplate": {"spec": {"volumeMode": "Disk"}}})
            ),
            [
                format!(
                    "{at}.spec.accessModes: Required value: at least 1 access mode is required"
                ),
                format!("{at}.spec.resources[storage]: Required value"),
                format!(
                    "{at}.spec.volumeMode: Unsupported value: \"Disk\": supported values: \"Block\", \"Filesystem\""
                ),
            ]
        );
    }

    #[test]
    fn block_and_cloud_volumes_name_their_targets() {
        let at = "spec.volumes[0]";
        assert_eq!(
            messages(
                "iscsi",
                json!({"iqn": "iqn.bad", "lun": 300, "sessionCHAPAuth": true, "initiatorName": "host-1"})
            ),
            [
                format!("{at}.iscsi.targetPortal: Required value"),
                format!("{at}.iscsi.iqn: Invalid value: \"iqn.bad\": must be valid format"),
                format!("{at}.iscsi.lun: Invalid value: 300: must be between 0 and 255, inclusive"),
                format!("{at}.iscsi.secretRef: Required value"),
                format!(
                    "{at}.iscsi.initiatorname: Invalid value: \"host-1\": must be valid format starting with iqn, eui, or naa"
                ),
            ]
        );
        assert!(
            messages(
                "iscsi",
                json!({"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example:storage", "lun": 0})
            )
            .is_empty()
        );
        assert_eq!(
            messages("fc", json!({"targetWWNs": ["500a0982"], "wwids": ["w"]})),
            [
                format!(
                    "{at}.fc.targetWWNs: Invalid value: []string{{\"500a0982\"}}: targetWWNs and wwids can not be specified simultaneously"
                ),
                format!("{at}.fc.lun: Required value: lun is required if targetWWNs is specified"),
            ]
        );
        assert_eq!(
            messages("fc", json!({})),
            [format!(
                "{at}.fc.targetWWNs: Required value: must specify either targetWWNs or wwids, but not both"
            )]
        );
        assert_eq!(
            messages(
                "azureDisk",
                json!({"diskName": "d", "diskURI": "/subscriptions/x", "cachingMode": "Sometimes", "kind": "Shared"})
            ),
            [
                format!(
                    "{at}.azureDisk.cachingMode: Unsupported value: \"Sometimes\": supported values: \"None\", \"ReadOnly\", \"ReadWrite\""
                ),
                format!(
                    "{at}.azureDisk.diskURI: Unsupported value: \"/subscriptions/x\": supported values: \"https://{{account-name}}.blob.core.windows.net/{{container-name}}/{{disk-name}}.vhd\""
                ),
            ]
        );
        assert_eq!(
            messages("gcePersistentDisk", json!({"partition": 256})),
            [
                format!("{at}.persistentDisk.pdName: Required value"),
                format!(
                    "{at}.persistentDisk.partition: Invalid value: 256: must be between 1 and 255, inclusive"
                ),
            ]
        );
        assert_eq!(
            messages("cinder", json!({"volumeID": "v", "secretRef": {}})),
            [format!("{at}.cinder.secretRef.name: Required value")]
        );
        assert_eq!(
            messages("rbd", json!({"monitors": []})),
            [
                format!("{at}.rbd.monitors: Required value"),
                format!("{at}.rbd.image: Required value"),
            ]
        );
    }

    #[test]
    fn file_and_plugin_volumes_name_their_servers_and_options() {
        let at = "spec.volumes[0]";
        assert_eq!(
            messages(
                "quobyte",
                json!({"registry": "reg:7861,[::1]:7861,reg", "volume": "v"})
            ),
            [format!(
                "{at}.quobyte.registry: Invalid value: \"reg:7861,[::1]:7861,reg\": must be a host:port pair or multiple pairs separated by commas"
            )]
        );
        assert_eq!(
            messages(
                "quobyte",
                json!({"registry": "reg:7861", "tenant": "t".repeat(65)})
            ),
            [
                format!(
                    "{at}.quobyte.tenant: Required value: must be a UUID and may not exceed a length of 64 characters"
                ),
                format!("{at}.quobyte.volume: Required value"),
            ]
        );
        assert_eq!(
            messages(
                "flexVolume",
                json!({"options": {"Example.K8s.io/size": "1", "kubernetes.io": "x", "mine/size": "2"}})
            ),
            [
                format!("{at}.flexVolume.driver: Required value"),
                format!(
                    "{at}.flexVolume.options[Example.K8s.io/size]: Invalid value: \"Example.K8s.io/size\": kubernetes.io and k8s.io namespaces are reserved"
                ),
                format!(
                    "{at}.flexVolume.options[kubernetes.io]: Invalid value: \"kubernetes.io\": kubernetes.io and k8s.io namespaces are reserved"
                ),
            ]
        );
        assert_eq!(
            messages("flocker", json!({"datasetName": "a/b", "datasetUUID": "u"})),
            [
                format!(
                    "{at}.flocker: Invalid value: \"resource\": datasetName and datasetUUID can not be specified simultaneously"
                ),
                format!("{at}.flocker.datasetName: Invalid value: \"a/b\": must not contain '/'"),
            ]
        );
        assert_eq!(
            messages("storageos", json!({"volumeNamespace": "Team_A"}))[0],
            format!("{at}.storageos.volumeName: Required value")
        );
        assert_eq!(
            messages("scaleIO", json!({"system": "s"})),
            [
                format!("{at}.scaleIO.gateway: Required value"),
                format!("{at}.scaleIO.volumeName: Required value"),
            ]
        );
        for (kind, field) in [
            ("glusterfs", "endpoints"),
            ("cephfs", "monitors"),
            ("azureFile", "secretName"),
            ("vsphereVolume", "volumePath"),
            ("photonPersistentDisk", "pdID"),
            ("portworxVolume", "volumeID"),
            ("awsElasticBlockStore", "volumeID"),
        ] {
            assert_eq!(
                messages(kind, json!({}))[0],
                format!("{at}.{kind}.{field}: Required value")
            );
        }
    }

    #[test]
    fn a_defaulted_pod_with_valid_volumes_of_each_common_kind_passes() {
        let mut pod = json!({"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "app", "image": "nginx:1.27"}],
        "volumes": [
            {"name": "cache", "emptyDir": {"sizeLimit": "1Gi"}},
            {"name": "host", "hostPath": {"path": "/var/log"}},
            {"name": "info", "downwardAPI": {"items": [
                {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
                {"path": "cpu", "resourceFieldRef": {"containerName": "app", "resource": "limits.cpu", "divisor": "1m"}}]}},
            {"name": "all", "projected": {"sources": [
                {"serviceAccountToken": {"path": "token"}},
                {"configMap": {"name": "ca", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"fieldPath": "metadata.namespace"}}]}}]}},
            {"name": "secrets", "csi": {"driver": "secrets-store.csi.k8s.io", "nodePublishSecretRef": {"name": "creds"}}},
            {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"metadata": {"labels": {"app": "p"}},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}},
            {"name": "share", "nfs": {"server": "nfs.local", "path": "/exports"}},
            {"name": "disk", "azureDisk": {"diskName": "d", "diskURI": "https://a.blob.core.windows.net/c/d.vhd"}},
        ]}});
        crate::store::defaults::apply("", "Pod", &mut pod);
        assert_eq!(super::super::causes("", "Pod", &pod), []);
    }
}
