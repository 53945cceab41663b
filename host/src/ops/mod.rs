//! What an operations team runs the host with: Prometheus metrics, health
//! and readiness probes served over HTTP, leader election on a Lease, logs
//! (text or JSON), the progress of the first cache sync, and heap memory
//! given back to the system after a burst.

mod health;
mod leader_election;
mod logging;
pub mod memory;
mod metrics;
mod progress;
mod server;

pub use health::Health;
pub use leader_election::{LeaderElectionConfig, LeaderElector, LeadershipLost};
#[cfg(test)]
pub(crate) use logging::Captured;
pub use logging::{LogFormat, init_logging};
pub use metrics::Metrics;
pub use progress::SyncProgress;
pub use server::{BindError, start_server};
