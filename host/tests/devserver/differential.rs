//! The differential suite: request/response cases, each written from what
//! a real kube-apiserver answers (its code or documentation, named in the
//! case's `server`), run against a fresh dev server each. The cases are in
//! `differential/*.yaml`, one file per area (requests, server-side apply,
//! custom resources, built-in validation, the further kinds).
//!
//! A case is a list of steps; a step sends one request and checks what it
//! may: the status, a `subset` of the JSON body (objects by member, arrays
//! element by element, scalars equal), pointers that must be `absent`,
//! headers that must be present. A string `${N/pointer}` in a body or path
//! is the value at `pointer` in step N's answer (a resourceVersion, say);
//! `<any>` in a subset matches any value.

use http::{Method, StatusCode};
use recon_devserver::DevServerHandle;
use serde::Deserialize;
use serde_json::Value;

use super::http_client::{call_accepting, call_text};

#[derive(Debug, Deserialize)]
pub struct Case {
    pub name: String,
    /// What kube-apiserver answers, and where its code or docs say so.
    pub server: String,
    pub steps: Vec<Step>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// `METHOD /path?query`.
    pub request: String,
    #[serde(default)]
    pub body: Option<Value>,
    /// A body sent as it is (YAML, say), instead of `body`.
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub content_type: Option<String>,
    #[serde(default)]
    pub accept: Option<String>,
    #[serde(default)]
    pub status: Option<u16>,
    #[serde(default)]
    pub subset: Option<Value>,
    #[serde(default)]
    pub absent: Vec<String>,
    /// Headers whose value must be as given.
    #[serde(default)]
    pub headers: Vec<(String, String)>,
}

/// The cases of every `differential/*.yaml`, file by file in name order.
pub fn cases() -> Vec<Case> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/devserver/differential");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no cases in {}", dir.display());
    let mut cases = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a readable case file");
        let mut these: Vec<Case> =
            serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        cases.append(&mut these);
    }
    cases
}

/// Runs one case against `h`; every mismatch, described.
pub async fn run(h: &DevServerHandle, case: &Case) -> Vec<String> {
    let mut answers: Vec<Value> = Vec::new();
    let mut failures = Vec::new();
    for (n, step) in case.steps.iter().enumerate() {
        let (method, path) = step
            .request
            .split_once(' ')
            .expect("a request is `METHOD /path`");
        let method: Method = method.parse().expect("an HTTP method");
        let path = substitute(&Value::String(path.into()), &answers);
        let path = path.as_str().expect("a path");
        let accept = step.accept.as_deref().unwrap_or("application/json");
        let reply = match &step.text {
            Some(text) => {
                let content_type = step.content_type.as_deref().unwrap_or("application/yaml");
                call_text(h, method, path, content_type, text).await
            }
            None => {
                let body = step.body.as_ref().map(|b| substitute(b, &answers));
                let content_type = step
                    .content_type
                    .as_deref()
                    .or(body.as_ref().map(|_| "application/json"));
                call_accepting(h, method, path, content_type, body, accept).await
            }
        };
        let at = format!("{} step {n} ({})", case.name, step.request);
        if let Some(status) = step.status
            && reply.status != StatusCode::from_u16(status).unwrap()
        {
            failures.push(format!(
                "{at}: status {} where the server answers {status}: {}",
                reply.status, reply.body
            ));
        }
        if let Some(subset) = &step.subset {
            let expected = substitute(subset, &answers);
            if let Err(why) = contains(&reply.body, &expected, "") {
                failures.push(format!("{at}: {why}\n  answer: {}", reply.body));
            }
        }
        for pointer in &step.absent {
            if let Some(value) = reply.body.pointer(pointer) {
                failures.push(format!("{at}: {pointer} is {value}, the server has none"));
            }
        }
        for (name, value) in &step.headers {
            let got = reply.headers.get(name).and_then(|v| v.to_str().ok());
            if got != Some(value.as_str()) {
                failures.push(format!("{at}: header {name} is {got:?}, not {value:?}"));
            }
        }
        answers.push(reply.body);
    }
    failures
}

/// `template` with every `${N/pointer}` replaced by the value at `pointer`
/// in answer N: a string that is one reference becomes that value (of any
/// type), references inside a longer string become its text.
fn substitute(template: &Value, answers: &[Value]) -> Value {
    match template {
        Value::String(s) => {
            if let Some(reference) = s.strip_prefix("${").and_then(|r| r.strip_suffix('}'))
                && !reference.contains("${")
            {
                return lookup(reference, answers);
            }
            let mut text = String::new();
            let mut rest = s.as_str();
            while let Some(start) = rest.find("${") {
                let end = start + rest[start..].find('}').expect("a closed reference");
                text.push_str(&rest[..start]);
                match lookup(&rest[start + 2..end], answers) {
                    Value::String(value) => text.push_str(&value),
                    value => text.push_str(&value.to_string()),
                }
                rest = &rest[end + 1..];
            }
            text.push_str(rest);
            Value::String(text)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| substitute(v, answers)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), substitute(v, answers)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The value a reference `N/pointer` names.
fn lookup(reference: &str, answers: &[Value]) -> Value {
    let (step, pointer) = reference.split_once('/').expect("${N/pointer}");
    let step: usize = step.parse().expect("a step number");
    answers[step]
        .pointer(&format!("/{pointer}"))
        .cloned()
        .unwrap_or_else(|| panic!("answer {step} has no /{pointer}: {}", answers[step]))
}

/// Whether `actual` holds `expected`: objects member by member, arrays
/// element by element (same length), scalars equal; `<any>` matches any
/// value.
fn contains(actual: &Value, expected: &Value, at: &str) -> Result<(), String> {
    match (actual, expected) {
        (_, Value::String(any)) if any == "<any>" => Ok(()),
        (Value::Object(a), Value::Object(e)) => {
            for (key, value) in e {
                let path = format!("{at}/{key}");
                match a.get(key) {
                    Some(got) => contains(got, value, &path)?,
                    None => return Err(format!("{path} is missing, the server has {value}")),
                }
            }
            Ok(())
        }
        (Value::Array(a), Value::Array(e)) if a.len() == e.len() => a
            .iter()
            .zip(e)
            .enumerate()
            .try_for_each(|(i, (got, value))| contains(got, value, &format!("{at}/{i}"))),
        _ if actual == expected => Ok(()),
        _ => Err(format!("{at} is {actual}, the server has {expected}")),
    }
}
