//! A loopback TCP proxy that can cut every live connection at once: the
//! "network drop" of the matrix and of the resumption tests. New
//! connections keep working after a cut, as after a real network blip.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use crate::proxy_record::{ConnRecord, Recorder};

/// Most connections tracked at once; finished ones are pruned first, and a
/// connection beyond the bound is refused (closed at once).
const MAX_TRACKED: usize = 512;

/// A running proxy; stops (and drops every connection) when dropped.
#[derive(Debug)]
pub struct Proxy {
    addr: SocketAddr,
    live: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accepted: Arc<AtomicUsize>,
    accept: JoinHandle<()>,
    recorder: Option<Recorder>,
}

impl Proxy {
    /// Starts a proxy on 127.0.0.1:0 forwarding to `target` (a loopback
    /// address). Both sockets of every connection get `TCP_NODELAY`.
    pub async fn start(target: SocketAddr) -> std::io::Result<Proxy> {
        Self::start_with(target, None).await
    }

    /// [`start`](Self::start), and remember what went through each of the
    /// last connections and when ([`records_since`](Self::records_since)):
    /// for tests that must tell where a request that got no answer
    /// stopped. Forwards with its own copy loops (slower than `start`'s).
    pub async fn start_recorded(target: SocketAddr) -> std::io::Result<Proxy> {
        Self::start_with(target, Some(Recorder::default())).await
    }

    async fn start_with(target: SocketAddr, recorder: Option<Recorder>) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let live: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let accepted = Arc::new(AtomicUsize::new(0));
        let accept = {
            let live = live.clone();
            let accepted = accepted.clone();
            let recorder = recorder.clone();
            tokio::spawn(async move {
                while let Ok((mut inbound, peer)) = listener.accept().await {
                    accepted.fetch_add(1, Ordering::SeqCst);
                    let _ = inbound.set_nodelay(true);
                    let record = recorder.as_ref().map(|r| r.open(peer));
                    let conn = tokio::spawn(async move {
                        let _ended = record.clone().map(crate::proxy_record::EndGuard::new);
                        let Ok(mut outbound) = TcpStream::connect(target).await else {
                            return;
                        };
                        let _ = outbound.set_nodelay(true);
                        match record {
                            Some(record) => {
                                crate::proxy_record::forward(inbound, outbound, record).await
                            }
                            None => {
                                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound)
                                    .await;
                            }
                        }
                    });
                    let mut live = live.lock().unwrap_or_else(|e| e.into_inner());
                    live.retain(|h| !h.is_finished());
                    if live.len() >= MAX_TRACKED {
                        conn.abort();
                    } else {
                        live.push(conn);
                    }
                }
            })
        };
        Ok(Proxy {
            addr,
            live,
            accepted,
            accept,
            recorder,
        })
    }

    /// The proxy's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The MCP endpoint (`/mcp`) through the proxy.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Cuts every live connection (both directions close at once) and
    /// returns how many were live. The sockets close as soon as the
    /// runtime drops the aborted tasks; [`cut_and_wait`](Self::cut_and_wait)
    /// also waits for that.
    pub fn cut(&self) -> usize {
        let conns = self.take_live();
        let live = conns.iter().filter(|h| !h.is_finished()).count();
        for conn in &conns {
            conn.abort();
        }
        live
    }

    /// Cuts every live connection and returns once their sockets are
    /// closed, so nothing more goes through them; returns how many were
    /// live. New connections are forwarded again.
    pub async fn cut_and_wait(&self) -> usize {
        let conns = self.take_live();
        let live = conns.iter().filter(|h| !h.is_finished()).count();
        for conn in conns {
            conn.abort();
            let _ = conn.await;
        }
        live
    }

    /// What a [`start_recorded`](Self::start_recorded) proxy saw of the
    /// connections it accepted at or after `since` (empty otherwise).
    pub fn records_since(&self, since: std::time::Instant) -> Vec<ConnRecord> {
        self.recorder
            .as_ref()
            .map_or_else(Vec::new, |r| r.since(since))
    }

    /// How many connections were accepted so far (cut or not).
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    fn take_live(&self) -> Vec<JoinHandle<()>> {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        live.drain(..).collect()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}
