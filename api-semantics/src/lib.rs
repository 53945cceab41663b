//! Kubernetes API rules that more than one part of recon must apply the
//! same way: the host (its guests' keys, its field indexes), the dev API
//! server (its store) and the guest SDK's `FakeCluster` (native tests of
//! guests). Pure functions over strings and JSON, no I/O, so the crate
//! builds for `wasm32-wasip2` as well.
//!
//! - [`Gvk`]: a kind of object;
//! - [`names`]: namespaces and object names, and the keys built of them;
//! - [`mapping`]: the primary keys a change of a watched object maps to;
//! - [`manifest`]: a reconciler's manifest, its builder and the checks
//!   the host applies when it loads one, and its parts: key mappings,
//!   indexes, write permissions, pruned fields;
//! - [`object`]: which kinds have a `generation` and what bumps it, the
//!   metadata an update keeps, and when a write changes nothing;
//! - [`fields`]: the strings at a dot-separated field path, as field
//!   indexes read them;
//! - [`writes`]: patch types and their media types, delete options and
//!   propagation policies, event types, and the check of a delete's
//!   preconditions.

pub mod fields;
mod kind;
pub mod manifest;
pub mod mapping;
pub mod names;
pub mod object;
pub mod writes;

pub use kind::{Gvk, api_version, is_built_in_group};
