//! What a guest's imports reach: the host's caches of the kinds its manifest
//! watches, its own workqueue, and the API server through the host's client.
//! The runtime calls these through [`GuestServices`]; the controller wiring
//! implements it, tests implement it in memory, and [`NoServices`] serves a
//! guest before it is wired (while its manifest is read).

use std::time::Duration;

use async_trait::async_trait;

use recon_api_semantics::Gvk;
use recon_api_semantics::writes::{DeleteOptions, EventType, Patch};

use crate::label_selector::LabelSelector;
use crate::object::Object;

/// Why a call a guest made failed; the host side of the WIT `error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GuestError {
    /// The object does not exist.
    #[error("not found")]
    NotFound,
    /// A write lost a race (HTTP 409).
    #[error("conflict: {0}")]
    Conflict(String),
    /// A create found the object already there (HTTP 409, `AlreadyExists`).
    #[error("already exists: {0}")]
    AlreadyExists(String),
    /// Not allowed by the manifest, or refused by the server (401/403).
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// The request or the object is malformed (HTTP 400/422).
    #[error("invalid: {0}")]
    Invalid(String),
    /// Temporarily unable to serve (429, 5xx, unreachable, a full queue).
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// An answer or a request over a size limit of the host.
    #[error("too large: {0}")]
    TooLarge(String),
    /// Anything else.
    #[error("{0}")]
    Other(String),
}

/// Where an object lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Its kind.
    pub kind: Gvk,
    /// Its namespace; `None` for cluster-scoped kinds.
    pub namespace: Option<String>,
}

/// A write a guest asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// POST of a new object.
    Create {
        /// Kind and namespace.
        target: Target,
        /// The object.
        json: String,
    },
    /// PUT of a whole object, or of its status subresource when `status`.
    Replace {
        /// Kind and namespace.
        target: Target,
        /// The object's name.
        name: String,
        /// The object.
        json: String,
        /// Replace the `status` subresource only.
        status: bool,
    },
    /// PATCH of an object, or of its status subresource when `status`.
    Patch {
        /// Kind and namespace.
        target: Target,
        /// The object's name.
        name: String,
        /// The patch; an apply's field manager is the guest's name.
        patch: Patch,
        /// Patch the `status` subresource only.
        status: bool,
    },
    /// DELETE.
    Delete {
        /// Kind and namespace.
        target: Target,
        /// The object's name.
        name: String,
        /// Propagation and preconditions.
        options: DeleteOptions,
    },
}

impl Write {
    /// The size of the request body, in bytes.
    pub fn body_len(&self) -> usize {
        match self {
            Write::Create { json, .. } | Write::Replace { json, .. } => json.len(),
            Write::Patch { patch, .. } => patch.body().len(),
            Write::Delete { .. } => 0,
        }
    }

    /// Kind and namespace written.
    pub fn target(&self) -> &Target {
        match self {
            Write::Create { target, .. }
            | Write::Replace { target, .. }
            | Write::Patch { target, .. }
            | Write::Delete { target, .. } => target,
        }
    }
}

/// An event a guest records about an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestEvent {
    /// The kind of the object the event is about.
    pub regarding_kind: Gvk,
    /// Its namespace; `None` for cluster-scoped objects.
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
    /// Its uid.
    pub uid: String,
    /// Normal or Warning.
    pub event_type: EventType,
    /// Short, CamelCase.
    pub reason: String,
    /// What was done or failed.
    pub action: String,
    /// Human-readable detail.
    pub note: String,
}

impl GuestEvent {
    /// The bytes of text the guest chose (the rest is fixed size).
    pub fn text_len(&self) -> usize {
        self.name.len() + self.uid.len() + self.reason.len() + self.action.len() + self.note.len()
    }
}

/// How a guest adds a key to its own queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueOp {
    /// Add now.
    Add,
    /// Add after a delay.
    AddAfter(Duration),
    /// Add after the rate limiter's delay.
    AddRateLimited,
}

/// The host services one guest's imports reach.
#[async_trait]
pub trait GuestServices: Send + Sync + 'static {
    /// One cached object.
    fn get(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Object>, GuestError>;

    /// Cached objects of `kind` in `namespace` (all when `None`) matching
    /// `selector`, in no particular order.
    fn list(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        selector: &LabelSelector,
    ) -> Result<Vec<Object>, GuestError>;

    /// Cached objects of `kind` whose declared index `index` holds
    /// `value`, in no particular order.
    fn by_index(&self, kind: &Gvk, index: &str, value: &str) -> Result<Vec<Object>, GuestError>;

    /// Adds `key` (`namespace/name` or `name`, already checked to be a
    /// Kubernetes key) to the guest's queue; an add into a full queue is
    /// `unavailable`.
    fn queue(&self, key: &str, op: QueueOp) -> Result<(), GuestError>;

    /// Forgets `key`'s backoff history.
    fn forget(&self, key: &str);

    /// Rate-limited requeues of `key` since it was last forgotten.
    fn num_requeues(&self, key: &str) -> u32;

    /// Sends a write; returns the object the server stored (`None` once a
    /// delete has removed it).
    async fn write(&self, write: Write) -> Result<Option<Object>, GuestError>;

    /// Records an event.
    async fn record_event(&self, event: GuestEvent) -> Result<(), GuestError>;
}

/// Services of a guest that is not wired to anything yet: reads, writes
/// and queue adds fail with `unavailable`.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoServices;

fn not_wired() -> GuestError {
    GuestError::Unavailable("the host is not serving this guest yet (reading its manifest)".into())
}

#[async_trait]
impl GuestServices for NoServices {
    fn get(&self, _: &Gvk, _: Option<&str>, _: &str) -> Result<Option<Object>, GuestError> {
        Err(not_wired())
    }
    fn list(&self, _: &Gvk, _: Option<&str>, _: &LabelSelector) -> Result<Vec<Object>, GuestError> {
        Err(not_wired())
    }
    fn by_index(&self, _: &Gvk, _: &str, _: &str) -> Result<Vec<Object>, GuestError> {
        Err(not_wired())
    }
    fn queue(&self, _: &str, _: QueueOp) -> Result<(), GuestError> {
        Err(not_wired())
    }
    fn forget(&self, _: &str) {}
    fn num_requeues(&self, _: &str) -> u32 {
        0
    }
    async fn write(&self, _: Write) -> Result<Option<Object>, GuestError> {
        Err(not_wired())
    }
    async fn record_event(&self, _: GuestEvent) -> Result<(), GuestError> {
        Err(not_wired())
    }
}
