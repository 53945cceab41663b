//! The [`Backend`] trait: the host as a guest sees it, untyped (kinds,
//! keys and JSON strings): one method per WIT import, but one [`WriteOp`]
//! for the client's writes. Two implementations
//! exist: the WIT imports themselves (`wasm` module, in a component) and
//! `testing::FakeCluster` (native tests). [`crate::Context`] puts
//! the typed API on top of either. The request types here have exactly the
//! shape of their WIT counterparts in `recon:controller/client` and
//! `recon:controller/log`, so the wasm backend passes them through as they are.

use std::time::Duration;

use crate::manifest::Verb;
use crate::types::{Gvk, Meta, ObjectKey, RawObject, Result};

/// A patch body and its type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatchBody {
    /// RFC 7386 JSON merge patch.
    Merge(String),
    /// RFC 6902 JSON patch.
    Json(String),
    /// Server-side apply of a full intent.
    Apply(ApplyPatch),
}

/// A server-side apply intent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApplyPatch {
    pub json: String,
    /// Take fields other field managers own (what controllers do).
    pub force: bool,
}

/// What happens to an object's dependents when it is deleted (`propagationPolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Propagation {
    Orphan,
    Background,
    Foreground,
}

/// Options of a delete; the default is the server's default policy and no preconditions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeleteOptions {
    pub propagation: Option<Propagation>,
    /// Delete only if the uid still matches.
    pub precondition_uid: Option<String>,
    /// Delete only if the resourceVersion still matches.
    pub precondition_resource_version: Option<String>,
}

/// A write, as the client imports take it: the object's kind and
/// namespace travel beside it. The host's runtime has the same shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteOp<'a> {
    /// POST of a new object.
    Create { json: &'a str },
    /// PUT of the whole object, or of its status subresource when `status`
    /// (then only status changes); a stale `metadata.resourceVersion` is a
    /// conflict.
    Replace {
        name: &'a str,
        json: &'a str,
        status: bool,
    },
    /// PATCH of the object, or of its status subresource when `status`.
    Patch {
        name: &'a str,
        body: &'a PatchBody,
        status: bool,
    },
    /// Request deletion; with finalizers the object stays until they are
    /// removed.
    Delete {
        name: &'a str,
        options: &'a DeleteOptions,
    },
}

impl WriteOp<'_> {
    /// The name of the object written; `None` for a create, whose body
    /// names it.
    pub fn name(&self) -> Option<&str> {
        match self {
            WriteOp::Create { .. } => None,
            WriteOp::Replace { name, .. }
            | WriteOp::Patch { name, .. }
            | WriteOp::Delete { name, .. } => Some(name),
        }
    }

    /// The verb a manifest must allow for this write.
    pub fn verb(&self) -> Verb {
        match self {
            WriteOp::Create { .. } => Verb::Create,
            WriteOp::Replace { status: true, .. } | WriteOp::Patch { status: true, .. } => {
                Verb::UpdateStatus
            }
            WriteOp::Replace { .. } => Verb::Replace,
            WriteOp::Patch { .. } => Verb::Patch,
            WriteOp::Delete { .. } => Verb::Delete,
        }
    }
}

/// The type of an Event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    Normal,
    Warning,
}

/// An `events.k8s.io/v1` Event about an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub regarding_kind: Gvk,
    pub regarding: ObjectKey,
    pub regarding_uid: String,
    pub event_type: EventType,
    /// Short, CamelCase: `Synced`, `ErrResourceExists`.
    pub reason: String,
    /// What was done or failed: `Create`, `Update`.
    pub action: String,
    /// Human-readable detail.
    pub note: String,
}

/// The level of a log line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

/// The host's imports, untyped. Object-safe: [`crate::Context`] holds a
/// `&dyn Backend`.
pub trait Backend {
    /// One cached object; `None` when it is not in the cache.
    fn get(&self, kind: &Gvk, namespace: Option<&str>, name: &str) -> Result<Option<RawObject>>;

    /// As [`Backend::get`], metadata only.
    fn get_meta(&self, kind: &Gvk, namespace: Option<&str>, name: &str) -> Result<Option<Meta>>;

    /// Cached objects of `kind` in one namespace or all, optionally filtered
    /// by a label selector.
    fn list(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<RawObject>>;

    /// As [`Backend::list`], metadata only.
    fn list_meta(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<Meta>>;

    /// Cached objects of `kind` whose declared index `index` holds `value`.
    fn by_index(&self, kind: &Gvk, index: &str, value: &str) -> Result<Vec<RawObject>>;

    /// One write of `kind` in `namespace` (`None` for cluster-scoped
    /// kinds): the object as stored, or `None` after a delete.
    fn write(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        write: WriteOp<'_>,
    ) -> Result<Option<RawObject>>;

    fn record_event(&self, event: &Event) -> Result<()>;

    /// Queue `key` now.
    fn enqueue(&self, key: &ObjectKey) -> Result<()>;

    /// Queue `key` after `delay`; an earlier pending time wins.
    fn enqueue_after(&self, key: &ObjectKey, delay: Duration) -> Result<()>;

    /// Queue `key` after the host's rate limiter's delay for it.
    fn enqueue_rate_limited(&self, key: &ObjectKey) -> Result<()>;

    /// End `key`'s backoff history.
    fn forget(&self, key: &ObjectKey);

    /// Rate-limited requeues of `key` since it was last forgotten.
    fn num_requeues(&self, key: &ObjectKey) -> u32;

    fn log(&self, level: Level, message: &str, fields: &[(String, String)]);
}
