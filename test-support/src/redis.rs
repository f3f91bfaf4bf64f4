//! [`RedisServer`]: a real `redis-server` for tests, on a free loopback
//! port in its own temporary directory, with no persistence, stopped on
//! drop.
//!
//! `redis-server` refuses `--port 0`, so the fixture picks a port by
//! binding `127.0.0.1:0` and releasing it, then starts the server on it; if
//! another process took the port in between, the server exits at once and
//! the fixture tries another (a few times). It waits until the server
//! answers `PING` with `+PONG` (bounded by [`START_LIMIT`]).
//!
//! For the "Redis is down" tests the same server can be [stopped](RedisServer::stop)
//! and [started again](RedisServer::restart) on the same port (its data
//! gone: nothing is persisted).
//!
//! Where `redis-server` is not on `PATH` the fixture runs the workspace's
//! `scripts/ensure-redis.sh` once (it installs Debian's `redis-server`
//! package where it can, so `cargo test --workspace` works on a fresh
//! machine); if there is still none it panics with a message saying how to
//! install it, so tests that need a server fail clearly instead of passing
//! vacuously.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The bound on a server's start (its first `PONG`).
pub const START_LIMIT: Duration = Duration::from_secs(10);

/// How many free ports are tried before giving up.
const PORT_ATTEMPTS: usize = 5;

/// The program started (found on `PATH`).
const PROGRAM: &str = "redis-server";

/// The message of a test that needs `redis-server` where it is missing.
pub const MISSING: &str = "redis-server is not installed: the Redis store's tests need a real \
     server. Install Debian's package (`apt-get install -y redis-server`; any Redis >= 6.2 or \
     Valkey on PATH works) and run the tests again";

/// A running (or stopped) `redis-server` owned by a test.
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: TempDir,
}

impl RedisServer {
    /// Starts a server on a free loopback port and waits until it answers
    /// `PING`.
    ///
    /// # Panics
    ///
    /// With [`MISSING`] when `redis-server` is not installed, or when no
    /// server could be started on any of a few free ports.
    pub fn start() -> RedisServer {
        ensure_installed();
        let dir = TempDir::new();
        let mut last_error = String::new();
        for _ in 0..PORT_ATTEMPTS {
            let port = free_port();
            match spawn(dir.path(), port) {
                Ok(child) => {
                    return RedisServer {
                        child: Some(child),
                        port,
                        dir,
                    };
                }
                Err(e) => last_error = e,
            }
        }
        panic!("could not start redis-server on any of {PORT_ATTEMPTS} free ports: {last_error}");
    }

