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
    pub async fn stop(self) {
        if let Err(e) = self.stop_cleanly().await {
            eprintln!("bench: {e}");
        }
    }

    /// As [`stop`](Self::stop), saying instead of printing how the child
    /// failed to exit through its shutdown.
    async fn stop_cleanly(mut self) -> Result<(), String> {
        let asked = Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .status()
            .await
            .is_ok_and(|s| s.success());
        let exited = if asked {
            match tokio::time::timeout(STOP_TIMEOUT, self.child.wait()).await {
                Ok(Ok(s)) if s.success() => return Ok(()),
                Ok(Ok(s)) => format!("exited with {s}"),
                Ok(Err(e)) => format!("could not be waited for: {e}"),
                Err(_) => format!("was still running after {STOP_TIMEOUT:?}; killed"),
            }
        } else {
            "SIGTERM could not be sent; killed".to_owned()
        };
        let _ = self.child.kill().await;
        Err(format!(
            "the server child {} (pid {}) did not exit through its shutdown on SIGTERM: {exited}",
            self.command, self.pid
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh path for a test's marker file.
    fn marker(name: &str) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!(
            "mcp-compat-bench-child-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        path
    }

    /// A shell that prints a `listening on` line, then waits; on SIGTERM
    /// it writes `marker` and exits with `code`.
    async fn shell(marker: &std::path::Path, code: u8) -> ServerChild {
        let script = format!(
            "trap 'echo term > {}; exit {code}' TERM; \
             echo listening on http://127.0.0.1:9/mcp; \
             while :; do sleep 0.05; done",
            marker.display()
        );
        ServerChild::start_exe(std::path::Path::new("sh"), &["-c", &script])
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn a_child_is_found_and_stopped_through_its_shutdown() {
        let marker = marker("clean");
        let child = shell(&marker, 0).await;
        assert_eq!(child.addr, "127.0.0.1:9".parse().unwrap());
        assert_eq!(child.path, "/mcp");
        child.stop().await;
        assert!(marker.exists(), "the child was not asked to stop");
        let _ = std::fs::remove_file(marker);
    }

    #[tokio::test]
    async fn a_child_that_fails_its_shutdown_is_named() {
        let marker = marker("failed");
        let child = shell(&marker, 3).await;
        let pid = child.pid;
        let e = child.stop_cleanly().await.unwrap_err();
        assert!(
            e.ends_with(&format!(
                "(pid {pid}) did not exit through its shutdown on SIGTERM: exited with exit status: 3"
            )),
            "{e}"
        );
        assert!(marker.exists());
        let _ = std::fs::remove_file(marker);
    }

    #[tokio::test]
    async fn a_child_that_does_not_say_where_it_listens_is_refused() {
        let e = ServerChild::start_exe(std::path::Path::new("sh"), &["-c", "echo ready"])
            .await
            .unwrap_err();
        assert_eq!(e, "unexpected first line from the server child: ready");
        let e = ServerChild::start_exe(std::path::Path::new("sh"), &["-c", "exit 0"])
            .await
            .unwrap_err();
        assert!(e.ends_with("exited before listening"), "{e}");
    }
}
