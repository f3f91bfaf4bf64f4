//! The 2025-11-25 server: the session engine's [`SessionRevision`] for this
//! revision, carrying SEP-1699's settings.

use std::any::Any;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_session_engine::revision::{ConnectionPolicy, Polling, SessionRevision};
use mcp_session_engine::server::ServerConfig;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::handler::Handler;

use crate::VERSION;
use crate::policy::{DisconnectPolicy, PolicyState};
use crate::tasks::handler::TaskHandler;
use crate::tasks::{Tasks, TasksConfig};

/// The default [`Revision::retry_ms`]: 1000 ms.
pub const DEFAULT_RETRY_MS: u64 = 1000;

/// The default [`Revision::resume_hold`]: 10 s.
///
/// Why 10 s: long enough to turn an idle pending request's polling from one
/// request per `retry` into about one per 11 s; shorter than the 15 s
/// keep-alive (a held poll needs no keep-alive comment) and well below the
/// 60 s idle timeouts of common proxies and load balancers (nginx
/// `proxy_read_timeout`, cloud load balancers) and the TypeScript SDK's
/// default request timeout.
pub const DEFAULT_RESUME_HOLD: Duration = Duration::from_secs(10);

/// Revision 2025-11-25 as the session engine asks it: batches gone,
/// `MCP-Protocol-Version` and elicitation defined, and SEP-1699 polling —
/// every new SSE stream primed, connections closed early by
/// [`disconnect`](Self::disconnect) (or `close_sse_stream`) after
/// `retry: retry_ms`; and, when [`tasks`](Self::tasks) is set, the
/// experimental tasks (see the [`tasks`](crate::tasks) module).
#[derive(Clone, Debug)]
pub struct Revision {
    /// When connections close before their stream ends. Default
    /// [`DisconnectPolicy::Never`].
    pub disconnect: DisconnectPolicy,
    /// The `retry` value sent before such a close (*Transports*, "Sending
    /// Messages to the Server" 6: "it SHOULD send an SSE event with a
    /// standard `retry` field before closing the connection"). Default
    /// [`DEFAULT_RETRY_MS`].
    pub retry_ms: u64,
    /// Under [`DisconnectPolicy::AfterPriming`], how long a resumed
    /// connection that finds nothing new is held open waiting for something
    /// (a long-poll) before it closes with `retry`. Default
    /// [`DEFAULT_RESUME_HOLD`]; zero closes such a poll at once.
    pub resume_hold: Duration,
    /// 2025-11-25's experimental tasks (SEP-1686), served when set (set it
    /// with [`TasksExt::with_tasks`]). Default
    /// `None`: no `tasks` capability, and `tasks/*` go to the handler.
    pub tasks: Option<Arc<Tasks>>,
}

impl PartialEq for Revision {
    /// Equal settings; tasks are equal when they are the same state.
    fn eq(&self, other: &Self) -> bool {
        self.disconnect == other.disconnect
            && self.retry_ms == other.retry_ms
            && self.resume_hold == other.resume_hold
            && match (&self.tasks, &other.tasks) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
    }
}

impl Default for Revision {
    fn default() -> Self {
        Revision {
            disconnect: DisconnectPolicy::Never,
            retry_ms: DEFAULT_RETRY_MS,
            resume_hold: DEFAULT_RESUME_HOLD,
            tasks: None,
        }
    }
}

impl SessionRevision for Revision {
    fn version(&self) -> ProtocolVersion {
        VERSION
    }

    fn polling(&self) -> Option<&dyn Polling> {
        Some(self)
    }

