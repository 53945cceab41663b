//! Shared informer rules (INF-*, PROC-*, KEY-08): cache before notification,
//! tombstones, replay for late handlers, per-listener buffers and resync,
//! panicking handlers, the managedFields transform.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use recon_host::clock::FakeClock;
use recon_host::informer::DeltaObject;
use recon_host::informer::Indexer;
use recon_host::informer::LwError;
use recon_host::informer::fake_source::FakeSource;
use recon_host::informer::{EventHandler, InformerConfig, InformerError, SharedInformer};
use recon_host::object::Object;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::{configmap, drive_until, seeded};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Event {
    Add {
        key: String,
        rv: String,
        initial: bool,
    },
    Update {
        key: String,
        old: String,
        new: String,
    },
    Delete {
        key: String,
        rv: Option<String>,
        tombstone: bool,
    },
}

/// Records notifications; optionally checks the cache is already updated.
#[derive(Default)]
struct Recorder {
    events: Mutex<Vec<Event>>,
    cache: Mutex<Option<Arc<Indexer>>>,
    cache_was_ahead: Mutex<Vec<String>>,
    panic_on: Option<String>,
}

impl Recorder {
    fn new() -> Arc<Self> {
        Arc::new(Recorder::default())
    }

    fn events(&self) -> Vec<Event> {
        self.events.lock().clone()
    }

    fn check_cache(&self, object: &Object) {
        if let Some(cache) = self.cache.lock().as_ref() {
            // INF-09: the cache is never older than the event.
            let cached = cache.get_by_key(object.key());
            let cached_rv: u64 = cached.map_or(0, |c| c.resource_version().parse().unwrap());
            let event_rv: u64 = object.resource_version().parse().unwrap();
            if cached_rv < event_rv {
                self.cache_was_ahead.lock().push(object.key().to_string());
            }
        }
    }
}

impl EventHandler for Recorder {
    fn on_add(&self, object: &Object, is_in_initial_list: bool) {
        if self.panic_on.as_deref() == Some(object.name()) {
            panic!("handler bug");
        }
        self.check_cache(object);
        self.events.lock().push(Event::Add {
            key: object.key().into(),
            rv: object.resource_version().into(),
            initial: is_in_initial_list,
        });
    }

    fn on_update(&self, old: &Object, new: &Object) {
        self.check_cache(new);
        self.events.lock().push(Event::Update {
            key: new.key().into(),
            old: old.resource_version().into(),
            new: new.resource_version().into(),
        });
    }

    fn on_delete(&self, object: &DeltaObject) {
        self.events.lock().push(Event::Delete {
            key: object.key().into(),
            rv: object.object().map(|o| o.resource_version().to_string()),
            tombstone: object.is_tombstone(),
        });
    }
}

struct Running {
    source: Arc<FakeSource>,
    clock: FakeClock,
    informer: Arc<SharedInformer>,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<Result<(), InformerError>>,
}

fn informer(
    source: &Arc<FakeSource>,
    clock: &FakeClock,
    tweak: impl FnOnce(&mut InformerConfig),
) -> Arc<SharedInformer> {
    let mut config = InformerConfig {
        name: "configmaps".into(),
        clock: clock.shared(),
        seed: 3,
        ..InformerConfig::default()
    };
    tweak(&mut config);
    SharedInformer::new(source.clone(), config)
}

fn start(informer: Arc<SharedInformer>, source: Arc<FakeSource>, clock: FakeClock) -> Running {
    let stop = CancellationToken::new();
    let task = tokio::spawn({
        let (informer, stop) = (Arc::clone(&informer), stop.clone());
        async move { informer.run(stop).await }
    });
    Running {
        source,
        clock,
        informer,
        stop,
        task,
    }
}

/// An informer over `count` seeded ConfigMaps, one recording handler
/// given their adds, whose watch has then failed: while its reflector backs
/// off, changes to the source are seen only by the relist after.
async fn in_a_watch_gap(count: usize) -> (Running, Arc<Recorder>) {
    let (source, clock) = (seeded(count), FakeClock::new());
    let informer = informer(&source, &clock, |_| {});
    let recorder = Recorder::new();
    informer.add_event_handler(recorder.clone()).unwrap();
    let running = start(informer, source, clock);
    running.until(|| recorder.events().len() == count).await;
    running
        .source
        .end_watches_with(LwError::other("stream reset"));
    running.clock.wait_for_waiters(1).await;
    (running, recorder)
}

impl Running {
    async fn until(&self, condition: impl FnMut() -> bool) {
        drive_until(&self.clock, 50, condition).await;
    }

