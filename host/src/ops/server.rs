//! The operations HTTP endpoints: `/metrics` on the metrics address,
//! `/healthz` and `/readyz` on the health address (as controller-runtime
//! serves them; one listener when both addresses are the same).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio_util::sync::CancellationToken;

use super::health::Health;
use super::metrics::{CONTENT_TYPE, Metrics};

/// Where the endpoints listen, once bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoints {
    /// The metrics address; `None` when disabled.
    pub metrics: Option<SocketAddr>,
    /// The health address; `None` when disabled.
    pub health: Option<SocketAddr>,
}

/// Why the endpoints could not start.
#[derive(Debug, thiserror::Error)]
#[error("listening on {address} for {what}: {source}")]
pub struct BindError {
    /// What was to be served there.
    pub what: &'static str,
    /// The address.
    pub address: SocketAddr,
    /// The cause.
    pub source: std::io::Error,
}

fn metrics_routes(metrics: Arc<Metrics>) -> Router {
    Router::new().route(
        "/metrics",
        get(move || {
            let metrics = Arc::clone(&metrics);
            async move { ([(header::CONTENT_TYPE, CONTENT_TYPE)], metrics.encode()) }
        }),
    )
}

fn health_routes(health: Arc<Health>) -> Router {
    let live = Arc::clone(&health);
    Router::new()
        .route(
            "/healthz",
            get(move || async move { probe(live.liveness()) }),
        )
        .route(
            "/readyz",
            get(move || async move { probe(health.readiness()) }),
        )
}

/// 200 `ok`, or 500 with the reason, as controller-runtime's probes answer.
fn probe(result: Result<(), String>) -> Response {
    match result {
        Ok(()) => (StatusCode::OK, "ok\n").into_response(),
        Err(reason) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{reason}\n")).into_response(),
    }
}

async fn bind(
    what: &'static str,
    address: SocketAddr,
) -> Result<tokio::net::TcpListener, BindError> {
    tokio::net::TcpListener::bind(address)
        .await
        .map_err(|source| BindError {
            what,
            address,
            source,
        })
}

fn serve(listener: tokio::net::TcpListener, routes: Router, stop: CancellationToken) {
    tokio::spawn(async move {
        let served = axum::serve(listener, routes)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await;
        if let Err(e) = served {
            tracing::error!("operations endpoint failed: {e}");
        }
    });
}

/// Binds the endpoints (`None` disables one) and serves them until `stop`
/// fires. Returns the bound addresses (port 0 picks a free port).
pub async fn start(
    metrics_bind: Option<SocketAddr>,
    health_bind: Option<SocketAddr>,
    metrics: Arc<Metrics>,
    health: Arc<Health>,
    stop: CancellationToken,
) -> Result<Endpoints, BindError> {
    if let (Some(address), Some(same)) = (metrics_bind, health_bind)
        && address == same
        && address.port() != 0
    {
        let listener = bind("metrics and health probes", address).await?;
        let local = listener.local_addr().unwrap_or(address);
        serve(
            listener,
            metrics_routes(metrics).merge(health_routes(health)),
            stop,
        );
        tracing::info!(%local, "serving /metrics, /healthz and /readyz");
        return Ok(Endpoints {
            metrics: Some(local),
            health: Some(local),
        });
    }
    let mut endpoints = Endpoints {
        metrics: None,
        health: None,
    };
    if let Some(address) = metrics_bind {
        let listener = bind("metrics", address).await?;
        let local = listener.local_addr().unwrap_or(address);
        serve(listener, metrics_routes(metrics), stop.clone());
        tracing::info!(%local, "serving /metrics");
        endpoints.metrics = Some(local);
    }
    if let Some(address) = health_bind {
        let listener = bind("health probes", address).await?;
        let local = listener.local_addr().unwrap_or(address);
        serve(listener, health_routes(health), stop);
        tracing::info!(%local, "serving /healthz and /readyz");
        endpoints.health = Some(local);
    }
    Ok(endpoints)
}
