//! [`ConnLimits`]: the per-connection bounds of [`serve`](super::serve),
//! and whether its requests carry the peer's address.

use std::time::Duration;

/// The default [`ConnLimits::header_read_timeout`]: 30 s (hyper's own
/// default; nginx's `client_header_timeout` is 60 s).
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// The default [`ConnLimits::body_read_timeout`]: 60 s between two reads
/// (nginx's `client_body_timeout`).
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(60);
/// The default [`ConnLimits::idle_timeout`]: 60 s (nginx's
/// `keepalive_timeout` is 75 s, Go's `IdleTimeout` is commonly 60 s).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// The default [`ConnLimits::write_timeout`]: 60 s (nginx's
/// `send_timeout`).
pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(60);
/// The default [`ConnLimits::max_connections`]: 768, below the common
/// 1,024 open-file limit so the process keeps descriptors for its own use.
pub const DEFAULT_MAX_CONNECTIONS: usize = 768;
/// The default [`ConnLimits::shutdown_grace`]: 10 s (Kubernetes gives a pod
/// 30 s between SIGTERM and SIGKILL; this leaves room for the rest).
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// What one client connection may cost: how long it may take to send a
/// request, how long it may sit idle, and how many connections are served
/// at once. Every bound closes or refuses with the reason in the Limits
/// table of `docs/DESIGN.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnLimits {
    /// From accepting a connection to the end of its first request head. A
    /// connection that sends nothing, or trickles its head, is closed
    /// (without an answer) when it passes.
    pub header_read_timeout: Duration,
    /// The longest wait for the next piece of a request body. When it
    /// passes, the body read fails, the engines answer 408 Request Timeout,
    /// and the connection is closed.
    pub body_read_timeout: Duration,
    /// From the end of a response (no request in flight on the connection)
    /// to the end of the next request head. An idle keep-alive connection is
    /// closed when it passes. A response still streaming (an SSE stream)
    /// is not idle.
    pub idle_timeout: Duration,
    /// The longest a write to the client may stay blocked (the client
    /// takes nothing: it stopped reading). The connection is then closed,
    /// which drops the response body: a session's SSE stream is detached
    /// and its events wait in the event log for a resume.
    pub write_timeout: Duration,
    /// Connections served at once. The excess waits in the kernel's accept
    /// queue (it is not accepted, so it costs no descriptor) until a served
    /// connection closes; accepted connections are served meanwhile.
    pub max_connections: usize,
    /// After a graceful shutdown begins
    /// ([`serve_with_shutdown`](super::serve_with_shutdown)), how long the
    /// connections still open may take to finish their requests; those
    /// still open then are closed.
    pub shutdown_grace: Duration,
    /// Whether each request carries the peer's address in its extensions,
    /// as axum's `ConnectInfo<SocketAddr>` (where axum's `ConnectInfo`
    /// extractor and a handler's `RequestContext::http` find it). On by
    /// default. A server whose handlers never read it can turn it off:
    /// a request's extension map is allocated for it alone when nothing
    /// else is inserted, ~600 instructions a stateless request and more on
    /// a session, where the engines keep a copy of the extensions
    /// (`docs/PERFORMANCE.md`, session 28). `mcp-compat serve` turns it
    /// off: its handler does not read it.
    pub peer_address: bool,
}

impl Default for ConnLimits {
    fn default() -> Self {
        ConnLimits {
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            write_timeout: DEFAULT_WRITE_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            peer_address: true,
        }
    }
}

impl ConnLimits {
    /// Sets [`header_read_timeout`](Self::header_read_timeout).
    pub fn with_header_read_timeout(mut self, t: Duration) -> Self {
        self.header_read_timeout = t;
        self
    }

    /// Sets [`body_read_timeout`](Self::body_read_timeout).
    pub fn with_body_read_timeout(mut self, t: Duration) -> Self {
        self.body_read_timeout = t;
        self
    }

    /// Sets [`idle_timeout`](Self::idle_timeout).
    pub fn with_idle_timeout(mut self, t: Duration) -> Self {
        self.idle_timeout = t;
        self
    }

    /// Sets [`write_timeout`](Self::write_timeout).
    pub fn with_write_timeout(mut self, t: Duration) -> Self {
        self.write_timeout = t;
        self
    }

    /// Sets [`max_connections`](Self::max_connections) (at least 1).
    pub fn with_max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// Sets [`shutdown_grace`](Self::shutdown_grace).
    pub fn with_shutdown_grace(mut self, t: Duration) -> Self {
        self.shutdown_grace = t;
        self
    }

    /// Sets [`peer_address`](Self::peer_address).
    pub fn with_peer_address(mut self, on: bool) -> Self {
        self.peer_address = on;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults() {
        let d = ConnLimits::default();
        let secs = |t: Duration| t.as_secs();
        assert_eq!(secs(d.header_read_timeout), 30);
        assert_eq!(secs(d.body_read_timeout), 60);
        assert_eq!(secs(d.idle_timeout), 60);
        assert_eq!(secs(d.write_timeout), 60);
        assert_eq!(d.max_connections, 768);
        assert_eq!(secs(d.shutdown_grace), 10);
        assert!(d.peer_address);
    }

    /// Each setter sets its own field and no other.
    #[test]
    fn each_setter_sets_its_field() {
        let t = Duration::from_millis(7);
        let d = ConnLimits::default();
        assert_eq!(
            d.with_header_read_timeout(t),
            ConnLimits {
                header_read_timeout: t,
                ..d
            }
        );
        assert_eq!(
            d.with_body_read_timeout(t),
            ConnLimits {
                body_read_timeout: t,
                ..d
            }
        );
        assert_eq!(
            d.with_idle_timeout(t),
            ConnLimits {
                idle_timeout: t,
                ..d
            }
        );
        assert_eq!(
            d.with_write_timeout(t),
            ConnLimits {
                write_timeout: t,
                ..d
            }
        );
        assert_eq!(
            d.with_shutdown_grace(t),
            ConnLimits {
                shutdown_grace: t,
                ..d
            }
        );
        assert_eq!(
            d.with_max_connections(3),
            ConnLimits {
                max_connections: 3,
                ..d
            }
        );
        assert_eq!(d.with_max_connections(0).max_connections, 1);
        assert_eq!(
            d.with_peer_address(false),
            ConnLimits {
                peer_address: false,
                ..d
            }
        );
    }
}
