//! A container's volume mounts and volume devices, as kube-apiserver
//! v1.33's `ValidateVolumeMounts` and `ValidateVolumeDevices` check them
//! against the pod spec's valid volumes: each mount names a volume, at a
//! path of its own, not a device's name or path; a sub path (or sub path
//! expression, not both) relative and without `..` (v1.33 lets image
//! volumes have them; with its gate off it drops image volumes anyway,
//! `disabled_fields.rs`); a known mount propagation (`Bidirectional` only in a
//! privileged container) and recursive read-only mode. Each device names
//! a claim or ephemeral volume once, at a path of its own without `..`,
//! not a mount's name or path.
//!
//! As upstream, the sub path, propagation and recursive read-only causes
//! name the list (`volumeMounts.subPath`), not the mount's index.

use serde_json::Value;

use super::volume_source::local_descending_path;
use super::{Cause, items, names, text};

/// The volume mounts of `container` at `path`, mounting the pod spec's
/// valid `volumes` (`ValidateVolumeMounts`).
pub(super) fn volume_mounts(
    container: &Value,
    path: &str,
    volumes: &[&str],
    causes: &mut Vec<Cause>,
) {
    let devices = items(container.get("volumeDevices"));
    let mut paths = Vec::new();
    for (i, mount) in items(container.get("volumeMounts")).iter().enumerate() {
        let at = format!("{path}[{i}]");
        let name = text(mount, "/name");
        if name.is_empty() {
            causes.push(Cause::required(&format!("{at}.name"), ""));
        }
        if !volumes.contains(&name) {
            causes.push(not_found(&format!("{at}.name"), name));
        }
        let mount_path = text(mount, "/mountPath");
        if mount_path.is_empty() {
            causes.push(Cause::required(&format!("{at}.mountPath"), ""));
        }
        if paths.contains(&mount_path) {
            causes.push(names::invalid(
                &format!("{at}.mountPath"),
                mount_path,
                "must be unique".into(),
            ));
        }
        paths.push(mount_path);
        if devices.iter().any(|d| text(d, "/name") == name) {
            causes.push(names::invalid(
                &format!("{at}.name"),
                name,
                "must not already exist in volumeDevices".into(),
            ));
        }
        if devices.iter().any(|d| text(d, "/devicePath") == mount_path) {
            causes.push(names::invalid(
                &format!("{at}.mountPath"),
                mount_path,
                "must not already exist as a path in volumeDevices".into(),
            ));
        }
        let sub_path = text(mount, "/subPath");
        let sub_path_expr = text(mount, "/subPathExpr");
        if !sub_path.is_empty() {
            local_descending_path(sub_path, &format!("{path}.subPath"), causes);
        }
        if !sub_path_expr.is_empty() {
            if !sub_path.is_empty() {
                causes.push(names::invalid(
                    &format!("{at}.subPathExpr"),
                    sub_path_expr,
                    "subPathExpr and subPath are mutually exclusive".into(),
                ));
            }
            local_descending_path(sub_path_expr, &format!("{path}.subPathExpr"), causes);
        }
        mount_propagation(mount, container, path, causes);
        recursive_read_only(mount, path, causes);
    }
}

/// `validateMountPropagation`: a known mode, `Bidirectional` only in a
/// privileged container.
fn mount_propagation(mount: &Value, container: &Value, path: &str, causes: &mut Vec<Cause>) {
    let Some(mode) = mount.get("mountPropagation").and_then(Value::as_str) else {
        return;
    };
    let at = format!("{path}.mountPropagation");
    const MODES: [&str; 3] = ["Bidirectional", "HostToContainer", "None"];
    if !MODES.contains(&mode) {
        causes.push(Cause::not_supported(&at, mode, &MODES));
    }
    let privileged = container
        .pointer("/securityContext/privileged")
        .and_then(Value::as_bool)
        == Some(true);
    if mode == "Bidirectional" && !privileged {
        causes.push(Cause::forbidden(
            &at,
            "Bidirectional mount propagation is available only to privileged containers",
        ));
    }
}

