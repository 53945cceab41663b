//! Object names, and label and annotation keys and values, validated as
//! kube-apiserver validates an object's metadata (apimachinery's
//! `util/validation`): a name is an RFC 1123 subdomain for most kinds, a
//! label for Namespaces, a DNS-1035 label for Services, a path segment
//! for RBAC objects; label keys and annotation keys are qualified names,
//! label values at most 63 characters of a restricted set; annotations
//! total at most 256 KiB. Each problem is a cause of the write's 422, in
//! the server's words.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

use super::ResourceType;
use super::schema::Cause;

const DNS1123_LABEL: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_WITH_UNDERSCORE: &str =
    "_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*";
const DNS1035_LABEL: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const QUALIFIED_NAME: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const ENV_VAR_NAME: &str = "[-._a-zA-Z][-._a-zA-Z0-9]*";
const CONFIG_MAP_KEY: &str = "[-._a-zA-Z0-9]+";
const HTTP_HEADER_NAME: &str = "[-A-Za-z0-9]+";
const QUALIFIED_NAME_MESSAGE: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
/// The most bytes all of an object's annotations may take.
const ANNOTATIONS_LIMIT: usize = 256 * 1024;

fn whole(pattern: &str) -> Regex {
    Regex::new(&format!("^{pattern}$")).expect("a valid pattern")
}

static DNS1123_LABEL_RE: LazyLock<Regex> = LazyLock::new(|| whole(DNS1123_LABEL));
static DNS1123_SUBDOMAIN_RE: LazyLock<Regex> = LazyLock::new(|| whole(DNS1123_SUBDOMAIN));
static DNS1123_SUBDOMAIN_WITH_UNDERSCORE_RE: LazyLock<Regex> =
    LazyLock::new(|| whole(DNS1123_SUBDOMAIN_WITH_UNDERSCORE));
static DNS1035_LABEL_RE: LazyLock<Regex> = LazyLock::new(|| whole(DNS1035_LABEL));
static QUALIFIED_NAME_RE: LazyLock<Regex> = LazyLock::new(|| whole(QUALIFIED_NAME));
static LABEL_VALUE_RE: LazyLock<Regex> = LazyLock::new(|| whole(LABEL_VALUE));
static ENV_VAR_NAME_RE: LazyLock<Regex> = LazyLock::new(|| whole(ENV_VAR_NAME));
static CONFIG_MAP_KEY_RE: LazyLock<Regex> = LazyLock::new(|| whole(CONFIG_MAP_KEY));
static HTTP_HEADER_NAME_RE: LazyLock<Regex> = LazyLock::new(|| whole(HTTP_HEADER_NAME));

/// `RegexError`: the message, examples and the pattern.
fn regex_error(message: &str, pattern: &str, examples: &[&str]) -> String {
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{message} (e.g. {}regex used for validation is '{pattern}')",
        examples.join(" or ")
    )
}

fn max_length(limit: usize) -> String {
    format!("must be no more than {limit} characters")
}

/// A rule of the form `IsDNS1123Label`: too long, then not matching.
fn checked(
    value: &str,
    limit: usize,
    re: &Regex,
    message: &str,
    pattern: &str,
    examples: &[&str],
) -> Vec<String> {
    let mut problems = Vec::new();
    if value.len() > limit {
        problems.push(max_length(limit));
    }
    if !re.is_match(value) {
        problems.push(regex_error(message, pattern, examples));
    }
    problems
}

/// `IsDNS1123Subdomain`.
pub(super) fn dns1123_subdomain(value: &str) -> Vec<String> {
    checked(
        value,
        253,
        &DNS1123_SUBDOMAIN_RE,
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN,
        &["example.com"],
    )
}

/// `IsDNS1123SubdomainWithUnderscore`: a subdomain whose labels may hold
/// and start with `_` (a DNS search domain, `_sip._tcp.example.com`).
pub(super) fn dns1123_subdomain_with_underscore(value: &str) -> Vec<String> {
    checked(
        value,
        253,
        &DNS1123_SUBDOMAIN_WITH_UNDERSCORE_RE,
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN_WITH_UNDERSCORE,
        &["example.com"],
    )
}

