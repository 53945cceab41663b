//! Reflector rules (REF-*), driven through the in-memory FakeSource with a
//! fake clock: paged lists, bookmarks, 410s, 429s, refused connections,
//! expired versions on relist, resync ticks.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use parking_lot::Mutex;
use recon_host::clock::FakeClock;
use recon_host::informer::fake_source::{FakeSource, SourceCall};
use recon_host::informer::{
    ErrorKind, ListOptions, ListPage, ListerWatcher, LwError, WatchOptions, WatchStream,
};
use recon_host::informer::{ExpectedKind, Reflector, ReflectorConfig};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::{RecordingStore, StoreOp, configmap, seeded};

async fn within<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(10), future)
        .await
        .expect("the reflector did not get there in time")
}

struct Harness {
    source: Arc<FakeSource>,
    store: Arc<RecordingStore>,
    clock: FakeClock,
    reflector: Arc<Reflector>,
    errors: Arc<Mutex<Vec<String>>>,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Harness {
    fn start(source: Arc<FakeSource>, tweak: impl FnOnce(&mut ReflectorConfig)) -> Harness {
        let clock = FakeClock::new();
        let store = RecordingStore::new();
        let errors = Arc::new(Mutex::new(Vec::new()));
        let mut config = ReflectorConfig {
            clock: clock.shared(),
            seed: 1,
            watch_error_handler: Some({
                let errors = Arc::clone(&errors);
                Arc::new(move |error| errors.lock().push(error.to_string()))
            }),
            ..ReflectorConfig::default()
        };
        tweak(&mut config);
        let reflector = Reflector::new(source.clone(), store.clone(), config);
        let stop = CancellationToken::new();
        let task = tokio::spawn({
            let (reflector, stop) = (Arc::clone(&reflector), stop.clone());
            async move { reflector.run(stop).await }
        });
        Harness {
            source,
            store,
            clock,
            reflector,
            errors,
            stop,
            task,
        }
    }

    /// Calls as compact strings: `L(rv,limit,continue)` and `W(rv)`.
    fn calls(&self) -> Vec<String> {
        self.source
            .calls()
            .iter()
            .map(|call| match call {
                SourceCall::List(o) => {
                    format!("L({},{},{})", o.resource_version, o.limit, o.continue_token)
                }
                SourceCall::Watch(o) => format!("W({})", o.resource_version),
            })
            .collect()
    }

    /// Starts over `count` seeded ConfigMaps with the default config, and
    /// waits for the first list and the watch after it.
    async fn watching(count: usize) -> Harness {
        let h = Harness::start(seeded(count), |_| {});
        h.wait_calls(2).await;
        h
    }

    /// Watches two seeded ConfigMaps expecting ConfigMaps only; a Secret,
    /// to be skipped, has then arrived on the watch.
    async fn skipping_a_secret() -> Harness {
        let h = Harness::start(seeded(2), configmaps_only);
        h.wait_calls(2).await;
        let mut secret = configmap("ns", "s", "x");
        secret["kind"] = json!("Secret");
        h.source.apply(secret).unwrap();
        h
    }

    /// Waits for as many calls as `expected` holds, and checks they are
    /// those.
    async fn expect_calls(&self, expected: &[&str]) {
        self.wait_calls(expected.len()).await;
        assert_eq!(self.calls(), expected);
    }

    async fn wait_calls(&self, count: usize) {
        within(self.source.wait_for_calls(count)).await;
    }

    /// Lets the pending backoff (or timer) elapse.
    async fn elapse_backoff(&self) {
        within(self.clock.wait_for_waiters(1)).await;
        self.clock.advance_to_next_deadline();
    }

    /// Ends the watch once it has run long enough not to count as too short
    /// (REF-37), the next watch opens failing with `errors` in order;
    /// returns once the first reopen has been tried.
    async fn fail_rewatches(&self, errors: impl IntoIterator<Item = LwError>) {
        let reopen = self.source.calls().len() + 1;
        self.clock.advance(Duration::from_secs(2));
        for error in errors {
            self.source.fail_next_watch(error);
        }
        self.source.drop_watches();
        self.wait_calls(reopen).await;
    }

    /// How long the pending backoff (or timer) waits, once it is pending.
    async fn pending_wait(&self) -> Duration {
        within(self.clock.wait_for_waiters(1)).await;
        self.clock.next_deadline().unwrap() - self.clock.shared().now()
    }

    async fn stop(self) {
        self.stop.cancel();
        within(self.task).await.unwrap();
    }
}

/// A 429 whose Retry-After asks for `seconds`.
fn throttled(seconds: u64) -> LwError {
    let mut throttled = LwError::too_many_requests("slow down");
    throttled.retry_after = Some(Duration::from_secs(seconds));
    throttled
}

/// Expects ConfigMaps only, so that other kinds on the watch are skipped.
fn configmaps_only(config: &mut ReflectorConfig) {
    config.expected_kind = Some(ExpectedKind {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
    });
}

#[tokio::test]
async fn ref_10_ref_13_ref_25_first_list_at_0_replaces_then_watches_from_the_list_version() {
    let h = Harness::watching(3).await;
    assert_eq!(h.calls(), ["L(0,500,)", "W(3)"]);
    let SourceCall::Watch(watch) = &h.source.calls()[1] else {
        panic!()
    };
    assert!(watch.allow_bookmarks);
    let timeout = watch.timeout.unwrap().as_secs();
    assert!(
        (300..600).contains(&timeout),
        "timeout {timeout}s outside [300, 600)"
    );
    assert_eq!(
        h.store.ops(),
        [StoreOp::Replace(
            vec![
                "ns/cm-0000".into(),
                "ns/cm-0001".into(),
                "ns/cm-0002".into()
            ],
            "3".into()
        )]
    );
    assert_eq!(h.reflector.last_sync_resource_version(), "3");

    // REF-35: watch events map to add / update / delete with the last state.
    h.source.apply(configmap("ns", "new", "1")).unwrap();
    h.source.apply(configmap("ns", "new", "2")).unwrap();
    h.source.delete("ns/cm-0000").unwrap();
    within(h.store.wait_for_ops(4)).await;
    assert_eq!(
        h.store.ops()[1..],
        [
            StoreOp::Add("ns/new".into(), "4".into()),
            StoreOp::Update("ns/new".into(), "5".into()),
            StoreOp::Delete("ns/cm-0000".into(), "6".into()),
        ]
    );
    assert_eq!(h.reflector.last_sync_resource_version(), "6", "REF-36");
    h.stop().await;
}

#[tokio::test]
async fn ref_15_ref_17_paged_first_list_makes_later_relists_paginate_too() {
    let h = Harness::start(seeded(1201), |_| {});
    h.wait_calls(4).await;
    assert_eq!(
        h.calls(),
        [
            "L(0,500,)",
            "L(,500,1201/500)",
            "L(,500,1201/1000)",
            "W(1201)"
        ],
        "continuation pages clear the version (REF-18)"
    );
    let StoreOp::Replace(keys, version) = &h.store.ops()[0] else {
        panic!()
    };
    assert_eq!((keys.len(), version.as_str()), (1201, "1201"));

    // REF-30: a 410 on the watch relists from the last version (flag clear),
    // and REF-17 keeps the pager's page size for that specific version.
    h.source.expire_watches();
    h.elapse_backoff().await;
    h.wait_calls(8).await;
    assert_eq!(
        h.calls()[4..],
        [
            "L(1201,500,)",
            "L(,500,1201/500)",
            "L(,500,1201/1000)",
            "W(1201)"
        ]
    );
    h.stop().await;
}

/// One way a watch ends from the server's side, and every call the
/// reflector makes up to its next watch.
struct EndedWatch {
    rule: &'static str,
    end: fn(&FakeSource),
    calls: &'static [&'static str],
}

