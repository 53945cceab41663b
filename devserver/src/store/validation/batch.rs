//! Jobs and CronJobs, as `pkg/apis/batch/validation` checks them and the
//! Job registry prepares them: a Job's generated selector and pod labels
//! (`generateSelectorIfNeeded`, on create), its counts, completion mode,
//! pod failure and replacement policies, pod template (validated as other
//! workloads' are, restarting `OnFailure` or `Never`), its selector
//! matching the template and, unless manual, the generated one
//! (`ValidateJob`); what a Job update may not change
//! (`ValidateJobSpecUpdate`); a CronJob's schedule (robfig/cron's standard
//! parser), time zone, concurrency policy, history limits, job template
//! and name length (`ValidateCronJobCreate`, `validateCronJobSpec`).
//!
//! A pointer's value shows as the server's field errors show it,
//! dereferenced (`v1.LabelSelector{...}`, `"null"` for nil); a pod
//! template or policy that may not change shows only its type, as its
//! full Go form (with pointer addresses) cannot be reproduced.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::immutable::semantic;
use super::{
    Cause, Spec, go_label_selector, go_string_map, items, label_selector, names, pod_spec, selects,
    text,
};

const JOB_NAME: &str = "batch.kubernetes.io/job-name";
const LEGACY_JOB_NAME: &str = "job-name";
const CONTROLLER_UID: &str = "batch.kubernetes.io/controller-uid";
const LEGACY_CONTROLLER_UID: &str = "controller-uid";

const MAX_PARALLELISM_INDEXED: i64 = 100_000;
const MAX_FAILED_INDEXES: i64 = 100_000;
const COMPLETIONS_SOFT_LIMIT: i64 = 100_000;
const PARALLELISM_HIGH_COMPLETIONS: i64 = 10_000;
const MAX_FAILED_INDEXES_HIGH_COMPLETIONS: i64 = 10_000;
const MAX_POLICY_RULES: usize = 20;
const MAX_EXIT_CODES: usize = 255;
const MAX_CONDITION_PATTERNS: usize = 20;
const MAX_MANAGED_BY: usize = 63;

/// Whether a Job's own labels are its template's, as Go's defaulting
/// makes them one map (`SetDefaults_Job`): the Job has none and its
/// template has a label map, as written.
pub(crate) fn job_labels_shared(job: &Value) -> bool {
    let own = job
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty);
    own && job
        .pointer("/spec/template/metadata/labels")
        .is_some_and(Value::is_object)
}

/// `generateSelectorIfNeeded` on a created Job (its uid set): unless
/// `spec.manualSelector` is true, its template gets the job-name and
/// controller-uid labels it lacks, both legacy and prefixed, and its
/// selector the prefixed controller-uid. Where the Job's labels are its
/// template's (`shared`), they end as the template's.
pub(crate) fn generate_selector(job: &mut Value, shared: bool) {
    if job.pointer("/spec/manualSelector").and_then(Value::as_bool) == Some(true) {
        return;
    }
    let name = text(job, "/metadata/name").to_string();
    let uid = text(job, "/metadata/uid").to_string();
    let Some(spec) = job.get_mut("spec").filter(|s| s.is_object()) else {
        return;
    };
    let labels = object_at(spec, &["template", "metadata", "labels"]);
    for (key, value) in [
        (LEGACY_JOB_NAME, &name),
        (JOB_NAME, &name),
        (LEGACY_CONTROLLER_UID, &uid),
        (CONTROLLER_UID, &uid),
    ] {
        if !labels.contains_key(key) {
            labels.insert(key.to_string(), json!(value));
        }
    }
    let labels = Value::Object(labels.clone());
    let selector = object_at(spec, &["selector", "matchLabels"]);
    if !selector.contains_key(CONTROLLER_UID) {
        selector.insert(CONTROLLER_UID.to_string(), json!(uid));
    }
    if shared && let Some(meta) = job.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("labels".to_string(), labels);
    }
}

/// The object at `path` under `value`, made (replacing a null) where missing.
fn object_at<'v>(value: &'v mut Value, path: &[&str]) -> &'v mut Map<String, Value> {
    let mut at = value;
    for key in path {
        let map = at.as_object_mut().expect("an object");
        let next = map.entry(key.to_string()).or_insert(Value::Null);
        if !next.is_object() {
            *next = json!({});
        }
        at = next;
    }
    at.as_object_mut().expect("an object")
}

/// `ValidateJob` (an update's `old` Job decides whether the prefixed
/// generated labels are required: only where its template had both).
pub(super) fn job(object: &Value, old: Option<&Value>, causes: &mut Vec<Cause>) {
    let prefixed = old.is_none_or(|old| {
        let labels = old.pointer("/spec/template/metadata/labels");
        [JOB_NAME, CONTROLLER_UID]
            .iter()
            .all(|key| labels.and_then(|l| l.get(*key)).is_some())
    });
    generated_selector(object, prefixed, causes);
    let spec = object.get("spec").unwrap_or(&Value::Null);
    job_spec(spec, "spec", causes);
    selector_matches(spec, "spec", causes);
    let indexed = text(spec, "/completionMode") == "Indexed";
    if let Some(completions) = number(spec, "completions").filter(|c| indexed && *c > 0) {
        let name = text(object, "/metadata/name");
        let hostname = format!("{name}-{}", completions - 1);
        if !names::dns1123_label(&hostname).is_empty() {
            causes.push(names::invalid(
                "metadata.name",
                name,
                format!("will not able to create pod with invalid DNS label: {hostname}"),
            ));
        }
    }
}

/// `validateGeneratedSelector`: a Job whose selector was generated has
/// the generated labels on its template, and its selector selects them.
fn generated_selector(object: &Value, prefixed: bool, causes: &mut Vec<Cause>) {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    if spec.get("manualSelector").and_then(Value::as_bool) == Some(true) {
        return;
    }
    let Some(selector) = spec.get("selector").filter(|s| !s.is_null()) else {
        return;
    };
    let uid = text(object, "/metadata/uid");
    let name = text(object, "/metadata/name");
    if uid.is_empty() {
        causes.push(Cause::required("metadata.uid", ""));
    }
    let labels = object
        .pointer("/spec/template/metadata/labels")
        .and_then(Value::as_object);
    let mut expected = vec![(LEGACY_CONTROLLER_UID, uid), (LEGACY_JOB_NAME, name)];
    if prefixed {
        expected.extend([(CONTROLLER_UID, uid), (JOB_NAME, name)]);
    }
    for (key, value) in &expected {
        has_label(labels, key, value, causes);
    }
    if readable(selector, "spec.selector") {
        let expected: Map<String, Value> = expected
            .iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect();
        if !selects(selector, Some(&expected)) {
            causes.push(selector_invalid(
                "spec.selector",
                selector,
                "`selector` not auto-generated",
            ));
        }
    }
}

/// `ValidateHasLabel` of the template's metadata.
fn has_label(
    labels: Option<&Map<String, Value>>,
    key: &str,
    expected: &str,
    causes: &mut Vec<Cause>,
) {
    let field = format!("spec.template.metadata.labels[{key}]");
    let detail = format!("must be '{expected}'");
    match labels.and_then(|l| l.get(key)) {
        None => causes.push(Cause::required(&field, &detail)),
        Some(value) if value.as_str() == Some(expected) => {}
        Some(_) => causes.push(Cause::new(
            &field,
            "FieldValueInvalid",
            format!("Invalid value: {}: {detail}", go_labels(labels)),
        )),
    }
}

/// Go's `%#v` of a label map.
fn go_labels(labels: Option<&Map<String, Value>>) -> String {
    let map: BTreeMap<&str, &str> = labels
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default()))
        .collect();
    go_string_map(&map)
}

/// Whether `LabelSelectorAsSelector` reads `selector`: it meets
/// `ValidateLabelSelector`.
fn readable(selector: &Value, path: &str) -> bool {
    let mut found = Vec::new();
    label_selector::label_selector(selector, path, &mut found);
    found.is_empty()
}

