//! The sandbox of one guest instance: a WASI context with no ambient
//! authority (no environment, no sockets, no files but its preopens: the
//! host-wide `--dir`s and the directories its policy grants it, opened
//! through cap-std), guest stdout / stderr routed to the
//! host's log tagged with the guest's name within its log limits, and the
//! memory limit.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use wasmtime::ResourceLimiter;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

use super::imports::log_dropped;
use super::limits::{GuestLimiter, LogAdmission};

/// A host directory a guest may use: from `--dir HOST::GUEST[::ro]` for
/// every guest, or from a guest's grant in the policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preopen {
    /// The directory on the host.
    pub host: PathBuf,
    /// Where the guest sees it.
    pub guest: String,
    /// Whether the guest may only read it.
    pub read_only: bool,
}

impl Preopen {
    /// The WASI permissions of the directory and the files in it.
    fn perms(&self) -> FsPerms {
        if self.read_only {
            FsPerms::ReadOnly
        } else {
            FsPerms::ReadWrite
        }
    }
}

impl std::str::FromStr for Preopen {
    type Err = String;

    /// Parses `HOST::GUEST` (read-write) or `HOST::GUEST::ro` (read-only).
    fn from_str(s: &str) -> Result<Self, String> {
        let (host, guest) = s.split_once("::").ok_or_else(|| {
            format!("--dir {s:?}: expected HOST::GUEST or HOST::GUEST::ro, e.g. ./data::/data")
        })?;
        let (guest, read_only) = match guest.rsplit_once("::") {
            Some((guest, "ro")) => (guest, true),
            Some((_, mode)) => {
                return Err(format!(
                    "--dir {s:?}: unknown mode {mode:?}; the only mode is `ro` (read-only)"
                ));
            }
            None => (guest, false),
        };
        if host.is_empty() || guest.is_empty() {
            return Err(format!(
                "--dir {s:?}: both the host and the guest path are needed"
            ));
        }
        Ok(Preopen {
            host: PathBuf::from(host),
            guest: guest.to_string(),
            read_only,
        })
    }
}

/// How much of a guest's latest stderr is kept for error reports.
const TAIL: usize = 2048;

/// Which output stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Stdout,
    Stderr,
}

/// Guest output: split into lines, logged with the guest's name within the
/// guest's log limits (a line longer than the longest log line is cut and
/// the rest of it skipped; lines over the log rate are dropped); the end of
/// stderr is kept so a trap's report can quote a panic message.
#[derive(Clone)]
pub(crate) struct GuestOutput {
    limits: Arc<GuestLimiter>,
    stream: Stream,
    state: Arc<Mutex<OutputState>>,
}

#[derive(Default)]
pub(crate) struct OutputState {
    /// The line being written, at most one byte longer than a log line.
    partial: Vec<u8>,
    /// The line being written was cut: skip to its end.
    skipping: bool,
    /// The end of stderr since the last [`GuestOutput::take_tail`].
    tail: String,
}

impl GuestOutput {
    /// Output streams for one instance of the guest: (stdout, stderr).
    pub(crate) fn pair(limits: Arc<GuestLimiter>) -> (GuestOutput, GuestOutput) {
        let out = GuestOutput {
            limits: Arc::clone(&limits),
            stream: Stream::Stdout,
            state: Arc::default(),
        };
        let err = GuestOutput {
            limits,
            stream: Stream::Stderr,
            state: Arc::default(),
        };
        (out, err)
    }

    /// Logs one line, within the log rate; `cut` when the rest of the line
    /// is skipped.
    fn emit(&self, line: &[u8], cut: bool) {
        let limits = &*self.limits;
        match limits.admit_log_line() {
            LogAdmission::Drop => return,
            LogAdmission::Write { dropped: 0 } => {}
            LogAdmission::Write { dropped } => log_dropped(limits.guest(), dropped),
        }
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end_matches('\r');
        let text = if cut {
            Cow::Owned(limits.cut_unseen(text))
        } else {
            limits.cut(text)
        };
        let guest = limits.guest();
        match self.stream {
            Stream::Stdout => {
                tracing::info!(target: "guest", guest, stream = "stdout", "{text}")
            }
            Stream::Stderr => {
                tracing::warn!(target: "guest", guest, stream = "stderr", "{text}")
            }
        }
    }

