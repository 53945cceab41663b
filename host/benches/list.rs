//! Benchmark of a list's memory: one unpaged list of 30,000 Pods of the
//! shared fixture's shape (managedFields and all, without `apiVersion` and
//! `kind` on the items, ~10 KB each as served: the whole list in one body,
//! which is what a real API server answers a list at `resourceVersion=0`
//! from its watch cache, whatever the `limit`). Two ways are measured, each
//! in a fresh process: the body decoded as it arrives and each item
//! compressed as it is decoded (what an informer's `HttpListerWatcher`
//! does by default), decoded as it arrives and kept plain
//! (`--cache-compression=false`), and the body read whole, then parsed
//! (what the host did before). The body is served over loopback HTTP from memory
//! set aside before the measurement, so the figures are the client's own:
//! the process's RSS growth at its peak while listing (VmHWM, reset first)
//! and once the page is held (the cached form, managedFields dropped), and
//! their ratio. Printed, never asserted.

use std::time::Instant;

use axum::Router;
use axum::routing::get;
use bytes::Bytes;
use recon_host::clock::SystemClock;
use recon_host::informer::{ListOptions, ListerWatcher};
use recon_host::kube::connect_with_kubeconfig_text;
use recon_host::kube::{ApiResource, ClientRateLimiter, Gvk, HttpListerWatcher};
use recon_host::object::Compactor;
use serde_json::{Value, json};

mod support;

const COUNT: usize = 30_000;

/// The list body: a PodList of `COUNT` fixture Pods, as a server sends it.
fn body() -> Bytes {
    let template: Value =
        serde_json::from_str(include_str!("../testdata/pod.json")).expect("the fixture parses");
    let mut out = Vec::with_capacity(COUNT * 11_000);
    out.extend_from_slice(
        br#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"99"},"items":["#,
    );
    for i in 0..COUNT {
        let mut pod = template.clone();
        let metadata = &mut pod["metadata"];
        metadata["namespace"] = json!(format!("perf-{}", i % 100));
        metadata["name"] = json!(format!("svc-{}-{i:06}", i % 50));
        metadata["uid"] = json!(format!("00000000-0000-4000-8000-{i:012}"));
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, &pod).expect("serializes");
    }
    out.extend_from_slice(b"]}");
    Bytes::from(out)
}

/// This process's resident set and its peak since the last reset, bytes.
fn rss_and_peak() -> (usize, usize) {
    (
        support::status_bytes("VmRSS:"),
        support::status_bytes("VmHWM:"),
    )
}

/// Resets the peak (VmHWM) to the current RSS.
fn reset_peak() {
    std::fs::write("/proc/self/clear_refs", "5").expect("resetting VmHWM");
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// One measurement in this process: `compressed`, `streamed` or `buffered`.
async fn measure(way: &str) {
    let body = body();
    let served = body.len();
    let app = Router::new().route(
        "/api/v1/pods",
        get(move || {
            let body = body.clone();
            async move { ([("content-type", "application/json")], body) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let address = listener.local_addr().expect("its address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: \"http://{address}\"}}}}]\nusers: [{{name: u, user: {{}}}}]\ncontexts: [{{name: x, context: {{cluster: c, user: u}}}}]\ncurrent-context: x\n"
    );
    let client = connect_with_kubeconfig_text(
        &kubeconfig,
        "bench",
        ClientRateLimiter::unlimited(SystemClock::shared()),
    )
    .await
    .expect("a client");
    let mut lw = HttpListerWatcher::new(
        client.clone(),
        ApiResource::new(Gvk::new("", "v1", "Pod"), "pods", true),
        None,
    );
    if way == "compressed" {
        lw = lw.with_compactor(std::sync::Arc::new(Compactor::new()));
    }
    let options = ListOptions {
        resource_version: "0".into(),
        ..ListOptions::default()
    };
    let (before, _) = rss_and_peak();
    reset_peak();
    let started = Instant::now();
    let page = match way {
        "compressed" | "streamed" => lw.list(&options).await.expect("the list"),
        _ => {
            let request = http::Request::get(lw.list_path(&options))
                .header("accept", "application/json")
                .body(Vec::new())
                .expect("a request");
            let bytes = client.send_for_bytes(request).await.expect("the body");
            lw.parse_list(&bytes).expect("the list")
        }
    };
    let took = started.elapsed();
    let (held, peak) = rss_and_peak();
    assert_eq!(page.items.len(), COUNT);
    let (grown, peaked) = (held.saturating_sub(before), peak.saturating_sub(before));
    println!(
        "{way}: served {:.1} MiB in {:.2} s; RSS +{:.1} MiB at the peak, +{:.1} MiB holding the page ({} B per Pod): peak {:.2}x held",
        mib(served),
        took.as_secs_f64(),
        mib(peaked),
        mib(grown),
        grown / COUNT,
        peaked as f64 / grown.max(1) as f64
    );
}

fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    if let Some(way) = arguments
        .iter()
        .find(|a| ["compressed", "streamed", "buffered"].contains(&a.as_str()))
    {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(measure(way));
        return;
    }
    println!("machine: {}", support::machine());
    println!(
        "one unpaged list of {COUNT} fixture Pods over loopback HTTP, each way in a fresh process:"
    );
    for way in ["compressed", "streamed", "buffered"] {
        println!("{}", support::rerun_with(way));
    }
}
