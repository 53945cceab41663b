//! `host new`: the crate it writes builds and tests outside this
//! workspace — even in a directory inside it — with the SDK as a path
//! dependency; its component loads in the host; bad input is refused with
//! the cause named. The crates build offline against this workspace's
//! lock file and target directory, so they reuse what `cargo test` built.
//! `--lang python` and `--lang js` guests pass their own tests (pytest,
//! `node --test`, the JavaScript one installed offline from this checkout's
//! SDK) and build a component that the host loads.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// This build's target directory (`CARGO_TARGET_TMPDIR` is its `tmp/`).
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .to_path_buf()
}

/// This test run's scratch directory.
fn scratch() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("new-guest-{}", std::process::id()))
}

/// A fresh, absent directory `name` for this test run.
fn fresh(name: &str) -> PathBuf {
    std::fs::create_dir_all(scratch()).unwrap();
    let dir = scratch().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn host(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_host"))
        .args(args)
        .env("RECON_CACHE_DIR", scratch().join("components"))
        .stdin(Stdio::null())
        .output()
        .expect("run host")
}

/// `host new DIR ARGS...`, which must succeed; what it said.
fn new_guest(dir: &Path, args: &[&str]) -> String {
    let mut all = vec!["new", dir.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = host(&all);
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A Rust guest crate from `host new DIR ARGS...`, with this workspace's
/// lock file copied in so that the offline build finds every crate.
fn new_crate(dir: &Path, args: &[&str]) {
    let said = new_guest(dir, args);
    assert!(said.contains("cargo guest"), "{said}");
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
    std::fs::copy(lock, dir.join("Cargo.lock")).unwrap();
}

/// `command` in `dir`, which must succeed; its output (stdout, then
/// stderr).
fn run_in(dir: &Path, command: &mut Command) -> String {
    let out = command
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("run {command:?} (scripts/bootstrap installs it): {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{command:?} in {}: {text}",
        dir.display()
    );
    text
}

/// `cargo ARGS...` in `dir`, offline and in this build's target
/// directory, which must succeed; its output.
fn cargo(dir: &Path, args: &[&str]) -> String {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    run_in(
        dir,
        Command::new(cargo)
            .arg("--offline")
            .args(args)
            .env("CARGO_TARGET_DIR", target_dir()),
    )
}

/// `PROGRAM ARGS...` in `dir`, which must succeed; its output.
fn run(dir: &Path, program: &str, args: &[&str]) -> String {
    run_in(dir, Command::new(program).args(args))
}

/// This checkout's SDK directory `name`, as `host new` writes it.
fn sdk(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(name)
        .canonicalize()
        .unwrap()
}

/// The new guest's `file` in `dir` holds each of `wanted`.
fn assert_written(dir: &Path, file: &str, wanted: &[&str]) {
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    for line in wanted {
        assert!(text.contains(line), "{file}: {text}");
    }
}

#[test]
fn a_new_guest_tests_builds_and_loads_outside_the_workspace() {
    // Inside this workspace's directory tree, yet a workspace of its own.
    let dir = fresh("scaffolded-deployment-labeler");
    new_crate(&dir, &["--kind", "apps/v1/Deployment"]);
    let sdk = sdk("guest-sdk").display().to_string();
    assert_written(
        &dir,
        "Cargo.toml",
        &[&format!("recon-guest-sdk = {{ path = \"{sdk}\" }}")],
    );

    cargo(&dir, &["fmt", "--check"]);
    let tests = cargo(&dir, &["test"]);
    assert!(tests.contains("test result: ok. 2 passed"), "{tests}");
    cargo(&dir, &["clippy", "--all-targets", "--", "-D", "warnings"]);
    cargo(&dir, &["guest"]);

    let wasm = target_dir().join("wasm32-wasip2/guest/scaffolded_deployment_labeler.wasm");
    let out = host(&["inspect", wasm.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let manifest: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(manifest["name"], "scaffolded-deployment-labeler");
    assert_eq!(manifest["primary"]["group"], "apps");
    assert_eq!(manifest["primary"]["kind"], "Deployment");
    assert_eq!(manifest["writes"][0]["verbs"][0], "patch");
}

#[test]
fn a_custom_resource_gets_its_own_type_and_a_cluster_scoped_kind_its_key() {
    let widgets = fresh("scaffolded-widget-labeler");
    new_crate(
        &widgets,
        &["--kind", "example.com/v1alpha1/Widget", "--cluster-scoped"],
    );
    assert_written(
        &widgets,
        "src/kind.rs",
        &[
            "const URL_PATH_SEGMENT: &'static str = \"widgets\";",
            "type Scope = ClusterResourceScope;",
        ],
    );
    let tests = cargo(&widgets, &["test"]);
    assert!(tests.contains("test result: ok. 2 passed"), "{tests}");

    let namespaces = fresh("scaffolded-namespace-labeler");
    new_crate(&namespaces, &["--kind", "v1/Namespace"]);
    let tests = cargo(&namespaces, &["test"]);
    assert!(tests.contains("test result: ok. 2 passed"), "{tests}");
}

/// `wasm` is a component of the component model: the `\0asm` magic, then
/// version 0x0d and layer 1 (a core module has version 1, layer 0).
fn assert_component(wasm: &Path) {
    let bytes = std::fs::read(wasm).unwrap_or_else(|e| panic!("{}: {e}", wasm.display()));
    assert_eq!(
        bytes.get(..8),
        Some(&b"\0asm\x0d\x00\x01\x00"[..]),
        "{}",
        wasm.display()
    );
}

/// `wasm` is a component that `host inspect` loads: a guest `name` whose
/// primary kind is `kind`, which may patch it.
fn assert_loads(wasm: &Path, name: &str, kind: &str) {
    assert_component(wasm);
    let out = host(&["inspect", wasm.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let manifest: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(manifest["name"], name);
    assert_eq!(manifest["primary"]["kind"], kind);
    assert_eq!(manifest["writes"][0]["kind"]["kind"], kind);
    assert_eq!(manifest["writes"][0]["verbs"][0], "patch");
}

#[test]
fn a_new_python_guest_passes_its_tests_and_builds_a_component() {
    // A custom resource: a dict like any other object, named by its group,
    // version and kind; cluster-scoped, so the tests' key has no namespace.
    let dir = fresh("scaffolded-widget-labeler-py");
    let said = new_guest(
        &dir,
        &[
            "--lang",
            "python",
            "--kind",
            "example.com/v1alpha1/Widget",
            "--cluster-scoped",
        ],
    );
    assert!(said.contains("./build.sh"), "{said}");
    let sdk = sdk("guest-sdk-python").display().to_string();
    assert_written(&dir, "pytest.ini", &[&format!("pythonpath = . {sdk}")]);
    assert_written(
        &dir,
        "reconciler.py",
        &[
            "PRIMARY = Gvk(\"example.com\", \"v1alpha1\", \"Widget\")",
            "LABEL = \"scaffolded-widget-labeler-py.recon.dev/seen\"",
        ],
    );
    assert_written(
        &dir,
        "tests/test_reconciler.py",
        &["KEY = ObjectKey(None, \"example\")"],
    );

    let passed = run(&dir, "python3", &["-m", "pytest", "-q"]);
    assert!(passed.contains("2 passed"), "{passed}");
    let built = run(&dir, "./build.sh", &[]);
    assert!(
        built.contains("scaffolded_widget_labeler_py.wasm"),
        "{built}"
    );
    assert_loads(
        &dir.join("scaffolded_widget_labeler_py.wasm"),
        "scaffolded-widget-labeler-py",
        "Widget",
    );
}

#[test]
fn a_new_javascript_guest_installs_offline_passes_its_tests_and_builds_a_component() {
    // A built-in cluster-scoped kind: the tests' key has no namespace.
    let dir = fresh("scaffolded-namespace-labeler-js");
    let said = new_guest(&dir, &["--lang", "js", "--kind", "v1/Namespace"]);
    assert!(said.contains("npm run build"), "{said}");
    let package: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("package.json")).unwrap()).unwrap();
    let sdk = sdk("guest-sdk-js");
    assert_eq!(
        package["dependencies"]["@recon/guest-sdk"],
        format!("file:{}", sdk.display())
    );
    assert_written(
        &dir,
        "src/lib.js",
        &["export const Primary = gvk('', 'v1', 'Namespace');"],
    );
    assert_written(
        &dir,
        "test/reconciler.test.js",
        &["namespace: null, name: 'example'"],
    );

    // The SDK is a link to this checkout, whose own packages
    // scripts/bootstrap installed: nothing is fetched.
    run(
        &dir,
        "npm",
        &[
            "install",
            "--offline",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
        ],
    );
    let link = std::fs::read_link(dir.join("node_modules/@recon/guest-sdk")).unwrap();
    assert_eq!(
        dir.join("node_modules/@recon")
            .join(link)
            .canonicalize()
            .unwrap(),
        sdk
    );
    let passed = run(&dir, "npm", &["test"]);
    assert!(passed.contains("# pass 2"), "{passed}");
    assert!(passed.contains("# fail 0"), "{passed}");
    run(&dir, "npm", &["run", "build"]);
    assert_loads(
        &dir.join("dist/scaffolded_namespace_labeler_js.wasm"),
        "scaffolded-namespace-labeler-js",
        "Namespace",
    );
}

#[test]
fn bad_input_is_refused_naming_the_cause_and_nothing_is_written() {
    let refused = |args: &[&str], needle: &str| {
        let out = host(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    };
    let dir = fresh("refused");
    let path = dir.to_str().unwrap();
    refused(
        &["new", path, "--kind", "Deployment"],
        "expected GROUP/VERSION/KIND",
    );
    refused(
        &[
            "new",
            path,
            "--kind",
            "apps/v1/Deployment",
            "--plural",
            "deploys",
        ],
        "is built in",
    );
    refused(
        &["new", path, "--sdk-path", env!("CARGO_TARGET_TMPDIR")],
        "no guest-sdk/Cargo.toml there",
    );
    refused(
        &[
            "new",
            path,
            "--lang",
            "python",
            "--sdk-git",
            "https://example.com/recon.git",
        ],
        "a Python guest takes its SDK from a checkout, not from git",
    );
    refused(
        &[
            "new",
            path,
            "--lang",
            "js",
            "--sdk-path",
            env!("CARGO_TARGET_TMPDIR"),
        ],
        "not a checkout's guest-sdk-js/",
    );
    refused(&["new", path, "--lang", "go"], "invalid value 'go'");
    assert!(!dir.exists(), "nothing is written for refused input");

    let bad_name = fresh("Bad_Name");
    refused(&["new", bad_name.to_str().unwrap()], "must be");

    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("keep.txt"), "mine").unwrap();
    refused(&["new", path], "exists and is not empty");
    assert_eq!(
        std::fs::read_to_string(dir.join("keep.txt")).unwrap(),
        "mine"
    );
    assert!(!dir.join("Cargo.toml").exists());
}
