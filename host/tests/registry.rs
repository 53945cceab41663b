//! Guests through a real OCI registry: Debian's `docker-registry` (the
//! reference distribution registry) on loopback, over plain HTTP as
//! `--insecure-registry` allows. `host push` publishes a component as a
//! Wasm artifact; `host run` pulls it by digest and reconciles with it;
//! `host inspect` pulls by tag; a tampered blob, an unknown tag, an
//! unreachable or HTTPS-less registry and missing credentials are refused
//! with their cause named, and nothing unverified is cached.

mod guests;
mod hosts;

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use base64::Engine as _;
use hosts::{Host, eventually, http_get, http_get_with, poll};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

/// The bcrypt hash of `recon-secret`, for the registry's htpasswd file.
const PASSWORD_HASH: &str = "$2b$05$ApWxzoFUaQ4KRAL76m02/OTrb9IA30y3pf5Qch2QMNuo/SuEi4oAC";

/// A `docker-registry serve` process on a free loopback port, storing in
/// a fresh directory; killed on drop.
struct Registry {
    child: Child,
    address: SocketAddr,
    dir: PathBuf,
}

impl Registry {
    /// Starts one; with `auth`, it wants the user `recon` (password
    /// `recon-secret`).
    fn start(name: &str, auth: bool) -> Registry {
        let found = Command::new("docker-registry")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            found,
            "docker-registry is not installed: run `bash scripts/bootstrap` to install it"
        );
        let dir = scratch().join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let address = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap();
        let mut config = format!(
            "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {address}\n",
            dir.join("data").display()
        );
        if auth {
            let htpasswd = dir.join("htpasswd");
            std::fs::write(&htpasswd, format!("recon:{PASSWORD_HASH}\n")).unwrap();
            config.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: recon\n    path: {}\n",
                htpasswd.display()
            ));
        }
        let config_path = dir.join("config.yml");
        std::fs::write(&config_path, config).unwrap();
        let log = std::fs::File::create(dir.join("registry.log")).unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config_path)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start docker-registry");
        let registry = Registry {
            child,
            address,
            dir,
        };
        poll(
            Duration::from_secs(30),
            || {
                std::net::TcpStream::connect(address)
                    .ok()
                    .map(|_| http_get(address, "/v2/").0)
                    .filter(|code| [200, 401].contains(code))
            },
            || {
                format!(
                    "the registry on {address} did not start: {}",
                    registry.log()
                )
            },
        );
        registry
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("registry.log")).unwrap_or_default()
    }

    /// `--insecure-registry HOST:PORT` for this registry.
    fn insecure(&self) -> [String; 2] {
        ["--insecure-registry".to_string(), self.address.to_string()]
    }

    /// `inspect oci://REFERENCE` from this registry, pulling into `cache`.
    fn inspect_args(&self, reference: &str, cache: &Path) -> Vec<String> {
        let [flag, address] = self.insecure();
        vec![
            "inspect".to_string(),
            format!("oci://{reference}"),
            flag,
            address,
            "--cache-dir".to_string(),
            cache.display().to_string(),
        ]
    }

    /// Where the registry stores the blob `digest` (`sha256:HEX`).
    fn blob(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").unwrap();
        self.dir
            .join("data/docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn scratch() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("registry-{}", std::process::id()))
}

fn sha256(bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// `host ARGS...` with `env` added.
fn host<S: AsRef<std::ffi::OsStr>>(args: &[S], env: &[(&str, &Path)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_host"));
    command.args(args).stdin(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("run host")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `host push` of the mirror guest to `reference`, which must succeed; the
/// digest reference it prints.
fn push(registry: &Registry, reference: &str, extra: &[&str]) -> String {
    let wasm = guests::guest_wasm("configmap_mirror");
    let insecure = registry.insecure();
    let mut args = vec!["push", wasm.to_str().unwrap(), reference];
    args.extend(insecure.iter().map(String::as_str));
    args.extend_from_slice(extra);
    let out = host(&args, &[]);
    assert!(out.status.success(), "{}\n{}", stderr(&out), registry.log());
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_pushed_to_a_registry_runs_by_digest_from_it() {
    let registry = Registry::start("run", false);
    let tagged = format!("{}/guests/mirror:v1", registry.address);
    let pinned = push(&registry, &tagged, &[]);
    let digest = pinned
        .strip_prefix(&format!("oci://{}/guests/mirror@", registry.address))
        .unwrap_or_else(|| panic!("push printed {pinned}"))
        .to_string();

    // The artifact, as the registry serves it: a Wasm config and one
    // application/wasm layer holding the component, under the digest push
    // printed.
    let (code, body) = http_get_with(
        registry.address,
        "/v2/guests/mirror/manifests/v1",
        &[("Accept", "application/vnd.oci.image.manifest.v1+json")],
    );
    assert_eq!(code, 200, "{body}");
    assert_eq!(sha256(body.as_bytes()), digest);
    let manifest: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    let component = std::fs::read(guests::guest_wasm("configmap_mirror")).unwrap();
    assert_eq!(
        manifest["layers"],
        json!([{
            "mediaType": "application/wasm",
            "digest": sha256(&component),
            "size": component.len(),
            "annotations": {"org.opencontainers.image.title": "configmap_mirror.wasm"},
        }])
    );

    // `host run` pulls it by digest and reconciles with it.
    let (server, _, kubeconfig) = hosts::cluster("registry", "run").await;
    let store = server.store();
    hosts::create_namespace(&store, "team-a");
    // (`Host::run` passes the tests' shared --cache-dir.)
    let cache = guests::cache_dir();
    let insecure = registry.insecure();
    let extra = [insecure[0].as_str(), insecure[1].as_str()];
    let host = Host::run(pinned.clone().into(), &kubeconfig, &extra, &[]);
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    store
        .create(
            &configmaps,
            Some("default"),
            json!({"metadata": {"name": "settings",
                                "annotations": {"recon.dev/mirror-to": "team-a"}},
                   "data": {"color": "blue"}}),
            None,
        )
        .unwrap();
    eventually(&store, &configmaps, "a copy in team-a", &host, |store| {
        store
            .get(&configmaps, Some("team-a"), "settings")
            .ok()
            .filter(|copy| copy["data"]["color"] == "blue")
    })
    .await;
    assert!(host.log().contains("pulled"), "{}", host.log());
    let hex = sha256(&component);
    let cached = cache
        .join("oci/sha256")
        .join(format!("{}.wasm", hex.strip_prefix("sha256:").unwrap()));
    assert_eq!(
        std::fs::read(cached).unwrap(),
        component,
        "cached by digest"
    );
}

#[test]
fn a_tampered_blob_is_refused_and_nothing_is_cached() {
    let registry = Registry::start("tampered", false);
    let tagged = format!("{}/guests/mirror:v1", registry.address);
    push(&registry, &tagged, &[]);
    let component = std::fs::read(guests::guest_wasm("configmap_mirror")).unwrap();
    let blob = registry.blob(&sha256(&component));
    let mut tampered = component.clone();
    tampered[100] ^= 0xff;
    std::fs::write(&blob, &tampered).unwrap();

    let cache = registry.dir.join("cache");
    let out = host(&registry.inspect_args(&tagged, &cache), &[]);
    assert!(!out.status.success());
    let said = stderr(&out);
    assert!(said.contains("digest mismatch"), "{said}");
    assert!(said.contains(&sha256(&component)), "{said}");
    let cached = std::fs::read_dir(cache.join("oci/sha256"))
        .map(|entries| entries.count())
        .unwrap_or(0);
    assert_eq!(cached, 0, "nothing unverified is cached");
}

#[test]
fn pull_errors_name_their_cause() {
    let registry = Registry::start("errors", false);
    let tagged = format!("{}/guests/mirror:v1", registry.address);
    push(&registry, &tagged, &[]);
    let cache = registry.dir.join("cache");
    let insecure = registry.insecure();
    let inspect = |reference: &str, insecure: &[&str]| {
        let mut args = vec!["inspect", reference, "--cache-dir", cache.to_str().unwrap()];
        args.extend_from_slice(insecure);
        let out = host(&args, &[]);
        assert!(!out.status.success(), "{reference} was inspected");
        stderr(&out)
    };
    let with_insecure = [insecure[0].as_str(), insecure[1].as_str()];

    let unknown_tag = format!("oci://{}/guests/mirror:v9", registry.address);
    let said = inspect(&unknown_tag, &with_insecure);
    assert!(said.contains("not found in the registry"), "{said}");

    let said = inspect(&format!("oci://{tagged}"), &[]);
    assert!(said.contains("cannot reach the registry"), "{said}");
    assert!(
        said.contains(&format!("--insecure-registry {}", registry.address)),
        "{said}"
    );

    let said = inspect("oci://registry.invalid/guests/mirror:v1", &[]);
    assert!(said.contains("cannot reach the registry"), "{said}");

    let said = inspect("oci://127.0.0.1/Guests:v1", &[]);
    assert!(said.contains("not an OCI reference"), "{said}");

    // What is not a component is not pushed.
    let not_a_component = registry.dir.join("notes.wasm");
    std::fs::write(&not_a_component, "not wasm").unwrap();
    let out = host(
        &[
            "push",
            not_a_component.to_str().unwrap(),
            &tagged,
            with_insecure[0],
            with_insecure[1],
        ],
        &[],
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("not a WebAssembly component"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn credentials_come_from_the_docker_config_file() {
    let registry = Registry::start("auth", true);
    let tagged = format!("{}/guests/mirror:v1", registry.address);
    let wasm = guests::guest_wasm("configmap_mirror");
    let insecure = registry.insecure();
    let nowhere = registry.dir.join("no-docker-config");
    let push_args = [
        "push",
        wasm.to_str().unwrap(),
        &tagged,
        &insecure[0],
        &insecure[1],
    ];
    let out = host(&push_args, &[("DOCKER_CONFIG", &nowhere)]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("refused access (401/403)"),
        "{}",
        stderr(&out)
    );

    let docker = registry.dir.join("docker");
    std::fs::create_dir_all(&docker).unwrap();
    let auth = base64::engine::general_purpose::STANDARD.encode("recon:recon-secret");
    std::fs::write(
        docker.join("config.json"),
        json!({"auths": {registry.address.to_string(): {"auth": auth}}}).to_string(),
    )
    .unwrap();
    let out = host(&push_args, &[("DOCKER_CONFIG", &docker)]);
    assert!(out.status.success(), "{}", stderr(&out));

    let cache = registry.dir.join("cache");
    let inspect_args = registry.inspect_args(&tagged, &cache);
    let out = host(&inspect_args, &[("DOCKER_CONFIG", &docker)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let manifest: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(manifest["name"], "configmap-mirror");
    let out = host(&inspect_args, &[("DOCKER_CONFIG", &nowhere)]);
    assert!(
        stderr(&out).contains("refused access (401/403)"),
        "{}",
        stderr(&out)
    );
}
