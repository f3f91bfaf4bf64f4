//! [`RedisCluster`]: a real three-master Redis Cluster for tests, started
//! from `redis-server` binaries on free loopback ports in a temporary
//! directory (no persistence), stopped on drop.
//!
//! Each node runs with `--cluster-enabled yes` and its own
//! `--cluster-config-file` in its own directory; `redis-cli --cluster
//! create … --cluster-replicas 0 --cluster-yes` assigns the 16 384 slots,
//! and the fixture waits (bounded by [`START_LIMIT`]) until every node
//! reports `cluster_state:ok`. A node's cluster bus listens on its port +
//! 10 000, so ports are picked where both are free.
//!
//! Like [`RedisServer`](crate::RedisServer), it runs
//! `scripts/ensure-redis.sh` where `redis-server` is missing and panics with
//! [`MISSING`](crate::redis::MISSING) if that did not help, so a test that
//! needs a cluster fails clearly rather than passing vacuously.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::redis::{START_LIMIT, TempDir, ensure_installed, free_port, spawn_with};

/// How many masters the cluster has.
pub const MASTERS: usize = 3;

/// A running Redis Cluster owned by a test.
#[derive(Debug)]
pub struct RedisCluster {
    nodes: Vec<(Child, u16)>,
    _dir: TempDir,
}

/// A port whose cluster bus port (+10 000) is free too.
fn cluster_port() -> u16 {
    loop {
        let port = free_port();
        if port <= 55_535 && TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return port;
        }
    }
}

/// Runs `redis-cli` with `args`; its stdout, or its stderr as the error.
fn cli(args: &[&str]) -> Result<String, String> {
    let out = Command::new("redis-cli")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run redis-cli: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "redis-cli {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

impl RedisCluster {
    /// Starts [`MASTERS`] nodes, creates the cluster and waits until every
    /// node says `cluster_state:ok`.
    ///
    /// # Panics
    ///
    /// When `redis-server` or `redis-cli` is missing, a node cannot be
    /// started, or the cluster does not become ready within
    /// [`START_LIMIT`] (three times that for the whole start).
    pub fn start() -> RedisCluster {
        ensure_installed();
        let dir = TempDir::new();
        let mut cluster = RedisCluster {
            nodes: Vec::new(),
            _dir: dir,
        };
        for i in 0..MASTERS {
            let node_dir = cluster._dir.path().join(format!("node{i}"));
            std::fs::create_dir_all(&node_dir).expect("create a node's directory");
            let mut last = String::new();
            let started = (0..5).find_map(|_| {
                let port = cluster_port();
                let extra = [
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-node-timeout",
                    "5000",
                ];
                match spawn_with(&node_dir, port, &extra) {
                    Ok(child) => Some((child, port)),
                    Err(e) => {
                        last = e;
                        None
                    }
                }
            });
            let node = started.unwrap_or_else(|| panic!("cannot start a cluster node: {last}"));
            cluster.nodes.push(node);
        }
        let addrs: Vec<String> = cluster.ports().map(|p| format!("127.0.0.1:{p}")).collect();
        let mut args = vec!["--cluster", "create"];
        args.extend(addrs.iter().map(String::as_str));
        args.extend(["--cluster-replicas", "0", "--cluster-yes"]);
        cli(&args).unwrap_or_else(|e| panic!("{e}"));
        let deadline = Instant::now() + START_LIMIT * 3;
        for port in cluster.ports().collect::<Vec<_>>() {
            loop {
                let info = cluster.node_command(port, &["CLUSTER", "INFO"]);
                if info.contains("cluster_state:ok") {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "node {port} not ready within {:?}: {info}",
                    START_LIMIT * 3
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        cluster
    }

    /// The nodes' ports.
    pub fn ports(&self) -> impl Iterator<Item = u16> + '_ {
        self.nodes.iter().map(|(_, p)| *p)
    }

    /// `redis+cluster://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3`: the
    /// stores' URL for this cluster.
    pub fn url(&self) -> String {
        let nodes: Vec<String> = self.ports().map(|p| format!("127.0.0.1:{p}")).collect();
        format!("redis+cluster://{}", nodes.join(","))
    }

    /// Runs one command on the node at `port` (no redirection) and returns
    /// `redis-cli`'s output, errors included (`CROSSSLOT …`, `MOVED …`).
    ///
    /// # Panics
    ///
    /// When `redis-cli` cannot be run.
    pub fn node_command(&self, port: u16, args: &[&str]) -> String {
        let port = port.to_string();
        let mut all = vec!["-p", port.as_str()];
        all.extend(args);
        match cli(&all) {
            Ok(out) | Err(out) => out,
        }
    }

    /// Runs one command through the cluster (`redis-cli -c`, following
    /// `MOVED`) from the first node and returns its output.
    pub fn command(&self, args: &[&str]) -> String {
        let mut all = vec!["-c"];
        all.extend(args);
        self.node_command(self.nodes[0].1, &all)
    }

    /// The number of keys over all nodes.
    pub fn dbsize(&self) -> u64 {
        self.ports()
            .map(|p| {
                self.node_command(p, &["DBSIZE"])
                    .trim()
                    .parse::<u64>()
                    .unwrap_or(0)
            })
            .sum()
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for (child, _) in &mut self.nodes {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
