//! The fields of a workload's spec around its selector and template, as
//! `pkg/apis/apps/validation` checks them, each kind in its own order:
//! counts and durations not negative; a Deployment's strategy (`Recreate`
//! without a rolling update, a rolling update's `maxUnavailable` and
//! `maxSurge` integers or percentages, not both 0, `maxUnavailable` at
//! most 100%) and a progress deadline beyond `minReadySeconds`; a
//! StatefulSet's pod management policy, update strategy and claim
//! retention policy; a DaemonSet's update strategy (exactly one of
//! `maxUnavailable` and `maxSurge` non-zero, each at most 100%).
//!
//! An int-or-string value shows as Go's `%#v` of `intstr.IntOrString`
//! (its `String` method takes a pointer, so the field error prints the
//! struct): `Invalid value: intstr.IntOrString{Type:0, IntVal:0,
//! StrVal:""}`.

use serde_json::Value;

use super::{Cause, names};

/// What a kind checks before its selector and template.
pub(super) fn before_template(kind: &str, spec: &Value, causes: &mut Vec<Cause>) {
    match kind {
        "StatefulSet" => {
            stateful_set_policies(spec, causes);
            for field in ["replicas", "minReadySeconds"] {
                non_negative(spec, field, causes);
            }
            if let Some(start) = spec.pointer("/ordinals/start").and_then(Value::as_i64)
                && start < 0
            {
                causes.push(negative("spec.ordinals.start", start));
            }
        }
        "ReplicaSet" => {
            for field in ["replicas", "minReadySeconds"] {
                non_negative(spec, field, causes);
            }
        }
        "Deployment" => non_negative(spec, "replicas", causes),
        _ => {}
    }
}

/// What a kind checks after its template.
pub(super) fn after_template(kind: &str, spec: &Value, causes: &mut Vec<Cause>) {
    match kind {
        "Deployment" => {
            deployment_strategy(spec, causes);
            non_negative(spec, "minReadySeconds", causes);
            non_negative(spec, "revisionHistoryLimit", causes);
            if let Some(deadline) = spec.get("progressDeadlineSeconds").and_then(Value::as_i64) {
                non_negative(spec, "progressDeadlineSeconds", causes);
                let ready = spec
                    .get("minReadySeconds")
                    .and_then(Value::as_i64)
                    .unwrap_or(0);
                if deadline <= ready {
                    causes.push(Cause::invalid_number(
                        "spec.progressDeadlineSeconds",
                        deadline,
                        "must be greater than minReadySeconds",
                    ));
                }
            }
        }
        "DaemonSet" => {
            for field in ["minReadySeconds", "templateGeneration"] {
                non_negative(spec, field, causes);
            }
            daemon_set_strategy(spec, causes);
            non_negative(spec, "revisionHistoryLimit", causes);
        }
        _ => {}
    }
}

fn negative(field: &str, value: i64) -> Cause {
    Cause::invalid_number(field, value, "must be greater than or equal to 0")
}

/// `ValidateNonnegativeField` of `spec.{field}`, when set.
fn non_negative(spec: &Value, field: &str, causes: &mut Vec<Cause>) {
    if let Some(value) = spec.get(field).and_then(Value::as_i64)
        && value < 0
    {
        causes.push(negative(&format!("spec.{field}"), value));
    }
}

/// An int-or-string as the server reads it: an integer, a string and the
/// percentage it is when it is one.
pub(super) enum IntOrPercent<'v> {
    Int(i64),
    Text(&'v str, Option<i64>),
}

