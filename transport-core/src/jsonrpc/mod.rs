//! JSON-RPC 2.0 messages as MCP uses them.
//!
//! MCP messages "MUST be UTF-8 encoded" JSON-RPC 2.0 (each revision's
//! *Transports* page); a message is a request, a notification or a response
//! (with a `result` or an `error`). Revision 2025-03-26 alone also allows a
//! batch (a JSON array of them), which [`parse_body`] accepts only when asked.
//!
//! ## Why payloads stay raw
//!
//! The transport routes messages; it does not interpret `params` or `result`.
//! Parsing those into `serde_json::Value` trees costs an allocation per node
//! and a second serialization on the way out, on every message of the hot
//! path. Instead the envelope (`jsonrpc`, `id`, `method`) is parsed and the
//! payloads are kept as [`RawValue`]: a validated, byte-exact slice of the
//! original JSON that is written back out unchanged. Handlers that need the
//! contents deserialize them into their own types, once.
//!
//! ## Ids keep their exact form
//!
//! `1` and `"1"` are different ids, and a response must echo the id exactly.
//! [`RequestId`] is a string or an integer (MCP's `RequestId`; fractional
//! numbers and `null` are rejected as `-32600`).
//!
//! ## Classifying bad input
//!
//! Unparsable JSON is [`PARSE_ERROR`] (`-32700`); valid JSON that is not a
//! conforming message is [`INVALID_REQUEST`] (`-32600`). Both become an error
//! response that has no `id` ([`BodyError::to_response`]), as the Streamable
//! HTTP pages allow ("The HTTP response body MAY comprise a JSON-RPC error
//! response that has no id").

use std::fmt;

use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::json_members::ObjectIndex;
use crate::json_members::strict::InnerSpans;

