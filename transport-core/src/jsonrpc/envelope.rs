//! One message's envelope (`jsonrpc`, `id`, `method`, and `params`,
//! `result` or `error` kept raw), read in one of two ways that agree:
//!
//! - **the fast path**, [`crate::json_members::strict`]: one walk that
//!   checks the whole text is valid JSON and finds the top-level members
//!   (and `params`' members, when asked). It takes the messages clients
//!   send (an object nested at most 64 deep, the envelope's member names
//!   without escapes and none repeated, `method` a string without
//!   escapes) and declines anything else;
//! - **the slow path**, `serde_json` deriving [`Envelope`], for what the
//!   fast path declines: its errors are the ones this module reports.
//!
//! Both fill the same [`Fields`], and one function ([`Fields::message`])
//! makes the message from them, so a message accepted by either is the
//! same message (property-tested against each other in `tests`). The fast
//! path exists for the cost: ~4,100 instructions a stateless `tools/call`
//! went to `serde_json`'s parse (docs/PERFORMANCE.md, session 24).

use std::borrow::Cow;

use serde::de::value::{Error as ValueError, MapDeserializer};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::{BodyError, ErrorObject, Message, Notification, Request, RequestId, Response, invalid};
use crate::json_members::strict::{self, InnerSpans};

/// The envelope, borrowed from the input; payloads stay raw (the slow
/// path's reading).
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// Distinguishes a member that is present (even as `null`) from one that is absent.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// The envelope's members as either path found them: each value's exact
/// text (valid JSON), `method` decoded; absent members `None` (`method`
/// also when it is `null`, as an `Option` reads it).
#[derive(Debug, Default)]
struct Fields<'a> {
    jsonrpc: Option<&'a str>,
    id: Option<&'a str>,
    method: Option<Cow<'a, str>>,
    params: Option<&'a str>,
    result: Option<&'a str>,
    error: Option<&'a str>,
}

/// Parses one message's text (an element of a batch, or a whole body),
/// and when `index` asks for them, where the members of a request's or
/// notification's params are, when the fast path read it.
pub(super) fn parse_envelope(
    text: &str,
    index: bool,
) -> Result<(Message, Option<InnerSpans>), BodyError> {
    match fast(text, index) {
        Some((fields, checked)) => {
            let message = fields.message()?;
            let members = match &message {
                Message::Request(Request {
                    params: Some(_), ..
                })
                | Message::Notification(Notification {
                    params: Some(_), ..
                }) => checked.into_inner(),
                _ => None,
            };
            Ok((message, members))
        }
        None => Ok((slow(text)?.message()?, None)),
    }
}

/// The fast path: `None` for anything it declines (see the module docs).
/// The walk keeps the members of `params` when `index` asks for them.
fn fast(text: &str, index: bool) -> Option<(Fields<'_>, strict::Checked<'_>)> {
    let mut f = Fields::default();
    let checked = strict::object(text, index.then_some(("params", "_meta")), |m| {
        if m.is_escaped() {
            return None;
        }
        let value = m.value().text();
        let slot = match m.raw_name() {
            "jsonrpc" => &mut f.jsonrpc,
            "id" => &mut f.id,
            "params" => &mut f.params,
            "result" => &mut f.result,
            "error" => &mut f.error,
            "method" => {
                // A repeat is `serde_json`'s error ("duplicate field"), and
                // `null` an absent `Option` (a repeat after it too).
                if f.method.is_some() || value == "null" {
                    return None;
                }
                // A string (anything else is `serde_json`'s error), sent
                // without escapes (with, `serde_json` decodes it).
                let name = value.strip_prefix('"')?.strip_suffix('"')?;
                if name.contains('\\') {
                    return None;
                }
                f.method = Some(Cow::Borrowed(name));
                return Some(());
            }
            _ => return Some(()),
        };
        // A repeated member is `serde_json`'s error ("duplicate field").
        slot.replace(value).is_none().then_some(())
    })?;
    Some((f, checked))
}

/// The slow path.
fn slow(text: &str) -> Result<Fields<'_>, BodyError> {
    if !text.trim_start().starts_with('{') {
        return Err(invalid("a JSON-RPC message must be a JSON object"));
    }
    let env: Envelope<'_> = serde_json::from_str(text)
        .map_err(|e| invalid(format!("malformed message members: {e}")))?;
    Ok(Fields {
        jsonrpc: env.jsonrpc.map(RawValue::get),
        id: env.id.map(RawValue::get),
        method: env.method,
        params: env.params.map(RawValue::get),
        result: env.result.map(RawValue::get),
        error: env.error.map(RawValue::get),
    })
}