/// `IsDNS1123Label`.
pub(super) fn dns1123_label(value: &str) -> Vec<String> {
    checked(
        value,
        63,
        &DNS1123_LABEL_RE,
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        DNS1123_LABEL,
        &["my-name", "123-abc"],
    )
}

/// `IsDNS1035Label`.
pub(super) fn dns1035_label(value: &str) -> Vec<String> {
    checked(
        value,
        63,
        &DNS1035_LABEL_RE,
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        DNS1035_LABEL,
        &["my-name", "abc-123"],
    )
}

/// `IsEnvVarName`: an environment variable's name (or an `envFrom`
/// prefix).
pub(super) fn env_var_name(value: &str) -> Vec<String> {
    let mut problems = checked(
        value,
        usize::MAX,
        &ENV_VAR_NAME_RE,
        "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit",
        ENV_VAR_NAME,
        &["my.env-name", "MY_ENV.NAME", "MyEnvName1"],
    );
    problems.extend(chdir_prefix(value));
    problems
}

/// `IsConfigMapKey`: a key of a ConfigMap's or Secret's data.
pub(super) fn config_map_key(value: &str) -> Vec<String> {
    let mut problems = checked(
        value,
        253,
        &CONFIG_MAP_KEY_RE,
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
        CONFIG_MAP_KEY,
        &["key.name", "KEY_NAME", "key-name"],
    );
    problems.extend(chdir_prefix(value));
    problems
}

/// `IsHTTPHeaderName`.
pub(super) fn http_header_name(value: &str) -> Vec<String> {
    checked(
        value,
        usize::MAX,
        &HTTP_HEADER_NAME_RE,
        "a valid HTTP header must consist of alphanumeric characters or '-'",
        HTTP_HEADER_NAME,
        &["X-Header-Name"],
    )
}

/// `hasChDirPrefix`: a name that would change directory.
fn chdir_prefix(value: &str) -> Option<String> {
    match value {
        "." => Some("must not be '.'".to_string()),
        ".." => Some("must not be '..'".to_string()),
        _ if value.starts_with("..") => Some("must not start with '..'".to_string()),
        _ => None,
    }
}

