//! `check-client`'s session-forgetting front: a loopback proxy before our
//! reference server that makes the server forget the client's session in
//! the middle of the `call` scenario, for the check "re-initializes after
//! 404" (2025-03-26 .. 2025-11-25 Transports, "Session Management" 3–4).
//!
//! Every request is forwarded as it is. When the client's second
//! `tools/call` on a session arrives, the proxy first terminates that
//! session on the server with a `DELETE` (the server "MAY terminate the
//! session at any time"), then forwards the call: the server itself
//! answers it 404, and a conforming client starts a new session.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use axum::extract::{Request, State};
use axum::http::Method;
use axum::response::Response;
use mcp_http_edge::headers;
use serde_json::Value;

use super::proxy;

#[derive(Default)]
struct Seen {
    /// The session whose first `tools/call` went through.
    called: Option<String>,
    /// The session terminated (once per run).
    forgotten: Option<String>,
}

#[derive(Clone)]
struct Proxy {
    upstream: SocketAddr,
    http: reqwest::Client,
    seen: Arc<Mutex<Seen>>,
}

/// A running proxy: its address, and the session it made the server forget.
pub struct Forgetting {
    /// Where the client connects.
    pub addr: SocketAddr,
    seen: Arc<Mutex<Seen>>,
    task: tokio::task::JoinHandle<()>,
}

impl Forgetting {
    /// The session terminated mid-run, if the client got that far.
    pub fn forgotten(&self) -> Option<String> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .forgotten
            .clone()
    }
}

impl Drop for Forgetting {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts the proxy in front of `upstream` on a free 127.0.0.1 port.
pub async fn start(upstream: SocketAddr) -> std::io::Result<Forgetting> {
    let http = proxy::client()?;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let proxy = Proxy {
        upstream,
        http,
        seen: seen.clone(),
    };
    let app = axum::Router::new().fallback(forward).with_state(proxy);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let addr = listener.local_addr()?;
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(Forgetting { addr, seen, task })
}

fn is_tools_call(body: &[u8]) -> bool {
    serde_json::from_slice::<Value>(body).is_ok_and(|v| v["method"] == "tools/call")
}

async fn forward(State(p): State<Proxy>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let body = match proxy::read_body(body).await {
        Ok(b) => b,
        Err(too_large) => return too_large,
    };
    let session = parts
        .headers
        .get(headers::SESSION_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let url = proxy::upstream_url(p.upstream, &parts.uri);
    let sent_headers = proxy::request_headers(&parts.headers);
    if let (Some(s), true) = (
        &session,
        parts.method == Method::POST && is_tools_call(&body),
    ) {
        let forget = {
            let mut seen = p.seen.lock().unwrap_or_else(PoisonError::into_inner);
            if seen.forgotten.is_none() && seen.called.as_deref() == Some(s.as_str()) {
                seen.forgotten = Some(s.clone());
                true
            } else {
                seen.called.get_or_insert_with(|| s.clone());
                false
            }
        };
        if forget {
            let _ = p
                .http
                .delete(&url)
                .headers(sent_headers.clone())
                .send()
                .await;
        }
    }
    proxy::forward(&p.http, parts.method, &url, sent_headers, body).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderMap, StatusCode};
    use mcp_test_support::server::TestServer;

    type Log = Arc<Mutex<Vec<(Method, String, Option<String>, String)>>>;

    /// An upstream that records (method, path and query, session, body)
    /// and answers 202 with a header and a body.
    async fn upstream() -> (TestServer, Log) {
        let log: Log = Arc::default();
        let seen = log.clone();
        let app = axum::Router::new().fallback(move |req: Request| {
            let seen = seen.clone();
            async move {
                let (parts, body) = req.into_parts();
                let body = axum::body::to_bytes(body, usize::MAX)
                    .await
                    .unwrap_or_default();
                seen.lock().expect("lock").push((
                    parts.method,
                    parts.uri.to_string(),
                    parts
                        .headers
                        .get(headers::SESSION_ID)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned),
                    String::from_utf8_lossy(&body).into_owned(),
                ));
                (StatusCode::ACCEPTED, [("x-up", "1")], "answer")
            }
        });
        (TestServer::serve(app).await, log)
    }

