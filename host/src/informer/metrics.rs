//! Hooks a metrics exporter implements to follow reflectors: lists (and
//! their pages), watches, events and failures. The reflector calls them; it
//! neither knows nor cares what records them.

use std::sync::Arc;

use super::lister_watcher::LwError;

/// What one reflector reports. Every method is cheap and must not block.
pub trait ReflectorMetrics: Send + Sync {
    /// A list began; `relist` is false only for the reflector's first list.
    fn list_started(&self, relist: bool);
    /// One page of a list arrived with `objects` items.
    fn list_page(&self, objects: usize);
    /// A list finished and the store was replaced with `objects` objects.
    fn listed(&self, objects: usize);
    /// A watch was opened.
    fn watch_opened(&self);
    /// A watch event (not a bookmark) reached the store.
    fn event(&self);
    /// A list or a watch failed with `error`; the reflector will retry.
    fn failed(&self, error: &LwError);
}

/// Creates the metrics of each named reflector (one per informer).
pub trait ReflectorMetricsProvider: Send + Sync {
    /// The metrics of the reflector called `name`.
    fn reflector_metrics(&self, name: &str) -> Arc<dyn ReflectorMetrics>;
}