/// After one backoff, each ended watch relists from the list's version and
/// watches again.
#[tokio::test]
async fn ref_11_ref_15_ref_16_ref_37_an_ended_watch_relists_after_one_backoff() {
    let cases = [
        EndedWatch {
            rule: "REF-15, REF-16: a relist at a version is unpaginated when the first list was not",
            end: |source| source.expire_watches(),
            calls: &["L(0,500,)", "W(3)", "L(3,0,)", "W(3)"],
        },
        EndedWatch {
            rule: "REF-11: a too large version on relist also falls back to the newest",
            end: |source| {
                source.fail_next_list(LwError::new(
                    ErrorKind::TooLargeResourceVersion,
                    "Too large resource version",
                ));
                source.expire_watches();
            },
            calls: &["L(0,500,)", "W(3)", "L(3,0,)", "L(,0,)", "W(3)"],
        },
        EndedWatch {
            rule: "REF-37: a very short empty watch relists after backoff",
            end: |source| source.drop_watches(),
            calls: &["L(0,500,)", "W(3)", "L(3,0,)", "W(3)"],
        },
    ];
    for case in cases {
        let h = Harness::watching(3).await;
        (case.end)(&h.source);
        h.elapse_backoff().await;
        h.wait_calls(case.calls.len()).await;
        assert_eq!(h.calls(), case.calls, "{}", case.rule);
        h.stop().await;
    }
}

