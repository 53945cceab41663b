//! The `host` binary.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    recon_host::cli::Cli::parse().run()
}
