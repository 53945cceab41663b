//! Test servers for the API access tests: an axum server on a loopback port
//! whose replies a test scripts, recording every request, and a kubeconfig
//! pointing at it with a bearer token.

use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::body::Body as AxumBody;
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use parking_lot::Mutex;

use super::client::ApiClient;
use super::config::{build_kube_client, config_from_kubeconfig_file};
use super::rate_limit::ClientRateLimiter;
use crate::clock::SystemClock;

/// The token the test kubeconfig carries.
pub const TOKEN: &str = "test-token-123";

/// One request the server saw.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// Path and query, as sent.
    pub uri: String,
    pub path: String,
    pub query: String,
    pub content_type: Option<String>,
    pub accept: Option<String>,
    pub authorization: Option<String>,
    pub body: Vec<u8>,
}

impl Recorded {
    /// The decoded value of query parameter `key`.
    pub fn param(&self, key: &str) -> Option<String> {
        self.query.split('&').find_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (k == key).then(|| percent_decode(v))
        })
    }

    pub fn body_json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("request body is JSON")
    }
}

fn percent_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 3;
        } else {
            out.push(if bytes[i] == b'+' { b' ' } else { bytes[i] });
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// A scripted reply.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// Sent as separate chunks, with `pause` between them.
    pub chunks: Vec<Vec<u8>>,
    pub pause: Duration,
}

impl Reply {
    pub fn json(status: u16, body: impl Into<String>) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            chunks: vec![body.into().into_bytes()],
            pause: Duration::ZERO,
        }
    }

    pub fn chunked(status: u16, chunks: Vec<String>) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            chunks: chunks.into_iter().map(String::into_bytes).collect(),
            pause: Duration::from_millis(5),
        }
    }

    pub fn status(code: u16, reason: &str, message: &str) -> Reply {
        Reply::json(
            code,
            serde_json::json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {},
                "status": "Failure", "message": message, "reason": reason, "code": code
            })
            .to_string(),
        )
    }

    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }
}

type Script = Arc<dyn Fn(&Recorded) -> Reply + Send + Sync>;

/// A loopback server answering with a script.
pub struct TestServer {
    pub port: u16,
    requests: Arc<Mutex<Vec<Recorded>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl TestServer {
    pub async fn start(script: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> TestServer {
        let script: Script = Arc::new(script);
        let requests = Arc::new(Mutex::new(Vec::new()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = (script, Arc::clone(&requests));
        let app = axum::Router::new()
            .fallback(
                |axum::extract::State((script, requests)): axum::extract::State<(
                    Script,
                    Arc<Mutex<Vec<Recorded>>>,
                )>,
                 request: Request<AxumBody>| async move {
                    let (parts, body) = request.into_parts();
                    let body = axum::body::to_bytes(body, 64 << 20)
                        .await
                        .unwrap_or_default();
                    let header = |name: http::header::HeaderName| {
                        parts
                            .headers
                            .get(name)
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_string)
                    };
                    let recorded = Recorded {
                        method: parts.method.to_string(),
                        uri: parts.uri.to_string(),
                        path: parts.uri.path().to_string(),
                        query: parts.uri.query().unwrap_or("").to_string(),
                        content_type: header(http::header::CONTENT_TYPE),
                        accept: header(http::header::ACCEPT),
                        authorization: header(http::header::AUTHORIZATION),
                        body: body.to_vec(),
                    };
                    requests.lock().push(recorded.clone());
                    let reply = script(&recorded);
                    let pause = reply.pause;
                    let chunks = reply.chunks.clone();
                    let stream = futures::stream::unfold(
                        (chunks.into_iter(), true),
                        move |(mut chunks, first)| async move {
                            let chunk = chunks.next()?;
                            if !first && !pause.is_zero() {
                                tokio::time::sleep(pause).await;
                            }
                            Some((Ok::<_, Infallible>(Bytes::from(chunk)), (chunks, false)))
                        },
                    );
                    let mut response =
                        Response::builder().status(StatusCode::from_u16(reply.status).unwrap());
                    for (name, value) in &reply.headers {
                        response = response.header(name, value);
                    }
                    response.body(AxumBody::from_stream(stream)).unwrap()
                },
            )
            .with_state(state);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        TestServer {
            port,
            requests,
            task,
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().clone()
    }

    /// A client through a kubeconfig pointing here.
    pub async fn client(&self) -> ApiClient {
        client_for(
            &self.url(),
            ClientRateLimiter::unlimited(SystemClock::shared()),
        )
        .await
    }
}

static NEXT_DIR: AtomicU64 = AtomicU64::new(0);

/// A fresh directory under the system temp dir.
pub fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "recon-kube-test-{}-{}",
        std::process::id(),
        NEXT_DIR.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A kubeconfig with contexts `test` (current, at `server`) and `other`.
pub fn kubeconfig_yaml(server: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
current-context: test
clusters:
- name: test
  cluster:
    server: {server}
- name: other
  cluster:
    server: http://127.0.0.1:1
users:
- name: test
  user:
    token: {TOKEN}
contexts:
- name: test
  context:
    cluster: test
    user: test
    namespace: team-a
- name: other
  context:
    cluster: other
    user: test
"
    )
}

/// Writes `contents` as a kubeconfig file and returns its path.
pub fn write_kubeconfig(contents: &str) -> PathBuf {
    let path = temp_dir().join("config");
    std::fs::write(&path, contents).unwrap();
    path
}

pub async fn client_for(server: &str, limiter: Arc<ClientRateLimiter>) -> ApiClient {
    let path = write_kubeconfig(&kubeconfig_yaml(server));
    let config = config_from_kubeconfig_file(&path, None).await.unwrap();
    ApiClient::new(build_kube_client(config).unwrap(), limiter)
}

/// A port with nothing listening on it.
pub async fn closed_port() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap().port()
}
