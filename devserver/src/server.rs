//! The HTTP layer of the dev server: listener (HTTPS or plain HTTP), bearer
//! auth, fault injection, discovery/OpenAPI, the resource routes over the
//! [`Store`] and watch streaming.
//!
//! The routes, in `router`: `/healthz`, `/livez` and `/readyz` (and paths
//! below them) need no token; every other path needs the bearer token. Under
//! `/recon-admin/` is the admin API. Every other request passes the API gate
//! (request log, injected latency and failures; empty path segments are
//! dropped) to the Kubernetes API: `/version`; discovery at `/api`,
//! `/api/{version}`, `/apis`, `/apis/{group}` and `/apis/{group}/{version}`;
//! `/openapi/v2`, `/openapi/v3` and `/openapi/v3/{group_version}`; and under
//! each group version the resources,
//! `[watch/][namespaces/{namespace}/]{plural}[/{name}[/{subresource}]]`. An
//! object's verbs are told apart by method in one handler.
//!
//! Every error is a `metav1.Status` JSON body with the matching HTTP code.

// Request parsing helpers return the error response itself; boxing it would
// only add noise on a path that is not hot.
#![allow(clippy::result_large_err)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{FromRequestParts, MatchedPath, Query, Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{MethodRouter, any, any_service};
use bytes::Bytes;
use http::request::Parts;
use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use parking_lot::Mutex;
use recon_api_semantics::writes::PatchType;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use super::faults::Faults;
use super::store::typed;
use super::store::{
    ApiError, Cause, DeleteOptions, ListBody, ListParams, Patch, PatchKind, PropagationPolicy,
    ResourceType, Store, StoreConfig, Subresource, WatchEventKind, WatchParams, bookmark_object,
    deletion_pending,
};
use super::{discovery, kubeconfig, openapi, table, tls};

/// Largest request body accepted (bytes).
const MAX_BODY: usize = 16 * 1024 * 1024;

/// How the dev server is started.
#[derive(Debug, Clone)]
pub struct DevServerConfig {
    /// Address to bind; port 0 picks a free port. Default `127.0.0.1:0`.
    pub listen: SocketAddr,
    /// Serve HTTPS with a freshly generated CA (default). `false` serves plain
    /// HTTP, for debugging only.
    pub tls: bool,
    /// Bearer token clients must send; `None` generates 32 random hex chars.
    pub token: Option<String>,
    /// Period of BOOKMARK events on watches that allow them. Default 60 s.
    pub bookmark_interval: Duration,
    /// Events of history the store keeps for watches from an old
    /// resourceVersion (older ones get 410 Expired).
    pub history_limit: usize,
    /// List snapshots the store keeps for `continue` tokens.
    pub snapshot_limit: usize,
    /// Also write the kubeconfig to this file once listening.
    pub kubeconfig_out: Option<PathBuf>,
}

impl Default for DevServerConfig {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            tls: true,
            token: None,
            bookmark_interval: Duration::from_secs(60),
            history_limit: 10_000,
            snapshot_limit: 64,
            kubeconfig_out: None,
        }
    }
}

