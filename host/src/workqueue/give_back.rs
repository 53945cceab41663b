//! Room given back by the workqueue's collections once they drain: a queue
//! that held 30,000 keys after an initial sync (and the maps of its
//! metrics and rate limiter beside it) keeps no room for them once they are
//! done. A collection with room for more than four times [`FLOOR`] items
//! shrinks when it holds at most an eighth of that, to twice what it holds
//! (at least the floor): each shrink at least halves the room, and the next
//! comes only after half the items left since, so the cost is O(1)
//! amortized per removal, and a collection at the floor never shrinks
//! again.

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hash};

use hashbrown::HashMap;

/// Room every collection may keep however little it holds.
const FLOOR: usize = 1024;

/// A collection that can give back room it no longer needs.
pub(crate) trait GiveBack {
    /// Shrinks when far larger than what it holds.
    fn give_back(&mut self);
}

/// The capacity to shrink to, when a collection of `len` items and room for
/// `capacity` should.
fn shrunk(len: usize, capacity: usize) -> Option<usize> {
    (capacity > 4 * FLOOR && len <= capacity / 8).then(|| (2 * len).max(FLOOR))
}

impl<T> GiveBack for VecDeque<T> {
    fn give_back(&mut self) {
        if let Some(capacity) = shrunk(self.len(), self.capacity()) {
            self.shrink_to(capacity);
        }
    }
}

impl<K: Hash + Eq, V, S: BuildHasher> GiveBack for HashMap<K, V, S> {
    fn give_back(&mut self) {
        if let Some(capacity) = shrunk(self.len(), buckets(self)) {
            self.shrink_to(capacity);
        }
    }
}

/// About how many buckets `map` has (`capacity` counts down as removals
/// leave tombstones, so it cannot tell).
fn buckets<K: Hash + Eq, V, S: BuildHasher>(map: &HashMap<K, V, S>) -> usize {
    map.allocation_size() / (size_of::<(K, V)>() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drained_map_and_queue_give_back_their_room_and_small_ones_keep_theirs() {
        let mut map: HashMap<u32, u32> = (0..30_000).map(|i| (i, i)).collect();
        let mut queue: VecDeque<u32> = (0..30_000).collect();
        let mut shrinks = 0;
        let mut last = map.allocation_size();
        for i in 0..30_000 {
            map.remove(&i);
            map.give_back();
            queue.pop_front();
            queue.give_back();
            if map.allocation_size() < last {
                shrinks += 1;
                last = map.allocation_size();
            }
        }
        assert!(buckets(&map) <= 4 * FLOOR, "{}", buckets(&map));
        assert!(queue.capacity() <= 4 * FLOOR, "{}", queue.capacity());
        // Each shrink at least halves the room: a handful, not one per removal.
        assert!((1..=8).contains(&shrinks), "{shrinks} shrinks");

        let mut small: VecDeque<u32> = VecDeque::with_capacity(4 * FLOOR);
        small.push_back(1);
        small.give_back();
        assert_eq!(small.capacity(), 4 * FLOOR, "room within the floor is kept");
    }

    /// A collection just shrunk is not shrunk again before half its items
    /// have left (at the floor, never): no rehash per removal.
    #[test]
    fn a_shrunk_collection_is_not_shrunk_again_at_once() {
        for len in [0, 1, 100, 511, 512, 513, 1_000, 4_000, 20_000] {
            let target = (2 * len).max(FLOOR);
            let mut map: HashMap<u64, u64> = (0..len as u64).map(|i| (i, i)).collect();
            map.shrink_to(target);
            let mut queue: VecDeque<u64> = (0..len as u64).collect();
            queue.shrink_to(target);
            for held in [len, len * 2 / 3, len / 2 + 1] {
                assert_eq!(
                    shrunk(held, buckets(&map)),
                    None,
                    "map of {len}, {held} held"
                );
                assert_eq!(
                    shrunk(held, queue.capacity()),
                    None,
                    "queue of {len}, {held} held"
                );
            }
        }
    }

    #[test]
    fn a_map_that_holds_much_keeps_its_room() {
        let mut map: HashMap<u32, u32> = (0..30_000).map(|i| (i, i)).collect();
        let allocated = map.allocation_size();
        for i in 0..10_000 {
            map.remove(&i);
            map.give_back();
        }
        assert_eq!(map.allocation_size(), allocated);
    }
}
