//! API access: configuration and auth ([`connect`]), the rate-limited client
//! ([`ApiClient`], [`ClientRateLimiter`]), error classification
//! ([`ApiError`]), discovery ([`Discovery`]), the HTTP list/watch of the
//! native core ([`HttpListerWatcher`]), writes ([`WriteOptions`]),
//! whether the server answers ([`Reachability`]) and the schemas it serves
//! for custom resources ([`served_schema`]).

mod client;
mod config;
mod discovery;
mod list_decoder;
mod lister_watcher;
mod openapi;
mod rate_limit;
mod reachability;
mod status;
mod writes;

pub use client::{ApiClient, RawResponse, SendError};
pub use config::{ConfigError, ConnectOptions, connect, connect_with_kubeconfig_text, load_config};
pub use discovery::{ApiResource, Discovery, DiscoveryError, Gvk};
pub use lister_watcher::{DiscoveredListerWatcher, HttpListerWatcher};
pub use openapi::{ServedSchema, served_schema};
pub use rate_limit::{ClientMetrics, ClientRateLimiter, NoopClientMetrics, RateLimit};
pub use reachability::{PROBE_INTERVAL, Reachability, probe_while_down};
pub use status::{ApiError, ApiErrorKind};
pub use writes::{Deleted, EventObjectRef, EventRecord, WriteOptions};

use crate::object::{Object, ObjectError};

/// Parses one object the server sent into its cached form, pruned of
/// `metadata.managedFields` when `prune`.
fn parse_object(json: &str, prune: bool) -> Result<Object, ObjectError> {
    if prune {
        Object::from_json_pruned(json)
    } else {
        Object::from_json(json)
    }
}

#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;
