//! Child processes in tests (the `mcp-compat` binary, Node peers): run one
//! to its end with a bound, or keep one running that announces its endpoint
//! on its first stdout line. Every child is killed when its test ends,
//! however it ends, and every wait is bounded.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

/// What a finished child left.
#[derive(Debug)]
pub struct Finished {
    /// How it exited.
    pub status: ExitStatus,
    /// Its exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Everything it wrote on stdout.
    pub stdout: String,
    /// Everything it wrote on stderr.
    pub stderr: String,
}

impl Finished {
    /// Whether it exited with code 0.
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }
}

fn drain(mut r: impl Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut s = String::new();
        let _ = r.read_to_string(&mut s);
        s
    })
}

/// Runs `cmd` to its end (stdin closed, stdout and stderr captured); after
/// `limit` the child is killed and the test fails, naming `what`.
pub fn run_to_end(what: &str, cmd: &mut Command, limit: Duration) -> Finished {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let mut child = KillOnDrop(child);
    let out = drain(child.0.stdout.take().expect("piped stdout"));
    let err = drain(child.0.stderr.take().expect("piped stderr"));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.0.try_wait().expect("try_wait") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "{what} did not exit within {limit:?}"
        );
        thread::sleep(Duration::from_millis(10));
    };
    Finished {
        status,
        code: status.code(),
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}

/// Kills (and reaps) a child on drop, however the test holding it ends:
/// a failed assertion included.
pub struct KillOnDrop(pub Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A long-running child (`mcp-compat serve`, a Node server) whose first
/// stdout line is `listening on http://127.0.0.1:PORT/PATH`; its stderr
/// lines are collected; killed on drop (its stderr printed when the test
/// failed).
pub struct Listening {
    name: String,
    child: Child,
    /// The endpoint it announced.
    pub url: String,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Listening {
    /// Starts `cmd` (stdin closed) and waits up to `limit` for its first
    /// stdout line; stdout is drained afterwards so the child never blocks
    /// on a full pipe.
    pub fn spawn(name: &str, cmd: &mut Command, limit: Duration) -> Listening {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        let lines = Arc::new(Mutex::new(Vec::new()));
        // From here on the child is killed whatever happens.
        let mut peer = Listening {
            name: name.to_owned(),
            child,
            url: String::new(),
            stderr: lines.clone(),
        };
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                match line {
                    Ok(l) => lines.lock().unwrap().push(l),
                    Err(_) => break,
                }
            }
        });
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            let _ = tx.send(line);
            let _ = std::io::copy(&mut reader, &mut std::io::sink());
        });
        let line = rx
            .recv_timeout(limit)
            .unwrap_or_else(|_| panic!("{name} printed no first line within {limit:?}"));
        let url = line
            .trim_end()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("{name}: unexpected first line {line:?}"));
        assert!(url.starts_with("http://127.0.0.1:"), "{name}: {url}");
        peer.url = url.to_owned();
        peer
    }

    /// The stderr lines so far.
    pub fn stderr_lines(&self) -> Vec<String> {
        self.stderr.lock().unwrap().clone()
    }

    /// Sends the child a signal by name (`TERM`, `INT`, …) with `kill -s`.
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args(["-s", name, &self.child.id().to_string()])
            .status()
            .unwrap_or_else(|e| panic!("cannot run kill: {e}"));
        assert!(status.success(), "kill -s {name} {}: {status}", self.name);
    }

    /// Waits up to `limit` for the child to exit by itself and returns how
    /// it exited (fails the test, killing the child, when it does not).
    pub fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "{} did not exit within {limit:?}",
                self.name
            );
            thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if thread::panicking() {
            let lines = self.stderr.lock().map(|l| l.join("\n")).unwrap_or_default();
            eprintln!("--- {} ({}) stderr ---\n{lines}\n---", self.name, self.url);
        }
    }
}
