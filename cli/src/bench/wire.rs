//! The requests the benchmark sends, built once per workload and stamped
//! with a fresh JSON-RPC id each time (ids are never reused within a
//! session: 2025-11-25 *Base Protocol*, "Requests").

use std::net::SocketAddr;

use bytes::{BufMut, Bytes, BytesMut};
use http::{HeaderName, HeaderValue, Method, Request, header};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;

/// The modern revision the benchmark speaks.
pub const MODERN: &str = "2026-07-28";
/// The legacy revision the benchmark speaks.
pub const LEGACY: &str = "2025-11-25";
/// What every correct answer to the benchmark's `tools/call` contains
/// (`add {a:2,b:3}` answers the text `5`; the floor answers the same).
pub const MARKER: &[u8] = br#""text":"5""#;

/// One HTTP/1.1 connection's request sender.
pub type Sender = SendRequest<Full<Bytes>>;

/// Opens a connection with `TCP_NODELAY` (as the servers set it).
pub async fn connect(addr: SocketAddr) -> Result<Sender, String> {
    let tcp = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect {addr}: {e}"))?;
    let _ = tcp.set_nodelay(true);
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// A request template: headers and a body around its id.
#[derive(Clone, Debug)]
pub struct Template {
    /// `Host` value and URI path.
    host: HeaderValue,
    path: String,
    headers: Vec<(HeaderName, HeaderValue)>,
    before_id: String,
    after_id: String,
}

fn hv(s: &str) -> HeaderValue {
    HeaderValue::from_str(s).expect("benchmark header values are ASCII")
}

/// The `_meta` every 2026-07-28 request carries (*Overview*, "Per-request
/// protocol fields"), with `capabilities` as the client capabilities.
pub fn modern_meta(capabilities: &str) -> String {
    format!(
        r#""_meta":{{"io.modelcontextprotocol/protocolVersion":"{MODERN}","io.modelcontextprotocol/clientCapabilities":{capabilities}}}"#
    )
}

impl Template {
    /// An empty template: `Accept` and `Content-Type` only.
    pub fn new(addr: SocketAddr, path: &str) -> Self {
        Template {
            host: hv(&addr.to_string()),
            path: path.to_owned(),
            headers: vec![
                (header::ACCEPT, hv("application/json, text/event-stream")),
                (header::CONTENT_TYPE, hv("application/json")),
            ],
            before_id: String::new(),
            after_id: String::new(),
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: &'static str, value: &str) -> Self {
        self.headers
            .push((HeaderName::from_static(name), hv(value)));
        self
    }

    /// Sets the body: a request of `method` with `params` (a JSON object text).
    pub fn body(mut self, method: &str, params: &str) -> Self {
        self.before_id = r#"{"jsonrpc":"2.0","id":"#.to_owned();
        self.after_id = format!(r#","method":"{method}","params":{params}}}"#);
        self
    }

    /// A 2026-07-28 `tools/call` of `tool` with `arguments` (a JSON object
    /// text) and `capabilities` in `_meta`; `extra_meta` is spliced into
    /// `_meta` (e.g. a progress token).
    pub fn modern_call(
        addr: SocketAddr,
        path: &str,
        tool: &str,
        arguments: &str,
        capabilities: &str,
        progress_token: Option<&str>,
    ) -> Self {
        let mut meta = modern_meta(capabilities);
        if let Some(t) = progress_token {
            meta.pop();
            meta.push_str(&format!(r#","progressToken":"{t}"}}"#));
        }
        Self::new(addr, path)
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", "tools/call")
            .header("mcp-name", tool)
            .body(
                "tools/call",
                &format!(r#"{{"name":"{tool}","arguments":{arguments},{meta}}}"#),
            )
    }

    /// A 2026-07-28 `tasks/get` of `task_id`, declaring the Tasks extension.
    pub fn modern_task_get(addr: SocketAddr, path: &str, task_id: &str) -> Self {
        let meta = modern_meta(TASKS_CAPABILITIES);
        Self::new(addr, path)
            .header("mcp-protocol-version", MODERN)
            .header("mcp-method", "tasks/get")
            .header("mcp-name", task_id)
            .body("tasks/get", &format!(r#"{{"taskId":"{task_id}",{meta}}}"#))
    }

    /// A 2025-11-25 `tools/call` in `session` (`progress_token` in `_meta`).
    pub fn legacy_call(
        addr: SocketAddr,
        path: &str,
        session: &str,
        tool: &str,
        arguments: &str,
        progress_token: Option<&str>,
    ) -> Self {
        let meta = progress_token
            .map(|t| format!(r#","_meta":{{"progressToken":"{t}"}}"#))
            .unwrap_or_default();
        Self::new(addr, path)
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", LEGACY)
            .body(
                "tools/call",
                &format!(r#"{{"name":"{tool}","arguments":{arguments}{meta}}}"#),
            )
    }

    /// The benchmark's `tools/call add {a:2,b:3}` (the floor ignores it).
    pub fn add(addr: SocketAddr, path: &str, session: Option<&str>) -> Self {
        const ARGS: &str = r#"{"a":2,"b":3}"#;
        match session {
            Some(s) => Self::legacy_call(addr, path, s, "add", ARGS, None),
            None => Self::modern_call(addr, path, "add", ARGS, "{}", None),
        }
    }

    /// The same template in another session.
    pub fn in_session(&self, session: &str) -> Self {
        let mut t = self.clone();
        t.headers.retain(|(n, _)| n.as_str() != "mcp-session-id");
        t.header("mcp-session-id", session)
    }

    /// The body with JSON-RPC id `id`.
    pub fn body_bytes(&self, id: u64) -> Bytes {
        let mut body = BytesMut::with_capacity(self.before_id.len() + self.after_id.len() + 20);
        body.put_slice(self.before_id.as_bytes());
        body.put_slice(id.to_string().as_bytes());
        body.put_slice(self.after_id.as_bytes());
        body.freeze()
    }

    /// The request with JSON-RPC id `id`.
    pub fn request(&self, id: u64) -> Request<Full<Bytes>> {
        let body = self.body_bytes(id);
        let mut req = Request::builder()
            .method(Method::POST)
            .uri(self.path.as_str())
            .header(header::HOST, self.host.clone());
        for (n, v) in &self.headers {
            req = req.header(n, v);
        }
        req.body(Full::new(body))
            .expect("a well-formed benchmark request")
    }
}

/// Client capabilities declaring the Tasks extension (SEP-2663).
pub const TASKS_CAPABILITIES: &str = r#"{"extensions":{"io.modelcontextprotocol/tasks":{}}}"#;

/// One answer, read in full.
#[derive(Debug)]
pub struct Answer {
    /// Its HTTP status.
    pub status: u16,
    /// Its `Mcp-Session-Id`, when it has one.
    pub session: Option<String>,
    /// Its `Content-Type`, when it has one (taken from the head, not copied).
    pub content_type: Option<HeaderValue>,
    /// Its body.
    pub body: Bytes,
}

impl Answer {
    /// Whether this is a correct answer to the benchmark's `tools/call`
    /// ([`is_correct`]).
    pub fn is_correct(&self, media: &str) -> bool {
        is_correct(self.status, self.content_type.as_ref(), &self.body, media)
    }
}

/// Whether an answer is a correct answer to the benchmark's `tools/call`:
/// a 200 whose `Content-Type` is the media type `media` (`type/subtype`,
/// lower case; parameters after it ignored, compared case-insensitively:
/// RFC 9110, "Media Type") and whose body holds [`MARKER`]. The media type
/// is what tells a JSON answer from an SSE one carrying the same result.
pub fn is_correct(
    status: u16,
    content_type: Option<&HeaderValue>,
    body: &[u8],
    media: &str,
) -> bool {
    let is_media = content_type.is_some_and(|v| {
        let bytes = v.as_bytes();
        let end = bytes.iter().position(|&b| b == b';').unwrap_or(bytes.len());
        bytes[..end]
            .trim_ascii()
            .eq_ignore_ascii_case(media.as_bytes())
    });
    status == 200 && is_media && memchr::memmem::find(body, MARKER).is_some()
}

/// Sends `req` once the connection is ready and returns the answer's
/// head, its body still to read.
pub async fn send(
    sender: &mut Sender,
    req: Request<Full<Bytes>>,
) -> Result<http::Response<hyper::body::Incoming>, String> {
    sender
        .ready()
        .await
        .map_err(|e| format!("connection: {e}"))?;
    sender
        .send_request(req)
        .await
        .map_err(|e| format!("request: {e}"))
}

/// Sends `req` and reads the whole answer.
pub async fn exchange(sender: &mut Sender, req: Request<Full<Bytes>>) -> Result<Answer, String> {
    let (mut head, body) = send(sender, req).await?.into_parts();
    let session = head
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = body
        .collect()
        .await
        .map_err(|e| format!("body: {e}"))?
        .to_bytes();
    Ok(Answer {
        status: head.status.as_u16(),
        session,
        content_type: head.headers.remove(header::CONTENT_TYPE),
        body,
    })
}

/// The `initialize` request that opens a 2025-11-25 session.
pub fn initialize(addr: SocketAddr, path: &str) -> Request<Full<Bytes>> {
    initialize_as(addr, path, "1")
}

/// The same, from a client whose `clientInfo.version` is `version`.
pub fn initialize_as(addr: SocketAddr, path: &str, version: &str) -> Request<Full<Bytes>> {
    Template::new(addr, path)
        .body(
            "initialize",
            &format!(
                r#"{{"protocolVersion":"{LEGACY}","capabilities":{{}},"clientInfo":{{"name":"mcp-compat-bench","version":"{version}"}}}}"#
            ),
        )
        .request(0)
}

/// The `notifications/initialized` that completes opening `session`.
pub fn initialized(addr: SocketAddr, path: &str, session: &str) -> Request<Full<Bytes>> {
    let mut note = Template::new(addr, path)
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", LEGACY);
    note.before_id = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into();
    let mut req = note.request(0);
    *req.body_mut() = Full::new(Bytes::from(note.before_id.clone()));
    req
}

/// Opens a 2025-11-25 session on `sender`: `initialize`, then
/// `notifications/initialized` (*Lifecycle*, "Initialization").
pub async fn open_session(
    sender: &mut Sender,
    addr: SocketAddr,
    path: &str,
) -> Result<String, String> {
    let answer = exchange(sender, initialize(addr, path)).await?;
    let session = match (answer.status, answer.session) {
        (200, Some(s)) => s,
        (status, _) => {
            return Err(format!(
                "initialize answered {status}: {}",
                String::from_utf8_lossy(&answer.body)
            ));
        }
    };
    let status = exchange(sender, initialized(addr, path, &session))
        .await?
        .status;
    if status != 202 {
        return Err(format!("notifications/initialized answered {status}"));
    }
    Ok(session)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &[u8] = br#"{"result":{"content":[{"type":"text","text":"5"}]}}"#;

    fn correct(status: u16, content_type: Option<&str>, body: &[u8], media: &str) -> bool {
        is_correct(status, content_type.map(hv).as_ref(), body, media)
    }

    #[test]
    fn a_correct_answer_is_a_200_of_the_media_type_with_the_result() {
        let json = "application/json";
        assert!(correct(200, Some(json), BODY, json));
        assert!(correct(
            200,
            Some(" Application/JSON ; charset=utf-8"),
            BODY,
            json
        ));
        assert!(correct(
            200,
            Some("text/event-stream"),
            BODY,
            "text/event-stream"
        ));
    }

    #[test]
    fn anything_else_is_wrong() {
        let json = "application/json";
        assert!(!correct(202, Some(json), BODY, json), "status");
        assert!(!correct(200, None, BODY, json), "no Content-Type");
        assert!(
            !correct(200, Some("text/event-stream"), BODY, json),
            "SSE for JSON"
        );
        assert!(
            !correct(200, Some(json), BODY, "text/event-stream"),
            "JSON for SSE"
        );
        assert!(
            !correct(200, Some("application/jsonx"), BODY, json),
            "longer type"
        );
        assert!(
            !correct(200, Some("application/js"), BODY, json),
            "shorter type"
        );
        assert!(
            !correct(200, Some(json), br#"{"text":"6"}"#, json),
            "wrong result"
        );
    }
}