/// A request id from its JSON text (valid JSON: a member the envelope's
/// parse kept raw). An integer, what clients send, is read as one
/// (`str::parse`, which valid JSON's integers cannot fool: no `+`, no
/// leading zeros); anything else goes through [`RequestId`]'s
/// `Deserialize`, and so does `-0`, which `serde_json` reads as a float
/// (not an id). A second `serde_json` parse of `1` cost ~150
/// instructions a request.
pub(super) fn read_id(text: &str) -> Option<RequestId> {
    match text.parse::<i64>() {
        Ok(n) if !text.starts_with("-0") => Some(RequestId::Number(n)),
        _ => serde_json::from_str(text).ok(),
    }
}

/// The name `serde_json` gives the one member of the map through which
/// any deserializer hands it a `RawValue`'s text (its `raw_value`
/// feature: `serde_json::raw::TOKEN`, the same since 1.0.29, 2018).
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// `text` (valid JSON: checked by either path) as an owned `RawValue`.
///
/// `RawValue::from_string` would check the text again, which is most of
/// what the fast path saves (a request's params are most of it); this
/// hands the text to `RawValue`'s own `Deserialize` the way a deserializer
/// other than `serde_json`'s does (a one-member map named
/// [`RAW_VALUE_TOKEN`]), which takes it as given. Should a `serde_json`
/// release change that, the text is checked after all (and
/// `a_raw_value_is_made_without_a_second_check` fails, saying so).
fn owned_raw(text: &str) -> Result<Box<RawValue>, BodyError> {
    let given = MapDeserializer::<_, ValueError>::new(std::iter::once((RAW_VALUE_TOKEN, text)));
    Box::<RawValue>::deserialize(given)
        .or_else(|_| RawValue::from_string(text.to_owned()))
        .map_err(|e| invalid(format!("malformed member: {e}")))
}

impl Fields<'_> {
    /// The message these members make, or why they make none.
    fn message(self) -> Result<Message, BodyError> {
        match self.jsonrpc {
            Some("\"2.0\"") => {}
            Some(other) => {
                return Err(invalid(format!("\"jsonrpc\" must be \"2.0\", got {other}")));
            }
            None => return Err(invalid("missing \"jsonrpc\": \"2.0\"")),
        }
        let id = match self.id {
            None => None,
            Some("null") => Some(None),
            Some(raw) => Some(Some(read_id(raw).ok_or_else(|| {
                invalid(format!("\"id\" must be a string or an integer, got {raw}"))
            })?)),
        };
        let params = match self.params {
            None => None,
            Some(p) if p.starts_with('{') => Some(owned_raw(p)?),
            Some(p) => return Err(invalid(format!("\"params\" must be an object, got {p}"))),
        };
        match (self.method, self.result, self.error) {
            (Some(method), None, None) => {
                if method.is_empty() {
                    return Err(invalid("\"method\" must not be empty"));
                }
                let method = method.into_owned();
                match id {
                    None => Ok(Message::Notification(Notification { method, params })),
                    Some(None) => Err(invalid("a request id must not be null")),
                    Some(Some(id)) => Ok(Message::Request(Request { id, method, params })),
                }
            }
            (None, Some(result), None) => {
                if params.is_some() {
                    return Err(invalid("a response must not carry \"params\""));
                }
                match id {
                    Some(Some(id)) => {
                        Ok(Message::Response(Response::result(id, owned_raw(result)?)))
                    }
                    _ => Err(invalid(
                        "a result response needs a string or integer \"id\"",
                    )),
                }
            }
            (None, None, Some(error)) => {
                if params.is_some() {
                    return Err(invalid("a response must not carry \"params\""));
                }
                let error: ErrorObject = serde_json::from_str(error)
                    .map_err(|e| invalid(format!("malformed \"error\" object: {e}")))?;
                Ok(Message::Response(Response::error(id.flatten(), error)))
            }
            (None, Some(_), Some(_)) => Err(invalid(
                "a response must carry either \"result\" or \"error\", not both",
            )),
            (Some(_), _, _) => Err(invalid(
                "a message with \"method\" must not carry \"result\" or \"error\"",
            )),
            (None, None, None) => Err(invalid(
                "not a request, notification or response: no \"method\", \"result\" or \"error\"",
            )),
        }
    }
}

#[cfg(test)]
mod tests;
