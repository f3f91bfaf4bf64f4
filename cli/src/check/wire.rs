//! Raw HTTP for the checks: reqwest carries the exchange and the
//! workspace's WHATWG-exact [`Decoder`] reads SSE bodies, so a check sees
//! exactly what the server put on the wire — every id, every `retry`, every
//! empty `data` — with nothing smoothed over by a client library.
//!
//! Every wait is bounded: a request by [`Wire::timeout`], an SSE read by the
//! deadline its caller gives.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use mcp_transport_core::sse::{Decoder, SseItem};
use reqwest::Method;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

/// `Accept` as a conforming client sends it on POST.
pub(crate) const ACCEPT_BOTH: &str = mcp_http_edge::headers::ACCEPT_POST;
/// `Accept` as a conforming client sends it on GET.
pub(crate) const ACCEPT_SSE: &str = mcp_http_edge::headers::EVENT_STREAM;

/// Request headers, in order (names lowercase).
pub(crate) type Headers = Vec<(&'static str, String)>;

/// The headers of a conforming POST: both media types accepted, a JSON body.
pub(crate) fn post_headers() -> Headers {
    vec![
        ("accept", ACCEPT_BOTH.to_owned()),
        ("content-type", mcp_http_edge::headers::JSON.to_owned()),
    ]
}

/// The headers of a conforming GET.
pub(crate) fn get_headers() -> Headers {
    vec![("accept", ACCEPT_SSE.to_owned())]
}

/// The endpoint under test and the HTTP client that talks to it.
#[derive(Debug)]
pub(crate) struct Wire {
    http: reqwest::Client,
    /// The MCP endpoint.
    pub url: String,
    /// The bound on one exchange (until the response head arrives, or a
    /// whole JSON body is read).
    pub timeout: Duration,
    next_id: AtomicI64,
}

impl Wire {
    /// A wire to `url`, with `http` or a fresh client.
    pub(crate) fn new(
        url: &str,
        timeout: Duration,
        http: Option<reqwest::Client>,
    ) -> Result<Wire, String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("bad URL {url:?}: {e}"))?;
        if parsed.scheme() != "http" && parsed.scheme() != "https" {
            return Err(format!("bad URL {url:?}: the scheme must be http or https"));
        }
        let http = match http {
            Some(h) => h,
            None => reqwest::Client::builder()
                .tcp_nodelay(true)
                .build()
                .map_err(|e| format!("building the HTTP client: {e}"))?,
        };
        Ok(Wire {
            http,
            url: url.to_owned(),
            timeout,
            next_id: AtomicI64::new(1),
        })
    }

    /// A fresh JSON-RPC request id.
    pub(crate) fn id(&self) -> i64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Sends one request and waits (at most [`Self::timeout`]) for the
    /// response head; the body is left unread in the [`Reply`].
    pub(crate) async fn send(
        &self,
        method: Method,
        headers: &Headers,
        body: Option<&Value>,
    ) -> Result<Reply, String> {
        let mut req = self.http.request(method.clone(), &self.url);
        for (name, value) in headers {
            req = req.header(*name, value.as_str());
        }
        if let Some(b) = body {
            req = req.body(b.to_string());
        }
        let response = tokio::time::timeout(self.timeout, req.send())
            .await
            .map_err(|_| {
                format!(
                    "{method} got no response head within {} ms",
                    self.timeout.as_millis()
                )
            })?
            .map_err(|e| format!("{method} failed: {}", chain(&e)))?;
        Ok(Reply {
            status: response.status().as_u16(),
            headers: response.headers().clone(),
            response,
        })
    }

    /// POST with the conforming headers plus `extra`.
    pub(crate) async fn post(&self, extra: &Headers, body: &Value) -> Result<Reply, String> {
        let mut h = post_headers();
        h.extend(extra.iter().cloned());
        self.send(Method::POST, &h, Some(body)).await
    }

    /// GET with the conforming headers plus `extra`.
    pub(crate) async fn get(&self, extra: &Headers) -> Result<Reply, String> {
        let mut h = get_headers();
        h.extend(extra.iter().cloned());
        self.send(Method::GET, &h, None).await
    }

    /// DELETE with `extra`.
    pub(crate) async fn delete(&self, extra: &Headers) -> Result<Reply, String> {
        self.send(Method::DELETE, extra, None).await
    }

    /// Sends a request by hand over TCP and returns the status code: the
    /// only way to send a request *without* an `Accept` header (reqwest adds
    /// `Accept: */*` to every request that has none). `http` URLs only.
    pub(crate) async fn raw_status(&self, headers: &Headers, body: &Value) -> Result<u16, String> {
        let url = reqwest::Url::parse(&self.url).map_err(|e| e.to_string())?;
        if url.scheme() != "http" {
            return Err("a hand-written request needs an http:// URL".into());
        }
        let host = url.host_str().ok_or("the URL names no host")?.to_owned();
        let port = url.port_or_known_default().unwrap_or(80);
        let mut path = url.path().to_owned();
        if let Some(q) = url.query() {
            path.push('?');
            path.push_str(q);
        }
        let authority = match url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.clone(),
        };
        let body = body.to_string();
        let mut head = format!("POST {path} HTTP/1.1\r\nhost: {authority}\r\n");
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str(&format!(
            "content-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        ));
        let connect_host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let work = async move {
            let mut tcp = tokio::net::TcpStream::connect((connect_host.as_str(), port))
                .await
                .map_err(|e| format!("cannot connect to {authority}: {e}"))?;
            tcp.write_all(head.as_bytes())
                .await
                .map_err(|e| e.to_string())?;
            tcp.write_all(body.as_bytes())
                .await
                .map_err(|e| e.to_string())?;
            let mut buf = Vec::new();
            let mut chunk = [0u8; 1024];
            loop {
                let n = tcp.read(&mut chunk).await.map_err(|e| e.to_string())?;
                buf.extend_from_slice(&chunk[..n]);
                match response_status(&buf) {
                    Ok(Some(code)) => return Ok(code),
                    Ok(None) if n > 0 && buf.len() < MAX_HEAD => continue,
                    Ok(None) => {
                        return Err(format!(
                            "no complete response head in {} bytes: {}",
                            buf.len(),
                            short(&String::from_utf8_lossy(&buf))
                        ));
                    }
                    Err(e) => return Err(e),
                }
            }
        };
        tokio::time::timeout(self.timeout, work)
            .await
            .map_err(|_| "no status line in time".to_owned())?
    }
}