#[tokio::test]
async fn ref_15_explicit_page_size_wins() {
    let h = Harness::start(seeded(5), |config| config.watch_list_page_size = 2);
    h.expect_calls(&["L(0,2,)", "L(,2,5/2)", "L(,2,5/4)", "W(5)"])
        .await;
    h.stop().await;
}

#[tokio::test]
async fn ref_18_expired_continuation_falls_back_to_one_full_list() {
    let source = seeded(1200);
    source.script_lists([None, Some(LwError::expired("continue token expired"))]);
    let h = Harness::start(source, |_| {});
    h.expect_calls(&["L(0,500,)", "L(,500,1200/500)", "L(0,0,)", "W(1200)"])
        .await;
    let StoreOp::Replace(keys, _) = &h.store.ops()[0] else {
        panic!()
    };
    assert_eq!(
        keys.len(),
        1200,
        "the full list replaces, not the first page"
    );
    h.stop().await;
}

#[tokio::test]
async fn ref_11_ref_12_expired_relist_retries_at_once_from_the_newest_version() {
    let h = Harness::watching(3).await;
    h.source
        .fail_next_list(LwError::expired("too old resource version: 3"));
    h.source.expire_watches();
    h.elapse_backoff().await;
    // No clock movement is needed for the retry, and it keeps the pager's
    // page size, chosen for the original version (client-go reuses the pager).
    h.expect_calls(&["L(0,500,)", "W(3)", "L(3,0,)", "L(,0,)", "W(3)"])
        .await;
    assert!(
        h.errors.lock().is_empty(),
        "the retry succeeded: no error reported"
    );

    // REF-13: success clears the flag, so the next relist uses the version again.
    h.source.expire_watches();
    h.elapse_backoff().await;
    h.wait_calls(7).await;
    assert_eq!(h.calls()[5..], ["L(3,0,)", "W(3)"]);
    h.stop().await;
}

#[tokio::test]
async fn ref_28_refused_and_throttled_watches_back_off_and_rewatch_without_relisting() {
    let h = Harness::watching(3).await;
    h.fail_rewatches([
        LwError::too_many_requests("slow down"),
        LwError::connection_refused("dial tcp: connection refused"),
    ])
    .await;
    h.elapse_backoff().await;
    h.wait_calls(4).await;
    h.elapse_backoff().await;
    h.expect_calls(&["L(0,500,)", "W(3)", "W(3)", "W(3)", "W(3)"])
        .await;
    assert!(h.errors.lock().is_empty());
    h.stop().await;
}

#[tokio::test]
async fn ref_28_a_throttled_watch_waits_for_the_servers_retry_after_when_longer() {
    let h = Harness::watching(3).await;
    h.fail_rewatches([throttled(10)]).await;
    assert_eq!(
        h.pending_wait().await,
        Duration::from_secs(10),
        "Retry-After beats the 0.8–1.6 s backoff"
    );
    h.elapse_backoff().await;
    h.expect_calls(&["L(0,500,)", "W(3)", "W(3)", "W(3)"]).await;
    h.stop().await;
}

#[tokio::test]
async fn ref_08_a_throttled_list_waits_for_the_servers_retry_after_when_longer() {
    let source = seeded(2);
    source.fail_next_list(throttled(45));
    let h = Harness::start(source, |_| {});
    h.wait_calls(1).await;
    assert_eq!(h.pending_wait().await, Duration::from_secs(45));
    h.elapse_backoff().await;
    h.expect_calls(&["L(0,500,)", "L(0,500,)", "W(2)"]).await;
    h.stop().await;
}

