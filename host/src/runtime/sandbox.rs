//! The sandbox of one guest instance: a WASI context with no ambient
//! authority (no environment, no sockets, no files but the `--dir`
//! preopens, opened through cap-std), guest stdout / stderr routed to the
//! host's log tagged with the guest's name, and the memory limit.

use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use wasmtime::ResourceLimiter;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

/// A host directory a guest may use, from `--dir HOST::GUEST`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preopen {
    /// The directory on the host.
    pub host: PathBuf,
    /// Where the guest sees it.
    pub guest: String,
}

impl std::str::FromStr for Preopen {
    type Err = String;

    /// Parses `HOST::GUEST`.
    fn from_str(s: &str) -> Result<Self, String> {
        let (host, guest) = s
            .split_once("::")
            .ok_or_else(|| format!("--dir {s:?}: expected HOST::GUEST, e.g. ./data::/data"))?;
        if host.is_empty() || guest.is_empty() {
            return Err(format!(
                "--dir {s:?}: both the host and the guest path are needed"
            ));
        }
        Ok(Preopen {
            host: PathBuf::from(host),
            guest: guest.to_string(),
        })
    }
}

/// The longest line of guest output logged as one line; longer ones are
/// split.
const MAX_LINE: usize = 4096;
/// How much of a guest's latest stderr is kept for error reports.
const TAIL: usize = 2048;

/// Which output stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Stdout,
    Stderr,
}

/// Guest output: split into lines, logged with the guest's name; the end of
/// stderr is kept so a trap's report can quote a panic message.
#[derive(Clone)]
pub(crate) struct GuestOutput {
    guest: Arc<str>,
    stream: Stream,
    state: Arc<Mutex<OutputState>>,
}

#[derive(Default)]
pub(crate) struct OutputState {
    partial: Vec<u8>,
    /// The end of stderr since the last [`GuestOutput::take_tail`].
    tail: String,
}

impl GuestOutput {
    /// Output streams for one instance: (stdout, stderr).
    pub(crate) fn pair(guest: Arc<str>) -> (GuestOutput, GuestOutput) {
        let out = GuestOutput {
            guest: Arc::clone(&guest),
            stream: Stream::Stdout,
            state: Arc::default(),
        };
        let err = GuestOutput {
            guest,
            stream: Stream::Stderr,
            state: Arc::default(),
        };
        (out, err)
    }

    fn emit(&self, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end_matches('\r');
        match self.stream {
            Stream::Stdout => {
                tracing::info!(target: "guest", guest = %self.guest, stream = "stdout", "{text}")
            }
            Stream::Stderr => {
                tracing::warn!(target: "guest", guest = %self.guest, stream = "stderr", "{text}")
            }
        }
    }

    fn write_bytes(&self, bytes: &[u8]) {
        let mut state = self.state.lock();
        if self.stream == Stream::Stderr {
            state.tail.push_str(&String::from_utf8_lossy(bytes));
            if state.tail.len() > TAIL {
                let mut cut = state.tail.len() - TAIL;
                while !state.tail.is_char_boundary(cut) {
                    cut += 1;
                }
                state.tail.drain(..cut);
            }
        }
        state.partial.extend_from_slice(bytes);
        while let Some(end) = state.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = state.partial.drain(..=end).collect();
            self.emit(&line[..line.len() - 1]);
        }
        while state.partial.len() >= MAX_LINE {
            let line: Vec<u8> = state.partial.drain(..MAX_LINE).collect();
            self.emit(&line);
        }
    }

    fn flush_partial(&self) {
        let line = std::mem::take(&mut self.state.lock().partial);
        if !line.is_empty() {
            self.emit(&line);
        }
    }

    /// Logs any unterminated line and returns the stderr kept since the last
    /// call, trimmed.
    pub(crate) fn take_tail(&self) -> String {
        self.flush_partial();
        std::mem::take(&mut self.state.lock().tail)
            .trim()
            .to_string()
    }
}

