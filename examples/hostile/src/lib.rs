//! A deliberately hostile guest, used only by the host's tests (sandbox,
//! resource limits, result handling) and benchmarks; it is not an example
//! to copy. Its primary kind is ConfigMap and it may only patch
//! ConfigMaps. What `reconcile` does depends on the key's name alone:
//!
//! | name               | attempt                                                    |
//! |--------------------|------------------------------------------------------------|
//! | `open-file`        | read `/etc/hostname` and list `/` through `std::fs`        |
//! | `read-env`         | read `std::env::vars()`                                    |
//! | `loop-forever`     | spin without end                                           |
//! | `bulk-copy`        | copy [`BULK_COPY`] bytes at a time without end: each copy one `memory.copy` instruction, which no epoch check interrupts |
//! | `sleep`            | block in WASI (`std::thread::sleep`) for an hour           |
//! | `alloc-1gib`       | allocate 1 GiB and write every byte                        |
//! | `write-undeclared` | create a Secret, which the manifest does not allow         |
//! | `forbidden`        | the same create, returning its `forbidden` error as is     |
//! | `panic`            | panic with `hostile guest panicked on purpose`             |
//! | `connect`          | `TcpStream::connect("127.0.0.1:1")`                        |
//! | `requeue-after`    | return `RequeueAfter(1 s)`                                 |
//! | `fail`             | return `Err(Error::Unavailable(..))`                       |
//! | `record-*`         | append `KEY START END` to `/record/reconciles`             |
//! | `list-all`         | list every cached ConfigMap, JSON and all, [`LIST_ROUNDS`] times |
//! | `list-keys`        | list the cached ConfigMaps (`list`), and those of its namespace (`list_meta`), and report their keys in the order handed over |
//! | `enqueue-flood`    | enqueue up to [`FLOOD_KEYS`] distinct keys until refused   |
//! | `long-key`         | enqueue a key whose name is 1 MiB long                     |
//! | `log-flood`        | log an 8 MiB message, field and stdout line, then [`FLOOD_LINES`] lines |
//! | `big-write`        | merge-patch its own ConfigMap with an 8 MiB body           |
//! | `stale-patch`      | merge-patch its own ConfigMap as of resourceVersion `1`, returning the `conflict` as is |
//! | `gone-patch`       | merge-patch the ConfigMap [`GONE`], which does not exist, returning the `not-found` as is |
//! | `claimed-conflict` | return `Err(Error::Conflict(..))` without writing          |
//! | `residue`          | count the words of [`RESIDUE`] an earlier reconcile of this instance's memory set, then set them all |
//! | `again-NAME`       | the attempt `NAME`, then `RequeueAfter(0)` however it ended, so the host's per-key backoff never spaces it out (`again-big-write`) |
//! | anything else      | nothing: `Ok(Action::Done)` (the benchmarks' no-op)        |
//!
//! When an attempt returns (files, env, the write, connect, and the
//! allocation if no limit stopped it), the guest returns
//! `Err(Error::Other(report))`, the report naming what happened:
//! `open-file: /etc/hostname: <error>; /: <error>`, `read-env: 0 variables`,
//! `read-env: 3 variables: A,B,C`, `write-undeclared: forbidden: ...`,
//! `connect: 127.0.0.1:1: <error>`, `list-all: <error>`,
//! `list-keys: KEY,KEY,...; KEY,KEY,...` (`list`, then `list_meta`),
//! `enqueue-flood: N keys queued, then <error>`, `long-key: <error>`,
//! `log-flood: logged`, `big-write: <error>`. An attempt that got through
//! says `succeeded`, so a test can tell a working sandbox from a broken one.
//!
//! `manifest()` attacks too when the host preopens a directory as
//! `/hostile` holding `manifest.json` ([`MANIFEST_FILE`]), a JSON object
//! whose members (all optional) say how:
//!
//! | member        | effect                                                        |
//! |---------------|---------------------------------------------------------------|
//! | `"sleep"`     | block in WASI for an hour inside `manifest()`                 |
//! | `"spin"`      | spin without end inside `manifest()`                          |
//! | `"name"`      | the manifest's name instead of `hostile`                      |
//! | `"concurrency"` | ask for this many workers                                   |
//! | `"watch-kind"`  | also watch this kind, `[group, version, kind]`, e.g. one the server does not serve |
//! | `"watch-mapping"` | how that kind's changes map to ConfigMap keys: `"label"` (the default: label `hostile`), `"annotation"` (annotation `hostile`), `"owner"` (the controller owner), `"index"` (the ConfigMaps whose label `watched` names the object, through the index [`WATCHED_INDEX`]) |
//! | `"watch-index"` | declare the field index [`WATCHED_PATH_INDEX`] on the watched kind, reading this path |
//! | `"watch-keeps-managed-fields"` | keep the watched kind's `metadata.managedFields` in the cache (the benchmarks measure their cost) |
//! | `"watch-metadata-only"` | read the watched kind as metadata only |
//! | `"indexes"`     | declare this many field indexes on ConfigMaps                |
//! | `"resync-seconds"` | ask for a resync of its ConfigMaps this often            |
//!
//! Policy attacks, asking for more than an operator would grant (besides
//! `"watch-kind"`, a read) and acting outside the namespaces granted:
//!
//! | `manifest.json` member | effect                                         |
//! |------------------------|------------------------------------------------|
//! | `"creates"`            | also ask to create each kind of this list of `[group, version, kind]` (`[["", "v1", "ConfigMap"]]`) |
//!
//! | key name            | attempt                                              |
//! |---------------------|------------------------------------------------------|
//! | `write-kube-system` | create the ConfigMap [`INTRUDER`] in [`ELSEWHERE`]; reports `write-kube-system: <error>` or `... succeeded ...` |
//!
//! `record-*` keys log which host ran them: each host preopens its own
//! directory as `/record`, and the guest appends one line per reconcile —
//! the key and the wall-clock start and end in Unix nanoseconds, spanning
//! [`RECORD_HOLD`] — so a test can check that two hosts never reconciled at
//! the same time. Without the directory the reconcile fails.