#[tokio::test]
async fn ref_28_other_watch_open_errors_end_the_round_and_relist() {
    let h = Harness::watching(3).await;
    h.fail_rewatches([LwError::other("500 internal error")])
        .await;
    h.elapse_backoff().await;
    h.expect_calls(&["L(0,500,)", "W(3)", "W(3)", "L(3,0,)", "W(3)"])
        .await;
    assert_eq!(
        h.errors.lock().len(),
        1,
        "REF-06: the handler sees the watch error"
    );
    assert!(h.errors.lock()[0].contains("500 internal error"));
    h.stop().await;
}

#[tokio::test]
async fn ref_30_a_429_event_keeps_watching_and_other_errors_relist() {
    let h = Harness::watching(3).await;
    h.source
        .end_watches_with(LwError::too_many_requests("slow down"));
    h.elapse_backoff().await;
    h.wait_calls(3).await;
    assert_eq!(
        h.calls()[2],
        "W(3)",
        "429 on the stream: back off, watch again"
    );

    h.source.end_watches_with(LwError::other("internal error"));
    h.elapse_backoff().await;
    h.wait_calls(5).await;
    assert_eq!(h.calls()[3..], ["L(3,0,)", "W(3)"]);
    assert!(
        h.errors.lock().is_empty(),
        "watch errors never reach the error handler (REF-09)"
    );
    h.stop().await;
}

#[tokio::test]
async fn ref_29_a_normal_close_rewatches_from_the_latest_event_without_relisting() {
    let h = Harness::watching(2).await;
    h.source.apply(configmap("ns", "later", "1")).unwrap();
    within(h.store.wait_for_ops(2)).await;
    h.source.drop_watches();
    h.expect_calls(&["L(0,500,)", "W(2)", "W(3)"]).await;
    h.stop().await;
}

#[tokio::test]
async fn ref_26_ref_34_ref_36_bookmarks_advance_the_version_past_skipped_events() {
    let h = Harness::skipping_a_secret().await;
    h.source.send_bookmark();
    h.source.apply(configmap("ns", "c", "y")).unwrap();
    within(h.store.wait_for_ops(2)).await;
    assert_eq!(
        h.store.ops()[1..],
        [StoreOp::Add("ns/c".into(), "4".into())],
        "the Secret is skipped, the bookmark makes no store call"
    );
    h.clock.advance(Duration::from_secs(2));
    h.source.drop_watches();
    h.wait_calls(3).await;
    assert_eq!(h.calls()[2], "W(4)");
    h.stop().await;
}

#[tokio::test]
async fn ref_36_a_bookmark_alone_moves_the_watch_version() {
    let h = Harness::skipping_a_secret().await;
    assert_eq!(
        h.reflector.last_sync_resource_version(),
        "2",
        "skipped events do not move it"
    );
    h.source.send_bookmark();
    h.clock.advance(Duration::from_secs(2));
    within(async {
        while h.reflector.last_sync_resource_version() != "3" {
            tokio::task::yield_now().await;
        }
    })
    .await;
    h.source.drop_watches();
    h.wait_calls(3).await;
    assert_eq!(h.calls()[2], "W(3)");
    assert_eq!(h.store.ops().len(), 1, "only the initial replace");
    h.stop().await;
}

#[tokio::test]
async fn ref_14_ref_08_list_failure_is_reported_then_relisted_after_backoff() {
    let source = seeded(2);
    source.fail_next_list(LwError::other("connection reset"));
    let h = Harness::start(source, |_| {});
    h.wait_calls(1).await;
    h.elapse_backoff().await;
    h.expect_calls(&["L(0,500,)", "L(0,500,)", "W(2)"]).await;
    let errors = h.errors.lock().clone();
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].starts_with("failed to list <unspecified>"),
        "{}",
        errors[0]
    );
    h.stop().await;
}

