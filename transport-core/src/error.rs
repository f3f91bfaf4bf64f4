//! The structured reasons behind [`TransportError`](crate::transport::TransportError).
//!
//! In the rustls style, an error says who is at fault and why, as data:
//!
//! - [`Misbehaviour`]: the server broke a rule of the protocol
//!   ([`TransportError::PeerMisbehaved`](crate::transport::TransportError::PeerMisbehaved));
//! - [`ResumeFailure`]: a broken stream could not be resumed
//!   ([`TransportError::ResumeFailed`](crate::transport::TransportError::ResumeFailed));
//! - [`ConfigError`]: the client's configuration is unusable, nothing was
//!   sent ([`TransportError::Config`](crate::transport::TransportError::Config));
//! - [`LimitExceeded`]: a bound the client enforces was reached
//!   ([`TransportError::Limit`](crate::transport::TransportError::Limit)).
//!
//! Callers match on the variants, never on the text; the `Display` of each
//! says what happened as a sentence (the CLI and the tests print it).

use std::fmt;
use std::time::Duration;

use crate::jsonrpc::RequestId;
use crate::version::ProtocolVersion;

/// How the server broke the protocol.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Misbehaviour {
    /// An answer had a `Content-Type` the exchange does not allow.
    WrongContentType {
        /// Which answer (`"GET of the standalone stream"`, …).
        what: String,
        /// The media type it had (`None`: no `Content-Type`).
        got: Option<String>,
        /// What it must be (`"text/event-stream"`, …).
        expected: &'static str,
    },
    /// A POST carrying requests was answered `202 Accepted`, which is only
    /// for notifications and responses.
    AcceptedWithoutAnswer {
        /// Which answer.
        what: String,
    },
    /// A stream or body ended before something it had to carry.
    EndedWithout {
        /// Which stream or body.
        what: String,
        /// What it had to carry (`"its response"`, …).
        missing: String,
    },
    /// A body or SSE event is not a valid JSON-RPC message.
    InvalidJsonRpc {
        /// Where it came from.
        what: String,
        /// Why it does not parse.
        detail: String,
    },
    /// A JSON-RPC message of a kind not allowed where it arrived.
    UnexpectedMessage {
        /// What arrived (`"request tools/x (id 3)"`, a method, …).
        got: String,
        /// Where it arrived.
        context: String,
        /// The rule it breaks.
        rule: &'static str,
    },
    /// The response on a request's own stream belongs to another request.
    ResponseIdMismatch {
        /// The request the stream belongs to.
        expected: RequestId,
        /// The id the response carried (`None`: `null`).
        got: Option<RequestId>,
    },
    /// The `MCP-Session-Id` header is not 1 or more visible ASCII characters.
    InvalidSessionId {
        /// The header's value (lossily decoded).
        value: String,
    },
    /// A result does not have the shape its method defines.
    MalformedResult {
        /// Which result (`"InitializeResult"`, `"tools/list result"`, …).
        what: String,
        /// What is wrong with it.
        detail: String,
    },
    /// A `resultType` this client does not know (unrecognized values "MUST
    /// be considered invalid").
    UnknownResultType {
        /// The request's method.
        method: String,
        /// The `resultType` received.
        result_type: String,
    },
    /// A paginated list returned a cursor it had already returned (a loop).
    RepeatedCursor {
        /// The list method.
        method: String,
        /// The repeated cursor.
        cursor: String,
    },
    /// HTTP+SSE (2024-11-05): the stream carried no `endpoint` event.
    NoEndpointEvent {
        /// Which stream.
        what: String,
        /// How long the client waited (`None`: the stream ended first).
        waited: Option<Duration>,
    },
    /// HTTP+SSE (2024-11-05): the first SSE event is not `endpoint`.
    FirstEventNotEndpoint {
        /// Which stream.
        what: String,
        /// The type of the first event.
        got: String,
    },
    /// HTTP+SSE (2024-11-05): the `endpoint` event's data is not a usable
    /// URI reference.
    InvalidEndpoint {
        /// The event's data (trimmed).
        uri: String,
        /// Why it cannot be used.
        detail: String,
    },
    /// HTTP+SSE (2024-11-05): the `endpoint` is on another origin than the
    /// SSE URL (messages only ever go to the origin the user chose).
    EndpointOriginMismatch {
        /// The resolved endpoint.
        endpoint: String,
        /// Its origin.
        origin: String,
        /// The SSE URL's origin.
        expected: String,
    },
}

