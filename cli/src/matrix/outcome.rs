//! The matrix scenarios' shared vocabulary: the outcome helpers, the tool
//! calls every scenario makes, and the matrix client's input handler.

use async_trait::async_trait;
use mcp_negotiate::client::Connection;
use mcp_transport_core::jsonrpc::{ErrorObject, Response, to_raw};
use mcp_transport_core::transport::{InputHandler, RequestOptions, Transport, TransportError};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::harness::{Observed, classify_error};

/// The matrix client's input handler: answers every elicitation with "Ada".
#[derive(Debug)]
pub struct Ada;

#[async_trait]
impl InputHandler for Ada {
    async fn handle(
        &self,
        method: &str,
        _params: Option<&RawValue>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        match method {
            "elicitation/create" => {
                to_raw(&json!({ "action": "accept", "content": { "name": "Ada" } }))
                    .map_err(ErrorObject::internal)
            }
            other => Err(ErrorObject::method_not_found(other)),
        }
    }
}

pub(crate) type Outcome = Result<Observed, Observed>;

pub(crate) fn works(detail: impl Into<String>) -> Observed {
    Observed::Works(detail.into())
}

pub(crate) fn absent(detail: impl Into<String>) -> Observed {
    Observed::Absent(detail.into())
}

pub(crate) fn failed(message: impl Into<String>) -> Observed {
    Observed::Failed {
        kind: None,
        message: message.into(),
    }
}

pub(crate) fn from_error(e: &TransportError) -> Observed {
    Observed::Failed {
        kind: classify_error(e),
        message: e.to_string(),
    }
}

/// `Err(failed(msg))` unless `ok`.
pub(crate) fn ensure(ok: bool, msg: impl FnOnce() -> String) -> Result<(), Observed> {
    if ok { Ok(()) } else { Err(failed(msg())) }
}

pub(crate) fn tool_params(name: &str, args: Value) -> Option<Box<RawValue>> {
    to_raw(&json!({ "name": name, "arguments": args })).ok()
}

pub(crate) fn result_value(resp: &Response) -> Result<Value, String> {
    match &resp.payload {
        Ok(raw) => serde_json::from_str(raw.get()).map_err(|e| e.to_string()),
        Err(e) => Err(format!("JSON-RPC error {e}")),
    }
}

/// The first text content of a tool result.
pub(crate) fn result_text(resp: &Response) -> Result<String, String> {
    let v = result_value(resp)?;
    v["content"][0]["text"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("no text content in {v}"))
}

/// Calls a tool; the transport's error is kept for the caller to match.
pub(crate) async fn call_raw(
    conn: &Connection,
    tool: &str,
    args: Value,
) -> Result<Response, TransportError> {
    let stream = conn
        .request(
            "tools/call",
            tool_params(tool, args),
            RequestOptions::default(),
        )
        .await?;
    stream.response().await
}

pub(crate) async fn call(conn: &Connection, tool: &str, args: Value) -> Result<String, Observed> {
    let resp = call_raw(conn, tool, args)
        .await
        .map_err(|e| from_error(&e))?;
    result_text(&resp).map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_transport_core::jsonrpc::RequestId;

    fn answer(result: Value) -> Response {
        Response::result(RequestId::Number(1), to_raw(&result).unwrap())
    }

    #[test]
    fn ensure_fails_with_its_message_only_when_not_ok() {
        assert_eq!(ensure(true, || unreachable!()), Ok(()));
        assert_eq!(ensure(false, || "why".into()), Err(failed("why")));
    }

    #[test]
    fn a_tool_call_names_the_tool_and_its_arguments() {
        let params = tool_params("echo", json!({"text": "hi"})).unwrap();
        let v: Value = serde_json::from_str(params.get()).unwrap();
        assert_eq!(v, json!({"name": "echo", "arguments": {"text": "hi"}}));
    }

    #[test]
    fn a_result_s_first_text_is_read_and_an_error_is_not_one() {
        let two = answer(
            json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
        );
        assert_eq!(result_text(&two).as_deref(), Ok("a"));
        assert_eq!(result_value(&two).unwrap()["content"][1]["text"], "b");
        let image = answer(json!({"content": [{"type": "image", "data": ""}]}));
        assert!(result_text(&image).unwrap_err().contains("no text content"));
        let error = Response::error(
            Some(RequestId::Number(1)),
            ErrorObject::method_not_found("x"),
        );
        assert!(
            result_value(&error)
                .unwrap_err()
                .starts_with("JSON-RPC error")
        );
        assert!(result_text(&error).is_err());
    }

    #[tokio::test]
    async fn the_client_answers_elicitations_with_ada_and_nothing_else() {
        let v: Value =
            serde_json::from_str(Ada.handle("elicitation/create", None).await.unwrap().get())
                .unwrap();
        assert_eq!(v, json!({"action": "accept", "content": {"name": "Ada"}}));
        let err = Ada
            .handle("sampling/createMessage", None)
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorObject::method_not_found("").code);
    }
}