/// `path.IsValidPathSegmentName`.
pub(crate) fn path_segment(value: &str) -> Vec<String> {
    if value == "." || value == ".." {
        return vec![format!("may not be '{value}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|c| value.contains(*c))
        .map(|c| format!("may not contain '{c}'"))
        .collect()
}

/// The problems of `name` as a name of `rt`'s objects.
pub fn name_problems(rt: &ResourceType, name: &str) -> Vec<String> {
    // Every name is a path segment; the kind's own rule comes on top.
    let segment = path_segment(name);
    if !segment.is_empty() {
        return segment;
    }
    match (rt.group.as_str(), rt.plural.as_str()) {
        ("", "namespaces") => dns1123_label(name),
        ("", "services") => dns1035_label(name),
        ("rbac.authorization.k8s.io", _) => Vec::new(),
        _ => dns1123_subdomain(name),
    }
}

/// `IsQualifiedName`: `[prefix/]name`, the prefix a DNS subdomain.
pub(super) fn qualified_name(value: &str) -> Vec<String> {
    let examples = ["MyName", "my.name", "123-abc"];
    let parts: Vec<&str> = value.split('/').collect();
    let (prefix, name) = match parts.as_slice() {
        [name] => (None, *name),
        [prefix, name] => (Some(*prefix), *name),
        _ => {
            return vec![format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(QUALIFIED_NAME_MESSAGE, QUALIFIED_NAME, &examples)
            )];
        }
    };
    let mut problems = Vec::new();
    match prefix {
        Some("") => problems.push("prefix part must be non-empty".to_string()),
        Some(prefix) => problems.extend(
            dns1123_subdomain(prefix)
                .into_iter()
                .map(|p| format!("prefix part {p}")),
        ),
        None => {}
    }
    if name.is_empty() {
        problems.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        problems.push(format!("name part {}", max_length(63)));
    }
    if !QUALIFIED_NAME_RE.is_match(name) {
        problems.push(format!(
            "name part {}",
            regex_error(QUALIFIED_NAME_MESSAGE, QUALIFIED_NAME, &examples)
        ));
    }
    problems
}

pub(super) fn label_value(value: &str) -> Vec<String> {
    checked(
        value,
        63,
        &LABEL_VALUE_RE,
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE,
        &["MyValue", "my_value", "12345"],
    )
}

/// `field.Invalid` of a string value: `Invalid value: "VALUE": PROBLEM`.
pub(super) fn invalid(field: &str, value: &str, problem: String) -> Cause {
    Cause {
        field: field.to_string(),
        reason: "FieldValueInvalid",
        body: format!("Invalid value: {value:?}: {problem}"),
    }
}

/// The causes of an object's labels and annotations (and of its name when
/// `name` is given: a create's).
pub fn metadata_causes(
    rt: &ResourceType,
    meta: &Map<String, Value>,
    name: Option<&str>,
) -> Vec<Cause> {
    let mut causes = Vec::new();
    if let Some(name) = name {
        for problem in name_problems(rt, name) {
            causes.push(invalid("metadata.name", name, problem));
        }
    }
    let strings = |field: &str| {
        meta.get(field)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default()))
    };
    for (key, value) in strings("labels") {
        for problem in qualified_name(key) {
            causes.push(invalid("metadata.labels", key, problem));
        }
        for problem in label_value(value) {
            causes.push(invalid("metadata.labels", value, problem));
        }
    }
    let mut total = 0;
    for (key, value) in strings("annotations") {
        for problem in qualified_name(&key.to_ascii_lowercase()) {
            causes.push(invalid("metadata.annotations", key, problem));
        }
        total += key.len() + value.len();
    }
    if total > ANNOTATIONS_LIMIT {
        causes.push(Cause {
            field: "metadata.annotations".into(),
            reason: "FieldValueTooLong",
            body: format!("Too long: may not be more than {ANNOTATIONS_LIMIT} bytes"),
        });
    }
    causes
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::store::kinds::builtin_type as builtin;

    fn messages(rt: &ResourceType, meta: Value, name: Option<&str>) -> Vec<String> {
        metadata_causes(rt, meta.as_object().unwrap(), name)
            .iter()
            .map(Cause::message)
            .collect()
    }

    #[test]
    fn names_follow_each_kind_s_rule_in_the_server_s_words() {
        let cm = builtin("configmaps");
        assert!(name_problems(&cm, "my-config.v2").is_empty());
        assert_eq!(
            messages(&cm, json!({}), Some("My_Config")),
            [
                "metadata.name: Invalid value: \"My_Config\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ]
        );
        assert_eq!(
            name_problems(&builtin("namespaces"), "team.a"),
            [
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        assert_eq!(name_problems(&builtin("services"), "1web").len(), 1);
        assert!(name_problems(&builtin("services"), "web-1").is_empty());
        assert!(name_problems(&builtin("clusterroles"), "system:controller:Foo").is_empty());
        assert_eq!(
            name_problems(&builtin("roles"), "a/b"),
            ["may not contain '/'"]
        );
        assert_eq!(name_problems(&cm, ".."), ["may not be '..'"]);
        assert_eq!(
            name_problems(&cm, &"a".repeat(254)),
            ["must be no more than 253 characters"]
        );
    }

    #[test]
    fn labels_and_annotations_are_qualified_names_and_label_values() {
        let cm = builtin("configmaps");
        let good = json!({"labels": {"app.kubernetes.io/name": "web", "tier": "", "x_y": "A.b-1"},
                          "annotations": {"example.com/Note": "anything at all: ?!", "Z": ""}});
        assert!(messages(&cm, good, None).is_empty());
        let bad = json!({"labels": {"bad key": "ok", "example.com/": "v", "k": "not ok!"}});
        assert_eq!(
            messages(&cm, bad, None),
            [
                "metadata.labels: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                "metadata.labels: Invalid value: \"example.com/\": name part must be non-empty",
                "metadata.labels: Invalid value: \"example.com/\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                "metadata.labels: Invalid value: \"not ok!\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            ]
        );
        let long = json!({"labels": {"k": "v".repeat(64)}});
        assert_eq!(
            messages(&cm, long, None)[0],
            format!(
                "metadata.labels: Invalid value: \"{}\": must be no more than 63 characters",
                "v".repeat(64)
            )
        );
        let big = json!({"annotations": {"a": "x".repeat(ANNOTATIONS_LIMIT)}});
        assert_eq!(
            messages(&cm, big, None),
            ["metadata.annotations: Too long: may not be more than 262144 bytes"]
        );
    }
}