/// Why the dev server could not start.
#[derive(Debug, thiserror::Error)]
pub enum DevServerError {
    #[error("binding {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("writing the kubeconfig to {path}: {source}")]
    Kubeconfig {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    #[error("generating the token: no secure randomness available")]
    Random,
}

/// Entry point: `DevServer::start(config).await`.
pub struct DevServer;

impl DevServer {
    /// Bind, generate the CA (unless plain HTTP), write the kubeconfig if
    /// asked, and serve in the background on the current tokio runtime until
    /// [`DevServerHandle::shutdown`] or the handle is dropped.
    pub async fn start(config: DevServerConfig) -> Result<DevServerHandle, DevServerError> {
        let listener =
            TcpListener::bind(config.listen)
                .await
                .map_err(|source| DevServerError::Bind {
                    addr: config.listen,
                    source,
                })?;
        let addr = listener
            .local_addr()
            .map_err(|source| DevServerError::Bind {
                addr: config.listen,
                source,
            })?;
        let token = match config.token.clone() {
            Some(t) => t,
            None => random_token()?,
        };
        let (acceptor, ca_pem) = if config.tls {
            let pki = tls::generate()?;
            (Some(TlsAcceptor::from(pki.server_config)), Some(pki.ca_pem))
        } else {
            (None, None)
        };
        let scheme = if config.tls { "https" } else { "http" };
        let url = format!("{scheme}://{addr}");
        let kubeconfig = kubeconfig::render(&url, ca_pem.as_deref(), &token);
        if let Some(path) = &config.kubeconfig_out {
            write_kubeconfig(path, &kubeconfig)?;
        }
        let store = Store::new(StoreConfig {
            history_limit: config.history_limit,
            snapshot_limit: config.snapshot_limit,
        });
        let shutdown = CancellationToken::new();
        let (watch_drops, _) = tokio::sync::watch::channel(0u64);
        let shared = Arc::new(Shared {
            store,
            faults: Faults::default(),
            token,
            bookmark_interval: config.bookmark_interval,
            server_address: addr.to_string(),
            watch_drops,
            outage: tokio::sync::watch::Sender::new(None),
            serving: tokio::sync::watch::Sender::new(true),
            shutdown: shutdown.clone(),
        });
        let router = router(shared.clone());
        let task = tokio::spawn(accept_loop(
            listener,
            addr,
            acceptor,
            router,
            shared.clone(),
        ));
        tracing::info!(%url, "dev-server listening");
        Ok(DevServerHandle {
            shared,
            url,
            addr,
            kubeconfig,
            ca_pem,
            task: Mutex::new(Some(task)),
        })
    }
}

fn write_kubeconfig(path: &Path, text: &str) -> Result<(), DevServerError> {
    let err = |source| DevServerError::Kubeconfig {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(err)?;
    }
    std::fs::write(path, text).map_err(err)
}

fn random_token() -> Result<String, DevServerError> {
    let mut buf = [0u8; 16];
    rustls::crypto::ring::default_provider()
        .secure_random
        .fill(&mut buf)
        .map_err(|_| DevServerError::Random)?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// A running dev server. Dropping it stops the server (like [`shutdown`](Self::shutdown)
/// without waiting).
pub struct DevServerHandle {
    shared: Arc<Shared>,
    url: String,
    addr: SocketAddr,
    kubeconfig: String,
    ca_pem: Option<String>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl DevServerHandle {
    /// Base URL, e.g. `https://127.0.0.1:40123`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The kubeconfig text (JSON, readable as YAML) for this server.
    pub fn kubeconfig(&self) -> &str {
        &self.kubeconfig
    }

    /// Write the kubeconfig to `path` (creating parent directories).
    pub fn write_kubeconfig(&self, path: &Path) -> Result<(), DevServerError> {
        write_kubeconfig(path, &self.kubeconfig)
    }

    /// The CA certificate (PEM) clients must trust; `None` for plain HTTP.
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// The bearer token.
    pub fn token(&self) -> &str {
        &self.shared.token
    }

    /// The storage engine behind the server (for direct reads and writes in tests).
    pub fn store(&self) -> Arc<Store> {
        self.shared.store.clone()
    }

    /// End every open watch now (clients see the stream close).
    pub fn drop_watches(&self) {
        self.shared.drop_watches();
    }

    /// Compact the store's history: watches from an older resourceVersion get 410.
    pub fn compact(&self) {
        self.shared.store.compact();
    }

    /// Fail the next `n` API requests with `code` (429 with `Retry-After: 1`, 503, or 500).
    pub fn fail_next(&self, n: u64, code: u16) {
        self.shared.faults.fail_next(n, code);
    }

    /// Delay every API request by `latency` (zero to stop).
    pub fn set_latency(&self, latency: Duration) {
        self.shared.faults.set_latency(latency);
    }

    /// Every API request so far (`METHOD /path?query`), admin requests excluded.
    pub fn request_log(&self) -> Vec<String> {
        self.shared.faults.request_log()
    }

    /// Forget the recorded requests.
    pub fn clear_request_log(&self) {
        self.shared.faults.clear_request_log();
    }

    /// Begins an outage of `duration`, as of a server that died: the
    /// listening socket closes (new connections are refused) and every open
    /// connection and watch is dropped without a goodbye. Afterwards the
    /// server listens again on the same address, with the same store and
    /// resourceVersions. Returns once the server is down.
    pub async fn outage(&self, duration: Duration) {
        self.shared.begin_outage(duration);
        let mut serving = self.shared.serving.subscribe();
        let _ = serving.wait_for(|serving| !serving).await;
    }

    /// Ends the outage now; returns once the server listens again.
    pub async fn end_outage(&self) {
        self.shared.outage.send_replace(None);
        self.serving().await;
    }

    /// Returns once the server listens (at once unless an outage is on).
    pub async fn serving(&self) {
        let mut serving = self.shared.serving.subscribe();
        let _ = serving.wait_for(|serving| *serving).await;
    }

    /// Stop accepting, end watches and close connections; waits (at most a
    /// few seconds) for the server task to finish.
    pub async fn shutdown(&self) {
        self.shared.shutdown.cancel();
        let task = self.task.lock().take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

impl Drop for DevServerHandle {
    fn drop(&mut self) {
        self.shared.shutdown.cancel();
    }
}

struct Shared {
    store: Arc<Store>,
    faults: Faults,
    token: String,
    bookmark_interval: Duration,
    server_address: String,
    watch_drops: tokio::sync::watch::Sender<u64>,
    /// When the current outage ends; `None` while none is asked for.
    outage: tokio::sync::watch::Sender<Option<tokio::time::Instant>>,
    /// Whether the server listens (false during an outage).
    serving: tokio::sync::watch::Sender<bool>,
    shutdown: CancellationToken,
}

impl Shared {
    fn drop_watches(&self) {
        self.store.drop_watches();
        self.watch_drops.send_modify(|n| *n += 1);
    }

    fn begin_outage(&self, duration: Duration) {
        self.outage
            .send_replace(Some(tokio::time::Instant::now() + duration));
    }
}

/// How often binding the address again is tried after an outage before
/// the server gives up (another process took the port).
const REBIND_ATTEMPTS: u32 = 100;

/// Accepts connections until shutdown; during an outage, closes the
/// listener, drops every connection, and binds `addr` again after it.
async fn accept_loop(
    listener: TcpListener,
    addr: SocketAddr,
    acceptor: Option<TlsAcceptor>,
    router: Router,
    shared: Arc<Shared>,
) {
    let shutdown = shared.shutdown.clone();
    let mut outage = shared.outage.subscribe();
    let mut listener = Some(listener);
    let mut conns = tokio::task::JoinSet::new();
    loop {
        let Some(open) = &listener else {
            let Some(until) = *outage.borrow_and_update() else {
                match rebind(addr, &shutdown).await {
                    Some(rebound) => {
                        tracing::info!(%addr, "dev-server outage over: listening again");
                        listener = Some(rebound);
                        shared.serving.send_replace(true);
                        continue;
                    }
                    None => break,
                }
            };
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = tokio::time::sleep_until(until) => {
                    shared.outage.send_if_modified(|end| {
                        let over = *end == Some(until);
                        if over {
                            *end = None;
                        }
                        over
                    });
                }
                _ = outage.changed() => {}
            }
            continue;
        };
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = outage.changed() => {
                if outage.borrow_and_update().is_some() {
                    listener = None;
                    conns.abort_all();
                    while conns.join_next().await.is_some() {}
                    tracing::info!(%addr, "dev-server outage: refusing connections, open ones dropped");
                    shared.serving.send_replace(false);
                }
            }
            accepted = open.accept() => match accepted {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    conns.spawn(serve_connection(stream, acceptor.clone(), router.clone(), shutdown.clone()));
                }
                Err(e) => {
                    tracing::warn!(error = %e, "dev-server accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
    drop(listener);
    let drain = async { while conns.join_next().await.is_some() {} };
    if tokio::time::timeout(Duration::from_secs(3), drain)
        .await
        .is_err()
    {
        conns.abort_all();
    }
}

/// Binds `addr` again after an outage, retrying while the port is not free
/// yet; `None` on shutdown or when it never frees.
async fn rebind(addr: SocketAddr, shutdown: &CancellationToken) -> Option<TcpListener> {
    for _ in 0..REBIND_ATTEMPTS {
        match TcpListener::bind(addr).await {
            Ok(listener) => return Some(listener),
            Err(e) => {
                tracing::warn!(%addr, error = %e, "dev-server cannot listen again yet");
                tokio::select! {
                    _ = shutdown.cancelled() => return None,
                    _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                }
            }
        }
    }
    tracing::error!(%addr, "dev-server could not listen again after the outage");
    None
}

macro_rules! drive {
    ($conn:expr, $shutdown:expr) => {{
        let conn = $conn;
        tokio::pin!(conn);
        tokio::select! {
            _ = conn.as_mut() => {}
            _ = $shutdown.cancelled() => {
                conn.as_mut().graceful_shutdown();
                let _ = tokio::time::timeout(Duration::from_secs(2), conn).await;
            }
        }
    }};
}

async fn serve_connection(
    stream: TcpStream,
    acceptor: Option<TlsAcceptor>,
    router: Router,
    shutdown: CancellationToken,
) {
    let service = TowerToHyperService::new(router);
    let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    match acceptor {
        Some(acceptor) => {
            let tls = tokio::select! {
                r = tokio::time::timeout(Duration::from_secs(10), acceptor.accept(stream)) => r,
                _ = shutdown.cancelled() => return,
            };
            let Ok(Ok(tls)) = tls else { return };
            drive!(
                builder.serve_connection(TokioIo::new(tls), service),
                shutdown
            );
        }
        None => drive!(
            builder.serve_connection(TokioIo::new(stream), service),
            shutdown
        ),
    }
}

// ---------------------------------------------------------------------------
// Responses

fn json_response(code: StatusCode, value: &Value) -> Response {
    let body = serde_json::to_vec(value).expect("a JSON value always serializes");
    bytes_response(code, body)
}

fn bytes_response(code: StatusCode, body: Vec<u8>) -> Response {
    let mut resp = Response::new(Body::from(body));
    *resp.status_mut() = code;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

/// A `metav1.Status` failure.
fn status(code: u16, reason: &str, message: impl Into<String>) -> Response {
    let value = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message.into(),
        "reason": reason,
        "code": code,
    });
    json_response(
        StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        &value,
    )
}

fn success(message: impl Into<String>) -> Response {
    json_response(
        StatusCode::OK,
        &json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "message": message.into(),
            "code": 200,
        }),
    )
}

fn api_error(e: ApiError) -> Response {
    json_response(
        StatusCode::from_u16(e.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        &e.to_status(),
    )
}

fn not_found() -> Response {
    status(
        404,
        "NotFound",
        "the server could not find the requested resource",
    )
}

fn method_not_allowed(method: &Method) -> Response {
    status(
        405,
        "MethodNotAllowed",
        format!("the server does not allow this method on the requested resource ({method})"),
    )
}

// ---------------------------------------------------------------------------
// Query parameters

struct Params(Vec<(String, String)>);

impl Params {
    fn parse(uri: &http::Uri) -> Result<Self, Response> {
        match Query::<Vec<(String, String)>>::try_from_uri(uri) {
            Ok(Query(v)) => Ok(Self(v)),
            Err(e) => Err(status(400, "BadRequest", format!("malformed query: {e}"))),
        }
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn non_empty(&self, name: &str) -> Option<String> {
        self.get(name).filter(|v| !v.is_empty()).map(String::from)
    }

    fn flag(&self, name: &str) -> bool {
        self.get(name).and_then(go_bool) == Some(true)
    }

    fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(k, v)| k == name && !v.is_empty())
            .map(|(_, v)| v.as_str())
            .collect()
    }

    fn u64(&self, name: &str) -> Result<Option<u64>, Response> {
        match self.get(name).filter(|v| !v.is_empty()) {
            None => Ok(None),
            Some(v) => v.parse().map(Some).map_err(|_| {
                status(
                    400,
                    "BadRequest",
                    format!("invalid {name} {v:?}: not a non-negative integer"),
                )
            }),
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Params {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Response> {
        Self::parse(&parts.uri)
    }
}

// ---------------------------------------------------------------------------
// The routes

/// Every route. The health checks need no token; behind the token come the
/// admin API and the Kubernetes API.
///
/// Routes take every method (`any`, plus `post` for the admin actions): the
/// handlers answer the methods they do not serve with the dev server's own
/// 404 or 405 Status, and axum's `get` would answer HEAD as well.
///
/// A router falls back to another through a method router
/// ([`any_service`]), not a fallback service, so that axum finishes every
/// response alike (a fallback service's responses would get their
/// content-length header from hyper, in another place).
fn router(shared: Arc<Shared>) -> Router {
    let mut health = Router::new();
    for check in ["/healthz", "/livez", "/readyz"] {
        health = health
            .route(check, any(healthy))
            .route(&format!("{check}/"), any(healthy))
            .route(&format!("{check}/{{*check}}"), any(healthy));
    }
    let behind_token = Router::new()
        .route(
            "/recon-admin/drop-watches",
            any(unknown_admin).post(drop_watches),
        )
        .route("/recon-admin/compact", any(unknown_admin).post(compact))
        .route("/recon-admin/fail", any(unknown_admin).post(fail))
        .route("/recon-admin/latency", any(unknown_admin).post(latency))
        .route("/recon-admin/outage", any(unknown_admin).post(outage))
        .route("/recon-admin/requests", any(requests))
        .route("/recon-admin/", any(unknown_admin))
        .route("/recon-admin/{*action}", any(unknown_admin))
        .fallback(kubernetes_api(shared.clone()))
        .layer(middleware::from_fn_with_state(
            shared.clone(),
            require_token,
        ))
        .with_state(shared);
    health.fallback(any_service(behind_token))
}

/// The Kubernetes API: discovery, OpenAPI and the resources of each group
/// version, behind the API gate (request log, faults, path normalization).
/// The gate must run before these routes match, and a router's own layers
/// run after its routing: it is a layer on the method router around it.
fn kubernetes_api(shared: Arc<Shared>) -> MethodRouter<Arc<Shared>> {
    let mut routes = Router::new()
        .route("/version", any(version))
        .route("/api", any(api_versions))
        .route("/api/{version}", any(api_resource_list))
        .route("/apis", any(api_group_list))
        .route("/apis/{group}", any(api_group))
        .route("/apis/{group}/{version}", any(api_resource_list))
        .route("/openapi/v2", any(openapi_v2))
        .route("/openapi/v3", any(openapi_v3))
        .route(
            "/openapi/v3/{*group_version}",
            any(openapi_v3_group_version),
        );
    for prefix in ["/api/{version}", "/apis/{group}/{version}"] {
        routes = resource_routes(routes, prefix);
    }
    let routes = routes.fallback(unknown_path).with_state(shared.clone());
    any_service(routes).layer(middleware::from_fn_with_state(shared, api_gate))
}

/// The resource routes of a group version at `prefix`, and the same behind
/// `{prefix}/watch` (a watch whatever the query says); `watch` alone names
/// no resource.
fn resource_routes(routes: Router<Arc<Shared>>, prefix: &str) -> Router<Arc<Shared>> {
    const SHAPES: [&str; 6] = [
        "/{plural}",
        "/{plural}/{name}",
        "/{plural}/{name}/{subresource}",
        "/namespaces/{namespace}/{plural}",
        "/namespaces/{namespace}/{plural}/{name}",
        "/namespaces/{namespace}/{plural}/{name}/{subresource}",
    ];
    let mut routes = routes.route(&format!("{prefix}/watch"), any(unknown_path));
    for shape in SHAPES {
        routes = routes
            .route(&format!("{prefix}{shape}"), any(resource))
            .route(&format!("{prefix}/watch{shape}"), any(watch_resource));
    }
    routes
}

/// The matched route's parameters as the URL spells them (axum's `Path`
/// percent-decodes them; the dev server takes names as sent).
struct RawParams(Vec<(String, String)>);

impl RawParams {
    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// A group version's group: `""` (the core group) under `/api`.
    fn group(&self) -> &str {
        self.get("group").unwrap_or("")
    }
}

impl<S: Send + Sync> FromRequestParts<S> for RawParams {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Infallible> {
        let route = parts
            .extensions
            .get::<MatchedPath>()
            .map_or("", MatchedPath::as_str);
        let mut segments = parts.uri.path().split('/');
        let mut params = Vec::new();
        for part in route.split('/') {
            let Some(segment) = segments.next() else {
                break;
            };
            let Some(name) = part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) else {
                continue;
            };
            match name.strip_prefix('*') {
                // A catch-all takes the rest of the path.
                Some(name) => {
                    let rest: Vec<&str> =
                        std::iter::once(segment).chain(segments.by_ref()).collect();
                    params.push((name.to_string(), rest.join("/")));
                }
                None => params.push((name.to_string(), segment.to_string())),
            }
        }
        Ok(Self(params))
    }
}

// ---------------------------------------------------------------------------
// Health, token, admin

async fn healthy() -> Response {
    let mut resp = Response::new(Body::from("ok"));
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    resp
}

async fn require_token(State(shared): State<Arc<Shared>>, req: Request, next: Next) -> Response {
    if !authorized(&shared.token, &req) {
        return api_error(ApiError::unauthorized());
    }
    next.run(req).await
}

fn authorized(token: &str, req: &Request) -> bool {
    let Some(value) = req.headers().get(header::AUTHORIZATION) else {
        return false;
    };
    let Ok(value) = value.to_str() else {
        return false;
    };
    let Some((scheme, given)) = value.split_once(' ') else {
        return false;
    };
    scheme.eq_ignore_ascii_case("bearer")
        && constant_time_eq(given.trim().as_bytes(), token.as_bytes())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn unknown_admin(method: Method, uri: Uri) -> Response {
    status(
        404,
        "NotFound",
        format!("unknown admin endpoint {method} {}", uri.path()),
    )
}

async fn drop_watches(State(shared): State<Arc<Shared>>) -> Response {
    shared.drop_watches();
    success("watches dropped")
}

async fn compact(State(shared): State<Arc<Shared>>) -> Response {
    shared.store.compact();
    success("history compacted")
}

async fn fail(State(shared): State<Arc<Shared>>, params: Params) -> Response {
    let count = match params.u64("count") {
        Ok(c) => c.unwrap_or(1),
        Err(resp) => return resp,
    };
    let code = match params.u64("code") {
        Ok(c) => c.unwrap_or(500),
        Err(resp) => return resp,
    };
    if ![429, 500, 503].contains(&code) {
        return status(400, "BadRequest", "code must be 429, 500 or 503");
    }
    shared.faults.fail_next(count, code as u16);
    success(format!("the next {count} requests fail with {code}"))
}

async fn latency(State(shared): State<Arc<Shared>>, params: Params) -> Response {
    let ms = match params.u64("ms") {
        Ok(ms) => ms.unwrap_or(0),
        Err(resp) => return resp,
    };
    shared.faults.set_latency(Duration::from_millis(ms));
    success(format!("latency set to {ms} ms"))
}

/// How long after its answer an outage asked over HTTP begins, so that the
/// answer reaches the client before its connection is dropped.
const OUTAGE_GRACE: Duration = Duration::from_millis(100);

async fn outage(State(shared): State<Arc<Shared>>, params: Params) -> Response {
    let seconds = match params.u64("seconds") {
        Ok(Some(seconds)) if (1..=3600).contains(&seconds) => seconds,
        Ok(_) => return status(400, "BadRequest", "seconds must be 1 to 3600"),
        Err(resp) => return resp,
    };
    tokio::spawn(async move {
        tokio::time::sleep(OUTAGE_GRACE).await;
        shared.begin_outage(Duration::from_secs(seconds));
    });
    success(format!(
        "an outage of {seconds} s begins in {} ms",
        OUTAGE_GRACE.as_millis()
    ))
}

/// The request log: GET reads it, DELETE clears it.
async fn requests(State(shared): State<Arc<Shared>>, method: Method, uri: Uri) -> Response {
    match method {
        Method::GET => json_response(StatusCode::OK, &json!(shared.faults.request_log())),
        Method::DELETE => {
            shared.faults.clear_request_log();
            success("request log cleared")
        }
        _ => unknown_admin(method, uri).await,
    }
}

// ---------------------------------------------------------------------------
// The Kubernetes API

/// Every Kubernetes API request goes through here before routing: it is
/// logged, delayed and perhaps failed as the faults say, and its path loses
/// its empty segments (`//api/v1/` is `/api/v1`).
async fn api_gate(State(shared): State<Arc<Shared>>, mut req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    let line = format!(
        "{} {}",
        req.method(),
        req.uri()
            .path_and_query()
            .map(|p| p.as_str())
            .unwrap_or(&path)
    );
    let failure = shared.faults.on_request(line);
    let latency = shared.faults.latency();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    if let Some(f) = failure {
        let mut resp = match f.code {
            429 => api_error(ApiError::too_many_requests(1)),
            503 => api_error(ApiError::service_unavailable("injected failure")),
            _ => api_error(ApiError::internal("injected failure")),
        };
        if f.code == 429 {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        return resp;
    }
    if let Some(uri) = normalized(req.uri()) {
        *req.uri_mut() = uri;
    }
    next.run(req).await
}

/// The URI with the empty segments of its path dropped (`//api/v1/` is
/// `/api/v1`), as the routes spell paths; `None` when it has none.
fn normalized(uri: &Uri) -> Option<Uri> {
    let path = uri.path();
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let normalized = format!("/{}", segs.join("/"));
    if normalized == path {
        return None;
    }
    let path_and_query = match uri.query() {
        Some(query) => format!("{normalized}?{query}"),
        None => normalized,
    };
    let mut parts = uri.clone().into_parts();
    parts.path_and_query = Some(path_and_query.parse().ok()?);
    Uri::from_parts(parts).ok()
}

/// A path no route serves: under `/api` or `/apis` the API's 404 Status;
/// elsewhere the plain `404 page not found` kube-apiserver's path mux
/// answers (Go's `http.NotFound`).
async fn unknown_path(uri: Uri) -> Response {
    let path = uri.path();
    let api = ["/api", "/apis"]
        .iter()
        .any(|root| path == *root || path.starts_with(&format!("{root}/")));
    if api {
        return not_found();
    }
    let mut resp = Response::new(Body::from("404 page not found\n"));
    *resp.status_mut() = StatusCode::NOT_FOUND;
    let headers = resp.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    resp
}

/// A discovery or OpenAPI document: GET only; `None` is 404.
fn discovery_doc(method: &Method, value: Option<Value>) -> Response {
    if method != Method::GET {
        return method_not_allowed(method);
    }
    match value {
        Some(v) => json_response(StatusCode::OK, &v),
        None => not_found(),
    }
}

async fn version(method: Method) -> Response {
    discovery_doc(&method, Some(discovery::version()))
}

async fn api_versions(State(shared): State<Arc<Shared>>, method: Method) -> Response {
    discovery_doc(
        &method,
        Some(discovery::api_versions(&shared.server_address)),
    )
}

/// The served resource types, for the documents made from them.
struct Served(Vec<ResourceType>);

impl FromRequestParts<Arc<Shared>> for Served {
    type Rejection = Infallible;

    async fn from_request_parts(
        _parts: &mut Parts,
        shared: &Arc<Shared>,
    ) -> Result<Self, Infallible> {
        Ok(Self(shared.store.resource_types()))
    }
}

async fn api_group_list(method: Method, Served(types): Served) -> Response {
    discovery_doc(&method, Some(discovery::api_group_list(&types)))
}

async fn api_group(method: Method, Served(types): Served, path: RawParams) -> Response {
    discovery_doc(&method, discovery::api_group(&types, path.group()))
}

async fn api_resource_list(method: Method, Served(types): Served, path: RawParams) -> Response {
    let version = path.get("version").unwrap_or("");
    let list = discovery::api_resource_list(&types, path.group(), version);
    discovery_doc(&method, list)
}

/// `/openapi/v2` as kube-openapi's handler answers it: JSON or protobuf as
/// `Accept` asks (406 and no body if neither), with an ETag, and 304 to an
/// `If-None-Match` naming it.
async fn openapi_v2(method: Method, headers: HeaderMap, Served(types): Served) -> Response {
    if method != Method::GET {
        return not_found();
    }
    let header_str = |name| {
        headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    let mut resp = Response::new(Body::empty());
    resp.headers_mut()
        .insert(header::VARY, HeaderValue::from_static("Accept"));
    let Some(format) = openapi::v2_format(header_str(header::ACCEPT)) else {
        *resp.status_mut() = StatusCode::NOT_ACCEPTABLE;
        return resp;
    };
    let document = openapi::v2_document(&types);
    if let Ok(etag) = HeaderValue::from_str(&document.etag) {
        resp.headers_mut().insert(header::ETAG, etag);
    }
    let unchanged = header_str(header::IF_NONE_MATCH).is_some_and(|tags| {
        tags.split(',')
            .any(|tag| tag.trim() == document.etag || tag.trim() == "*")
    });
    if unchanged {
        *resp.status_mut() = StatusCode::NOT_MODIFIED;
        return resp;
    }
    *resp.body_mut() = Body::from(document.body(format));
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(format.content_type()),
    );
    resp
}

async fn openapi_v3(method: Method, Served(types): Served) -> Response {
    discovery_doc(&method, Some(openapi::v3_root(&types)))
}

async fn openapi_v3_group_version(
    method: Method,
    Served(types): Served,
    path: RawParams,
) -> Response {
    let gv = path.get("group_version").unwrap_or("");
    discovery_doc(&method, openapi::v3_group_version(&types, gv))
}

/// A resolved resource URL.
struct Target {
    rt: ResourceType,
    namespace: Option<String>,
    name: Option<String>,
    subresource: Option<Subresource>,
    watch_path: bool,
}

fn resolve(store: &Store, path: &RawParams, watch_path: bool) -> Result<Target, Response> {
    let mut namespace = path.get("namespace").map(String::from);
    let mut plural = path.get("plural").unwrap_or("");
    let mut name = path.get("name").map(String::from);
    let mut sub = path.get("subresource");
    // `namespaces/{name}/status` and `namespaces/{name}/finalize` address a
    // namespace, not a kind inside it.
    if namespace.is_some() && matches!(plural, "status" | "finalize") {
        if name.is_some() {
            return Err(not_found());
        }
        (sub, name, plural) = (Some(plural), namespace.take(), "namespaces");
    }
    let version = path.get("version").unwrap_or("");
    let Some(rt) = store.resource_type(path.group(), version, plural) else {
        return Err(not_found());
    };
    if namespace.is_some() && !rt.namespaced {
        return Err(not_found());
    }
    if name.is_some() && rt.namespaced && namespace.is_none() {
        return Err(not_found());
    }
    let subresource = match sub {
        None => None,
        Some("status") if rt.status_subresource => Some(Subresource::Status),
        Some("scale") if rt.scale_subresource => Some(Subresource::Scale),
        Some(_) => return Err(not_found()),
    };
    Ok(Target {
        rt,
        namespace,
        name,
        subresource,
        watch_path,
    })
}

/// Who a write is recorded as in `managedFields`: its `fieldManager`, else
/// its client's user agent up to the first `/` (at most 128 characters),
/// as kube-apiserver's field manager defaults it.
fn field_manager(params: &Params, headers: &HeaderMap) -> Option<String> {
    params.non_empty("fieldManager").or_else(|| {
        let agent = headers.get(header::USER_AGENT)?.to_str().ok()?;
        let prefix: String = agent.split('/').next()?.chars().take(128).collect();
        (!prefix.is_empty()).then_some(prefix)
    })
}

async fn resource(State(shared): State<Arc<Shared>>, path: RawParams, req: Request) -> Response {
    serve_resource(&shared, &path, false, req).await
}

async fn watch_resource(
    State(shared): State<Arc<Shared>>,
    path: RawParams,
    req: Request,
) -> Response {
    serve_resource(&shared, &path, true, req).await
}

async fn serve_resource(
    shared: &Arc<Shared>,
    path: &RawParams,
    watch_path: bool,
    req: Request,
) -> Response {
    let target = match resolve(&shared.store, path, watch_path) {
        Ok(t) => t,
        Err(resp) => return resp,
    };
    let params = match Params::parse(req.uri()) {
        Ok(p) => p,
        Err(resp) => return resp,
    };
    let method = req.method().clone();
    let manager = field_manager(&params, req.headers());
    // Tables for reads and watches (kubectl's `get` and `get -w`).
    let tables = method == Method::GET && target.subresource.is_none();
    let shape = Shape::asked_by(req.headers(), tables);
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default();
    let protobuf = content_type == "application/vnd.kubernetes.protobuf";
    if (content_type.contains("protobuf") && !protobuf) || content_type.contains("cbor") {
        return status(
            415,
            "UnsupportedMediaType",
            format!("the recon dev server accepts JSON bodies, not {content_type:?}"),
        );
    }
    let body = match axum::body::to_bytes(req.into_body(), MAX_BODY).await {
        Ok(b) => b,
        Err(e) => return status(400, "BadRequest", format!("reading the request body: {e}")),
    };
    let body = if protobuf && matches!(method, Method::POST | Method::PUT) {
        match super::protobuf::decode(&body) {
            Ok(v) => Bytes::from(serde_json::to_vec(&v).expect("a JSON value serializes")),
            Err(e) => {
                return status(
                    415,
                    "UnsupportedMediaType",
                    format!(
                        "{e} (kubectl's `create <kind>` generators send protobuf: use `kubectl create -f` or `kubectl apply -f` for other kinds)"
                    ),
                );
            }
        }
    } else if protobuf {
        return status(
            415,
            "UnsupportedMediaType",
            "protobuf bodies are only accepted for create and update",
        );
    } else {
        body
    };
    let dry_run = match dry_run(&params, &method, &body) {
        Ok(d) => d,
        Err(resp) => return resp,
    };
    let validation = match FieldValidation::asked(&params, &method) {
        Ok(v) => v,
        Err(resp) => return resp,
    };
    let rt = &target.rt;
    let ns = target.namespace.as_deref();
    // A dry run writes to a scratch copy of the store; its answer then
    // shows the versions objects have in the store itself.
    let scratch;
    let store = if dry_run {
        scratch = shared.store.dry_run();
        &scratch
    } else {
        &*shared.store
    };
    // A written object as answered: as stored (a dry run's), in the shape
    // asked (a `PartialObjectMetadata` for metadata clients); a `Status`
    // as it is.
    let stored = |mut answer: Value| {
        if dry_run {
            as_stored(&shared.store, rt, &mut answer);
        }
        if answer["kind"] == "Status" {
            answer
        } else {
            shape.object(answer)
        }
    };
    match (&method, target.name.as_deref()) {
        (&Method::GET, None) => {
            if target.watch_path || params.flag("watch") {
                watch(shared, &target, &params, None, shape)
            } else {
                list(store, rt, ns, &params, shape)
            }
        }
        (&Method::GET, Some(name)) => {
            if target.watch_path || params.flag("watch") {
                return watch(shared, &target, &params, Some(name), shape);
            }
            let got = if target.subresource == Some(Subresource::Scale) {
                store.get_scale(rt, ns, name)
            } else if let Shape::Table(version) = shape {
                store
                    .get(rt, ns, name)
                    .map(|obj| table::table(rt, version, &[obj], &json!({}), now_seconds()))
            } else {
                store.get(rt, ns, name).map(|obj| shape.object(obj))
            };
            match got {
                Ok(obj) => json_response(StatusCode::OK, &obj),
                Err(e) => api_error(e),
            }
        }
        (&Method::POST, None) => {
            let mut obj = match parse_body(&body, &content_type) {
                Ok(v) => v,
                Err(resp) => return resp,
            };
            if let Some(ns) = ns {
                match obj["metadata"]["namespace"].as_str() {
                    Some(given) if !given.is_empty() && given != ns => {
                        return status(
                            400,
                            "BadRequest",
                            "the namespace of the provided object does not match the namespace sent on the request",
                        );
                    }
                    _ => {}
                }
                if obj.get("metadata").is_some_and(Value::is_object) {
                    obj["metadata"]["namespace"] = json!(ns);
                }
            }
            let warnings = match validation.warnings(rt, &obj) {
                Ok(w) => w,
                Err(resp) => return resp,
            };
            match store.create(rt, ns, obj, manager.as_deref()) {
                Ok(created) => with_warnings(
                    json_response(StatusCode::CREATED, &stored(created)),
                    &warnings,
                ),
                Err(e) => api_error(e),
            }
        }
        (&Method::PUT, Some(name)) => {
            let obj = match parse_body(&body, &content_type) {
                Ok(v) => v,
                Err(resp) => return resp,
            };
            let warnings = match validation.warnings(rt, &obj) {
                Ok(w) => w,
                Err(resp) => return resp,
            };
            match store.update_as(rt, ns, name, obj, target.subresource, manager.as_deref()) {
                Ok((v, created)) => {
                    let code = if created {
                        StatusCode::CREATED
                    } else {
                        StatusCode::OK
                    };
                    with_warnings(json_response(code, &stored(v)), &warnings)
                }
                Err(e) => api_error(e),
            }
        }
        (&Method::PATCH, Some(name)) => {
            let kind = match PatchType::from_content_type(&content_type) {
                Some(PatchType::Merge) => PatchKind::Merge,
                Some(PatchType::Json) => PatchKind::Json,
                Some(PatchType::StrategicMerge) => PatchKind::StrategicMerge,
                Some(PatchType::Apply) => {
                    let Some(manager) = params.non_empty("fieldManager") else {
                        return patch_options_invalid(
                            "fieldManager",
                            "FieldValueRequired",
                            "Required value: is required for apply patch",
                        );
                    };
                    PatchKind::Apply {
                        field_manager: manager,
                        force: params.flag("force"),
                    }
                }
                None => {
                    let accepted: Vec<&str> =
                        PatchType::ALL.iter().map(|t| t.content_type()).collect();
                    return status(
                        415,
                        "UnsupportedMediaType",
                        format!(
                            "the body of the request was in an unknown format ({content_type:?}); accepted media types include: {}",
                            accepted.join(", ")
                        ),
                    );
                }
            };
            if !matches!(kind, PatchKind::Apply { .. }) && params.get("force").is_some() {
                return patch_options_invalid(
                    "force",
                    "FieldValueForbidden",
                    "Forbidden: may not be specified for non-apply patch",
                );
            }
            let body = match parse_body(&body, &content_type) {
                Ok(v) => v,
                Err(resp) => return resp,
            };
            // A JSON patch's operations are not an object to check.
            let warnings = match kind {
                PatchKind::Json => Vec::new(),
                _ => match validation.warnings(rt, &body) {
                    Ok(w) => w,
                    Err(resp) => return resp,
                },
            };
            let patch = Patch { kind, body };
            match store.patch_as(rt, ns, name, patch, target.subresource, manager.as_deref()) {
                Ok(patched) => {
                    let status = if patched.created {
                        StatusCode::CREATED
                    } else {
                        StatusCode::OK
                    };
                    with_warnings(json_response(status, &stored(patched.object)), &warnings)
                }
                Err(e) => api_error(e),
            }
        }
        (&Method::DELETE, Some(name)) if target.subresource.is_none() => {
            let (opts, orphan_dependents) = match delete_options(&params, &body) {
                Ok(o) => o,
                Err(resp) => return resp,
            };
            let warnings = job_delete_warning(rt, &opts);
            match store.delete(rt, ns, name, &opts) {
                Ok(v) if rt.returns_deleted_object || deletion_pending(&v) => {
                    // The handler's 202 for a cascading delete left pending
                    // by `orphanDependents: false`.
                    let status = if deletion_pending(&v) && orphan_dependents == Some(false) {
                        StatusCode::ACCEPTED
                    } else {
                        StatusCode::OK
                    };
                    with_warnings(json_response(status, &stored(v)), &warnings)
                }
                Ok(v) => with_warnings(
                    json_response(StatusCode::OK, &deleted_status(rt, &v)),
                    &warnings,
                ),
                Err(e) => api_error(e),
            }
        }
        (&Method::DELETE, None) => {
            let (opts, _) = match delete_options(&params, &body) {
                Ok(o) => o,
                Err(resp) => return resp,
            };
            let warnings = job_delete_warning(rt, &opts);
            let lp = match list_params(&params) {
                Ok(lp) => lp,
                Err(resp) => return resp,
            };
            match store.delete_collection(rt, ns, &lp, &opts) {
                Ok(items) => {
                    let (kind, api_version) = match shape {
                        Shape::Objects | Shape::Table(_) => {
                            (rt.list_kind.clone(), rt.api_version())
                        }
                        Shape::Metadata(version) => (
                            "PartialObjectMetadataList".to_string(),
                            format!("meta.k8s.io/{version}"),
                        ),
                    };
                    with_warnings(
                        json_response(
                            StatusCode::OK,
                            &json!({
                                "kind": kind,
                                "apiVersion": api_version,
                                "metadata": { "resourceVersion": shared.store.resource_version().to_string() },
                                "items": items.into_iter().map(stored).collect::<Vec<_>>(),
                            }),
                        ),
                        &warnings,
                    )
                }
                Err(e) => api_error(e),
            }
        }
        (m, _) => method_not_allowed(m),
    }
}

/// A boolean query value as Go's `strconv.ParseBool` reads it.
fn go_bool(text: &str) -> Option<bool> {
    match text {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// A watch's `sendInitialEvents`, with its `resourceVersionMatch` and
/// `allowWatchBookmarks`, as `ValidateListOptions` checks a watch's options
/// with the WatchList feature on: a watch list needs `NotOlderThan` and
/// bookmarks, and a match needs a watch list.
fn watch_list_options(params: &Params) -> Result<Option<bool>, Response> {
    let send = match params.get("sendInitialEvents") {
        None => None,
        Some(text) => match go_bool(text) {
            Some(send) => Some(send),
            None => {
                return Err(status(
                    400,
                    "BadRequest",
                    format!("sendInitialEvents: invalid boolean value {text:?}"),
                ));
            }
        },
    };
    let rv_match = params.get("resourceVersionMatch").unwrap_or("");
    let mut causes = Vec::new();
    if send.is_some() {
        if rv_match != "NotOlderThan" {
            causes.push(Cause::forbidden(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
        if !params.flag("allowWatchBookmarks") {
            causes.push(Cause::forbidden(
                "allowWatchBookmarks",
                "sendInitialEvents requires setting allowWatchBookmarks to true",
            ));
        }
    }
    if !rv_match.is_empty() {
        if send.is_none() {
            causes.push(Cause::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ));
        }
        if rv_match != "NotOlderThan" {
            causes.push(Cause::not_supported(
                "resourceVersionMatch",
                rv_match,
                &["NotOlderThan"],
            ));
        }
    }
    if causes.is_empty() {
        Ok(send)
    } else {
        Err(api_error(ApiError::invalid_options("ListOptions", &causes)))
    }
}

/// kube-apiserver's answer to PATCH options that `ValidatePatchOptions`
/// refuses: a 422 of `PatchOptions.meta.k8s.io` with one cause.
fn patch_options_invalid(field: &str, reason: &'static str, body: &str) -> Response {
    let cause = Cause::new(field, reason, body.to_string());
    api_error(ApiError::invalid_options("PatchOptions", &[cause]))
}

/// Whether a write is a dry run: `dryRun=All` in its query or, for a
/// DELETE, in the `DeleteOptions` of its body. Any other value is refused
/// as kube-apiserver refuses it (422).
fn dry_run(params: &Params, method: &Method, body: &Bytes) -> Result<bool, Response> {
    if *method == Method::GET {
        return Ok(false);
    }
    let mut asked: Vec<String> = params.all("dryRun").into_iter().map(String::from).collect();
    if *method == Method::DELETE && body.iter().any(|b| !b.is_ascii_whitespace()) {
        let options = parse_json(body)?;
        if let Some(values) = options["dryRun"].as_array() {
            asked.extend(
                values
                    .iter()
                    .map(|v| v.as_str().unwrap_or_default().to_string()),
            );
        }
    }
    if asked.iter().all(|v| v == "All") {
        return Ok(!asked.is_empty());
    }
    let options = match *method {
        Method::POST => "CreateOptions",
        Method::PUT => "UpdateOptions",
        Method::PATCH => "PatchOptions",
        _ => "DeleteOptions",
    };
    let values: Vec<String> = asked.iter().map(|v| format!("{v:?}")).collect();
    let body = format!(
        "Unsupported value: []string{{{}}}: supported values: \"All\"",
        values.join(", ")
    );
    let cause = Cause::new("dryRun", "FieldValueNotSupported", body);
    Err(api_error(ApiError::invalid_options(options, &[cause])))
}

/// What `fieldValidation` asks of a write's fields that the kind's schema
/// does not declare (custom resources; the dev server knows no schema of
/// the built-in kinds).
#[derive(Clone, Copy, PartialEq, Eq)]
enum FieldValidation {
    /// Dropped silently.
    Ignore,
    /// Dropped, a `Warning` header each: the default.
    Warn,
    /// The write is refused (400).
    Strict,
}

impl FieldValidation {
    /// The `fieldValidation` of a create, update or patch; another value is
    /// refused as kube-apiserver refuses it (422).
    fn asked(params: &Params, method: &Method) -> Result<FieldValidation, Response> {
        let options = match *method {
            Method::POST => "CreateOptions",
            Method::PUT => "UpdateOptions",
            Method::PATCH => "PatchOptions",
            _ => return Ok(FieldValidation::Warn),
        };
        match params.get("fieldValidation").unwrap_or_default() {
            "" | "Warn" => Ok(FieldValidation::Warn),
            "Ignore" => Ok(FieldValidation::Ignore),
            "Strict" => Ok(FieldValidation::Strict),
            other => Err(status(
                422,
                "Invalid",
                format!(
                    "{options}.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: {other:?}: supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
                ),
            )),
        }
    }

    /// The warnings to send for a write of `body` under `rt`'s schema (its
    /// undeclared fields, its rules the dev server cannot evaluate), or,
    /// when strict, the refusal naming the undeclared fields.
    fn warnings(self, rt: &ResourceType, body: &Value) -> Result<Vec<String>, Response> {
        let Some(schema) = &rt.schema else {
            // A built-in kind: the fields its API type lacks. A body the
            // type cannot read is the store's 400.
            let unknown = typed::read(rt, body).unwrap_or_default();
            return self.unknown_fields(rt, &unknown);
        };
        let mut unknown = super::store::unknown_fields(schema, body);
        unknown.extend(typed::read(rt, body).unwrap_or_default());
        let mut warnings = self.unknown_fields(rt, &unknown)?;
        warnings.extend(super::store::unchecked_rules(schema, body));
        Ok(warnings)
    }

    /// The warnings for `body`'s undeclared fields `unknown`, or, when
    /// strict, the refusal naming them.
    fn unknown_fields(
        self,
        rt: &ResourceType,
        unknown: &[String],
    ) -> Result<Vec<String>, Response> {
        if self == FieldValidation::Ignore {
            return Ok(Vec::new());
        }
        let unknown: Vec<String> = unknown
            .iter()
            .map(|field| format!("unknown field {field:?}"))
            .collect();
        if self == FieldValidation::Strict && !unknown.is_empty() {
            return Err(status(
                400,
                "BadRequest",
                format!(
                    "{kind} in version {version:?} cannot be handled as a {kind}: strict decoding error: {}",
                    unknown.join(", "),
                    kind = rt.kind,
                    version = rt.version
                ),
            ));
        }
        Ok(unknown)
    }
}

/// `resp` with a `Warning: 299 - "..."` header per warning, as
/// kube-apiserver sends them (kubectl prints each as `Warning: ...`).
fn with_warnings(mut resp: Response, warnings: &[String]) -> Response {
    for warning in warnings {
        let text = format!("299 - {}", serde_json::Value::String(warning.clone()));
        if let Ok(value) = HeaderValue::from_str(&text) {
            resp.headers_mut().append(header::WARNING, value);
        }
    }
    resp
}

/// A dry run's answer as kube-apiserver gives it: an object that exists
/// keeps the resourceVersion it has in `store`; one the dry run made up
/// (a create) has none. A `Status` is left as it is.
fn as_stored(store: &Store, rt: &ResourceType, answer: &mut Value) {
    if answer["kind"] == "Status" {
        return;
    }
    let Some(name) = answer.pointer("/metadata/name").and_then(Value::as_str) else {
        return;
    };
    let ns = answer
        .pointer("/metadata/namespace")
        .and_then(Value::as_str);
    let version = store
        .get(rt, ns, name)
        .ok()
        .and_then(|current| current.pointer("/metadata/resourceVersion").cloned());
    let Some(metadata) = answer.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    match version {
        Some(version) => metadata.insert("resourceVersion".into(), version),
        None => metadata.remove("resourceVersion"),
    };
}

/// The `Status` a DELETE answers with once the object is gone, for kinds
/// whose registry does not return the object: its name, group, uid and,
/// as kube-apiserver fills it in, the resource (not the kind) as `kind`.
fn deleted_status(rt: &ResourceType, object: &Value) -> Value {
    let mut details = json!({
        "name": object.pointer("/metadata/name").cloned().unwrap_or(Value::Null),
        "kind": rt.plural,
        "uid": object.pointer("/metadata/uid").cloned().unwrap_or(Value::Null),
    });
    if !rt.group.is_empty() {
        details["group"] = json!(rt.group);
    }
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    })
}

fn parse_json(body: &Bytes) -> Result<Value, Response> {
    serde_json::from_slice(body).map_err(|e| {
        status(
            400,
            "BadRequest",
            format!("the request body is not valid JSON: {e}"),
        )
    })
}

/// A write's body: JSON, or YAML when the content type says so
/// (`application/yaml`, `application/apply-patch+yaml`; JSON is YAML too).
fn parse_body(body: &Bytes, content_type: &str) -> Result<Value, Response> {
    if !content_type.ends_with("yaml") {
        return parse_json(body);
    }
    if let Ok(value) = serde_json::from_slice(body) {
        return Ok(value);
    }
    let text = std::str::from_utf8(body).map_err(|e| {
        status(
            400,
            "BadRequest",
            format!("the YAML body is not UTF-8: {e}"),
        )
    })?;
    serde_saphyr::from_str(text).map_err(|e| {
        status(
            400,
            "BadRequest",
            format!("error converting YAML to JSON: {e}"),
        )
    })
}

/// The DELETE's options, and the deprecated `orphanDependents` it gave
/// (query or body), which the answer's status code reads.
fn delete_options(
    params: &Params,
    body: &Bytes,
) -> Result<(DeleteOptions, Option<bool>), Response> {
    let mut opts = DeleteOptions {
        propagation_policy: params
            .non_empty("propagationPolicy")
            .map(|p| propagation(&p))
            .transpose()?,
        ..DeleteOptions::default()
    };
    let mut orphan_dependents = params
        .non_empty("orphanDependents")
        .and_then(|v| go_bool(&v));
    if body.iter().any(|b| !b.is_ascii_whitespace()) {
        let v = parse_json(body)?;
        if let Some(p) = v["propagationPolicy"].as_str() {
            opts.propagation_policy = Some(propagation(p)?);
        }
        if let Some(orphan) = v["orphanDependents"].as_bool() {
            orphan_dependents = Some(orphan);
        }
        opts.precondition_uid = v["preconditions"]["uid"].as_str().map(String::from);
        opts.precondition_resource_version = v["preconditions"]["resourceVersion"]
            .as_str()
            .map(String::from);
    }
    if opts.propagation_policy.is_none()
        && let Some(orphan) = orphan_dependents
    {
        // `shouldOrphanDependents` reads it first; `false` is no policy's
        // finalizer, a Background delete.
        opts.propagation_policy = Some(if orphan {
            PropagationPolicy::Orphan
        } else {
            PropagationPolicy::Background
        });
    }
    Ok((opts, orphan_dependents))
}

/// The warning the Job registry's `Delete` gives a delete of a batch/v1 Job
/// that names no policy: its default orphans the Job's Pods.
fn job_delete_warning(rt: &ResourceType, opts: &DeleteOptions) -> Vec<String> {
    let job = rt.group == "batch" && rt.version == "v1" && rt.kind == "Job";
    if job && opts.propagation_policy.is_none() {
        vec![
            "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning"
                .to_string(),
        ]
    } else {
        Vec::new()
    }
}

fn propagation(p: &str) -> Result<PropagationPolicy, Response> {
    p.parse()
        .map_err(|message: String| status(400, "BadRequest", message))
}

fn list_params(params: &Params) -> Result<ListParams, Response> {
    Ok(ListParams {
        label_selector: params.non_empty("labelSelector"),
        field_selector: params.non_empty("fieldSelector"),
        limit: params.u64("limit")?.filter(|l| *l > 0),
        continue_token: params.non_empty("continue"),
        resource_version: params.get("resourceVersion").map(String::from),
        resource_version_match: params.non_empty("resourceVersionMatch"),
    })
}

/// What a GET asks its answer to hold, by its `Accept` header: the objects,
/// or their metadata alone, as client-go's metadata informers and
/// controller-runtime's metadata-only watches ask with
/// `application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1`.
/// The first JSON media range that the dev server can serve decides;
/// others (`as=Table`) are passed over, as when nothing else is acceptable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Objects,
    /// Metadata of `meta.k8s.io/` this version (`v1` or `v1beta1`).
    Metadata(&'static str),
    /// A `meta.k8s.io/` Table of this version, for a read.
    Table(&'static str),
}

impl Shape {
    /// What the `Accept` header asks: its first JSON range the server
    /// serves, a Table only where `tables` (else passed over).
    fn asked_by(headers: &HeaderMap, tables: bool) -> Shape {
        let accept = headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        for range in accept.split(',') {
            let mut parts = range.split(';').map(str::trim);
            let media = parts.next().unwrap_or("").to_ascii_lowercase();
            if !matches!(media.as_str(), "application/json" | "application/*" | "*/*") {
                continue;
            }
            let params: Vec<(&str, &str)> = parts
                .filter_map(|p| p.split_once('='))
                .map(|(k, v)| (k.trim(), v.trim()))
                .collect();
            let param = |name: &str| params.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
            let version = match param("v") {
                Some("v1") => "v1",
                Some("v1beta1") => "v1beta1",
                _ => "",
            };
            match param("as") {
                None => return Shape::Objects,
                Some("PartialObjectMetadata" | "PartialObjectMetadataList")
                    if param("g") == Some("meta.k8s.io") && !version.is_empty() =>
                {
                    return Shape::Metadata(version);
                }
                Some("Table")
                    if tables && param("g") == Some("meta.k8s.io") && !version.is_empty() =>
                {
                    return Shape::Table(version);
                }
                Some(_) => {}
            }
        }
        Shape::Objects
    }

    /// One object as asked: itself, or a `PartialObjectMetadata` of it.
    fn object(self, object: Value) -> Value {
        match self {
            // Tables are built where a read answers (`table`).
            Shape::Objects | Shape::Table(_) => object,
            Shape::Metadata(version) => json!({
                "kind": "PartialObjectMetadata",
                "apiVersion": format!("meta.k8s.io/{version}"),
                "metadata": object.get("metadata").cloned().unwrap_or_else(|| json!({})),
            }),
        }
    }
}

/// Seconds since the epoch, now.
fn now_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn list(
    store: &Store,
    rt: &ResourceType,
    ns: Option<&str>,
    params: &Params,
    shape: Shape,
) -> Response {
    let lp = match list_params(params) {
        Ok(lp) => lp,
        Err(resp) => return resp,
    };
    let result = match store.list(rt, ns, &lp) {
        Ok(r) => r,
        Err(e) => return api_error(e),
    };
    let list = ListBody {
        rt,
        result: &result,
    };
    if let Shape::Table(version) = shape {
        let list = serde_json::to_value(&list).expect("a list serializes");
        let items = list["items"].as_array().cloned().unwrap_or_default();
        let table = table::table(rt, version, &items, &list["metadata"], now_seconds());
        return json_response(StatusCode::OK, &table);
    }
    let Shape::Metadata(version) = shape else {
        let body = serde_json::to_vec(&list).expect("a list serializes");
        return bytes_response(StatusCode::OK, body);
    };
    let mut list = serde_json::to_value(&list).expect("a list serializes");
    list["kind"] = json!("PartialObjectMetadataList");
    list["apiVersion"] = json!(format!("meta.k8s.io/{version}"));
    if let Some(items) = list["items"].as_array_mut() {
        for item in items {
            *item = shape.object(item.take());
        }
    }
    json_response(StatusCode::OK, &list)
}

// ---------------------------------------------------------------------------
// Watch streaming

struct WatchState {
    watch: super::store::Watch,
    /// When the watch ends (`timeoutSeconds`).
    ends: tokio::time::Instant,
    deadline: Pin<Box<tokio::time::Sleep>>,
    /// With `allowWatchBookmarks`: how often, and when the next is due.
    bookmarks: Option<(Duration, Pin<Box<tokio::time::Sleep>>)>,
    drops: tokio::sync::watch::Receiver<u64>,
    shutdown: CancellationToken,
    rt: ResourceType,
    /// Whole objects, their metadata alone, or Tables of one row.
    shape: Shape,
    /// A Table event has carried the column definitions: as on a real
    /// server, the later ones have none (`NoHeaders`).
    headers_sent: bool,
    /// A bookmark is due but events were still queued: send it once drained.
    bookmark_due: bool,
    done: bool,
}

fn event_line(kind: &str, object: &Value) -> Bytes {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(br#"{"type":"#);
    serde_json::to_writer(&mut out, kind).expect("string serializes");
    out.extend_from_slice(br#","object":"#);
    serde_json::to_writer(&mut out, object).expect("value serializes");
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

fn watch(
    shared: &Arc<Shared>,
    target: &Target,
    params: &Params,
    name: Option<&str>,
    shape: Shape,
) -> Response {
    let field_selector = match (params.non_empty("fieldSelector"), name) {
        (Some(fs), Some(n)) => Some(format!("{fs},metadata.name={n}")),
        (None, Some(n)) => Some(format!("metadata.name={n}")),
        (fs, None) => fs,
    };
    let send_initial_events = match watch_list_options(params) {
        Ok(send) => send,
        Err(resp) => return resp,
    };
    let wp = WatchParams {
        resource_version: params.get("resourceVersion").map(String::from),
        label_selector: params.non_empty("labelSelector"),
        field_selector,
        send_initial_events,
    };
    let timeout = match params.u64("timeoutSeconds") {
        Ok(Some(s)) => Duration::from_secs(s),
        Ok(None) => Duration::from_secs(fastrand::u64(1800..=3600)),
        Err(resp) => return resp,
    };
    let watch = match shared
        .store
        .watch(&target.rt, target.namespace.as_deref(), &wp)
    {
        Ok(w) => w,
        Err(e) => return api_error(e),
    };
    let now = tokio::time::Instant::now();
    let ends = now + timeout;
    let bookmarks = params
        .flag("allowWatchBookmarks")
        .then(|| shared.bookmark_interval.max(Duration::from_millis(10)))
        .and_then(|every| {
            let at = next_bookmark(now, every, ends)?;
            Some((every, Box::pin(tokio::time::sleep_until(at))))
        });
    let mut drops = shared.watch_drops.subscribe();
    drops.mark_unchanged();
    let state = WatchState {
        watch,
        ends,
        deadline: Box::pin(tokio::time::sleep_until(ends)),
        bookmarks,
        drops,
        shutdown: shared.shutdown.clone(),
        rt: target.rt.clone(),
        shape,
        headers_sent: false,
        bookmark_due: false,
        done: false,
    };
    let stream = futures::stream::unfold(state, |mut st| async move {
        if st.done {
            return None;
        }
        loop {
            if st.bookmark_due
                && let Some(rv) = st.watch.bookmark()
            {
                st.bookmark_due = false;
                let line = event_line("BOOKMARK", &st.shape.object(bookmark_object(&st.rt, rv)));
                return Some((Ok(line), st));
            }
            tokio::select! {
                biased;
                _ = st.shutdown.cancelled() => return None,
                _ = st.drops.changed() => return None,
                _ = st.deadline.as_mut() => return None,
                event = st.watch.next() => {
                    let event = event?;
                    if event.kind == WatchEventKind::Error {
                        st.done = true;
                    }
                    let kind = event.kind.as_str();
                    let line = match (st.shape, event.kind) {
                        (Shape::Objects, _) | (_, WatchEventKind::Error) => {
                            event_line(kind, &event.object)
                        }
                        (shape, WatchEventKind::Bookmark) => {
                            event_line(kind, &shape.object((*event.object).clone()))
                        }
                        (Shape::Table(version), _) => {
                            let objects = [(*event.object).clone()];
                            let mut table =
                                table::table(&st.rt, version, &objects, &json!({}), now_seconds());
                            if st.headers_sent {
                                table["columnDefinitions"] = Value::Null;
                            }
                            st.headers_sent = true;
                            event_line(kind, &table)
                        }
                        (shape, _) => event_line(kind, &shape.object((*event.object).clone())),
                    };
                    return Some((Ok::<Bytes, Infallible>(line), st));
                }
                _ = bookmark_time(&mut st.bookmarks) => {
                    st.bookmark_due = true;
                    let now = tokio::time::Instant::now();
                    st.bookmarks = st.bookmarks.take().and_then(|(every, mut sleep)| {
                        let at = next_bookmark(now, every, st.ends)?;
                        sleep.as_mut().reset(at);
                        Some((every, sleep))
                    });
                }
            }
        }
    });
    let mut resp = Response::new(Body::from_stream(stream));
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    resp
}

/// When the next BOOKMARK of a watch that ends at `ends` is due, as
/// kube-apiserver's watch cache schedules them: `every` (a minute), or
/// about 2 s before the watch ends if that comes first, so a client that
/// watches again starts from as fresh a version as it can; none once that
/// moment has passed.
fn next_bookmark(
    now: tokio::time::Instant,
    every: Duration,
    ends: tokio::time::Instant,
) -> Option<tokio::time::Instant> {
    let before_end = ends.checked_sub(Duration::from_secs(2))?;
    let at = (now + every).min(before_end);
    (at > now).then_some(at)
}

async fn bookmark_time(bookmarks: &mut Option<(Duration, Pin<Box<tokio::time::Sleep>>)>) {
    match bookmarks {
        Some((_, sleep)) => sleep.as_mut().await,
        None => std::future::pending().await,
    }
}
