//! The informer machinery: a reflector lists and watches a kind through a
//! [`ListerWatcher`], feeds a DeltaFIFO, and the shared
//! informer pops deltas into the indexed cache and out to event handlers.
//! Nothing here knows about HTTP or WebAssembly.

mod backoff;
mod delta_fifo;
#[cfg(any(test, feature = "testing"))]
pub mod fake_source;
mod indexer;
mod lister_watcher;
mod metrics;
mod reflector;
mod shared_informer;

pub use backoff::BackoffConfig;
pub use delta_fifo::{
    DeletedFinalStateUnknown, Delta, DeltaFifo, DeltaFifoOptions, DeltaObject, DeltaType, Deltas,
    FifoError, KnownObjects, PopError, ProcessError, ProcessFailure, TransformFn,
};
pub use indexer::{
    IndexError, IndexFunc, Indexer, NAMESPACE_INDEX, index_func, namespace_index_func,
};
pub use lister_watcher::{
    ErrorKind, ListOptions, ListPage, ListerWatcher, LwError, WatchEvent, WatchOptions, WatchStream,
};
pub use metrics::{ReflectorMetrics, ReflectorMetricsProvider};
pub use reflector::{
    DEFAULT_MIN_WATCH_TIMEOUT, DEFAULT_PAGE_SIZE, ExpectedKind, Recoveries, Reflector,
    ReflectorConfig, ReflectorError, ShouldResyncFn, Store, StoreError, WatchErrorHandler,
};
pub use shared_informer::{
    EventHandler, HandlerId, InformerConfig, InformerError, MINIMUM_RESYNC_PERIOD, SharedInformer,
    drop_managed_fields,
};
