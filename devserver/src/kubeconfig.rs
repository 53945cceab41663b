//! The kubeconfig the dev server writes for kubectl and for kube-client.
//!
//! It is JSON (a subset of YAML, which kubectl and kube-client both read) with
//! one cluster, one user (a bearer token) and one current context, all named
//! `recon-dev`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;

/// Render a kubeconfig for `server` (e.g. `https://127.0.0.1:6443`).
///
/// `ca_pem` is the CA certificate in PEM (absent for plain HTTP); it is stored
/// base64-encoded in `certificate-authority-data`.
pub fn render(server: &str, ca_pem: Option<&str>, token: &str) -> String {
    let mut cluster = json!({ "server": server });
    if let Some(pem) = ca_pem {
        cluster["certificate-authority-data"] = json!(STANDARD.encode(pem));
    }
    let doc = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{ "name": "recon-dev", "cluster": cluster }],
        "users": [{ "name": "recon-dev", "user": { "token": token } }],
        "contexts": [{
            "name": "recon-dev",
            "context": { "cluster": "recon-dev", "user": "recon-dev", "namespace": "default" }
        }],
        "current-context": "recon-dev",
        "preferences": {}
    });
    let mut text = serde_json::to_string_pretty(&doc).expect("a JSON value always serializes");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubeconfig_has_server_ca_and_token() {
        let text = render("https://127.0.0.1:1", Some("PEM"), "tok");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["current-context"], "recon-dev");
        assert_eq!(v["clusters"][0]["cluster"]["server"], "https://127.0.0.1:1");
        assert_eq!(
            v["clusters"][0]["cluster"]["certificate-authority-data"],
            "UEVN"
        );
        assert_eq!(v["users"][0]["user"]["token"], "tok");
        let plain = render("http://127.0.0.1:1", None, "tok");
        assert!(!plain.contains("certificate-authority-data"));
    }
}