/// `-32700`: invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// `-32600`: the JSON sent is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// `-32601`: the method does not exist or is not available.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// `-32602`: invalid method parameters.
pub const INVALID_PARAMS: i64 = -32602;
/// `-32603`: internal JSON-RPC error.
pub const INTERNAL_ERROR: i64 = -32603;
/// `-32002`: resource not found (MCP).
pub const RESOURCE_NOT_FOUND: i64 = -32002;
/// `-32020`: HTTP headers disagree with the body (2026-07-28, SEP-2243 `HeaderMismatch`).
pub const HEADER_MISMATCH: i64 = -32020;
/// `-32021`: a client capability the request needs is missing (2026-07-28).
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// `-32022`: the requested protocol version is not supported (2026-07-28).
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// A JSON-RPC request id: a string or an integer, kept exactly as received.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id (`"id": 7`).
    Number(i64),
    /// A string id (`"id": "7"`).
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::String(s)
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => s.serialize_i64(*n),
            RequestId::String(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer request id")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
                Ok(RequestId::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
                i64::try_from(v)
                    .map(RequestId::Number)
                    .map_err(|_| E::custom("integer id out of range"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
                Ok(RequestId::String(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<RequestId, E> {
                Ok(RequestId::String(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// A JSON-RPC error object (`{"code", "message", "data"?}`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code (see the constants of this module).
    pub code: i64,
    /// A short description.
    pub message: String,
    /// Additional information, kept raw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Box<RawValue>>,
}

impl PartialEq for ErrorObject {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
            && self.message == other.message
            && self.data.as_ref().map(|d| d.get()) == other.data.as_ref().map(|d| d.get())
    }
}

impl ErrorObject {
    /// An error with a code and a message and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches `data`, serialized once.
    pub fn with_data<T: Serialize>(mut self, data: &T) -> Self {
        self.data = to_raw(data).ok();
        self
    }

    /// `-32601 Method not found`, naming the method.
    pub fn method_not_found(method: &str) -> Self {
        ErrorObject::new(METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }

    /// `-32602 Invalid params` with a reason.
    pub fn invalid_params(reason: impl fmt::Display) -> Self {
        ErrorObject::new(INVALID_PARAMS, format!("Invalid params: {reason}"))
    }

    /// `-32603 Internal error` with a reason.
    pub fn internal(reason: impl fmt::Display) -> Self {
        ErrorObject::new(INTERNAL_ERROR, format!("Internal error: {reason}"))
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JSON-RPC error {}: {}", self.code, self.message)
    }
}

/// A request: it has an `id` and expects exactly one response.
#[derive(Clone, Debug)]
pub struct Request {
    /// The id the response must echo.
    pub id: RequestId,
    /// The method name, e.g. `tools/call`.
    pub method: String,
    /// The parameters, raw (always a JSON object when present).
    pub params: Option<Box<RawValue>>,
}

/// A notification: no `id`, no response.
#[derive(Clone, Debug)]
pub struct Notification {
    /// The method name, e.g. `notifications/progress`.
    pub method: String,
    /// The parameters, raw (always a JSON object when present).
    pub params: Option<Box<RawValue>>,
}

/// A response: the `result` or the `error` of one request.
#[derive(Clone, Debug)]
pub struct Response {
    /// The id of the request answered; `None` only for an error response to
    /// input whose id could not be determined.
    pub id: Option<RequestId>,
    /// The outcome.
    pub payload: Result<Box<RawValue>, ErrorObject>,
}

/// Any single JSON-RPC message.
#[derive(Clone, Debug)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A response (result or error).
    Response(Response),
}

impl Request {
    /// Builds a request, serializing `params` once.
    pub fn new<P: Serialize>(
        id: impl Into<RequestId>,
        method: impl Into<String>,
        params: Option<&P>,
    ) -> Result<Self, serde_json::Error> {
        Ok(Request {
            id: id.into(),
            method: method.into(),
            params: params.map(to_raw).transpose()?,
        })
    }

    /// The `_meta` object of the params, if any, parsed (small and rarely large).
    pub fn meta(&self) -> Option<serde_json::Map<String, serde_json::Value>> {
        params_meta(self.params.as_deref())
    }
}

impl Notification {
    /// Builds a notification, serializing `params` once.
    pub fn new<P: Serialize>(
        method: impl Into<String>,
        params: Option<&P>,
    ) -> Result<Self, serde_json::Error> {
        Ok(Notification {
            method: method.into(),
            params: params.map(to_raw).transpose()?,
        })
    }

    /// `notifications/cancelled` for request `id`, with a human-readable
    /// `reason` (*Cancellation*: "requestId", "reason").
    pub fn cancelled(id: &RequestId, reason: &str) -> Self {
        let params = serde_json::json!({ "requestId": id, "reason": reason });
        Notification::new("notifications/cancelled", Some(&params))
            .expect("a request id and a string serialize")
    }
}

impl Response {
    /// A successful response carrying `result`.
    pub fn result(id: RequestId, result: Box<RawValue>) -> Self {
        Response {
            id: Some(id),
            payload: Ok(result),
        }
    }

    /// An error response.
    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Response {
            id,
            payload: Err(error),
        }
    }

    /// Whether this is an error response.
    pub fn is_error(&self) -> bool {
        self.payload.is_err()
    }
}

fn params_meta(params: Option<&RawValue>) -> Option<serde_json::Map<String, serde_json::Value>> {
    #[derive(Deserialize)]
    struct OnlyMeta {
        #[serde(rename = "_meta")]
        meta: Option<serde_json::Map<String, serde_json::Value>>,
    }
    let raw = params?;
    serde_json::from_str::<OnlyMeta>(raw.get()).ok()?.meta
}

/// Returns `params` with `_meta.<key>` set to `value` (creating `params` and
/// `_meta` as needed). Used for `progressToken` and the 2026-07-28 request
/// metadata; it parses the params once, so call it only when a key must be
/// added.
///
/// # Errors
///
/// When `params` is present but not a JSON object.
pub fn set_meta(
    params: Option<Box<RawValue>>,
    key: &str,
    value: serde_json::Value,
) -> Result<Box<RawValue>, BodyError> {
    let mut map: serde_json::Map<String, serde_json::Value> = match &params {
        Some(p) => {
            serde_json::from_str(p.get()).map_err(|_| invalid("\"params\" must be an object"))?
        }
        None => serde_json::Map::new(),
    };
    let meta = map
        .entry("_meta")
        .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
    match meta {
        serde_json::Value::Object(m) => {
            m.insert(key.to_owned(), value);
        }
        _ => return Err(invalid("\"params._meta\" must be an object")),
    }
    to_raw(&map).map_err(|e| invalid(e.to_string()))
}

/// Serializes any value into an owned [`RawValue`].
pub fn to_raw<T: Serialize + ?Sized>(value: &T) -> Result<Box<RawValue>, serde_json::Error> {
    serde_json::value::to_raw_value(value)
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Message::Request(r) => r.serialize(s),
            Message::Notification(n) => n.serialize(s),
            Message::Response(r) => r.serialize(s),
        }
    }
}

impl Serialize for Request {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("jsonrpc", "2.0")?;
        m.serialize_entry("id", &self.id)?;
        m.serialize_entry("method", &self.method)?;
        if let Some(p) = &self.params {
            m.serialize_entry("params", p)?;
        }
        m.end()
    }
}

impl Serialize for Notification {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("jsonrpc", "2.0")?;
        m.serialize_entry("method", &self.method)?;
        if let Some(p) = &self.params {
            m.serialize_entry("params", p)?;
        }
        m.end()
    }
}

impl Serialize for Response {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("jsonrpc", "2.0")?;
        if let Some(id) = &self.id {
            m.serialize_entry("id", id)?;
        }
        match &self.payload {
            Ok(r) => m.serialize_entry("result", r)?,
            Err(e) => m.serialize_entry("error", e)?,
        }
        m.end()
    }
}

/// The text of a result response to `id` up to its `result` value
/// (`{"jsonrpc":"2.0","id":<id>,"result":`, as [`Response`] serializes),
/// with room for `room` more bytes: the caller appends the result's JSON
/// text and the closing `}`. An integer id is written with `itoa`, not
/// `core::fmt` (~230 instructions). The string is allocated once, at its
/// final size when the caller's `room` is exact.
pub fn result_prefix(id: &RequestId, room: usize) -> String {
    const HEAD: &str = r#"{"jsonrpc":"2.0","id":"#;
    const TAIL: &str = r#","result":"#;
    let mut number = itoa::Buffer::new();
    let quoted;
    let id_text = match id {
        RequestId::Number(n) => number.format(*n),
        RequestId::String(s) => {
            quoted =
                serde_json::to_string(s).unwrap_or_else(|_| unreachable!("a string serializes"));
            quoted.as_str()
        }
    };
    let mut out = String::with_capacity(HEAD.len() + id_text.len() + TAIL.len() + room);
    out.push_str(HEAD);
    out.push_str(id_text);
    out.push_str(TAIL);
    out
}

/// The text of the result response to `id` whose `result` is the JSON
/// text `result`, copied once: what [`Message::to_json`] writes for it.
pub fn result_json(id: &RequestId, result: &str) -> String {
    let mut out = result_prefix(id, result.len() + 1);
    out.push_str(result);
    out.push('}');
    out
}

impl Message {
    /// Serializes to a JSON string. The envelope is compact; payloads kept
    /// raw (`params`, `result`, error `data`) keep the whitespace they
    /// arrived with, which may include line breaks (found by the
    /// `jsonrpc_body` fuzz target). SSE carries such text intact: the
    /// encoder splits it into `data:` lines (see `sse::write_event`).
    pub fn to_json(&self) -> String {
        // A result response, what a server writes most, written directly:
        // the same text (`result_json`), ~700 instructions of serde's
        // map serializer fewer an answer.
        if let Message::Response(Response {
            id: Some(id),
            payload: Ok(result),
        }) = self
        {
            return result_json(id, result.get());
        }
        // Serializing these types cannot fail: keys are strings, payloads are
        // already-valid raw JSON.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The method, for requests and notifications.
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request(r) => Some(&r.method),
            Message::Notification(n) => Some(&n.method),
            Message::Response(_) => None,
        }
    }
}