impl fmt::Display for Misbehaviour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Misbehaviour::WrongContentType {
                what,
                got,
                expected,
            } => match got {
                Some(got) => write!(
                    f,
                    "{what} was answered with content type {got:?}; expected {expected}"
                ),
                None => write!(
                    f,
                    "{what} was answered with no content type; expected {expected}"
                ),
            },
            Misbehaviour::AcceptedWithoutAnswer { what } => write!(
                f,
                "{what} was answered 202 Accepted; a POST carrying requests must be answered with JSON or an SSE stream"
            ),
            Misbehaviour::EndedWithout { what, missing } => {
                write!(f, "{what} ended without {missing}")
            }
            Misbehaviour::InvalidJsonRpc { what, detail } => {
                write!(f, "{what}: not a valid JSON-RPC message: {detail}")
            }
            Misbehaviour::UnexpectedMessage { got, context, rule } => {
                write!(f, "unexpected {got} on {context}: {rule}")
            }
            Misbehaviour::ResponseIdMismatch { expected, got } => {
                write!(
                    f,
                    "the response stream of request {expected} carried a response to "
                )?;
                match got {
                    Some(id) => write!(f, "request {id}"),
                    None => f.write_str("id null"),
                }
            }
            Misbehaviour::InvalidSessionId { value } => write!(
                f,
                "the MCP-Session-Id header {value:?} is not 1 or more visible ASCII characters (0x21-0x7E)"
            ),
            Misbehaviour::MalformedResult { what, detail } => {
                write!(f, "malformed {what}: {detail}")
            }
            Misbehaviour::UnknownResultType {
                method,
                result_type,
            } => write!(
                f,
                "unrecognized resultType {result_type:?} in the result of {method}; unrecognized values MUST be considered invalid"
            ),
            Misbehaviour::RepeatedCursor { method, cursor } => {
                write!(f, "{method} returned the cursor {cursor:?} twice")
            }
            Misbehaviour::NoEndpointEvent { what, waited } => match waited {
                Some(waited) => write!(
                    f,
                    "{what} opened an SSE stream but no `endpoint` event arrived within {waited:?}: \
                     not a 2024-11-05 HTTP+SSE server (its first event must be `endpoint`)"
                ),
                None => write!(
                    f,
                    "{what}: the SSE stream ended before its `endpoint` event: not an HTTP+SSE server"
                ),
            },
            Misbehaviour::FirstEventNotEndpoint { what, got } => write!(
                f,
                "{what}: the first SSE event is {got:?}, not `endpoint`: not a 2024-11-05 HTTP+SSE server"
            ),
            Misbehaviour::InvalidEndpoint { uri, detail } => write!(
                f,
                "the `endpoint` event's URI {uri:?} is not a usable URI reference: {detail}"
            ),
            Misbehaviour::EndpointOriginMismatch {
                endpoint,
                origin,
                expected,
            } => write!(
                f,
                "refusing the HTTP+SSE `endpoint` {endpoint}: its origin {origin} differs from the SSE URL's \
                 origin {expected}; messages are only ever sent to the origin the client connected to"
            ),
        }
    }
}

/// Why a broken stream could not be resumed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResumeFailure {
    /// A request's stream ended before the server sent any event id, so
    /// there is no `Last-Event-ID` to resume from (a GET without one would
    /// open the standalone stream instead).
    NoEventId {
        /// Which stream.
        what: String,
        /// How it ended.
        end: String,
    },
    /// `max_resume_attempts` reconnections in a row brought nothing new.
    AttemptsExhausted {
        /// Which stream.
        what: String,
        /// The reconnections made.
        attempts: u32,
        /// The time spent on them.
        elapsed: Duration,
        /// The configured bound.
        max_attempts: u32,
        /// How the last connection ended.
        last: String,
    },
    /// Waiting for the next reconnection would pass `max_resume_time`.
    TimeExhausted {
        /// Which stream.
        what: String,
        /// The reconnections made.
        attempts: u32,
        /// The time spent on them.
        elapsed: Duration,
        /// The wait the next one needed.
        wait: Duration,
        /// The configured bound.
        max_time: Duration,
        /// How the last connection ended.
        last: String,
    },
    /// The revision has no resumption (2026-07-28: "Resumable SSE streams
    /// via `Last-Event-ID` are not supported") and the request was not
    /// marked safe to re-issue.
    NotResumable {
        /// The revision.
        revision: ProtocolVersion,
        /// Which answer ended.
        what: String,
        /// How it ended.
        why: String,
    },
    /// A `subscriptions/listen` stream ended without its graceful-close
    /// result.
    SubscriptionEnded {
        /// The id of the `subscriptions/listen` request.
        id: RequestId,
        /// Why its stream could not go on.
        cause: Box<ResumeFailure>,
    },
}