    async fn post(addr: SocketAddr, session: Option<&str>, body: &str) -> reqwest::Response {
        let mut req = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("client")
            .post(format!("http://{addr}/mcp?x=1"))
            .body(body.to_owned());
        if let Some(s) = session {
            req = req.header(headers::SESSION_ID, s);
        }
        req.send().await.expect("the proxy answers")
    }

    const CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#;
    const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

    #[tokio::test]
    async fn the_second_call_of_a_session_is_preceded_by_its_termination_once() {
        let (up, log) = upstream().await;
        let proxy = start(up.addr()).await.expect("proxy");
        let resp = post(proxy.addr, Some("s1"), CALL).await;
        assert_eq!(resp.status(), StatusCode::ACCEPTED);
        assert_eq!(resp.headers()["x-up"], "1");
        assert_eq!(resp.text().await.expect("body"), "answer");
        // Not calls, or calls without a session, do not count.
        post(proxy.addr, Some("s1"), LIST).await;
        post(proxy.addr, None, CALL).await;
        assert_eq!(proxy.forgotten(), None);
        // Another session's call does not either: the first call's session
        // is the one forgotten.
        post(proxy.addr, Some("s2"), CALL).await;
        assert_eq!(proxy.forgotten(), None);
        post(proxy.addr, Some("s1"), CALL).await;
        assert_eq!(proxy.forgotten().as_deref(), Some("s1"));
        post(proxy.addr, Some("s1"), CALL).await;
        let got: Vec<(Method, String, Option<String>)> = log
            .lock()
            .expect("lock")
            .iter()
            .map(|(m, u, s, _)| (m.clone(), u.clone(), s.clone()))
            .collect();
        let s = |x: &str| Some(x.to_owned());
        let post_ = |x: Option<String>| (Method::POST, "/mcp?x=1".to_owned(), x);
        assert_eq!(
            got,
            [
                post_(s("s1")),
                post_(s("s1")),
                post_(None),
                post_(s("s2")),
                (Method::DELETE, "/mcp?x=1".to_owned(), s("s1")),
                post_(s("s1")),
                post_(s("s1")),
            ]
        );
        assert_eq!(log.lock().expect("lock")[0].3, CALL, "the body as sent");
    }

    #[tokio::test]
    async fn the_upstream_sees_its_own_host() {
        let host: Arc<Mutex<Option<String>>> = Arc::default();
        let seen = host.clone();
        let app = axum::Router::new().fallback(move |h: HeaderMap| {
            let seen = seen.clone();
            async move {
                *seen.lock().expect("lock") = h
                    .get(axum::http::header::HOST)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                StatusCode::OK
            }
        });
        let up = TestServer::serve(app).await;
        let proxy = start(up.addr()).await.expect("proxy");
        post(proxy.addr, None, CALL).await;
        assert_eq!(
            host.lock().expect("lock").clone(),
            Some(up.addr().to_string())
        );
    }

    #[tokio::test]
    async fn a_body_too_large_or_a_dead_upstream_is_answered_by_the_proxy() {
        let (up, log) = upstream().await;
        let proxy = start(up.addr()).await.expect("proxy");
        let resp = post(proxy.addr, None, &"x".repeat(proxy::MAX_BODY + 1)).await;
        assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
        assert!(log.lock().expect("lock").is_empty());
        // Up to the bound (4 MiB) a body goes through.
        let resp = post(proxy.addr, None, &"x".repeat(proxy::MAX_BODY)).await;
        assert_eq!(resp.status(), StatusCode::ACCEPTED);
        assert_eq!(log.lock().expect("lock")[0].3.len(), 4 * 1024 * 1024);
        // An upstream that is gone.
        let dead = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("bind");
        let dead_addr = dead.local_addr().expect("addr");
        drop(dead);
        let proxy = start(dead_addr).await.expect("proxy");
        let resp = post(proxy.addr, None, CALL).await;
        assert_eq!(resp.status(), StatusCode::BAD_GATEWAY);
        assert!(resp.text().await.expect("body").starts_with("upstream: "));
    }
}
