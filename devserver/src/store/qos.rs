//! A Pod's quality-of-service class, as kube-apiserver's Pod strategy sets
//! `status.qosClass` at create (`qos.GetPodQOS`).
//!
//! The class looks at the `cpu` and `memory` requests and limits of every
//! container and init container, summed over them, counting only
//! quantities above zero: none at all is `BestEffort`; a limit of both in
//! every container, with the summed requests equal to the summed limits,
//! is `Guaranteed`; anything else is `Burstable`. The Pod's defaults
//! ([`super::defaults`]) have already set each request a limit implies.

use std::collections::BTreeMap;

use serde_json::Value;

use super::quantity::{QUANTITY_FORMAT, parse as parse_quantity};

/// The resources the class is computed from.
const QOS_RESOURCES: [&str; 2] = ["cpu", "memory"];

/// `BestEffort`, `Burstable` or `Guaranteed` for a Pod, or the parse error
/// of the first malformed quantity among its containers' resources.
pub fn pod_qos_class(pod: &Value) -> Result<&'static str, String> {
    let mut requests: BTreeMap<&str, i128> = BTreeMap::new();
    let mut limits: BTreeMap<&str, i128> = BTreeMap::new();
    let mut guaranteed = true;
    for list in ["containers", "initContainers"] {
        let containers = pod
            .pointer(&format!("/spec/{list}"))
            .and_then(Value::as_array);
        for container in containers.into_iter().flatten() {
            add_positive(container.pointer("/resources/requests"), &mut requests)?;
            let found = add_positive(container.pointer("/resources/limits"), &mut limits)?;
            if found < QOS_RESOURCES.len() {
                guaranteed = false;
            }
        }
    }
    if requests.is_empty() && limits.is_empty() {
        return Ok("BestEffort");
    }
    let equal = requests
        .iter()
        .all(|(name, request)| limits.get(name) == Some(request));
    Ok(if guaranteed && equal && requests.len() == limits.len() {
        "Guaranteed"
    } else {
        "Burstable"
    })
}

/// Adds a resource list's positive `cpu` and `memory` quantities into
/// `sums`; returns how many of the two it had.
fn add_positive<'a>(
    list: Option<&'a Value>,
    sums: &mut BTreeMap<&'a str, i128>,
) -> Result<usize, String> {
    let mut found = 0;
    for (name, quantity) in list.and_then(Value::as_object).into_iter().flatten() {
        if !QOS_RESOURCES.contains(&name.as_str()) {
            continue;
        }
        let nanos = match quantity {
            Value::String(s) => parse_quantity(s),
            Value::Number(n) => parse_quantity(&n.to_string()),
            _ => None,
        }
        .ok_or_else(|| QUANTITY_FORMAT.to_string())?;
        if nanos > 0 {
            found += 1;
            let sum = sums.entry(name.as_str()).or_insert(0);
            *sum = sum.saturating_add(nanos);
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(containers: Value) -> Value {
        json!({"spec": {"containers": containers}})
    }

    #[test]
    fn no_requests_or_limits_is_best_effort() {
        assert_eq!(
            pod_qos_class(&pod(json!([{"name": "a"}]))),
            Ok("BestEffort")
        );
        // Zero and other resources do not count.
        let zero =
            pod(json!([{"resources": {"requests": {"cpu": "0", "ephemeral-storage": "1Gi"}}}]));
        assert_eq!(pod_qos_class(&zero), Ok("BestEffort"));
    }

    #[test]
    fn equal_cpu_and_memory_limits_and_requests_everywhere_is_guaranteed() {
        let both = json!({"cpu": "1", "memory": "1Gi"});
        let same = json!({"cpu": "1000m", "memory": "1024Mi"});
        let guaranteed = pod(json!([
            {"resources": {"requests": both, "limits": same}},
            {"resources": {"requests": same, "limits": both}},
        ]));
        assert_eq!(pod_qos_class(&guaranteed), Ok("Guaranteed"));
    }

    #[test]
    fn anything_less_is_burstable() {
        let cpu_only =
            pod(json!([{"resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}}]));
        assert_eq!(pod_qos_class(&cpu_only), Ok("Burstable"));
        let lower = pod(json!([{"resources": {
            "requests": {"cpu": "500m", "memory": "1Gi"},
            "limits": {"cpu": "1", "memory": "1Gi"},
        }}]));
        assert_eq!(pod_qos_class(&lower), Ok("Burstable"));
        // One container without limits spoils the class of the others.
        let guaranteed = json!({"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}});
        let mixed = json!({"spec": {
            "containers": [{"resources": guaranteed}],
            "initContainers": [{"resources": {"requests": {"cpu": "1"}}}],
        }});
        assert_eq!(pod_qos_class(&mixed), Ok("Burstable"));
    }

    #[test]
    fn a_malformed_quantity_is_the_api_servers_format_error() {
        let bad = pod(json!([{"resources": {"limits": {"memory": "lots"}}}]));
        assert_eq!(pod_qos_class(&bad), Err(QUANTITY_FORMAT.to_string()));
    }
}
