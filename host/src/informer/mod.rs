//! The informer machinery: a reflector lists and watches a kind through a
//! [`lister_watcher::ListerWatcher`], feeds a DeltaFIFO, and the shared
//! informer pops deltas into the indexed cache and out to event handlers.
//! Nothing here knows about HTTP or WebAssembly.

pub mod backoff;
pub mod delta_fifo;
#[cfg(any(test, feature = "testing"))]
pub mod fake_source;
pub mod indexer;
pub mod lister_watcher;
pub mod metrics;
pub mod reflector;
pub mod shared_informer;
