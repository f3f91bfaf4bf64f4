//! The standard fields the transport adds to results.
//!
//! * `resultType` (*Overview*, "Result Responses": "The `result` MUST
//!   include a `resultType` field"): `"complete"` when the handler did not
//!   set one; `"input_required"` on an `InputRequiredResult`.
//! * `_meta["io.modelcontextprotocol/serverInfo"]` ("Per-response protocol
//!   fields": servers "SHOULD include the following … field in every
//!   result's `_meta`, unless specifically configured not to do so"), when
//!   the handler's `_meta` has none.
//! * `ttlMs` and `cacheScope` on complete results of the cacheable methods
//!   (*Caching*, "Cacheable Results": "Servers MUST include caching hints on
//!   results with `resultType: \"complete\"` returned by … `tools/list`,
//!   `prompts/list`, `resources/list`, `resources/templates/list`,
//!   `resources/read`"), when the handler's result has none. Interim
//!   `input_required` results "carry no caching hints".
//!
//! Values the handler set are never overwritten, and the other members stay
//! raw (byte-exact).

use std::collections::BTreeMap;

use mcp_transport_core::handler::InputRequest;
use mcp_transport_core::json_members::Valid;
use mcp_transport_core::jsonrpc::{RequestId, to_raw};
use serde::Serialize;
use serde_json::value::RawValue;

use super::config::CacheScope;
use crate::headers::META_SUBSCRIPTION_ID;

/// `_meta` key of the server's identity in results.
pub(crate) const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The methods whose complete results carry caching hints.
const CACHEABLE: [&str; 5] = [
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// What the transport adds to results.
pub(crate) struct Decoration<'a> {
    /// `serverInfo`, serialized, or `None` when configured off.
    pub server_info: Option<&'a RawValue>,
    /// Default `ttlMs`.
    pub ttl_ms: u64,
    /// Default `cacheScope`.
    pub scope: CacheScope,
}

type Members = BTreeMap<String, Box<RawValue>>;

fn raw<T: Serialize + ?Sized>(v: &T) -> Box<RawValue> {
    to_raw(v).unwrap_or_else(|_| unreachable!("plain values always serialize"))
}

/// Inserts `serverInfo` into `_meta` unless present (or `_meta` is not an
/// object, which is the handler's business).
fn add_server_info(members: &mut Members, info: Option<&RawValue>) {
    let Some(info) = info else { return };
    let meta = match members.get("_meta") {
        None => Members::new(),
        Some(m) => match serde_json::from_str::<Members>(m.get()) {
            Ok(m) if m.contains_key(META_SERVER_INFO) => return,
            Ok(m) => m,
            Err(_) => return,
        },
    };
    let mut meta = meta;
    meta.insert(META_SERVER_INFO.to_owned(), info.to_owned());
    members.insert("_meta".to_owned(), raw(&meta));
}

/// Decorates a handler's result for `method`. Fails when the result is not
/// a JSON object.
///
/// The usual result (an object whose member names are unique, unescaped
/// and few) is decorated by splicing the missing members into its text
/// ([`splice`]): one copy, no parse tree. Anything else takes the general
/// path ([`rebuild`]), which the splice matches member for member.
pub(crate) fn complete(
    result: &RawValue,
    method: &str,
    deco: &Decoration<'_>,
) -> Result<Box<RawValue>, String> {
    let mut text = String::new();
    if splice(result, method, deco, &mut text) {
        Ok(RawValue::from_string(text)
            .unwrap_or_else(|_| unreachable!("a JSON object with members added stays JSON")))
    } else {
        rebuild(result, method, deco)
    }
}

/// [`complete`] as JSON text, for a response written directly (no
/// validation pass over the spliced text).
#[cfg(test)]
pub(crate) fn complete_text(
    result: &RawValue,
    method: &str,
    deco: &Decoration<'_>,
) -> Result<String, String> {
    let mut out = String::new();
    complete_into(result, method, deco, &mut out).map(|()| out)
}