#[tokio::test]
async fn ref_21_ref_22_resync_ticks_call_the_store_only_when_due() {
    let due = Arc::new(AtomicBool::new(true));
    let h = Harness::start(seeded(1), |config| {
        config.resync_period = Duration::from_secs(30);
        config.should_resync = Some({
            let due = Arc::clone(&due);
            Arc::new(move || due.load(Ordering::SeqCst))
        });
    });
    h.wait_calls(2).await;
    h.elapse_backoff().await;
    within(h.store.wait_for_ops(2)).await;
    assert_eq!(h.store.ops()[1], StoreOp::Resync);

    due.store(false, Ordering::SeqCst);
    h.elapse_backoff().await;
    within(h.clock.wait_for_waiters(1)).await;
    assert_eq!(h.store.ops().len(), 2, "not due: no resync");
    due.store(true, Ordering::SeqCst);
    h.elapse_backoff().await;
    within(h.store.wait_for_ops(3)).await;
    assert_eq!(
        h.calls(),
        ["L(0,500,)", "W(1)"],
        "resync never lists (ERR-07)"
    );
    h.stop().await;
}

#[tokio::test]
async fn ref_22_zero_resync_period_arms_no_timer() {
    let h = Harness::watching(1).await;
    tokio::task::yield_now().await;
    assert_eq!(h.clock.waiters(), 0);
    h.stop().await;
}

#[tokio::test]
async fn ref_23_a_resync_error_ends_the_watch_and_relists() {
    let h = Harness::start(seeded(1), |config| {
        config.resync_period = Duration::from_secs(30)
    });
    h.wait_calls(2).await;
    *h.store.fail_resync.lock() = Some("store broken".into());
    h.elapse_backoff().await; // the resync tick
    h.elapse_backoff().await; // the relist backoff
    h.expect_calls(&["L(0,500,)", "W(1)", "L(1,0,)", "W(1)"])
        .await;
    h.stop().await;
}

#[tokio::test]
async fn ref_35_store_errors_are_logged_and_the_stream_goes_on() {
    let h = Harness::watching(1).await;
    *h.store.fail_add.lock() = Some("rejected".into());
    h.source.apply(configmap("ns", "a", "1")).unwrap();
    h.source.apply(configmap("ns", "b", "1")).unwrap();
    within(h.store.wait_for_ops(3)).await;
    assert_eq!(h.reflector.last_sync_resource_version(), "3");
    assert_eq!(h.calls().len(), 2, "no relist, no re-watch");
    h.stop().await;
}

#[test]
fn ref_02_ref_03_default_name_is_the_call_site_and_type_description() {
    let reflector = Reflector::new(
        FakeSource::new(),
        RecordingStore::new(),
        ReflectorConfig::default(),
    );
    assert!(
        reflector.name().contains("tests/informer/reflector.rs:"),
        "{}",
        reflector.name()
    );
    assert_eq!(reflector.type_description(), "<unspecified>");
    let reflector = Reflector::new(
        FakeSource::new(),
        RecordingStore::new(),
        ReflectorConfig {
            name: Some("pods".into()),
            expected_kind: Some(ExpectedKind {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
            }),
            ..ReflectorConfig::default()
        },
    );
    assert_eq!(reflector.name(), "pods");
    assert_eq!(reflector.type_description(), "apps/v1, Kind=Deployment");
}

/// A server whose list never answers or, with `panics`, whose list handler
/// panics; its watch never answers.
struct BrokenList {
    panics: bool,
}

#[async_trait]
impl ListerWatcher for BrokenList {
    async fn list(&self, _: &ListOptions) -> Result<ListPage, LwError> {
        if self.panics {
            panic!("list handler bug");
        }
        futures::future::pending().await
    }

    async fn watch(&self, _: &WatchOptions) -> Result<WatchStream, LwError> {
        futures::future::pending().await
    }
}

/// A reflector, not yet run, over a [`BrokenList`] server.
fn over_broken_list(panics: bool) -> Arc<Reflector> {
    Reflector::new(
        Arc::new(BrokenList { panics }),
        RecordingStore::new(),
        ReflectorConfig::default(),
    )
}

#[tokio::test]
async fn ref_19_ref_24_stop_during_a_hanging_list_returns_promptly() {
    let reflector = over_broken_list(false);
    let stop = CancellationToken::new();
    let task = tokio::spawn({
        let stop = stop.clone();
        async move { reflector.run(stop).await }
    });
    tokio::task::yield_now().await;
    stop.cancel();
    within(task).await.unwrap();
}