/// Why a body could not be accepted; maps to `-32700` or `-32600`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    /// The bytes are not JSON (or not UTF-8): `-32700 Parse error`.
    #[error("Parse error: {0}")]
    Parse(String),
    /// Valid JSON that is not a conforming JSON-RPC message: `-32600`.
    #[error("Invalid Request: {0}")]
    Invalid(String),
    /// A JSON array where the revision allows no batches: `-32600`.
    #[error(
        "Invalid Request: JSON-RPC batches are not supported by this protocol revision (batches ended with 2025-03-26)"
    )]
    BatchNotAllowed,
    /// An empty JSON array: `-32600` (JSON-RPC 2.0 §6).
    #[error("Invalid Request: empty batch")]
    EmptyBatch,
}

impl BodyError {
    /// The JSON-RPC error code.
    pub fn code(&self) -> i64 {
        match self {
            BodyError::Parse(_) => PARSE_ERROR,
            _ => INVALID_REQUEST,
        }
    }

    /// The error response that has no id.
    pub fn to_response(&self) -> Response {
        Response::error(None, ErrorObject::new(self.code(), self.to_string()))
    }
}

/// A parsed POST body.
#[derive(Debug)]
pub enum Body {
    /// One message.
    Single(Message),
    /// A batch (2025-03-26 only): each element parsed on its own, so one bad
    /// element gets its own error response and does not spoil the others.
    Batch(Vec<Result<Message, BatchElementError>>),
}

