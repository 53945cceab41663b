//! The `host` binary's `inspect`: a guest's manifest as JSON, or a clear
//! error and a non-zero exit for files that are not controller components.

mod guests;

use std::process::{Command, Output, Stdio};

fn inspect(path: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_host"))
        .arg("inspect")
        .arg(path)
        .env("RECON_CACHE_DIR", guests::cache_dir())
        .stdin(Stdio::null())
        .output()
        .expect("run host inspect")
}

#[test]
fn inspect_prints_the_manifest_as_json() {
    let out = inspect(&guests::guest_wasm("sample_controller"));
    assert!(out.status.success(), "{out:?}");
    let manifest: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(manifest["name"], "sample-controller");
    assert_eq!(manifest["primary"]["group"], "samplecontroller.k8s.io");
    assert_eq!(manifest["primary"]["kind"], "Foo");
    assert_eq!(manifest["owns"][0]["kind"], "Deployment");
    let writes = manifest["writes"].as_array().expect("writes");
    assert!(
        writes
            .iter()
            .any(|w| w["kind"]["kind"] == "Foo"
                && w["verbs"] == serde_json::json!(["update-status"])),
        "{writes:?}"
    );
}

#[test]
fn inspect_refuses_what_is_not_a_controller_component() {
    let dir = std::env::temp_dir().join(format!("recon-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        ("notes.txt", b"hello".to_vec(), "not a WebAssembly file"),
        (
            "module.wasm",
            wat::parse_str("(module)").unwrap(),
            "core WebAssembly module, not a component",
        ),
        (
            "other-world.wasm",
            wat::parse_str("(component)").unwrap(),
            "does not target the world recon:controller/controller@0.1.0",
        ),
    ];
    for (name, bytes, expected) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = inspect(&path);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(out.stdout.is_empty(), "{name}: nothing on stdout");
        assert!(stderr.contains(expected), "{name}: {stderr}");
        assert!(
            stderr.contains(name),
            "{name}: the error names the file: {stderr}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