/// `field.Invalid` of a `*metav1.LabelSelector`, shown dereferenced.
fn selector_invalid(field: &str, selector: &Value, detail: &str) -> Cause {
    let shown = go_label_selector(selector);
    Cause::new(
        field,
        "FieldValueInvalid",
        format!("Invalid value: {}: {detail}", shown.trim_start_matches('&')),
    )
}

/// The rest of `ValidateJobSpec`: a selector, valid, that selects the
/// template's labels (a missing one selects nothing).
fn selector_matches(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    let selector = spec.get("selector").filter(|s| !s.is_null());
    let field = format!("{path}.selector");
    let matches = match selector {
        None => {
            causes.push(Cause::required(&field, ""));
            false
        }
        Some(selector) => {
            label_selector::label_selector(selector, &field, causes);
            if !readable(selector, &field) {
                return;
            }
            let labels = spec
                .pointer("/template/metadata/labels")
                .and_then(Value::as_object);
            selects(selector, labels)
        }
    };
    if !matches {
        causes.push(Cause::new(
            &format!("{path}.template.metadata.labels"),
            "FieldValueInvalid",
            format!(
                "Invalid value: {}: `selector` does not match template `labels`",
                go_labels(
                    spec.pointer("/template/metadata/labels")
                        .and_then(Value::as_object)
                )
            ),
        ));
    }
}

/// An integer field of `spec`; none when absent or null.
fn number(spec: &Value, field: &str) -> Option<i64> {
    spec.get(field).and_then(Value::as_i64)
}

fn non_negative(spec: &Value, field: &str, path: &str, causes: &mut Vec<Cause>) {
    if let Some(value) = number(spec, field).filter(|v| *v < 0) {
        causes.push(Cause::invalid_number(
            &format!("{path}.{field}"),
            value,
            "must be greater than or equal to 0",
        ));
    }
}

/// `validateJobSpec` of the spec at `path`.
fn job_spec(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    for field in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
    ] {
        non_negative(spec, field, path, causes);
    }
    let at = |field: &str| format!("{path}.{field}");
    let parallelism = number(spec, "parallelism");
    let completions = number(spec, "completions");
    let per_index = number(spec, "backoffLimitPerIndex");
    let max_failed = number(spec, "maxFailedIndexes");
    if max_failed.is_some() {
        non_negative(spec, "maxFailedIndexes", path, causes);
        if per_index.is_none() {
            causes.push(Cause::required(
                &at("backoffLimitPerIndex"),
                "when maxFailedIndexes is specified",
            ));
        }
    }
    if let Some(managed_by) = spec.get("managedBy").and_then(Value::as_str) {
        domain_prefixed_path(managed_by, &at("managedBy"), causes);
        if managed_by.len() > MAX_MANAGED_BY {
            causes.push(Cause::too_long(&at("managedBy"), MAX_MANAGED_BY));
        }
    }
    let mode = spec.get("completionMode").and_then(Value::as_str);
    if let Some(mode) = mode {
        if mode != "NonIndexed" && mode != "Indexed" {
            causes.push(Cause::not_supported(
                &at("completionMode"),
                mode,
                &["NonIndexed", "Indexed"],
            ));
        }
        if mode == "Indexed" {
            if completions.is_none() {
                causes.push(Cause::required(
                    &at("completions"),
                    "when completion mode is Indexed",
                ));
            }
            if let Some(p) = parallelism.filter(|p| *p > MAX_PARALLELISM_INDEXED) {
                causes.push(Cause::invalid_number(
                    &at("parallelism"),
                    p,
                    &format!(
                        "must be less than or equal to {MAX_PARALLELISM_INDEXED} when completion mode is Indexed"
                    ),
                ));
            }
            if let (Some(c), Some(m)) = (completions, max_failed)
                && m > c
            {
                causes.push(Cause::invalid_number(
                    &at("maxFailedIndexes"),
                    m,
                    "must be less than or equal to completions",
                ));
            }
            if let Some(m) = max_failed.filter(|m| *m > MAX_FAILED_INDEXES) {
                causes.push(Cause::invalid_number(
                    &at("maxFailedIndexes"),
                    m,
                    &format!("must be less than or equal to {MAX_FAILED_INDEXES}"),
                ));
            }
            if completions.is_some_and(|c| c > COMPLETIONS_SOFT_LIMIT) && per_index.is_some() {
                let tail = format!(
                    "when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
                );
                if max_failed.is_none() {
                    causes.push(Cause::required(
                        &at("maxFailedIndexes"),
                        &format!(
                            "must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"
                        ),
                    ));
                }
                if let Some(p) = parallelism.filter(|p| *p > PARALLELISM_HIGH_COMPLETIONS) {
                    causes.push(Cause::invalid_number(
                        &at("parallelism"),
                        p,
                        &format!(
                            "must be less than or equal to {PARALLELISM_HIGH_COMPLETIONS} {tail}"
                        ),
                    ));
                }
                if let Some(m) = max_failed.filter(|m| *m > MAX_FAILED_INDEXES_HIGH_COMPLETIONS) {
                    causes.push(Cause::invalid_number(
                        &at("maxFailedIndexes"),
                        m,
                        &format!(
                            "must be less than or equal to {MAX_FAILED_INDEXES_HIGH_COMPLETIONS} {tail}"
                        ),
                    ));
                }
            }
        }
    }
    if mode.is_none_or(|m| m == "NonIndexed") {
        for (field, value) in [
            ("backoffLimitPerIndex", per_index),
            ("maxFailedIndexes", max_failed),
        ] {
            if let Some(value) = value {
                causes.push(Cause::invalid_number(
                    &at(field),
                    value,
                    "requires indexed completion mode",
                ));
            }
        }
    }
    let failure_policy = spec.get("podFailurePolicy").filter(|p| !p.is_null());
    if let Some(policy) = failure_policy {
        pod_failure_policy(spec, policy, &at("podFailurePolicy"), causes);
    }
    if let Some(policy) = spec.get("successPolicy").filter(|p| !p.is_null()) {
        if mode == Some("Indexed") {
            success_policy(spec, policy, &at("successPolicy"), causes);
        } else {
            // Go shows the policy's pointers by address: not reproduced.
            causes.push(Cause::new(
                &at("successPolicy"),
                "FieldValueInvalid",
                "Invalid value: batch.SuccessPolicy{...}: requires indexed completion mode".into(),
            ));
        }
    }
    if let Some(replacement) = spec.get("podReplacementPolicy").and_then(Value::as_str) {
        let supported: &[&str] = if failure_policy.is_some() {
            &["Failed"]
        } else {
            &["Failed", "TerminatingOrFailed"]
        };
        if !supported.contains(&replacement) {
            causes.push(Cause::not_supported(
                &at("podReplacementPolicy"),
                replacement,
                supported,
            ));
        }
    }
    pod_template(spec.get("template"), &at("template"), causes);
    let restart_field = at("template.spec.restartPolicy");
    match text(spec, "/template/spec/restartPolicy") {
        "Always" | "" => causes.push(Cause::required(
            &restart_field,
            "valid values: \"OnFailure\", \"Never\"",
        )),
        "OnFailure" if failure_policy.is_some() => causes.push(names::invalid(
            &restart_field,
            "OnFailure",
            "only \"Never\" is supported when podFailurePolicy is specified".into(),
        )),
        "OnFailure" | "Never" => {}
        other => causes.push(Cause::not_supported(
            &restart_field,
            other,
            &["OnFailure", "Never"],
        )),
    }
}

/// `ValidatePodTemplateSpec` of the template at `path`: its labels, its
/// pod spec, no ephemeral containers.
fn pod_template(template: Option<&Value>, path: &str, causes: &mut Vec<Cause>) {
    let template = template.unwrap_or(&Value::Null);
    label_selector::labels(
        template.pointer("/metadata/labels"),
        &format!("{path}.labels"),
        causes,
    );
    let spec = template.get("spec");
    pod_spec(spec, &format!("{path}.spec"), Spec::OfTemplate, causes);
    if spec.is_some_and(|s| !items(s.get("ephemeralContainers")).is_empty()) {
        causes.push(Cause::forbidden(
            &format!("{path}.spec.ephemeralContainers"),
            "ephemeral containers not allowed in pod template",
        ));
    }
}