/// One invalid element of a batch, with the id it carried when that could be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchElementError {
    /// The element's id if it had a readable one.
    pub id: Option<RequestId>,
    /// Why it is invalid.
    pub error: BodyError,
}

impl BatchElementError {
    /// The error response for this element.
    pub fn to_response(&self) -> Response {
        Response::error(
            self.id.clone(),
            ErrorObject::new(self.error.code(), self.error.to_string()),
        )
    }
}

/// Parses a POST body. Arrays are batches and are accepted only when
/// `allow_batch` (revision 2025-03-26); otherwise they are
/// [`BodyError::BatchNotAllowed`].
pub fn parse_body(bytes: &[u8], allow_batch: bool) -> Result<Body, BodyError> {
    let text = utf8(bytes)?;
    if is_array(text) {
        return parse_batch(text, allow_batch);
    }
    parse_message(text).map(Body::Single)
}

/// A message read from a POST body, with where its `params`' members are
/// when the reading found them on the way (the envelope reader's fast
/// path does, for the messages clients send: `envelope`'s docs).
#[derive(Debug)]
pub struct Parsed {
    message: Message,
    /// The members of the message's own `params` (offsets into their
    /// text), when found.
    params_members: Option<InnerSpans>,
    /// The length in bytes of the body it was read from, when known.
    body_len: Option<usize>,
}

impl From<Message> for Parsed {
    fn from(message: Message) -> Self {
        Parsed {
            message,
            params_members: None,
            body_len: None,
        }
    }
}

impl Parsed {
    /// The message.
    pub fn message(&self) -> &Message {
        &self.message
    }

    /// The length in bytes of the body the message was read from
    /// ([`parse_single`] knows it; a `Parsed` made from a [`Message`] does
    /// not). A dispatcher that parsed a POST's body hands the engine this
    /// and no body, and the engine holds the length to its own limit.
    pub fn body_len(&self) -> Option<usize> {
        self.body_len
    }

    /// The same, read from a body of `len` bytes (for a message read by
    /// other means than [`parse_single`], such as [`parse_body`]).
    pub fn with_body_len(self, len: usize) -> Parsed {
        Parsed {
            body_len: Some(len),
            ..self
        }
    }

