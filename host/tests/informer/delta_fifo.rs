//! DeltaFIFO rules (DF-*, KEY-04, KEY-05).

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use proptest::prelude::*;
use recon_host::informer::{
    DeletedFinalStateUnknown, Delta, DeltaFifo, DeltaFifoOptions, DeltaObject, DeltaType,
    FifoError, KnownObjects, PopError, ProcessError,
};
use recon_host::object::Object;

use crate::support::object;

/// A knownObjects store under the test's control.
#[derive(Default)]
struct Known {
    objects: Mutex<Vec<Object>>,
    /// Keys listed but not found on lookup (a race with the consumer).
    phantom_keys: Mutex<Vec<String>>,
}

impl Known {
    fn with(objects: Vec<Object>) -> Arc<Self> {
        Arc::new(Known {
            objects: Mutex::new(objects),
            phantom_keys: Mutex::default(),
        })
    }
}

impl KnownObjects for Known {
    fn list_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self
            .objects
            .lock()
            .iter()
            .map(|o| o.key().to_string())
            .collect();
        keys.extend(self.phantom_keys.lock().iter().cloned());
        keys
    }

    fn get_by_key(&self, key: &str) -> Option<Object> {
        self.objects.lock().iter().find(|o| o.key() == key).cloned()
    }
}

fn fifo_with(known: Option<Arc<Known>>) -> DeltaFifo {
    DeltaFifo::new(DeltaFifoOptions {
        known_objects: known.map(|k| k as Arc<dyn KnownObjects>),
        emit_delta_type_replaced: true,
        transform: None,
    })
}

fn kinds(deltas: &[Delta]) -> Vec<DeltaType> {
    deltas.iter().map(|d| d.kind).collect()
}

fn versions(deltas: &[Delta]) -> Vec<String> {
    deltas
        .iter()
        .map(|d| {
            d.object
                .object()
                .map(|o| o.resource_version().to_string())
                .unwrap_or_default()
        })
        .collect()
}

async fn pop(fifo: &DeltaFifo) -> Vec<Delta> {
    fifo.pop(|_, _| Ok(())).await.expect("pop")
}

#[test]
fn df_02_delta_type_strings_are_exact() {
    let names: Vec<&str> = [
        DeltaType::Added,
        DeltaType::Updated,
        DeltaType::Deleted,
        DeltaType::Replaced,
        DeltaType::Sync,
    ]
    .iter()
    .map(|t| t.as_str())
    .collect();
    assert_eq!(names, ["Added", "Updated", "Deleted", "Replaced", "Sync"]);
}

#[tokio::test]
async fn df_01_df_03_df_08_changes_accumulate_oldest_first_under_one_queued_key() {
    let fifo = fifo_with(None);
    fifo.add(object("ns", "a", "1")).unwrap();
    fifo.add(object("ns", "b", "2")).unwrap();
    fifo.update(object("ns", "a", "3")).unwrap();
    fifo.update(object("ns", "a", "4")).unwrap();
    assert_eq!(
        fifo.list_keys(),
        ["ns/a", "ns/b"],
        "each key queued once, in first-add order"
    );
    let a = pop(&fifo).await;
    assert_eq!(
        kinds(&a),
        [DeltaType::Added, DeltaType::Updated, DeltaType::Updated]
    );
    assert_eq!(versions(&a), ["1", "3", "4"]);
    assert_eq!(fifo.list_keys(), ["ns/b"]);
    assert!(
        fifo.get_by_key("ns/a").is_none(),
        "popped key leaves items too (DF-25)"
    );
}

#[tokio::test]
async fn df_10_only_two_trailing_deletes_collapse_keeping_the_older() {
    let known = Known::with(vec![object("ns", "a", "1")]);
    let fifo = fifo_with(Some(known));
    fifo.update(object("ns", "a", "2")).unwrap();
    fifo.update(object("ns", "a", "2")).unwrap();
    fifo.delete(object("ns", "a", "3")).unwrap();
    fifo.delete(object("ns", "a", "4")).unwrap();
    let deltas = pop(&fifo).await;
    assert_eq!(
        kinds(&deltas),
        [DeltaType::Updated, DeltaType::Updated, DeltaType::Deleted],
        "repeated updates never collapse; two deletes do"
    );
    assert_eq!(
        versions(&deltas),
        ["2", "2", "3"],
        "client-go's isDeletionDup keeps the older delete"
    );
}