#[tokio::test]
async fn ref_19_a_panic_in_the_list_task_is_re_raised_in_the_caller() {
    let reflector = over_broken_list(true);
    let run = tokio::spawn(async move { reflector.run(CancellationToken::new()).await });
    let error = within(run).await.expect_err("the run task must panic");
    assert!(error.is_panic());
    let payload = error.into_panic();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"list handler bug"));
}

/// Beyond client-go: when the server answers again (another request
/// succeeded), a reflector waiting out a backoff retries at once, and its
/// backoff starts again from the first wait.
#[tokio::test]
async fn a_recovery_ends_the_backoff_at_once_and_resets_it() {
    let source = seeded(2);
    let refused = || Some(LwError::connection_refused("connection refused"));
    source.script_lists([refused(), refused(), refused(), refused(), None]);
    let (recovered, recoveries) = tokio::sync::watch::channel(0u64);
    let h = Harness::start(source, |config| config.recoveries = Some(recoveries));
    // Three failed lists: the backoff grows (0.8 s, 1.6 s, then 3.2 s,
    // each stretched by up to as much again).
    for calls in 1..=3 {
        h.wait_calls(calls).await;
        if calls < 3 {
            h.elapse_backoff().await;
        }
    }
    let waiting = h.pending_wait().await;
    assert!(waiting >= Duration::from_millis(3200), "{waiting:?}");
    // The server answers again: the list is retried without the clock
    // moving. It fails once more, and the wait starts from the first again.
    recovered.send_modify(|n| *n += 1);
    h.wait_calls(4).await;
    let waiting = h.pending_wait().await;
    assert!(waiting < Duration::from_millis(1600), "{waiting:?}");
    h.elapse_backoff().await;
    h.wait_calls(6).await;
    assert_eq!(h.calls()[4..], ["L(0,500,)", "W(2)"]);
    h.stop().await;
}

/// Fails its first list, the server recovering while that list is in
/// flight (as the host's probe can see it before the reflector handles the
/// failure); serves from `source` after that.
struct RecoversDuringFailedList {
    source: Arc<FakeSource>,
    recovered: tokio::sync::watch::Sender<u64>,
    failed: AtomicBool,
}

#[async_trait]
impl ListerWatcher for RecoversDuringFailedList {
    async fn list(&self, options: &ListOptions) -> Result<ListPage, LwError> {
        if !self.failed.swap(true, Ordering::SeqCst) {
            self.recovered.send_modify(|n| *n += 1);
            return Err(LwError::connection_refused("connection refused"));
        }
        self.source.list(options).await
    }

    async fn watch(&self, options: &WatchOptions) -> Result<WatchStream, LwError> {
        self.source.watch(options).await
    }
}

/// A recovery signalled after a request was sent and before its failure's
/// backoff began is not lost: the reflector retries at once.
#[tokio::test]
async fn a_recovery_during_the_failed_request_ends_the_backoff_that_follows() {
    let source = seeded(2);
    let (recovered, recoveries) = tokio::sync::watch::channel(0u64);
    let clock = FakeClock::new();
    let store = RecordingStore::new();
    let reflector = Reflector::new(
        Arc::new(RecoversDuringFailedList {
            source: Arc::clone(&source),
            recovered,
            failed: AtomicBool::new(false),
        }),
        store.clone(),
        ReflectorConfig {
            clock: clock.shared(),
            seed: 1,
            recoveries: Some(recoveries),
            watch_error_handler: Some(Arc::new(|_| {})),
            ..ReflectorConfig::default()
        },
    );
    let stop = CancellationToken::new();
    let task = tokio::spawn({
        let stop = stop.clone();
        async move { reflector.run(stop).await }
    });
    // The clock never moves: only the recovery can end the backoff.
    within(source.wait_for_calls(2)).await;
    let calls = source.calls();
    assert!(matches!(calls[0], SourceCall::List(_)), "{calls:?}");
    assert!(matches!(calls[1], SourceCall::Watch(_)), "{calls:?}");
    stop.cancel();
    within(task).await.unwrap();
}
