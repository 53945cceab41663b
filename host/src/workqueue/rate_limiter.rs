//! Rate limiters (spec RL-*): the token bucket shared by all items, the
//! per-item exponential and fast/slow limiters, and the max-of and
//! max-wait combinators. Items are told apart by the queue's equality
//! (RL-12), so the same key string shares one failure count.

use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use hashbrown::HashMap;
use parking_lot::Mutex;

use super::give_back::GiveBack;
use crate::clock::SharedClock;
use crate::token_bucket::TokenBucket;

/// Decides how long an item waits before it is retried (RL-01).
pub trait RateLimiter<T>: Send + Sync {
    /// How long `item` should wait now. Records a failure for per-item
    /// limiters. `Duration::MAX` means "never" (RL-02).
    fn when(&self, item: &T) -> Duration;
    /// Clears the history of `item` (RLQ-03, RLQ-06).
    fn forget(&self, item: &T);
    /// How many failures `item` has had since it was last forgotten.
    fn num_requeues(&self, item: &T) -> u32;
}

impl<T, R: RateLimiter<T> + ?Sized> RateLimiter<T> for Arc<R> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item);
    }
    fn num_requeues(&self, item: &T) -> u32 {
        (**self).num_requeues(item)
    }
}

impl<T, R: RateLimiter<T> + ?Sized> RateLimiter<T> for Box<R> {
    fn when(&self, item: &T) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &T) {
        (**self).forget(item);
    }
    fn num_requeues(&self, item: &T) -> u32 {
        (**self).num_requeues(item)
    }
}

type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// One token bucket for all items, with the semantics of
/// `golang.org/x/time/rate.Limiter.Reserve` (RL-02, RL-03, ERR-03): it
/// starts full with `burst` tokens and refills at `qps` tokens per second;
/// every `when` reserves one token, even one that is only available later,
/// and returns the wait until it is. `forget` does nothing and
/// `num_requeues` is always 0.
pub struct BucketRateLimiter {
    bucket: Bucket,
}

/// The x/time/rate cases of a bucket.
enum Bucket {
    /// `qps == f64::INFINITY`: every reservation passes.
    Unlimited,
    /// `qps == 0`: the burst is a one-off allowance; then never.
    OneOff(Mutex<u32>),
    /// A finite rate but no burst: a reservation of one token can never fit.
    Never,
    /// A finite, positive rate and burst.
    Tokens(TokenBucket),
}

impl BucketRateLimiter {
    /// A bucket refilling at `qps` tokens per second (`f64::INFINITY` =
    /// unlimited) holding at most `burst` tokens, starting full.
    pub fn new(qps: f64, burst: u32, clock: SharedClock) -> Self {
        let qps = qps.max(0.0);
        let bucket = if qps == f64::INFINITY {
            Bucket::Unlimited
        } else if qps == 0.0 {
            Bucket::OneOff(Mutex::new(burst))
        } else if burst == 0 {
            Bucket::Never
        } else {
            Bucket::Tokens(TokenBucket::new(qps, burst, clock))
        };
        BucketRateLimiter { bucket }
    }

    fn reserve(&self) -> Duration {
        match &self.bucket {
            Bucket::Unlimited => Duration::ZERO,
            Bucket::OneOff(remaining) => {
                let mut remaining = remaining.lock();
                if *remaining >= 1 {
                    *remaining -= 1;
                    Duration::ZERO
                } else {
                    Duration::MAX
                }
            }
            Bucket::Never => Duration::MAX,
            Bucket::Tokens(bucket) => bucket.reserve(),
        }
    }
}

impl<T> RateLimiter<T> for BucketRateLimiter {
    fn when(&self, _item: &T) -> Duration {
        self.reserve()
    }
    fn forget(&self, _item: &T) {}
    fn num_requeues(&self, _item: &T) -> u32 {
        0
    }
}

/// Per-item failure counts, shared by the per-item limiters (RL-07, RL-08,
/// RL-12): `record` counts one more failure, `forget` resets.
struct FailureCounts<T> {
    counts: Mutex<FastMap<T, u32>>,
}

impl<T: Hash + Eq + Clone> FailureCounts<T> {
    fn new() -> Self {
        FailureCounts {
            counts: Mutex::new(FastMap::default()),
        }
    }

    /// Counts one more failure of `item`; returns the count before it.
    fn record(&self, item: &T) -> u32 {
        let mut counts = self.counts.lock();
        match counts.get_mut(item) {
            Some(count) => {
                let before = *count;
                *count = count.saturating_add(1);
                before
            }
            None => {
                counts.insert(item.clone(), 1);
                0
            }
        }
    }