#[tokio::test]
async fn df_10_a_real_delete_beats_a_tombstone_and_two_tombstones_keep_the_newer() {
    // Older tombstone, newer real delete: the real one survives.
    let known = Known::with(vec![object("ns", "a", "1")]);
    let fifo = fifo_with(Some(Arc::clone(&known)));
    fifo.replace(vec![], "5").unwrap();
    fifo.delete(object("ns", "a", "6")).unwrap();
    let deltas = pop(&fifo).await;
    assert_eq!(deltas.len(), 1);
    assert!(!deltas[0].object.is_tombstone());
    assert_eq!(versions(&deltas), ["6"]);

    // Older real delete, newer tombstone: the real one survives.
    let fifo = fifo_with(Some(Arc::clone(&known)));
    fifo.delete(object("ns", "a", "7")).unwrap();
    fifo.replace(vec![], "8").unwrap();
    let deltas = pop(&fifo).await;
    assert_eq!(deltas.len(), 1);
    assert!(!deltas[0].object.is_tombstone());
    assert_eq!(versions(&deltas), ["7"]);

    // Two tombstones: client-go keeps the newer.
    let fifo = fifo_with(Some(known));
    fifo.replace(vec![], "9").unwrap();
    let older = fifo.get_by_key("ns/a").unwrap()[0].object.clone();
    fifo.replace(vec![], "10").unwrap();
    let deltas = pop(&fifo).await;
    assert_eq!(deltas.len(), 1);
    let (DeltaObject::Tombstone(kept), DeltaObject::Tombstone(older)) = (&deltas[0].object, &older)
    else {
        panic!("expected tombstones");
    };
    assert!(!Arc::ptr_eq(kept, older), "the newer tombstone is kept");
}

#[tokio::test]
async fn df_12_delete_of_a_key_nobody_knows_is_a_no_op() {
    let fifo = fifo_with(Some(Known::with(vec![])));
    fifo.delete(object("ns", "gone", "1")).unwrap();
    assert!(fifo.is_empty());
    assert!(fifo.has_synced(), "delete still sets populated (DF-30)");

    let fifo = fifo_with(Some(Known::with(vec![object("ns", "known", "1")])));
    fifo.delete(object("ns", "known", "2")).unwrap();
    assert_eq!(kinds(&pop(&fifo).await), [DeltaType::Deleted]);

    // Queued but not yet known: still reported.
    fifo.add(object("ns", "new", "3")).unwrap();
    fifo.delete(object("ns", "new", "4")).unwrap();
    assert_eq!(
        kinds(&pop(&fifo).await),
        [DeltaType::Added, DeltaType::Deleted]
    );
}

#[tokio::test]
async fn df_12_without_known_objects_delete_needs_a_queued_key() {
    let fifo = fifo_with(None);
    fifo.delete(object("ns", "a", "1")).unwrap();
    assert!(fifo.is_empty());
    fifo.add(object("ns", "a", "2")).unwrap();
    fifo.delete(object("ns", "a", "3")).unwrap();
    assert_eq!(
        kinds(&pop(&fifo).await),
        [DeltaType::Added, DeltaType::Deleted]
    );
}

#[tokio::test]
async fn df_13_replace_emits_replaced_or_sync_and_ignores_the_version() {
    let fifo = fifo_with(None);
    fifo.replace(vec![object("ns", "a", "1")], "whatever")
        .unwrap();
    assert_eq!(kinds(&pop(&fifo).await), [DeltaType::Replaced]);

    let legacy = DeltaFifo::new(DeltaFifoOptions::default());
    legacy.replace(vec![object("ns", "a", "1")], "").unwrap();
    assert_eq!(kinds(&pop(&legacy).await), [DeltaType::Sync]);
}

#[tokio::test]
async fn df_04_df_14_replace_tombstones_known_keys_missing_from_the_list() {
    let known = Known::with(vec![object("ns", "stays", "1"), object("ns", "gone", "2")]);
    known.phantom_keys.lock().push("ns/phantom".to_string());
    let fifo = fifo_with(Some(known));
    fifo.replace(vec![object("ns", "stays", "3")], "3").unwrap();
    let mut popped = Vec::new();
    for _ in 0..3 {
        popped.push(pop(&fifo).await);
    }
    let by_key = |key: &str| {
        popped
            .iter()
            .find(|d| d[0].object.key() == key)
            .unwrap()
            .clone()
    };
    assert_eq!(kinds(&by_key("ns/stays")), [DeltaType::Replaced]);
    let gone = by_key("ns/gone");
    assert_eq!(kinds(&gone), [DeltaType::Deleted]);
    let DeltaObject::Tombstone(tombstone) = &gone[0].object else {
        panic!("expected a tombstone")
    };
    assert_eq!(tombstone.key, "ns/gone");
    assert_eq!(
        tombstone.object.as_ref().unwrap().resource_version(),
        "2",
        "last known state"
    );
    let DeltaObject::Tombstone(phantom) = &by_key("ns/phantom")[0].object else {
        panic!()
    };
    assert!(
        phantom.object.is_none(),
        "lookup found nothing: tombstone without object"
    );
}