/// The most bytes of a hand-read response head.
const MAX_HEAD: usize = 16 * 1024;

/// The status code of a response head parsed with `httparse` (`None`:
/// the head is not complete yet).
fn response_status(buf: &[u8]) -> Result<Option<u16>, String> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut headers);
    match response.parse(buf) {
        Ok(httparse::Status::Complete(_)) => response
            .code
            .map(Some)
            .ok_or_else(|| "a response head without a status code".to_owned()),
        Ok(httparse::Status::Partial) => Ok(None),
        Err(e) => Err(format!(
            "not an HTTP response ({e}): {}",
            short(&String::from_utf8_lossy(buf))
        )),
    }
}

/// A response whose head has arrived; the body is read on demand.
#[derive(Debug)]
pub(crate) struct Reply {
    /// The HTTP status code.
    pub status: u16,
    /// The response headers.
    pub headers: HeaderMap,
    response: reqwest::Response,
}

impl Reply {
    /// The media type of `Content-Type`, lowercase, without parameters.
    pub(crate) fn media_type(&self) -> String {
        self.headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(|m| m.trim().to_ascii_lowercase())
            .unwrap_or_default()
    }

    /// Whether the body is an SSE stream.
    pub(crate) fn is_sse(&self) -> bool {
        self.media_type() == mcp_http_edge::headers::EVENT_STREAM
    }

