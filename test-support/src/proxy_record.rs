//! What a recorded [`Proxy`](crate::Proxy) saw of each connection: when it
//! was accepted, connected upstream, when bytes first and last went each
//! way, and how it ended — to tell where a request that got no answer
//! stopped (client, proxy or server).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Most connection records kept (the oldest go first).
const MAX_RECORDS: usize = 4096;

/// How much of each connection's first bytes a record keeps.
pub const HEAD_BYTES: usize = 512;

/// One connection as the proxy saw it.
#[derive(Clone, Debug)]
pub struct ConnRecord {
    /// The client's address.
    pub peer: SocketAddr,
    /// When the proxy accepted it.
    pub accepted: Instant,
    /// When the upstream connection was made.
    pub upstream: Option<Instant>,
    /// Client → server: bytes, and when the first and last went.
    pub up: Flow,
    /// The first bytes the client sent (up to [`HEAD_BYTES`]): its
    /// request line and headers, to tell which request it was.
    pub head: Vec<u8>,
    /// Server → client.
    pub down: Flow,
    /// When the connection's task ended, and whether by a cut (or a
    /// failed upstream connect) rather than both sides closing.
    pub ended: Option<(Instant, bool)>,
}

/// Bytes forwarded one way.
#[derive(Clone, Copy, Debug, Default)]
pub struct Flow {
    /// How many.
    pub bytes: u64,
    /// When the first went.
    pub first: Option<Instant>,
    /// When the last went.
    pub last: Option<Instant>,
    /// When that side closed its half.
    pub eof: Option<Instant>,
}

impl Flow {
    fn add(&mut self, n: usize) {
        let now = Instant::now();
        self.bytes += n as u64;
        self.first.get_or_insert(now);
        self.last = Some(now);
    }
}

type Shared = Arc<Mutex<ConnRecord>>;

/// The records of one proxy.
#[derive(Clone, Debug, Default)]
pub(crate) struct Recorder {
    records: Arc<Mutex<VecDeque<Shared>>>,
}

impl Recorder {
    pub(crate) fn open(&self, peer: SocketAddr) -> Shared {
        let record = Arc::new(Mutex::new(ConnRecord {
            peer,
            accepted: Instant::now(),
            upstream: None,
            up: Flow::default(),
            head: Vec::new(),
            down: Flow::default(),
            ended: None,
        }));
        let mut all = lock(&self.records);
        if all.len() == MAX_RECORDS {
            all.pop_front();
        }
        all.push_back(record.clone());
        record
    }

    pub(crate) fn since(&self, since: Instant) -> Vec<ConnRecord> {
        lock(&self.records)
            .iter()
            .map(|r| lock(r).clone())
            .filter(|r| r.accepted >= since)
            .collect()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Marks the record ended when the connection's task ends: by a cut (the
/// task aborted, while connecting upstream or forwarding) unless
/// [`forward`] returned first.
pub(crate) struct EndGuard(Shared);

impl EndGuard {
    pub(crate) fn new(record: Shared) -> EndGuard {
        EndGuard(record)
    }
}

impl Drop for EndGuard {
    fn drop(&mut self) {
        let mut r = lock(&self.0);
        if r.ended.is_none() {
            r.ended = Some((Instant::now(), true));
        }
    }
}

/// Forwards both ways, recording each read.
pub(crate) async fn forward(inbound: TcpStream, outbound: TcpStream, record: Shared) {
    lock(&record).upstream = Some(Instant::now());
    let (mut ci, mut co) = inbound.into_split();
    let (mut si, mut so) = outbound.into_split();
    let up = copy(&mut ci, &mut so, &record, true);
    let down = copy(&mut si, &mut co, &record, false);
    let _ = tokio::join!(up, down);
    lock(&record).ended = Some((Instant::now(), false));
}

async fn copy(
    from: &mut (impl AsyncReadExt + Unpin),
    to: &mut (impl AsyncWriteExt + Unpin),
    record: &Shared,
    up: bool,
) -> std::io::Result<()> {
    let mut buf = vec![0u8; 8192];
    loop {
        let n = from.read(&mut buf).await?;
        {
            let mut r = lock(record);
            let flow = if up { &mut r.up } else { &mut r.down };
            if n == 0 {
                flow.eof = Some(Instant::now());
            } else {
                flow.add(n);
                if up && r.head.len() < HEAD_BYTES {
                    let take = n.min(HEAD_BYTES - r.head.len());
                    r.head.extend_from_slice(&buf[..take]);
                }
            }
        }
        if n == 0 {
            return to.shutdown().await;
        }
        to.write_all(&buf[..n]).await?;
    }
}
