//! A Pod's quality-of-service class, as kube-apiserver's Pod strategy sets
//! `status.qosClass` at create (`qos.GetPodQOS`), and the resource
//! quantities it is computed from.
//!
//! The class looks at the `cpu` and `memory` requests and limits of every
//! container and init container, summed over them, counting only
//! quantities above zero: none at all is `BestEffort`; a limit of both in
//! every container, with the summed requests equal to the summed limits,
//! is `Guaranteed`; anything else is `Burstable`. The Pod's defaults
//! ([`super::defaults`]) have already set each request a limit implies.

use std::collections::BTreeMap;

use serde_json::Value;

/// kube-apiserver's message for a quantity it cannot parse
/// (`resource.ErrFormatWrong`).
pub const QUANTITY_FORMAT: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

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

/// A Kubernetes quantity (`500m`, `1.5Gi`, `2e3`, `128974848`) in units of
/// 10⁻⁹, rounded up as the API rounds below its nano scale; `None` when it
/// is not a quantity. Values beyond `i128` saturate.
pub fn parse_quantity(text: &str) -> Option<i128> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let (negative, digits) = match number.as_bytes().first()? {
        b'-' => (true, &number[1..]),
        b'+' => (false, &number[1..]),
        _ => (false, number),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty() || !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    let (exp10, exp2): (i32, u32) = match suffix {
        "" => (0, 0),
        "n" => (-9, 0),
        "u" => (-6, 0),
        "m" => (-3, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        "Ki" => (0, 10),
        "Mi" => (0, 20),
        "Gi" => (0, 30),
        "Ti" => (0, 40),
        "Pi" => (0, 50),
        "Ei" => (0, 60),
        exponent => {
            let rest = exponent.strip_prefix(['e', 'E'])?;
            let unsigned = rest.strip_prefix(['+', '-']).unwrap_or(rest);
            if unsigned.is_empty() || !all_digits(unsigned) {
                return None;
            }
            (rest.parse().ok()?, 0)
        }
    };
    // The digits as one integer, scaled to nano units.
    let mut mantissa: i128 = 0;
    for b in whole.bytes().chain(fraction.bytes()) {
        mantissa = mantissa
            .saturating_mul(10)
            .saturating_add(i128::from(b - b'0'));
    }
    let scale = 9 + exp10 - fraction.len() as i32;
    let mut nanos = if scale >= 0 {
        10i128
            .checked_pow(scale as u32)
            .map_or(i128::MAX, |p| mantissa.saturating_mul(p))
    } else {
        match 10i128.checked_pow(scale.unsigned_abs()) {
            Some(p) => mantissa / p + i128::from(mantissa % p != 0),
            None => i128::from(mantissa != 0),
        }
    };
    nanos = nanos.saturating_mul(1i128.checked_shl(exp2).unwrap_or(i128::MAX));
    Some(if negative { -nanos } else { nanos })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn quantities_parse_in_every_notation() {
        assert_eq!(parse_quantity("1"), Some(1_000_000_000));
        assert_eq!(parse_quantity("500m"), Some(500_000_000));
        assert_eq!(parse_quantity("0.5"), Some(500_000_000));
        assert_eq!(parse_quantity(".5"), Some(500_000_000));
        assert_eq!(parse_quantity("1Ki"), Some(1024 * 1_000_000_000));
        assert_eq!(parse_quantity("1.5Gi"), Some(1_610_612_736 * 1_000_000_000));
        assert_eq!(
            parse_quantity("128974848"),
            Some(128_974_848 * 1_000_000_000)
        );
        assert_eq!(parse_quantity("2e3"), parse_quantity("2k"));
        assert_eq!(parse_quantity("1E-3"), parse_quantity("1m"));
        assert_eq!(parse_quantity("-1"), Some(-1_000_000_000));
        // Below a nano, rounded up.
        assert_eq!(parse_quantity("0.0000000001"), Some(1));
        for bad in ["", "m", "abc", "1.2.3", "1x", "1Kib", "1e", "--1", "1 Gi"] {
            assert_eq!(parse_quantity(bad), None, "{bad:?}");
        }
    }

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
