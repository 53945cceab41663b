//! Tests of cached-object compression: what a compressed object reads,
//! equality across forms and dictionaries, and how a compactor learns.

use std::sync::Arc;

use serde_json::{Value, json};

use super::*;

const FIXTURE: &str = include_str!("../../../testdata/pod.json");

/// Pod `i` of one workload, shaped like the fixture: its names, uid,
/// addresses, token volume and times are its own.
fn pod(i: usize) -> Object {
    let mut v: Value = serde_json::from_str(FIXTURE).unwrap();
    let meta = &mut v["metadata"];
    meta["name"] = json!(format!("web-7d4b9c-{i:05}"));
    meta["uid"] = json!(format!("6a1f{i:04x}-2c3d-4e5f-8a9b-{:012x}", i * 7919));
    meta["resourceVersion"] = json!((1000 + i).to_string());
    meta["labels"]["instance"] = json!(format!("i\"{i}"));
    meta["finalizers"] = json!([format!("example.com/f{i}")]);
    meta["deletionTimestamp"] = json!("2024-05-01T10:00:00Z");
    v["status"]["podIP"] = json!(format!("10.1.{}.{}", i / 250, i % 250));
    let json = serde_json::to_string(&v).unwrap().replace(
        "kube-api-access-8sz46",
        &format!("kube-api-access-{:05x}", i * 31),
    );
    Object::from_json_pruned(&json).unwrap()
}

fn trained(pods: std::ops::Range<usize>) -> Arc<Dictionary> {
    let (mut samples, mut sizes) = (Vec::new(), Vec::new());
    for i in pods {
        let json = pod(i).json().into_owned();
        samples.extend_from_slice(json.as_bytes());
        sizes.push(json.len());
    }
    Arc::new(Dictionary::train(&samples, &sizes, DICTIONARY_SIZE).unwrap())
}

/// Every accessor of `a` reads as `b`'s.
fn assert_reads_alike(a: &Object, b: &Object) {
    assert_eq!(a.json(), b.json());
    assert_eq!(a.json_len(), b.json().len());
    assert_eq!(a.key(), b.key());
    assert_eq!(a.namespace(), b.namespace());
    assert_eq!(a.name(), b.name());
    assert_eq!(a.uid(), b.uid());
    assert_eq!(a.resource_version(), b.resource_version());
    assert_eq!(a.generation(), b.generation());
    assert_eq!(a.api_version(), b.api_version());
    assert_eq!(a.kind(), b.kind());
    assert!(a.labels().eq(b.labels()));
    assert!(a.annotations().eq(b.annotations()));
    assert!(a.owner_references().eq(b.owner_references()));
    assert!(a.finalizers().eq(b.finalizers()));
    assert_eq!(a.deletion_timestamp(), b.deletion_timestamp());
    assert_eq!(a.has_managed_fields(), b.has_managed_fields());
}

#[test]
fn a_compressed_pod_reads_as_the_plain_one_in_a_quarter_of_the_memory() {
    let dictionary = trained(0..64);
    for i in [64, 65, 500] {
        let plain = pod(i);
        let packed = plain.compressed(&dictionary).expect("a pod compresses");
        assert!(packed.is_compressed());
        assert!(!plain.is_compressed());
        assert_reads_alike(&packed, &plain);
        assert_eq!(packed.label("instance"), Some(format!("i\"{i}").as_str()));
        assert_eq!(packed, plain);
        assert_eq!(plain, packed);
        assert!(
            packed.heap_size() * 4 < plain.heap_size(),
            "{} bytes compressed, {} plain",
            packed.heap_size(),
            plain.heap_size()
        );
        assert!(packed.compressed(&dictionary).is_none(), "compressed once");
    }
    assert_ne!(
        pod(64).compressed(&dictionary),
        pod(65).compressed(&dictionary)
    );
    assert!(dictionary.len() <= DICTIONARY_SIZE);
    assert!(dictionary.heap_size() > dictionary.len());
}

#[test]
fn equality_holds_across_dictionaries() {
    let (a, b) = (trained(0..40), trained(40..80));
    let one = pod(100).compressed(&a).unwrap();
    let other = pod(100).compressed(&b).unwrap();
    assert_eq!(one, other);
    assert_ne!(one, pod(101).compressed(&b).unwrap());
    assert_ne!(one, pod(101));
    // Removing managedFields from a compressed object is a clone.
    assert!(one.without_managed_fields().is_same(&one));
}

#[test]
fn an_object_compression_would_not_shrink_stays_plain() {
    let dictionary = trained(0..32);
    // Too small: the frame's header outweighs what the dictionary saves.
    let object = Object::from_json(r#"{"metadata":{"name":"x"}}"#).unwrap();
    assert!(object.compressed(&dictionary).is_none());
    let compactor = Compactor::with_dictionary(dictionary);
    assert!(compactor.compact(object.clone()).is_same(&object));
}

#[test]
fn a_compactor_learns_from_its_first_objects_then_compresses() {
    let compactor = Compactor::new();
    for i in 0..SAMPLES {
        assert!(
            compactor.dictionary().is_none(),
            "no dictionary before sample {i}"
        );
        let object = pod(i);
        assert!(compactor.compact(object.clone()).is_same(&object));
    }
    let dictionary = compactor.dictionary().expect("trained on its samples");
    let packed = compactor.compact(pod(SAMPLES));
    assert!(packed.is_compressed());
    assert_reads_alike(&packed, &pod(SAMPLES));
    assert!(compactor.compact(packed.clone()).is_same(&packed));
    assert!(Arc::ptr_eq(&compactor.dictionary().unwrap(), &dictionary));
}

#[test]
fn a_compactor_of_few_large_objects_keeps_them_plain() {
    let big = |i: usize| {
        let data = format!("{i}").repeat(MAX_SAMPLE_BYTES / 3);
        Object::from_json(
            &json!({"metadata": {"name": format!("c{i}")}, "data": {"k": data}}).to_string(),
        )
        .unwrap()
    };
    let compactor = Compactor::new();
    for i in 0..MIN_SAMPLES + 2 {
        let object = big(i);
        assert!(compactor.compact(object.clone()).is_same(&object));
    }
    assert!(compactor.dictionary().is_none());
    assert_eq!(format!("{compactor:?}"), "Compactor(off)");
}

#[test]
fn compaction_from_many_threads_reads_back_every_object() {
    let compactor = Arc::new(Compactor::new());
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let compactor = Arc::clone(&compactor);
            std::thread::spawn(move || {
                let mut compressed = 0;
                for i in (t..SAMPLES * 2).step_by(8) {
                    let plain = pod(i);
                    let compact = compactor.compact(plain.clone());
                    compressed += usize::from(compact.is_compressed());
                    assert_reads_alike(&compact, &plain);
                }
                compressed
            })
        })
        .collect();
    let compressed: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(compressed, SAMPLES, "all but the samples are compressed");
}
