//! A minimal plain-HTTP client for the dev server's HTTP-level tests
//! (hyper's HTTP/1.1 connection API; one connection per request).

use std::time::Duration;

use axum::body::Body;
use futures::StreamExt;
use http::{HeaderMap, Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use recon_devserver::DevServerHandle;
use serde_json::Value;

pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
}

async fn send(
    h: &DevServerHandle,
    method: Method,
    path: &str,
    content_type: Option<&str>,
    body: Option<Value>,
    token: Option<&str>,
    accept: Option<&str>,
) -> http::Response<hyper::body::Incoming> {
    let body = body
        .map(|b| serde_json::to_vec(&b).unwrap())
        .unwrap_or_default();
    send_bytes(h, method, path, content_type, body, token, accept).await
}

/// As [`send`], the body as given.
async fn send_bytes(
    h: &DevServerHandle,
    method: Method,
    path: &str,
    content_type: Option<&str>,
    body: Vec<u8>,
    token: Option<&str>,
    accept: Option<&str>,
) -> http::Response<hyper::body::Incoming> {
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header("host", h.addr().to_string());
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    if let Some(ct) = content_type {
        req = req.header("content-type", ct);
    }
    if let Some(accept) = accept {
        req = req.header("accept", accept);
    }
    send_request(h, req.body(Body::from(body)).unwrap()).await
}

/// `req` over a new connection to the server.
async fn send_request(
    h: &DevServerHandle,
    req: Request<Body>,
) -> http::Response<hyper::body::Incoming> {
    let stream = tokio::net::TcpStream::connect(h.addr())
        .await
        .expect("connect");
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(conn);
    tokio::time::timeout(Duration::from_secs(20), sender.send_request(req))
        .await
        .expect("response within 20 s")
        .expect("response")
}

/// A GET with the server's token and `headers`: the status, the headers
/// and the body as it came.
pub async fn get_bytes(
    h: &DevServerHandle,
    path: &str,
    headers: &[(&str, &str)],
) -> (StatusCode, HeaderMap, Vec<u8>) {
    let mut req = Request::builder()
        .uri(path)
        .header("host", h.addr().to_string())
        .header("authorization", format!("Bearer {}", h.token()));
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let resp = send_request(h, req.body(Body::empty()).unwrap()).await;
    let (parts, body) = resp.into_parts();
    let bytes = axum::body::to_bytes(Body::new(body), 64 << 20)
        .await
        .expect("body");
    (parts.status, parts.headers, bytes.to_vec())
}

/// One request with the server's token; the body parsed as JSON (`Null` if empty
/// or not JSON).
pub async fn call(
    h: &DevServerHandle,
    method: Method,
    path: &str,
    content_type: Option<&str>,
    body: Option<Value>,
) -> Reply {
    call_as(h, method, path, content_type, body, Some(h.token())).await
}

pub async fn call_as(
    h: &DevServerHandle,
    method: Method,
    path: &str,
    content_type: Option<&str>,
    body: Option<Value>,
    token: Option<&str>,
) -> Reply {
    reply(send(h, method, path, content_type, body, token, None).await).await
}

/// A request whose body is `text` as it is (YAML, say).
pub async fn call_text(
    h: &DevServerHandle,
    method: Method,
    path: &str,
    content_type: &str,
    text: &str,
) -> Reply {
    let body = text.as_bytes().to_vec();
    let token = Some(h.token());
    reply(send_bytes(h, method, path, Some(content_type), body, token, None).await).await
}

/// A GET with an `Accept` header.
pub async fn get_accepting(h: &DevServerHandle, path: &str, accept: &str) -> Reply {
    call_accepting(h, Method::GET, path, None, None, accept).await
}

/// A request with an `Accept` header.
pub async fn call_accepting(
    h: &DevServerHandle,
    method: Method,
    path: &str,
    content_type: Option<&str>,
    body: Option<Value>,
    accept: &str,
) -> Reply {
    let token = Some(h.token());
    reply(send(h, method, path, content_type, body, token, Some(accept)).await).await
}

async fn reply(resp: http::Response<hyper::body::Incoming>) -> Reply {
    let status = resp.status();
    let headers = resp.headers().clone();
    let bytes = axum::body::to_bytes(Body::new(resp.into_body()), 64 << 20)
        .await
        .expect("body");
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Reply {
        status,
        headers,
        body,
    }
}

pub async fn get(h: &DevServerHandle, path: &str) -> Reply {
    call(h, Method::GET, path, None, None).await
}

pub async fn post(h: &DevServerHandle, path: &str, body: Value) -> Reply {
    call(h, Method::POST, path, Some("application/json"), Some(body)).await
}

pub async fn put(h: &DevServerHandle, path: &str, body: Value) -> Reply {
    call(h, Method::PUT, path, Some("application/json"), Some(body)).await
}

/// A PATCH of `body` as `content_type`.
pub async fn patch(h: &DevServerHandle, path: &str, content_type: &str, body: Value) -> Reply {
    call(h, Method::PATCH, path, Some(content_type), Some(body)).await
}

pub async fn merge_patch(h: &DevServerHandle, path: &str, body: Value) -> Reply {
    patch(h, path, "application/merge-patch+json", body).await
}

/// An open watch: newline-delimited JSON events.
pub struct WatchStream {
    pub status: StatusCode,
    stream: axum::body::BodyDataStream,
    buf: Vec<u8>,
}

impl WatchStream {
    pub async fn open(h: &DevServerHandle, path: &str) -> Self {
        Self::open_accepting(h, path, None).await
    }

    /// [`WatchStream::open`] with an `Accept` header.
    pub async fn open_accepting(h: &DevServerHandle, path: &str, accept: Option<&str>) -> Self {
        let resp = send(h, Method::GET, path, None, None, Some(h.token()), accept).await;
        let status = resp.status();
        Self {
            status,
            stream: Body::new(resp.into_body()).into_data_stream(),
            buf: Vec::new(),
        }
    }

    /// The next event, `None` when the stream ended; panics after `within`.
    pub async fn next(&mut self, within: Duration) -> Option<Value> {
        tokio::time::timeout(within, self.next_inner())
            .await
            .unwrap_or_else(|_| panic!("no watch event or end within {within:?}"))
    }

    /// The next event that is not a BOOKMARK.
    pub async fn next_non_bookmark(&mut self, within: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let ev = self.next(left.max(Duration::from_millis(1))).await?;
            if ev["type"] != "BOOKMARK" {
                return Some(ev);
            }
        }
    }

    async fn next_inner(&mut self) -> Option<Value> {
        loop {
            if let Some(pos) = self.buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=pos).collect();
                return Some(serde_json::from_slice(&line).expect("each line is JSON"));
            }
            match self.stream.next().await {
                Some(Ok(chunk)) => self.buf.extend_from_slice(&chunk),
                Some(Err(_)) | None => return None,
            }
        }
    }
}