    /// The message, dropping what else the reading found.
    pub fn into_message(self) -> Message {
        self.message
    }

    /// The message, and the index of its `params` when the reading found
    /// their members: the same index [`ObjectIndex::of_params`] would
    /// give, without walking the params again. (It is made here, from the
    /// message's own params, so it always describes them.)
    pub fn into_indexed(self) -> (Message, Option<ObjectIndex>) {
        let params = match &self.message {
            Message::Request(r) => r.params.as_deref(),
            Message::Notification(n) => n.params.as_deref(),
            Message::Response(_) => None,
        };
        let index = params
            .zip(self.params_members)
            .map(|(p, members)| ObjectIndex::from_spans(p.get(), members));
        (self.message, index)
    }
}

/// [`parse_body`] for a revision without batches (an array is
/// [`BodyError::BatchNotAllowed`], or `-32700` when it is not JSON),
/// keeping the index of the params the reading found ([`Parsed`]).
pub fn parse_single(bytes: &[u8]) -> Result<Parsed, BodyError> {
    let text = utf8(bytes)?;
    if is_array(text) {
        return Err(match parse_batch(text, false) {
            Err(e) => e,
            Ok(_) => BodyError::BatchNotAllowed,
        });
    }
    read_message(text, true).map(|(message, params_members)| Parsed {
        message,
        params_members,
        body_len: Some(bytes.len()),
    })
}

fn utf8(bytes: &[u8]) -> Result<&str, BodyError> {
    std::str::from_utf8(bytes).map_err(|e| BodyError::Parse(format!("body is not UTF-8: {e}")))
}

/// Whether the text is a JSON array (a batch), by its first character.
fn is_array(text: &str) -> bool {
    text.trim_start_matches([' ', '\t', '\n', '\r'])
        .as_bytes()
        .first()
        == Some(&b'[')
}

fn parse_batch(text: &str, allow_batch: bool) -> Result<Body, BodyError> {
    let items: Vec<&RawValue> =
        serde_json::from_str(text).map_err(|e| BodyError::Parse(e.to_string()))?;
    if !allow_batch {
        return Err(BodyError::BatchNotAllowed);
    }
    if items.is_empty() {
        return Err(BodyError::EmptyBatch);
    }
    let out = items
        .into_iter()
        .map(|raw| {
            parse_envelope(raw.get(), false)
                .map(|(message, _)| message)
                .map_err(|error| BatchElementError {
                    id: salvage_id(raw.get()),
                    error,
                })
        })
        .collect();
    Ok(Body::Batch(out))
}

/// Parses one message from JSON text (no batches).
///
/// One pass over a well-formed message (the envelope reader checks every
/// byte: `envelope`'s docs), so it succeeds only on valid JSON. Only when
/// it fails is the text parsed again for its syntax alone, so that bad
/// JSON is `-32700` even when its shape is also wrong.
pub fn parse_message(text: &str) -> Result<Message, BodyError> {
    read_message(text, false).map(|(message, _)| message)
}

/// [`parse_message`], and where the params' members are when `index`
/// asks for them and the fast path found them.
fn read_message(text: &str, index: bool) -> Result<(Message, Option<InnerSpans>), BodyError> {
    parse_envelope(text, index).map_err(|shape| match serde_json::from_str::<&RawValue>(text) {
        Err(e) => BodyError::Parse(e.to_string()),
        Ok(_) => shape,
    })
}

fn salvage_id(text: &str) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct IdOnly {
        id: Option<RequestId>,
    }
    serde_json::from_str::<IdOnly>(text).ok()?.id
}

mod envelope;

use envelope::parse_envelope;
#[cfg(test)]
use envelope::read_id;