    /// Whether the status is 2xx.
    pub(crate) fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// One header's value, as text.
    pub(crate) fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }

    /// The whole body as text (bounded by `timeout`; what arrived by then
    /// otherwise).
    pub(crate) async fn text(mut self, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        let mut buf = Vec::new();
        while let Ok(Ok(Some(chunk))) =
            tokio::time::timeout_at(deadline, self.response.chunk()).await
        {
            buf.extend_from_slice(&chunk);
            if buf.len() > 1 << 20 {
                break;
            }
        }
        String::from_utf8_lossy(&buf).into_owned()
    }

    /// The body parsed as JSON, if it is.
    pub(crate) async fn json(self, timeout: Duration) -> Option<Value> {
        serde_json::from_str(&self.text(timeout).await).ok()
    }

    /// The body as an SSE stream.
    pub(crate) fn sse(self) -> SseReader {
        SseReader {
            response: Some(self.response),
            decoder: Decoder::new(),
            pending: VecDeque::new(),
        }
    }

    /// The JSON-RPC response to request `id`: the JSON body, or the
    /// matching event of an SSE body.
    pub(crate) async fn rpc_answer(self, id: i64, timeout: Duration) -> Result<Value, String> {
        let status = self.status;
        if self.is_sse() {
            let capture = Capture::read(self.sse(), Some(id), timeout, Duration::ZERO).await;
            return capture
                .response
                .ok_or_else(|| format!("HTTP {status}: the SSE stream ended without a response"));
        }
        let text = self.text(timeout).await;
        match serde_json::from_str::<Value>(&text) {
            Ok(v) if v.get("result").is_some() || v.get("error").is_some() => Ok(v),
            _ => Err(format!("HTTP {status}: {}", short(&text))),
        }
    }
}

/// An error with its sources, `: `-separated (reqwest's own message hides
/// the cause, such as "connection refused").
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        let text = inner.to_string();
        if !s.contains(&text) {
            s.push_str(": ");
            s.push_str(&text);
        }
        source = inner.source();
    }
    s
}

/// At most 200 characters of `text`, on one line.
pub(crate) fn short(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.is_empty() {
        return "(empty body)".into();
    }
    match one_line.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &one_line[..i]),
        None => one_line,
    }
}

/// What reading an SSE body produced next.
#[derive(Debug)]
pub(crate) enum Next {
    /// An item, in stream order.
    Item(SseItem),
    /// The server ended the body.
    End,
    /// The connection broke (reset, malformed chunking, oversize event).
    Broken(String),
    /// The deadline passed with the stream still open.
    Timeout,
}

/// An SSE body, decoded item by item.
#[derive(Debug)]
pub(crate) struct SseReader {
    response: Option<reqwest::Response>,
    decoder: Decoder,
    pending: VecDeque<SseItem>,
}

impl SseReader {
    /// The next item, or how the stream stopped.
    pub(crate) async fn next(&mut self, deadline: Instant) -> Next {
        loop {
            if let Some(item) = self.pending.pop_front() {
                return Next::Item(item);
            }
            let Some(response) = self.response.as_mut() else {
                return Next::End;
            };
            let mut out = Vec::new();
            match tokio::time::timeout_at(deadline, response.chunk()).await {
                Err(_) => return Next::Timeout,
                Ok(Ok(Some(chunk))) => {
                    if let Err(e) = self.decoder.feed(&chunk, &mut out) {
                        self.response = None;
                        return Next::Broken(e.to_string());
                    }
                    self.pending.extend(out);
                }
                Ok(Ok(None)) => {
                    let _ = self.decoder.finish(&mut out);
                    self.response = None;
                    self.pending.extend(out);
                    if self.pending.is_empty() {
                        return Next::End;
                    }
                }
                Ok(Err(e)) => {
                    self.response = None;
                    return Next::Broken(e.to_string());
                }
            }
        }
    }
}

/// How a captured stream stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// The server ended the body.
    Closed,
    /// The connection broke.
    Broken(String),
    /// Still open when we stopped reading.
    StillOpen,
}

