//! Tests of API access against loopback test servers.

mod client;
mod config;
mod discovery;
mod lister_watcher;
mod reflector;
mod tls;
mod writes;
