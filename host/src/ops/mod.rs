//! What an operations team runs the host with: Prometheus metrics, health
//! and readiness probes served over HTTP, leader election on a Lease, logs
//! (text or JSON) and the progress of the first cache sync.

pub mod health;
pub mod leader_election;
pub mod logging;
pub mod metrics;
pub mod progress;
pub mod server;