impl fmt::Display for ResumeFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResumeFailure::NoEventId { what, end } => write!(
                f,
                "{what}: {end} before the server sent any event id, so there is no Last-Event-ID to resume from"
            ),
            ResumeFailure::AttemptsExhausted {
                what,
                attempts,
                elapsed,
                max_attempts,
                last,
            } => write!(
                f,
                "{what}: gave up after {attempts} reconnection attempts in {elapsed:?} that brought nothing new \
                 (max_resume_attempts = {max_attempts}); last: {last}"
            ),
            ResumeFailure::TimeExhausted {
                what,
                attempts,
                elapsed,
                wait,
                max_time,
                last,
            } => write!(
                f,
                "{what}: gave up after {attempts} reconnection attempts in {elapsed:?}: waiting {wait:?} more \
                 would pass max_resume_time ({max_time:?}); last: {last}"
            ),
            ResumeFailure::NotResumable {
                revision,
                what,
                why,
            } => write!(
                f,
                "{what} ended before its response ({why}); {revision} streams are not resumable \
                 (no GET, no Last-Event-ID); set RequestOptions::safe_to_retry to have a request \
                 re-issued with a new id"
            ),
            ResumeFailure::SubscriptionEnded { id, cause } => write!(
                f,
                "subscription {id} ended without a graceful-close result ({cause}); send \
                 subscriptions/listen again to resubscribe"
            ),
        }
    }
}

/// What is wrong with a client's configuration (nothing was sent).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// A URL that does not parse or is not `http(s)`.
    InvalidUrl {
        /// Which URL (`"MCP endpoint URL"`, `"SSE URL"`).
        what: &'static str,
        /// The URL as configured.
        url: String,
        /// Why it is refused.
        reason: String,
    },
    /// No protocol version to offer.
    NoVersions {
        /// The setting (`"ClientConfig::versions"`, …).
        setting: &'static str,
    },
    /// A protocol version this client cannot speak.
    UnusableVersion {
        /// The setting.
        setting: &'static str,
        /// The version named.
        version: ProtocolVersion,
        /// What the setting accepts.
        accepted: &'static str,
    },
    /// A count that must be at least 1 is 0.
    Zero {
        /// The setting(s).
        setting: &'static str,
    },
    /// Two settings that cannot be used together.
    Conflict {
        /// The settings.
        settings: &'static str,
        /// What to do instead.
        advice: &'static str,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::InvalidUrl { what, url, reason } => {
                write!(f, "invalid {what} {url:?}: {reason}")
            }
            ConfigError::NoVersions { setting } => write!(
                f,
                "{setting} is empty: the client must offer at least one protocol version"
            ),
            ConfigError::UnusableVersion {
                setting,
                version,
                accepted,
            } => write!(
                f,
                "{setting} names {version}, but it accepts only {accepted}"
            ),
            ConfigError::Zero { setting } => write!(f, "{setting} must be at least 1"),
            ConfigError::Conflict { settings, advice } => {
                write!(f, "{settings} cannot be used together: {advice}")
            }
        }
    }
}

/// A bound the client enforces was reached: which setting, its value, and
/// what reached it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitExceeded {
    /// The setting, as its config names it
    /// (`"ModernClientConfig::max_event_bytes"`, `"max_body_bytes"`, …).
    pub setting: &'static str,
    /// Its value (bytes, rounds, pages: the setting's unit).
    pub limit: u64,
    /// What reached it (`"an SSE event of the answer to tools/call"`, …).
    pub what: String,
}

impl LimitExceeded {
    /// `what` reached `setting`, whose value is `limit`.
    pub fn new(setting: &'static str, limit: u64, what: impl Into<String>) -> Self {
        LimitExceeded {
            setting,
            limit,
            what: what.into(),
        }
    }
}

impl fmt::Display for LimitExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} exceeds {} ({})", self.what, self.setting, self.limit)
    }
}

// Tests (with `TransportError`, which wraps these): transport-core/tests/errors.rs.
