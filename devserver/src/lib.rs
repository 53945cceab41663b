//! The embedded dev API server: an in-memory server speaking the Kubernetes
//! wire protocol for what controllers and kubectl use.
//!
//! **A development and test tool, not a production API server**: there is no
//! authorization, no admission, no schema validation of built-in kinds (custom
//! resources meet their CRD's schema), no persistence, and one bearer token
//! guards everything.
//!
//! - [`store`]: the storage engine (kinds, resourceVersions, history, watches,
//!   patches, finalizers, garbage collection).
//! - [`server`]: the HTTP layer on top of it (routes, Status errors, watch
//!   streaming with bookmarks, bearer auth, fault injection, admin API).
//! - [`discovery`], [`openapi`]: the discovery and OpenAPI documents.
//! - [`tls`], [`kubeconfig`]: the self-signed CA and the kubeconfig written for
//!   clients.
//! - [`faults`]: the fault-injection state shared by the in-process handle and
//!   the `/recon-admin/*` endpoints.
//!
//! Start it in-process with [`DevServer::start`] (any tokio runtime, binds
//! `127.0.0.1:0` by default) or from the command line with `host dev-server`.
//!
//! HTTP surface (besides the Kubernetes API under `/api` and `/apis`):
//! `/healthz`, `/livez`, `/readyz` (no token needed), `/version`,
//! `/openapi/v2`, `/openapi/v3[/...]`, and the token-protected admin API for
//! out-of-process tests: `POST /recon-admin/drop-watches`,
//! `POST /recon-admin/compact`,
//! `POST /recon-admin/fail?count=N&code=429|500|503`, `POST /recon-admin/latency?ms=N`,
//! `POST /recon-admin/outage?seconds=N` (from 0.1 s after the answer, new
//! connections are refused and open ones dropped for N seconds; then the
//! server listens again with the same store),
//! `GET /recon-admin/requests` (the request log as a JSON array of strings),
//! `DELETE /recon-admin/requests` (clear it).
//!
//! `dryRun=All` writes run against a scratch copy of the store (see
//! [`store::Store::dry_run`]).
//!
//! Bodies are JSON, YAML where the content type says so (`application/yaml`,
//! `application/apply-patch+yaml`), or protobuf for the few kinds kubectl's
//! `create <kind>` generators send (see [`protobuf`]).
//!
//! Not supported: protobuf bodies of other kinds, Tables of built-in kinds
//! and watches (plain objects are sent; custom resources' reads get
//! [`table`]s, and `PartialObjectMetadata` is served),
//! aggregated discovery (plain documents are served instead). The OpenAPI
//! v2 and v3 documents carry every served kind's schema (see [`openapi`]).

pub mod discovery;
pub mod faults;
pub mod kubeconfig;
pub mod openapi;
pub mod protobuf;
pub mod server;
pub mod store;
pub mod table;
pub mod tls;

pub use server::{DevServer, DevServerConfig, DevServerError, DevServerHandle};
