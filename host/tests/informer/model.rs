//! Model-based test of the whole informer: random server-side creates,
//! updates and deletes interleaved with injected watch drops, 410s, 429s,
//! list failures, compactions and bookmarks. After quiescence the cache
//! equals the server, and every key's last delivered event carries the
//! server's final state (or a delete).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use parking_lot::Mutex;
use proptest::prelude::*;
use recon_host::clock::FakeClock;
use recon_host::informer::DeltaObject;
use recon_host::informer::LwError;
use recon_host::informer::fake_source::FakeSource;
use recon_host::informer::{EventHandler, InformerConfig, SharedInformer};
use recon_host::object::Object;
use tokio_util::sync::CancellationToken;

use crate::support::{configmap, drive_until};

#[derive(Debug, Clone)]
enum Step {
    Upsert(u8, u8),
    Delete(u8),
    DropWatches,
    ExpireWatches,
    CompactAndDrop,
    ThrottleNextWatch,
    FailNextList,
    Bookmark,
    Progress(u8),
    AdvanceClock,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (0u8..12, any::<u8>()).prop_map(|(k, v)| Step::Upsert(k, v)),
        3 => (0u8..12).prop_map(Step::Delete),
        1 => Just(Step::DropWatches),
        1 => Just(Step::ExpireWatches),
        1 => Just(Step::CompactAndDrop),
        1 => Just(Step::ThrottleNextWatch),
        1 => Just(Step::FailNextList),
        1 => Just(Step::Bookmark),
        4 => (0u8..8).prop_map(Step::Progress),
        1 => Just(Step::AdvanceClock),
    ]
}

/// The last event each key received, and a check that versions never go
/// backwards per key.
#[derive(Default)]
struct LastEvents {
    last: Mutex<HashMap<String, Option<u64>>>,
    regressions: Mutex<Vec<String>>,
}

impl LastEvents {
    fn record(&self, key: &str, version: Option<u64>) {
        let mut last = self.last.lock();
        if let (Some(Some(before)), Some(now)) = (last.get(key), version)
            && now < *before
        {
            self.regressions
                .lock()
                .push(format!("{key}: {before} -> {now}"));
        }
        last.insert(key.to_string(), version);
    }
}

fn version(object: &Object) -> u64 {
    object.resource_version().parse().unwrap()
}

impl EventHandler for LastEvents {
    fn on_add(&self, object: &Object, _: bool) {
        self.record(object.key(), Some(version(object)));
    }
    fn on_update(&self, _: &Object, new: &Object) {
        self.record(new.key(), Some(version(new)));
    }
    fn on_delete(&self, object: &DeltaObject) {
        self.record(object.key(), None);
    }
}

fn converged(source: &FakeSource, informer: &SharedInformer, events: &LastEvents) -> bool {
    let server: BTreeMap<String, u64> = source
        .objects()
        .iter()
        .map(|(k, o)| (k.clone(), version(o)))
        .collect();
    let cached: BTreeMap<String, u64> = informer
        .indexer()
        .list()
        .iter()
        .map(|o| (o.key().to_string(), version(o)))
        .collect();
    if server != cached {
        return false;
    }
    let last = events.last.lock();
    last.iter()
        .all(|(key, seen)| *seen == server.get(key).copied())
        && server.keys().all(|k| last.contains_key(k))
}

async fn run_scenario(steps: Vec<Step>, seed: u64) -> Result<(), TestCaseError> {
    let source = FakeSource::new();
    let clock = FakeClock::new();
    let informer = SharedInformer::new(
        source.clone(),
        InformerConfig {
            name: "model".into(),
            clock: clock.shared(),
            seed,
            ..InformerConfig::default()
        },
    );
    let events = Arc::new(LastEvents::default());
    informer.add_event_handler(events.clone()).unwrap();
    let stop = CancellationToken::new();
    let task = tokio::spawn({
        let (informer, stop) = (Arc::clone(&informer), stop.clone());
        async move { informer.run(stop).await }
    });

    for step in steps {
        match step {
            Step::Upsert(k, v) => {
                source
                    .apply(configmap("ns", &format!("k{k}"), &v.to_string()))
                    .unwrap();
            }
            Step::Delete(k) => {
                source.delete(&format!("ns/k{k}"));
            }
            Step::DropWatches => source.drop_watches(),
            Step::ExpireWatches => source.expire_watches(),
            Step::CompactAndDrop => {
                source.compact();
                source.drop_watches();
            }
            Step::ThrottleNextWatch => {
                source.fail_next_watch(LwError::too_many_requests("throttled"))
            }
            Step::FailNextList => source.fail_next_list(LwError::other("etcd unavailable")),
            Step::Bookmark => source.send_bookmark(),
            Step::Progress(n) => {
                for _ in 0..n {
                    tokio::task::yield_now().await;
                }
            }
            Step::AdvanceClock => {
                clock.advance_to_next_deadline();
            }
        }
    }

    drive_until(&clock, 200, || converged(&source, &informer, &events)).await;
    prop_assert!(
        events.regressions.lock().is_empty(),
        "versions went backwards: {:?}",
        events.regressions.lock()
    );
    stop.cancel();
    task.await.unwrap().unwrap();
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn cache_and_last_events_converge_to_the_server_state(
        steps in proptest::collection::vec(step(), 1..150),
        seed in any::<u64>(),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        runtime.block_on(run_scenario(steps, seed))?;
    }
}