/// Everything one SSE connection delivered, in order.
#[derive(Clone, Debug)]
pub(crate) struct Capture {
    /// The decoded items.
    pub items: Vec<SseItem>,
    /// The JSON-RPC response to the request, when it arrived.
    pub response: Option<Value>,
    /// How the connection stopped.
    pub end: End,
}

impl Capture {
    /// Reads `reader` until it ends, until `timeout`, or until `linger`
    /// after the response to `id` arrived (a server SHOULD end the stream
    /// after the response; this does not wait for ever to see it).
    pub(crate) async fn read(
        mut reader: SseReader,
        id: Option<i64>,
        timeout: Duration,
        linger: Duration,
    ) -> Capture {
        let mut deadline = Instant::now() + timeout;
        let mut items = Vec::new();
        let mut response = None;
        let end = loop {
            match reader.next(deadline).await {
                Next::Item(item) => {
                    if response.is_none()
                        && let Some(msg) = answers(&item, id)
                    {
                        response = Some(msg);
                        deadline = deadline.min(Instant::now() + linger);
                    }
                    items.push(item);
                }
                Next::End => break End::Closed,
                Next::Broken(e) => break End::Broken(e),
                Next::Timeout => break End::StillOpen,
            }
        };
        Capture {
            items,
            response,
            end,
        }
    }

    /// The distinct non-empty event ids the connection set, in order.
    pub(crate) fn ids(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for item in &self.items {
            let id = match item {
                SseItem::Event(e) => &e.last_event_id,
                SseItem::LastEventId(id) => id,
                SseItem::Retry(_) => continue,
            };
            if !id.is_empty() && !out.contains(id) {
                out.push(id.clone());
            }
        }
        out
    }

    /// The dispatched events with non-empty data: `(id, data)`.
    pub(crate) fn messages(&self) -> Vec<(String, String)> {
        self.items
            .iter()
            .filter_map(|item| match item {
                SseItem::Event(e) if !e.data.is_empty() => {
                    Some((e.last_event_id.clone(), e.data.clone()))
                }
                _ => None,
            })
            .collect()
    }

    /// The server ended the connection before the response arrived.
    pub(crate) fn closed_early(&self) -> bool {
        self.response.is_none() && self.end != End::StillOpen
    }

    /// A `retry` field arrived on this connection.
    pub(crate) fn saw_retry(&self) -> bool {
        self.items.iter().any(|i| matches!(i, SseItem::Retry(_)))
    }
}

/// The JSON-RPC response to `id` that `item` carries, if it does.
fn answers(item: &SseItem, id: Option<i64>) -> Option<Value> {
    let SseItem::Event(e) = item else {
        return None;
    };
    let id = id?;
    let v: Value = serde_json::from_str(&e.data).ok()?;
    let is_response = v.get("result").is_some() || v.get("error").is_some();
    (is_response && v.get("id") == Some(&json!(id))).then_some(v)
}

