//! The SDK for writing recon reconcilers in Rust.
//!
//! A reconciler is a type implementing [`Reconciler`] (its [`Manifest`] and
//! its `reconcile`), exported from a `cdylib` crate built for
//! `wasm32-wasip2` with [`export_reconciler!`]. During a reconcile it talks
//! to the host through a [`Context`]: typed reads of the host's cache,
//! writes through the host's client, its workqueue, logs and events, and
//! the [`finalizer()`] helper. Natively, `testing::FakeCluster` runs the
//! same reconciler against an in-memory cluster that enforces the manifest
//! as the host does.
//!
//! Modules: [`types`] (kinds, keys, metadata, errors, actions), [`manifest`],
//! [`meta`] (metadata lookups and "ensure labels" patches),
//! [`backend`] (the untyped host interface), [`context`], [`finalizer`](mod@finalizer),
//! [`selector`] (label selectors, from `recon-label-selector`), [`reconciler`] (the trait and the export
//! macro), and, per target, `bindings` + `wasm` (the component) or
//! `testing` (native).

pub mod backend;
#[cfg(target_arch = "wasm32")]
pub mod bindings;
pub mod context;
pub mod finalizer;
pub mod manifest;
pub mod meta;
pub mod reconciler;
#[cfg(not(target_arch = "wasm32"))]
pub mod testing;
pub mod types;
#[cfg(target_arch = "wasm32")]
pub mod wasm;

pub use backend::{
    ApplyPatch, Backend, DeleteOptions, Event, EventType, Level, PatchBody, Propagation, WriteOp,
};
pub use context::Context;
pub use finalizer::{FinalizerEvent, finalizer};
pub use k8s_openapi;
pub use manifest::{
    IndexSource, IndexSpec, KeyMapping, Manifest, ManifestError, Permission, PrunedField, Verb,
    Watch,
};
pub use meta::ObjectMetaExt;
pub use recon_label_selector::{self as selector, Selector};
pub use reconciler::Reconciler;
pub use serde_json;
pub use types::{
    Action, Error, Gvk, Meta, Object, ObjectKey, OwnerRef, RawObject, Request, Result, gvk_of,
    is_namespaced,
};