/// `IsDomainPrefixedPath`.
fn domain_prefixed_path(value: &str, field: &str, causes: &mut Vec<Cause>) {
    if value.is_empty() {
        causes.push(Cause::required(field, ""));
        return;
    }
    let Some((host, path)) = value
        .split_once('/')
        .filter(|(h, p)| !h.is_empty() && !p.is_empty())
    else {
        causes.push(names::invalid(
            field,
            value,
            "must be a domain-prefixed path (such as \"acme.io/foo\")".into(),
        ));
        return;
    };
    for problem in names::dns1123_subdomain(host) {
        causes.push(names::invalid(field, host, problem));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c);
    if !path.chars().all(allowed) {
        causes.push(names::invalid(
            field,
            path,
            "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')".into(),
        ));
    }
}

/// `field.TooMany(field, actual, max)`.
fn too_many(field: &str, actual: usize, max: usize) -> Cause {
    Cause::new(
        field,
        "FieldValueTooMany",
        format!("Too many: {actual}: must have at most {max} items"),
    )
}

/// The most rules a success policy has, and the longest `succeededIndexes`.
const MAX_SUCCESS_POLICY_RULES: usize = 20;
const MAX_SUCCEEDED_INDEXES: usize = 64 * 1024;

/// `validateSuccessPolicy` of an Indexed Job: one to 20 rules, each with a
/// count or indexes (`validateSuccessPolicyRule`), the indexes well formed
/// and below the completions, the count within both.
fn success_policy(spec: &Value, policy: &Value, path: &str, causes: &mut Vec<Cause>) {
    let rules = items(policy.get("rules"));
    let rules_path = format!("{path}.rules");
    if rules.is_empty() {
        causes.push(Cause::required(
            &rules_path,
            "at least one rules must be specified when the successPolicy is specified",
        ));
    }
    if rules.len() > MAX_SUCCESS_POLICY_RULES {
        causes.push(too_many(&rules_path, rules.len(), MAX_SUCCESS_POLICY_RULES));
    }
    let completions = number(spec, "completions").unwrap_or(0);
    for (i, rule) in rules.iter().enumerate() {
        let rule_path = format!("{rules_path}[{i}]");
        let indexes = rule.get("succeededIndexes").and_then(Value::as_str);
        let count = rule.get("succeededCount").and_then(Value::as_i64);
        if indexes.is_none() && count.is_none() {
            causes.push(Cause::required(
                &rule_path,
                "at least one of succeededCount or succeededIndexes must be specified",
            ));
        }
        let mut total = 0;
        if let Some(indexes) = indexes {
            let field = format!("{rule_path}.succeededIndexes");
            if indexes.len() > MAX_SUCCEEDED_INDEXES {
                causes.push(Cause::too_long(&field, MAX_SUCCEEDED_INDEXES));
            }
            match indexes_total(indexes, completions) {
                Ok(sum) => total = sum,
                Err(e) => causes.push(names::invalid(
                    &field,
                    indexes,
                    format!("error parsing succeededIndexes: {e}"),
                )),
            }
        }
        if let Some(count) = count {
            let field = format!("{rule_path}.succeededCount");
            if count < 0 {
                causes.push(Cause::invalid_number(
                    &field,
                    count,
                    "must be greater than or equal to 0",
                ));
            }
            if count > completions {
                causes.push(Cause::invalid_number(
                    &field,
                    count,
                    &format!(
                        "must be less than or equal to {completions} (the number of specified completions)"
                    ),
                ));
            }
            if indexes.is_some() && count > total {
                causes.push(Cause::invalid_number(
                    &field,
                    count,
                    &format!(
                        "must be less than or equal to {total} (the number of indexes in the specified succeededIndexes field)"
                    ),
                ));
            }
        }
    }
}

/// `validateIndexesFormat`: how many indexes `1,3-5` names, each interval
/// increasing and below `completions`; the error as Go words it.
fn indexes_total(indexes: &str, completions: i64) -> Result<i64, String> {
    if indexes.is_empty() {
        return Ok(0);
    }
    let index = |text: &str| -> Result<i64, String> {
        let x: i64 = go_atoi(text)
            .ok_or_else(|| format!("cannot convert string to integer for index: {text:?}"))?;
        if x >= completions {
            return Err(format!("too large index: {text:?}"));
        }
        Ok(x)
    };
    let (mut last, mut total) = (None, 0);
    for interval in indexes.split(',') {
        let limits: Vec<&str> = interval.split('-').collect();
        if limits.len() > 2 {
            return Err(format!(
                "the fragment {interval:?} violates the requirement that an index interval can have at most two parts separated by '-'"
            ));
        }
        let x = index(limits[0])?;
        let y = match limits.get(1) {
            Some(end) => {
                let y = index(end)?;
                if x >= y {
                    return Err(format!("non-increasing order, previous: {x}, current: {y}"));
                }
                y
            }
            None => x,
        };
        if let Some(previous) = last.filter(|previous| *previous >= x) {
            return Err(format!(
                "non-increasing order, previous: {previous}, current: {x}"
            ));
        }
        total += y - x + 1;
        last = Some(y);
    }
    Ok(total)
}

