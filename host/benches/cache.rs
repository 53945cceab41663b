//! Benchmark of the informer cache: parse + insert, update and index-query
//! throughput, and resident memory per cached object, on 100,000 objects of
//! the shared Pod fixture's shape (testdata/pod.json, varied per object).
//!
//! Memory is measured in a fresh process per variant (the benchmark
//! re-executes itself with `--memory=VARIANT`) as (RSS after − RSS before)
//! / count from /proc/self/statm. Variants: managedFields kept or dropped,
//! plain or compressed as an informer compresses them (a dictionary learnt
//! from the first objects), and Pods that differ only in their metadata or
//! also in what each Pod of a workload has of its own (token volume, node,
//! addresses, container ids, times). Figures are printed, never asserted.

mod support;

use std::hint::black_box;
use std::time::{Duration, Instant};

use recon_host::informer::{Indexer, NAMESPACE_INDEX, index_func, namespace_index_func};
use recon_host::object::{Compactor, Object};
use serde_json::{Value, json};

const COUNT: usize = 100_000;
const NAMESPACES: usize = 100;
const APPS: usize = 50;
const PAGE_SIZE: usize = 4096;

/// Produces realistic compact JSON inputs from the fixture, one at a time.
struct Inputs {
    template: Value,
    /// Whether each Pod also has its own token volume, node, addresses,
    /// container ids and times, as the Pods of a real workload do.
    own_status: bool,
}

impl Inputs {
    fn new() -> Inputs {
        let template =
            serde_json::from_str(include_str!("../testdata/pod.json")).expect("the fixture parses");
        Inputs {
            template,
            own_status: false,
        }
    }

    /// Inputs whose Pods differ beyond their metadata.
    fn with_own_status() -> Inputs {
        Inputs {
            own_status: true,
            ..Inputs::new()
        }
    }

    /// Object `i` at `version`: namespace, name, uid, labels and
    /// resourceVersion vary; the shape stays the fixture's.
    fn make(&mut self, i: usize, version: usize) -> String {
        let app = format!("svc-{}", i % APPS);
        let hash = format!(
            "{:010x}",
            (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 24
        );
        let meta = &mut self.template["metadata"];
        meta["namespace"] = json!(format!("perf-{}", i % NAMESPACES));
        meta["name"] = json!(format!("{app}-{hash}-{i:06}"));
        meta["generateName"] = json!(format!("{app}-{hash}-"));
        meta["uid"] = json!(format!(
            "{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}",
            i,
            version & 0xffff,
            i & 0xfff,
            (i >> 12) & 0xfff,
            (i as u64).wrapping_mul(0x2545_f491_4f6c_dd1d) >> 16
        ));
        meta["resourceVersion"] = json!((1_000_000 + COUNT * version + i).to_string());
        let labels = &mut meta["labels"];
        labels["app"] = json!(app);
        labels["app.kubernetes.io/name"] = json!(app);
        labels["app.kubernetes.io/instance"] = json!(format!("{app}-prod"));
        labels["app.kubernetes.io/part-of"] = json!(format!("team-{}", i % 7));
        labels["pod-template-hash"] = json!(hash);
        let json = serde_json::to_string(&self.template).expect("a Value serializes");
        if self.own_status {
            own_status(&json, i)
        } else {
            json
        }
    }
}

/// `json` with what Pod `i` has of its own: the token volume's suffix, the
/// node, the addresses, the container ids and the times.
fn own_status(json: &str, i: usize) -> String {
    let hex = |salt: u64| {
        format!(
            "{:016x}",
            (i as u64 ^ salt).wrapping_mul(0x2545_f491_4f6c_dd1d)
        )
    };
    let mut pod: Value = serde_json::from_str(&json.replace(
        "kube-api-access-8sz46",
        &format!("kube-api-access-{}", &hex(3)[..5]),
    ))
    .expect("the varied fixture parses");
    let time = |seconds: usize| {
        format!(
            "2024-0{}-1{}T{:02}:{:02}:{:02}Z",
            1 + i % 9,
            i % 10,
            i % 24,
            (i / 24) % 60,
            seconds % 60
        )
    };
    pod["spec"]["nodeName"] = json!(format!("node-{}", i % 40));
    let status = &mut pod["status"];
    status["podIP"] = json!(format!("10.{}.{}.{}", i % 200, (i / 200) % 250, i % 250));
    status["podIPs"] = json!([{"ip": status["podIP"].clone()}]);
    status["hostIP"] = json!(format!("192.168.{}.{}", (i % 40) / 250, i % 40));
    status["startTime"] = json!(time(i));
    for (n, condition) in status["conditions"]
        .as_array_mut()
        .into_iter()
        .flatten()
        .enumerate()
    {
        condition["lastTransitionTime"] = json!(time(i + n));
    }
    for container in status["containerStatuses"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        container["containerID"] = json!(format!(
            "containerd://{}{}{}{}",
            hex(4),
            hex(5),
            hex(6),
            hex(7)
        ));
        if let Some(running) = container["state"]["running"].as_object_mut() {
            running.insert("startedAt".into(), json!(time(i + 7)));
        }
    }
    serde_json::to_string(&pod).expect("a Value serializes")
}

/// How the benchmark makes each object's cached form.
#[derive(Clone, Copy)]
struct Form {
    prune: bool,
    compress: bool,
}

fn store() -> Indexer {
    let app = index_func(|obj| {
        Ok(obj
            .label("app")
            .map(std::borrow::Cow::Borrowed)
            .into_iter()
            .collect())
    });
    Indexer::new(vec![
        (NAMESPACE_INDEX.to_owned(), namespace_index_func()),
        ("app".to_owned(), app),
    ])
}

fn rss_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let resident: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("statm has a resident field");
    resident * PAGE_SIZE
}

