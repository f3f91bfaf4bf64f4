//! In-process, per-request cost: the servers `serve` builds, driven as
//! `tower::Service`s (`ServiceExt::oneshot`) with no socket and no HTTP
//! codec in between, one request at a time.
//!
//! This is what `cli/benches/per_request.rs` measures: allocations and bytes
//! allocated per request (a counting global allocator), instructions per
//! request (run under `valgrind --tool=callgrind`) and criterion's time per
//! request. Unlike the request-rate workloads of `mcp-compat bench`, none of
//! these figures depends on what else the machine is doing (time aside), so
//! they can be compared across runs and commits. Every answer is checked
//! (status, `Content-Type`, the result), so a broken server cannot look
//! fast.

use std::net::SocketAddr;

use axum::Router;
use axum::body::{Body, HttpBody as _};
use bytes::Bytes;
use http::StatusCode;
use http_body_util::{BodyExt, Full};
use mcp_http_edge::server::Endpoint;
use mcp_negotiate::server::MultiServer;
use mcp_rev_2026_07_28::server::ModernServer;
use tower::ServiceExt;

use super::floor;
use super::sse_read::{Stream, read_sse};
use super::wire::{self, Template};
use crate::serve::{self, ServeArgs};

/// The `Host` the requests name (the engines allow loopback names only).
const ADDR: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 3000);
/// The endpoint's path.
const PATH: &str = "/mcp";

/// One per-request case: which server, which answer style.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    /// The bare-axum floor ([`floor::router`]).
    Floor,
    /// Stateless 2026-07-28 `tools/call`, JSON, through `serve`'s dispatcher.
    ModernJson,
    /// The same answered as SSE.
    ModernSse,
    /// Stateless 2026-07-28 `tools/call`, JSON, the 2026-07-28 engine alone.
    ModernJsonDirect,
    /// The same answered as SSE.
    ModernSseDirect,
    /// 2025-11-25 session `tools/call`, JSON, through `serve`'s dispatcher.
    LegacyJson,
    /// The same answered as SSE.
    LegacySse,
}

impl Case {
    /// Every case, the floor first.
    pub const ALL: [Case; 7] = [
        Case::Floor,
        Case::ModernJson,
        Case::ModernSse,
        Case::ModernJsonDirect,
        Case::ModernSseDirect,
        Case::LegacyJson,
        Case::LegacySse,
    ];

    /// The case's name.
    pub fn name(self) -> &'static str {
        match self {
            Case::Floor => "floor",
            Case::ModernJson => "modern-json",
            Case::ModernSse => "modern-sse",
            Case::ModernJsonDirect => "modern-json-direct",
            Case::ModernSseDirect => "modern-sse-direct",
            Case::LegacyJson => "legacy-json",
            Case::LegacySse => "legacy-sse",
        }
    }

    /// The case named `name`.
    pub fn from_name(name: &str) -> Option<Case> {
        Case::ALL.into_iter().find(|c| c.name() == name)
    }

    fn json(self) -> bool {
        matches!(
            self,
            Case::Floor | Case::ModernJson | Case::ModernJsonDirect | Case::LegacyJson
        )
    }

    fn legacy(self) -> bool {
        matches!(self, Case::LegacyJson | Case::LegacySse)
    }
}

/// The service a case drives: the floor's axum router, or an engine at its
/// endpoint as `serve` runs it ([`Endpoint`], no `Router`).
#[derive(Clone)]
enum Served {
    Floor(Router),
    Multi(Endpoint<MultiServer>),
    Modern(Endpoint<ModernServer>),
}

impl Served {
    /// `req`'s answer.
    async fn call(&self, req: http::Request<Full<Bytes>>) -> http::Response<Body> {
        let Ok(resp) = match self {
            Served::Floor(r) => r.clone().oneshot(req).await,
            Served::Multi(e) => e.clone().oneshot(req).await,
            Served::Modern(e) => e.clone().oneshot(req).await,
        };
        resp
    }
}