/// Go's `strconv.Atoi`: an optional sign and decimal digits.
fn go_atoi(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// `validatePodFailurePolicy`: at most 20 rules, each with a known action
/// and one of its two requirements, valid.
fn pod_failure_policy(spec: &Value, policy: &Value, path: &str, causes: &mut Vec<Cause>) {
    let rules = items(policy.get("rules"));
    let rules_at = format!("{path}.rules");
    if rules.len() > MAX_POLICY_RULES {
        causes.push(too_many(&rules_at, rules.len(), MAX_POLICY_RULES));
    }
    let containers: Vec<&str> = ["containers", "initContainers"]
        .iter()
        .flat_map(|list| items(spec.pointer(&format!("/template/spec/{list}"))))
        .map(|c| text(c, "/name"))
        .collect();
    for (i, rule) in rules.iter().enumerate() {
        let at = format!("{rules_at}[{i}]");
        let action_at = format!("{at}.action");
        let actions = ["Count", "FailIndex", "FailJob", "Ignore"];
        match text(rule, "/action") {
            "" => causes.push(Cause::required(
                &action_at,
                "valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]",
            )),
            "FailIndex" => {
                if number(spec, "backoffLimitPerIndex").is_none() {
                    causes.push(names::invalid(
                        &action_at,
                        "FailIndex",
                        "requires the backoffLimitPerIndex to be set".into(),
                    ));
                }
            }
            action if actions.contains(&action) => {}
            action => causes.push(Cause::not_supported(&action_at, action, &actions)),
        }
        let exit_codes = rule.get("onExitCodes").filter(|e| !e.is_null());
        if let Some(exit_codes) = exit_codes {
            on_exit_codes(
                exit_codes,
                &format!("{at}.onExitCodes"),
                &containers,
                causes,
            );
        }
        let conditions = items(rule.get("onPodConditions"));
        if !conditions.is_empty() {
            on_pod_conditions(conditions, &format!("{at}.onPodConditions"), causes);
        }
        let detail = match (exit_codes.is_some(), conditions.is_empty()) {
            (true, false) => "specifying both OnExitCodes and OnPodConditions is not supported",
            (false, true) => "specifying one of OnExitCodes and OnPodConditions is required",
            _ => continue,
        };
        causes.push(Cause::new(
            &at,
            "FieldValueInvalid",
            format!("Invalid value: {detail}"),
        ));
    }
}

fn on_exit_codes(requirement: &Value, path: &str, containers: &[&str], causes: &mut Vec<Cause>) {
    let operator = text(requirement, "/operator");
    let operator_at = format!("{path}.operator");
    match operator {
        "" => causes.push(Cause::required(
            &operator_at,
            "valid values: [\"In\" \"NotIn\"]",
        )),
        "In" | "NotIn" => {}
        other => causes.push(Cause::not_supported(&operator_at, other, &["In", "NotIn"])),
    }
    if let Some(name) = requirement.get("containerName").and_then(Value::as_str)
        && !containers.contains(&name)
    {
        causes.push(names::invalid(
            &format!("{path}.containerName"),
            name,
            "must be one of the container or initContainer names in the pod template".into(),
        ));
    }
    let values: Vec<i64> = items(requirement.get("values"))
        .iter()
        .map(|v| v.as_i64().unwrap_or_default())
        .collect();
    let values_at = format!("{path}.values");
    let shown = || {
        let list: Vec<String> = values.iter().map(i64::to_string).collect();
        match requirement.get("values") {
            Some(Value::Array(_)) => format!("[]int32{{{}}}", list.join(", ")),
            _ => "[]int32(nil)".to_string(),
        }
    };
    if values.is_empty() {
        causes.push(Cause::new(
            &values_at,
            "FieldValueInvalid",
            format!("Invalid value: {}: at least one value is required", shown()),
        ));
    } else if values.len() > MAX_EXIT_CODES {
        causes.push(too_many(&values_at, values.len(), MAX_EXIT_CODES));
    }
    let mut seen = Vec::new();
    for (j, value) in values.iter().enumerate() {
        let at = format!("{values_at}[{j}]");
        if operator == "In" && *value == 0 {
            causes.push(Cause::invalid_number(
                &at,
                0,
                "must not be 0 for the In operator",
            ));
        }
        if seen.contains(value) {
            causes.push(Cause::new(
                &at,
                "FieldValueDuplicate",
                format!("Duplicate value: {value}"),
            ));
        } else {
            seen.push(*value);
        }
    }
    if values.windows(2).any(|w| w[0] > w[1]) {
        causes.push(Cause::new(
            &values_at,
            "FieldValueInvalid",
            format!("Invalid value: {}: must be ordered", shown()),
        ));
    }
}

fn on_pod_conditions(patterns: &[Value], path: &str, causes: &mut Vec<Cause>) {
    if patterns.len() > MAX_CONDITION_PATTERNS {
        causes.push(too_many(path, patterns.len(), MAX_CONDITION_PATTERNS));
    }
    for (j, pattern) in patterns.iter().enumerate() {
        let at = format!("{path}[{j}]");
        let kind = text(pattern, "/type");
        for problem in names::qualified_name(kind) {
            causes.push(names::invalid(&format!("{at}.type"), kind, problem));
        }
        let status_at = format!("{at}.status");
        match text(pattern, "/status") {
            "" => causes.push(Cause::required(
                &status_at,
                "valid values: [\"False\" \"True\" \"Unknown\"]",
            )),
            "False" | "True" | "Unknown" => {}
            other => causes.push(Cause::not_supported(
                &status_at,
                other,
                &["False", "True", "Unknown"],
            )),
        }
    }
}

const IMMUTABLE: &str = "field is immutable";

fn immutable(field: &str, shown: String) -> Cause {
    Cause::new(
        field,
        "FieldValueInvalid",
        format!("Invalid value: {shown}: {IMMUTABLE}"),
    )
}

/// A Go pointer's value as a field error shows it: `"null"` when nil.
fn shown_or_null(value: Option<&Value>, show: impl Fn(&Value) -> String) -> String {
    match value.filter(|v| !v.is_null()) {
        None => "\"null\"".to_string(),
        Some(value) => show(value),
    }
}

/// `ValidateJobSpecUpdate` past `ValidateJobSpec`: what an update of `old`
/// may not change. A suspended Job that never started may change its
/// template's scheduling directives, labels and annotations.
pub(super) fn job_update(object: &Value, old: &Value, causes: &mut Vec<Cause>) {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let was = old.get("spec").unwrap_or(&Value::Null);
    let integer = |v: &Value| v.as_i64().map_or_else(|| v.to_string(), |n| n.to_string());
    let string = |v: &Value| format!("{:?}", v.as_str().unwrap_or_default());
    // Completions: an Indexed Job's may change along with its parallelism.
    let completions = number(spec, "completions");
    if text(spec, "/completionMode") != "Indexed" {
        if completions != number(was, "completions") {
            causes.push(immutable(
                "spec.completions",
                shown_or_null(spec.get("completions"), integer),
            ));
        }
    } else if let Some(c) = completions.filter(|c| Some(*c) != number(was, "completions"))
        && Some(c) != number(spec, "parallelism")
    {
        causes.push(Cause::invalid_number(
            "spec.completions",
            c,
            "can only be modified in tandem with spec.parallelism",
        ));
    }
    if !same_pointer(spec.get("selector"), was.get("selector")) {
        let shown = shown_or_null(spec.get("selector"), |s| {
            go_label_selector(s).trim_start_matches('&').to_string()
        });
        causes.push(immutable("spec.selector", shown));
    }
    let suspended = was.get("suspend").and_then(Value::as_bool) == Some(true);
    let not_started = old.pointer("/status/startTime").is_none_or(Value::is_null);
    let template = spec.get("template").cloned().unwrap_or(Value::Null);
    let mut before = was.get("template").cloned().unwrap_or(Value::Null);
    if suspended && not_started {
        allow_scheduling_changes(&template, &mut before);
    }
    if semantic(Some(&template)) != semantic(Some(&before)) {
        causes.push(immutable(
            "spec.template",
            "core.PodTemplateSpec{...}".into(),
        ));
    }
    if spec.get("completionMode").and_then(Value::as_str)
        != was.get("completionMode").and_then(Value::as_str)
    {
        causes.push(immutable(
            "spec.completionMode",
            shown_or_null(spec.get("completionMode"), string),
        ));
    }
    if !same_pointer(spec.get("podFailurePolicy"), was.get("podFailurePolicy")) {
        let shown = shown_or_null(spec.get("podFailurePolicy"), |_| {
            "batch.PodFailurePolicy{...}".into()
        });
        causes.push(immutable("spec.podFailurePolicy", shown));
    }
    if number(spec, "backoffLimitPerIndex") != number(was, "backoffLimitPerIndex") {
        causes.push(immutable(
            "spec.backoffLimitPerIndex",
            shown_or_null(spec.get("backoffLimitPerIndex"), integer),
        ));
    }
    if spec.get("managedBy").and_then(Value::as_str) != was.get("managedBy").and_then(Value::as_str)
    {
        causes.push(immutable(
            "spec.managedBy",
            shown_or_null(spec.get("managedBy"), string),
        ));
    }
    if !same_pointer(spec.get("successPolicy"), was.get("successPolicy")) {
        let shown = shown_or_null(spec.get("successPolicy"), |_| {
            "batch.SuccessPolicy{...}".into()
        });
        causes.push(immutable("spec.successPolicy", shown));
    }
}

/// `validatePodTemplateUpdate` with `AllowMutableSchedulingDirectives`:
/// the old template takes the new one's node affinity, node selector,
/// tolerations, scheduling gates, labels and annotations.
fn allow_scheduling_changes(template: &Value, before: &mut Value) {
    if !before.is_object() {
        return;
    }
    let new_affinity = template.pointer("/spec/affinity").filter(|a| !a.is_null());
    let spec = object_at(before, &["spec"]);
    let old_affinity = spec.get("affinity").filter(|a| !a.is_null()).cloned();
    match (new_affinity, old_affinity) {
        (None, Some(mut old)) => {
            if let Some(map) = old.as_object_mut() {
                map.remove("nodeAffinity");
            }
            if semantic(Some(&old)).is_none() {
                spec.remove("affinity");
            } else {
                spec.insert("affinity".into(), old);
            }
        }
        (Some(new), None) => {
            let node = new.get("nodeAffinity").cloned().unwrap_or(Value::Null);
            spec.insert("affinity".into(), json!({ "nodeAffinity": node }));
        }
        (Some(new), Some(mut old)) => {
            if let Some(map) = old.as_object_mut() {
                map.insert(
                    "nodeAffinity".into(),
                    new.get("nodeAffinity").cloned().unwrap_or(Value::Null),
                );
            }
            spec.insert("affinity".into(), old);
        }
        (None, None) => {}
    }
    for field in ["nodeSelector", "tolerations", "schedulingGates"] {
        let value = template.pointer(&format!("/spec/{field}")).cloned();
        spec.insert(field.into(), value.unwrap_or(Value::Null));
    }
    let meta = object_at(before, &["metadata"]);
    for field in ["labels", "annotations"] {
        let value = template.pointer(&format!("/metadata/{field}")).cloned();
        meta.insert(field.into(), value.unwrap_or(Value::Null));
    }
}

/// Whether two pointer fields are semantically equal: both nil, or both
/// set to equal values.
fn same_pointer(new: Option<&Value>, old: Option<&Value>) -> bool {
    match (new.filter(|v| !v.is_null()), old.filter(|v| !v.is_null())) {
        (None, None) => true,
        (Some(new), Some(old)) => semantic(Some(new)) == semantic(Some(old)),
        _ => false,
    }
}

/// `validateCronJobSpec`; on an update (`old` set), a schedule may keep
/// the `TZ` its old one had and an unchanged time zone is not checked.
pub(super) fn cron_job(object: &Value, old: Option<&Value>, causes: &mut Vec<Cause>) {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let was = old.map(|o| o.get("spec").unwrap_or(&Value::Null));
    let schedule = text(spec, "/schedule");
    let time_zone = spec.get("timeZone").and_then(Value::as_str);
    if schedule.is_empty() {
        causes.push(Cause::required("spec.schedule", ""));
    } else {
        let tz_allowed = was.is_some_and(|w| text(w, "/schedule").contains("TZ"));
        if let Err(why) = cron::parse_standard(schedule) {
            causes.push(names::invalid("spec.schedule", schedule, why));
        }
        let tz = schedule.contains("TZ");
        if tz_allowed && tz && time_zone.is_some() {
            causes.push(names::invalid(
                "spec.schedule",
                schedule,
                "cannot use both timeZone field and TZ or CRON_TZ in schedule".into(),
            ));
        } else if !tz_allowed && tz {
            causes.push(names::invalid(
                "spec.schedule",
                schedule,
                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead".into(),
            ));
        }
    }
    non_negative(spec, "startingDeadlineSeconds", "spec", causes);
    if was.is_none_or(|w| w.get("timeZone").and_then(Value::as_str) != time_zone)
        && let Some(zone) = time_zone
    {
        time_zone_causes(zone, causes);
    }
    match text(spec, "/concurrencyPolicy") {
        "" => causes.push(Cause::required("spec.concurrencyPolicy", "")),
        "Allow" | "Forbid" | "Replace" => {}
        other => causes.push(Cause::not_supported(
            "spec.concurrencyPolicy",
            other,
            &["Allow", "Forbid", "Replace"],
        )),
    }
    // `ValidateJobTemplateSpec`: a Job spec whose selector is generated.
    let template_spec = spec.pointer("/jobTemplate/spec").unwrap_or(&Value::Null);
    job_spec(template_spec, "spec.jobTemplate.spec", causes);
    if let Some(selector) = template_spec.get("selector").filter(|s| !s.is_null()) {
        causes.push(selector_invalid(
            "spec.jobTemplate.spec.selector",
            selector,
            "`selector` will be auto-generated",
        ));
    }
    if template_spec.get("manualSelector").and_then(Value::as_bool) == Some(true) {
        causes.push(Cause::new(
            "spec.jobTemplate.spec.manualSelector",
            "FieldValueNotSupported",
            "Unsupported value: true: supported values: \"nil\", \"false\"".into(),
        ));
    }
    for field in ["successfulJobsHistoryLimit", "failedJobsHistoryLimit"] {
        non_negative(spec, field, "spec", causes);
    }
}

/// What only a CronJob's create checks (`ValidateCronJobCreate`): a name
/// leaving room for the 11 characters its Jobs' names add.
pub(super) fn cron_job_create(object: &Value, causes: &mut Vec<Cause>) {
    let name = text(object, "/metadata/name");
    if name.len() > 52 {
        causes.push(names::invalid(
            "metadata.name",
            name,
            "must be no more than 52 characters".into(),
        ));
    }
}

/// `validateTimeZone`: an IANA name the time zone database knows.
fn time_zone_causes(zone: &str, causes: &mut Vec<Cause>) {
    let field = "spec.timeZone";
    if zone.is_empty() {
        causes.push(names::invalid(
            field,
            zone,
            "timeZone must be nil or non-empty string".into(),
        ));
        return;
    }
    let part_ok = |part: &str| {
        part != "."
            && part != ".."
            && !part.starts_with('-')
            && (1..=14).contains(&part.len())
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-_+".contains(c))
    };
    let unknown = || names::invalid(field, zone, format!("unknown time zone {zone}"));
    if !zone.split('/').all(part_ok) {
        causes.push(unknown());
        return;
    }
    if zone.eq_ignore_ascii_case("Local") {
        causes.push(names::invalid(
            field,
            zone,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"
                .into(),
        ));
    }
    // `time.LoadLocation` takes "UTC" and "Local" without a lookup.
    if zone != "UTC" && zone != "Local" && jiff::tz::db().get(zone).is_err() {
        causes.push(unknown());
    }
}

/// robfig/cron (v3)'s `ParseStandard`: five fields (minute, hour, day of
/// month, month, day of week) or a descriptor, with its error messages.
mod cron {
    /// A field's bounds and names.
    struct Bounds {
        min: i64,
        max: i64,
        names: &'static [&'static str],
    }

    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

    const FIELDS: [Bounds; 5] = [
        Bounds {
            min: 0,
            max: 59,
            names: &[],
        },
        Bounds {
            min: 0,
            max: 23,
            names: &[],
        },
        Bounds {
            min: 1,
            max: 31,
            names: &[],
        },
        Bounds {
            min: 1,
            max: 12,
            names: &MONTHS,
        },
        Bounds {
            min: 0,
            max: 6,
            names: &DAYS,
        },
    ];

    pub(super) fn parse_standard(spec: &str) -> Result<(), String> {
        let mut spec = spec;
        if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
            // The zone itself is the time zone database's to know; a
            // schedule with one is refused for its `TZ` anyway.
            let Some(space) = spec.find(' ') else {
                return Ok(());
            };
            spec = spec[space..].trim();
        }
        if spec.starts_with('@') {
            return descriptor(spec);
        }
        let fields: Vec<&str> = spec.split_whitespace().collect();
        if fields.len() != 5 {
            return Err(format!(
                "expected exactly 5 fields, found {}: [{}]",
                fields.len(),
                fields.join(" ")
            ));
        }
        for (field, bounds) in fields.iter().zip(&FIELDS) {
            for range in field.split(',') {
                range_of(range, bounds)?;
            }
        }
        Ok(())
    }

    fn descriptor(spec: &str) -> Result<(), String> {
        const KNOWN: [&str; 7] = [
            "@yearly",
            "@annually",
            "@monthly",
            "@weekly",
            "@daily",
            "@midnight",
            "@hourly",
        ];
        if KNOWN.contains(&spec) {
            return Ok(());
        }
        if let Some(duration) = spec.strip_prefix("@every ") {
            return go_duration(duration)
                .map_err(|why| format!("failed to parse duration {spec}: {why}"));
        }
        Err(format!("unrecognized descriptor: {spec}"))
    }

    /// `getRange`: `*` or `?`, a number or name, or a range, each with an
    /// optional step.
    fn range_of(expr: &str, bounds: &Bounds) -> Result<(), String> {
        let range_and_step: Vec<&str> = expr.split('/').collect();
        let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
        let single = low_and_high.len() == 1;
        let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
            (bounds.min, bounds.max)
        } else {
            let start = int_or_name(low_and_high[0], bounds.names)?;
            let end = match low_and_high.len() {
                1 => start,
                2 => int_or_name(low_and_high[1], bounds.names)?,
                _ => return Err(format!("too many hyphens: {expr}")),
            };
            (start, end)
        };
        let step = match range_and_step.len() {
            1 => 1,
            2 => {
                let step = must_parse_int(range_and_step[1])?;
                if single && low_and_high[0] != "*" && low_and_high[0] != "?" {
                    end = bounds.max;
                }
                step
            }
            _ => return Err(format!("too many slashes: {expr}")),
        };
        if start < bounds.min {
            return Err(format!(
                "beginning of range ({start}) below minimum ({}): {expr}",
                bounds.min
            ));
        }
        if end > bounds.max {
            return Err(format!(
                "end of range ({end}) above maximum ({}): {expr}",
                bounds.max
            ));
        }
        if start > end {
            return Err(format!(
                "beginning of range ({start}) beyond end of range ({end}): {expr}"
            ));
        }
        if step == 0 {
            return Err(format!("step of range should be a positive number: {expr}"));
        }
        Ok(())
    }

    fn int_or_name(expr: &str, names: &[&str]) -> Result<i64, String> {
        let lower = expr.to_ascii_lowercase();
        if let Some(i) = names.iter().position(|n| *n == lower) {
            // Months count from 1, days from 0.
            let first = if names.len() == 12 { 1 } else { 0 };
            return Ok(i as i64 + first);
        }
        must_parse_int(expr)
    }

    /// `mustParseInt`, with `strconv.Atoi`'s error.
    fn must_parse_int(expr: &str) -> Result<i64, String> {
        let digits = expr.strip_prefix(['+', '-']).unwrap_or(expr);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!(
                "failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: invalid syntax"
            ));
        }
        let Ok(number) = expr.parse::<i64>() else {
            return Err(format!(
                "failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: value out of range"
            ));
        };
        if number < 0 {
            return Err(format!("negative number ({number}) not allowed: {expr}"));
        }
        Ok(number)
    }

    /// Whether Go's `time.ParseDuration` reads `text`, with its error.
    fn go_duration(text: &str) -> Result<(), String> {
        let invalid = || format!("time: invalid duration {text:?}");
        let mut rest = text.strip_prefix(['+', '-']).unwrap_or(text);
        if rest == "0" {
            return Ok(());
        }
        if rest.is_empty() {
            return Err(invalid());
        }
        while !rest.is_empty() {
            let number = rest
                .find(|c: char| !c.is_ascii_digit() && c != '.')
                .unwrap_or(rest.len());
            let (digits, tail) = rest.split_at(number);
            if digits.is_empty() || digits == "." || digits.matches('.').count() > 1 {
                return Err(invalid());
            }
            let unit = tail
                .find(|c: char| c.is_ascii_digit() || c == '.')
                .unwrap_or(tail.len());
            let (unit, tail) = tail.split_at(unit);
            if unit.is_empty() {
                return Err(format!("time: missing unit in duration {text:?}"));
            }
            if !["ns", "us", "µs", "μs", "ms", "s", "m", "h"].contains(&unit) {
                return Err(format!("time: unknown unit {unit:?} in duration {text:?}"));
            }
            rest = tail;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UID: &str = "0b5c3a0e-1111-2222-3333-444455556666";

    fn messages(found: &[Cause]) -> Vec<String> {
        found.iter().map(Cause::message).collect()
    }

    /// A Job as the server has it before its selector is generated.
    fn job_of(spec: Value) -> Value {
        json!({"metadata": {"name": "pi", "namespace": "default", "uid": UID}, "spec": spec})
    }

    fn container() -> Value {
        json!([{"name": "pi", "image": "perl", "imagePullPolicy": "IfNotPresent",
            "terminationMessagePolicy": "File"}])
    }

    fn template(restart: &str) -> Value {
        json!({"spec": {"restartPolicy": restart, "dnsPolicy": "ClusterFirst", "containers": container()}})
    }

    /// Generates the selector, then validates the create.
    fn create(mut job: Value) -> Vec<String> {
        let shared = job_labels_shared(&job);
        generate_selector(&mut job, shared);
        let mut found = Vec::new();
        job_validate(&job, None, &mut found);
        messages(&found)
    }

    fn job_validate(job: &Value, old: Option<&Value>, found: &mut Vec<Cause>) {
        super::job(job, old, found);
    }

    #[test]
    fn a_created_job_gets_its_selector_and_both_generations_of_labels() {
        let mut job = job_of(json!({"template": template("Never")}));
        let shared = job_labels_shared(&job);
        generate_selector(&mut job, shared);
        assert_eq!(
            job["spec"]["template"]["metadata"]["labels"],
            json!({"job-name": "pi", "batch.kubernetes.io/job-name": "pi",
                "controller-uid": UID, "batch.kubernetes.io/controller-uid": UID})
        );
        assert_eq!(
            job["spec"]["selector"],
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": UID}})
        );
        // The Job had no labels and its template none: its own stay unset.
        assert!(job.pointer("/metadata/labels").is_none());
        let mut found = Vec::new();
        super::job(&job, None, &mut found);
        assert_eq!(messages(&found), Vec::<String>::new());
    }

    #[test]
    fn a_job_without_labels_shares_its_templates_and_one_with_labels_keeps_its_own() {
        let mut spec = json!({"template": template("Never")});
        spec["template"]["metadata"] = json!({"labels": {"app": "pi", "job-name": "mine"}});
        let mut job = job_of(spec.clone());
        let shared = job_labels_shared(&job);
        generate_selector(&mut job, shared);
        let expected = json!({"app": "pi", "job-name": "mine", "batch.kubernetes.io/job-name": "pi",
            "controller-uid": UID, "batch.kubernetes.io/controller-uid": UID});
        assert_eq!(job["spec"]["template"]["metadata"]["labels"], expected);
        assert_eq!(job["metadata"]["labels"], expected);
        let mut own = job_of(spec);
        own["metadata"]["labels"] = json!({"team": "a"});
        let shared = job_labels_shared(&own);
        generate_selector(&mut own, shared);
        assert_eq!(own["metadata"]["labels"], json!({"team": "a"}));
    }

    #[test]
    fn a_manual_selector_generates_nothing_and_must_match_the_template() {
        let mut spec = json!({"manualSelector": true, "selector": {"matchLabels": {"app": "x"}},
            "template": template("OnFailure")});
        spec["template"]["metadata"] = json!({"labels": {"app": "y"}});
        let job = job_of(spec);
        let mut generated = job.clone();
        generate_selector(&mut generated, true);
        assert_eq!(generated, job);
        assert_eq!(
            create(job),
            [
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"y\"}: `selector` does not match template `labels`"
            ]
        );
        let mut none = job_of(json!({"manualSelector": true, "template": template("Never")}));
        none["spec"]["template"]["metadata"] = json!({"labels": {"app": "y"}});
        assert_eq!(
            create(none),
            [
                "spec.selector: Required value",
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"y\"}: `selector` does not match template `labels`",
            ]
        );
    }

    #[test]
    fn a_generated_selector_needs_the_generated_labels() {
        let mut spec = json!({"selector": {"matchLabels": {"controller-uid": "other"}},
            "template": template("Never")});
        spec["template"]["metadata"] = json!({"labels": {"controller-uid": "other"}});
        let found = create(job_of(spec));
        assert_eq!(
            found,
            [
                format!(
                    "spec.template.metadata.labels[controller-uid]: Invalid value: map[string]string{{\"batch.kubernetes.io/controller-uid\":\"{UID}\", \"batch.kubernetes.io/job-name\":\"pi\", \"controller-uid\":\"other\", \"job-name\":\"pi\"}}: must be '{UID}'"
                ),
                format!(
                    "spec.selector: Invalid value: v1.LabelSelector{{MatchLabels:map[string]string{{\"batch.kubernetes.io/controller-uid\":\"{UID}\", \"controller-uid\":\"other\"}}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}}: `selector` not auto-generated"
                ),
            ]
        );
        // An update of a Job made before the prefixed labels needs only
        // the legacy ones.
        let mut legacy = job_of(json!({"manualSelector": false,
            "selector": {"matchLabels": {"controller-uid": UID}}, "template": template("Never")}));
        legacy["spec"]["template"]["metadata"] =
            json!({"labels": {"controller-uid": UID, "job-name": "pi"}});
        let mut found = Vec::new();
        super::job(&legacy, Some(&legacy.clone()), &mut found);
        assert!(found.is_empty(), "{found:?}");
        super::job(&legacy, None, &mut found);
        assert_eq!(
            messages(&found),
            [
                format!("spec.template.metadata.labels[batch.kubernetes.io/controller-uid]: Required value: must be '{UID}'"),
                "spec.template.metadata.labels[batch.kubernetes.io/job-name]: Required value: must be 'pi'".to_string(),
            ]
        );
    }

    #[test]
    fn counts_are_not_negative_and_the_restart_policy_is_on_failure_or_never() {
        let spec = json!({"parallelism": -1, "completions": -2, "activeDeadlineSeconds": -3,
            "backoffLimit": -4, "ttlSecondsAfterFinished": -5, "template": template("Always")});
        assert_eq!(
            create(job_of(spec)),
            [
                "spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
                "spec.completions: Invalid value: -2: must be greater than or equal to 0",
                "spec.activeDeadlineSeconds: Invalid value: -3: must be greater than or equal to 0",
                "spec.backoffLimit: Invalid value: -4: must be greater than or equal to 0",
                "spec.ttlSecondsAfterFinished: Invalid value: -5: must be greater than or equal to 0",
                "spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"",
            ]
        );
        let mut unset = template("Never");
        unset["spec"]
            .as_object_mut()
            .unwrap()
            .remove("restartPolicy");
        assert_eq!(
            create(job_of(json!({"template": unset}))),
            [
                "spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""
            ]
        );
        assert_eq!(
            create(job_of(json!({"template": template("Sometimes")}))),
            [
                "spec.template.spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"",
                "spec.template.spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"OnFailure\", \"Never\"",
            ]
        );
    }

    #[test]
    fn the_template_is_validated_as_a_pod_template() {
        let mut spec = json!({"template": template("Never")});
        spec["template"]["spec"]["containers"][0]["image"] = json!("");
        spec["template"]["spec"]["ephemeralContainers"] = json!([{"name": "debug", "image": "b"}]);
        assert_eq!(
            create(job_of(spec)),
            [
                "spec.template.spec.containers[0].image: Required value",
                "spec.template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template",
            ]
        );
    }

    #[test]
    fn completion_modes_and_indexed_limits() {
        let spec = json!({"completionMode": "Sometimes", "backoffLimitPerIndex": 1,
            "maxFailedIndexes": 2, "template": template("Never")});
        assert_eq!(
            create(job_of(spec)),
            [
                "spec.completionMode: Unsupported value: \"Sometimes\": supported values: \"NonIndexed\", \"Indexed\"",
            ]
        );
        let spec = json!({"completionMode": "Indexed", "parallelism": 100_001,
            "maxFailedIndexes": 3, "template": template("Never")});
        assert_eq!(
            create(job_of(spec)),
            [
                "spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
                "spec.completions: Required value: when completion mode is Indexed",
                "spec.parallelism: Invalid value: 100001: must be less than or equal to 100000 when completion mode is Indexed",
            ]
        );
        let spec = json!({"completionMode": "NonIndexed", "backoffLimitPerIndex": 1,
            "maxFailedIndexes": 2, "template": template("Never")});
        assert_eq!(
            create(job_of(spec)),
            [
                "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
                "spec.maxFailedIndexes: Invalid value: 2: requires indexed completion mode",
            ]
        );
        // An Indexed Job's last pod's hostname is a DNS label.
        let mut long = job_of(json!({"completionMode": "Indexed", "completions": 10,
            "template": template("Never")}));
        let name = "a".repeat(62);
        long["metadata"]["name"] = json!(name);
        let found = create(long);
        assert_eq!(
            found.last().unwrap(),
            &format!(
                "metadata.name: Invalid value: \"{name}\": will not able to create pod with invalid DNS label: {name}-9"
            )
        );
    }

    #[test]
    fn a_success_policy_needs_an_indexed_job_and_well_formed_rules() {
        let non_indexed = json!({"template": template("Never"), "completions": 3,
            "successPolicy": {"rules": [{"succeededCount": 1}]}});
        assert_eq!(
            create(job_of(non_indexed)),
            [
                "spec.successPolicy: Invalid value: batch.SuccessPolicy{...}: requires indexed completion mode"
            ]
        );
        let indexed = |policy: Value| {
            json!({"template": template("Never"), "completions": 5,
                   "completionMode": "Indexed", "parallelism": 1, "successPolicy": policy})
        };
        assert_eq!(
            create(job_of(indexed(json!({"rules": []})))),
            [
                "spec.successPolicy.rules: Required value: at least one rules must be specified when the successPolicy is specified"
            ]
        );
        assert_eq!(
            create(job_of(indexed(json!({"rules": [{}]})))),
            [
                "spec.successPolicy.rules[0]: Required value: at least one of succeededCount or succeededIndexes must be specified"
            ]
        );
        assert_eq!(
            create(job_of(indexed(
                json!({"rules": [{"succeededIndexes": "0,2-3", "succeededCount": 4}]})
            ))),
            [
                "spec.successPolicy.rules[0].succeededCount: Invalid value: 4: must be less than or equal to 3 (the number of indexes in the specified succeededIndexes field)"
            ]
        );
        assert_eq!(
            create(job_of(indexed(json!({"rules": [{"succeededCount": 6}]})))),
            [
                "spec.successPolicy.rules[0].succeededCount: Invalid value: 6: must be less than or equal to 5 (the number of specified completions)"
            ]
        );
        for (indexes, error) in [
            (
                "1-2-3",
                "the fragment \"1-2-3\" violates the requirement that an index interval can have at most two parts separated by '-'",
            ),
            ("a", "cannot convert string to integer for index: \"a\""),
            ("5", "too large index: \"5\""),
            ("3-1", "non-increasing order, previous: 3, current: 1"),
            ("2,1", "non-increasing order, previous: 2, current: 1"),
        ] {
            assert_eq!(
                create(job_of(indexed(
                    json!({"rules": [{"succeededIndexes": indexes}]})
                ))),
                [format!(
                    "spec.successPolicy.rules[0].succeededIndexes: Invalid value: {indexes:?}: error parsing succeededIndexes: {error}"
                )]
            );
        }
        assert!(
            create(job_of(indexed(
                json!({"rules": [{"succeededIndexes": "0,2-4"}]})
            )))
            .is_empty()
        );
    }

    #[test]
    fn pod_failure_and_replacement_policies() {
        let spec = json!({"template": template("OnFailure"), "podReplacementPolicy": "TerminatingOrFailed",
        "podFailurePolicy": {"rules": [
            {"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [3, 0, 3],
                "containerName": "nope"}},
            {"action": "", "onPodConditions": [{"type": "DisruptionTarget", "status": "Maybe"}],
                "onExitCodes": {"operator": "Between", "values": []}},
            {"action": "Ignore"},
        ]}});
        assert_eq!(
            create(job_of(spec)),
            [
                "spec.podFailurePolicy.rules[0].action: Invalid value: \"FailIndex\": requires the backoffLimitPerIndex to be set",
                "spec.podFailurePolicy.rules[0].onExitCodes.containerName: Invalid value: \"nope\": must be one of the container or initContainer names in the pod template",
                "spec.podFailurePolicy.rules[0].onExitCodes.values[1]: Invalid value: 0: must not be 0 for the In operator",
                "spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value: 3",
                "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{3, 0, 3}: must be ordered",
                "spec.podFailurePolicy.rules[1].action: Required value: valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]",
                "spec.podFailurePolicy.rules[1].onExitCodes.operator: Unsupported value: \"Between\": supported values: \"In\", \"NotIn\"",
                "spec.podFailurePolicy.rules[1].onExitCodes.values: Invalid value: []int32{}: at least one value is required",
                "spec.podFailurePolicy.rules[1].onPodConditions[0].status: Unsupported value: \"Maybe\": supported values: \"False\", \"True\", \"Unknown\"",
                "spec.podFailurePolicy.rules[1]: Invalid value: specifying both OnExitCodes and OnPodConditions is not supported",
                "spec.podFailurePolicy.rules[2]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
                "spec.podReplacementPolicy: Unsupported value: \"TerminatingOrFailed\": supported values: \"Failed\"",
                "spec.template.spec.restartPolicy: Invalid value: \"OnFailure\": only \"Never\" is supported when podFailurePolicy is specified",
            ]
        );
    }

    #[test]
    fn managed_by_is_a_short_domain_prefixed_path() {
        let spec = json!({"managedBy": "kueue", "template": template("Never")});
        assert_eq!(
            create(job_of(spec)),
            [
                "spec.managedBy: Invalid value: \"kueue\": must be a domain-prefixed path (such as \"acme.io/foo\")"
            ]
        );
        let spec = json!({"managedBy": "kueue.x-k8s.io/manager", "template": template("Never")});
        assert!(create(job_of(spec)).is_empty());
    }

    /// A created Job, its selector generated.
    fn stored(spec: Value) -> Value {
        let mut job = job_of(spec);
        generate_selector(&mut job, false);
        job
    }

    fn update(new: &Value, old: &Value) -> Vec<String> {
        let mut found = Vec::new();
        job_update(new, old, &mut found);
        messages(&found)
    }

    #[test]
    fn an_update_keeps_completions_selector_template_and_modes() {
        let old = stored(
            json!({"completions": 3, "parallelism": 1, "backoffLimitPerIndex": 1,
            "completionMode": "NonIndexed", "template": template("Never")}),
        );
        assert!(update(&old, &old).is_empty());
        let mut new = old.clone();
        new["spec"]["completions"] = json!(5);
        new["spec"]["selector"] = json!({"matchLabels": {"a": "b"}});
        new["spec"]["template"]["spec"]["containers"][0]["image"] = json!("perl:5");
        new["spec"]["completionMode"] = json!("Indexed");
        new["spec"]
            .as_object_mut()
            .unwrap()
            .remove("backoffLimitPerIndex");
        new["spec"]["podFailurePolicy"] = json!({"rules": []});
        assert_eq!(
            update(&new, &old),
            [
                "spec.completions: Invalid value: 5: can only be modified in tandem with spec.parallelism",
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"a\":\"b\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable",
                "spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable",
                "spec.completionMode: Invalid value: \"Indexed\": field is immutable",
                "spec.podFailurePolicy: Invalid value: batch.PodFailurePolicy{...}: field is immutable",
                "spec.backoffLimitPerIndex: Invalid value: \"null\": field is immutable",
            ]
        );
        let mut fewer = old.clone();
        fewer["spec"]["completions"] = json!(2);
        assert_eq!(
            update(&fewer, &old),
            ["spec.completions: Invalid value: 2: field is immutable"]
        );
    }

    #[test]
    fn a_suspended_job_never_started_may_change_its_templates_scheduling() {
        let mut old = stored(json!({"suspend": true, "template": template("Never")}));
        let mut new = old.clone();
        new["spec"]["template"]["spec"]["nodeSelector"] = json!({"zone": "a"});
        new["spec"]["template"]["spec"]["tolerations"] =
            json!([{"key": "k", "operator": "Exists"}]);
        new["spec"]["template"]["metadata"]["annotations"] = json!({"note": "x"});
        assert!(update(&new, &old).is_empty());
        old["status"] = json!({"startTime": "2026-01-01T00:00:00Z"});
        assert_eq!(
            update(&new, &old),
            ["spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable"]
        );
    }

    fn cron_job_of(spec: Value) -> Value {
        json!({"metadata": {"name": "nightly"}, "spec": spec})
    }

    fn cron_messages(object: &Value, old: Option<&Value>) -> Vec<String> {
        let mut found = Vec::new();
        cron_job(object, old, &mut found);
        if old.is_none() {
            cron_job_create(object, &mut found);
        }
        messages(&found)
    }

    #[test]
    fn a_cron_jobs_spec_and_name() {
        let ok = cron_job_of(json!({"schedule": "*/5 1-3 * jan-mar mon,fri",
            "concurrencyPolicy": "Allow", "jobTemplate": {"spec": {"template": template("OnFailure")}}}));
        assert!(cron_messages(&ok, None).is_empty());
        let mut bad = cron_job_of(json!({"schedule": "", "startingDeadlineSeconds": -1,
            "concurrencyPolicy": "Sometimes", "successfulJobsHistoryLimit": -2,
            "failedJobsHistoryLimit": -3,
            "jobTemplate": {"spec": {"manualSelector": true, "selector": {"matchLabels": {"a": "b"}},
                "backoffLimit": -1, "template": template("Always")}}}));
        let name = "n".repeat(53);
        bad["metadata"]["name"] = json!(name);
        assert_eq!(
            cron_messages(&bad, None),
            [
                "spec.schedule: Required value".to_string(),
                "spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0".into(),
                "spec.concurrencyPolicy: Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\"".into(),
                "spec.jobTemplate.spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0".into(),
                "spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"".into(),
                "spec.jobTemplate.spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"a\":\"b\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` will be auto-generated".into(),
                "spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: \"nil\", \"false\"".into(),
                "spec.successfulJobsHistoryLimit: Invalid value: -2: must be greater than or equal to 0".into(),
                "spec.failedJobsHistoryLimit: Invalid value: -3: must be greater than or equal to 0".into(),
                format!("metadata.name: Invalid value: \"{name}\": must be no more than 52 characters"),
            ]
        );
        // An update does not check the name's length.
        assert!(
            !cron_messages(&bad, Some(&bad))
                .iter()
                .any(|m| m.starts_with("metadata.name"))
        );
    }

    #[test]
    fn schedules_parse_as_robfig_crons_standard_parser_does() {
        for ok in [
            "0 0 * * *",
            "@hourly",
            "@every 1h30m",
            "*/15 * ? * SUN-SAT",
            "5 4 1,15 * 0",
        ] {
            assert_eq!(cron::parse_standard(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
            ("60 * * * *", "end of range (60) above maximum (59): 60"),
            ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
            (
                "5-1 * * * *",
                "beginning of range (5) beyond end of range (1): 5-1",
            ),
            (
                "x * * * *",
                "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax",
            ),
            (
                "*/0 * * * *",
                "step of range should be a positive number: */0",
            ),
            ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
            ("@weekdays", "unrecognized descriptor: @weekdays"),
            (
                "@every 1x",
                "failed to parse duration @every 1x: time: unknown unit \"x\" in duration \"1x\"",
            ),
        ] {
            assert_eq!(cron::parse_standard(bad), Err(why.to_string()), "{bad}");
        }
        let tz = cron_job_of(
            json!({"schedule": "TZ=UTC 0 0 * * *", "concurrencyPolicy": "Allow",
            "jobTemplate": {"spec": {"template": template("Never")}}}),
        );
        assert_eq!(
            cron_messages(&tz, None),
            [
                "spec.schedule: Invalid value: \"TZ=UTC 0 0 * * *\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
            ]
        );
        assert!(cron_messages(&tz, Some(&tz)).is_empty());
    }

    #[test]
    fn a_time_zone_is_an_iana_name() {
        let with_zone = |zone: &str| {
            cron_job_of(
                json!({"schedule": "0 0 * * *", "timeZone": zone, "concurrencyPolicy": "Forbid",
                "jobTemplate": {"spec": {"template": template("Never")}}}),
            )
        };
        assert!(cron_messages(&with_zone("Europe/Berlin"), None).is_empty());
        assert!(cron_messages(&with_zone("UTC"), None).is_empty());
        assert_eq!(
            cron_messages(&with_zone(""), None),
            ["spec.timeZone: Invalid value: \"\": timeZone must be nil or non-empty string"]
        );
        assert_eq!(
            cron_messages(&with_zone("Mars/Olympus"), None),
            ["spec.timeZone: Invalid value: \"Mars/Olympus\": unknown time zone Mars/Olympus"]
        );
        assert_eq!(
            cron_messages(&with_zone("local"), None),
            [
                "spec.timeZone: Invalid value: \"local\": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
                "spec.timeZone: Invalid value: \"local\": unknown time zone local"
            ]
        );
    }
}