fn per_second(ops: usize, elapsed: Duration) -> f64 {
    ops as f64 / elapsed.as_secs_f64()
}

/// Parses (and compresses, as an informer does) and stores `COUNT` objects
/// at `version`, timing only parse + compress + add.
fn load(
    store: &Indexer,
    inputs: &mut Inputs,
    version: usize,
    form: Form,
    compactor: &Compactor,
) -> Duration {
    let mut elapsed = Duration::ZERO;
    for i in 0..COUNT {
        let json = inputs.make(i, version);
        let start = Instant::now();
        let obj = if form.prune {
            Object::from_json_pruned(&json)
        } else {
            Object::from_json(&json)
        }
        .expect("generated objects parse");
        let obj = if form.compress {
            compactor.compact(obj)
        } else {
            obj
        };
        store.add(obj);
        elapsed += start.elapsed();
    }
    elapsed
}

/// Child process: memory per object for one variant, on a store with the
/// namespace index only.
fn memory(variant: &str) {
    let (form, mut inputs) = match variant {
        "kept" => (
            Form {
                prune: false,
                compress: false,
            },
            Inputs::new(),
        ),
        "dropped" => (
            Form {
                prune: true,
                compress: false,
            },
            Inputs::new(),
        ),
        "kept-compressed" => (
            Form {
                prune: false,
                compress: true,
            },
            Inputs::new(),
        ),
        "compressed" => (
            Form {
                prune: true,
                compress: true,
            },
            Inputs::new(),
        ),
        "own-status" => (
            Form {
                prune: true,
                compress: false,
            },
            Inputs::with_own_status(),
        ),
        "own-status-compressed" => (
            Form {
                prune: true,
                compress: true,
            },
            Inputs::with_own_status(),
        ),
        other => panic!("unknown memory variant {other:?}"),
    };
    black_box(inputs.make(0, 0));
    let store = Indexer::with_namespace_index();
    let compactor = Compactor::new();
    let before = rss_bytes();
    let elapsed = load(&store, &mut inputs, 0, form, &compactor);
    let after = rss_bytes();
    let objects = store.list();
    let heap: usize = objects.iter().map(Object::heap_size).sum();
    let json: usize = objects.iter().map(Object::json_len).sum();
    let compressed = objects.iter().filter(|o| o.is_compressed()).count();
    drop(objects);
    let dictionary = compactor.dictionary().map_or(0, |d| d.heap_size());
    println!(
        "rss_per_object={} heap_size_per_object={} json_per_object={} compressed={compressed} \
         dictionary_bytes={dictionary} insert_per_s={:.0}",
        (after - before) / COUNT,
        heap / COUNT,
        json / COUNT,
        per_second(COUNT, elapsed)
    );
    black_box(store);
}

