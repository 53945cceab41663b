//! Checks, with a counting global allocator, that a cached object is exactly
//! one heap allocation of `heap_size()` bytes and that cloning allocates
//! nothing. Alone in its test binary so no other test disturbs the counters.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use recon_host::object::Object;

struct Counting;

static LIVE_BLOCKS: AtomicIsize = AtomicIsize::new(0);
static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE_BLOCKS.fetch_add(1, Ordering::SeqCst);
        LIVE_BYTES.fetch_add(layout.size() as isize, Ordering::SeqCst);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BLOCKS.fetch_sub(1, Ordering::SeqCst);
        LIVE_BYTES.fetch_sub(layout.size() as isize, Ordering::SeqCst);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live() -> (isize, isize) {
    (
        LIVE_BLOCKS.load(Ordering::SeqCst),
        LIVE_BYTES.load(Ordering::SeqCst),
    )
}

#[test]
fn object_is_one_allocation_of_heap_size_bytes() {
    let pretty = include_str!("../testdata/pod.json");
    let value: serde_json::Value = serde_json::from_str(pretty).unwrap();
    let json = serde_json::to_string(&value).unwrap();
    drop(value);

    for pruned in [false, true] {
        let (blocks, bytes) = live();
        let obj = if pruned {
            Object::from_json_pruned(&json).unwrap()
        } else {
            Object::from_json(&json).unwrap()
        };
        let (after_blocks, after_bytes) = live();
        assert_eq!(after_blocks - blocks, 1, "one live allocation per object");
        assert_eq!((after_bytes - bytes) as usize, obj.heap_size());
        assert!(obj.heap_size() <= obj.json().len() + 600);

        let copies: Vec<Object> = Vec::with_capacity(4);
        let (blocks, bytes) = live();
        let mut copies = copies;
        copies.extend(std::iter::repeat_n(obj.clone(), 4));
        assert_eq!(live(), (blocks, bytes), "clones allocate nothing");
        drop(copies);

        let (blocks, bytes) = live();
        drop(obj);
        let (after_blocks, after_bytes) = live();
        assert_eq!(blocks - after_blocks, 1);
        assert!(bytes - after_bytes > json.len() as isize / 2);
    }
}