    /// The server's address (127.0.0.1 and its port).
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// A `redis://127.0.0.1:PORT/0` URL for the server.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// Whether the server is running (not [stopped](Self::stop)).
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// Kills the server (as a crash would: nothing is saved) and waits for
    /// it to exit; connections to it fail from then on. Idempotent.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port (empty: nothing was
    /// persisted), after a [`stop`](Self::stop) (stops it first if it is
    /// running), and waits until it answers `PING`.
    ///
    /// # Panics
    ///
    /// When the port has been taken by another process meanwhile, or the
    /// server does not answer within [`START_LIMIT`].
    pub fn restart(&mut self) {
        self.stop();
        // The old process has exited, but its listening socket can take a
        // moment to be released: retry within the start bound.
        let deadline = Instant::now() + START_LIMIT;
        loop {
            match spawn(self.dir.path(), self.port) {
                Ok(child) => {
                    self.child = Some(child);
                    return;
                }
                Err(e) if Instant::now() >= deadline => {
                    panic!("could not restart redis-server on port {}: {e}", self.port)
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    /// Sends one command (inline syntax, e.g. `"DBSIZE"`) and returns the
    /// server's raw reply line, for tests that look inside Redis.
    ///
    /// # Panics
    ///
    /// When the server is not reachable.
    pub fn command(&self, line: &str) -> String {
        let mut s = TcpStream::connect(self.addr()).expect("connect to redis-server");
        s.set_read_timeout(Some(START_LIMIT)).expect("timeout");
        s.write_all(format!("{line}\r\n").as_bytes())
            .expect("write to redis-server");
        read_line(&mut s).expect("read from redis-server")
    }

    /// Every command the server has run since its statistics were last
    /// [reset](Self::reset_stats), by name (`INFO commandstats`: `evalsha`,
    /// `hset`, `config|resetstat`…). The commands a script runs count
    /// under their own names, so a test can count what one operation costs
    /// Redis.
    ///
    /// # Panics
    ///
    /// When the server is not reachable or answers something else.
    pub fn commands_run(&self) -> BTreeMap<String, u64> {
        let mut s = TcpStream::connect(self.addr()).expect("connect to redis-server");
        s.set_read_timeout(Some(START_LIMIT)).expect("timeout");
        s.write_all(b"INFO commandstats\r\n")
            .expect("write to redis-server");
        let header = read_line(&mut s).expect("read from redis-server");
        let len: usize = header
            .strip_prefix('$')
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("INFO answered {header}"));
        let mut body = vec![0; len];
        s.read_exact(&mut body).expect("read from redis-server");
        String::from_utf8_lossy(&body)
            .lines()
            .filter_map(|l| {
                let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(":calls=")?;
                Some((name.to_owned(), rest.split(',').next()?.parse().ok()?))
            })
            .collect()
    }

    /// [`commands_run`](Self::commands_run) without the script calls
    /// themselves (`evalsha`, `script|load`) and the statistics' own
    /// commands: what the scripts run since the last
    /// [reset](Self::reset_stats).
    pub fn commands_in_scripts(&self) -> BTreeMap<String, u64> {
        let mut run = self.commands_run();
        for own in ["evalsha", "script|load", "config|resetstat", "info"] {
            run.remove(own);
        }
        run
    }

    /// Resets the counts [`commands_run`](Self::commands_run) reads.
    ///
    /// # Panics
    ///
    /// When the server is not reachable or refuses.
    pub fn reset_stats(&self) {
        assert_eq!(self.command("CONFIG RESETSTAT"), "+OK");
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Makes sure `redis-server` is on `PATH`: when it is not, runs
/// `scripts/ensure-redis.sh` (once per process) and panics with [`MISSING`]
/// and the script's words if that did not help.
pub(crate) fn ensure_installed() {
    static RESULT: OnceLock<Result<(), String>> = OnceLock::new();
    let result = RESULT.get_or_init(|| {
        let on_path = |_: ()| {
            Command::new(PROGRAM)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok()
        };
        if on_path(()) {
            return Ok(());
        }
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/ensure-redis.sh");
        let out = Command::new("bash")
            .arg(&script)
            .stdin(Stdio::null())
            .output();
        match out {
            Ok(_) if on_path(()) => Ok(()),
            Ok(o) => Err(String::from_utf8_lossy(&o.stderr).trim().to_owned()),
            Err(e) => Err(format!("cannot run {}: {e}", script.display())),
        }
    });
    if let Err(why) = result {
        panic!("{MISSING} ({why})");
    }
}

/// A port that was free a moment ago.
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind 127.0.0.1:0")
}

/// Starts `redis-server` on `port` and waits for its `PONG`; an error (with
/// the server's output) when it exits or does not answer in time.
pub(crate) fn spawn(dir: &Path, port: u16) -> Result<Child, String> {
    spawn_with(dir, port, &[])
}

/// [`spawn`] with `extra` arguments for `redis-server` (the cluster
/// fixture's `--cluster-enabled yes …`).
pub(crate) fn spawn_with(dir: &Path, port: u16, extra: &[&str]) -> Result<Child, String> {
    let mut child = Command::new(PROGRAM)
        .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
        .args(extra)
        .args(["--save", "", "--appendonly", "no"])
        .arg("--dir")
        .arg(dir)
        .args(["--daemonize", "no", "--protected-mode", "yes"])
        .arg("--logfile")
        .arg(dir.join("redis.log"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| match e.kind() {
            std::io::ErrorKind::NotFound => panic!("{MISSING}"),
            _ => panic!("cannot start {PROGRAM}: {e}"),
        });
    let deadline = Instant::now() + START_LIMIT;
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            let out = std::fs::read_to_string(dir.join("redis.log")).unwrap_or_default();
            return Err(format!("{PROGRAM} exited ({status}): {}", out.trim()));
        }
        if ping(port) {
            return Ok(child);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "{PROGRAM} did not answer PING within {START_LIMIT:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether a server on `port` answers `PING` with `+PONG`.
fn ping(port: u16) -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    s.write_all(b"PING\r\n").is_ok() && read_line(&mut s).is_ok_and(|l| l == "+PONG")
}

/// Reads one CRLF-terminated reply line (without the CRLF).
fn read_line(s: &mut TcpStream) -> std::io::Result<String> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while !line.ends_with(b"\r\n") {
        if s.read(&mut byte)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        line.push(byte[0]);
    }
    line.truncate(line.len() - 2);
    Ok(String::from_utf8_lossy(&line).into_owned())
}

/// A directory under the system's temporary directory, removed on drop.
#[derive(Debug)]
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new() -> TempDir {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "mcp-redis-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).expect("create the redis-server temp dir");
        TempDir(path)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
