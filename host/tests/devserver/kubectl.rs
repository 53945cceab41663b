//! Running kubectl and the `host dev-server` binary from tests, every wait
//! bounded, and the in-process dev server kubectl is pointed at.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use recon_devserver::{DevServer, DevServerConfig, DevServerHandle};

/// A fresh directory under the system temp dir (removed on drop).
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "recon-devserver-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// An in-process dev server for kubectl (which must be installed): a
/// fresh directory `tag` for kubectl's cache, the server, and its
/// kubeconfig written into that directory.
pub async fn kubectl_server(tag: &str) -> (TempDir, DevServerHandle, PathBuf) {
    require_kubectl();
    let dir = TempDir::new(tag);
    let server = DevServer::start(DevServerConfig::default()).await.unwrap();
    let kubeconfig = dir.0.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    (dir, server, kubeconfig)
}

/// Panics with instructions when kubectl is not installed.
pub fn require_kubectl() {
    let found = Command::new("kubectl")
        .args(["version", "--client"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        found,
        "kubectl is not installed (or not on PATH); these tests need it: run `bash scripts/bootstrap` to install it"
    );
}

/// kubectl pointed at `kubeconfig`, with its caches under `cache`.
pub struct Kubectl {
    pub kubeconfig: PathBuf,
    pub cache: PathBuf,
}

impl Kubectl {
    pub fn new(kubeconfig: &Path, dir: &Path) -> Self {
        Self {
            kubeconfig: kubeconfig.to_path_buf(),
            cache: dir.join("kube-cache"),
        }
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("kubectl");
        cmd.arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(&self.cache)
            .arg("--request-timeout=20s")
            .args(args)
            .env_remove("KUBECONFIG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// Run to completion (at most 60 s).
    pub fn run(&self, args: &[&str]) -> Output {
        let child = self.command(args).spawn().expect("spawn kubectl");
        wait_output(child, Duration::from_secs(60), &format!("kubectl {args:?}"))
    }

    /// Run, assert success, return stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}\nstdout: {}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8(out.stdout).expect("utf-8 output")
    }

    /// Retry `args` until it succeeds (at most `attempts` times, 200 ms apart).
    pub fn ok_eventually(&self, args: &[&str], attempts: u32) -> String {
        for _ in 1..attempts {
            let out = self.run(args);
            if out.status.success() {
                return String::from_utf8(out.stdout).expect("utf-8 output");
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        self.ok(args)
    }

    /// Write `text` to a file in `dir` and `kubectl apply -f` it.
    pub fn apply(&self, dir: &Path, file: &str, text: &str) -> String {
        let path = dir.join(file);
        std::fs::write(&path, text).expect("write manifest");
        self.ok(&["apply", "-f", path.to_str().unwrap()])
    }
}

/// Wait for a child with a deadline, killing it if it overruns.
pub fn wait_output(mut child: Child, limit: Duration, what: &str) -> Output {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait().expect("try_wait") {
            Some(_) => return child.wait_with_output().expect("collect output"),
            None if Instant::now() >= deadline => {
                let _ = child.kill();
                let out = child.wait_with_output().expect("collect output");
                panic!(
                    "{what} did not finish within {limit:?}; stderr: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Lines of a child's stdout, read on a thread.
pub fn line_reader(stdout: std::process::ChildStdout) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Wait (at most `limit`) for a line containing `needle`.
pub fn wait_for_line(rx: &mpsc::Receiver<String>, needle: &str, limit: Duration) -> String {
    let deadline = Instant::now() + limit;
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line.contains(needle) => return line,
            Ok(line) => seen.push(line),
            Err(_) => panic!("no line containing {needle:?} within {limit:?}; saw {seen:?}"),
        }
    }
}

/// The `host dev-server` binary, killed on drop if still running.
pub struct ServerProcess {
    pub child: Option<Child>,
    pub url: String,
    pub kubeconfig: PathBuf,
}

impl ServerProcess {
    pub fn spawn(dir: &Path, extra: &[&str]) -> Self {
        let kubeconfig = dir.join("kubeconfig");
        let mut child = Command::new(env!("CARGO_BIN_EXE_host"))
            .args(["dev-server", "--listen", "127.0.0.1:0", "--kubeconfig-out"])
            .arg(&kubeconfig)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn host dev-server");
        let rx = line_reader(child.stdout.take().unwrap());
        let line = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("host dev-server printed no listening line within 30 s");
            }
        };
        let url = line
            .strip_prefix("dev-server listening on ")
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        assert!(
            line.contains(&format!("(kubeconfig: {})", kubeconfig.display())),
            "{line}"
        );
        Self {
            child: Some(child),
            url,
            kubeconfig,
        }
    }

    /// Send SIGTERM to the server (by its pid) and return its exit status.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("still running");
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM failed");
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                return status;
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("host dev-server did not stop within 15 s of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
