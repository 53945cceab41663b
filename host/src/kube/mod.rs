//! API access: configuration and auth ([`config`]), the rate-limited client
//! ([`client`], [`rate_limit`]), error classification ([`status`]),
//! discovery ([`discovery`]), the HTTP list/watch of the native core
//! ([`lister_watcher`]) and writes ([`writes`]).

pub mod rate_limit;

pub use rate_limit::{ClientMetrics, ClientRateLimiter, RateLimit};
