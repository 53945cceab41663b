//! The operations HTTP endpoints: `/metrics` on the metrics address,
//! `/healthz` and `/readyz` on the health address (as controller-runtime
//! serves them; one listener when both addresses are the same);
//! `/readyz?verbose` reports every guest's state.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::RawQuery;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tokio_util::sync::CancellationToken;

use super::health::Health;
use super::metrics::{CONTENT_TYPE, Metrics};

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
            get(move |RawQuery(query): RawQuery| async move {
                if is_verbose(query.as_deref()) {
                    let (ready, report) = health.readiness_report();
                    let status = if ready {
                        StatusCode::OK
                    } else {
                        StatusCode::INTERNAL_SERVER_ERROR
                    };
                    (status, report).into_response()
                } else {
                    probe(health.readiness())
                }
            }),
        )
}

/// Whether a query asks for the verbose report (`?verbose`,
/// `?verbose=true`, `?verbose=1`).
fn is_verbose(query: Option<&str>) -> bool {
    query.is_some_and(|query| {
        query.split('&').any(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            name == "verbose" && matches!(value, "" | "true" | "1")
        })
    })
}

/// 200 `ok`, or 500 with the reason, as controller-runtime's probes answer.
fn probe(result: Result<(), String>) -> Response {
    match result {
        Ok(()) => (StatusCode::OK, "ok\n").into_response(),
        Err(reason) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{reason}\n")).into_response(),
    }
}

/// Binds `address`, serves `routes` on it until `stop` fires, and logs
/// `serving <paths>` with the bound address (port 0 picks a free port).
async fn listen(
    what: &'static str,
    paths: &str,
    address: SocketAddr,
    routes: Router,
    stop: CancellationToken,
) -> Result<(), BindError> {
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|source| BindError {
            what,
            address,
            source,
        })?;
    let local = listener.local_addr().unwrap_or(address);
    tokio::spawn(async move {
        let served = axum::serve(listener, routes)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await;
        if let Err(e) = served {
            tracing::error!("operations endpoint failed: {e}");
        }
    });
    tracing::info!(%local, "serving {paths}");
    Ok(())
}

/// Binds the endpoints (`None` disables one) and serves them until `stop`
/// fires; each logs the address it is bound to.
pub async fn start_server(
    metrics_bind: Option<SocketAddr>,
    health_bind: Option<SocketAddr>,
    metrics: Arc<Metrics>,
    health: Arc<Health>,
    stop: CancellationToken,
) -> Result<(), BindError> {
    if let (Some(address), Some(same)) = (metrics_bind, health_bind)
        && address == same
        && address.port() != 0
    {
        let routes = metrics_routes(metrics).merge(health_routes(health));
        let paths = "/metrics, /healthz and /readyz";
        return listen("metrics and health probes", paths, address, routes, stop).await;
    }
    if let Some(address) = metrics_bind {
        let routes = metrics_routes(metrics);
        listen("metrics", "/metrics", address, routes, stop.clone()).await?;
    }
    if let Some(address) = health_bind {
        let routes = health_routes(health);
        listen(
            "health probes",
            "/healthz and /readyz",
            address,
            routes,
            stop,
        )
        .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbose_is_asked_as_kubernetes_probes_ask() {
        assert!(is_verbose(Some("verbose")));
        assert!(is_verbose(Some("verbose=true")));
        assert!(is_verbose(Some("x=1&verbose=1")));
        assert!(!is_verbose(Some("verbose=false")));
        assert!(!is_verbose(Some("verbosely")));
        assert!(!is_verbose(None));
    }
}
