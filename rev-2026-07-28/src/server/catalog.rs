//! The tools' `Mcp-Param-*` headers, learned from the handler's own
//! `tools/list`.
//!
//! To validate `Mcp-Param-{Name}` headers (*Streamable HTTP*, "Server
//! Behavior for Custom Headers") the server must know each tool's
//! `x-mcp-header` annotations. The handler is the only source of tool
//! definitions, so the transport calls the handler's `tools/list` (every
//! page) and keeps the result:
//!
//! * until a `notifications/tools/list_changed` is published
//!   ([`ModernServer::publish`](super::ModernServer::publish)) or
//!   [`ModernServer::invalidate_tool_headers`](super::ModernServer::invalidate_tool_headers)
//!   is called;
//! * a call naming a tool the cached list does not know triggers one
//!   re-fetch, at most once per [`MIN_REFRESH`] (so unknown names cannot make
//!   every request list the tools again).
//!
//! Concurrent misses share one fetch. A handler without `tools/list` (or
//! whose list fails) has no header-mirrored parameters.
//!
//! Every `tools/call` reads the catalog, from every connection's task at
//! once, so a read touches no shared reference count: the snapshot is an
//! [`ArcSwapOption`] (its `load` marks a slot of the reading thread's own,
//! where a `RwLock` read and an `Arc` clone each write the lock's and the
//! snapshot's shared counts), and a tool without `Mcp-Param-*` headers,
//! the usual case, has no `Arc` to clone ([`ToolHeaders`]). Those shared
//! counts moved their cache lines between the CPUs on every call: ~0.9 %
//! of the server's time on the wire (docs/PERFORMANCE.md, session 47).

use rustc_hash::FxHashMap;
use std::ops::Deref;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;
use async_trait::async_trait;
use futures_util::FutureExt;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::cancel::CancellationToken;
use mcp_transport_core::handler::{
    ClientDescription, Handler, LogLevel, Outcome, RequestContext, RequestSink, SendError,
};
use mcp_transport_core::jsonrpc::{Notification, Request, RequestId};
use serde::Deserialize;
use serde_json::{Value, json};

use super::schema::{ParamHeader, header_params};
use crate::headers::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};

/// The shortest time between two fetches caused by unknown tool names.
pub(crate) const MIN_REFRESH: Duration = Duration::from_secs(1);

/// The most `tools/list` pages read in one fetch.
const MAX_PAGES: usize = 64;

/// One tool's `Mcp-Param-*` headers: none (no allocation, nothing
/// counted when cloned) or a shared list.
#[derive(Clone, Debug, Default)]
pub(crate) struct ToolHeaders(Option<Arc<[ParamHeader]>>);

impl ToolHeaders {
    /// `headers`, with an empty list kept as none.
    fn new(headers: Vec<ParamHeader>) -> Self {
        Self((!headers.is_empty()).then(|| Arc::from(headers)))
    }
}

impl Deref for ToolHeaders {
    type Target = [ParamHeader];

    fn deref(&self) -> &[ParamHeader] {
        self.0.as_deref().unwrap_or(&[])
    }
}

struct Snapshot {
    built: Instant,
    /// By the names of the handler's own tools (FxHash: no client chooses
    /// a key; a client's name is only looked up).
    tools: FxHashMap<String, ToolHeaders>,
}

/// The cache of every tool's `Mcp-Param-*` headers.
#[derive(Default)]
pub(crate) struct ToolCatalog {
    generation: AtomicU64,
    current: ArcSwapOption<Snapshot>,
    fetch: tokio::sync::Mutex<()>,
}

impl ToolCatalog {
    /// Forgets the cached list; the next `tools/call` fetches it again.
    pub fn invalidate(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.current.store(None);
    }

    /// The cached headers of `tool`, or `Err(fresh)` when the cache cannot
    /// answer (`fresh`: a fetch now would be too soon after the last one).
    fn lookup(&self, tool: &str) -> Result<ToolHeaders, bool> {
        match &*self.current.load() {
            Some(s) => match s.tools.get(tool) {
                Some(h) => Ok(h.clone()),
                None => Err(s.built.elapsed() < MIN_REFRESH),
            },
            None => Err(false),
        }
    }

    /// The `Mcp-Param-*` headers of `tool` when the cache can answer
    /// without a fetch (empty when it has none, or is unknown and a fetch
    /// now would be too soon after the last): what
    /// [`headers_for`](Self::headers_for) returns at once. `None`: a fetch
    /// is due.
    pub fn cached(&self, tool: &str) -> Option<ToolHeaders> {
        match self.lookup(tool) {
            Ok(h) => Some(h),
            Err(true) => Some(ToolHeaders::default()),
            Err(false) => None,
        }
    }

