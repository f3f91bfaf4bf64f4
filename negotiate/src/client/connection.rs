//! [`Connection`]: one [`Transport`] whatever revision was negotiated.

use async_trait::async_trait;
use mcp_rev_2026_07_28::client::ModernClient;
use mcp_session_engine::client::LegacyClient;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::jsonrpc::Notification;
use mcp_transport_core::transport::{
    ListenFilter, Negotiated, RequestOptions, ResponseStream, ServerMessages, Transport,
    TransportError,
};
use serde_json::value::RawValue;

use super::cache::EraCache;
use super::http_sse::HttpSseClient;
use super::probe::{Verdict, classify};

/// The engine under a [`Connection`].
#[derive(Clone, Debug)]
pub enum Underlying {
    /// 2026-07-28 (stateless).
    Modern(ModernClient),
    /// 2025-03-26, 2025-06-18 or 2025-11-25 (sessions).
    Legacy(LegacyClient),
    /// 2024-11-05 over the deprecated HTTP+SSE transport.
    HttpSse(HttpSseClient),
}

impl Underlying {
    fn transport(&self) -> &dyn Transport {
        match self {
            Underlying::Modern(c) => c,
            Underlying::Legacy(c) => c,
            Underlying::HttpSse(c) => c,
        }
    }
}

/// A negotiated connection: use it as a [`Transport`]; ask
/// [`Transport::negotiated`] which revision and era were chosen and why.
#[derive(Clone, Debug)]
pub struct Connection {
    inner: Underlying,
    reason: String,
    cache: Option<(EraCache, String)>,
}

impl Connection {
    pub(crate) fn new(inner: Underlying, reason: String) -> Self {
        Connection {
            inner,
            reason,
            cache: None,
        }
    }

    pub(crate) fn set_reason(&mut self, reason: String) {
        self.reason = reason;
    }

    pub(crate) fn attach_cache(&mut self, cache: EraCache, origin: String) {
        self.cache = Some((cache, origin));
    }

    pub(crate) fn negotiated_revision(&self) -> ProtocolVersion {
        self.inner.transport().revision()
    }

    /// The engine underneath, for revision-specific calls.
    pub fn underlying(&self) -> &Underlying {
        &self.inner
    }

    /// Follows the task `task_id` to its end on whichever era was
    /// negotiated — `ModernClient::resume_task` (2026-07-28 Tasks
    /// extension) or `LegacyClient::resume_task` (2025-11-25 experimental
    /// tasks, in the session that created the task) — for a caller that
    /// [detached](ResponseStream::detach_task) a task and kept its id.
    ///
    /// # Errors
    ///
    /// [`TransportError::Unsupported`] on 2024-11-05 (HTTP+SSE), which has
    /// no tasks; otherwise what the engine's `resume_task` returns.
    pub async fn resume_task(&self, task_id: &str) -> Result<ResponseStream, TransportError> {
        match &self.inner {
            Underlying::Modern(c) => c.resume_task(task_id).await,
            Underlying::Legacy(c) => c.resume_task(task_id).await,
            Underlying::HttpSse(c) => Err(TransportError::Unsupported {
                revision: c.revision(),
                what: "tasks (2024-11-05 has none)",
            }),
        }
    }

    /// Forgets the cached era when an error shows the cached assumption no
    /// longer holds: a 4xx that is not an error of the era in use (a server
    /// that changed era answers requests of the old one this way).
    fn check(&self, error: &TransportError) {
        let Some((cache, origin)) = &self.cache else {
            return;
        };
        let stale = match (&self.inner, classify(error)) {
            (Underlying::Modern(_), Verdict::Legacy { status }) => status >= 400,
            (Underlying::Legacy(_) | Underlying::HttpSse(_), Verdict::Modern) => true,
            (_, Verdict::Legacy { status: 404 | 405 }) => true,
            _ => false,
        };
        if stale {
            tracing::debug!(%origin, %error, "cached era stopped working; forgetting it");
            cache.forget(origin);
        }
    }
}

#[async_trait]
impl Transport for Connection {
    fn revision(&self) -> ProtocolVersion {
        self.inner.transport().revision()
    }

    fn negotiated(&self) -> Negotiated {
        let revision = self.revision();
        Negotiated::new(revision, self.reason.clone())
    }

    async fn request(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
        options: RequestOptions,
    ) -> Result<ResponseStream, TransportError> {
        let r = self
            .inner
            .transport()
            .request(method, params, options)
            .await;
        if let Err(e) = &r {
            self.check(e);
        }
        r
    }

    async fn notify(&self, notification: Notification) -> Result<(), TransportError> {
        self.inner.transport().notify(notification).await
    }

    async fn listen(&self, filter: ListenFilter) -> Result<ServerMessages, TransportError> {
        self.inner.transport().listen(filter).await
    }

    async fn close(&self) -> Result<(), TransportError> {
        self.inner.transport().close().await
    }
}
