//! The contract between a reflector and an API server for one kind: a paged
//! list and a watch, with errors classified the way the reflector needs them
//! (REF-01). No transport lives here: the Kubernetes API client implements
//! [`ListerWatcher`] over HTTP, `fake_source::FakeSource` in memory (feature `testing`).

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use futures::stream::BoxStream;

use crate::object::Object;

/// Options of one list request (one page).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListOptions {
    /// `""` (most recent, from etcd), `"0"` (any, watch cache) or a version.
    pub resource_version: String,
    /// `resourceVersionMatch`; the reflector never sets it, the pager clears
    /// it on continuation pages.
    pub resource_version_match: Option<String>,
    /// Page size; 0 means no limit.
    pub limit: u64,
    /// Continue token from the previous page; empty for the first page.
    pub continue_token: String,
    /// Label selector, e.g. `app=web,tier!=db`.
    pub label_selector: Option<String>,
    /// Field selector, e.g. `metadata.name=foo`.
    pub field_selector: Option<String>,
}

/// One page of a list response.
#[derive(Debug, Clone, Default)]
pub struct ListPage {
    /// The list's resourceVersion (of the snapshot the page was read from).
    pub resource_version: String,
    /// Non-empty when more pages follow.
    pub continue_token: String,
    /// The objects of this page, already in cached form.
    pub items: Vec<Object>,
}

/// Options of one watch request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchOptions {
    /// Events after this version are delivered.
    pub resource_version: String,
    /// Server-side timeout (`timeoutSeconds`).
    pub timeout: Option<Duration>,
    /// `allowWatchBookmarks`.
    pub allow_bookmarks: bool,
    /// Label selector, as for lists.
    pub label_selector: Option<String>,
    /// Field selector, as for lists.
    pub field_selector: Option<String>,
}

/// One event of a watch stream.
#[derive(Debug, Clone)]
pub enum WatchEvent {
    /// `ADDED`.
    Added(Object),
    /// `MODIFIED`.
    Modified(Object),
    /// `DELETED`, carrying the last state of the object.
    Deleted(Object),
    /// `BOOKMARK`: nothing changed, but the stream has reached this version.
    Bookmark {
        /// The version the stream has reached.
        resource_version: String,
    },
    /// `ERROR`: the server ended the watch with a status (e.g. 410 Expired).
    Error(LwError),
}

/// A watch stream; it ends when the server closes the watch.
pub type WatchStream = BoxStream<'static, WatchEvent>;

/// Lists and watches one kind (optionally one namespace and selector).
#[async_trait]
pub trait ListerWatcher: Send + Sync + 'static {
    /// Lists one page.
    async fn list(&self, options: &ListOptions) -> Result<ListPage, LwError>;

    /// Opens a watch.
    async fn watch(&self, options: &WatchOptions) -> Result<WatchStream, LwError>;
}

/// How a list or watch failure must be handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// HTTP 410 / reason `Expired` or `Gone`: the requested version is no
    /// longer available (REF-11, REF-30).
    Expired,
    /// The requested version is newer than the server has (REF-11).
    TooLargeResourceVersion,
    /// HTTP 429 (REF-28, REF-30).
    TooManyRequests,
    /// The connection was refused (REF-28).
    ConnectionRefused,
    /// No answer came for another reason (a timeout, a reset connection, a
    /// TLS failure); handled as `Other`.
    Unreachable,
    /// Anything else.
    Other,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ErrorKind::Expired => "expired",
            ErrorKind::TooLargeResourceVersion => "too large resource version",
            ErrorKind::TooManyRequests => "too many requests",
            ErrorKind::ConnectionRefused => "connection refused",
            ErrorKind::Unreachable => "unreachable",
            ErrorKind::Other => "error",
        })
    }
}

/// A classified list or watch failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct LwError {
    /// The class that decides the reflector's reaction.
    pub kind: ErrorKind,
    /// What the server or transport said.
    pub message: String,
    /// `Retry-After`, when the server sent one with a 429.
    pub retry_after: Option<Duration>,
}

impl LwError {
    /// An error of `kind` with a message.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        LwError {
            kind,
            message: message.into(),
            retry_after: None,
        }
    }

    /// HTTP 410: the resource version is too old.
    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Expired, message)
    }

    /// HTTP 429.
    pub fn too_many_requests(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::TooManyRequests, message)
    }

    /// The server could not be reached.
    pub fn connection_refused(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::ConnectionRefused, message)
    }

    /// No answer came for another reason than a refused connection.
    pub fn unreachable(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unreachable, message)
    }

    /// Any other failure.
    pub fn other(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Other, message)
    }

    /// True when the server gave no answer at all (the connection was
    /// refused or failed): a fault of the host's connection, not of what
    /// was asked.
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::ConnectionRefused | ErrorKind::Unreachable
        )
    }

    /// Expired or too-large resource version: the last synced version cannot
    /// be used for the next list (REF-11).
    pub fn is_resource_version_unavailable(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::Expired | ErrorKind::TooLargeResourceVersion
        )
    }
}