use std::fs;
use std::hint::black_box;
use std::io::Write;
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use recon_guest_sdk::serde_json;
use recon_guest_sdk::{
    Action, Context, Error, Gvk, IndexSource, KeyMapping, Manifest, ObjectKey, Reconciler, Request,
    Result, Verb, Watch,
};

/// The address `connect` tries: nothing may be reached from a guest.
pub const CONNECT_ADDRESS: &str = "127.0.0.1:1";

/// The panic message of the `panic` key.
pub const PANIC_MESSAGE: &str = "hostile guest panicked on purpose";

/// The Secret `write-undeclared` tries to create.
pub const UNDECLARED_SECRET: &str = "hostile-undeclared";

/// The index (and label) of ConfigMaps that a `"watch-mapping": "index"`
/// watch maps through: a watched object queues the ConfigMaps whose label
/// `watched` is its name.
pub const WATCHED_INDEX: &str = "watched";

/// The field index a `"watch-index"` declares on the watched kind.
pub const WATCHED_PATH_INDEX: &str = "watched-path";

/// Where `manifest()` reads its attack, if the host preopens `/hostile`.
pub const MANIFEST_FILE: &str = "/hostile/manifest.json";

/// How long `sleep` blocks: far past any deadline.
pub const SLEEP: Duration = Duration::from_secs(3600);

/// The file `record-*` keys append to.
pub const RECORD_FILE: &str = "/record/reconciles";

/// The namespace `write-kube-system` writes into, outside any grant.
pub const ELSEWHERE: &str = "kube-system";

/// The ConfigMap `write-kube-system` creates in [`ELSEWHERE`].
pub const INTRUDER: &str = "hostile-intruder";

/// How long a `record-*` reconcile lasts, so that overlapping runs on two
/// hosts would show.
pub const RECORD_HOLD: Duration = Duration::from_millis(20);

/// The prefix of a key name that repeats its attempt without end.
pub const AGAIN: &str = "again-";

/// How often `list-all` lists.
pub const LIST_ROUNDS: usize = 50;

/// The most keys `enqueue-flood` tries.
pub const FLOOD_KEYS: usize = 1_000_000;

/// The lines `log-flood` logs before its huge ones.
pub const FLOOD_LINES: usize = 100_000;

/// How large `log-flood`'s huge message, field and line are.
pub const HUGE_LINE: usize = 8 << 20;

/// How much `bulk-copy` copies at a time.
pub const BULK_COPY: usize = 8 << 20;

/// How large `big-write`'s patch is.
pub const BIG_WRITE: usize = 8 << 20;

/// The ConfigMap `gone-patch` patches: none has this name.
pub const GONE: &str = "hostile-gone";

