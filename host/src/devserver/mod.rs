//! The embedded dev API server: an in-memory server speaking the Kubernetes
//! wire protocol for what controllers and kubectl use.
//!
//! **A development and test tool, not a production API server.**
//!
//! - [`store`]: the storage engine.
//! - [`discovery`], [`openapi`]: the discovery and OpenAPI documents, built
//!   from the kinds the store serves.
//! - [`tls`], [`kubeconfig`]: the self-signed CA and the kubeconfig written for
//!   clients.
//! - [`faults`]: the fault-injection state shared by the in-process handle and
//!   the admin endpoints.

pub mod discovery;
pub mod faults;
pub mod kubeconfig;
pub mod openapi;
pub mod store;
pub mod tls;
