//! Tests of API access against loopback test servers.

mod lister_watcher;
mod writes;
mod config;
mod discovery;
mod reflector;
mod client;