    fn write_bytes(&self, bytes: &[u8]) {
        let max = self.limits.limits().max_log_line;
        let mut state = self.state.lock();
        if self.stream == Stream::Stderr {
            let recent = &bytes[bytes.len().saturating_sub(TAIL)..];
            state.tail.push_str(&String::from_utf8_lossy(recent));
            if state.tail.len() > TAIL {
                let cut = state.tail.ceil_char_boundary(state.tail.len() - TAIL);
                state.tail.drain(..cut);
            }
        }
        let mut rest = bytes;
        while !rest.is_empty() {
            let newline = rest.iter().position(|&b| b == b'\n');
            let (piece, after) = match newline {
                Some(end) => (&rest[..end], &rest[end + 1..]),
                None => (rest, &[][..]),
            };
            if !state.skipping {
                let room = (max + 1).saturating_sub(state.partial.len());
                state
                    .partial
                    .extend_from_slice(&piece[..piece.len().min(room)]);
                if state.partial.len() > max {
                    let line = std::mem::take(&mut state.partial);
                    self.emit(&line, true);
                    state.skipping = true;
                } else if newline.is_some() {
                    let line = std::mem::take(&mut state.partial);
                    self.emit(&line, false);
                }
            }
            if newline.is_some() {
                state.skipping = false;
            }
            rest = after;
        }
    }

    fn flush_partial(&self) {
        let line = {
            let mut state = self.state.lock();
            state.skipping = false;
            std::mem::take(&mut state.partial)
        };
        if !line.is_empty() {
            self.emit(&line, false);
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
pub(crate) fn wasi_context<'a>(
    guest: &str,
    stdout: GuestOutput,
    stderr: GuestOutput,
    preopens: impl IntoIterator<Item = &'a Preopen>,
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
        builder.preopened_dir(&preopen.host, &preopen.guest, preopen.perms())?;
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
    use crate::clock::FakeClock;
    use crate::runtime::limits::{Limit, LimitObserver, Limits};

    #[test]
    fn preopens_parse_host_and_guest() {
        let p: Preopen = "./data::/data".parse().unwrap();
        assert_eq!(p.host, PathBuf::from("./data"));
        assert_eq!(p.guest, "/data");
        assert!(!p.read_only);
        assert_eq!(p.perms(), FsPerms::ReadWrite);
        let p: Preopen = "/srv/conf::/etc/conf::ro".parse().unwrap();
        assert_eq!(
            (p.host, p.guest.as_str(), p.read_only),
            (PathBuf::from("/srv/conf"), "/etc/conf", true)
        );
        assert!(
            "./data"
                .parse::<Preopen>()
                .unwrap_err()
                .contains("HOST::GUEST")
        );
        assert!("::/data".parse::<Preopen>().is_err());
        assert!("./data::::ro".parse::<Preopen>().is_err());
        assert!(
            "./data::/data::rw"
                .parse::<Preopen>()
                .unwrap_err()
                .contains("unknown mode \"rw\"")
        );
    }

    /// Counts the limits a guest's output hit.
    #[derive(Default)]
    struct Hits(Mutex<Vec<Limit>>);

    impl LimitObserver for Hits {
        fn exceeded(&self, _: &str, limit: Limit) {
            self.0.lock().push(limit);
        }
    }

    fn output(limits: Limits) -> (Arc<Hits>, GuestOutput, GuestOutput) {
        let hits = Arc::new(Hits::default());
        let limiter = GuestLimiter::new(
            Arc::from("g"),
            limits,
            FakeClock::new().shared(),
            Some(Arc::clone(&hits) as Arc<dyn LimitObserver>),
        );
        let (out, err) = GuestOutput::pair(Arc::new(limiter));
        (hits, out, err)
    }

    #[test]
    fn output_keeps_the_end_of_stderr_and_splits_lines() {
        let (hits, out, err) = output(Limits::default());
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
        assert!(hits.0.lock().is_empty(), "{:?}", hits.0.lock());
    }

    #[test]
    fn a_long_line_is_cut_once_and_the_rest_of_it_skipped() {
        let (hits, out, _) = output(Limits {
            max_log_line: 16,
            ..Limits::default()
        });
        // 30 MiB without a newline, in pieces: the host keeps 17 bytes.
        for _ in 0..30 {
            out.write_bytes(&vec![b'y'; 1 << 20]);
            let state = out.state.lock();
            assert!(state.partial.len() <= 17 && state.skipping);
        }
        out.write_bytes(b"yyy\nnext");
        {
            let state = out.state.lock();
            assert!(!state.skipping, "the next line is read again");
            assert_eq!(state.partial, b"next");
        }
        assert_eq!(*hits.0.lock(), [Limit::LogLine], "one cut, counted once");
    }

    #[test]
    fn lines_over_the_log_rate_are_dropped_and_counted() {
        let (hits, out, err) = output(Limits {
            log_lines_per_second: 1.0,
            log_burst: 5,
            ..Limits::default()
        });
        // Both streams of every instance share the guest's rate.
        out.write_bytes(&b"line\n".repeat(3));
        err.write_bytes(&b"line\n".repeat(7));
        assert_eq!(*hits.0.lock(), [Limit::LogRate; 5]);
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
