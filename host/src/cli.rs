//! The `host` command line.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::devserver::{DevServer, DevServerConfig};

/// recon host: runs WebAssembly reconcilers against Kubernetes.
#[derive(Debug, Parser)]
#[command(name = "host", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run an in-memory Kubernetes-compatible API server for development and
    /// tests. NOT a production API server: no persistence, no authorization,
    /// no admission, no validation.
    #[command(
        name = "dev-server",
        long_about = "Run an in-memory Kubernetes-compatible API server for local \
development and tests, and write a kubeconfig for kubectl and the host.\n\n\
This is a development and test tool, not a production API server: everything \
lives in memory and is lost on exit, one bearer token guards everything, and \
there is no authorization, admission or schema validation.\n\n\
Once listening it prints one line on stdout:\n  \
dev-server listening on https://127.0.0.1:PORT (kubeconfig: PATH)\n\n\
Then: kubectl --kubeconfig PATH get namespaces"
    )]
    DevServer(DevServerArgs),
}

/// Flags of `host dev-server`.
#[derive(Debug, Args)]
pub struct DevServerArgs {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:6443")]
    pub listen: SocketAddr,
    /// Where to write the kubeconfig (server URL, CA, token).
    #[arg(long, default_value = "recon-dev.kubeconfig")]
    pub kubeconfig_out: PathBuf,
    /// Serve plain HTTP instead of HTTPS (debugging only).
    #[arg(long)]
    pub insecure_http: bool,
    /// Bearer token clients must send (default: 32 random hex characters).
    #[arg(long, env = "RECON_DEV_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Period of watch BOOKMARK events (e.g. 60s, 500ms, 2m).
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub bookmark_interval: Duration,
    /// Watch events of history kept; watches from older resourceVersions get 410 Expired.
    #[arg(long, default_value_t = 10_000)]
    pub history_limit: usize,
}

/// Parse `500ms`, `60s`, `2m`, `1h` or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("invalid duration {s:?}: expected e.g. 500ms, 60s, 2m"))?;
    match unit {
        "ms" => Ok(Duration::from_millis(n)),
        "" | "s" => Ok(Duration::from_secs(n)),
        "m" => Ok(Duration::from_secs(n * 60)),
        "h" => Ok(Duration::from_secs(n * 3600)),
        _ => Err(format!(
            "invalid duration unit {unit:?} in {s:?}: use ms, s, m or h"
        )),
    }
}

impl Cli {
    /// Run the chosen command.
    pub fn run(self) -> ExitCode {
        init_tracing();
        match self.command {
            Command::DevServer(args) => run_dev_server(args),
        }
    }
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

fn run_dev_server(args: DevServerArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("host dev-server: starting the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    if !args.listen.ip().is_loopback() {
        eprintln!(
            "host dev-server: warning: listening on {} exposes a development server (one shared token, no authorization) beyond this machine",
            args.listen
        );
    }
    runtime.block_on(async move {
        let config = DevServerConfig {
            listen: args.listen,
            tls: !args.insecure_http,
            token: args.token,
            bookmark_interval: args.bookmark_interval,
            history_limit: args.history_limit,
            kubeconfig_out: Some(args.kubeconfig_out.clone()),
            ..DevServerConfig::default()
        };
        let server = match DevServer::start(config).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("host dev-server: {e}");
                return ExitCode::FAILURE;
            }
        };
        {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = writeln!(
                out,
                "dev-server listening on {} (kubeconfig: {})",
                server.url(),
                args.kubeconfig_out.display()
            );
            let _ = out.flush();
        }
        if let Err(e) = wait_for_signal().await {
            eprintln!("host dev-server: waiting for signals: {e}");
            server.shutdown().await;
            return ExitCode::FAILURE;
        }
        server.shutdown().await;
        ExitCode::SUCCESS
    })
}

#[cfg(unix)]
async fn wait_for_signal() -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    Ok(())
}

#[cfg(not(unix))]
async fn wait_for_signal() -> std::io::Result<()> {
    tokio::signal::ctrl_c().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("60s"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("7"), Ok(Duration::from_secs(7)));
        assert!(parse_duration("x").is_err());
        assert!(parse_duration("5d").is_err());
    }

    #[test]
    fn cli_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