pub struct Hostile;

impl Reconciler for Hostile {
    fn manifest() -> Manifest {
        let attack = manifest_attack();
        let member = |name: &str| attack.get(name).filter(|v| !v.is_null());
        if member("sleep").is_some() {
            std::thread::sleep(SLEEP);
        }
        if member("spin").is_some() {
            loop_forever();
        }
        attack_manifest(&attack)
    }

    fn reconcile(ctx: &Context<'_>, request: Request) -> Result<Action> {
        match request.key.name.strip_prefix(AGAIN) {
            Some(name) => {
                // Whatever the attack returned, it runs again at once: a
                // requeue with no delay is not backed off.
                let _ = attack(ctx, &request, name);
                Ok(Action::RequeueAfter(Duration::ZERO))
            }
            None => attack(ctx, &request, &request.key.name),
        }
    }
}

recon_guest_sdk::export_reconciler!(Hostile);

/// The attempt the key name `name` asks for (see the table above).
fn attack(ctx: &Context<'_>, request: &Request, name: &str) -> Result<Action> {
    match name {
        "open-file" => Err(Error::Other(open_file())),
        "read-env" => Err(Error::Other(env_report(
            std::env::vars().map(|(name, _)| name).collect(),
        ))),
        "loop-forever" => loop_forever(),
        "bulk-copy" => bulk_copy(),
        "sleep" => {
            std::thread::sleep(SLEEP);
            Err(Error::Other("sleep: succeeded: slept an hour".into()))
        }
        "alloc-1gib" => Err(Error::Other(alloc_1gib())),
        "write-undeclared" => Err(Error::Other(write_undeclared(
            ctx,
            request.key.namespace.as_deref().unwrap_or("default"),
        ))),
        "forbidden" => {
            let mut secret = Secret::default();
            secret.metadata.namespace = request.key.namespace.clone();
            secret.metadata.name = Some(UNDECLARED_SECRET.to_string());
            ctx.create(&secret)?;
            Ok(Action::Done)
        }
        "write-kube-system" => Err(Error::Other(write_kube_system(ctx))),
        "panic" => panic!("{PANIC_MESSAGE}"),
        "connect" => Err(Error::Other(connect())),
        "requeue-after" => Ok(Action::RequeueAfter(Duration::from_secs(1))),
        "fail" => Err(Error::Unavailable(
            "hostile guest failed on purpose".to_string(),
        )),
        "list-all" => Err(Error::Other(list_all(ctx))),
        "list-keys" => Err(Error::Other(list_keys(
            ctx,
            request.key.namespace.as_deref(),
        )?)),
        "enqueue-flood" => Err(Error::Other(enqueue_flood(
            ctx,
            request.key.namespace.as_deref(),
        ))),
        "long-key" => {
            let key = ObjectKey::namespaced("default", &"k".repeat(1 << 20));
            Err(Error::Other(match ctx.enqueue(&key) {
                Ok(()) => "long-key: succeeded: a 1 MiB key was queued".to_string(),
                Err(e) => format!("long-key: {e}"),
            }))
        }
        "log-flood" => Err(Error::Other(log_flood(ctx))),
        "residue" => Err(Error::Other(residue())),
        "big-write" => Err(Error::Other(big_write(ctx, &request.key))),
        "stale-patch" => {
            let key = &request.key;
            let stale = serde_json::json!({"metadata": {"resourceVersion": "1"}});
            ctx.patch_merge_meta::<ConfigMap>(key.namespace.as_deref(), &key.name, &stale)?;
            Err(Error::Other("stale-patch: succeeded".into()))
        }
        "gone-patch" => {
            let patch = serde_json::json!({"data": {"a": "b"}});
            ctx.patch_merge_meta::<ConfigMap>(request.key.namespace.as_deref(), GONE, &patch)?;
            Err(Error::Other("gone-patch: succeeded".into()))
        }
        "claimed-conflict" => Err(Error::Conflict("claimed without a write".into())),
        name if name.starts_with("record-") => {
            record(&request.key.to_string()).map_err(|e| Error::Other(format!("record: {e}")))?;
            Ok(Action::Done)
        }
        _ => Ok(Action::Done),
    }
}