impl IsTerminal for GuestOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for GuestOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

impl OutputStream for GuestOutput {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.write_bytes(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(64 * 1024)
    }
}

#[async_trait::async_trait]
impl Pollable for GuestOutput {
    async fn ready(&mut self) {}
}

impl tokio::io::AsyncWrite for GuestOutput {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.write_bytes(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// Builds the WASI context of one instance: arguments are the guest's name
/// only, no environment, no network, the preopens and nothing else.
pub(crate) fn wasi_context(
    guest: &str,
    stdout: GuestOutput,
    stderr: GuestOutput,
    preopens: &[Preopen],
) -> wasmtime::Result<WasiCtx> {
    let mut builder = WasiCtxBuilder::new();
    builder
        .arg(guest)
        .stdout(stdout)
        .stderr(stderr)
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false);
    for preopen in preopens {
        builder.preopened_dir(&preopen.host, &preopen.guest, FsPerms::ReadWrite)?;
    }
    Ok(builder.build())
}

/// The most table elements an instance may have.
const MAX_TABLE_ELEMENTS: usize = 100_000;

/// Caps an instance's linear memory and records its high-water mark and any
/// growth it refused.
#[derive(Debug)]
pub(crate) struct MemoryLimiter {
    limit: usize,
    high_water: usize,
    /// The size the guest asked for when growth was last refused.
    refused: Option<usize>,
}

impl MemoryLimiter {
    pub(crate) fn new(limit: usize) -> Self {
        MemoryLimiter {
            limit,
            high_water: 0,
            refused: None,
        }
    }

    /// The largest linear memory the instance reached, in bytes.
    pub(crate) fn high_water(&self) -> usize {
        self.high_water
    }

    /// The size of the last refused growth, cleared.
    pub(crate) fn take_refused(&mut self) -> Option<usize> {
        self.refused.take()
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.limit {
            self.refused = Some(desired);
            return Ok(false);
        }
        self.high_water = self.high_water.max(desired);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preopens_parse_host_and_guest() {
        let p: Preopen = "./data::/data".parse().unwrap();
        assert_eq!(p.host, PathBuf::from("./data"));
        assert_eq!(p.guest, "/data");
        assert!(
            "./data"
                .parse::<Preopen>()
                .unwrap_err()
                .contains("HOST::GUEST")
        );
        assert!("::/data".parse::<Preopen>().is_err());
    }

    #[test]
    fn output_keeps_the_end_of_stderr_and_splits_lines() {
        let (out, err) = GuestOutput::pair(Arc::from("g"));
        out.write_bytes(b"hello\nwor");
        assert_eq!(out.state.lock().partial, b"wor");
        assert_eq!(out.take_tail(), "", "stdout keeps no tail");
        assert!(out.state.lock().partial.is_empty(), "flushed");
        err.write_bytes(&vec![b'x'; TAIL]);
        err.write_bytes(b"\npanicked at 'boom'\n");
        let tail = err.take_tail();
        assert!(tail.len() <= TAIL);
        assert!(tail.ends_with("panicked at 'boom'"), "{tail}");
        assert_eq!(err.take_tail(), "", "taken");
        err.write_bytes(&vec![b'y'; MAX_LINE * 2 + 1]);
        assert_eq!(err.state.lock().partial.len(), 1, "long lines are split");
    }

    #[test]
    fn memory_limiter_refuses_growth_past_the_limit() {
        let mut limiter = MemoryLimiter::new(64 << 20);
        assert!(limiter.memory_growing(0, 1 << 20, None).unwrap());
        assert!(limiter.memory_growing(1 << 20, 64 << 20, None).unwrap());
        assert!(
            !limiter
                .memory_growing(64 << 20, (64 << 20) + 65536, None)
                .unwrap()
        );
        assert_eq!(limiter.high_water(), 64 << 20);
        assert_eq!(limiter.take_refused(), Some((64 << 20) + 65536));
        assert_eq!(limiter.take_refused(), None);
    }
}
