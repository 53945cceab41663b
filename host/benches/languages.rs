//! One reconciler, `configmap-mirror`, built from Rust (the guest SDK),
//! Python (componentize-py) and JavaScript (componentize-js), side by side
//! in the host's runtime (release build). Prints figures (and stops if a
//! no-op reconcile does not come out `done`):
//!
//! - the component's size;
//! - its first load (compilation and `manifest()`) into an empty compile
//!   cache, and a load from that cache;
//! - the mean time to instantiate it, and an instance's linear memory;
//! - no-op reconciles per second on one task, a fresh instance for each
//!   and one instance reused;
//! - a `host run` process's start, from its launch to `/readyz` answering
//!   200, with the component compiled in its cache and no objects to sync
//!   (the median of [`STARTS`] starts against the dev API server).
//!
//! The no-op reconcile is of a ConfigMap that carries no mirror
//! annotation, read from a cache that holds only it: every build reads
//! and parses it, finds it is not a source, and is done.
//!
//! Needs the guests built (`just examples`, which `just bench` runs).

#[path = "../tests/guests/mod.rs"]
mod guests;
mod support;

use std::io::{Read, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use recon_api_semantics::Gvk;
use recon_devserver::{DevServer, DevServerConfig};
use recon_host::label_selector::LabelSelector;
use recon_host::object::Object;
use recon_host::runtime::services::{GuestError, GuestEvent, GuestServices, QueueOp, Write};
use recon_host::runtime::{Action, Guest, Runtime, RuntimeConfig};

/// The builds, by the file name `just examples` gives each.
const BUILDS: [(&str, &str); 3] = [
    ("Rust", "configmap_mirror"),
    ("Python", "configmap_mirror_py"),
    ("JavaScript", "configmap_mirror_js"),
];

/// How long each rate is measured for.
const SPAN: Duration = Duration::from_secs(2);

/// How many `host run` starts are timed per build.
const STARTS: usize = 5;

/// A cluster whose cache holds one ConfigMap that is not a mirror source;
/// writes and queue adds are refused (a no-op reconcile makes none).
struct OneConfigMap(Object);

#[async_trait]
impl GuestServices for OneConfigMap {
    fn get(&self, _: &Gvk, _: Option<&str>, _: &str) -> Result<Option<Object>, GuestError> {
        Ok(Some(self.0.clone()))
    }
    fn list(&self, _: &Gvk, _: Option<&str>, _: &LabelSelector) -> Result<Vec<Object>, GuestError> {
        Ok(vec![self.0.clone()])
    }
    fn by_index(&self, _: &Gvk, _: &str, _: &str) -> Result<Vec<Object>, GuestError> {
        Ok(Vec::new())
    }
    fn queue(&self, _: &str, _: QueueOp) -> Result<(), GuestError> {
        Err(GuestError::Forbidden("no queue in this benchmark".into()))
    }
    fn forget(&self, _: &str) {}
    fn num_requeues(&self, _: &str) -> u32 {
        0
    }
    async fn write(&self, _: Write) -> Result<Option<Object>, GuestError> {
        Err(GuestError::Forbidden("no writes in this benchmark".into()))
    }
    async fn record_event(&self, _: GuestEvent) -> Result<(), GuestError> {
        Err(GuestError::Forbidden("no events in this benchmark".into()))
    }
}

fn services() -> Arc<dyn GuestServices> {
    let json = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"plain","namespace":"default","uid":"5f0c1c9e-0000-4000-8000-000000000001","resourceVersion":"7","labels":{"app":"web"}},"data":{"k":"v"}}"#;
    Arc::new(OneConfigMap(Object::from_json(json).expect("a ConfigMap")))
}

fn runtime(cache: &Path) -> Runtime {
    Runtime::new(RuntimeConfig {
        cache_dir: Some(cache.to_path_buf()),
        ..RuntimeConfig::default()
    })
    .expect("runtime")
}

async fn load(runtime: &Runtime, path: &Path) -> (Guest, Duration) {
    let started = Instant::now();
    let guest = runtime.load(path).await.expect("the guest loads");
    (guest, started.elapsed())
}

/// Runs `step` for [`SPAN`]; how many times per second it ran.
async fn rate(mut step: impl AsyncFnMut()) -> f64 {
    let started = Instant::now();
    let mut count = 0u32;
    while started.elapsed() < SPAN {
        step().await;
        count += 1;
    }
    f64::from(count) / started.elapsed().as_secs_f64()
}

