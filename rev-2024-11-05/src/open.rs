//! Opening the SSE stream and reading the `endpoint` event.
//!
//! 2024-11-05 *Transports*, "HTTP with SSE": "When a client connects, the
//! server MUST send an `endpoint` event containing a URI for the client to
//! use for sending messages." 2025-11-25 *Transports*, "Backwards
//! Compatibility": the client issues "a GET request to the server URL,
//! expecting that this will open an SSE stream and return an `endpoint`
//! event as the first event"; only "When the `endpoint` event arrives, the
//! client can assume this is a server running the old HTTP+SSE transport".
//! So anything else — a non-2xx status, a body that is not
//! `text/event-stream`, a first event of another type, no event in time —
//! means the server does not speak HTTP+SSE, and is reported as such.

use std::time::Duration;

use http::header::{ACCEPT, CACHE_CONTROL, CONTENT_TYPE};
use mcp_http_edge::client::{MAX_ERROR_BODY, SseBody, SseEnd, SseNext, read_limited, send};
use mcp_http_edge::headers::EVENT_STREAM;
use mcp_transport_core::sse::SseItem;
use mcp_transport_core::transport::{Misbehaviour, TransportError};

use super::shared::http_error;

/// An open SSE stream whose first event was `endpoint`.
pub(crate) struct Opened {
    /// The rest of the stream, positioned after the `endpoint` event (items
    /// decoded from the same chunks stay queued in it).
    pub(crate) body: SseBody,
    /// The resolved, same-origin message endpoint.
    pub(crate) endpoint: reqwest::Url,
}

/// How far opening got, to say what did not arrive in time.
#[derive(Clone, Copy)]
enum Phase {
    Answer,
    Endpoint,
}

/// GETs the SSE URL and reads up to the `endpoint` event, all within
/// `timeout`.
pub(crate) async fn open(
    http: &reqwest::Client,
    sse_url: &reqwest::Url,
    max_event_bytes: usize,
    timeout: Duration,
) -> Result<Opened, TransportError> {
    let mut phase = Phase::Answer;
    let work = open_inner(http, sse_url, max_event_bytes, &mut phase);
    let outcome = tokio::time::timeout(timeout, work).await;
    match outcome {
        Ok(result) => result,
        Err(_) => Err(match phase {
            Phase::Answer => TransportError::Connection(format!(
                "GET {sse_url} (the 2024-11-05 HTTP+SSE stream): no answer within {timeout:?}"
            )),
            Phase::Endpoint => TransportError::PeerMisbehaved(Misbehaviour::NoEndpointEvent {
                what: format!("GET {sse_url}"),
                waited: Some(timeout),
            }),
        }),
    }
}

async fn open_inner(
    http: &reqwest::Client,
    sse_url: &reqwest::Url,
    max_event_bytes: usize,
    phase: &mut Phase,
) -> Result<Opened, TransportError> {
    let what = format!("GET {sse_url} (expecting the 2024-11-05 HTTP+SSE stream)");
    let builder = http
        .get(sse_url.clone())
        .header(ACCEPT, EVENT_STREAM)
        .header(CACHE_CONTROL, "no-cache");
    let response = send(builder, &what).await?;
    let status = response.status();
    if !status.is_success() {
        let body = read_limited(response, MAX_ERROR_BODY).await;
        return Err(http_error(
            status,
            &body,
            &format!("{what}: refused, so not an HTTP+SSE endpoint"),
        ));
    }
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let essence = content_type.split(';').next().unwrap_or("").trim();
    if !essence.eq_ignore_ascii_case(EVENT_STREAM) {
        return Err(TransportError::PeerMisbehaved(
            Misbehaviour::WrongContentType {
                what: format!("{what} (HTTP {status}; not an HTTP+SSE server)"),
                got: Some(content_type).filter(|ct| !ct.is_empty()),
                expected: "text/event-stream",
            },
        ));
    }
    *phase = Phase::Endpoint;
    let mut body = SseBody::new(response, max_event_bytes);
    loop {
        let next = body
            .next()
            .await
            .map_err(|o| o.limit_exceeded("HttpSseConfig::max_event_bytes", what.clone()))?;
        let first = match next {
            SseNext::Item(SseItem::Event(first)) => first,
            // Ids and `retry` before the first event mean nothing here.
            SseNext::Item(_) => continue,
            SseNext::End(SseEnd::Eof) => {
                return Err(TransportError::PeerMisbehaved(
                    Misbehaviour::NoEndpointEvent {
                        what: what.to_string(),
                        waited: None,
                    },
                ));
            }
            SseNext::End(SseEnd::Broken(chain)) => {
                return Err(TransportError::Connection(format!(
                    "{what}: reading the stream before its `endpoint` event: {chain}"
                )));
            }
        };
        if first.event_type != "endpoint" {
            return Err(TransportError::PeerMisbehaved(
                Misbehaviour::FirstEventNotEndpoint {
                    what: what.to_string(),
                    got: first.event_type,
                },
            ));
        }
        let endpoint = resolve_endpoint(sse_url, &first.data)?;
        tracing::debug!(%sse_url, %endpoint, "HTTP+SSE endpoint event received");
        return Ok(Opened { body, endpoint });
    }
}