    fn forget(&self, item: &T) {
        let mut counts = self.counts.lock();
        if counts.remove(item).is_some() {
            counts.give_back();
        }
    }

    fn get(&self, item: &T) -> u32 {
        self.counts.lock().get(item).copied().unwrap_or(0)
    }
}

/// Per-item exponential backoff: `base × 2ⁿ` with `n` the failures so far,
/// capped at `max` (RL-05..RL-07). The first call returns `base`.
pub struct ItemExponentialFailureRateLimiter<T> {
    base: Duration,
    max: Duration,
    failures: FailureCounts<T>,
}

impl<T: Hash + Eq + Clone> ItemExponentialFailureRateLimiter<T> {
    /// Backoff from `base` doubling up to `max`.
    pub fn new(base: Duration, max: Duration) -> Self {
        ItemExponentialFailureRateLimiter {
            base,
            max,
            failures: FailureCounts::new(),
        }
    }
}

impl<T: Hash + Eq + Clone + Send + Sync> RateLimiter<T> for ItemExponentialFailureRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let exp = self.failures.record(item);
        let backoff = self.base.as_nanos() as f64 * 2f64.powf(f64::from(exp));
        if backoff > i64::MAX as f64 {
            return self.max;
        }
        Duration::from_nanos(backoff as u64).min(self.max)
    }

    fn forget(&self, item: &T) {
        self.failures.forget(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.failures.get(item)
    }
}

/// Per-item fast/slow delays (RL-08, ERR-05): the count is incremented
/// first; while it is at most `max_fast_attempts` the delay is `fast`,
/// afterwards `slow`. There is no time window: only `forget` resets it.
pub struct ItemFastSlowRateLimiter<T> {
    fast: Duration,
    slow: Duration,
    max_fast_attempts: u32,
    failures: FailureCounts<T>,
}

impl<T: Hash + Eq + Clone> ItemFastSlowRateLimiter<T> {
    /// `fast` for the first `max_fast_attempts` failures, then `slow`.
    pub fn new(fast: Duration, slow: Duration, max_fast_attempts: u32) -> Self {
        ItemFastSlowRateLimiter {
            fast,
            slow,
            max_fast_attempts,
            failures: FailureCounts::new(),
        }
    }
}

impl<T: Hash + Eq + Clone + Send + Sync> RateLimiter<T> for ItemFastSlowRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        let count = self.failures.record(item).saturating_add(1);
        if count <= self.max_fast_attempts {
            self.fast
        } else {
            self.slow
        }
    }

    fn forget(&self, item: &T) {
        self.failures.forget(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.failures.get(item)
    }
}

/// The most pessimistic of several limiters (RL-09). `when` consults every
/// limiter, so each records the failure, and returns the largest delay;
/// `forget` forgets in all; `num_requeues` is the largest count.
pub struct MaxOfRateLimiter<T> {
    limiters: Vec<Box<dyn RateLimiter<T>>>,
}

impl<T> MaxOfRateLimiter<T> {
    /// Combines `limiters`.
    pub fn new(limiters: Vec<Box<dyn RateLimiter<T>>>) -> Self {
        MaxOfRateLimiter { limiters }
    }
}

impl<T> RateLimiter<T> for MaxOfRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.limiters
            .iter()
            .map(|l| l.when(item))
            .fold(Duration::ZERO, Duration::max)
    }

    fn forget(&self, item: &T) {
        for limiter in &self.limiters {
            limiter.forget(item);
        }
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.limiters
            .iter()
            .map(|l| l.num_requeues(item))
            .max()
            .unwrap_or(0)
    }
}

/// Caps another limiter's delay at `max_delay` (RL-11); `forget` and
/// `num_requeues` pass through.
pub struct WithMaxWaitRateLimiter<T> {
    inner: Box<dyn RateLimiter<T>>,
    max_delay: Duration,
}

impl<T> WithMaxWaitRateLimiter<T> {
    /// `inner`, never waiting longer than `max_delay`.
    pub fn new(inner: Box<dyn RateLimiter<T>>, max_delay: Duration) -> Self {
        WithMaxWaitRateLimiter { inner, max_delay }
    }
}

impl<T> RateLimiter<T> for WithMaxWaitRateLimiter<T> {
    fn when(&self, item: &T) -> Duration {
        self.inner.when(item).min(self.max_delay)
    }
    fn forget(&self, item: &T) {
        self.inner.forget(item);
    }
    fn num_requeues(&self, item: &T) -> u32 {
        self.inner.num_requeues(item)
    }
}