impl<'v> IntOrPercent<'v> {
    pub(super) fn of(value: Option<&'v Value>) -> IntOrPercent<'v> {
        match value {
            Some(Value::String(text)) => {
                let percent = text
                    .strip_suffix('%')
                    .filter(|digits| {
                        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
                    })
                    // `IsValidPercent`, then `strconv.Atoi`, which saturates.
                    .map(|digits| digits.parse().unwrap_or(i64::MAX));
                IntOrPercent::Text(text, percent)
            }
            other => IntOrPercent::Int(other.and_then(Value::as_i64).unwrap_or(0)),
        }
    }

    /// `getIntOrPercentValue`: the percentage, else the integer (a string
    /// that is neither reads as its integer, or 0).
    fn value(&self) -> i64 {
        match self {
            IntOrPercent::Int(n) => *n,
            IntOrPercent::Text(_, Some(percent)) => *percent,
            IntOrPercent::Text(text, None) => text.parse().unwrap_or(0),
        }
    }

    /// Go's `%#v` of the `intstr.IntOrString`.
    fn shown(&self) -> String {
        match self {
            IntOrPercent::Int(n) => {
                format!("intstr.IntOrString{{Type:0, IntVal:{n}, StrVal:\"\"}}")
            }
            IntOrPercent::Text(text, _) => {
                format!("intstr.IntOrString{{Type:1, IntVal:0, StrVal:{text:?}}}")
            }
        }
    }

    fn invalid(&self, field: &str, detail: &str) -> Cause {
        Cause::new(
            field,
            "FieldValueInvalid",
            format!("Invalid value: {}: {detail}", self.shown()),
        )
    }

    /// `ValidatePositiveIntOrPercent`.
    pub(super) fn check(&self, field: &str, causes: &mut Vec<Cause>) {
        match self {
            IntOrPercent::Int(n) if *n < 0 => causes.push(negative(field, *n)),
            IntOrPercent::Text(_, None) => causes.push(self.invalid(
                field,
                "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
            )),
            _ => {}
        }
    }

    /// `IsNotMoreThan100Percent`.
    pub(super) fn at_most_all(&self, field: &str, causes: &mut Vec<Cause>) {
        if let IntOrPercent::Text(_, Some(percent)) = self
            && *percent > 100
        {
            causes.push(self.invalid(field, "must not be greater than 100%"));
        }
    }
}

/// A Deployment's strategy (`ValidateDeploymentStrategy`).
fn deployment_strategy(spec: &Value, causes: &mut Vec<Cause>) {
    let strategy = spec.get("strategy").unwrap_or(&Value::Null);
    let rolling = strategy.get("rollingUpdate").filter(|r| !r.is_null());
    match strategy.get("type").and_then(Value::as_str).unwrap_or("") {
        "Recreate" => {
            if rolling.is_some() {
                causes.push(Cause::forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                ));
            }
        }
        "RollingUpdate" => {
            let Some(rolling) = rolling else {
                causes.push(Cause::required(
                    "spec.strategy.rollingUpdate",
                    "this should be defaulted and never be nil",
                ));
                return;
            };
            let at = "spec.strategy.rollingUpdate";
            let unavailable = IntOrPercent::of(rolling.get("maxUnavailable"));
            let surge = IntOrPercent::of(rolling.get("maxSurge"));
            unavailable.check(&format!("{at}.maxUnavailable"), causes);
            surge.check(&format!("{at}.maxSurge"), causes);
            if unavailable.value() == 0 && surge.value() == 0 {
                causes.push(unavailable.invalid(
                    &format!("{at}.maxUnavailable"),
                    "may not be 0 when `maxSurge` is 0",
                ));
            }
            unavailable.at_most_all(&format!("{at}.maxUnavailable"), causes);
        }
        other => causes.push(unsupported_strategy(
            "spec.strategy",
            "apps.DeploymentStrategy",
            other,
            "apps.RollingUpdateDeployment",
            &["Recreate", "RollingUpdate"],
        )),
    }
}

/// `field.NotSupported` of a whole strategy of an unknown type, in Go's
/// `%#v` (its rolling update is absent: defaulting adds one only to a
/// rolling update).
fn unsupported_strategy(
    field: &str,
    go_type: &str,
    kind: &str,
    rolling_type: &str,
    supported: &[&str],
) -> Cause {
    let supported: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
    Cause::new(
        field,
        "FieldValueNotSupported",
        format!(
            "Unsupported value: {go_type}{{Type:{kind:?}, RollingUpdate:(*{rolling_type})(nil)}}: supported values: {}",
            supported.join(", ")
        ),
    )
}

