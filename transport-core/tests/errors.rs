//! The `Display` of every error reason, through `TransportError`, and
//! `TransportError::is_retryable`.

use std::time::Duration;

use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::jsonrpc::RequestId;
use mcp_transport_core::transport::{
    ConfigError, LimitExceeded, Misbehaviour, ResumeFailure, TransportError,
};

#[test]
fn misbehaviours_say_what_happened() {
    let cases: Vec<(Misbehaviour, &str)> = vec![
        (
            Misbehaviour::WrongContentType {
                what: "GET of the standalone stream".into(),
                got: Some("text/plain".into()),
                expected: "text/event-stream",
            },
            "GET of the standalone stream was answered with content type \"text/plain\"; expected text/event-stream",
        ),
        (
            Misbehaviour::WrongContentType {
                what: "the answer to request 1".into(),
                got: None,
                expected: "application/json or text/event-stream",
            },
            "the answer to request 1 was answered with no content type; expected application/json or text/event-stream",
        ),
        (
            Misbehaviour::AcceptedWithoutAnswer {
                what: "the answer to request 7".into(),
            },
            "the answer to request 7 was answered 202 Accepted; a POST carrying requests must be answered with JSON or an SSE stream",
        ),
        (
            Misbehaviour::EndedWithout {
                what: "the answer to request 3".into(),
                missing: "its response".into(),
            },
            "the answer to request 3 ended without its response",
        ),
        (
            Misbehaviour::InvalidJsonRpc {
                what: "an SSE event".into(),
                detail: "expected value at line 1 column 1".into(),
            },
            "an SSE event: not a valid JSON-RPC message: expected value at line 1 column 1",
        ),
        (
            Misbehaviour::UnexpectedMessage {
                got: "JSON-RPC request sampling/createMessage (id \"s1\")".into(),
                context: "the response stream of tools/call".into(),
                rule: "servers MUST NOT send requests on a stream",
            },
            "unexpected JSON-RPC request sampling/createMessage (id \"s1\") on the response stream of tools/call: servers MUST NOT send requests on a stream",
        ),
        (
            Misbehaviour::ResponseIdMismatch {
                expected: RequestId::Number(4),
                got: Some(RequestId::String("x".into())),
            },
            "the response stream of request 4 carried a response to request \"x\"",
        ),
        (
            Misbehaviour::ResponseIdMismatch {
                expected: RequestId::Number(4),
                got: None,
            },
            "the response stream of request 4 carried a response to id null",
        ),
        (
            Misbehaviour::InvalidSessionId {
                value: "a b".into(),
            },
            "the MCP-Session-Id header \"a b\" is not 1 or more visible ASCII characters (0x21-0x7E)",
        ),
        (
            Misbehaviour::MalformedResult {
                what: "InitializeResult".into(),
                detail: "missing field `protocolVersion`".into(),
            },
            "malformed InitializeResult: missing field `protocolVersion`",
        ),
        (
            Misbehaviour::UnknownResultType {
                method: "tools/call".into(),
                result_type: "teleported".into(),
            },
            "unrecognized resultType \"teleported\" in the result of tools/call; unrecognized values MUST be considered invalid",
        ),
        (
            Misbehaviour::RepeatedCursor {
                method: "tools/list".into(),
                cursor: "c1".into(),
            },
            "tools/list returned the cursor \"c1\" twice",
        ),
        (
            Misbehaviour::NoEndpointEvent {
                what: "GET http://h/sse".into(),
                waited: Some(Duration::from_secs(2)),
            },
            "GET http://h/sse opened an SSE stream but no `endpoint` event arrived within 2s: not a 2024-11-05 HTTP+SSE server (its first event must be `endpoint`)",
        ),
        (
            Misbehaviour::NoEndpointEvent {
                what: "GET http://h/sse".into(),
                waited: None,
            },
            "GET http://h/sse: the SSE stream ended before its `endpoint` event: not an HTTP+SSE server",
        ),
        (
            Misbehaviour::FirstEventNotEndpoint {
                what: "GET http://h/sse".into(),
                got: "message".into(),
            },
            "GET http://h/sse: the first SSE event is \"message\", not `endpoint`: not a 2024-11-05 HTTP+SSE server",
        ),
        (
            Misbehaviour::InvalidEndpoint {
                uri: "::".into(),
                detail: "relative URL without a base".into(),
            },
            "the `endpoint` event's URI \"::\" is not a usable URI reference: relative URL without a base",
        ),
        (
            Misbehaviour::EndpointOriginMismatch {
                endpoint: "http://evil.example/m".into(),
                origin: "http://evil.example".into(),
                expected: "http://127.0.0.1:8080".into(),
            },
            "refusing the HTTP+SSE `endpoint` http://evil.example/m: its origin http://evil.example differs from the SSE URL's origin http://127.0.0.1:8080; messages are only ever sent to the origin the client connected to",
        ),
    ];
    for (m, text) in cases {
        assert_eq!(m.to_string(), text);
        assert_eq!(
            TransportError::from(m).to_string(),
            format!("peer misbehaved: {text}")
        );
    }
}

