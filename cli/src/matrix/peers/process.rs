//! Peer programs as child processes: servers on a free 127.0.0.1 port,
//! killed when dropped; clients bounded by a timeout, their last stdout
//! line read as the outcome.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use mcp_transport_core::ProtocolVersion;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, Command};

use super::super::harness::Observed;
use super::manifest::fill;
use super::outcome::{PeerObserved, from_client_line};

/// How long a peer server may take to accept connections.
pub const SERVER_START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one client scenario may take before it is killed.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(40);
/// The most stdout/stderr kept from a client (a bound on a noisy peer).
const MAX_OUTPUT: u64 = 256 * 1024;

/// A running peer server; killed on drop (its `Child` is spawned with
/// `kill_on_drop`).
pub struct PeerServer {
    /// Held so the process lives as long as this.
    _child: Child,
    /// Its MCP endpoint.
    pub url: String,
    /// Its address.
    pub addr: std::net::SocketAddr,
}

/// A free port on 127.0.0.1 (bound, then released for the child to bind).
async fn free_port() -> std::io::Result<u16> {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    Ok(l.local_addr()?.port())
}

fn command(argv: &[String], root: &Path) -> Result<Command, String> {
    let (program, args) = argv.split_first().ok_or("an empty command")?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(root)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    Ok(cmd)
}

/// Starts a server from its filled-in argv (`make` gets the port) and
/// waits until it accepts connections on 127.0.0.1.
pub async fn start_server(
    make: impl Fn(u16) -> Vec<String>,
    root: &Path,
) -> Result<PeerServer, String> {
    let port = free_port()
        .await
        .map_err(|e| format!("no free port: {e}"))?;
    let argv = make(port);
    let mut child = command(&argv, root)?
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {argv:?}: {e}"))?;
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let deadline = tokio::time::Instant::now() + SERVER_START_TIMEOUT;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("{argv:?} exited at start: {status}"));
        }
        if tokio::net::TcpStream::connect(addr).await.is_ok() {
            break;
        }
        if tokio::time::Instant::now() >= deadline {
            let _ = child.start_kill();
            return Err(format!(
                "{argv:?} did not accept connections within {SERVER_START_TIMEOUT:?}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(PeerServer {
        _child: child,
        url: format!("http://{addr}/mcp"),
        addr,
    })
}

/// Runs a client to the end (killed after [`CLIENT_TIMEOUT`]); its last
/// non-empty stdout line, or why there is none.
pub async fn run_client(argv: &[String], root: &Path) -> Result<String, String> {
    let mut child = command(argv, root)?
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {argv:?}: {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let read = async {
        let mut last = None;
        let mut lines = BufReader::new(stdout.take(MAX_OUTPUT)).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if !line.trim().is_empty() {
                last = Some(line);
            }
        }
        let mut err = String::new();
        let _ = stderr.take(MAX_OUTPUT).read_to_string(&mut err).await;
        let status = child.wait().await;
        (last, err, status)
    };
    match tokio::time::timeout(CLIENT_TIMEOUT, read).await {
        Ok((Some(line), _, _)) => Ok(line),
        Ok((None, err, status)) => Err(format!(
            "the client printed no outcome (exit {}): {}",
            status.map(|s| s.to_string()).unwrap_or_default(),
            err.lines().rev().take(3).collect::<Vec<_>>().join(" | ")
        )),
        Err(_) => Err(format!(
            "hung: no outcome within {CLIENT_TIMEOUT:?} (killed)"
        )),
    }
}

/// Runs a client program on the peer client contract: `template` with
/// `{url}`, `{scenario}` and `{revision}` filled in, its last line read as
/// the outcome (one that printed none failed, and says why).
pub async fn run_contract_client(
    template: &[String],
    url: &str,
    scenario: &str,
    revision: &str,
    root: &Path,
) -> (Option<ProtocolVersion>, PeerObserved) {
    let argv = fill(
        template,
        &[("url", url), ("scenario", scenario), ("revision", revision)],
    );
    match run_client(&argv, root).await {
        Ok(line) => from_client_line(&line),
        Err(why) => (
            None,
            PeerObserved::Ran(Observed::Failed {
                kind: None,
                message: why,
            }),
        ),
    }
}