/// [`complete`] as JSON text appended to `out` (the response's text so
/// far: the result is written in place, not copied into it afterwards).
pub(crate) fn complete_into(
    result: &RawValue,
    method: &str,
    deco: &Decoration<'_>,
    out: &mut String,
) -> Result<(), String> {
    if splice(result, method, deco, out) {
        return Ok(());
    }
    let rebuilt = rebuild(result, method, deco)?;
    out.push_str(rebuilt.get());
    Ok(())
}

/// `complete` by parsing the members into a map and serializing it again.
fn rebuild(
    result: &RawValue,
    method: &str,
    deco: &Decoration<'_>,
) -> Result<Box<RawValue>, String> {
    let mut members: Members = serde_json::from_str(result.get())
        .map_err(|_| format!("the handler's {method} result is not a JSON object"))?;
    let result_type = match members.get("resultType") {
        Some(t) => serde_json::from_str::<String>(t.get()).ok(),
        None => {
            members.insert("resultType".to_owned(), raw("complete"));
            Some("complete".to_owned())
        }
    };
    if result_type.as_deref() == Some("complete") && CACHEABLE.contains(&method) {
        if !members.contains_key("ttlMs") {
            members.insert("ttlMs".to_owned(), raw(&deco.ttl_ms));
        }
        if !members.contains_key("cacheScope") {
            members.insert("cacheScope".to_owned(), raw(deco.scope.as_str()));
        }
    }
    add_server_info(&mut members, deco.server_info);
    Ok(raw(&members))
}

/// The most member names [`Names`] compares (pairwise); an object with
/// more takes the general path.
const MAX_NAMES: usize = 16;