#[test]
fn resume_failures_say_why_and_name_the_bounds() {
    let attempts = ResumeFailure::AttemptsExhausted {
        what: "the stream of request 1".into(),
        attempts: 3,
        elapsed: Duration::from_millis(300),
        max_attempts: 3,
        last: "the server ended the stream".into(),
    };
    assert_eq!(
        attempts.to_string(),
        "the stream of request 1: gave up after 3 reconnection attempts in 300ms that brought \
         nothing new (max_resume_attempts = 3); last: the server ended the stream"
    );
    let time = ResumeFailure::TimeExhausted {
        what: "the standalone GET stream".into(),
        attempts: 2,
        elapsed: Duration::from_secs(100),
        wait: Duration::from_secs(60),
        max_time: Duration::from_secs(150),
        last: "the connection broke".into(),
    };
    assert_eq!(
        time.to_string(),
        "the standalone GET stream: gave up after 2 reconnection attempts in 100s: waiting 60s \
         more would pass max_resume_time (150s); last: the connection broke"
    );
    let no_id = ResumeFailure::NoEventId {
        what: "the stream of request 2".into(),
        end: "the connection broke".into(),
    };
    assert_eq!(
        no_id.to_string(),
        "the stream of request 2: the connection broke before the server sent any event id, so \
         there is no Last-Event-ID to resume from"
    );
    let not = ResumeFailure::NotResumable {
        revision: ProtocolVersion::V2026_07_28,
        what: "the answer to tools/call (request 5)".into(),
        why: "the server ended the stream".into(),
    };
    assert_eq!(
        not.to_string(),
        "the answer to tools/call (request 5) ended before its response (the server ended the \
         stream); 2026-07-28 streams are not resumable (no GET, no Last-Event-ID); set \
         RequestOptions::safe_to_retry to have a request re-issued with a new id"
    );
    let sub = ResumeFailure::SubscriptionEnded {
        id: RequestId::Number(9),
        cause: Box::new(not.clone()),
    };
    assert_eq!(
        sub.to_string(),
        format!(
            "subscription 9 ended without a graceful-close result ({not}); send \
             subscriptions/listen again to resubscribe"
        )
    );
    assert_eq!(
        TransportError::from(no_id.clone()).to_string(),
        format!("stream could not be resumed: {no_id}")
    );
}

#[test]
fn config_errors_name_the_setting() {
    let cases = [
        (
            ConfigError::InvalidUrl {
                what: "SSE URL",
                url: "ftp://h/sse".into(),
                reason: "not an http(s) URL".into(),
            },
            "invalid SSE URL \"ftp://h/sse\": not an http(s) URL",
        ),
        (
            ConfigError::NoVersions {
                setting: "ClientConfig::versions",
            },
            "ClientConfig::versions is empty: the client must offer at least one protocol version",
        ),
        (
            ConfigError::UnusableVersion {
                setting: "ModernClientConfig::versions",
                version: ProtocolVersion::V2025_03_26,
                accepted: "modern versions",
            },
            "ModernClientConfig::versions names 2025-03-26, but it accepts only modern versions",
        ),
        (
            ConfigError::Zero {
                setting: "HttpSseConfig::channel_capacity",
            },
            "HttpSseConfig::channel_capacity must be at least 1",
        ),
    ];
    for (c, text) in cases {
        assert_eq!(c.to_string(), text);
        assert_eq!(
            TransportError::from(c).to_string(),
            format!("invalid configuration: {text}")
        );
    }
    assert_eq!(
        TransportError::NotOffered {
            what: "a standalone GET stream (405 Method Not Allowed)"
        }
        .to_string(),
        "the server does not offer a standalone GET stream (405 Method Not Allowed)"
    );
}

#[test]
fn limits_name_the_setting_its_value_and_what_reached_it() {
    let l = LimitExceeded::new(
        "ModernClientConfig::max_input_rounds",
        8,
        "the input rounds tools/call asked for",
    );
    assert_eq!(
        l.to_string(),
        "the input rounds tools/call asked for exceeds ModernClientConfig::max_input_rounds (8)"
    );
    assert_eq!(
        TransportError::Limit(l).to_string(),
        "limit exceeded: the input rounds tools/call asked for exceeds \
         ModernClientConfig::max_input_rounds (8)"
    );
}

#[test]
fn retryable_errors_are_those_a_resend_may_fix() {
    let retryable = [
        TransportError::Connection("reset".into()),
        TransportError::Timeout(Duration::from_secs(1)),
        TransportError::SessionExpired {
            session_id: "s".into(),
        },
        TransportError::ResumeFailed(ResumeFailure::NoEventId {
            what: "w".into(),
            end: "e".into(),
        }),
        TransportError::Http {
            status: 503,
            message: "busy".into(),
            rpc: None,
        },
        TransportError::Http {
            status: 429,
            message: "slow down".into(),
            rpc: None,
        },
    ];
    for e in &retryable {
        assert!(e.is_retryable(), "{e:?}");
    }
    let final_ = [
        TransportError::PeerMisbehaved(Misbehaviour::AcceptedWithoutAnswer { what: "w".into() }),
        TransportError::Config(ConfigError::NoVersions { setting: "s" }),
        TransportError::InvalidInput("x".into()),
        TransportError::NotOffered { what: "x" },
        TransportError::Internal("bug".into()),
        TransportError::Closed,
        TransportError::Limit(LimitExceeded::new("max_body_bytes", 4, "a body")),
        TransportError::Http {
            status: 400,
            message: "bad".into(),
            rpc: None,
        },
        TransportError::Unsupported {
            revision: ProtocolVersion::V2026_07_28,
            what: "x",
        },
    ];
    for e in &final_ {
        assert!(!e.is_retryable(), "{e:?}");
    }
}

#[test]
fn accessors_return_the_typed_reason() {
    let m = Misbehaviour::InvalidSessionId { value: " ".into() };
    let e = TransportError::from(m.clone());
    assert_eq!(e.misbehaviour(), Some(&m));
    assert_eq!(e.resume_failure(), None);
    let r = ResumeFailure::NoEventId {
        what: "w".into(),
        end: "e".into(),
    };
    let e = TransportError::from(r.clone());
    assert_eq!(e.resume_failure(), Some(&r));
    assert_eq!(e.misbehaviour(), None);
}