/// A server ready to answer one request after another.
pub struct Harness {
    case: Case,
    service: Served,
    template: Template,
    next_id: u64,
    /// Keeps the dispatcher (and its publisher task) alive.
    _server: Option<MultiServer>,
}

impl Harness {
    /// Builds the case's server as `mcp-compat serve [--json-response]`
    /// does (a 2025-11-25 session is opened for the legacy cases). Must run
    /// inside a tokio runtime.
    pub async fn new(case: Case) -> Result<Harness, String> {
        if case == Case::Floor {
            return Ok(Harness {
                case,
                service: Served::Floor(floor::router()),
                template: Template::add(ADDR, PATH, None),
                next_id: 0,
                _server: None,
            });
        }
        let options: &[&str] = if case.json() {
            &["--json-response"]
        } else {
            &[]
        };
        let args = ServeArgs::from_options(options).map_err(|e| e.to_string())?;
        let server = serve::build(serve::config(&args)?)?;
        let service = match case {
            Case::ModernJsonDirect | Case::ModernSseDirect => Served::Modern(
                server
                    .modern()
                    .ok_or("serve configured no 2026-07-28 engine")?
                    .endpoint(PATH),
            ),
            _ => Served::Multi(serve::app(&server, PATH)),
        };
        let template = if case.legacy() {
            let session = open_session(&service).await?;
            Template::add(ADDR, PATH, Some(&session))
        } else {
            Template::add(ADDR, PATH, None)
        };
        Ok(Harness {
            case,
            service,
            template,
            next_id: 0,
            _server: Some(server),
        })
    }

    /// The case served.
    pub fn case(&self) -> Case {
        self.case
    }

    /// Sends one `tools/call add {a:2,b:3}` (a fresh id) and checks the
    /// whole answer: 200, the case's `Content-Type`, the result `5`.
    pub async fn one(&mut self) -> Result<(), String> {
        self.next_id += 1;
        let mut req = self.template.request(self.next_id);
        // As an HTTP/1.1 client sends it (hyper adds it to a sized body).
        let length = http::HeaderValue::from(req.body().size_hint().exact().unwrap_or(0));
        req.headers_mut()
            .insert(http::header::CONTENT_LENGTH, length);
        let resp = self.service.call(req).await;
        let status = resp.status();
        let content_type = resp.headers().get(http::header::CONTENT_TYPE).cloned();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("body: {e}"))?
            .to_bytes();
        let want = if self.case.json() {
            "application/json"
        } else {
            "text/event-stream"
        };
        if !wire::is_correct(status.as_u16(), content_type.as_ref(), &body, want) {
            return Err(format!(
                "{}: unexpected answer {status} ({content_type:?}): {}",
                self.case.name(),
                String::from_utf8_lossy(&body)
            ));
        }
        Ok(())
    }

    /// Sends `n` requests with [`one`](Self::one).
    pub async fn many(&mut self, n: u64) -> Result<(), String> {
        for _ in 0..n {
            self.one().await?;
        }
        Ok(())
    }
}

/// Runs `spec` (`CASE:N`): `N` requests of one case on a current-thread
/// runtime and nothing else, for `valgrind --tool=callgrind` to count the
/// instructions (two runs of different `N`, the difference divided, so
/// that set-up cancels out).
pub fn run_loop(spec: &str) -> Result<(), String> {
    let (name, n) = spec
        .split_once(':')
        .ok_or_else(|| format!("expected CASE:N, got {spec:?}"))?;
    let case = Case::from_name(name).ok_or_else(|| format!("no case {name:?}"))?;
    let n: u64 = n.parse().map_err(|_| format!("N is not a number: {n:?}"))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("a tokio runtime: {e}"))?;
    rt.block_on(async {
        let mut h = Harness::new(case).await?;
        h.many(n).await
    })
}

/// Opens a 2025-11-25 session in memory; returns its id.
async fn open_session(service: &Served) -> Result<String, String> {
    open_session_with(service, wire::initialize(ADDR, PATH)).await
}

