//! [`ApiClient`]: the one door to the API server. It wraps a `kube-client`
//! [`kube_client::Client`] (configuration, auth and transport) and makes
//! every request pass the [`ClientRateLimiter`] and report to its metrics
//! hook. A clone handed to a guest ([`ApiClient::for_guest`]) is limited by
//! that guest's bucket as well as the shared one.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use kube_client::client::Body;

use super::rate_limit::ClientRateLimiter;
use super::reachability::{READINESS, Reachability};
use super::status::{ApiError, Status, is_stale_connection, retry_after_header};

/// A raw response whose status was checked to be a success.
pub type RawResponse = Response<Body>;

/// A rate-limited handle on the API server. Clones share the transport and
/// the limiter.
#[derive(Clone)]
pub struct ApiClient {
    inner: kube_client::Client,
    limiter: Arc<ClientRateLimiter>,
    guest: Option<Arc<str>>,
    reachability: Arc<Reachability>,
}

impl fmt::Debug for ApiClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiClient")
            .field("guest", &self.guest)
            .finish_non_exhaustive()
    }
}

/// A request that failed before or with an HTTP response.
#[derive(Debug)]
pub enum SendError {
    /// No response: the transport failed (connection refused, TLS, auth
    /// plugin, …).
    Transport(kube_client::Error),
    /// The server answered with a non-success status.
    Status {
        /// The HTTP status.
        code: StatusCode,
        /// The parsed `Status` body (or the body text as its message).
        status: Status,
        /// The `Retry-After` header, in seconds.
        retry_after: Option<std::time::Duration>,
    },
}

impl SendError {
    /// The failure as an [`ApiError`].
    pub fn to_api_error(&self) -> ApiError {
        match self {
            SendError::Transport(error) => ApiError::from_transport(error),
            SendError::Status {
                status,
                retry_after,
                ..
            } => ApiError::from_status(status, *retry_after),
        }
    }
}

impl ApiClient {
    /// A client over `client`, limited by `limiter`.
    pub fn new(client: kube_client::Client, limiter: Arc<ClientRateLimiter>) -> Self {
        ApiClient {
            inner: client,
            limiter,
            guest: None,
            reachability: Reachability::new(),
        }
    }

    /// A handle whose requests are also limited by `guest`'s bucket.
    pub fn for_guest(&self, guest: &str) -> Self {
        ApiClient {
            inner: self.inner.clone(),
            limiter: Arc::clone(&self.limiter),
            guest: Some(Arc::from(guest)),
            reachability: Arc::clone(&self.reachability),
        }
    }

    /// The guest this handle acts for, if any.
    pub fn guest(&self) -> Option<&str> {
        self.guest.as_deref()
    }

    /// The underlying `kube-client` client (not rate limited: prefer
    /// [`ApiClient::send`]).
    pub fn kube_client(&self) -> &kube_client::Client {
        &self.inner
    }

    /// The limiter.
    pub fn limiter(&self) -> &Arc<ClientRateLimiter> {
        &self.limiter
    }

    /// Whether the server answers, as this client's requests (and its
    /// clones') found.
    pub fn reachability(&self) -> &Arc<Reachability> {
        &self.reachability
    }

    /// Sends one request after the rate limiter allows it, and reports its
    /// outcome to the metrics hook. Returns the response of any status. A
    /// GET that fails because its connection was closed under it (a pooled
    /// connection the server had dropped) is sent once more, at once, on a
    /// fresh one: that says nothing about the server, and a watch opened
    /// again this way needs no relist.
    pub async fn send_raw(&self, request: Request<Vec<u8>>) -> Result<RawResponse, SendError> {
        let method = request.method().as_str().to_string();
        // The server's own readiness answers for it as a whole.
        let readiness = request.uri().path() == READINESS;
        let again = (request.method() == http::Method::GET).then(|| {
            let mut again = Request::new(Body::empty());
            *again.method_mut() = request.method().clone();
            *again.uri_mut() = request.uri().clone();
            *again.version_mut() = request.version();
            *again.headers_mut() = request.headers().clone();
            again
        });
        self.limiter.acquire(self.guest(), &method).await;
        let (parts, body) = request.into_parts();
        let request = Request::from_parts(parts, Body::from(body));
        let sent = match (self.inner.send(request).await, again) {
            (Err(error), Some(again)) if is_stale_connection(&error) => {
                tracing::debug!("a connection was closed under a GET; sending it again: {error}");
                drop(error);
                self.limiter.metrics().request_done(&method, "<error>");
                self.limiter.acquire(self.guest(), &method).await;
                self.inner.send(again).await
            }
            (sent, _) => sent,
        };
        match sent {
            Ok(response) => {
                self.limiter
                    .metrics()
                    .request_done(&method, response.status().as_str());
                let status = response.status();
                if Reachability::is_outage(status) || readiness && !status.is_success() {
                    self.reachability.failed(&response.status());
                } else {
                    self.reachability.answered();
                }
                Ok(response)
            }
            Err(error) => {
                self.limiter.metrics().request_done(&method, "<error>");
                self.reachability.failed(&error);
                Err(SendError::Transport(error))
            }
        }
    }

    /// Sends one request; a non-success status becomes
    /// [`SendError::Status`] with its body parsed.
    pub async fn send(&self, request: Request<Vec<u8>>) -> Result<RawResponse, SendError> {
        let response = self.send_raw(request).await?;
        if response.status().is_success() {
            return Ok(response);
        }
        Err(status_error(response).await)
    }

    /// Sends one request and reads the whole body of a success.
    pub async fn send_for_bytes(&self, request: Request<Vec<u8>>) -> Result<Bytes, SendError> {
        let response = self.send(request).await?;
        response
            .into_body()
            .collect_bytes()
            .await
            .map_err(SendError::Transport)
    }
}

/// Reads a failed response into a [`SendError::Status`].
async fn status_error(response: RawResponse) -> SendError {
    let code = response.status();
    let retry_after = retry_after_header(response.headers());
    let body = response
        .into_body()
        .collect_bytes()
        .await
        .unwrap_or_default();
    SendError::Status {
        code,
        status: Status::from_body(code, &body),
        retry_after,
    }
}

/// Percent-encodes a query value (everything but RFC 3986 unreserved).
fn encode_query_value(value: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0xf)]));
        }
    }
    out
}

/// Builds `path?k=v&…` from the pairs, skipping none, encoding values.
pub fn with_query(path: &str, query: &[(&str, String)]) -> String {
    let mut url = path.to_string();
    for (i, (key, value)) in query.iter().enumerate() {
        url.push(if i == 0 { '?' } else { '&' });
        url.push_str(key);
        url.push('=');
        url.push_str(&encode_query_value(value));
    }
    url
}
