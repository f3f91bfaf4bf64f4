//! Our client configurations against a peer's server: the peer scenarios
//! through our negotiating client, with a recording reverse proxy in front
//! of the peer so that resumptions are read off the wire.

use std::net::SocketAddr;

use axum::Router;
use axum::extract::{Request, State};
use axum::response::Response;
use futures_util::StreamExt;
use mcp_http_edge::faults::Faults;
use mcp_negotiate::client::{Connection, connect};
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::transport::{RequestOptions, StreamEvent, Transport, TransportError};
use serde_json::{Value, json};

use super::super::ClientKind;
use super::super::expect::Failure;
use super::super::harness::{Observed, client_config_at};
use super::super::outcome::{call_raw, failed, from_error, result_text, tool_params};
use super::super::wire::Wire;
use super::outcome::NO_RESUMPTION;
use super::proxy;
use super::scenario::PeerScenario;

/// A reverse proxy to `target` recording every exchange; aborted on drop.
struct Recorder {
    addr: SocketAddr,
    wire: Wire,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn forward(
    State((http, target)): State<(reqwest::Client, SocketAddr)>,
    req: Request,
) -> Response {
    let (parts, body) = req.into_parts();
    let body = match proxy::read_body(body).await {
        Ok(b) => b,
        Err(too_large) => return too_large,
    };
    let url = proxy::upstream_url(target, &parts.uri);
    let headers = proxy::request_headers(&parts.headers);
    proxy::forward(&http, parts.method, &url, headers, body).await
}

async fn start_recorder(target: SocketAddr) -> std::io::Result<Recorder> {
    let http = proxy::client()?;
    let wire = Wire::default();
    let app = wire.wrap(Router::new().fallback(forward).with_state((http, target)));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(Recorder { addr, wire, task })
}

/// Runs one scenario of our `client` against the peer server at `target`
/// (its endpoint `/mcp`): the negotiated revision and what was observed.
pub async fn observe(
    client: ClientKind,
    target: SocketAddr,
    scenario: PeerScenario,
) -> (Option<ProtocolVersion>, Observed) {
    observe_at(client, &format!("http://{target}/mcp"), scenario).await
}

/// Where the recorder forwards to for `url` (an `http` URL), and the path
/// and query the client asks for.
async fn target_of(url: &str) -> Result<(SocketAddr, String), String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("bad URL {url:?}: {e}"))?;
    if parsed.scheme() != "http" {
        return Err(format!(
            "{url}: only http URLs (the recorder forwards plain HTTP)"
        ));
    }
    let host = parsed.host_str().ok_or_else(|| format!("{url}: no host"))?;
    let port = parsed.port_or_known_default().unwrap_or(80);
    let addr = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| format!("{url}: cannot resolve {host}: {e}"))?
        .next()
        .ok_or_else(|| format!("{url}: {host} has no address"))?;
    let mut path = parsed.path().to_owned();
    if let Some(q) = parsed.query() {
        path = format!("{path}?{q}");
    }
    Ok((addr, path))
}

/// [`observe`] against the MCP endpoint at `url` (an `http` URL).
pub async fn observe_at(
    client: ClientKind,
    url: &str,
    scenario: PeerScenario,
) -> (Option<ProtocolVersion>, Observed) {
    let (target, path) = match target_of(url).await {
        Ok(t) => t,
        Err(e) => return (None, failed(e)),
    };
    let recorder = match start_recorder(target).await {
        Ok(r) => r,
        Err(e) => return (None, failed(format!("cannot start the recorder: {e}"))),
    };
    let url = format!("http://{}{path}", recorder.addr);
    let config = client_config_at(client, url, Faults::NONE);
    let conn = match connect(config).await {
        Ok(c) => c,
        Err(e) => {
            return (
                None,
                Observed::Failed {
                    kind: Some(Failure::NoMutualRevision),
                    message: format!("connect: {e}"),
                },
            );
        }
    };
    let rev = Some(conn.revision());
    let observed = run(&conn, &recorder.wire, scenario)
        .await
        .unwrap_or_else(|o| o);
    let _ = conn.close().await;
    (rev, observed)
}