fn throughput(compress: bool) {
    let mut inputs = Inputs::new();
    let store = store();
    let form = Form {
        prune: true,
        compress,
    };
    let compactor = Compactor::new();
    let how = if compress { "compress + " } else { "" };
    let insert = load(&store, &mut inputs, 0, form, &compactor);
    println!(
        "insert (parse pruned + {how}add), {COUNT} objects: {:>10.0} ops/s",
        per_second(COUNT, insert)
    );
    let update = load(&store, &mut inputs, 1, form, &compactor);
    println!(
        "update (parse pruned + {how}update):        {:>10.0} ops/s",
        per_second(COUNT, update)
    );

    let keys = store.list_keys();
    let start = Instant::now();
    for key in &keys {
        black_box(store.get_by_key(key));
    }
    println!(
        "get_by_key:                             {:>10.0} ops/s",
        per_second(keys.len(), start.elapsed())
    );
    // What a guest's read costs on top of the lookup: the JSON, whole.
    let start = Instant::now();
    for key in &keys {
        let object = store.get_by_key(key).expect("stored");
        black_box(object.json().into_owned());
    }
    println!(
        "get_by_key + the JSON as a String:      {:>10.0} ops/s",
        per_second(keys.len(), start.elapsed())
    );

    query_index(
        &store,
        NAMESPACE_INDEX,
        NAMESPACES,
        |ns| format!("perf-{ns}"),
        "by_index(namespace)",
    );
    query_index(
        &store,
        "app",
        APPS,
        |app| format!("svc-{app}"),
        "by_index(label app)",
    );
}

/// Queries `index` for each of `count` values (`value(n)` the n-th), 20
/// rounds over, and prints the rates as `label`.
fn query_index(
    store: &Indexer,
    index: &str,
    count: usize,
    value: impl Fn(usize) -> String,
    label: &str,
) {
    let rounds = 20;
    let start = Instant::now();
    let mut returned = 0;
    for _ in 0..rounds {
        for n in 0..count {
            returned += black_box(store.by_index(index, &value(n)).unwrap()).len();
        }
    }
    let elapsed = start.elapsed();
    println!(
        "{label} ({} objects each): {:>10.0} queries/s ({:.0} objects/s)",
        returned / (rounds * count),
        per_second(rounds * count, elapsed),
        per_second(returned, elapsed)
    );
}

fn main() {
    if let Some(variant) =
        std::env::args().find_map(|a| a.strip_prefix("--memory=").map(str::to_owned))
    {
        memory(&variant);
        return;
    }
    println!("machine: {}", support::machine());
    println!("objects: {COUNT} Pods shaped like testdata/pod.json, {NAMESPACES} namespaces");
    println!("plain objects:");
    throughput(false);
    println!("compressed objects (the default):");
    throughput(true);
    println!("memory per cached object (fresh process each, namespace index only):");
    for (variant, label) in [
        ("kept", "managedFields KEPT, plain                        "),
        (
            "dropped",
            "managedFields DROPPED, plain                     ",
        ),
        (
            "kept-compressed",
            "managedFields KEPT, compressed                   ",
        ),
        (
            "compressed",
            "managedFields DROPPED, compressed (default)      ",
        ),
        (
            "own-status",
            "each Pod's own status and volume, DROPPED, plain ",
        ),
        (
            "own-status-compressed",
            "each Pod's own status and volume, DROPPED, compr.",
        ),
    ] {
        println!(
            "  {label}: {}",
            support::rerun_with(&format!("--memory={variant}"))
        );
    }
    println!(
        "peers on the same Pod shape: client-go ~22 KB (~18 KB stripped), \
         kube-rs reflector ~85 KB (~36 KB pruned); recon target <= 3,000 B (dropped)"
    );
}