/// The attack `manifest()` mounts: the object in [`MANIFEST_FILE`], else
/// an empty one.
/// The manifest `manifest()` declares for the `manifest.json` object
/// `attack` (once any sleep or spin it asks for is over); tests build the
/// same manifest natively with it.
pub fn attack_manifest(attack: &serde_json::Map<String, serde_json::Value>) -> Manifest {
    let member = |name: &str| attack.get(name).filter(|v| !v.is_null());
    let name = member("name").and_then(|v| v.as_str()).unwrap_or("hostile");
    let mut manifest = Manifest::new::<ConfigMap>(name).writes::<ConfigMap>(&[Verb::Patch]);
    if let Some(n) = member("concurrency").and_then(|v| v.as_u64()) {
        manifest = manifest.concurrency(u32::try_from(n).unwrap_or(u32::MAX));
    }
    if let Some([group, version, kind]) =
        member("watch-kind").and_then(|v| serde_json::from_value::<[String; 3]>(v.clone()).ok())
    {
        let mapping = match member("watch-mapping").and_then(|v| v.as_str()) {
            Some("annotation") => KeyMapping::Annotation("hostile".into()),
            Some("owner") => KeyMapping::ControllerOwner,
            Some("index") => {
                let source = IndexSource::Label(WATCHED_INDEX.into());
                manifest = manifest.index::<ConfigMap>(WATCHED_INDEX, source);
                KeyMapping::ByIndex(WATCHED_INDEX.into())
            }
            _ => KeyMapping::Label("hostile".into()),
        };
        let kind = Gvk::new(&group, &version, &kind);
        if let Some(path) = member("watch-index").and_then(|v| v.as_str()) {
            let source = IndexSource::Field(path.into());
            manifest = manifest.index_kind(WATCHED_PATH_INDEX, kind.clone(), source);
        }
        if member("watch-keeps-managed-fields").is_some() {
            manifest = manifest.keep_managed_fields_of(kind.clone());
        }
        if member("watch-metadata-only").is_some() {
            manifest = manifest.metadata_only_of(kind.clone());
        }
        manifest = manifest.watch(Watch {
            kind,
            mapping,
            label_selector: None,
        });
    }
    if let Some(seconds) = member("resync-seconds").and_then(|v| v.as_u64()) {
        manifest = manifest.resync_every(Duration::from_secs(seconds));
    }
    let indexes = member("indexes").and_then(|v| v.as_u64()).unwrap_or(0);
    for i in 0..indexes {
        let source = IndexSource::Field(format!("data.k{i}"));
        manifest = manifest.index::<ConfigMap>(&format!("i-{i}"), source);
    }
    // Policy attacks: writes beyond a grant.
    let creates =
        member("creates").and_then(|v| serde_json::from_value::<Vec<[String; 3]>>(v.clone()).ok());
    for [group, version, kind] in creates.unwrap_or_default() {
        manifest = manifest.writes_kind(Gvk::new(&group, &version, &kind), &[Verb::Create]);
    }
    manifest
}

/// Memory the `residue` key marks: zero in a fresh instance, whatever an
/// instance before it in the same slot wrote (256 KiB, beyond the
/// component's data: zero pages, not its memory image).
pub static RESIDUE: [AtomicU64; RESIDUE_WORDS] = [const { AtomicU64::new(0) }; RESIDUE_WORDS];

/// The words of [`RESIDUE`].
pub const RESIDUE_WORDS: usize = 32 * 1024;

/// `residue: N words were set`, then sets every word.
fn residue() -> String {
    let set = RESIDUE
        .iter()
        .filter(|word| word.load(Ordering::Relaxed) != 0)
        .count();
    for word in &RESIDUE {
        word.store(0x5eed_5eed_5eed_5eed, Ordering::Relaxed);
    }
    format!("residue: {set} words were set")
}