/// The JSON-RPC error code in a response body, if there is one.
pub(crate) fn error_code(body: &Value) -> Option<i64> {
    body.pointer("/error/code").and_then(Value::as_i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_transport_core::sse::Event;

    fn ev(id: &str, data: &str) -> SseItem {
        SseItem::Event(Event {
            event_type: "message".into(),
            data: data.into(),
            last_event_id: id.into(),
        })
    }

    #[test]
    fn capture_ids_and_messages() {
        let c = Capture {
            items: vec![
                ev("a.1.0", ""),
                SseItem::Retry(10),
                ev("a.1.1", r#"{"jsonrpc":"2.0","id":3,"result":{}}"#),
                ev("a.1.1", "x"),
            ],
            response: None,
            end: End::Closed,
        };
        assert_eq!(c.ids(), ["a.1.0", "a.1.1"]);
        assert_eq!(c.messages().len(), 2);
        assert!(c.saw_retry());
        assert!(c.closed_early());
        assert!(answers(&c.items[2], Some(3)).is_some());
        assert!(answers(&c.items[2], Some(4)).is_none());
    }

    #[test]
    fn response_heads() {
        assert_eq!(
            response_status(b"HTTP/1.1 406 Not Acceptable\r\ncontent-length: 0\r\n\r\n"),
            Ok(Some(406))
        );
        assert_eq!(response_status(b"HTTP/1.1 200 OK\r\ncontent-ty"), Ok(None));
        assert!(response_status(b"SSH-2.0-OpenSSH\r\n\r\n").is_err());
    }

    #[test]
    fn a_wire_needs_an_http_url_and_numbers_requests_from_one() {
        let err = Wire::new("not a url", Duration::from_secs(1), None).expect_err("bad");
        assert!(err.starts_with("bad URL \"not a url\""), "{err}");
        let err = Wire::new("ftp://h/mcp", Duration::from_secs(1), None).expect_err("ftp");
        assert!(err.ends_with("the scheme must be http or https"), "{err}");
        let wire = Wire::new("https://h/mcp", Duration::from_secs(1), None).expect("https");
        assert_eq!((wire.id(), wire.id()), (1, 2));
    }

    #[tokio::test]
    async fn requests_carry_the_conforming_headers_and_the_extra_ones() {
        use super::super::test_fake::{bare, serving};
        let (fake, wire) = serving(|_| bare(202)).await;
        let extra: Headers = vec![("mcp-session-id", "s1".into())];
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        assert_eq!(wire.post(&extra, &body).await.expect("posted").status, 202);
        wire.get(&extra).await.expect("got");
        wire.delete(&extra).await.expect("deleted");
        let seen = fake.seen();
        assert_eq!(seen[0].method, Method::POST);
        assert_eq!(seen[0].header("accept"), Some(ACCEPT_BOTH));
        assert_eq!(seen[0].header("content-type"), Some("application/json"));
        assert_eq!(seen[0].header("mcp-session-id"), Some("s1"));
        assert_eq!(seen[0].body.as_ref(), Some(&body));
        assert_eq!(seen[1].method, Method::GET);
        assert_eq!(seen[1].header("accept"), Some(ACCEPT_SSE));
        assert_eq!(seen[1].header("mcp-session-id"), Some("s1"));
        assert_eq!(seen[2].method, Method::DELETE);
        assert_eq!(seen[2].header("mcp-session-id"), Some("s1"));
    }

    #[tokio::test]
    async fn a_hand_written_post_has_no_accept_and_reads_the_status() {
        use super::super::test_fake::{bare, serving};
        let (fake, wire) = serving(|_| bare(406)).await;
        let headers: Headers = vec![("content-type", "application/json".into())];
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        assert_eq!(wire.raw_status(&headers, &body).await, Ok(406));
        let seen = &fake.seen()[0];
        assert_eq!(seen.header("accept"), None);
        assert_eq!(seen.header("content-type"), Some("application/json"));
        assert_eq!(seen.body.as_ref(), Some(&body));
        // Not by hand over TLS, even where plain HTTP would be answered.
        let https = Wire::new(
            &fake.url.replacen("http://", "https://", 1),
            Duration::from_secs(1),
            None,
        )
        .expect("a wire");
        assert_eq!(
            https.raw_status(&headers, &body).await,
            Err("a hand-written request needs an http:// URL".to_owned())
        );
        // Nothing listens on a port just released.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a port")
            .port();
        let dead = Wire::new(
            &format!("http://127.0.0.1:{port}/mcp"),
            Duration::from_secs(5),
            None,
        )
        .expect("a wire");
        let err = dead.raw_status(&headers, &body).await.expect_err("refused");
        assert!(
            err.starts_with(&format!("cannot connect to 127.0.0.1:{port}")),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_reply_reads_as_json_sse_or_an_rpc_answer() {
        use super::super::test_fake::serving;
        use axum::response::IntoResponse;
        use mcp_test_support::fake::{json_ok, status_json};
        let answer = serde_json::json!({"jsonrpc": "2.0", "id": 7, "result": {"ok": true}});
        let a = answer.clone();
        let (_fake, wire) = serving(move |s| match s.rpc_method() {
            Some("json") => json_ok(&a),
            Some("sse") => (
                [("content-type", "Text/Event-Stream; charset=utf-8")],
                format!("id: e1\ndata:\n\ndata: {{\"jsonrpc\":\"2.0\",\"id\":6}}\n\ndata: {a}\n\n"),
            )
                .into_response(),
            Some("300") => status_json(
                http::StatusCode::MULTIPLE_CHOICES,
                &serde_json::json!({"oops": 1}),
            ),
            _ => status_json(http::StatusCode::NOT_FOUND, &serde_json::json!({"oops": 1})),
        })
        .await;
        let ask = |m: &str| serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": m});
        let t = Duration::from_secs(5);
        let r = wire.post(&vec![], &ask("json")).await.expect("reply");
        assert_eq!(r.media_type(), "application/json");
        assert!(!r.is_sse() && r.is_success());
        assert_eq!(r.rpc_answer(7, t).await, Ok(answer.clone()));
        let r = wire.post(&vec![], &ask("sse")).await.expect("reply");
        assert_eq!(r.media_type(), "text/event-stream");
        assert!(r.is_sse());
        assert_eq!(r.rpc_answer(7, t).await, Ok(answer));
        let r = wire.post(&vec![], &ask("other")).await.expect("reply");
        assert!(!r.is_success());
        assert_eq!(
            r.header("content-type").as_deref(),
            Some("application/json")
        );
        assert_eq!(
            r.rpc_answer(7, t).await,
            Err("HTTP 404: {\"oops\":1}".to_owned())
        );
        let r = wire.post(&vec![], &ask("300")).await.expect("reply");
        assert_eq!(r.status, 300);
        assert!(!r.is_success());
    }

    /// A loopback server that reads one request head and answers the
    /// connection with `pieces`, each written (and flushed) alone, then
    /// closes it; a wire to it.
    async fn answering_raw(pieces: Vec<Vec<u8>>) -> Wire {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
        tokio::spawn(async move {
            let (mut tcp, _) = listener.accept().await.expect("accept");
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && tcp.read(&mut byte).await.unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            // And the body (a socket closed with unread input is reset).
            let text = String::from_utf8_lossy(&head).to_ascii_lowercase();
            let length: usize = text
                .split("content-length: ")
                .nth(1)
                .and_then(|r| r.split("\r\n").next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            let mut body = vec![0u8; length];
            tcp.read_exact(&mut body).await.expect("the body");
            for piece in pieces {
                if tcp.write_all(&piece).await.is_err() {
                    return;
                }
                tcp.flush().await.ok();
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        Wire::new(&url, Duration::from_secs(5), None).expect("a wire")
    }

    async fn raw(pieces: Vec<Vec<u8>>) -> Result<u16, String> {
        let wire = answering_raw(pieces).await;
        wire.raw_status(&Headers::new(), &serde_json::json!({}))
            .await
    }

    #[tokio::test]
    async fn a_hand_read_status_waits_for_the_whole_head() {
        // The head in three pieces.
        let pieces = vec![
            b"HTTP/1.1 4".to_vec(),
            b"06 Not Acceptable\r\ncontent-length: 0\r\n".to_vec(),
            b"\r\n".to_vec(),
        ];
        assert_eq!(raw(pieces).await, Ok(406));
        // A long header is still a head (well under the bound).
        let long = format!(
            "HTTP/1.1 200 OK\r\nx-long: {}\r\n\r\n",
            "a".repeat(8 * 1024)
        );
        assert_eq!(raw(vec![long.into_bytes()]).await, Ok(200));
    }

    #[tokio::test]
    async fn a_head_cut_short_or_without_end_is_an_error() {
        // The connection closes mid-head.
        let e = raw(vec![b"HTTP/1.1 200 OK\r\nx: y\r\n".to_vec()])
            .await
            .expect_err("cut");
        assert!(
            e.starts_with("no complete response head in 23 bytes"),
            "{e}"
        );
        // A head that never ends: read up to the bound, not for ever.
        let endless = format!("HTTP/1.1 200 OK\r\nx-long: {}", "a".repeat(64 * 1024));
        let e = raw(vec![endless.into_bytes()]).await.expect_err("endless");
        let n: usize = e
            .strip_prefix("no complete response head in ")
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{e}"));
        assert!((MAX_HEAD..MAX_HEAD + 1024).contains(&n), "{n}");
        // Not HTTP at all.
        let e = raw(vec![b"SSH-2.0-OpenSSH\r\n\r\n".to_vec()])
            .await
            .expect_err("ssh");
        assert!(e.starts_with("not an HTTP response"), "{e}");
    }

    #[tokio::test]
    async fn a_body_is_read_whole_up_to_one_mebibyte() {
        use super::super::test_fake::serving;
        use mcp_test_support::fake::SseBody;
        // Sent in pieces; read whole.
        let (_f, wire) = serving(|_| SseBody::new(vec!["ab".into(), "cd".into()]).response()).await;
        let reply = wire.get(&Headers::new()).await.expect("got");
        assert_eq!(reply.text(Duration::from_secs(5)).await, "abcd");
        // A large body: cut just past 1 MiB.
        let mib = 1usize << 20;
        let (_f, wire) =
            serving(move |_| SseBody::new(vec!["x".repeat(64 * 1024); 48]).response()).await;
        let reply = wire.get(&Headers::new()).await.expect("got");
        let text = reply.text(Duration::from_secs(5)).await;
        assert!(
            text.len() > mib && text.len() <= mib + 64 * 1024,
            "{}",
            text.len()
        );
    }

    #[derive(Debug)]
    struct E(&'static str, Option<Box<E>>);

    impl std::fmt::Display for E {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for E {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|e| e as _)
        }
    }

    #[tokio::test]
    async fn an_error_names_its_causes_once_each() {
        let leaf = E("connection refused", None);
        let mid = E("client error (Connect)", Some(Box::new(leaf)));
        let top = E("error sending request", Some(Box::new(mid)));
        assert_eq!(
            chain(&top),
            "error sending request: client error (Connect): connection refused"
        );
        // A cause the message already says is not repeated.
        let said = E(
            "failed: connection refused",
            Some(Box::new(E("connection refused", None))),
        );
        assert_eq!(chain(&said), "failed: connection refused");
        // As a failed request reports it.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
        drop(listener);
        let wire = Wire::new(&url, Duration::from_secs(5), None).expect("a wire");
        let e = wire.get(&Headers::new()).await.expect_err("refused");
        assert!(
            e.starts_with("GET failed: ") && e.to_lowercase().contains("refused"),
            "{e}"
        );
    }

    #[tokio::test]
    async fn a_capture_lingers_after_the_response_then_stops() {
        use futures_util::StreamExt;
        let answer = r#"{"jsonrpc":"2.0","id":3,"result":{}}"#;
        let (_f, wire) = super::super::test_fake::serving(move |_| {
            // The response, then an event 100 ms later, then the end.
            let first = futures_util::stream::once(async move {
                Ok::<_, std::io::Error>(bytes::Bytes::from(format!("id: a\ndata: {answer}\n\n")))
            });
            let later = futures_util::stream::once(async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                Ok(bytes::Bytes::from_static(b"id: b\ndata: {}\n\n"))
            });
            axum::response::Response::builder()
                .header("content-type", "text/event-stream")
                .body(axum::body::Body::from_stream(first.chain(later)))
                .expect("a response")
        })
        .await;
        for (linger, items) in [(Duration::from_secs(2), 2), (Duration::ZERO, 1)] {
            let reply = wire.get(&Headers::new()).await.expect("got");
            let c = Capture::read(reply.sse(), Some(3), Duration::from_secs(5), linger).await;
            assert!(c.response.is_some());
            assert_eq!(c.items.len(), items, "{linger:?}: {c:?}");
        }
    }

    #[test]
    fn short_folds_and_cuts() {
        assert_eq!(short(" a \n b "), "a b");
        assert_eq!(short(""), "(empty body)");
        assert!(short(&"x".repeat(300)).ends_with('…'));
    }
}