/// Opens a 2025-11-25 session in memory with this `initialize`.
async fn open_session_with(
    service: &Served,
    initialize: http::Request<Full<Bytes>>,
) -> Result<String, String> {
    let resp = service.call(initialize).await;
    let session = resp
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let session = match (resp.status(), session) {
        (StatusCode::OK, Some(s)) => s,
        (s, _) => return Err(format!("initialize answered {s}")),
    };
    let _ = resp.into_body().collect().await;
    let resp = service.call(wire::initialized(ADDR, PATH, &session)).await;
    if resp.status() != StatusCode::ACCEPTED {
        return Err(format!(
            "notifications/initialized answered {}",
            resp.status()
        ));
    }
    Ok(session)
}

/// A 2025-11-25 server built as `mcp-compat serve ARGS` builds it, for what
/// an idle session and a pending polled request retain (the counting
/// allocator of `cli/benches/per_request.rs` does the counting; this only
/// drives the server and checks its answers).
pub struct Retention {
    service: Served,
    next_id: u64,
    /// Keeps the dispatcher alive.
    _server: MultiServer,
}

impl Retention {
    /// The server of `mcp-compat serve ARGS` (`args` without `serve`).
    /// Must run inside a tokio runtime.
    pub fn new(args: &[&str]) -> Result<Retention, String> {
        let args = ServeArgs::from_options(args).map_err(|e| e.to_string())?;
        let server = serve::build(serve::config(&args)?)?;
        Ok(Retention {
            service: Served::Multi(serve::app(&server, PATH)),
            next_id: 0,
            _server: server,
        })
    }

    /// Opens one 2025-11-25 session (`initialize`, then
    /// `notifications/initialized`) and returns its id; the connection's
    /// parts are all dropped, so the session is idle. With `client`, the
    /// `clientInfo` version is that number (clients that differ).
    pub async fn open_session(&self, client: Option<usize>) -> Result<String, String> {
        match client {
            None => open_session(&self.service).await,
            Some(n) => {
                open_session_with(
                    &self.service,
                    wire::initialize_as(ADDR, PATH, &n.to_string()),
                )
                .await
            }
        }
    }

    /// Starts `slow {ms}` in `session` and reads its POST's answer to the
    /// end: under `--disconnect after-priming` the stream closes after the
    /// priming event and its `retry`, leaving the request pending on the
    /// server between polls. Checks that the answer is that and no more.
    pub async fn start_polled(&mut self, session: &str, ms: u64) -> Result<(), String> {
        self.next_id += 1;
        let args = format!(r#"{{"ms":{ms}}}"#);
        let mut req =
            Template::legacy_call(ADDR, PATH, session, "slow", &args, None).request(self.next_id);
        let length = http::HeaderValue::from(req.body().size_hint().exact().unwrap_or(0));
        req.headers_mut()
            .insert(http::header::CONTENT_LENGTH, length);
        let resp = self.service.call(req).await;
        let status = resp.status();
        let stream = read_sse(resp.into_body(), || {}).await?;
        if !left_pending(status, &stream) {
            return Err(format!(
                "polled request: unexpected answer {status}: {stream:?}"
            ));
        }
        // Let the request's task reach the handler's wait.
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        Ok(())
    }
}

/// Whether a POST's answer left its request pending for polling: a 200
/// whose stream held only the priming event (an event ID, empty data) and
/// a `retry` (2025-11-25, "Resumability and Redelivery").
fn left_pending(status: StatusCode, stream: &Stream) -> bool {
    let primed =
        !stream.last_event_id.is_empty() && stream.events.iter().all(|e| e.data.is_empty());
    status == StatusCode::OK && primed && stream.retry.is_some()
}

#[cfg(test)]
mod tests {
    use mcp_transport_core::sse::Event;

    use super::*;