/// `validateMountRecursiveReadOnly`: a known mode; `Enabled` and
/// `IfPossible` only on a read-only mount without propagation.
fn recursive_read_only(mount: &Value, path: &str, causes: &mut Vec<Cause>) {
    let Some(mode) = mount.get("recursiveReadOnly").and_then(Value::as_str) else {
        return;
    };
    let at = format!("{path}.recursiveReadOnly");
    match mode {
        "Disabled" => {}
        "Enabled" | "IfPossible" => {
            if mount.get("readOnly").and_then(Value::as_bool) != Some(true) {
                causes.push(Cause::forbidden(
                    &at,
                    "may only be specified when readOnly is true",
                ));
            }
            if mount
                .get("mountPropagation")
                .and_then(Value::as_str)
                .is_some_and(|p| p != "None")
            {
                causes.push(Cause::forbidden(
                    &at,
                    "may only be specified when mountPropagation is None or not specified",
                ));
            }
        }
        other => causes.push(Cause::not_supported(
            &at,
            other,
            &["Disabled", "Enabled", "IfPossible"],
        )),
    }
}

/// The volume devices of `container` at `path`, on the valid `volumes` of
/// `spec` (`ValidateVolumeDevices`).
pub(super) fn volume_devices(
    spec: &Value,
    container: &Value,
    path: &str,
    volumes: &[&str],
    causes: &mut Vec<Cause>,
) {
    let mounts = items(container.get("volumeMounts"));
    let mut device_names = Vec::new();
    let mut device_paths = Vec::new();
    for (i, device) in items(container.get("volumeDevices")).iter().enumerate() {
        let at = format!("{path}[{i}]");
        let name = text(device, "/name");
        let device_path = text(device, "/devicePath");
        if name.is_empty() {
            causes.push(Cause::required(&format!("{at}.name"), ""));
        }
        if device_names.contains(&name) {
            causes.push(names::invalid(
                &format!("{at}.name"),
                name,
                "must be unique".into(),
            ));
        }
        match source(spec, volumes, name) {
            Some(source)
                if source.get("persistentVolumeClaim").is_none()
                    && source.get("ephemeral").is_none() =>
            {
                causes.push(names::invalid(
                    &format!("{at}.name"),
                    name,
                    "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode".into(),
                ));
            }
            Some(_) => {}
            None => causes.push(not_found(&format!("{at}.name"), name)),
        }
        if device_path.is_empty() {
            causes.push(Cause::required(&format!("{at}.devicePath"), ""));
        }
        if device_paths.contains(&device_path) {
            causes.push(names::invalid(
                &format!("{at}.devicePath"),
                device_path,
                "must be unique".into(),
            ));
        }
        // `validatePathNoBacksteps`, with the devices' own message.
        if !device_path.is_empty() && device_path.split('/').any(|part| part == "..") {
            causes.push(names::invalid(
                &format!("{at}.devicePath"),
                device_path,
                "can not contain backsteps ('..')".into(),
            ));
        } else {
            device_paths.push(device_path);
        }
        if mounts.iter().any(|m| text(m, "/name") == name) {
            causes.push(names::invalid(
                &format!("{at}.name"),
                name,
                "must not already exist in volumeMounts".into(),
            ));
        }
        if mounts.iter().any(|m| text(m, "/mountPath") == device_path) {
            causes.push(names::invalid(
                &format!("{at}.devicePath"),
                device_path,
                "must not already exist as a path in volumeMounts".into(),
            ));
        }
        if !name.is_empty() {
            device_names.push(name);
        }
    }
}

/// The source of the valid volume `name` of `spec`: the volume itself,
/// whose one source member names its type.
fn source<'v>(spec: &'v Value, volumes: &[&str], name: &str) -> Option<&'v Value> {
    if !volumes.contains(&name) {
        return None;
    }
    items(spec.get("volumes"))
        .iter()
        .find(|volume| text(volume, "/name") == name)
}