fn invalid(reason: impl Into<String>) -> BodyError {
    BodyError::Invalid(reason.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn single(text: &str) -> Result<Message, BodyError> {
        match parse_body(text.as_bytes(), false)? {
            Body::Single(m) => Ok(m),
            Body::Batch(_) => panic!("batch"),
        }
    }

    /// The codes are the spec's numbers: JSON-RPC 2.0's five and MCP's
    /// (2026-07-28 `schema.ts`: `PARSE_ERROR` … `INTERNAL_ERROR`,
    /// `HEADER_MISMATCH`, `MISSING_REQUIRED_CLIENT_CAPABILITY`,
    /// `UNSUPPORTED_PROTOCOL_VERSION`; `-32002`, resource not found, from
    /// 2025-11-25 and earlier, *Basic*, "Error codes"). A client matches on
    /// them, so a wrong sign or digit is a wire break.
    #[test]
    fn error_codes_are_the_specs() {
        assert_eq!(
            [
                PARSE_ERROR,
                INVALID_REQUEST,
                METHOD_NOT_FOUND,
                INVALID_PARAMS,
                INTERNAL_ERROR
            ],
            [-32700, -32600, -32601, -32602, -32603]
        );
        assert_eq!(RESOURCE_NOT_FOUND, -32002);
        assert_eq!(
            [
                HEADER_MISMATCH,
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                UNSUPPORTED_PROTOCOL_VERSION
            ],
            [-32020, -32021, -32022]
        );
    }

    /// Two error objects are equal when code, message and data text are
    /// (each one alone makes them differ); `Display` names code and
    /// message.
    #[test]
    fn error_objects_compare_and_show_every_part() {
        let e = ErrorObject::new(INVALID_PARAMS, "m").with_data(&serde_json::json!({"k": 1}));
        assert_eq!(e, e.clone());
        let mut other_code = e.clone();
        other_code.code = INTERNAL_ERROR;
        let mut other_message = e.clone();
        other_message.message = "n".into();
        let other_data = ErrorObject::new(INVALID_PARAMS, "m").with_data(&2);
        let no_data = ErrorObject::new(INVALID_PARAMS, "m");
        for different in [other_code, other_message, other_data, no_data] {
            assert_ne!(e, different);
            assert_ne!(different, e);
        }
        assert_eq!(e.to_string(), "JSON-RPC error -32602: m");
    }

    #[test]
    fn responses_and_messages_say_what_they_are() {
        let ok = Response::result(RequestId::Number(1), to_raw(&1).unwrap());
        let err = Response::error(None, ErrorObject::internal("x"));
        assert!(!ok.is_error());
        assert!(err.is_error());
        let request = single(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).unwrap();
        let notification = single(r#"{"jsonrpc":"2.0","method":"notifications/x"}"#).unwrap();
        assert_eq!(request.method(), Some("tools/list"));
        assert_eq!(notification.method(), Some("notifications/x"));
        assert_eq!(Message::Response(ok).method(), None);
    }

    /// A value that is no id is refused with a message saying what an id is.
    #[test]
    fn an_id_of_another_type_is_refused_saying_what_an_id_is() {
        let e = serde_json::from_str::<RequestId>("true").unwrap_err();
        assert!(
            e.to_string()
                .contains("expected a string or an integer request id"),
            "{e}"
        );
    }

    #[test]
    fn ids_read_as_their_deserialize_reads_them() {
        for text in [
            "0",
            "-0",
            "7",
            "-7",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "-9223372036854775809",
            "18446744073709551616",
            "1.0",
            "1e3",
            "-1.5E-2",
            r#""1""#,
            r#""a\"b""#,
            "true",
            "{}",
            "[1]",
        ] {
            assert_eq!(
                read_id(text),
                serde_json::from_str::<RequestId>(text).ok(),
                "{text}"
            );
        }
    }

    proptest::proptest! {
        /// A result response's text, written directly, is what serde
        /// writes for it, whatever the id; the other messages go through
        /// serde.
        #[test]
        fn a_result_response_is_written_as_serde_writes_it(
            n in proptest::prelude::any::<i64>(),
            s in "\\PC{0,8}|[\"\\\\\u{0}-\u{1f}]{0,4}",
        ) {
            let result = to_raw(&serde_json::json!({"content": [{"text": "5"}], "n": [1.5, null]})).unwrap();
            for id in [RequestId::Number(n), RequestId::String(s.clone())] {
                let m = Message::Response(Response::result(id.clone(), result.clone()));
                proptest::prop_assert_eq!(m.to_json(), serde_json::to_string(&m).unwrap());
                let e = Message::Response(Response::error(Some(id), ErrorObject::new(-1, "x")));
                proptest::prop_assert_eq!(e.to_json(), serde_json::to_string(&e).unwrap());
            }
        }

        #[test]
        fn any_number_id_reads_as_its_deserialize_reads_it(
            n in proptest::prelude::any::<i64>(),
            wide in proptest::prelude::any::<u64>(),
            x in proptest::prelude::any::<f64>(),
        ) {
            for text in [n.to_string(), wide.to_string(), serde_json::to_string(&x).unwrap()] {
                proptest::prop_assert_eq!(
                    read_id(&text),
                    serde_json::from_str::<RequestId>(&text).ok(),
                    "{}", text
                );
            }
        }
    }

    /// A result response is written into one allocation of its final
    /// size, for the widest ids too (an `i64::MIN` id's prefix is 52
    /// bytes; a fixed allowance of 48 once made it grow): the text is
    /// copied once, never moved to a larger buffer.
    #[test]
    fn a_result_response_is_allocated_at_its_final_size() {
        for id in [
            RequestId::Number(1),
            RequestId::Number(i64::MIN),
            RequestId::String(String::new()),
            RequestId::String("\"quoted\" \u{1}".repeat(20)),
        ] {
            for result in ["0", r#"{"content":[]}"#] {
                let json = result_json(&id, result);
                assert_eq!(json.capacity(), json.len(), "{json}");
                let raw = RawValue::from_string(result.to_owned()).unwrap();
                let message = Message::Response(Response::result(id.clone(), raw));
                assert_eq!(json, serde_json::to_string(&message).unwrap());
            }
        }
    }

    #[test]
    fn ids_keep_their_exact_form() {
        let Message::Request(a) = single(r#"{"jsonrpc":"2.0","id":1,"method":"x"}"#).unwrap()
        else {
            panic!()
        };
        let Message::Request(b) = single(r#"{"jsonrpc":"2.0","id":"1","method":"x"}"#).unwrap()
        else {
            panic!()
        };
        assert_ne!(a.id, b.id);
        assert_eq!(
            Message::Request(a).to_json(),
            r#"{"jsonrpc":"2.0","id":1,"method":"x"}"#
        );
        assert_eq!(
            Message::Request(b).to_json(),
            r#"{"jsonrpc":"2.0","id":"1","method":"x"}"#
        );
    }

    #[test]
    fn payloads_are_forwarded_byte_exact() {
        let text = r#"{"jsonrpc":"2.0","id":"a","result":{"z":1,  "a":[1.50,"\u00e9"]}}"#;
        let m = single(text).unwrap();
        assert_eq!(
            m.to_json(),
            r#"{"jsonrpc":"2.0","id":"a","result":{"z":1,  "a":[1.50,"\u00e9"]}}"#
        );
    }

    #[test]
    fn classification() {
        let cases: &[(&str, i64)] = &[
            ("{", PARSE_ERROR),
            ("", PARSE_ERROR),
            ("[1,", PARSE_ERROR),
            ("\"x\"", INVALID_REQUEST),
            ("42", INVALID_REQUEST),
            (r#"{"id":1,"method":"x"}"#, INVALID_REQUEST),
            (r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#, INVALID_REQUEST),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
                INVALID_REQUEST,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
                INVALID_REQUEST,
            ),
            (
                r#"{"jsonrpc":"2.0","id":[1],"method":"x"}"#,
                INVALID_REQUEST,
            ),
            (r#"{"jsonrpc":"2.0","id":1,"method":7}"#, INVALID_REQUEST),
            (r#"{"jsonrpc":"2.0","id":1,"method":""}"#, INVALID_REQUEST),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#,
                INVALID_REQUEST,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{}}"#,
                INVALID_REQUEST,
            ),
            (r#"{"jsonrpc":"2.0","result":{}}"#, INVALID_REQUEST),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}"#,
                INVALID_REQUEST,
            ),
            (r#"{"jsonrpc":"2.0"}"#, INVALID_REQUEST),
            (r#"[{"jsonrpc":"2.0","method":"x"}]"#, INVALID_REQUEST),
            // Bad JSON is -32700 even when the shape is also wrong, and
            // wherever the bad byte is (the envelope's parse fails first).
            (r#"{"jsonrpc":"2.0","id":1,"method":7, bad}"#, PARSE_ERROR),
            (r#"{"jsonrpc":"1.0","id":1,"method":"x"} x"#, PARSE_ERROR),
            (r#"{"jsonrpc":"2.0","id":1,"method":"x"} x"#, PARSE_ERROR),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"x","extra":[1,]}"#,
                PARSE_ERROR,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"x","extra":"\q"}"#,
                PARSE_ERROR,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"x","extra":01}"#,
                PARSE_ERROR,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":tru}}"#,
                PARSE_ERROR,
            ),
            (
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"e\":\"\u{1}\"}",
                PARSE_ERROR,
            ),
        ];
        for (text, code) in cases {
            let err = single(text).expect_err(text);
            assert_eq!(err.code(), *code, "{text}: {err}");
            let resp = err.to_response();
            assert!(resp.id.is_none());
            let json = Message::Response(resp).to_json();
            assert!(!json.contains("\"id\""), "{json}");
        }
    }

    #[test]
    fn kinds() {
        assert!(matches!(
            single(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap(),
            Message::Notification(_)
        ));
        assert!(matches!(
            single(r#"{"jsonrpc":"2.0","id":9,"error":{"code":-1,"message":"m","data":{"k":1}}}"#)
                .unwrap(),
            Message::Response(Response {
                payload: Err(_),
                ..
            })
        ));
        // An error response without an id (answer to unparsable input) is valid.
        assert!(matches!(
            single(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}"#).unwrap(),
            Message::Response(Response { id: None, .. })
        ));
    }

    #[test]
    fn batches() {
        assert_eq!(parse_body(b"[]", true).unwrap_err(), BodyError::EmptyBatch);
        let Body::Batch(items) = parse_body(
            br#"[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2},7,{"jsonrpc":"2.0","method":"n"}]"#,
            true,
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!(items.len(), 4);
        assert!(items[0].is_ok());
        let e = items[1].as_ref().unwrap_err();
        assert_eq!(e.id, Some(RequestId::Number(2)));
        assert_eq!(e.error.code(), INVALID_REQUEST);
        assert_eq!(items[2].as_ref().unwrap_err().id, None);
        assert!(matches!(items[3], Ok(Message::Notification(_))));
    }

    #[test]
    fn set_meta_adds_keys() {
        let p = set_meta(None, "progressToken", serde_json::json!(7)).unwrap();
        assert_eq!(p.get(), r#"{"_meta":{"progressToken":7}}"#);
        let p = set_meta(
            Some(to_raw(&serde_json::json!({"a":1,"_meta":{"x":true}})).unwrap()),
            "progressToken",
            serde_json::json!("t"),
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(p.get()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"a":1,"_meta":{"x":true,"progressToken":"t"}})
        );
        assert!(
            set_meta(
                Some(to_raw(&serde_json::json!({"_meta":3})).unwrap()),
                "k",
                1.into()
            )
            .is_err()
        );
    }

    #[test]
    fn meta_is_read() {
        let Message::Request(r) = single(
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"progressToken":"t"}}}"#,
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!(r.meta().unwrap()["progressToken"], "t");
    }
}
