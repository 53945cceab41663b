//! recon's native host: the machinery that must be fast and shared between
//! reconcilers — informers (list/watch, DeltaFIFO, indexed cache) and
//! rate-limited workqueues — driven by an injectable clock, and the
//! WebAssembly runtime their reconcilers run in.
//!
//! Layers, each using only those above it:
//!
//! 1. values: [`clock`], [`object`], [`token_bucket`], [`label_selector`],
//!    [`built_in_kinds`]
//!    (and the shared `recon-api-semantics` crate);
//! 2. the core, free of HTTP and wasmtime: [`informer`], [`workqueue`];
//! 3. the edges: [`kube`] (the API server), [`runtime`] (the guests),
//!    [`registry`] (guests in OCI registries);
//! 4. the wiring: [`controller`] (guests to informers, queues and the
//!    client), [`policy`] (what each guest is granted);
//! 5. the top: [`ops`] (metrics, health, leader election) and [`operator`]
//!    (a running host, as `host run` starts it).

pub mod built_in_kinds;
pub mod clock;
pub mod controller;
pub mod informer;
pub mod kube;
pub mod label_selector;
pub mod object;
pub mod operator;
pub mod ops;
pub mod policy;
pub mod registry;
pub mod runtime;
pub mod token_bucket;
pub mod workqueue;
