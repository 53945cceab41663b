//! The embedded Kubernetes-compatible dev API server (a development and test tool).

pub mod store;
