//! The `host` binary: its command line ([`cli`]) over the `recon_host`
//! library, `host dev-server` over the `recon-devserver` crate, and `host
//! new` ([`scaffold`]), which starts a guest crate.

mod cli;
mod scaffold;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    cli::Cli::parse().run()
}
