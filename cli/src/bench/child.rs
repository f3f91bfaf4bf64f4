//! Servers under test run as child processes of this very binary
//! (`mcp-compat serve …`, or `mcp-compat bench --floor-server`), so their
//! memory, descriptors and CPU time are theirs alone.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// How long a child may take to print its `listening on` line.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a child may take to exit after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// A running server child; killed when dropped.
#[derive(Debug)]
pub struct ServerChild {
    child: Child,
    /// How it was started, for messages.
    command: String,
    /// Its process id.
    pub pid: u32,
    /// The address it listens on.
    pub addr: SocketAddr,
    /// The path of its endpoint (`/mcp`).
    pub path: String,
}

impl ServerChild {
    /// Starts `mcp-compat ARGS` and waits for its `listening on
    /// http://HOST:PORT/PATH` line.
    pub async fn start(args: &[&str]) -> Result<Self, String> {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
        Self::start_exe(&exe, args).await
    }

    /// Starts another server, `EXE ARGS`, that prints the same `listening
    /// on` line (the rmcp adapter of `peers/rmcp` does).
    pub async fn start_exe(exe: &std::path::Path, args: &[&str]) -> Result<Self, String> {
        let mut child = Command::new(exe)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start the server child: {e}"))?;
        let pid = child.id().ok_or("the server child exited at once")?;
        let stdout = child
            .stdout
            .take()
            .ok_or("no stdout from the server child")?;
        let mut lines = BufReader::new(stdout).lines();
        let line = tokio::time::timeout(START_TIMEOUT, lines.next_line())
            .await
            .map_err(|_| format!("the server child {args:?} did not start in time"))?
            .map_err(|e| format!("reading the server child's stdout: {e}"))?
            .ok_or_else(|| format!("the server child {args:?} exited before listening"))?;
        let url = line
            .strip_prefix("listening on http://")
            .ok_or_else(|| format!("unexpected first line from the server child: {line}"))?;
        let (host, path) = url.split_at(url.find('/').unwrap_or(url.len()));
        let addr = host
            .parse()
            .map_err(|e| format!("bad address {host:?} from the server child: {e}"))?;
        // Keep draining stdout so the child never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(ServerChild {
            child,
            command: format!("{} {}", exe.display(), args.join(" ")),
            pid,
            addr,
            path: if path.is_empty() {
                "/".into()
            } else {
                path.into()
            },
        })
    }

    /// Stops the child and waits for it: SIGTERM first, so that it exits
    /// through its own shutdown (`serve` and the floor server both do, and
    /// an instrumented build writes its profile only then:
    /// `scripts/pgo-build.sh`), then SIGKILL if it has not exited within
    /// 10 s. A child that did not exit with success on SIGTERM
    /// (killed, or one without a handler, such as the rmcp adapter) is
    /// named on stderr.
    pub async fn stop(mut self) {
        let asked = Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .status()
            .await
            .is_ok_and(|s| s.success());
        let exited = if asked {
            match tokio::time::timeout(STOP_TIMEOUT, self.child.wait()).await {
                Ok(Ok(s)) if s.success() => return,
                Ok(Ok(s)) => format!("exited with {s}"),
                Ok(Err(e)) => format!("could not be waited for: {e}"),
                Err(_) => format!("was still running after {STOP_TIMEOUT:?}; killed"),
            }
        } else {
            "SIGTERM could not be sent; killed".to_owned()
        };
        eprintln!(
            "bench: the server child {} (pid {}) did not exit through its shutdown on SIGTERM: {exited}",
            self.command, self.pid
        );
        let _ = self.child.kill().await;
    }
}
