//! The WebAssembly runtime against real components: the `hostile` test
//! guest (sandbox, limits, result handling) and malformed or foreign
//! components (clear load errors). Deadlines run on a fake clock and a
//! spinning guest yields at explicit epoch ticks, so no test waits for time
//! to pass.

mod guests;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use recon_host::clock::FakeClock;
use recon_host::kube::Gvk;
use recon_host::runtime::manifest::Verb;
use recon_host::runtime::services::{GuestError, NoServices};
use recon_host::runtime::{
    Action, Guest, LoadError, Preopen, ReconcileError, Runtime, RuntimeConfig,
};

fn config() -> RuntimeConfig {
    RuntimeConfig {
        reconcile_timeout: Duration::from_millis(50),
        manifest_timeout: Duration::from_millis(80),
        clock: FakeClock::new().shared(),
        epoch_tick: Duration::from_millis(10),
        epoch_thread: false,
        max_instances: 16,
        cache_dir: Some(guests::cache_dir()),
        ..RuntimeConfig::default()
    }
}

async fn hostile(runtime: &Runtime) -> Guest {
    runtime
        .load(&guests::guest_wasm("hostile"))
        .await
        .expect("the hostile guest loads")
}

/// The hostile guest, loaded into a runtime of [`config`].
async fn hostile_guest() -> Guest {
    hostile(&Runtime::new(config()).unwrap()).await
}

async fn reconcile(guest: &Guest, name: &str) -> Result<Action, ReconcileError> {
    let mut instance = guest
        .instantiate(Arc::new(NoServices))
        .await
        .expect("instantiate");
    instance.reconcile(&format!("default/{name}"), 0).await
}