    fn stream(events: &[&str], retry: Option<u64>) -> Stream {
        let events: Vec<Event> = events
            .iter()
            .map(|d| Event {
                event_type: "message".into(),
                data: (*d).into(),
                last_event_id: "s.1.0".into(),
            })
            .collect();
        Stream {
            last_event_id: if events.is_empty() { "" } else { "s.1.0" }.into(),
            events,
            retry,
        }
    }

    #[test]
    fn only_a_primed_stream_with_retry_leaves_a_request_pending() {
        assert!(left_pending(StatusCode::OK, &stream(&[""], Some(0))));
        // Each condition alone fails it.
        assert!(!left_pending(StatusCode::ACCEPTED, &stream(&[""], Some(0))));
        assert!(!left_pending(StatusCode::OK, &stream(&[""], None)));
        assert!(!left_pending(StatusCode::OK, &stream(&["", "{}"], Some(0))));
        assert!(!left_pending(StatusCode::OK, &stream(&["{}", ""], Some(0))));
        assert!(!left_pending(StatusCode::OK, &stream(&[], Some(0))));
        let mut no_id = stream(&[""], Some(0));
        no_id.last_event_id.clear();
        assert!(!left_pending(StatusCode::OK, &no_id));
    }

    /// Every case is served and answered right, one request after another
    /// (fresh ids: a reused one would be refused in a session).
    #[tokio::test]
    async fn every_case_answers_each_request() {
        for case in Case::ALL {
            let mut h = Harness::new(case).await.unwrap();
            assert_eq!(h.case(), case);
            // The legacy cases run in a session (else they would measure
            // a stateless request under the legacy name).
            let in_session = h
                .template
                .request(1)
                .headers()
                .contains_key("mcp-session-id");
            assert_eq!(in_session, case.name().starts_with("legacy"), "{case:?}");
            h.many(3).await.unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(h.next_id, 3);
        }
    }

    #[test]
    fn cases_are_found_by_name() {
        for case in Case::ALL {
            assert_eq!(Case::from_name(case.name()), Some(case));
        }
        assert_eq!(Case::from_name("nothing"), None);
        let json: Vec<&str> = Case::ALL
            .into_iter()
            .filter(|c| c.json())
            .map(Case::name)
            .collect();
        assert_eq!(
            json,
            ["floor", "modern-json", "modern-json-direct", "legacy-json"]
        );
    }

    /// The answer check refuses an answer of the other media type: an SSE
    /// server measured as a JSON case fails its first request.
    #[tokio::test]
    async fn an_answer_of_the_wrong_media_type_is_refused() {
        let mut h = Harness::new(Case::ModernSse).await.unwrap();
        h.case = Case::ModernJson;
        let e = h.one().await.unwrap_err();
        assert!(e.starts_with("modern-json: unexpected answer 200"), "{e}");
    }

    #[test]
    fn the_loop_runs_its_spec_and_refuses_a_bad_one() {
        run_loop("legacy-sse:2").unwrap();
        assert!(run_loop("legacy-sse").unwrap_err().contains("CASE:N"));
        assert!(run_loop("nothing:2").unwrap_err().contains("no case"));
        assert!(run_loop("floor:x").unwrap_err().contains("not a number"));
    }

    /// A polled request's POST ends after its priming event and `retry`;
    /// without polling the same POST runs to its answer, which
    /// `start_polled` refuses.
    #[tokio::test]
    async fn a_polled_request_is_left_pending() {
        let mut r =
            Retention::new(&["--disconnect", "after-priming", "--retry-ms", "60000"]).unwrap();
        let session = r.open_session(None).await.unwrap();
        let other = r.open_session(Some(7)).await.unwrap();
        assert_ne!(session, other);
        // Two in one session: each its own request id.
        r.start_polled(&session, 60_000).await.unwrap();
        r.start_polled(&session, 60_000).await.unwrap();

        let mut held = Retention::new(&[]).unwrap();
        let session = held.open_session(None).await.unwrap();
        let e = held.start_polled(&session, 0).await.unwrap_err();
        assert!(e.starts_with("polled request: unexpected answer"), "{e}");
    }
}