async fn run(conn: &Connection, wire: &Wire, scenario: PeerScenario) -> Result<Observed, Observed> {
    match scenario {
        PeerScenario::Call => {
            let (echo, echo_again) =
                call_resending(conn, "echo", json!({ "text": "hello" })).await?;
            let (add, add_again) = call_resending(conn, "add", json!({ "a": 2, "b": 3 })).await?;
            if echo != "hello" || add != "5" {
                return Err(failed(format!(
                    "echo answered {echo:?}, add answered {add:?}"
                )));
            }
            Ok(Observed::Works(if echo_again || add_again {
                "echo and add answered (one re-sent in a new session after its session expired)"
                    .into()
            } else {
                "echo and add answered".into()
            }))
        }
        PeerScenario::Progress => {
            countdown(conn, json!({ "n": 3, "interval_ms": 20 }), 3).await?;
            Ok(Observed::Works("progress 1..3 once each".into()))
        }
        PeerScenario::Input => super::super::sessions::input(conn).await,
        PeerScenario::Disconnect => {
            let args = json!({ "n": 4, "interval_ms": 40, "close_after": 2 });
            countdown(conn, args, 4).await?;
            // The recorder is this scenario's alone.
            let resumed = wire.exchanges().iter().any(|e| {
                e.method == http::Method::GET
                    && e.header(mcp_http_edge::headers::LAST_EVENT_ID).is_some()
            });
            Ok(if resumed {
                Observed::Works("progress 1..4 once each, resumed by GET with Last-Event-ID".into())
            } else {
                Observed::Absent(format!("progress 1..4 once each; {NO_RESUMPTION}"))
            })
        }
    }
}

/// Calls a tool, and calls it once more when the server answered that the
/// session is gone: our client leaves re-sending to its caller (not every
/// request is idempotent; `echo` and `add` are) and starts the new session
/// itself (Transports, "Session Management" 4). Also says whether it
/// re-sent.
async fn call_resending(
    conn: &Connection,
    tool: &str,
    args: Value,
) -> Result<(String, bool), Observed> {
    let (resp, again) = match call_raw(conn, tool, args.clone()).await {
        Err(TransportError::SessionExpired { .. }) => (call_raw(conn, tool, args).await, true),
        other => (other, false),
    };
    let resp = resp.map_err(|e| from_error(&e))?;
    Ok((result_text(&resp).map_err(failed)?, again))
}

/// Calls `countdown` with progress; checks progress 1..n exactly once each
/// and the answer `done` (log messages, if any, are allowed).
async fn countdown(conn: &Connection, args: Value, n: u64) -> Result<(), Observed> {
    let options = RequestOptions {
        progress: true,
        ..RequestOptions::default()
    };
    let mut stream = conn
        .request("tools/call", tool_params("countdown", args), options)
        .await
        .map_err(|e| from_error(&e))?;
    let mut progress = Vec::new();
    let mut response = None;
    while let Some(item) = stream.next().await {
        match item {
            Ok(StreamEvent::Notification(note)) if note.method == "notifications/progress" => {
                let p: Value = note
                    .params
                    .as_deref()
                    .and_then(|p| serde_json::from_str(p.get()).ok())
                    .unwrap_or(Value::Null);
                progress.push(p["progress"].as_f64().unwrap_or(-1.0));
            }
            Ok(StreamEvent::Notification(_)) => {}
            Ok(StreamEvent::ServerRequest(r)) => {
                return Err(failed(format!("unexpected server request {}", r.method)));
            }
            Ok(StreamEvent::Response(r)) => response = Some(r),
            Err(e) => return Err(from_error(&e)),
        }
    }
    let response = response.ok_or_else(|| failed("the stream ended without a response"))?;
    let text = result_text(&response).map_err(failed)?;
    let want: Vec<f64> = (1..=n).map(|i| i as f64).collect();
    if progress != want {
        return Err(failed(format!(
            "progress {progress:?}, not 1..{n} once each"
        )));
    }
    if text != "done" {
        return Err(failed(format!("countdown answered {text:?}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_recorder_forwards_to_the_url_s_address_and_keeps_its_path() {
        let (addr, path) = target_of("http://127.0.0.1:8080/x/mcp?k=1")
            .await
            .expect("an http URL");
        assert_eq!(addr, SocketAddr::from(([127, 0, 0, 1], 8080)));
        assert_eq!(path, "/x/mcp?k=1");
        let (addr, path) = target_of("http://127.0.0.1/mcp").await.expect("port 80");
        assert_eq!((addr.port(), path.as_str()), (80, "/mcp"));
        let err = target_of("https://127.0.0.1/mcp").await.expect_err("TLS");
        assert!(
            err.ends_with("only http URLs (the recorder forwards plain HTTP)"),
            "{err}"
        );
        let err = target_of("not a url").await.expect_err("bad");
        assert!(err.starts_with("bad URL"), "{err}");
    }
}
