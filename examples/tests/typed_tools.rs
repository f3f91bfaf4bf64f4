//! The typed-tools example as a user runs it: a child process, called by
//! the negotiating client at each Streamable HTTP revision.

use std::process::Command;
use std::time::Duration;

use mcp_negotiate::client::{NegotiateConfig, connect};
use mcp_test_support::client::answer;
use mcp_test_support::process::Listening;
use mcp_transport_core::ProtocolVersion as V;
use mcp_transport_core::jsonrpc::to_raw;
use mcp_transport_core::transport::Transport;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

/// `tools/list`, then each call, then each `(method, params)` of `more`,
/// at `revision`: each answer as JSON (`{"error": {...}}` for a JSON-RPC
/// error).
async fn session(
    url: &str,
    revision: V,
    calls: &[(&str, Value)],
    more: &[(&str, Value)],
) -> (Value, Vec<Value>) {
    let config = NegotiateConfig::new(url).with_revisions(vec![revision.clone()]);
    let conn = connect(config).await.expect("connect");
    assert_eq!(conn.revision(), revision);
    let mut answers = Vec::new();
    let ask = async |method: &str, params: Value| -> Value {
        let response = answer(&conn, method, Some(to_raw(&params).unwrap()))
            .await
            .unwrap();
        match response.payload {
            Ok(raw) => serde_json::from_str(raw.get()).unwrap(),
            Err(e) => json!({ "error": { "code": e.code, "message": e.message } }),
        }
    };
    let list = ask("tools/list", json!({})).await;
    for (name, args) in calls {
        answers.push(ask("tools/call", json!({ "name": name, "arguments": args })).await);
    }
    for (method, params) in more {
        answers.push(ask(method, params.clone()).await);
    }
    conn.close().await.unwrap();
    (list, answers)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_tools_follow_each_revision() {
    let bin = env!("CARGO_BIN_EXE_typed_tools");
    let mut cmd = Command::new(bin);
    cmd.env_remove("RUST_LOG");
    let server = Listening::spawn(bin, &mut cmd, WAIT);
    let calls = [
        ("divide", json!({ "a": 7, "b": 2 })),
        ("divide", json!({ "a": "seven", "b": 2 })),
        ("divide", json!({ "a": 7, "b": 0 })),
        ("work", json!({ "steps": 2 })),
    ];
    let more = [
        ("prompts/list", json!({})),
        (
            "prompts/get",
            json!({ "name": "review", "arguments": { "code": "x/0" } }),
        ),
        ("prompts/get", json!({ "name": "review", "arguments": {} })),
        ("resources/read", json!({ "uri": "example://motd" })),
        ("resources/read", json!({ "uri": "example://nothing" })),
    ];
    for revision in V::STREAMABLE {
        let (list, answers) = session(&server.url, revision.clone(), &calls, &more).await;
        let divide = list["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "divide")
            .unwrap();
        let dialect = if revision >= V::V2025_11_25 {
            "https://json-schema.org/draft/2020-12/schema"
        } else {
            "http://json-schema.org/draft-07/schema#"
        };
        assert_eq!(divide["inputSchema"]["$schema"], dialect, "{revision}");
        assert_eq!(divide["inputSchema"]["required"], json!(["a", "b"]));
        let structured = revision >= V::V2025_06_18;
        assert_eq!(
            divide.get("outputSchema").is_some(),
            structured,
            "{revision}"
        );
        let ok = &answers[0];
        assert_eq!(
            ok["content"][0]["text"],
            r#"{"quotient":3.0,"remainder":1.0}"#
        );
        if structured {
            assert_eq!(
                ok["structuredContent"],
                json!({ "quotient": 3.0, "remainder": 1.0 })
            );
        } else {
            assert!(ok.get("structuredContent").is_none(), "{revision}: {ok}");
        }
        for bad in &answers[1..3] {
            if revision >= V::V2025_11_25 {
                assert_eq!(bad["isError"], true, "{revision}: {bad}");
            } else {
                assert_eq!(bad["error"]["code"], -32602, "{revision}: {bad}");
            }
        }
        assert_eq!(
            answers[3]["content"][0]["text"], "worked 2 steps",
            "{revision}"
        );
        // The prompt: its argument listed from the type, built, and a
        // missing required argument refused with -32602.
        assert_eq!(
            answers[4]["prompts"][0]["arguments"],
            json!([{ "name": "code", "description": "The code to review.", "required": true }]),
            "{revision}"
        );
        assert_eq!(
            answers[5]["messages"][0]["content"]["text"], "Please review this code:\nx/0",
            "{revision}"
        );
        assert_eq!(answers[6]["error"]["code"], -32602, "{revision}");
        assert_eq!(
            answers[7]["contents"][0]["text"], "Divide wisely.",
            "{revision}"
        );
        // Not found: -32002 before 2026-07-28, -32602 on it.
        let not_found = if revision >= V::V2026_07_28 {
            -32602
        } else {
            -32002
        };
        assert_eq!(answers[8]["error"]["code"], not_found, "{revision}");
    }
}