/// `field.NotFound`.
fn not_found(field: &str, value: &str) -> Cause {
    Cause::new(field, "FieldValueNotFound", format!("Not found: {value:?}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(spec: Value) -> Vec<String> {
        let volumes: Vec<&str> = items(spec.get("volumes"))
            .iter()
            .map(|v| text(v, "/name"))
            .collect();
        let container = &spec["containers"][0];
        let mut causes = Vec::new();
        let at = "spec.containers[0]";
        volume_mounts(
            container,
            &format!("{at}.volumeMounts"),
            &volumes,
            &mut causes,
        );
        volume_devices(
            &spec,
            container,
            &format!("{at}.volumeDevices"),
            &volumes,
            &mut causes,
        );
        causes.iter().map(Cause::message).collect()
    }

    #[test]
    fn mounts_and_devices_name_volumes_of_the_right_kind_at_paths_of_their_own() {
        let spec = json!({
            "volumes": [
                {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
                {"name": "scratch", "ephemeral": {}},
                {"name": "config", "configMap": {"name": "config"}},
            ],
            "containers": [{
                "volumeMounts": [
                    {"name": "config", "mountPath": "/dev/block"},
                    {"name": "data", "mountPath": "/data"},
                ],
                "volumeDevices": [
                    {"name": "scratch", "devicePath": "/dev/xvda"},
                    {"name": "config", "devicePath": "/dev/xvdb"},
                    {"name": "gone", "devicePath": "/dev/../xvdc"},
                    {"name": "scratch", "devicePath": "/dev/block"},
                ],
            }],
        });
        assert_eq!(
            messages(spec),
            [
                "spec.containers[0].volumeMounts[0].name: Invalid value: \"config\": must not already exist in volumeDevices",
                "spec.containers[0].volumeMounts[0].mountPath: Invalid value: \"/dev/block\": must not already exist as a path in volumeDevices",
                "spec.containers[0].volumeDevices[1].name: Invalid value: \"config\": can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode",
                "spec.containers[0].volumeDevices[1].name: Invalid value: \"config\": must not already exist in volumeMounts",
                "spec.containers[0].volumeDevices[2].name: Not found: \"gone\"",
                "spec.containers[0].volumeDevices[2].devicePath: Invalid value: \"/dev/../xvdc\": can not contain backsteps ('..')",
                "spec.containers[0].volumeDevices[3].name: Invalid value: \"scratch\": must be unique",
                "spec.containers[0].volumeDevices[3].devicePath: Invalid value: \"/dev/block\": must not already exist as a path in volumeMounts",
            ]
        );
    }

    #[test]
    fn sub_paths_propagation_and_recursive_read_only_are_checked_where_upstream_names_them() {
        let spec = json!({
            "volumes": [
                {"name": "data", "emptyDir": {}},
            ],
            "containers": [{
                "volumeMounts": [
                    {"name": "data", "mountPath": "/a", "subPath": "/abs", "subPathExpr": "x/../y"},
                    {"name": "data", "mountPath": "/c", "mountPropagation": "Bidirectional"},
                    {"name": "data", "mountPath": "/d", "mountPropagation": "Sideways"},
                    {"name": "data", "mountPath": "/e", "recursiveReadOnly": "Enabled",
                     "mountPropagation": "HostToContainer"},
                    {"name": "data", "mountPath": "/f", "recursiveReadOnly": "Always", "readOnly": true},
                ],
            }],
        });
        assert_eq!(
            messages(spec),
            [
                "spec.containers[0].volumeMounts.subPath: Invalid value: \"/abs\": must be a relative path",
                "spec.containers[0].volumeMounts[0].subPathExpr: Invalid value: \"x/../y\": subPathExpr and subPath are mutually exclusive",
                "spec.containers[0].volumeMounts.subPathExpr: Invalid value: \"x/../y\": must not contain '..'",
                "spec.containers[0].volumeMounts.mountPropagation: Forbidden: Bidirectional mount propagation is available only to privileged containers",
                "spec.containers[0].volumeMounts.mountPropagation: Unsupported value: \"Sideways\": supported values: \"Bidirectional\", \"HostToContainer\", \"None\"",
                "spec.containers[0].volumeMounts.recursiveReadOnly: Forbidden: may only be specified when readOnly is true",
                "spec.containers[0].volumeMounts.recursiveReadOnly: Forbidden: may only be specified when mountPropagation is None or not specified",
                "spec.containers[0].volumeMounts.recursiveReadOnly: Unsupported value: \"Always\": supported values: \"Disabled\", \"Enabled\", \"IfPossible\"",
            ]
        );
        let privileged = json!({
            "volumes": [{"name": "data", "emptyDir": {}}],
            "containers": [{
                "securityContext": {"privileged": true},
                "volumeMounts": [{"name": "data", "mountPath": "/c", "mountPropagation": "Bidirectional"}],
            }],
        });
        assert!(messages(privileged).is_empty());
    }
}
