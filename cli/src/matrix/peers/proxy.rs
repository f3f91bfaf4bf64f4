//! The loopback reverse proxy under the peer matrix's two fronts: the
//! recorder before a peer's server ([`super::ours`]) and `check-client`'s
//! session-forgetting front before ours ([`super::forget`]). Each front
//! decides what to do with a request; this module forwards it as it came
//! and streams the answer back.

use std::net::SocketAddr;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use futures_util::TryStreamExt;

/// The most bytes of one request body a front reads (it may parse it).
pub(crate) const MAX_BODY: usize = 4 * 1024 * 1024;
/// How long connecting to the upstream may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one forwarded exchange, its streamed answer included, may take
/// (a peer scenario's client is killed sooner, `process::CLIENT_TIMEOUT`).
const FORWARD_TIMEOUT: Duration = Duration::from_secs(60);

/// The client a front forwards with: no system proxy (the upstream is on
/// loopback), bounded in time.
pub(crate) fn client() -> std::io::Result<reqwest::Client> {
    reqwest::Client::builder()
        .no_proxy()
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(FORWARD_TIMEOUT)
        .build()
        .map_err(std::io::Error::other)
}

/// Reads a request body up to [`MAX_BODY`]; a longer one is answered 413
/// by the front itself.
pub(crate) async fn read_body(body: Body) -> Result<Bytes, Response> {
    axum::body::to_bytes(body, MAX_BODY)
        .await
        .map_err(|_| (StatusCode::PAYLOAD_TOO_LARGE, "body too large").into_response())
}

/// The request's URL at `upstream`: the same path and query.
pub(crate) fn upstream_url(upstream: SocketAddr, uri: &Uri) -> String {
    let path = uri.path_and_query().map_or("/", |q| q.as_str());
    format!("http://{upstream}{path}")
}

/// The request headers to send upstream: all but `Host` (the upstream's
/// own is set) and `Content-Length` (set from the body).
pub(crate) fn request_headers(from: &HeaderMap) -> HeaderMap {
    let mut h = from.clone();
    h.remove(header::HOST);
    h.remove(header::CONTENT_LENGTH);
    h
}

/// Sends the request upstream and streams its answer back: the status and
/// headers as they came, or 502 when the upstream cannot be reached. The
/// framing headers (`Content-Length`, `Transfer-Encoding`) are hop-by-hop:
/// the front's own HTTP stack frames the body it streams (while the two
/// agree, as they do here, keeping them would change nothing, so no test
/// tells their removal apart).
pub(crate) async fn forward(
    http: &reqwest::Client,
    method: Method,
    url: &str,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let sent = http
        .request(method, url)
        .headers(headers)
        .body(body)
        .send()
        .await;
    let resp = match sent {
        Ok(resp) => resp,
        Err(e) => {
            return (StatusCode::BAD_GATEWAY, format!("upstream: {e}")).into_response();
        }
    };
    let mut out = Response::builder().status(resp.status());
    if let Some(h) = out.headers_mut() {
        *h = resp.headers().clone();
        h.remove(header::CONTENT_LENGTH);
        h.remove(header::TRANSFER_ENCODING);
    }
    let stream = resp.bytes_stream().map_err(std::io::Error::other);
    out.body(Body::from_stream(stream))
        .unwrap_or_else(|_| StatusCode::BAD_GATEWAY.into_response())
}