    async fn stop(self) {
        self.stop.cancel();
        self.task.await.unwrap().unwrap();
    }
}

#[tokio::test]
async fn inf_06_inf_09_inf_10_inf_13_initial_list_then_updates_with_the_cache_ahead_of_handlers() {
    let (source, clock) = (seeded(3), FakeClock::new());
    let informer = informer(&source, &clock, |_| {});
    let recorder = Recorder::new();
    *recorder.cache.lock() = Some(Arc::clone(informer.indexer()));
    informer.add_event_handler(recorder.clone()).unwrap();
    assert!(!informer.has_synced(), "INF-13: false before run");
    let running = start(informer, source, clock);
    running
        .until(|| running.informer.has_synced() && recorder.events().len() == 3)
        .await;
    assert_eq!(running.informer.indexer().len(), 3);
    assert_eq!(
        running
            .informer
            .indexer()
            .by_index("namespace", "ns")
            .unwrap()
            .len(),
        3,
        "INF-01: the namespace index is built in"
    );
    assert!(
        recorder
            .events()
            .iter()
            .all(|e| matches!(e, Event::Add { initial: true, .. }))
    );

    running
        .source
        .apply(configmap("ns", "cm-0000", "changed"))
        .unwrap();
    running.source.apply(configmap("ns", "late", "x")).unwrap();
    running.until(|| recorder.events().len() == 5).await;
    assert_eq!(
        recorder.events()[3..],
        [
            Event::Update {
                key: "ns/cm-0000".into(),
                old: "1".into(),
                new: "4".into()
            },
            Event::Add {
                key: "ns/late".into(),
                rv: "5".into(),
                initial: false
            },
        ]
    );
    assert!(recorder.cache_was_ahead.lock().is_empty());
    running.stop().await;
}

#[tokio::test]
async fn inf_08_a_deletion_missed_between_watches_arrives_as_a_tombstone() {
    let (running, recorder) = in_a_watch_gap(2).await;
    running.source.delete("ns/cm-0001").unwrap();
    running.until(|| recorder.events().len() == 4).await;
    let events = recorder.events();
    assert!(events.contains(&Event::Delete {
        key: "ns/cm-0001".into(),
        rv: Some("2".into()),
        tombstone: true
    }));
    assert!(
        events.contains(&Event::Update {
            key: "ns/cm-0000".into(),
            old: "1".into(),
            new: "1".into()
        }),
        "the relist replays unchanged objects as same-version updates"
    );
    assert!(
        running
            .informer
            .indexer()
            .get_by_key("ns/cm-0001")
            .is_none()
    );
    running.stop().await;
}

#[tokio::test]
async fn key_08_recreated_under_the_same_name_while_unwatched_is_an_update() {
    let (running, recorder) = in_a_watch_gap(1).await;
    running.source.delete("ns/cm-0000").unwrap();
    let mut recreated = configmap("ns", "cm-0000", "new");
    recreated["metadata"]["uid"] = json!("another-uid");
    running.source.apply(recreated).unwrap();
    running.until(|| recorder.events().len() == 2).await;
    assert_eq!(
        recorder.events()[1],
        Event::Update {
            key: "ns/cm-0000".into(),
            old: "1".into(),
            new: "3".into()
        }
    );
    assert_eq!(
        running
            .informer
            .indexer()
            .get_by_key("ns/cm-0000")
            .unwrap()
            .uid(),
        "another-uid"
    );
    running.stop().await;
}

#[tokio::test]
async fn proc_09_a_handler_added_after_start_first_gets_the_cache_replayed() {
    let (source, clock) = (seeded(3), FakeClock::new());
    let informer = informer(&source, &clock, |_| {});
    let running = start(informer, source, clock);
    running.until(|| running.informer.has_synced()).await;
    let late = Recorder::new();
    running.informer.add_event_handler(late.clone()).unwrap();
    running.source.apply(configmap("ns", "after", "x")).unwrap();
    running.until(|| late.events().len() == 4).await;
    let mut replayed: Vec<Event> = late.events()[..3].to_vec();
    replayed.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    assert_eq!(
        replayed,
        (0..3)
            .map(|i| Event::Add {
                key: format!("ns/cm-{i:04}"),
                rv: (i + 1).to_string(),
                initial: true
            })
            .collect::<Vec<_>>()
    );
    assert_eq!(
        late.events()[3],
        Event::Add {
            key: "ns/after".into(),
            rv: "4".into(),
            initial: false
        }
    );
    running.stop().await;
}

