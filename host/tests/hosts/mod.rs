//! `host` processes for the end-to-end tests: started with a guest against
//! a kubeconfig, their stderr collected, stopped with SIGTERM or SIGKILL,
//! and their HTTP endpoints (bound to free loopback ports) queried; waits
//! on the dev server's store for what they do; and the host library's
//! client of a dev server, for tests that wire its parts themselves.

// Each test crate uses part of this module.
#![allow(dead_code)]

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use recon_devserver::store::{ResourceType, Store, WatchParams};
use recon_devserver::{DevServer, DevServerConfig, DevServerHandle};
use recon_host::clock::SystemClock;
use recon_host::kube::ApiClient;
use recon_host::kube::ClientRateLimiter;
use recon_host::kube::HttpListerWatcher;
use recon_host::kube::connect_with_kubeconfig_text;
use recon_host::kube::{Discovery, Gvk};

use crate::guests;

/// A dev server, a fresh scratch directory for the test `name` of the
/// test crate `suite`, and the kubeconfig written into it.
pub async fn cluster(suite: &str, name: &str) -> (DevServerHandle, PathBuf, PathBuf) {
    let server = DevServer::start(DevServerConfig::default())
        .await
        .expect("dev server");
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{suite}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let kubeconfig = base.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    (server, base, kubeconfig)
}

/// Creates the namespace `name` in the dev server's store, unless it is
/// there already.
pub fn create_namespace(store: &Store, name: &str) {
    let namespaces = store.resource_type("", "v1", "namespaces").unwrap();
    let _ = store.create(
        &namespaces,
        None,
        serde_json::json!({"metadata": {"name": name}}),
        None,
    );
}

/// Serves the custom resource `example.com/v1` Widget, whose schema has
/// one field, `spec.color` (a string).
pub fn serve_widgets(store: &Store) {
    let crds = store
        .resource_type("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        .unwrap();
    store
        .create(
            &crds,
            None,
            serde_json::json!({"metadata": {"name": "widgets.example.com"}, "spec": {
                "group": "example.com", "scope": "Namespaced",
                "names": {"kind": "Widget", "plural": "widgets"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {"color": {"type": "string"}}}}}}}]}}),
            None,
        )
        .unwrap();
}

/// The hostile guest's manifest attack: watch Widgets ([`serve_widgets`])
/// and index them by the field `path`.
pub fn widget_index(path: &str) -> String {
    format!(r#"{{"watch-kind": ["example.com", "v1", "Widget"], "watch-index": "{path}"}}"#)
}

/// Sets `data.v` of the ConfigMap `default/name` to `value`, retrying on
/// conflicts with a host's own writes (a finalizer).
pub fn set_value(store: &Store, configmaps: &ResourceType, name: &str, value: &str) {
    loop {
        let mut source = store
            .get(configmaps, Some("default"), name)
            .expect("the ConfigMap");
        source["data"]["v"] = serde_json::json!(value);
        match store.update(configmaps, Some("default"), name, source, None) {
            Ok(_) => return,
            Err(e) if e.code == 409 => continue,
            Err(e) => panic!("updating {name}: {e:?}"),
        }
    }
}

/// Hands the `hostile` guest `keys`: for the n-th, a ConfigMap named after
/// it in a namespace of its own, `attack-n`.
pub fn hostile_keys(store: &Store, keys: &[&str]) {
    let namespaces = store.resource_type("", "v1", "namespaces").unwrap();
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    for (i, key) in keys.iter().enumerate() {
        let namespace = format!("attack-{i}");
        store
            .create(
                &namespaces,
                None,
                serde_json::json!({"metadata": {"name": namespace}}),
                None,
            )
            .unwrap();
        store
            .create(
                &configmaps,
                Some(&namespace),
                serde_json::json!({"metadata": {"name": key}}),
                None,
            )
            .unwrap();
    }
}

/// A `host run` process; killed on drop if still running.
pub struct Host {
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
}

impl Host {
    /// `host run --guest <guest> --kubeconfig <kubeconfig>` with the
    /// metrics and health endpoints on free loopback ports, then `extra`;
    /// `env` is added to the environment.
    pub fn start(guest: &str, kubeconfig: &Path, extra: &[&str], env: &[(&str, &str)]) -> Host {
        Host::run(guests::guest_wasm(guest).into(), kubeconfig, extra, env)
    }

    /// [`Host::start`] with `guest` as `--guest` gives it: a path or an
    /// `oci://` reference.
    pub fn run(guest: OsString, kubeconfig: &Path, extra: &[&str], env: &[(&str, &str)]) -> Host {
        let mut args: Vec<OsString> = vec![
            "run".into(),
            "--guest".into(),
            guest,
            "--kubeconfig".into(),
            kubeconfig.into(),
            "--cache-dir".into(),
            guests::cache_dir().into(),
            "--metrics-bind".into(),
            "127.0.0.1:0".into(),
            "--health-bind".into(),
            "127.0.0.1:0".into(),
        ];
        args.extend(extra.iter().map(OsString::from));
        let mut command = Command::new(env!("CARGO_BIN_EXE_host"));
        command
            .args(&args)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("start host run");
        let log = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().expect("stderr");
        let lines = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                lines.lock().push(line);
            }
        });
        Host { child, log }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Everything the host has logged so far.
    pub fn log(&self) -> String {
        self.log.lock().join("\n")
    }

    /// The log lines so far.
    pub fn log_lines(&self) -> Vec<String> {
        self.log.lock().clone()
    }

    /// Polls (at most 60 s) until a log line holds `needle`; returns it.
    pub fn wait_for_log(&mut self, needle: &str) -> String {
        let Host { child, log } = self;
        poll(
            Duration::from_secs(60),
            || {
                if let Some(line) = log.lock().iter().find(|l| l.contains(needle)) {
                    return Some(line.clone());
                }
                if let Some(status) = child.try_wait().expect("wait") {
                    panic!(
                        "host exited ({status}) before logging {needle:?}; log:\n{}",
                        log.lock().join("\n")
                    );
                }
                None
            },
            || {
                format!(
                    "host never logged {needle:?}; log:\n{}",
                    log.lock().join("\n")
                )
            },
        )
    }

    /// The address of an endpoint, from its "serving <what>" log line.
    pub fn endpoint(&mut self, what: &str) -> SocketAddr {
        let line = self.wait_for_log(&format!("serving {what}"));
        let start = line.find("127.0.0.1:").expect("a loopback address");
        let address: String = line[start..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ':')
            .collect();
        address.parse().expect("an address")
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("kill");
        assert!(status.success());
    }

    /// Waits (at most `limit`) for the process to exit.
    pub fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let Host { child, log } = self;
        poll(
            limit,
            || child.try_wait().expect("wait"),
            || {
                format!(
                    "host did not exit within {limit:?}; log:\n{}",
                    log.lock().join("\n")
                )
            },
        )
    }

    /// SIGTERM, then the exit status (waiting at most 30 s).
    pub fn terminate(&mut self) -> ExitStatus {
        self.signal("TERM");
        self.wait_exit(Duration::from_secs(30))
    }

    /// SIGKILL: no clean-up at all.
    pub fn kill(&mut self) {
        self.child.kill().expect("kill");
        self.child.wait().expect("wait");
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `GET path` over plain HTTP/1.1: the status code and the body.
pub fn http_get(address: SocketAddr, path: &str) -> (u16, String) {
    http_get_with(address, path, &[])
}

/// [`http_get`] with request `headers`.
pub fn http_get_with(address: SocketAddr, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let mut stream = TcpStream::connect(address).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let headers: String = headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\n{headers}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read");
    let (head, body) = response
        .split_once("\r\n\r\n")
        .expect("a response with headers");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .expect("a status code");
    (status, body.to_string())
}

/// The value of the metric `series` (`name{labels}` as the text prints
/// it) on the `/metrics` endpoint at `metrics`; 0 when absent.
pub fn metric(metrics: SocketAddr, series: &str) -> f64 {
    let (_, body) = http_get(metrics, "/metrics");
    sample(&body, series).unwrap_or(0.0)
}

/// The value of the sample `series` (`name{labels}` as the text prints
/// it) in the metrics text `text`, if present.
pub fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|line| {
        line.strip_prefix(series)?
            .strip_prefix(' ')?
            .trim()
            .parse()
            .ok()
    })
}