    /// The `Mcp-Param-*` headers of `tool` (empty when it has none or is
    /// unknown).
    pub async fn headers_for(
        &self,
        handler: &Arc<dyn Handler>,
        version: &ProtocolVersion,
        tool: &str,
    ) -> ToolHeaders {
        match self.cached(tool) {
            Some(h) => h,
            // Boxed: the fetch is rare, and its future would otherwise
            // size the future of the request waiting for it.
            None => Box::pin(self.fetch_headers(handler, version, tool)).await,
        }
    }

    /// [`Self::headers_for`] when the snapshot does not know the tool:
    /// one fetch at a time, the snapshot replaced unless the tools changed
    /// meanwhile.
    async fn fetch_headers(
        &self,
        handler: &Arc<dyn Handler>,
        version: &ProtocolVersion,
        tool: &str,
    ) -> ToolHeaders {
        let _one_fetch = self.fetch.lock().await;
        match self.lookup(tool) {
            Ok(h) => return h,
            Err(true) => return ToolHeaders::default(),
            Err(false) => {}
        }
        let generation = self.generation.load(Ordering::Acquire);
        let snapshot = Arc::new(fetch(handler, version).await);
        let found = snapshot.tools.get(tool).cloned().unwrap_or_default();
        if self.generation.load(Ordering::Acquire) == generation {
            self.current.store(Some(snapshot));
        }
        found
    }
}

/// A sink for the transport's own calls: nothing is delivered.
struct NullSink;

#[async_trait]
impl RequestSink for NullSink {
    async fn send(&self, _notification: Notification) -> Result<(), SendError> {
        Err(SendError::Unsupported(
            "the transport's internal tools/list has no response stream",
        ))
    }