/// A DaemonSet's update strategy (`ValidateDaemonSetUpdateStrategy`).
fn daemon_set_strategy(spec: &Value, causes: &mut Vec<Cause>) {
    let strategy = spec.get("updateStrategy").unwrap_or(&Value::Null);
    match strategy.get("type").and_then(Value::as_str).unwrap_or("") {
        "OnDelete" => {}
        "RollingUpdate" => {
            let at = "spec.updateStrategy.rollingUpdate";
            let Some(rolling) = strategy.get("rollingUpdate").filter(|r| !r.is_null()) else {
                causes.push(Cause::required(at, ""));
                return;
            };
            let unavailable = IntOrPercent::of(rolling.get("maxUnavailable"));
            let surge = IntOrPercent::of(rolling.get("maxSurge"));
            unavailable.check(&format!("{at}.maxUnavailable"), causes);
            surge.check(&format!("{at}.maxSurge"), causes);
            unavailable.at_most_all(&format!("{at}.maxUnavailable"), causes);
            surge.at_most_all(&format!("{at}.maxSurge"), causes);
            match (unavailable.value() != 0, surge.value() != 0) {
                (true, true) => causes.push(surge.invalid(
                    &format!("{at}.maxSurge"),
                    "may not be set when maxUnavailable is non-zero",
                )),
                (false, false) => causes.push(Cause::required(
                    &format!("{at}.maxUnavailable"),
                    "cannot be 0 when maxSurge is 0",
                )),
                _ => {}
            }
        }
        other => causes.push(unsupported_strategy(
            "spec.updateStrategy",
            "apps.DaemonSetUpdateStrategy",
            other,
            "apps.RollingUpdateDaemonSet",
            &["RollingUpdate", "OnDelete"],
        )),
    }
}