/// Resolves the `endpoint` event's URI against the SSE URL (it may be
/// relative, as the common servers send it, or absolute) and refuses one
/// of another origin.
///
/// Security: every message the client sends, its capabilities and the
/// answers of its input handler (sampling, roots) included, goes to this
/// URI. A server — or anything that can inject into its stream — naming a
/// different origin would redirect them to a third party, so the endpoint
/// must have the SSE URL's scheme, host and port (the same rule browsers
/// apply to `fetch`; 2024-11-05 *Transports*, "Security Warning" asks
/// servers to guard against DNS rebinding, and the client keeps to the
/// origin the user chose).
pub(crate) fn resolve_endpoint(
    sse_url: &reqwest::Url,
    data: &str,
) -> Result<reqwest::Url, TransportError> {
    let text = data.trim();
    if text.is_empty() {
        return Err(TransportError::PeerMisbehaved(
            Misbehaviour::InvalidEndpoint {
                uri: String::new(),
                detail: "the `endpoint` event of the HTTP+SSE stream carries no URI".into(),
            },
        ));
    }
    let endpoint = sse_url.join(text).map_err(|e| {
        TransportError::PeerMisbehaved(Misbehaviour::InvalidEndpoint {
            uri: text.to_owned(),
            detail: e.to_string(),
        })
    })?;
    if endpoint.origin() != sse_url.origin() {
        return Err(TransportError::PeerMisbehaved(
            Misbehaviour::EndpointOriginMismatch {
                endpoint: endpoint.to_string(),
                origin: endpoint.origin().ascii_serialization(),
                expected: sse_url.origin().ascii_serialization(),
            },
        ));
    }
    Ok(endpoint)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> reqwest::Url {
        reqwest::Url::parse("http://127.0.0.1:8080/mcp/sse").unwrap()
    }

    #[test]
    fn relative_and_absolute_same_origin_endpoints_resolve() {
        let cases = [
            (
                "/messages?sessionId=abc",
                "http://127.0.0.1:8080/messages?sessionId=abc",
            ),
            (
                "messages/?session_id=1",
                "http://127.0.0.1:8080/mcp/messages/?session_id=1",
            ),
            (
                " http://127.0.0.1:8080/m?x=1 ",
                "http://127.0.0.1:8080/m?x=1",
            ),
            ("//127.0.0.1:8080/m", "http://127.0.0.1:8080/m"),
        ];
        for (data, want) in cases {
            assert_eq!(resolve_endpoint(&base(), data).unwrap().as_str(), want);
        }
        // The default port is the same origin whether written or not.
        let https = reqwest::Url::parse("https://example.com/sse").unwrap();
        assert!(resolve_endpoint(&https, "https://example.com:443/messages").is_ok());
    }

    #[test]
    fn other_origins_and_empty_endpoints_are_refused() {
        for data in [
            "http://evil.example/messages",
            "http://127.0.0.1:8081/messages",
            "https://127.0.0.1:8080/messages",
            "//evil.example/messages",
            "http://localhost:8080/messages",
            "data:text/plain,x",
            "",
            "  ",
        ] {
            let err = resolve_endpoint(&base(), data).expect_err(data);
            let empty = data.trim().is_empty();
            assert!(
                matches!(
                    (&err, empty),
                    (
                        TransportError::PeerMisbehaved(Misbehaviour::InvalidEndpoint { .. }),
                        true
                    ) | (
                        TransportError::PeerMisbehaved(Misbehaviour::EndpointOriginMismatch { .. }),
                        false
                    )
                ),
                "{data}: {err:?}"
            );
        }
        let err = resolve_endpoint(&base(), "http://evil.example/m").unwrap_err();
        assert_eq!(
            err.misbehaviour(),
            Some(&Misbehaviour::EndpointOriginMismatch {
                endpoint: "http://evil.example/m".into(),
                origin: "http://evil.example".into(),
                expected: "http://127.0.0.1:8080".into(),
            })
        );
        let text = err.to_string();
        assert!(
            text.contains("http://evil.example") && text.contains("http://127.0.0.1:8080"),
            "{text}"
        );
    }
}