/// A removed handler gets nothing more, not even what was queued for it;
/// the others carry on (client-go's RemoveEventHandler).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_handler_gets_no_further_notification() {
    let (source, clock) = (seeded(2), FakeClock::new());
    let informer = informer(&source, &clock, |_| {});
    let (kept, removed) = (Recorder::new(), Recorder::new());
    let (release, released) = std::sync::mpsc::channel();
    let stuck = Arc::new(Stuck {
        release: Mutex::new(released),
        seen: Mutex::new(0),
    });
    informer.add_event_handler(kept.clone()).unwrap();
    let removed_id = informer.add_event_handler(removed.clone()).unwrap();
    let stuck_id = informer.add_event_handler(stuck.clone()).unwrap();
    assert_eq!(informer.handler_count(), 3);
    let running = start(informer, source, clock);
    tokio::time::timeout(Duration::from_secs(10), async {
        while kept.events().len() < 2 || removed.events().len() < 2 {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("both handlers get the initial list");
    // The stuck handler holds its first add; the second waits in its queue.
    assert!(running.informer.remove_event_handler(removed_id));
    assert!(running.informer.remove_event_handler(stuck_id));
    assert!(
        !running.informer.remove_event_handler(removed_id),
        "removed already"
    );
    assert_eq!(running.informer.handler_count(), 1);
    release.send(()).unwrap();
    release.send(()).unwrap();
    running.source.apply(configmap("ns", "after", "x")).unwrap();
    tokio::time::timeout(Duration::from_secs(10), async {
        while kept.events().len() < 3 {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the kept handler carries on");
    running.stop().await;
    assert_eq!(removed.events().len(), 2, "{:?}", removed.events());
    assert_eq!(
        *stuck.seen.lock(),
        1,
        "only the notification in flight at removal"
    );
}

/// Blocks in every callback until released.
struct Stuck {
    release: Mutex<std::sync::mpsc::Receiver<()>>,
    seen: Mutex<usize>,
}

impl EventHandler for Stuck {
    fn on_add(&self, _: &Object, _: bool) {
        let _ = self.release.lock().recv();
        *self.seen.lock() += 1;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proc_13_proc_16_a_stuck_handler_holds_up_neither_the_cache_nor_other_handlers() {
    let (source, clock) = (FakeSource::new(), FakeClock::new());
    let informer = informer(&source, &clock, |_| {});
    let (release, released) = std::sync::mpsc::channel();
    let stuck = Arc::new(Stuck {
        release: Mutex::new(released),
        seen: Mutex::new(0),
    });
    let fast = Recorder::new();
    informer.add_event_handler(stuck.clone()).unwrap();
    informer.add_event_handler(fast.clone()).unwrap();
    let running = start(informer, source, clock);
    for i in 0..200 {
        running
            .source
            .apply(configmap("ns", &format!("o-{i}"), "x"))
            .unwrap();
    }
    tokio::time::timeout(Duration::from_secs(10), async {
        while fast.events().len() < 200 || running.informer.indexer().len() < 200 {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the fast handler and the cache keep up");
    assert!(
        *stuck.seen.lock() <= 1,
        "the stuck handler is still on its first notification"
    );
    for _ in 0..200 {
        release.send(()).unwrap();
    }
    tokio::time::timeout(Duration::from_secs(10), async {
        while *stuck.seen.lock() < 200 {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("its buffer delivers everything once released");
    running.stop().await;
}

#[tokio::test]
async fn proc_15_a_panicking_handler_loses_that_notification_and_resumes_after_a_pause() {
    let (source, clock) = (FakeSource::new(), FakeClock::new());
    let informer = informer(&source, &clock, |_| {});
    let recorder = Arc::new(Recorder {
        panic_on: Some("boom".into()),
        ..Recorder::default()
    });
    informer.add_event_handler(recorder.clone()).unwrap();
    let running = start(informer, source, clock);
    running.until(|| running.informer.has_synced()).await;
    running.source.apply(configmap("ns", "boom", "x")).unwrap();
    running.source.apply(configmap("ns", "fine", "x")).unwrap();
    running.clock.wait_for_waiters(1).await;
    for _ in 0..32 {
        tokio::task::yield_now().await;
    }
    assert!(recorder.events().is_empty(), "paused after the panic");
    running.clock.advance(Duration::from_secs(1));
    running.until(|| recorder.events().len() == 1).await;
    assert_eq!(
        recorder.events()[0],
        Event::Add {
            key: "ns/fine".into(),
            rv: "2".into(),
            initial: false
        }
    );
    running.stop().await;
}

#[tokio::test]
async fn inf_07_proc_10_resync_replays_the_cache_only_to_listeners_due_one() {
    let (source, clock) = (seeded(2), FakeClock::new());
    // As in client-go, an informer built without a resync period never
    // resyncs, whatever its handlers ask for.
    let informer = informer(&source, &clock, |config| {
        config.default_resync_period = Duration::from_secs(30)
    });
    let resyncing = Recorder::new();
    let quiet = Recorder::new();
    informer
        .add_event_handler_with_resync(resyncing.clone(), Duration::from_secs(30))
        .unwrap();
    informer
        .add_event_handler_with_resync(quiet.clone(), Duration::ZERO)
        .unwrap();
    assert_eq!(informer.resync_check_period(), Duration::from_secs(30));
    let running = start(informer, source, clock);
    running
        .until(|| resyncing.events().len() == 2 && quiet.events().len() == 2)
        .await;
    running.clock.wait_for_waiters(1).await;
    running.clock.advance(Duration::from_secs(30));
    running.until(|| resyncing.events().len() == 4).await;
    let mut synced = resyncing.events()[2..].to_vec();
    synced.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    assert_eq!(
        synced,
        [
            Event::Update {
                key: "ns/cm-0000".into(),
                old: "1".into(),
                new: "1".into()
            },
            Event::Update {
                key: "ns/cm-0001".into(),
                old: "2".into(),
                new: "2".into()
            },
        ]
    );
    for _ in 0..32 {
        tokio::task::yield_now().await;
    }
    assert_eq!(
        quiet.events().len(),
        2,
        "a listener without resync gets no sync updates"
    );

    // A real change (new version) after the resync check reaches everyone.
    running
        .source
        .apply(configmap("ns", "cm-0000", "changed"))
        .unwrap();
    running
        .until(|| quiet.events().len() == 3 && resyncing.events().len() == 5)
        .await;
    let change = Event::Update {
        key: "ns/cm-0000".into(),
        old: "1".into(),
        new: "3".into(),
    };
    assert_eq!(quiet.events()[2], change);
    assert_eq!(resyncing.events()[4], change);
    running.stop().await;
}

#[tokio::test]
async fn proc_06_proc_07_proc_08_resync_periods_are_clamped_and_lower_the_check_period_before_start()
 {
    let (source, clock) = (FakeSource::new(), FakeClock::new());
    let informer = informer(&source, &clock, |config| {
        config.default_resync_period = Duration::from_secs(60)
    });
    assert_eq!(informer.resync_check_period(), Duration::from_secs(60));
    informer
        .add_event_handler_with_resync(Recorder::new(), Duration::from_millis(100))
        .unwrap();
    assert_eq!(
        informer.resync_check_period(),
        Duration::from_secs(1),
        "raised to the 1 s minimum, then lowered"
    );
    let running = start(informer, source, clock);
    running.until(|| running.informer.has_synced()).await;
    running
        .informer
        .add_event_handler_with_resync(Recorder::new(), Duration::from_millis(10))
        .unwrap();
    assert_eq!(
        running.informer.resync_check_period(),
        Duration::from_secs(1),
        "fixed once started"
    );
    running.stop().await;
}

#[tokio::test]
async fn proc_05_handlers_cannot_be_added_after_stop() {
    let (source, clock) = (FakeSource::new(), FakeClock::new());
    let running = start(informer(&source, &clock, |_| {}), source, clock);
    running.until(|| running.informer.has_synced()).await;
    let informer = Arc::clone(&running.informer);
    running.stop().await;
    assert!(matches!(
        informer.add_event_handler(Recorder::new()),
        Err(InformerError::Stopped(_))
    ));
}

fn with_managed_fields() -> serde_json::Value {
    let mut value = configmap("ns", "m", "x");
    value["metadata"]["managedFields"] =
        json!([{"manager": "kubectl", "operation": "Apply", "fieldsV1": {"f:data": {}}}]);
    value
}

#[tokio::test]
async fn managed_fields_are_dropped_before_caching_by_default_and_kept_on_request() {
    for (transform, kept) in [(true, false), (false, true)] {
        let (source, clock) = (FakeSource::new(), FakeClock::new());
        source.apply(with_managed_fields()).unwrap();
        let informer = informer(&source, &clock, |config| {
            if !transform {
                config.transform = None;
            }
        });
        let running = start(informer, source, clock);
        running.until(|| running.informer.has_synced()).await;
        let cached = running.informer.indexer().get_by_key("ns/m").unwrap();
        assert_eq!(cached.has_managed_fields(), kept);
        assert_eq!(cached.json().contains("managedFields"), kept);
        running.stop().await;
    }
}