/// Runs a peer's install command once (it is idempotent), echoing its
/// output to stderr.
pub async fn install(argv: &[String], root: &Path) -> Result<(), String> {
    if argv.is_empty() {
        return Ok(());
    }
    let status = command(argv, root)?
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .status()
        .await
        .map_err(|e| format!("cannot run {argv:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{argv:?} failed: {status}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| (*a).to_owned()).collect()
    }

    #[tokio::test]
    async fn a_client_s_outcome_is_its_last_non_empty_line() {
        let root = std::env::temp_dir();
        let out = run_client(
            &argv(&["sh", "-c", "echo first; echo; echo last; echo '  '"]),
            &root,
        )
        .await;
        assert_eq!(out.as_deref(), Ok("last"));
        // It runs in the root it is given.
        let pwd = run_client(&argv(&["sh", "-c", "pwd -P"]), &root).await;
        let canonical = std::fs::canonicalize(&root).expect("canonical");
        assert_eq!(pwd.as_deref(), Ok(canonical.to_str().expect("UTF-8")));
    }

    #[tokio::test]
    async fn a_client_without_an_outcome_says_how_it_ended() {
        let root = std::env::temp_dir();
        let err = run_client(
            &argv(&["sh", "-c", "echo one >&2; echo two >&2; echo '' ; exit 3"]),
            &root,
        )
        .await
        .expect_err("no outcome");
        assert!(
            err.starts_with("the client printed no outcome (exit "),
            "{err}"
        );
        assert!(err.contains('3') && err.ends_with("two | one"), "{err}");
        let err = run_client(&argv(&["/nonexistent/peer"]), &root)
            .await
            .expect_err("no program");
        assert!(err.starts_with("cannot start"), "{err}");
        assert_eq!(
            run_client(&[], &root).await,
            Err("an empty command".to_owned())
        );
    }

    #[tokio::test]
    async fn a_contract_client_gets_its_url_scenario_and_revision() {
        let root = std::env::temp_dir();
        let template = argv(&[
            "sh",
            "-c",
            r#"printf '{"outcome":"pass","reason":"%s %s","revision":"%s"}\n' "$1" "$2" "$3""#,
            "client",
            "{url}",
            "{scenario}",
            "{revision}",
        ]);
        let (rev, observed) =
            run_contract_client(&template, "http://u/mcp", "call", "2025-11-25", &root).await;
        assert_eq!(rev, Some(ProtocolVersion::V2025_11_25));
        assert_eq!(
            observed,
            PeerObserved::Ran(Observed::Works("http://u/mcp call".into()))
        );
        let (rev, observed) =
            run_contract_client(&argv(&["true"]), "u", "call", "2025-11-25", &root).await;
        assert_eq!(rev, None);
        let PeerObserved::Ran(Observed::Failed {
            kind: None,
            message,
        }) = observed
        else {
            panic!("{observed:?}");
        };
        assert!(
            message.starts_with("the client printed no outcome"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn install_succeeds_only_when_its_command_does() {
        let root = std::env::temp_dir();
        assert_eq!(install(&[], &root).await, Ok(()));
        assert_eq!(install(&argv(&["true"]), &root).await, Ok(()));
        let err = install(&argv(&["false"]), &root)
            .await
            .expect_err("false fails");
        assert!(err.starts_with("[\"false\"] failed: "), "{err}");
        let err = install(&argv(&["/nonexistent/install"]), &root)
            .await
            .expect_err("no program");
        assert!(err.starts_with("cannot run"), "{err}");
    }

    #[tokio::test]
    async fn a_server_is_ready_when_its_port_accepts_and_fails_when_it_exits() {
        let root = std::env::temp_dir();
        let err = start_server(|_| argv(&["sh", "-c", "exit 4"]), &root)
            .await
            .err()
            .expect("an exiting server");
        assert!(
            err.contains("exited at start") && err.contains('4'),
            "{err}"
        );
        // A "server" that only sleeps, on the port this test listens on:
        // ready once a connection to it succeeds.
        let listener = std::sync::Mutex::new(None);
        let server = start_server(
            |port| {
                let l = std::net::TcpListener::bind(("127.0.0.1", port)).expect("the port is free");
                *listener.lock().expect("lock") = Some(l);
                argv(&["sleep", "30"])
            },
            &root,
        )
        .await
        .expect("ready");
        let port = listener
            .lock()
            .expect("lock")
            .as_ref()
            .and_then(|l| l.local_addr().ok())
            .expect("bound")
            .port();
        assert_eq!(server.addr.port(), port);
        assert_eq!(server.url, format!("http://127.0.0.1:{port}/mcp"));
        // A second server while the first runs gets a port of its own.
        let other = start_server(
            |port| {
                let l = std::net::TcpListener::bind(("127.0.0.1", port)).expect("the port is free");
                std::mem::forget(l);
                argv(&["sleep", "30"])
            },
            &root,
        )
        .await
        .expect("ready");
        assert_ne!(other.addr.port(), port);
        // Dropped, the process is killed (gone, or a zombie until reaped).
        let pid = server._child.id().expect("running");
        drop(server);
        let stat = format!("/proc/{pid}/stat");
        let mut dead = false;
        for _ in 0..100 {
            dead = std::fs::read_to_string(&stat).map_or(true, |s| s.contains(") Z "));
            if dead {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(dead, "pid {pid} still runs after its server was dropped");
    }

    #[tokio::test]
    async fn a_noisy_client_s_outcome_is_still_read() {
        let root = std::env::temp_dir();
        let out = run_client(
            &argv(&[
                "sh",
                "-c",
                "head -c 100000 /dev/zero | tr '\\0' x; echo; echo last",
            ]),
            &root,
        )
        .await;
        assert_eq!(out.as_deref(), Ok("last"));
    }
}