/// Polls `GET path` (at most 60 s) until it answers `status`; the body.
pub fn wait_for_status(address: SocketAddr, path: &str, status: u16) -> String {
    let last = std::cell::RefCell::new((0, String::new()));
    poll(
        Duration::from_secs(60),
        || {
            let (code, body) = http_get(address, path);
            let found = (code == status).then(|| body.clone());
            *last.borrow_mut() = (code, body);
            found
        },
        || {
            let (code, body) = &*last.borrow();
            format!("{path} never answered {status}; last {code}: {body}")
        },
    )
}

/// Calls `check` every 20 ms until it returns something (at most `limit`);
/// past the limit, panics with `failure()`.
pub fn poll<T>(
    limit: Duration,
    mut check: impl FnMut() -> Option<T>,
    failure: impl FnOnce() -> String,
) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(found) = check() {
            return found;
        }
        assert!(Instant::now() < deadline, "{}", failure());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (at most 60 s) until `check` finds what it looks for, re-checking
/// at every change of the resource type `rt`.
pub async fn eventually<T: std::fmt::Debug>(
    store: &Store,
    rt: &ResourceType,
    what: &str,
    host: &Host,
    check: impl Fn(&Store) -> Option<T>,
) -> T {
    let watch = || {
        store
            .watch(rt, None, &WatchParams::default())
            .expect("watch")
    };
    let mut changes = watch();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(found) = check(store) {
            return found;
        }
        match tokio::time::timeout_at(deadline, changes.next()).await {
            Ok(Some(_)) => {}
            Ok(None) => changes = watch(),
            Err(_) => panic!("timed out waiting for {what}\nhost log:\n{}", host.log()),
        }
    }
}

/// A client of the dev server `server` with no client-side rate limit,
/// and its discovery.
pub async fn dev_client(server: &DevServerHandle) -> (ApiClient, Arc<Discovery>) {
    let client = connect_with_kubeconfig_text(
        server.kubeconfig(),
        "dev server",
        ClientRateLimiter::unlimited(SystemClock::shared()),
    )
    .await
    .expect("a client of the dev server");
    let discovery = Arc::new(Discovery::new(client.clone()));
    (client, discovery)
}

/// A lister-watcher of `kind` in every namespace of the dev server `server`.
pub async fn dev_lister_watcher(server: &DevServerHandle, kind: &Gvk) -> HttpListerWatcher {
    let (client, discovery) = dev_client(server).await;
    HttpListerWatcher::for_gvk(client, &discovery, kind, None)
        .await
        .unwrap_or_else(|e| panic!("the dev server serves {kind}: {e}"))
}
