//! Workqueues: the deduplicating queue, the delaying queue, rate limiters and
//! the rate-limited queue, with metrics hooks.