/// client-go's `DefaultControllerRateLimiter` (RL-10): the max of a per-item
/// exponential backoff from 5 ms to 1000 s and one bucket of 10 qps with a
/// burst of 100.
pub fn default_controller_rate_limiter<T: Hash + Eq + Clone + Send + Sync + 'static>(
    clock: SharedClock,
) -> MaxOfRateLimiter<T> {
    MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        )),
        Box::new(BucketRateLimiter::new(10.0, 100, clock)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::FakeClock;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn rl_02_rl_04_err_03_bucket_starts_full_and_reservations_pile_up() {
        let clock = FakeClock::new();
        let rl = BucketRateLimiter::new(10.0, 100, clock.shared());
        for i in 0..100 {
            assert_eq!(
                RateLimiter::<&str>::when(&rl, &"x"),
                Duration::ZERO,
                "call {i}"
            );
        }
        for k in 1..=5u32 {
            assert_eq!(RateLimiter::<&str>::when(&rl, &"y"), 100 * k * MS, "k={k}");
        }
        // RL-03: one shared limit; forget/num_requeues are no-ops.
        RateLimiter::<&str>::forget(&rl, &"x");
        assert_eq!(RateLimiter::<&str>::num_requeues(&rl, &"x"), 0);
        assert_eq!(RateLimiter::<&str>::when(&rl, &"z"), 600 * MS);
        // After 1 s, 10 tokens have refilled: the debt of 6 is paid, 4 left.
        clock.advance(Duration::from_secs(1));
        for _ in 0..4 {
            assert_eq!(RateLimiter::<&str>::when(&rl, &"x"), Duration::ZERO);
        }
        assert_eq!(RateLimiter::<&str>::when(&rl, &"x"), 100 * MS);
    }

    #[test]
    fn rl_02_bucket_refill_is_capped_at_burst() {
        let clock = FakeClock::new();
        let rl = BucketRateLimiter::new(10.0, 2, clock.shared());
        clock.advance(Duration::from_secs(100));
        assert_eq!(RateLimiter::<u8>::when(&rl, &0), Duration::ZERO);
        assert_eq!(RateLimiter::<u8>::when(&rl, &0), Duration::ZERO);
        assert_eq!(RateLimiter::<u8>::when(&rl, &0), 100 * MS);
        clock.advance(50 * MS);
        assert_eq!(RateLimiter::<u8>::when(&rl, &0), 150 * MS);
    }

    #[test]
    fn rl_02_unreservable_is_infinite() {
        let clock = FakeClock::new();
        let zero_burst = BucketRateLimiter::new(10.0, 0, clock.shared());
        assert_eq!(RateLimiter::<u8>::when(&zero_burst, &0), Duration::MAX);
        let zero_rate = BucketRateLimiter::new(0.0, 1, clock.shared());
        assert_eq!(RateLimiter::<u8>::when(&zero_rate, &0), Duration::ZERO);
        assert_eq!(RateLimiter::<u8>::when(&zero_rate, &0), Duration::MAX);
        let unlimited = BucketRateLimiter::new(f64::INFINITY, 0, clock.shared());
        assert_eq!(RateLimiter::<u8>::when(&unlimited, &0), Duration::ZERO);
    }

    #[test]
    fn rl_05_rl_06_err_04_exponential_sequence_5ms_to_1000s() {
        let rl = ItemExponentialFailureRateLimiter::new(5 * MS, Duration::from_secs(1000));
        let expected_ms = [5, 10, 20, 40, 80, 160, 320, 640, 1280];
        for (i, ms) in expected_ms.iter().enumerate() {
            assert_eq!(rl.when(&"k"), *ms * MS, "call {}", i + 1);
        }
        for _ in 10..18 {
            rl.when(&"k");
        }
        assert_eq!(rl.num_requeues(&"k"), 17);
        assert_eq!(rl.when(&"k"), Duration::from_millis(655_360), "call 18");
        for call in 19..200 {
            assert_eq!(rl.when(&"k"), Duration::from_secs(1000), "call {call}");
        }
        // Far past 2^63 ns: still the max, no overflow.
        assert_eq!(rl.num_requeues(&"k"), 199);
    }

    #[test]
    fn rl_07_exponential_forget_and_num_requeues_rl_12_per_key() {
        let rl: ItemExponentialFailureRateLimiter<String> =
            ItemExponentialFailureRateLimiter::new(MS, Duration::from_secs(1000));
        assert_eq!(rl.when(&"a".to_string()), MS);
        assert_eq!(rl.when(&"a".to_string()), 2 * MS);
        assert_eq!(rl.when(&"b".to_string()), MS, "separate count per key");
        assert_eq!(rl.num_requeues(&"a".to_string()), 2);
        rl.forget(&"a".to_string());
        assert_eq!(rl.num_requeues(&"a".to_string()), 0);
        assert_eq!(
            rl.when(&"a".to_string()),
            MS,
            "first call again returns base"
        );
        assert_eq!(rl.num_requeues(&"b".to_string()), 1);
    }

    #[test]
    fn rl_08_err_05_fast_slow_without_window() {
        let clock = FakeClock::new();
        let rl = ItemFastSlowRateLimiter::new(5 * MS, 20 * MS, 10);
        for call in 1..=10 {
            assert_eq!(rl.when(&1), 5 * MS, "call {call}");
        }
        clock.advance(Duration::from_secs(3600)); // no window: time changes nothing
        for call in 11..=15 {
            assert_eq!(rl.when(&1), 20 * MS, "call {call}");
        }
        assert_eq!(rl.num_requeues(&1), 15);
        assert_eq!(rl.when(&2), 5 * MS);
        rl.forget(&1);
        assert_eq!(rl.num_requeues(&1), 0);
        assert_eq!(rl.when(&1), 5 * MS);
    }

    #[test]
    fn rl_09_max_of_consults_every_limiter_and_takes_largest() {
        let slow = ItemFastSlowRateLimiter::new(MS, 100 * MS, 1);
        let exp = ItemExponentialFailureRateLimiter::new(10 * MS, Duration::from_secs(10));
        let rl = MaxOfRateLimiter::new(vec![Box::new(slow), Box::new(exp)]);
        assert_eq!(rl.when(&"k"), 10 * MS); // max(1, 10)
        assert_eq!(rl.when(&"k"), 100 * MS); // max(100, 20)
        assert_eq!(rl.when(&"k"), 100 * MS); // max(100, 40)
        assert_eq!(rl.when(&"k"), 100 * MS); // max(100, 80)
        assert_eq!(rl.when(&"k"), 160 * MS); // both recorded every failure
        assert_eq!(rl.num_requeues(&"k"), 5);
        rl.forget(&"k");
        assert_eq!(rl.num_requeues(&"k"), 0);
        assert_eq!(rl.when(&"k"), 10 * MS, "forgotten in every limiter");
        let empty: MaxOfRateLimiter<u8> = MaxOfRateLimiter::new(Vec::new());
        assert_eq!(empty.when(&0), Duration::ZERO);
    }

    #[test]
    fn rl_10_default_controller_limiter() {
        let clock = FakeClock::new();
        let rl = default_controller_rate_limiter::<String>(clock.shared());
        // Exponential part for one item, bucket still has tokens.
        assert_eq!(rl.when(&"a".into()), 5 * MS);
        assert_eq!(rl.when(&"a".into()), 10 * MS);
        assert_eq!(rl.num_requeues(&"a".into()), 2);
        // 98 more distinct items use up the burst of 100 ...
        for i in 0..98 {
            assert_eq!(rl.when(&format!("x{i}")), 5 * MS);
        }
        // ... then the shared bucket dominates for new items.
        assert_eq!(rl.when(&"b".into()), 100 * MS);
        assert_eq!(rl.when(&"c".into()), 200 * MS);
        // Repeated failures of one item back off exponentially past it.
        for _ in 0..8 {
            rl.when(&"a".into());
        }
        assert_eq!(rl.when(&"a".into()), Duration::from_millis(5 * 1024));
        rl.forget(&"a".into());
        assert_eq!(rl.num_requeues(&"a".into()), 0);
    }

    #[test]
    fn rl_11_with_max_wait_caps_and_passes_through() {
        let inner = ItemExponentialFailureRateLimiter::new(Duration::from_secs(1), Duration::MAX);
        let rl = WithMaxWaitRateLimiter::new(Box::new(inner), Duration::from_secs(3));
        assert_eq!(rl.when(&0), Duration::from_secs(1));
        assert_eq!(rl.when(&0), Duration::from_secs(2));
        assert_eq!(rl.when(&0), Duration::from_secs(3));
        assert_eq!(rl.when(&0), Duration::from_secs(3));
        assert_eq!(rl.num_requeues(&0), 4);
        rl.forget(&0);
        assert_eq!(rl.num_requeues(&0), 0);
    }

    #[test]
    fn rl_01_trait_objects_through_arc_and_box() {
        let rl: Arc<dyn RateLimiter<u8>> = Arc::new(ItemFastSlowRateLimiter::new(MS, 2 * MS, 1));
        let boxed: Box<dyn RateLimiter<u8>> = Box::new(Arc::clone(&rl));
        assert_eq!(boxed.when(&1), MS);
        assert_eq!(rl.when(&1), 2 * MS);
        assert_eq!(boxed.num_requeues(&1), 2);
        boxed.forget(&1);
        assert_eq!(rl.num_requeues(&1), 0);
    }
}
