//! Failures of API requests and their classification: the `Status` body a
//! server sends with an error, [`ApiError`] for writes and discovery (the
//! guest boundary maps its [`ApiErrorKind`] to the WIT `error` variants), and
//! the [`LwError`] classes the reflector reacts to.

use std::error::Error as StdError;
use std::fmt;
use std::io;
use std::time::Duration;

use http::{HeaderMap, StatusCode};
use serde::Deserialize;

use crate::informer::{ErrorKind, LwError};

/// The parts of a `meta/v1` `Status` the client uses.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Status {
    /// `Success` or `Failure`.
    pub status: String,
    /// A human-readable description.
    pub message: String,
    /// A machine-readable reason, such as `NotFound` or `Expired`.
    pub reason: String,
    /// The HTTP status code the status stands for.
    pub code: u16,
    /// Extra details.
    pub details: Option<StatusDetails>,
}

/// `Status.details`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct StatusDetails {
    /// Seconds the client should wait before retrying.
    pub retry_after_seconds: Option<u64>,
    /// Individual causes.
    pub causes: Vec<StatusCause>,
}

/// One entry of `Status.details.causes`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct StatusCause {
    /// A machine-readable cause, such as `ResourceVersionTooLarge`.
    pub reason: String,
    /// A human-readable description.
    pub message: String,
    /// The field the cause applies to.
    pub field: String,
}

impl Status {
    /// Parses a status from an error body; a body that is not a `Status`
    /// becomes one whose message is the body text (truncated).
    pub fn from_body(code: StatusCode, body: &[u8]) -> Status {
        match serde_json::from_slice::<Status>(body) {
            Ok(mut status) if !status.message.is_empty() || !status.reason.is_empty() => {
                if status.code == 0 {
                    status.code = code.as_u16();
                }
                status
            }
            _ => {
                let text = String::from_utf8_lossy(body);
                let text = text.trim();
                let message = if text.is_empty() {
                    code.canonical_reason().unwrap_or("no message").to_string()
                } else {
                    truncate(text, 1024)
                };
                Status {
                    status: "Failure".to_string(),
                    message,
                    reason: String::new(),
                    code: code.as_u16(),
                    details: None,
                }
            }
        }
    }

    fn retry_after(&self) -> Option<Duration> {
        self.details
            .as_ref()
            .and_then(|d| d.retry_after_seconds)
            .map(Duration::from_secs)
    }

    fn has_cause(&self, reason: &str) -> bool {
        self.details
            .as_ref()
            .is_some_and(|d| d.causes.iter().any(|c| c.reason == reason))
    }
}

fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    format!("{}…", &text[..text.floor_char_boundary(max)])
}

/// Classifies a failure status for the reflector:
///
/// | status                                                     | class                     |
/// |------------------------------------------------------------|---------------------------|
/// | code 410, or reason `Expired` / `Gone`                     | `Expired`                 |
/// | (504 or reason `Timeout`) with cause `ResourceVersionTooLarge` or message "Too large resource version" | `TooLargeResourceVersion` |
/// | code 429 or reason `TooManyRequests`                       | `TooManyRequests`         |
/// | anything else                                              | `Other`                   |
///
/// A 429's `retry_after` is the `Retry-After` header when given, else
/// `details.retryAfterSeconds`.
pub fn classify_status(status: &Status, retry_after_header: Option<Duration>) -> LwError {
    let kind = if status.code == 410 || status.reason == "Expired" || status.reason == "Gone" {
        ErrorKind::Expired
    } else if (status.code == 504 || status.reason == "Timeout")
        && (status.has_cause("ResourceVersionTooLarge")
            || status.message.contains("Too large resource version"))
    {
        ErrorKind::TooLargeResourceVersion
    } else if status.code == 429 || status.reason == "TooManyRequests" {
        ErrorKind::TooManyRequests
    } else {
        ErrorKind::Other
    };
    let message = if status.reason.is_empty() {
        format!("{} ({})", status.message, status.code)
    } else {
        format!("{} ({} {})", status.message, status.code, status.reason)
    };
    let mut error = LwError::new(kind, message);
    if kind == ErrorKind::TooManyRequests {
        error.retry_after = retry_after_header.or_else(|| status.retry_after());
    }
    error
}

/// The `Retry-After` header in seconds (the HTTP-date form is ignored).
pub fn retry_after_header(headers: &HeaderMap) -> Option<Duration> {
    headers
        .get(http::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
}

/// The kinds of the I/O errors in an error's source chain, outermost first.
fn io_error_kinds<'a>(
    error: &'a (dyn StdError + 'static),
) -> impl Iterator<Item = io::ErrorKind> + 'a {
    std::iter::successors(Some(error), |&e| e.source())
        .filter_map(|e| e.downcast_ref::<io::Error>().map(io::Error::kind))
}