/// An object's members, borrowed from its text: `None` from the scan when
/// the text is not an object whose names are unique, unescaped and at most
/// [`MAX_NAMES`].
struct Names<'a> {
    names: [&'a str; MAX_NAMES],
    values: [Valid<'a>; MAX_NAMES],
    len: usize,
}

impl<'a> Names<'a> {
    fn scan(value: Valid<'a>) -> Option<Names<'a>> {
        let mut out = Names {
            names: [""; MAX_NAMES],
            values: [value; MAX_NAMES],
            len: 0,
        };
        for m in value.object()? {
            // A name with escapes, a repeated one or one too many: the
            // general path decides.
            let name = m.raw_name();
            if m.is_escaped() || out.len == MAX_NAMES || out.names[..out.len].contains(&name) {
                return None;
            }
            out.names[out.len] = name;
            out.values[out.len] = m.value();
            out.len += 1;
        }
        Some(out)
    }

    fn get(&self, name: &str) -> Option<Valid<'a>> {
        (0..self.len)
            .find(|&i| self.names[i] == name)
            .map(|i| self.values[i])
    }
}

/// The byte offset of `part` (a slice of `whole`) in `whole`.
fn offset(whole: &str, part: &str) -> usize {
    part.as_ptr() as usize - whole.as_ptr() as usize
}

/// Whether the object text `obj` (starting with `{`) has no members.
fn empty_object(obj: &str) -> bool {
    obj[1..].trim_start().starts_with('}')
}

/// Appends `"name":value` (`name` needs no escaping).
fn push_member(out: &mut String, name: &str, value: &str) {
    out.push('"');
    out.push_str(name);
    out.push_str("\":");
    out.push_str(value);
}

/// Room for what [`complete_into`] appends when it splices `result`: the
/// result's text, `serverInfo` with its key, and 96 bytes for the members
/// added around them and the closing brace of the response that holds it
/// (91 at most, with a 20-digit `ttlMs`).
pub(crate) fn room(result: &str, server_info: Option<&RawValue>) -> usize {
    let info = server_info.map_or(0, |i| i.get().len() + META_SERVER_INFO.len());
    result.len() + info + 96
}

/// `complete` by splicing the missing members into the result's text,
/// appended to `out`; `false` (and `out` untouched) when the general path
/// must decide (see [`Names`]).
fn splice(result: &RawValue, method: &str, deco: &Decoration<'_>, out: &mut String) -> bool {
    splice_parts(Valid::from(result).trimmed(), method, deco, out).is_some()
}

fn splice_parts(
    result: Valid<'_>,
    method: &str,
    deco: &Decoration<'_>,
    out: &mut String,
) -> Option<()> {
    let body = result.text();
    let top = Names::scan(result)?;
    let result_type = top.get("resultType");
    let complete = match result_type {
        None => true,
        Some(t) => {
            t.text() == "\"complete\""
                || serde_json::from_str::<String>(t.text()).is_ok_and(|t| t == "complete")
        }
    };
    let cacheable = complete && CACHEABLE.contains(&method);
    let ttl_ms = (cacheable && top.get("ttlMs").is_none()).then(|| deco.ttl_ms.to_string());
    let scope = (cacheable && top.get("cacheScope").is_none()).then(|| raw(deco.scope.as_str()));
    // Where serverInfo goes: a new `_meta`, or the front of the handler's
    // (at a byte offset, with a comma when that object has members).
    let mut new_meta = None;
    let mut meta_insert = None;
    if let Some(info) = deco.server_info {
        match top.get("_meta") {
            None => new_meta = Some(info),
            Some(m) if m.text().starts_with('{') => {
                let names = Names::scan(m)?;
                if names.get(META_SERVER_INFO).is_none() {
                    let at = offset(body, m.text()) + 1;
                    meta_insert = Some((at, info, !empty_object(m.text())));
                }
            }
            // Not an object: the handler's business.
            Some(_) => {}
        }
    }
    // Nothing returns early from here on: `out` is only written below.
    out.reserve(room(body, deco.server_info));
    let close = body.len() - 1;
    match meta_insert {
        Some((at, info, comma)) => {
            out.push_str(&body[..at]);
            push_member(out, META_SERVER_INFO, info.get());
            if comma {
                out.push(',');
            }
            out.push_str(&body[at..close]);
        }
        None => out.push_str(&body[..close]),
    }
    let mut first = top.len == 0;
    let mut add = |out: &mut String, name: &str, value: &str| {
        if !first {
            out.push(',');
        }
        first = false;
        push_member(out, name, value);
    };
    if result_type.is_none() {
        add(out, "resultType", "\"complete\"");
    }
    if let Some(t) = &ttl_ms {
        add(out, "ttlMs", t);
    }
    if let Some(s) = &scope {
        add(out, "cacheScope", s.get());
    }
    if let Some(info) = new_meta {
        if !first {
            out.push(',');
        }
        out.push_str("\"_meta\":{");
        push_member(out, META_SERVER_INFO, info.get());
        out.push('}');
    }
    out.push('}');
    Some(())
}

/// An `InputRequiredResult` (*MRTR*, "InputRequiredResult").
pub(crate) fn input_required(
    requests: &BTreeMap<String, InputRequest>,
    request_state: &str,
    server_info: Option<&RawValue>,
) -> Box<RawValue> {
    let mut members = Members::new();
    members.insert("resultType".to_owned(), raw("input_required"));
    if !requests.is_empty() {
        members.insert("inputRequests".to_owned(), raw(requests));
    }
    members.insert("requestState".to_owned(), raw(request_state));
    add_server_info(&mut members, server_info);
    raw(&members)
}

/// The `subscriptions/listen` result that ends a subscription gracefully
/// (*Subscriptions*, "Graceful Closure"): `resultType` and the
/// subscription id in `_meta`.
pub(crate) fn listen_closed(id: &RequestId, server_info: Option<&RawValue>) -> Box<RawValue> {
    let mut meta = Members::new();
    meta.insert(META_SUBSCRIPTION_ID.to_owned(), raw(id));
    let mut members = Members::new();
    members.insert("resultType".to_owned(), raw("complete"));
    members.insert("_meta".to_owned(), raw(&meta));
    add_server_info(&mut members, server_info);
    raw(&members)
}

#[cfg(test)]
mod props;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn v(r: &RawValue) -> Value {
        serde_json::from_str(r.get()).unwrap()
    }

    /// The tests' decoration: a `ttlMs` of 5, `private` scope.
    fn decoration(server_info: Option<&RawValue>) -> Decoration<'_> {
        Decoration {
            server_info,
            ttl_ms: 5,
            scope: CacheScope::Private,
        }
    }

    #[test]
    fn adds_what_is_missing_only() {
        let info = raw(&json!({"name": "s", "version": "1"}));
        let deco = decoration(Some(&info));
        let out = v(&complete(&raw(&json!({"tools": []})), "tools/list", &deco).unwrap());
        assert_eq!(out["resultType"], "complete");
        assert_eq!(out["ttlMs"], 5);
        assert_eq!(out["cacheScope"], "private");
        assert_eq!(out["_meta"][META_SERVER_INFO]["name"], "s");

        let mine = json!({"tools": [], "ttlMs": 9, "cacheScope": "public",
                          "_meta": {"x.y/z": 1, META_SERVER_INFO: {"name": "mine"}}});
        let out = v(&complete(&raw(&mine), "tools/list", &deco).unwrap());
        assert_eq!(out["ttlMs"], 9);
        assert_eq!(out["cacheScope"], "public");
        assert_eq!(out["_meta"][META_SERVER_INFO]["name"], "mine");
        assert_eq!(out["_meta"]["x.y/z"], 1);

        // Not cacheable: no hints.
        let out = v(&complete(&raw(&json!({"content": []})), "tools/call", &deco).unwrap());
        assert!(out.get("ttlMs").is_none());
        assert!(complete(&raw(&json!([1])), "tools/call", &deco).is_err());

        let deco = decoration(None);
        let out = v(&complete(&raw(&json!({})), "tools/call", &deco).unwrap());
        assert!(out.get("_meta").is_none());
    }

    /// Decorated into a buffer that holds text already: appended, by the
    /// splice and by the general path alike.
    #[test]
    fn complete_into_appends() {
        let info = raw(&json!({"name": "s", "version": "1"}));
        let deco = decoration(Some(&info));
        for result in [r#"{"content": []}"#, r#"{"a":1,"a":2}"#, r#"{"\u0061":1}"#] {
            let result = RawValue::from_string(result.to_owned()).unwrap();
            let mut out = String::from(r#"{"id":1,"result":"#);
            complete_into(&result, "tools/call", &deco, &mut out).unwrap();
            let alone = complete_text(&result, "tools/call", &deco).unwrap();
            assert_eq!(out, format!(r#"{{"id":1,"result":{alone}"#));
        }
        let mut out = String::from("kept");
        assert!(complete_into(&raw(&json!([1])), "tools/call", &deco, &mut out).is_err());
    }

    /// The splice and the general path agree, and the general path is
    /// what odd results (escaped or repeated names, many members, `_meta`
    /// not an object) get.
    #[test]
    fn splice_matches_rebuild() {
        let info = raw(&json!({"name": "s", "version": "1"}));
        let many: String = (0..20).map(|i| format!("\"k{i}\":{i},")).collect();
        let cases = [
            r#"{}"#.to_owned(),
            r#" {"content":[{"type":"text","text":"5"}]} "#.to_owned(),
            r#"{"content":[],"_meta":{}}"#.to_owned(),
            r#"{"content":[],"_meta":{"x.y/z":1}}"#.to_owned(),
            r#"{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mine"}}}"#
                .to_owned(),
            r#"{"content":[],"_meta":7}"#.to_owned(),
            r#"{"resultType":"input_required","tools":[]}"#.to_owned(),
            r#"{"resultType":"complete","tools":[],"ttlMs":1}"#.to_owned(),
            r#"{"resultType":"c\u006fmplete","tools":[]}"#.to_owned(),
            r#"{"tools":[],"cacheScope":"public","_meta":{"a":{"b":[1,{"_meta":2}]}}}"#.to_owned(),
            r#"{"a":1,"a":2}"#.to_owned(),
            r#"{"\u0061":1,"_meta":{"x":1,"x":2}}"#.to_owned(),
            format!("{{{many}\"tools\":[]}}"),
        ];
        for server_info in [Some(&*info), None] {
            let deco = decoration(server_info);
            for case in &cases {
                let input: Box<RawValue> = serde_json::from_str(case).unwrap();
                for method in ["tools/call", "tools/list"] {
                    let text = complete_text(&input, method, &deco).unwrap();
                    assert_eq!(
                        serde_json::from_str::<Value>(&text).unwrap(),
                        v(&complete(&input, method, &deco).unwrap())
                    );
                    let fast = v(&complete(&input, method, &deco).unwrap());
                    let slow = v(&rebuild(&input, method, &deco).unwrap());
                    assert_eq!(fast, slow, "{case} for {method}");
                }
            }
            for odd in [
                r#"{"a":1,"a":2}"#,
                r#"{"\u0061":1}"#,
                many.trim_end_matches(','),
            ] {
                let odd = if odd.starts_with('{') {
                    odd.to_owned()
                } else {
                    format!("{{{odd}}}")
                };
                let odd = RawValue::from_string(odd).unwrap();
                let mut out = String::from("kept");
                assert!(!splice(&odd, "tools/call", &deco, &mut out), "{odd}");
                assert_eq!(out, "kept", "a refused splice leaves the text alone");
            }
        }
        assert!(!splice(
            &RawValue::from_string(" [1] ".to_owned()).unwrap(),
            "tools/call",
            &decoration(None),
            &mut String::new(),
        ));
    }

    /// The usual result is spliced, not rebuilt: the handler's text stays
    /// byte for byte (its member order and spacing too, which the general
    /// path's map would sort and compact), the members added after it.
    #[test]
    fn the_usual_result_keeps_its_text_and_order() {
        let info = raw(&json!({"name": "s", "version": "1"}));
        let with_info = decoration(Some(&info));
        let without = decoration(None);
        let si = r#""io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}"#;
        let cases = [
            (
                r#"{"z":1, "a" : [ 2 ]}"#,
                "tools/call",
                &with_info,
                format!(r#"{{"z":1, "a" : [ 2 ],"resultType":"complete","_meta":{{{si}}}}}"#),
            ),
            (
                r#"{"tools":[],"b":{}}"#,
                "tools/list",
                &with_info,
                format!(
                    r#"{{"tools":[],"b":{{}},"resultType":"complete","ttlMs":5,"cacheScope":"private","_meta":{{{si}}}}}"#
                ),
            ),
            (
                r#"{"content":[],"_meta":{"y":1, "x":2}}"#,
                "tools/call",
                &with_info,
                format!(
                    r#"{{"content":[],"_meta":{{{si},"y":1, "x":2}},"resultType":"complete"}}"#
                ),
            ),
            (
                r#"{"content":[],"_meta":{ }}"#,
                "tools/call",
                &with_info,
                format!(r#"{{"content":[],"_meta":{{{si} }},"resultType":"complete"}}"#),
            ),
            // Not an object: the handler's business, left as sent.
            (
                r#"{"content":[],"_meta":7}"#,
                "tools/call",
                &with_info,
                r#"{"content":[],"_meta":7,"resultType":"complete"}"#.to_owned(),
            ),
            (
                r#"{ "z" :1,"resultType":"complete"}"#,
                "tools/call",
                &without,
                r#"{ "z" :1,"resultType":"complete"}"#.to_owned(),
            ),
            (
                "{}",
                "tools/call",
                &without,
                r#"{"resultType":"complete"}"#.to_owned(),
            ),
        ];
        for (result, method, deco, want) in cases {
            let result = RawValue::from_string(result.to_owned()).unwrap();
            let mut out = String::new();
            assert!(splice(&result, method, deco, &mut out), "{result}");
            assert_eq!(out, want);
            // One reservation, bounded by what it may write: the result,
            // serverInfo with its key, and 96 bytes for the members added.
            let info = deco
                .server_info
                .map_or(0, |i| i.get().len() + META_SERVER_INFO.len());
            let bound = result.get().len() + info + 96;
            assert!(out.capacity() <= bound, "{} > {bound}", out.capacity());
            assert_eq!(room(result.get(), deco.server_info), bound);
            assert_eq!(complete_text(&result, method, deco).unwrap(), want);
            assert_eq!(complete(&result, method, deco).unwrap().get(), want);
        }
    }

    #[test]
    fn interim_and_closing_results() {
        let out = v(&input_required(&BTreeMap::new(), "tok", None));
        assert_eq!(
            out,
            json!({"resultType": "input_required", "requestState": "tok"})
        );
        let out = v(&listen_closed(&RequestId::Number(1), None));
        assert_eq!(
            out,
            json!({"resultType": "complete", "_meta": {META_SUBSCRIPTION_ID: 1}})
        );
    }
}
