//! recon's native host: the machinery that must be fast and shared between
//! reconcilers — informers (list/watch, DeltaFIFO, indexed cache) and
//! rate-limited workqueues — driven by an injectable clock.

pub mod clock;
pub mod controller;
pub mod informer;
pub mod kube;
pub mod label_selector;
pub mod operator;
pub mod ops;
pub mod policy;
pub mod runtime;
pub mod token_bucket;
pub mod workqueue;