    fn session_handler(&self, server: Arc<dyn Handler>, session_id: &Arc<str>) -> Arc<dyn Handler> {
        match &self.tasks {
            Some(tasks) => Arc::new(TaskHandler {
                inner: server,
                tasks: tasks.clone(),
                session: session_id.clone(),
            }),
            None => server,
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Polling for Revision {
    fn retry_ms(&self) -> u64 {
        self.retry_ms
    }

    fn connection(&self, now: Instant, resuming: bool) -> Box<dyn ConnectionPolicy> {
        Box::new(PolicyState::new(
            self.disconnect,
            now,
            resuming,
            self.resume_hold,
        ))
    }
}

/// SEP-1699's settings on an engine [`ServerConfig`]: they change this
/// revision's implementation in [`ServerConfig::revisions`] (adding it when
/// missing; whether 2025-11-25 is *served* is still
/// [`ServerConfig::versions`]).
pub trait PollingExt {
    /// This revision's settings in the config (the defaults when it has
    /// none).
    fn polling(&self) -> Revision;
    /// Sets [`Revision::disconnect`].
    fn with_disconnect(self, policy: DisconnectPolicy) -> Self;
    /// Sets [`Revision::retry_ms`].
    fn with_retry_ms(self, ms: u64) -> Self;
    /// Sets [`Revision::resume_hold`].
    fn with_resume_hold(self, hold: Duration) -> Self;
}

impl PollingExt for ServerConfig {
    fn polling(&self) -> Revision {
        self.revision(&VERSION)
            .and_then(|r| r.as_any().downcast_ref::<Revision>().cloned())
            .unwrap_or_default()
    }

    fn with_disconnect(self, policy: DisconnectPolicy) -> Self {
        let r = Revision {
            disconnect: policy,
            ..self.polling()
        };
        self.with_revision(Arc::new(r))
    }

    fn with_retry_ms(self, ms: u64) -> Self {
        let r = Revision {
            retry_ms: ms,
            ..self.polling()
        };
        self.with_revision(Arc::new(r))
    }

    fn with_resume_hold(self, hold: Duration) -> Self {
        let r = Revision {
            resume_hold: hold,
            ..self.polling()
        };
        self.with_revision(Arc::new(r))
    }
}

/// Tasks settings on an engine [`ServerConfig`]: they change this
/// revision's implementation in [`ServerConfig::revisions`] (adding it when
/// missing), keeping its SEP-1699 settings.
pub trait TasksExt {
    /// Serves 2025-11-25's experimental tasks with these settings.
    fn with_tasks(self, config: TasksConfig) -> Self;
}

impl TasksExt for ServerConfig {
    fn with_tasks(self, config: TasksConfig) -> Self {
        let r = Revision {
            tasks: Some(Arc::new(Tasks::new(config))),
            ..self.polling()
        };
        self.with_revision(Arc::new(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_replace_the_implementation_and_keep_the_other() {
        let c = ServerConfig::default()
            .with_retry_ms(50)
            .with_disconnect(DisconnectPolicy::AfterEvents(2));
        assert_eq!(c.revisions.len(), 1);
        assert_eq!(
            c.polling(),
            Revision {
                disconnect: DisconnectPolicy::AfterEvents(2),
                retry_ms: 50,
                resume_hold: DEFAULT_RESUME_HOLD,
                tasks: None,
            }
        );
        let r = c.revision(&VERSION).unwrap();
        assert_eq!(r.polling().map(|p| p.retry_ms()), Some(50));
        assert!(!r.batches() && r.version_header() && r.elicitation());
    }

    /// `Revision`'s equality: each setting compared, tasks by identity.
    #[test]
    fn equality_compares_each_setting_and_tasks_by_identity() {
        let base = Revision::default();
        assert_eq!(base, Revision::default());
        let changed = [
            Revision {
                disconnect: DisconnectPolicy::AfterPriming,
                ..Revision::default()
            },
            Revision {
                retry_ms: DEFAULT_RETRY_MS + 1,
                ..Revision::default()
            },
            Revision {
                resume_hold: Duration::ZERO,
                ..Revision::default()
            },
        ];
        for other in &changed {
            assert_ne!(&base, other);
            assert_ne!(other, &base);
        }
        let tasks = Arc::new(Tasks::new(TasksConfig::default()));
        let with = Revision {
            tasks: Some(tasks.clone()),
            ..Revision::default()
        };
        assert_ne!(base, with, "no tasks and tasks");
        assert_ne!(with, base);
        let same = Revision {
            tasks: Some(tasks),
            ..Revision::default()
        };
        assert_eq!(with, same, "the same tasks state");
        let other = Revision {
            tasks: Some(Arc::new(Tasks::new(TasksConfig::default()))),
            ..Revision::default()
        };
        assert_ne!(with, other, "equal settings, another state");
    }
}