/// A StatefulSet's pod management policy, update strategy and claim
/// retention policy.
fn stateful_set_policies(spec: &Value, causes: &mut Vec<Cause>) {
    match spec
        .get("podManagementPolicy")
        .and_then(Value::as_str)
        .unwrap_or("")
    {
        "" => causes.push(Cause::required("spec.podManagementPolicy", "")),
        "OrderedReady" | "Parallel" => {}
        other => causes.push(names::invalid(
            "spec.podManagementPolicy",
            other,
            "must be 'OrderedReady' or 'Parallel'".into(),
        )),
    }
    let strategy = spec.get("updateStrategy").unwrap_or(&Value::Null);
    let rolling = strategy.get("rollingUpdate").filter(|r| !r.is_null());
    match strategy.get("type").and_then(Value::as_str).unwrap_or("") {
        "" => causes.push(Cause::required("spec.updateStrategy", "")),
        "OnDelete" => {
            if let Some(rolling) = rolling {
                let partition = rolling.get("partition").and_then(Value::as_i64).unwrap_or(0);
                causes.push(Cause::new(
                    "spec.updateStrategy.rollingUpdate",
                    "FieldValueInvalid",
                    format!(
                        "Invalid value: apps.RollingUpdateStatefulSetStrategy{{Partition:{partition}, MaxUnavailable:(*intstr.IntOrString)(nil)}}: only allowed for updateStrategy 'RollingUpdate'"
                    ),
                ));
            }
        }
        "RollingUpdate" => {
            if let Some(partition) = rolling
                .and_then(|r| r.get("partition"))
                .and_then(Value::as_i64)
                .filter(|p| *p < 0)
            {
                causes.push(negative("spec.updateStrategy.rollingUpdate.partition", partition));
            }
        }
        other => causes.push(Cause::new(
            "spec.updateStrategy",
            "FieldValueInvalid",
            format!(
                "Invalid value: apps.StatefulSetUpdateStrategy{{Type:{other:?}, RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}}: must be 'RollingUpdate' or 'OnDelete'"
            ),
        )),
    }
    let policy = spec.get("persistentVolumeClaimRetentionPolicy");
    for field in ["whenDeleted", "whenScaled"] {
        let Some(value) = policy.and_then(|p| p.get(field)).and_then(Value::as_str) else {
            continue;
        };
        if value != "Retain" && value != "Delete" {
            causes.push(Cause::not_supported(
                &format!("spec.persistentVolumeClaimRetentionPolicy.{field}"),
                value,
                &["Retain", "Delete"],
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(kind: &str, spec: Value) -> Vec<String> {
        let mut causes = Vec::new();
        before_template(kind, &spec, &mut causes);
        after_template(kind, &spec, &mut causes);
        causes.iter().map(Cause::message).collect()
    }

    #[test]
    fn a_deployments_rolling_update_strategy_and_deadline_are_checked() {
        let rolling = |unavailable: Value, surge: Value| {
            json!({"strategy": {"type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": unavailable, "maxSurge": surge}}})
        };
        assert_eq!(
            messages("Deployment", rolling(json!(0), json!("0%"))),
            [
                "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: may not be 0 when `maxSurge` is 0"
            ]
        );
        assert_eq!(
            messages("Deployment", rolling(json!("110%"), json!(-1))),
            [
                "spec.strategy.rollingUpdate.maxSurge: Invalid value: -1: must be greater than or equal to 0",
                "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"110%\"}: must not be greater than 100%",
            ]
        );
        assert_eq!(
            messages("Deployment", rolling(json!("half"), json!(1))),
            [
                "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"half\"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
            ]
        );
        assert!(messages("Deployment", rolling(json!("25%"), json!("25%"))).is_empty());
        assert_eq!(
            messages(
                "Deployment",
                rolling(json!("99999999999999999999%"), json!(1))
            ),
            [
                "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"99999999999999999999%\"}: must not be greater than 100%"
            ]
        );
        assert_eq!(
            messages(
                "Deployment",
                json!({"replicas": -1, "minReadySeconds": 30, "progressDeadlineSeconds": 30,
                    "revisionHistoryLimit": -2,
                    "strategy": {"type": "Recreate", "rollingUpdate": {}}})
            ),
            [
                "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
                "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'",
                "spec.revisionHistoryLimit: Invalid value: -2: must be greater than or equal to 0",
                "spec.progressDeadlineSeconds: Invalid value: 30: must be greater than minReadySeconds",
            ]
        );
        assert_eq!(
            messages("Deployment", json!({"strategy": {"type": "BlueGreen"}})),
            [
                "spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:\"BlueGreen\", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: \"Recreate\", \"RollingUpdate\""
            ]
        );
    }

    #[test]
    fn a_daemon_set_surges_or_takes_nodes_down_not_both() {
        let rolling = |unavailable: Value, surge: Value| {
            json!({"updateStrategy": {"type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": unavailable, "maxSurge": surge}}})
        };
        assert_eq!(
            messages("DaemonSet", rolling(json!(1), json!("10%"))),
            [
                "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"10%\"}: may not be set when maxUnavailable is non-zero"
            ]
        );
        assert_eq!(
            messages("DaemonSet", rolling(json!(0), json!(0))),
            [
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"
            ]
        );
        assert_eq!(
            messages("DaemonSet", rolling(json!(0), json!("101%"))),
            [
                "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"101%\"}: must not be greater than 100%"
            ]
        );
        assert!(messages("DaemonSet", rolling(json!(1), json!(0))).is_empty());
        assert_eq!(
            messages(
                "DaemonSet",
                json!({"updateStrategy": {"type": "Never"}, "templateGeneration": -1})
            ),
            [
                "spec.templateGeneration: Invalid value: -1: must be greater than or equal to 0",
                "spec.updateStrategy: Unsupported value: apps.DaemonSetUpdateStrategy{Type:\"Never\", RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}: supported values: \"RollingUpdate\", \"OnDelete\"",
            ]
        );
    }

    #[test]
    fn a_stateful_sets_policies_come_before_its_counts() {
        let spec = json!({"podManagementPolicy": "Random", "replicas": -1,
            "updateStrategy": {"type": "OnDelete", "rollingUpdate": {"partition": 2}},
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Keep", "whenScaled": "Retain"},
            "ordinals": {"start": -1}});
        assert_eq!(
            messages("StatefulSet", spec),
            [
                "spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'",
                "spec.updateStrategy.rollingUpdate: Invalid value: apps.RollingUpdateStatefulSetStrategy{Partition:2, MaxUnavailable:(*intstr.IntOrString)(nil)}: only allowed for updateStrategy 'RollingUpdate'",
                "spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: \"Keep\": supported values: \"Retain\", \"Delete\"",
                "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
                "spec.ordinals.start: Invalid value: -1: must be greater than or equal to 0",
            ]
        );
        assert_eq!(
            messages(
                "StatefulSet",
                json!({"podManagementPolicy": "Parallel", "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": -3}}})
            ),
            [
                "spec.updateStrategy.rollingUpdate.partition: Invalid value: -3: must be greater than or equal to 0"
            ]
        );
    }
}