    fn log_level(&self) -> Option<LogLevel> {
        None
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolsPage {
    #[serde(default)]
    tools: Vec<ToolDef>,
    #[serde(default)]
    next_cursor: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolDef {
    name: String,
    #[serde(default)]
    input_schema: Value,
}

/// Reads every page of the handler's `tools/list`.
async fn fetch(handler: &Arc<dyn Handler>, version: &ProtocolVersion) -> Snapshot {
    let mut tools = FxHashMap::default();
    let mut cursor: Option<String> = None;
    for page in 0..MAX_PAGES {
        let mut params = json!({"_meta": {
            META_PROTOCOL_VERSION: version.as_str(),
            META_CLIENT_CAPABILITIES: {},
        }});
        if let Some(c) = &cursor {
            params["cursor"] = Value::String(c.clone());
        }
        let id = RequestId::String(format!("mcp-rev-2026-07-28/tools-list/{page}"));
        let Ok(request) = Request::new(id.clone(), "tools/list", Some(&params)) else {
            break;
        };
        let cx = RequestContext::new(
            version.clone(),
            id,
            Arc::new(ClientDescription {
                info: None,
                capabilities: json!({}),
            }),
            CancellationToken::new(),
            Arc::new(NullSink),
        );
        let outcome = AssertUnwindSafe(handler.handle(request, cx))
            .catch_unwind()
            .await;
        let page: ToolsPage = match outcome {
            Ok(Outcome::Result(raw)) => match serde_json::from_str(raw.get()) {
                Ok(p) => p,
                Err(e) => {
                    tracing::warn!(error = %e, "the handler's tools/list result is malformed; no Mcp-Param headers are checked");
                    break;
                }
            },
            Ok(Outcome::Error(e)) => {
                tracing::debug!(error = %e, "the handler's tools/list failed; no Mcp-Param headers are checked");
                break;
            }
            Ok(Outcome::InputRequired(_)) => {
                tracing::warn!(
                    "the handler answered tools/list with InputRequired, which MRTR does not allow there"
                );
                break;
            }
            Err(_) => {
                tracing::error!("the handler panicked in tools/list");
                break;
            }
        };
        for tool in page.tools {
            let headers = match header_params(&tool.input_schema) {
                Ok(h) => ToolHeaders::new(h),
                Err(reason) => {
                    tracing::warn!(
                        tool = %tool.name,
                        %reason,
                        "tool definition has invalid x-mcp-header annotations; conforming clients exclude it, so no Mcp-Param headers are expected for it"
                    );
                    ToolHeaders::default()
                }
            };
            tools.insert(tool.name, headers);
        }
        match page.next_cursor {
            Some(c) if Some(&c) != cursor.as_ref() => cursor = Some(c),
            _ => break,
        }
    }
    Snapshot {
        built: Instant::now(),
        tools,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use mcp_test_support::handler::{TestHandler, method_fn};

    use super::*;

    /// A handler whose `tools/list` lists one tool with an `x-mcp-header`
    /// argument and one without, counted in `lists`, and tries to send a
    /// notification (what that gave goes to `sent`).
    fn lister(
        lists: Arc<AtomicU64>,
        sent: Arc<Mutex<Vec<Result<(), String>>>>,
    ) -> Arc<dyn Handler> {
        let list = method_fn(move |_, cx, _| {
            let (lists, sent) = (lists.clone(), sent.clone());
            async move {
                lists.fetch_add(1, Ordering::SeqCst);
                let n = Notification::new("notifications/message", None::<&()>).unwrap();
                let result = cx.notify(n).await.map_err(|e| e.to_string());
                sent.lock().unwrap().push(result);
                Outcome::json(&json!({"tools": [{
                    "name": "get",
                    "inputSchema": {"type": "object", "properties": {
                        "region": {"type": "string", "x-mcp-header": "Region"}
                    }}
                }, {
                    "name": "plain",
                    "inputSchema": {"type": "object", "properties": {
                        "region": {"type": "string"}
                    }}
                }]}))
            }
        });
        Arc::new(
            TestHandler::builder("lister")
                .method("tools/list", list)
                .build(),
        )
    }

    /// The catalog answers from its snapshot once it has one: a listed
    /// tool's headers, and for a tool it does not list, none (without
    /// asking again) until the snapshot is a second old; `invalidate`
    /// empties it. The transport's own `tools/list` has no stream to send
    /// notifications on.
    #[tokio::test]
    async fn lookups_answer_from_the_snapshot_until_it_is_invalidated() {
        let (lists, sent) = (Arc::<AtomicU64>::default(), Arc::<Mutex<Vec<_>>>::default());
        let handler = lister(lists.clone(), sent.clone());
        let catalog = ToolCatalog::default();
        assert!(catalog.cached("get").is_none(), "nothing fetched yet");
        let v = ProtocolVersion::V2026_07_28;
        let headers = catalog.headers_for(&handler, &v, "get").await;
        assert_eq!(headers.len(), 1);
        assert_eq!(headers[0].name, "Region");
        assert_eq!(lists.load(Ordering::SeqCst), 1);
        let cached = catalog.cached("get").expect("the listed tool is cached");
        let shared = |h: &ToolHeaders| h.0.clone().expect("a list");
        assert!(Arc::ptr_eq(&shared(&cached), &shared(&headers)));
        let plain = catalog.cached("plain").expect("the listed tool is cached");
        assert!(plain.is_empty());
        assert!(plain.0.is_none(), "no list kept for a tool without headers");
        let unknown = catalog
            .cached("other")
            .expect("a fresh snapshot answers for any tool");
        assert!(unknown.is_empty());
        assert!(catalog.headers_for(&handler, &v, "other").await.is_empty());
        assert_eq!(lists.load(Ordering::SeqCst), 1, "fetched again");
        catalog.invalidate();
        assert!(catalog.cached("get").is_none());
        let sent = sent.lock().unwrap();
        assert_eq!(sent.len(), 1);
        let error = sent[0].as_ref().unwrap_err();
        assert!(error.contains("internal tools/list"), "{error}");
    }
}

#[cfg(test)]
mod paging {
    use mcp_test_support::handler::{TestHandler, method_fn};

    use super::*;

    /// Pages of one tool each, named by the cursor asked for, ending after
    /// `c`; from then on it answers `c` as the next cursor again. Each
    /// page asked for is counted in `lists`.
    fn pages(lists: Arc<AtomicU64>) -> Arc<dyn Handler> {
        let list = method_fn(move |params: Value, _, _| {
            lists.fetch_add(1, Ordering::SeqCst);
            let (name, next) = match params["cursor"].as_str() {
                None => ("a", "b"),
                Some("b") => ("b", "c"),
                Some(_) => ("c", "c"),
            };
            let page = json!({"tools": [{"name": name, "inputSchema": {"type": "object"}}],
                              "nextCursor": next});
            async move { Outcome::json(&page) }
        });
        Arc::new(
            TestHandler::builder("pages")
                .method("tools/list", list)
                .build(),
        )
    }

    /// Every page is read, and a cursor answered again ends the walk
    /// rather than asking for the same page up to the page bound.
    #[tokio::test]
    async fn pages_are_followed_until_the_cursor_repeats() {
        let lists = Arc::<AtomicU64>::default();
        let handler = pages(lists.clone());
        let snapshot = fetch(&handler, &ProtocolVersion::V2026_07_28).await;
        let mut names: Vec<&str> = snapshot.tools.keys().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(lists.load(Ordering::SeqCst), 3);
    }
}