/// The report the guest returned as an `other` error.
fn report(result: Result<Action, ReconcileError>) -> String {
    match result {
        Err(ReconcileError::Guest(GuestError::Other(report))) => report,
        other => panic!("expected a report from the guest, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_manifest_is_read_at_load() {
    let guest = hostile_guest().await;
    assert_eq!(guest.name(), "hostile");
    let manifest = guest.manifest();
    let configmap = Gvk::new("", "v1", "ConfigMap");
    assert_eq!(manifest.primary, configmap);
    assert!(manifest.allows(&configmap, Verb::Patch));
    assert!(!manifest.allows(&configmap, Verb::Create));
    assert!(!manifest.allows(&Gvk::new("", "v1", "Secret"), Verb::Create));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_map_to_actions_and_errors() {
    let guest = hostile_guest().await;
    assert_eq!(reconcile(&guest, "anything").await, Ok(Action::Done));
    assert_eq!(
        reconcile(&guest, "requeue-after").await,
        Ok(Action::RequeueAfter(Duration::from_secs(1)))
    );
    match reconcile(&guest, "fail").await {
        Err(ReconcileError::Guest(GuestError::Unavailable(message))) => {
            assert!(message.contains("on purpose"), "{message}")
        }
        other => panic!("expected unavailable, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_has_no_files_environment_or_network() {
    let guest = hostile_guest().await;
    let files = report(reconcile(&guest, "open-file").await);
    assert!(files.starts_with("open-file: /etc/hostname: "), "{files}");
    assert!(!files.contains("succeeded"), "a file was readable: {files}");
    let env = report(reconcile(&guest, "read-env").await);
    assert_eq!(env, "read-env: 0 variables");
    let connect = report(reconcile(&guest, "connect").await);
    assert!(connect.starts_with("connect: 127.0.0.1:1: "), "{connect}");
    assert!(
        !connect.contains("succeeded"),
        "a socket connected: {connect}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preopened_directory_is_the_only_filesystem() {
    let dir = std::env::temp_dir().join(format!("recon-preopen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("hostname"), "sandboxed\n").unwrap();
    let runtime = Runtime::new(RuntimeConfig {
        preopens: vec![Preopen {
            host: dir.clone(),
            guest: "/etc".into(),
            read_only: false,
        }],
        ..config()
    })
    .unwrap();
    let guest = hostile(&runtime).await;
    let files = report(reconcile(&guest, "open-file").await);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        files.starts_with("open-file: /etc/hostname: succeeded (10 bytes); /: "),
        "{files}"
    );
    assert!(!files.contains("/: succeeded"), "/ stays hidden: {files}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_granted_to_one_guest_is_its_alone_and_read_only_holds() {
    let base = std::env::temp_dir().join(format!("recon-guest-dirs-{}", std::process::id()));
    let (own, shared) = (base.join("own"), base.join("read-only"));
    std::fs::create_dir_all(&own).unwrap();
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::write(shared.join("reconciles"), "before\n").unwrap();
    let loaded = hostile_guest().await;
    let writer = loaded.with_dirs(vec![Preopen {
        host: own.clone(),
        guest: "/record".into(),
        read_only: false,
    }]);
    let reader = loaded
        .renamed("hostile-b")
        .unwrap()
        .with_dirs(vec![Preopen {
            host: shared.clone(),
            guest: "/record".into(),
            read_only: true,
        }]);
    assert_eq!(reconcile(&writer, "record-a").await, Ok(Action::Done));
    let refused = report(reconcile(&reader, "record-b").await);
    let without = report(reconcile(&loaded, "record-c").await);
    let written = std::fs::read_to_string(own.join("reconciles")).unwrap();
    let kept = std::fs::read_to_string(shared.join("reconciles")).unwrap();
    std::fs::remove_dir_all(&base).unwrap();
    assert!(written.starts_with("default/record-a "), "{written}");
    assert_eq!(written.lines().count(), 1, "only the granted guest wrote");
    assert!(refused.starts_with("record: "), "{refused}");
    assert_eq!(kept, "before\n", "a read-only grant stays unwritten");
    assert!(
        without.starts_with("record: "),
        "the guest without the grant sees no /record: {without}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_is_a_trap_quoting_the_message_and_the_next_instance_works() {
    let guest = hostile_guest().await;
    let mut instance = guest.instantiate(Arc::new(NoServices)).await.unwrap();
    match instance.reconcile("default/panic", 0).await {
        Err(error @ ReconcileError::Trap { .. }) => {
            assert!(error.is_fault());
            // The SDK's panic hook: one line, one log record.
            let ReconcileError::Trap { output, .. } = &error else {
                unreachable!()
            };
            assert_eq!(output.lines().count(), 1, "{output}");
            assert!(output.starts_with("panicked at "), "{output}");
            let text = error.to_string();
            assert!(
                text.contains("hostile guest panicked on purpose"),
                "the panic message is quoted: {text}"
            );
        }
        other => panic!("expected a trap, got {other:?}"),
    }
    assert!(!instance.is_usable(), "a trapped instance is discarded");
    assert_eq!(reconcile(&guest, "after-the-panic").await, Ok(Action::Done));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allocating_past_the_memory_limit_is_a_memory_fault() {
    let guest = hostile_guest().await;
    let mut instance = guest.instantiate(Arc::new(NoServices)).await.unwrap();
    match instance.reconcile("default/alloc-1gib", 0).await {
        Err(ReconcileError::MemoryLimit {
            limit, requested, ..
        }) => {
            assert_eq!(limit, 64 << 20);
            assert!(requested > 1 << 30, "asked for {requested}");
        }
        other => panic!("expected a memory fault, got {other:?}"),
    }
    assert!(instance.memory_high_water() <= 64 << 20);
    assert_eq!(reconcile(&guest, "after-the-fault").await, Ok(Action::Done));
}

/// A runtime whose deadlines run on `clock`.
fn runtime_on(clock: &FakeClock, preopens: Vec<Preopen>) -> Runtime {
    Runtime::new(RuntimeConfig {
        clock: clock.shared(),
        preopens,
        ..config()
    })
    .unwrap()
}

/// Drives `call` to its end: ticks the epoch (a spinning guest yields at
/// each tick) and, once `call` waits on its deadline, moves `clock` to it.
/// Panics if `call` ends before the clock reached the deadline.
async fn past_the_deadline<T: Send + 'static>(
    runtime: &Runtime,
    clock: &FakeClock,
    call: tokio::task::JoinHandle<T>,
) -> T {
    clock.wait_for_waiters(1).await;
    // Many yields with the deadline not yet reached: the call goes on.
    for _ in 0..50 {
        runtime.tick();
        tokio::task::yield_now().await;
    }
    assert!(!call.is_finished(), "the call ended before its deadline");
    let mut ticks = 0u64;
    while !call.is_finished() {
        assert!(ticks < 10_000_000, "the call was never stopped");
        clock.advance_to_next_deadline();
        runtime.tick();
        ticks += 1;
        tokio::task::yield_now().await;
    }
    call.await.unwrap()
}

/// Reconciles `key` with a new instance of the hostile guest, which the
/// 50 ms deadline stops; a reconcile of `after` then succeeds. Whether
/// the stopped instance is still usable.
async fn stopped_at_the_deadline(key: &'static str, after: &str) -> bool {
    let clock = FakeClock::new();
    let runtime = runtime_on(&clock, vec![]);
    let guest = hostile(&runtime).await;
    let mut instance = guest.instantiate(Arc::new(NoServices)).await.unwrap();
    let call = tokio::spawn(async move {
        let result = instance.reconcile(key, 0).await;
        (result, instance.is_usable())
    });
    let usable = match past_the_deadline(&runtime, &clock, call).await {
        (Err(ReconcileError::Timeout { limit }), usable) => {
            assert_eq!(limit, Duration::from_millis(50));
            usable
        }
        (other, _) => panic!("expected a timeout, got {other:?}"),
    };
    assert_eq!(reconcile(&guest, after).await, Ok(Action::Done));
    usable
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_loop_is_stopped_at_the_deadline() {
    let usable = stopped_at_the_deadline("default/loop-forever", "after-the-loop").await;
    assert!(!usable, "the stopped instance is dropped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_blocked_in_wasi_is_stopped_at_the_deadline() {
    // `sleep` blocks in a WASI poll for an hour of real time; the deadline
    // (50 ms on the fake clock) abandons it.
    stopped_at_the_deadline("default/sleep", "after-the-sleep").await;
}

/// A directory preopened as `/hostile` whose `manifest.json` is `attack`.
fn manifest_attack(name: &str, attack: &str) -> Preopen {
    let dir = std::env::temp_dir().join(format!("recon-attack-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("manifest.json"), attack).unwrap();
    Preopen {
        host: dir,
        guest: "/hostile".into(),
        read_only: false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_that_blocks_or_spins_is_rejected_at_its_deadline() {
    for (name, attack) in [
        ("sleep", r#"{"sleep": true}"#),
        ("spin", r#"{"spin": true}"#),
    ] {
        let clock = FakeClock::new();
        let preopen = manifest_attack(name, attack);
        let dir = preopen.host.clone();
        let runtime = runtime_on(&clock, vec![preopen]);
        let load = tokio::spawn({
            let runtime = runtime.clone();
            async move { runtime.load(&guests::guest_wasm("hostile")).await }
        });
        // The compile (or cache load) comes first; the deadline is armed
        // only once manifest() runs.
        let error = past_the_deadline(&runtime, &clock, load)
            .await
            .expect_err("the load fails");
        std::fs::remove_dir_all(&dir).unwrap();
        let text = error.to_string();
        assert!(
            matches!(
                error,
                LoadError::Manifest {
                    source: ReconcileError::Timeout { .. },
                    ..
                }
            ),
            "{name}: {text}"
        );
        assert!(
            text.contains(
                "hostile.wasm: manifest() failed: the guest ran past its deadline of 80ms"
            ),
            "{name}: {text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_read_from_the_attack_file_names_the_guest() {
    let preopen = manifest_attack("name", r#"{"name": "hostile-renamed"}"#);
    let dir = preopen.host.clone();
    let runtime = runtime_on(&FakeClock::new(), vec![preopen]);
    let guest = hostile(&runtime).await;
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(guest.name(), "hostile-renamed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reused_instance_serves_many_reconciles() {
    let guest = hostile_guest().await;
    let mut instance = guest.instantiate(Arc::new(NoServices)).await.unwrap();
    for i in 0..50 {
        assert_eq!(
            instance.reconcile(&format!("default/key-{i}"), 0).await,
            Ok(Action::Done)
        );
    }
    assert!(instance.is_usable());
    assert!(instance.memory_high_water() > 0);
}

/// A fresh instance starts from the component's memory image and zero
/// pages, whatever the instance before it in the same slot wrote, though
/// the slot keeps its pages resident; a reused instance keeps its memory,
/// which shows the check sees what is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_instance_sees_nothing_an_earlier_one_left_in_memory() {
    let runtime = Runtime::new(RuntimeConfig {
        max_instances: 1,
        ..config()
    })
    .unwrap();
    let guest = hostile(&runtime).await;
    for _ in 0..3 {
        assert_eq!(
            report(reconcile(&guest, "residue").await),
            "residue: 0 words were set"
        );
    }
    let mut instance = guest.instantiate(Arc::new(NoServices)).await.unwrap();
    let mut run = async || report(instance.reconcile("default/residue", 0).await);
    assert_eq!(run().await, "residue: 0 words were set");
    assert_eq!(
        run().await,
        format!("residue: {} words were set", hostile::RESIDUE_WORDS)
    );
}

/// An instantiation that fails still ran on a guest lane: its time is the
/// guest's CPU (what `recon_guest_cpu_seconds_total` counts), measured here
/// on the real clock since a fake one does not move while it runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_instantiation_is_a_clear_error_and_its_time_counts_as_cpu() {
    let runtime = Runtime::new(RuntimeConfig {
        clock: recon_host::clock::SystemClock::shared(),
        max_instances: 1,
        ..config()
    })
    .unwrap();
    let guest = hostile(&runtime).await;
    let _held = guest.instantiate(Arc::new(NoServices)).await.unwrap();
    let failed = match guest.instantiate(Arc::new(NoServices)).await {
        Err(failed) => failed,
        Ok(_) => panic!("a second instance took the only slot"),
    };
    match &failed.error {
        ReconcileError::Instantiate(message) => {
            assert!(message.contains("limit"), "{message}")
        }
        other => panic!("expected an instantiation error, got {other:?}"),
    }
    assert!(failed.cpu > Duration::ZERO, "{failed:?}");
}

fn write_temp(name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("recon-{}-{name}", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    path
}

async fn load_error(bytes: &[u8], name: &str) -> LoadError {
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: None,
        ..config()
    })
    .unwrap();
    let path = write_temp(name, bytes);
    let error = runtime.load(&path).await.expect_err("the load fails");
    std::fs::remove_file(&path).unwrap();
    error
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_that_are_not_controller_components_get_clear_errors() {
    let missing = Runtime::new(config())
        .unwrap()
        .load(Path::new("/nonexistent/guest.wasm"))
        .await
        .unwrap_err();
    assert!(
        missing
            .to_string()
            .contains("/nonexistent/guest.wasm: cannot read"),
        "{missing}"
    );

    let text = load_error(b"not wasm at all", "text.wasm").await;
    assert!(
        text.to_string().contains("not a WebAssembly file"),
        "{text}"
    );

    let module = wat::parse_str("(module)").unwrap();
    let module = load_error(&module, "module.wasm").await;
    assert!(
        module
            .to_string()
            .contains("core WebAssembly module, not a component"),
        "{module}"
    );

    let mut truncated = guests_prefix();
    truncated.truncate(200);
    let truncated = load_error(&truncated, "truncated.wasm").await;
    assert!(
        matches!(truncated, LoadError::Compile { .. }),
        "{truncated}"
    );

    let empty = wat::parse_str("(component)").unwrap();
    let empty = load_error(&empty, "empty.wasm").await;
    let text = empty.to_string();
    assert!(matches!(empty, LoadError::WrongWorld { .. }), "{text}");
    assert!(
        text.contains("does not target the world recon:controller/controller@0.4.0"),
        "{text}"
    );
    assert!(
        text.contains("recon:controller/reconciler@0.4.0"),
        "names the missing export: {text}"
    );

    let other_version = wat::parse_str(
        r#"(component
            (import "recon:controller/log@0.1.0" (instance
                (export "log" (func (param "message" string))))))"#,
    )
    .unwrap();
    let other_version = load_error(&other_version, "v1.wasm").await;
    let text = other_version.to_string();
    assert!(
        matches!(other_version, LoadError::WrongWorld { .. }),
        "{text}"
    );
    assert!(
        text.contains("recon:controller/log@0.1.0"),
        "names the import: {text}"
    );
    assert!(
        text.contains(
            "it was built for recon:controller@0.1.0, and this host serves @0.4.0: rebuild it"
        ),
        "{text}"
    );
}

/// The first bytes of a real component.
fn guests_prefix() -> Vec<u8> {
    std::fs::read(guests::guest_wasm("hostile")).unwrap()
}