async fn reconcile_plain(instance: &mut recon_host::runtime::Instance) {
    match instance.reconcile("default/plain", 0).await {
        Ok(Action::Done) => {}
        other => panic!("the no-op reconcile came out {other:?}"),
    }
}

async fn measure(language: &str, file: &str, caches: &Path) {
    let path = guests::guest_wasm(file);
    let size = std::fs::metadata(&path).map_or(0, |m| m.len());
    let cache = caches.join(file);
    let _ = std::fs::remove_dir_all(&cache);
    let (_, first) = load(&runtime(&cache), &path).await;
    let runtime = runtime(&cache);
    let (guest, cached) = load(&runtime, &path).await;

    let mut instantiations = Vec::new();
    let mut memory = 0;
    let instantiate_rate = rate(async || {
        let started = Instant::now();
        let instance = guest.instantiate(services()).await.expect("instantiate");
        instantiations.push(started.elapsed());
        memory = instance.memory_high_water();
    })
    .await;
    let fresh = rate(async || {
        let mut instance = guest.instantiate(services()).await.expect("instantiate");
        reconcile_plain(&mut instance).await;
    })
    .await;
    let mut kept = guest.instantiate(services()).await.expect("instantiate");
    let reused = rate(async || reconcile_plain(&mut kept).await).await;

    let mean = instantiations.iter().sum::<Duration>() / instantiations.len().max(1) as u32;
    let start = start_to_ready(&path, &caches.join(format!("{file}-host"))).await;
    println!(
        "  {language:<10} {size:>11} B  first load {:>8.2?}  cached load {:>8.2?}  \
         instantiate {:>9.2?} ({instantiate_rate:>7.0}/s)  memory {:>6.1} MiB  \
         no-op reconciles/s: fresh instance {fresh:>7.0}, reused {reused:>8.0}  \
         host start to /readyz {start:>8.2?}",
        first,
        cached,
        mean,
        memory as f64 / f64::from(1 << 20),
    );
}

/// A free loopback port.
fn free_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("an address")
}

/// Whether `GET /readyz` on `address` answers 200 now.
fn ready(address: SocketAddr) -> bool {
    let Ok(mut stream) = TcpStream::connect(address) else {
        return false;
    };
    let request = "GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    let mut reply = String::new();
    stream.write_all(request.as_bytes()).is_ok()
        && stream.read_to_string(&mut reply).is_ok()
        && reply.starts_with("HTTP/1.1 200")
}

/// The median time from launching `host run --guest path` (compiled into
/// `cache` by a first run) to its `/readyz` answering 200.
async fn start_to_ready(path: &Path, cache: &Path) -> Duration {
    let server = DevServer::start(DevServerConfig::default())
        .await
        .expect("dev server");
    let _ = std::fs::remove_dir_all(cache);
    std::fs::create_dir_all(cache).expect("a cache directory");
    let kubeconfig = cache.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    let mut starts = Vec::new();
    // The first start compiles into the cache; it is not counted.
    for run in 0..=STARTS {
        let health = free_port();
        let launched = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_host"))
            .arg("run")
            .arg("--guest")
            .arg(path)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .arg("--cache-dir")
            .arg(cache)
            .args(["--metrics-bind", "127.0.0.1:0", "--health-bind"])
            .arg(health.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start host run");
        while !ready(health) {
            assert!(
                launched.elapsed() < Duration::from_secs(300),
                "host run never became ready"
            );
            assert!(
                child.try_wait().expect("wait").is_none(),
                "host run exited before it was ready"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        if run > 0 {
            starts.push(launched.elapsed());
        }
        child.kill().expect("kill host run");
        child.wait().expect("wait");
    }
    server.shutdown().await;
    starts.sort();
    starts[starts.len() / 2]
}

fn main() {
    let tokio = support::tokio_runtime();
    println!("languages benchmark on {}", support::machine());
    println!(
        "configmap-mirror built from each language, in the host's runtime; \
         no-op reconciles on one task for {SPAN:?} each:"
    );
    // Beside the tests' shared compile cache, emptied per build.
    let caches = guests::cache_dir().with_file_name("languages-bench");
    tokio.block_on(async {
        for (language, file) in BUILDS {
            measure(language, file, &caches).await;
        }
    });
}
