//! API access: configuration and auth ([`config`]), the rate-limited client
//! ([`client`], [`rate_limit`]), error classification ([`status`]),
//! discovery ([`discovery`]), the HTTP list/watch of the native core
//! ([`lister_watcher`]) and writes ([`writes`]).

pub mod client;
pub mod config;
pub mod discovery;
pub mod lister_watcher;
pub mod rate_limit;
pub mod status;
pub mod writes;

pub use client::ApiClient;
pub use config::{ConfigError, ConnectOptions, connect, load_config};
pub use discovery::{ApiResource, Discovery, DiscoveryError, Gvk};
pub use lister_watcher::HttpListerWatcher;
pub use rate_limit::{ClientMetrics, ClientRateLimiter, RateLimit};
pub use status::{ApiError, ApiErrorKind};

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
