//! A Pod volume's source, as `validateVolumeSource` checks the common
//! ones: a ConfigMap's or Secret's name, file modes and items
//! (`validateKeyToPath`: a key, and a relative path without `..`), a
//! PersistentVolumeClaim's claim name and a host path without `..`.

use serde_json::Value;

use super::{Cause, items, names, text};

/// `fileModeErrorMsg`.
const FILE_MODE: &str = "must be a number between 0 and 0777 (octal), both inclusive";

/// The source `kind` (`configMap`, `secret`, ...) of the volume at `path`.
pub(super) fn check(kind: &str, source: &Value, path: &str, causes: &mut Vec<Cause>) {
    let at = format!("{path}.{kind}");
    match kind {
        "configMap" => projected_keys(source, "name", &at, causes),
        "secret" => projected_keys(source, "secretName", &at, causes),
        "persistentVolumeClaim" if text(source, "/claimName").is_empty() => {
            causes.push(Cause::required(&format!("{at}.claimName"), ""));
        }
        "hostPath" => {
            let host_path = text(source, "/path");
            let field = format!("{at}.path");
            if host_path.is_empty() {
                causes.push(Cause::required(&field, ""));
            } else if has_backsteps(host_path) {
                causes.push(backsteps(&field, host_path));
            }
        }
        _ => {}
    }
}

/// A ConfigMap or Secret volume: its object's name (in `name_field`), its
/// default mode, and each item's key, path and mode.
fn projected_keys(source: &Value, name_field: &str, at: &str, causes: &mut Vec<Cause>) {
    if text(source, &format!("/{name_field}")).is_empty() {
        causes.push(Cause::required(&format!("{at}.{name_field}"), ""));
    }
    file_mode(source, "defaultMode", at, causes);
    for (i, item) in items(source.get("items")).iter().enumerate() {
        let item_at = format!("{at}.items[{i}]");
        if text(item, "/key").is_empty() {
            causes.push(Cause::required(&format!("{item_at}.key"), ""));
        }
        let item_path = text(item, "/path");
        let path_at = format!("{item_at}.path");
        if item_path.is_empty() {
            causes.push(Cause::required(&path_at, ""));
        }
        local_non_reserved_path(item_path, &path_at, causes);
        file_mode(item, "mode", &item_at, causes);
    }
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
        check(kind, &source, "spec.volumes[0]", &mut causes);
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
}
