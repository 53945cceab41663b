//! The `host` binary's `inspect`: a guest's manifest as JSON, or a clear
//! error and a non-zero exit for files that are not controller components;
//! the compiled-component cache it uses (`--cache-dir`, `RECON_CACHE_DIR`).

mod guests;

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
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

/// `inspect` says how large a component is, and warns when it is too large
/// for the ConfigMap route of docs/DEPLOYING.md (1 MiB).
#[test]
fn inspect_reports_the_size_and_warns_above_what_a_configmap_holds() {
    // The mirror with a 1 MiB custom section appended: still a valid
    // component, now too large.
    let mut padded = std::fs::read(guests::guest_wasm("configmap_mirror")).unwrap();
    let (name, payload) = (b"padding", vec![0u8; 1 << 20]);
    let size = name.len() + 1 + payload.len();
    padded.push(0); // custom section
    let mut rest = size;
    loop {
        let byte = (rest & 0x7f) as u8;
        rest >>= 7;
        padded.push(if rest == 0 { byte } else { byte | 0x80 });
        if rest == 0 {
            break;
        }
    }
    padded.push(name.len() as u8);
    padded.extend_from_slice(name);
    padded.extend_from_slice(&payload);
    let large = std::env::temp_dir().join(format!("recon-padded-{}.wasm", std::process::id()));
    std::fs::write(&large, padded).unwrap();

    for path in [
        guests::guest_wasm("sample_controller"),
        guests::guest_wasm("configmap_mirror"),
        large.clone(),
    ] {
        let guest = path.display();
        let size = std::fs::metadata(&path).unwrap().len();
        let out = inspect(&path);
        assert!(out.status.success(), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&format!("{size} bytes")), "{stderr}");
        let warned = stderr.contains("over the 1048576 bytes a ConfigMap holds");
        assert_eq!(warned, size > 1 << 20, "{guest} ({size} bytes): {stderr}");
    }
    let _ = std::fs::remove_file(large);
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
            "does not target the world recon:controller/controller@0.4.0",
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

/// The controller world's WIT, changed: `extra` adds an import the host
/// does not provide, `no-export` drops the `reconciler` export. Each is
/// written under `dir` as `NAME/controller.wit`, and comes with what a
/// component of it lacks, in the host's words.
fn other_worlds(dir: &Path) -> [(&'static str, PathBuf, &'static str); 2] {
    let wit = Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit/controller.wit");
    let wit = std::fs::read_to_string(wit).unwrap();
    let extra = wit.replace(
        "world controller {\n",
        "interface extra {\n    ping: func();\n}\n\nworld controller {\n    import extra;\n",
    );
    let no_export = wit.replace("    export reconciler;\n", "");
    assert!(extra != wit && no_export != wit, "the world's text moved");
    [
        (
            "extra",
            extra,
            "component imports instance `recon:controller/extra@0.4.0`",
        ),
        (
            "no-export",
            no_export,
            "no exported instance named `recon:controller/reconciler@0.4.0`",
        ),
    ]
    .map(|(name, text, lacks)| {
        let file = dir.join(name).join("controller.wit");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, text).unwrap();
        (name, file, lacks)
    })
}

/// `PROGRAM ARGS...`, which must succeed (scripts/bootstrap installs the
/// tool chains).
fn build(program: &str, args: &[&OsStr]) {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("run {program} (scripts/bootstrap installs it): {e}"));
    assert!(out.status.success(), "{program} {args:?}: {out:?}");
}

/// `inspect` refuses `wasm`, a component of another world, as it refuses a
/// Rust one: exit 1, the file and the world named, and `naming` (the
/// import it lacks or the export it misses) in the cause.
fn assert_other_world(wasm: &Path, naming: &str) {
    let out = inspect(wasm);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "{stderr}");
    let expected = format!(
        "{}: does not target the world recon:controller/controller@0.4.0: ",
        wasm.display()
    );
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(stderr.contains(naming), "{stderr}");
}