fn manifest_attack() -> serde_json::Map<String, serde_json::Value> {
    fs::read_to_string(MANIFEST_FILE)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

fn write_kube_system(ctx: &Context<'_>) -> String {
    let mut intruder = ConfigMap::default();
    intruder.metadata.namespace = Some(ELSEWHERE.to_string());
    intruder.metadata.name = Some(INTRUDER.to_string());
    match ctx.create(&intruder) {
        Ok(_) => format!("write-kube-system: succeeded: created ConfigMap {ELSEWHERE}/{INTRUDER}"),
        Err(e) => format!("write-kube-system: {e}"),
    }
}

fn open_file() -> String {
    let hostname = match fs::read_to_string("/etc/hostname") {
        Ok(text) => format!("succeeded ({} bytes)", text.len()),
        Err(e) => e.to_string(),
    };
    let root = match fs::read_dir("/") {
        Ok(entries) => format!("succeeded ({} entries)", entries.count()),
        Err(e) => e.to_string(),
    };
    format!("open-file: /etc/hostname: {hostname}; /: {root}")
}

/// `read-env: N variables[: A,B,C]`, the names sorted.
fn env_report(mut names: Vec<String>) -> String {
    names.sort();
    if names.is_empty() {
        "read-env: 0 variables".to_string()
    } else {
        format!("read-env: {} variables: {}", names.len(), names.join(","))
    }
}

fn loop_forever() -> ! {
    let mut spins: u64 = 0;
    loop {
        spins = black_box(spins.wrapping_add(1));
    }
}

fn bulk_copy() -> ! {
    let source = black_box(vec![1u8; BULK_COPY]);
    let mut target = vec![0u8; BULK_COPY];
    loop {
        target.copy_from_slice(black_box(&source));
        black_box(&mut target);
    }
}

fn alloc_1gib() -> String {
    const SIZE: usize = 1 << 30;
    // A non-zero fill writes every byte: the memory is touched, not just reserved.
    let block = black_box(vec![1u8; SIZE]);
    format!(
        "alloc-1gib: succeeded: allocated and touched {} bytes",
        block.len()
    )
}

fn write_undeclared(ctx: &Context<'_>, namespace: &str) -> String {
    let mut secret = Secret::default();
    secret.metadata.namespace = Some(namespace.to_string());
    secret.metadata.name = Some(UNDECLARED_SECRET.to_string());
    match ctx.create(&secret) {
        Ok(_) => {
            format!("write-undeclared: succeeded: created Secret {namespace}/{UNDECLARED_SECRET}")
        }
        Err(e) => format!("write-undeclared: {e}"),
    }
}

fn list_all(ctx: &Context<'_>) -> String {
    let mut listed = 0;
    for _ in 0..LIST_ROUNDS {
        match ctx.list::<ConfigMap>(None, None) {
            Ok(all) => listed += all.len(),
            Err(e) => return format!("list-all: {e}"),
        }
    }
    format!("list-all: succeeded: {listed} ConfigMaps in {LIST_ROUNDS} rounds")
}

fn list_keys(ctx: &Context<'_>, namespace: Option<&str>) -> Result<String> {
    let listed: Vec<String> = ctx
        .list::<ConfigMap>(None, None)?
        .iter()
        .map(|cm| {
            let name = cm.metadata.name.as_deref().unwrap_or_default();
            ObjectKey::new(cm.metadata.namespace.as_deref(), name).to_string()
        })
        .collect();
    let in_namespace: Vec<String> = ctx
        .list_meta::<ConfigMap>(namespace, None)?
        .iter()
        .map(|meta| meta.key.to_string())
        .collect();
    Ok(format!(
        "list-keys: {}; {}",
        listed.join(","),
        in_namespace.join(",")
    ))
}

fn enqueue_flood(ctx: &Context<'_>, namespace: Option<&str>) -> String {
    let namespace = namespace.unwrap_or("default");
    for i in 0..FLOOD_KEYS {
        let key = ObjectKey::namespaced(namespace, &format!("flood-{i}"));
        if let Err(e) = ctx.enqueue(&key) {
            return format!("enqueue-flood: {i} keys queued, then {e}");
        }
    }
    format!("enqueue-flood: succeeded: {FLOOD_KEYS} keys queued")
}

fn log_flood(ctx: &Context<'_>) -> String {
    let huge = "h".repeat(HUGE_LINE);
    ctx.info(&huge, &[]);
    ctx.info("huge field", &[("field", &huge)]);
    println!("{huge}");
    drop(huge);
    for i in 0..FLOOD_LINES {
        ctx.info("flood", &[("line", &i)]);
    }
    "log-flood: logged".to_string()
}

fn big_write(ctx: &Context<'_>, key: &ObjectKey) -> String {
    let patch = serde_json::json!({"data": {"big": "b".repeat(BIG_WRITE)}});
    match ctx.patch_merge::<ConfigMap>(key.namespace.as_deref(), &key.name, &patch) {
        Ok(_) => format!("big-write: succeeded: {BIG_WRITE} bytes written"),
        Err(e) => format!("big-write: {e}"),
    }
}

fn unix_nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// Holds for [`RECORD_HOLD`] and appends `KEY START END` to [`RECORD_FILE`].
fn record(key: &str) -> std::io::Result<()> {
    let start = unix_nanos();
    std::thread::sleep(RECORD_HOLD);
    let end = unix_nanos();
    let mut file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(RECORD_FILE)?;
    file.write_all(format!("{key} {start} {end}\n").as_bytes())
}

fn connect() -> String {
    match TcpStream::connect(CONNECT_ADDRESS) {
        Ok(_) => format!("connect: {CONNECT_ADDRESS}: succeeded"),
        Err(e) => format!("connect: {CONNECT_ADDRESS}: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use recon_guest_sdk::ObjectKey;
    use recon_guest_sdk::testing::FakeCluster;

    use super::*;

    fn run(name: &str) -> Result<Action> {
        FakeCluster::new::<Hostile>().reconcile(&ObjectKey::namespaced("default", name))
    }

    #[test]
    fn record_without_its_directory_fails_and_says_why() {
        let report = report("record-1");
        assert!(report.starts_with("record: "), "{report}");
    }

    fn report(name: &str) -> String {
        match run(name) {
            Err(Error::Other(report)) => report,
            other => panic!("{name}: expected a report, got {other:?}"),
        }
    }

    #[test]
    fn other_names_are_no_ops() {
        let cluster = FakeCluster::new::<Hostile>();
        for name in ["noop", "bench-1", ""] {
            let key = ObjectKey::namespaced("default", name);
            assert_eq!(cluster.reconcile(&key), Ok(Action::Done));
        }
        assert!(cluster.writes().is_empty());
        assert!(cluster.logs().is_empty());
    }

    #[test]
    fn result_handling_keys() {
        assert_eq!(
            run("requeue-after"),
            Ok(Action::RequeueAfter(Duration::from_secs(1)))
        );
        assert_eq!(
            run("fail"),
            Err(Error::Unavailable("hostile guest failed on purpose".into()))
        );
    }

    #[test]
    #[should_panic(expected = "hostile guest panicked on purpose")]
    fn panic_panics() {
        let _ = run("panic");
    }

    /// Reconciling `namespace/action` fails with the guest's report that
    /// the action was forbidden.
    #[track_caller]
    fn assert_reported_forbidden(cluster: &FakeCluster, namespace: &str, action: &str) {
        let key = ObjectKey::namespaced(namespace, action);
        let Err(Error::Other(report)) = cluster.reconcile(&key) else {
            panic!("expected a report");
        };
        assert!(
            report.starts_with(&format!("{action}: forbidden: ")),
            "{report}"
        );
    }

    #[test]
    fn an_undeclared_write_is_forbidden_and_reported() {
        let cluster = FakeCluster::new::<Hostile>();
        assert_reported_forbidden(&cluster, "team", "write-undeclared");
        assert!(
            cluster
                .get::<Secret>(Some("team"), UNDECLARED_SECRET)
                .is_none()
        );
    }

    #[test]
    fn writing_into_kube_system_is_refused_without_the_create_and_reported() {
        let cluster = FakeCluster::new::<Hostile>();
        assert_reported_forbidden(&cluster, "default", "write-kube-system");
        assert!(
            cluster
                .get::<ConfigMap>(Some(ELSEWHERE), INTRUDER)
                .is_none()
        );
    }

    #[test]
    fn env_reports_count_and_name_the_variables() {
        assert_eq!(env_report(vec![]), "read-env: 0 variables");
        assert_eq!(
            env_report(vec!["C".into(), "A".into(), "B".into()]),
            "read-env: 3 variables: A,B,C"
        );
        let native = report("read-env");
        let count = std::env::vars().count();
        assert!(
            native.starts_with(&format!("read-env: {count} variables")),
            "{native}"
        );
    }

    /// Natively nothing is sandboxed: the reports must say so plainly.
    #[test]
    fn unsandboxed_attempts_report_success() {
        let files = report("open-file");
        assert!(files.starts_with("open-file: /etc/hostname: "), "{files}");
        assert!(files.contains("; /: succeeded ("), "{files}");
    }

    #[test]
    fn a_refused_connection_is_reported() {
        let connect = report("connect");
        assert!(connect.starts_with("connect: 127.0.0.1:1: "), "{connect}");
        assert!(!connect.contains("succeeded"), "{connect}");
    }
}
