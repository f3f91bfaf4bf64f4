//! A loopback TCP proxy that can cut every live connection at once: the
//! "network drop" of the matrix. New connections keep working after a cut,
//! as after a real network blip.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

/// Most connections tracked at once; older finished ones are pruned.
const MAX_TRACKED: usize = 512;

/// A running proxy; stops when dropped.
#[derive(Debug)]
pub struct Proxy {
    addr: SocketAddr,
    live: Arc<Mutex<Vec<AbortHandle>>>,
    accept: AbortHandle,
}

impl Proxy {
    /// Starts a proxy on 127.0.0.1:0 forwarding to `target` (a loopback address).
    pub async fn start(target: SocketAddr) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let live: Arc<Mutex<Vec<AbortHandle>>> = Arc::default();
        let tracked = live.clone();
        let accept = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let _ = inbound.set_nodelay(true);
                let task = tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(target).await {
                        let _ = outbound.set_nodelay(true);
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                let mut live = tracked.lock().unwrap_or_else(|e| e.into_inner());
                live.retain(|h| !h.is_finished());
                if live.len() >= MAX_TRACKED {
                    task.abort();
                } else {
                    live.push(task.abort_handle());
                }
            }
        })
        .abort_handle();
        Ok(Proxy { addr, live, accept })
    }

    /// The proxy's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Cuts every live connection (both directions close at once).
    /// Returns how many were cut.
    pub fn cut(&self) -> usize {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        let n = live.iter().filter(|h| !h.is_finished()).count();
        for h in live.drain(..) {
            h.abort();
        }
        n
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}
