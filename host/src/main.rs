//! The `host` binary: its command line ([`cli`]) over the `recon_host`
//! library, and `host dev-server` over the `recon-devserver` crate.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    cli::Cli::parse().run()
}