/// Whether an error says the connection was closed under the request
/// (reset, broken, or closed before a response): what a pooled
/// connection the server had already dropped does to the next request.
pub fn is_stale_connection(error: &(dyn StdError + 'static)) -> bool {
    let incomplete = std::iter::successors(Some(error), |&e| e.source()).any(|e| {
        e.downcast_ref::<hyper::Error>()
            .is_some_and(hyper::Error::is_incomplete_message)
    });
    incomplete
        || io_error_kinds(error).any(|kind| {
            matches!(
                kind,
                io::ErrorKind::ConnectionReset
                    | io::ErrorKind::ConnectionAborted
                    | io::ErrorKind::BrokenPipe
                    | io::ErrorKind::UnexpectedEof
            )
        })
}

/// Whether an error's source chain holds an I/O "connection refused".
pub fn is_connection_refused(error: &(dyn StdError + 'static)) -> bool {
    io_error_kinds(error).any(|kind| kind == io::ErrorKind::ConnectionRefused)
}

/// An error's message with its source chain, `a: b: c`.
pub fn error_chain(error: &(dyn StdError + 'static)) -> String {
    let mut message = error.to_string();
    let mut current = error.source();
    while let Some(source) = current {
        let text = source.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        current = source.source();
    }
    message
}

/// Classifies a transport failure (no HTTP response) for the reflector.
pub fn classify_transport(error: &(dyn StdError + 'static)) -> LwError {
    if is_connection_refused(error) {
        LwError::connection_refused(error_chain(error))
    } else {
        LwError::unreachable(error_chain(error))
    }
}

/// The class of a failed write or discovery request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiErrorKind {
    /// 404.
    NotFound,
    /// 409: a conflict (stale resourceVersion) or `AlreadyExists`.
    Conflict,
    /// 401 or 403.
    Forbidden,
    /// 400 or 422: the request or the object is invalid.
    Invalid,
    /// 429, 500, 502, 503, 504, a timeout or no connection: worth retrying.
    Unavailable,
    /// Anything else (including a response that could not be read).
    Other,
}

impl fmt::Display for ApiErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ApiErrorKind::NotFound => "not found",
            ApiErrorKind::Conflict => "conflict",
            ApiErrorKind::Forbidden => "forbidden",
            ApiErrorKind::Invalid => "invalid",
            ApiErrorKind::Unavailable => "unavailable",
            ApiErrorKind::Other => "error",
        })
    }
}

/// A classified failure of an API request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct ApiError {
    /// The class.
    pub kind: ApiErrorKind,
    /// The HTTP status code; 0 when no response came back.
    pub code: u16,
    /// The status reason (`NotFound`, `Conflict`, `AlreadyExists`, …);
    /// empty when the server gave none.
    pub reason: String,
    /// What the server or the transport said.
    pub message: String,
    /// The server's requested wait (429 `Retry-After`).
    pub retry_after: Option<Duration>,
}

impl ApiError {
    /// An error of `kind` without an HTTP response.
    pub fn new(kind: ApiErrorKind, message: impl Into<String>) -> Self {
        ApiError {
            kind,
            code: 0,
            reason: String::new(),
            message: message.into(),
            retry_after: None,
        }
    }

    /// Classifies a failure status:
    ///
    /// | code / reason                                  | kind          |
    /// |------------------------------------------------|---------------|
    /// | 404 / `NotFound`                               | `NotFound`    |
    /// | 409 / `Conflict`, `AlreadyExists`              | `Conflict`    |
    /// | 401, 403 / `Unauthorized`, `Forbidden`         | `Forbidden`   |
    /// | 400, 422 / `BadRequest`, `Invalid`             | `Invalid`     |
    /// | 429, 500, 502, 503, 504 / `TooManyRequests`, `ServiceUnavailable`, `Timeout`, `ServerTimeout`, `InternalError` | `Unavailable` |
    /// | anything else                                  | `Other`       |
    pub fn from_status(status: &Status, retry_after_header: Option<Duration>) -> Self {
        let kind = match (status.code, status.reason.as_str()) {
            (404, _) | (_, "NotFound") => ApiErrorKind::NotFound,
            (409, _) | (_, "Conflict" | "AlreadyExists") => ApiErrorKind::Conflict,
            (401 | 403, _) | (_, "Unauthorized" | "Forbidden") => ApiErrorKind::Forbidden,
            (400 | 422, _) | (_, "BadRequest" | "Invalid") => ApiErrorKind::Invalid,
            (429 | 500 | 502 | 503 | 504, _)
            | (
                _,
                "TooManyRequests" | "ServiceUnavailable" | "Timeout" | "ServerTimeout"
                | "InternalError",
            ) => ApiErrorKind::Unavailable,
            _ => ApiErrorKind::Other,
        };
        let retry_after = retry_after_header.or_else(|| status.retry_after());
        ApiError {
            kind,
            code: status.code,
            reason: status.reason.clone(),
            message: status.message.clone(),
            retry_after,
        }
    }

    /// Classifies a transport failure: no connection or a timeout is
    /// `Unavailable`, anything else `Other`.
    pub fn from_transport(error: &(dyn StdError + 'static)) -> Self {
        let message = error_chain(error);
        let unavailable = io_error_kinds(error).any(|kind| {
            matches!(
                kind,
                io::ErrorKind::ConnectionRefused
                    | io::ErrorKind::TimedOut
                    | io::ErrorKind::ConnectionReset
                    | io::ErrorKind::ConnectionAborted
                    | io::ErrorKind::NotConnected
                    | io::ErrorKind::BrokenPipe
                    | io::ErrorKind::UnexpectedEof
            )
        });
        ApiError::new(
            if unavailable {
                ApiErrorKind::Unavailable
            } else {
                ApiErrorKind::Other
            },
            message,
        )
    }

    /// Whether this is a 404.
    pub fn is_not_found(&self) -> bool {
        self.kind == ApiErrorKind::NotFound
    }

    /// Whether this is a 409.
    pub fn is_conflict(&self) -> bool {
        self.kind == ApiErrorKind::Conflict
    }
}