#[tokio::test]
async fn df_16_df_17_replace_keeps_queued_deltas_and_tombstones_queued_keys_missing_from_the_list()
{
    let fifo = fifo_with(Some(Known::with(vec![])));
    fifo.add(object("ns", "a", "1")).unwrap();
    fifo.add(object("ns", "vanished", "2")).unwrap();
    fifo.replace(vec![object("ns", "a", "3")], "3").unwrap();
    let a = pop(&fifo).await;
    assert_eq!(
        kinds(&a),
        [DeltaType::Added, DeltaType::Replaced],
        "queued deltas survive"
    );
    let vanished = pop(&fifo).await;
    assert_eq!(kinds(&vanished), [DeltaType::Added, DeltaType::Deleted]);
    let DeltaObject::Tombstone(tombstone) = &vanished[1].object else {
        panic!()
    };
    assert_eq!(
        tombstone.object.as_ref().unwrap().resource_version(),
        "2",
        "newest queued state"
    );
}

#[tokio::test]
async fn df_15_df_24_df_30_initial_population_counts_tombstones_and_drains_on_pop() {
    let known = Known::with(vec![object("ns", "old", "1")]);
    let fifo = fifo_with(Some(known));
    assert!(!fifo.has_synced());
    fifo.replace(vec![object("ns", "a", "2"), object("ns", "b", "2")], "2")
        .unwrap();
    assert!(
        !fifo.has_synced(),
        "3 items to pop: a, b and old's tombstone"
    );
    let mut initial_flags = Vec::new();
    for _ in 0..3 {
        assert!(!fifo.has_synced());
        fifo.pop(|_, initial| {
            initial_flags.push(initial);
            Ok(())
        })
        .await
        .unwrap();
    }
    assert!(fifo.has_synced());
    assert_eq!(initial_flags, [true, true, true]);
    fifo.add(object("ns", "c", "3")).unwrap();
    fifo.pop(|_, initial| {
        assert!(!initial, "later items are not part of the initial list");
        Ok(())
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn df_30_adds_before_the_first_replace_count_as_synced() {
    let fifo = fifo_with(None);
    fifo.add(object("ns", "a", "1")).unwrap();
    assert!(fifo.has_synced());
    fifo.replace(vec![object("ns", "b", "2")], "2").unwrap();
    assert!(
        fifo.has_synced(),
        "populated already: the first replace sets no count"
    );
}

#[tokio::test]
async fn df_18_df_19_resync_replays_known_objects_without_queued_deltas() {
    let fifo = fifo_with(None);
    fifo.resync().unwrap();
    assert!(fifo.is_empty(), "no known objects: resync is a no-op");

    let known = Known::with(vec![object("ns", "idle", "1"), object("ns", "busy", "1")]);
    known.phantom_keys.lock().push("ns/phantom".to_string());
    let fifo = fifo_with(Some(known));
    fifo.update(object("ns", "busy", "2")).unwrap();
    fifo.resync().unwrap();
    let busy = pop(&fifo).await;
    assert_eq!(
        kinds(&busy),
        [DeltaType::Updated],
        "no stale Sync behind a pending change"
    );
    let idle = pop(&fifo).await;
    assert_eq!(kinds(&idle), [DeltaType::Sync]);
    assert_eq!(versions(&idle), ["1"]);
    assert!(fifo.is_empty(), "phantom key skipped");
}

#[tokio::test]
async fn df_21_df_22_add_if_not_present_appends_only_new_keys() {
    let fifo = fifo_with(None);
    assert!(matches!(
        fifo.add_if_not_present(vec![]),
        Err(FifoError::EmptyDeltas)
    ));
    fifo.add(object("ns", "a", "5")).unwrap();
    let stale = vec![Delta {
        kind: DeltaType::Added,
        object: DeltaObject::Object(object("ns", "a", "1")),
    }];
    fifo.add_if_not_present(stale).unwrap();
    fifo.add_if_not_present(vec![Delta {
        kind: DeltaType::Added,
        object: DeltaObject::Object(object("ns", "b", "2")),
    }])
    .unwrap();
    assert_eq!(fifo.list_keys(), ["ns/a", "ns/b"]);
    assert_eq!(
        versions(&pop(&fifo).await),
        ["5"],
        "newer queued deltas win"
    );
}

#[tokio::test]
async fn key_04_key_05_tombstones_key_by_their_stored_key() {
    let tombstone = DeltaObject::Tombstone(Arc::new(DeletedFinalStateUnknown {
        key: "ns/stored".to_string(),
        object: Some(object("ns", "other", "1")),
    }));
    assert_eq!(tombstone.key(), "ns/stored");
    let fifo = fifo_with(None);
    fifo.add_if_not_present(vec![
        Delta {
            kind: DeltaType::Added,
            object: DeltaObject::Object(object("ns", "first", "1")),
        },
        Delta {
            kind: DeltaType::Deleted,
            object: tombstone,
        },
    ])
    .unwrap();
    assert_eq!(fifo.list_keys(), ["ns/stored"], "key of the newest delta");
}

#[tokio::test]
async fn df_27_requeue_puts_deltas_back_and_other_errors_drop_them() {
    let fifo = fifo_with(None);
    fifo.add(object("ns", "a", "1")).unwrap();
    fifo.add(object("ns", "b", "1")).unwrap();
    let error = fifo
        .pop(|_, _| Err(ProcessError::Requeue("try later".into())))
        .await
        .unwrap_err();
    let PopError::Process { key, source, .. } = error else {
        panic!()
    };
    assert_eq!(
        (key.as_str(), source.to_string().as_str()),
        ("ns/a", "try later")
    );
    assert_eq!(fifo.list_keys(), ["ns/b", "ns/a"], "requeued at the tail");

    let error = fifo
        .pop(|_, _| Err(ProcessError::Failed("bad".into())))
        .await
        .unwrap_err();
    assert!(matches!(error, PopError::Process { ref key, .. } if key == "ns/b"));
    assert_eq!(fifo.list_keys(), ["ns/a"], "a failed item is gone");
}

#[tokio::test]
async fn df_29_close_drains_the_queue_then_reports_closed() {
    let fifo = fifo_with(None);
    fifo.add(object("ns", "a", "1")).unwrap();
    fifo.close();
    fifo.add(object("ns", "b", "1")).unwrap();
    assert_eq!(pop(&fifo).await[0].object.key(), "ns/a");
    assert_eq!(
        pop(&fifo).await[0].object.key(),
        "ns/b",
        "close does not gate producers"
    );
    assert!(matches!(
        fifo.pop(|_, _| Ok(())).await,
        Err(PopError::Closed)
    ));
}

#[tokio::test]
async fn df_23_pop_waits_for_an_item_and_close_wakes_it() {
    let fifo = Arc::new(fifo_with(None));
    let waiting = tokio::spawn({
        let fifo = Arc::clone(&fifo);
        async move {
            fifo.pop(|_, _| Ok(()))
                .await
                .map(|d| d[0].object.key().to_string())
        }
    });
    tokio::task::yield_now().await;
    assert!(!waiting.is_finished());
    fifo.add(object("ns", "a", "1")).unwrap();
    assert_eq!(waiting.await.unwrap().unwrap(), "ns/a");

    let waiting = tokio::spawn({
        let fifo = Arc::clone(&fifo);
        async move { fifo.pop(|_, _| Ok(())).await.map(|_| ()) }
    });
    tokio::task::yield_now().await;
    fifo.close();
    assert!(matches!(waiting.await.unwrap(), Err(PopError::Closed)));
}

#[tokio::test]
async fn df_26_process_runs_under_the_lock_so_producers_wait() {
    let fifo = Arc::new(fifo_with(None));
    fifo.add(object("ns", "a", "1")).unwrap();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let producer_fifo = Arc::clone(&fifo);
    fifo.pop(|_, _| {
        std::thread::spawn(move || {
            producer_fifo.add(object("ns", "b", "1")).unwrap();
            done_tx.send(()).unwrap();
        });
        // While processing, the producer cannot get in.
        assert!(done_rx.recv_timeout(Duration::from_millis(20)).is_err());
        Ok(())
    })
    .await
    .unwrap();
    assert_eq!(pop(&fifo).await[0].object.key(), "ns/b");
}

#[test]
fn df_09_transform_applies_before_queueing_and_its_error_is_returned() {
    let fifo = DeltaFifo::new(DeltaFifoOptions {
        transform: Some(Arc::new(|object: Object| {
            if object.name() == "bad" {
                Err("rejected".into())
            } else {
                Ok(object.without_managed_fields())
            }
        })),
        ..DeltaFifoOptions::default()
    });
    let error = fifo.add(object("ns", "bad", "1")).unwrap_err();
    let FifoError::Transform { key, source } = &error else {
        panic!("expected the transform's error, got {error:?}");
    };
    assert_eq!(
        (key.as_str(), source.to_string().as_str()),
        ("ns/bad", "rejected")
    );
    assert!(fifo.is_empty());
}

#[test]
fn df_32_list_returns_the_newest_object_per_key() {
    let fifo = fifo_with(None);
    fifo.add(object("ns", "a", "1")).unwrap();
    fifo.update(object("ns", "a", "2")).unwrap();
    fifo.add(object("ns", "b", "3")).unwrap();
    let newest: Vec<String> = fifo
        .list()
        .iter()
        .map(|o| o.object().unwrap().resource_version().to_string())
        .collect();
    assert_eq!(newest, ["2", "3"]);
    assert_eq!(fifo.get_by_key("ns/a").unwrap().len(), 2);
}

#[derive(Debug, Clone)]
enum Op {
    Add(u8, u8),
    Update(u8, u8),
    Delete(u8, u8),
    Replace(Vec<(u8, u8)>),
    Resync,
    Pop,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..6, 0u8..50).prop_map(|(k, v)| Op::Add(k, v)),
        (0u8..6, 0u8..50).prop_map(|(k, v)| Op::Update(k, v)),
        (0u8..6, 0u8..50).prop_map(|(k, v)| Op::Delete(k, v)),
        proptest::collection::vec((0u8..6, 0u8..50), 0..6).prop_map(Op::Replace),
        Just(Op::Resync),
        Just(Op::Pop),
    ]
}

proptest! {
    /// DF-03 invariants under random producer/consumer sequences, with the
    /// popped deltas applied to a known-objects store as the informer does.
    #[test]
    fn df_03_invariants_hold_for_random_sequences(ops in proptest::collection::vec(op(), 1..60)) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let known = Known::with(vec![]);
        let fifo = fifo_with(Some(Arc::clone(&known)));
        for op in ops {
            match op {
                Op::Add(k, v) => fifo.add(object("ns", &k.to_string(), &v.to_string())).unwrap(),
                Op::Update(k, v) => fifo.update(object("ns", &k.to_string(), &v.to_string())).unwrap(),
                Op::Delete(k, v) => fifo.delete(object("ns", &k.to_string(), &v.to_string())).unwrap(),
                Op::Replace(items) => {
                    let mut seen = std::collections::HashSet::new();
                    let list = items.into_iter().filter(|(k, _)| seen.insert(*k))
                        .map(|(k, v)| object("ns", &k.to_string(), &v.to_string())).collect();
                    fifo.replace(list, "").unwrap();
                }
                Op::Resync => fifo.resync().unwrap(),
                Op::Pop => {
                    if fifo.is_empty() { continue; }
                    let deltas = runtime.block_on(fifo.pop(|_, _| Ok(()))).unwrap();
                    prop_assert!(!deltas.is_empty());
                    let key = deltas[0].object.key().to_string();
                    prop_assert!(deltas.iter().all(|d| d.object.key() == key));
                    let mut objects = known.objects.lock();
                    for delta in &deltas {
                        objects.retain(|o| o.key() != key);
                        if delta.kind != DeltaType::Deleted {
                            objects.push(delta.object.object().unwrap().clone());
                        }
                    }
                }
            }
            let keys = fifo.list_keys();
            let unique: std::collections::HashSet<_> = keys.iter().collect();
            prop_assert_eq!(unique.len(), keys.len(), "no duplicate keys in the queue");
            for key in &keys {
                let deltas = fifo.get_by_key(key);
                prop_assert!(deltas.is_some_and(|d| !d.is_empty()), "queued key has deltas");
            }
            prop_assert_eq!(fifo.len(), keys.len());
        }
    }
}