/// A Python component that imports what the host lacks, or exports no
/// reconciler, gets a Rust guest's load error: one contract, whatever tool
/// chain built the component.
#[test]
fn inspect_refuses_python_components_of_another_world() {
    let dir = fresh_dir("python-worlds");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    // The mirror where the world still exports the reconciler; a module
    // with nothing to export where it does not.
    let nothing = dir.join("nothing");
    std::fs::create_dir_all(&nothing).unwrap();
    std::fs::write(nothing.join("app.py"), "\"\"\"Exports nothing.\"\"\"\n").unwrap();
    let mirror = root.join("examples/configmap-mirror-py");
    let sdk = root.join("guest-sdk-python");
    for (world, wit, lacks) in other_worlds(&dir) {
        let wasm = dir.join(format!("{world}.wasm"));
        let app = if world == "extra" { &mirror } else { &nothing };
        let wit_dir = wit.parent().unwrap();
        build(
            "python3",
            &[
                "-c",
                "import sys; from componentize_py import script; \
                 sys.argv[0] = 'componentize-py'; sys.exit(script())",
                "-d",
                wit_dir.to_str().unwrap(),
                "-w",
                "controller",
                "componentize",
                "app",
                "-p",
                app.to_str().unwrap(),
                "-p",
                sdk.to_str().unwrap(),
                "-o",
                wasm.to_str().unwrap(),
            ]
            .map(OsStr::new),
        );
        assert_other_world(&wasm, lacks);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The same for JavaScript, built with the SDK's `recon-guest-build`
/// (componentize-js) from the mirror's entry module.
#[test]
fn inspect_refuses_javascript_components_of_another_world() {
    let dir = fresh_dir("javascript-worlds");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let builder = root.join("guest-sdk-js/bin/build.js");
    let entry = root.join("examples/configmap-mirror-js/src/component.js");
    for (world, wit, lacks) in other_worlds(&dir) {
        let wasm = dir.join(format!("{world}.wasm"));
        build(
            "node",
            &[
                builder.as_os_str(),
                entry.as_os_str(),
                OsStr::new("-o"),
                wasm.as_os_str(),
                OsStr::new("--wit"),
                wit.as_os_str(),
            ],
        );
        assert_other_world(&wasm, lacks);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A fresh directory path (not created) for one test.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `host inspect ARGS`, with `RECON_CACHE_DIR` set to `cache_env` or
/// unset, and the default cache under `home`.
fn inspect_with(args: &[&OsStr], cache_env: Option<&Path>, home: &Path) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_host"));
    command
        .arg("inspect")
        .args(args)
        .env_remove("RECON_CACHE_DIR")
        .env("XDG_CACHE_HOME", home)
        .stdin(Stdio::null());
    if let Some(dir) = cache_env {
        command.env("RECON_CACHE_DIR", dir);
    }
    command.output().expect("run host inspect")
}

/// The files in `dir` ending in `.extension`.
fn files(dir: &Path, extension: &str) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension() == Some(OsStr::new(extension)))
        .collect()
}

fn guest_name(out: &Output) -> String {
    assert!(out.status.success(), "{out:?}");
    let manifest: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    manifest["name"].as_str().expect("a name").to_string()
}

#[test]
fn inspect_caches_where_the_flag_or_the_environment_says() {
    let wasm = guests::guest_wasm("configmap_mirror");
    let home = fresh_dir("default-cache");
    for how in ["flag", "environment"] {
        let dir = fresh_dir(&format!("cache-by-{how}"));
        let out = match how {
            "flag" => inspect_with(
                &[OsStr::new("--cache-dir"), dir.as_os_str(), wasm.as_os_str()],
                None,
                &home,
            ),
            _ => inspect_with(&[wasm.as_os_str()], Some(&dir), &home),
        };
        assert_eq!(guest_name(&out), "configmap-mirror", "{how}");
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{how}: the created cache directory");
        assert_eq!(files(&dir, "cwasm").len(), 1, "{how}");
        assert_eq!(files(&dir, "record").len(), 1, "{how}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
    assert!(!home.exists(), "the default cache was used");
}

#[test]
fn inspect_does_not_load_another_guests_compiled_code() {
    let wasm = guests::guest_wasm("configmap_mirror");
    let home = fresh_dir("swap-default-cache");
    let (cache, other_cache) = (fresh_dir("swap"), fresh_dir("swap-other"));
    let inspect = |wasm: &Path, cache: &Path| {
        inspect_with(
            &[
                OsStr::new("--cache-dir"),
                cache.as_os_str(),
                wasm.as_os_str(),
            ],
            None,
            &home,
        )
    };
    assert_eq!(guest_name(&inspect(&wasm, &cache)), "configmap-mirror");
    // Another guest compiled by the same host: wasmtime alone would load
    // its code, and its manifest would come back.
    let other = guests::guest_wasm("hostile");
    assert_eq!(guest_name(&inspect(&other, &other_cache)), "hostile");
    let [entry] = files(&cache, "cwasm").try_into().unwrap();
    let [other_entry] = files(&other_cache, "cwasm").try_into().unwrap();
    std::fs::copy(&other_entry, &entry).unwrap();

    let out = inspect(&wasm, &cache);
    assert_eq!(guest_name(&out), "configmap-mirror");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&entry.display().to_string())
            && stderr.contains("does not match its record"),
        "the warning names the file and the reason: {stderr}"
    );
    assert_ne!(
        std::fs::read(&entry).unwrap(),
        std::fs::read(&other_entry).unwrap(),
        "the entry was compiled again"
    );
    for dir in [cache, other_cache] {
        std::fs::remove_dir_all(dir).unwrap();
    }
}
