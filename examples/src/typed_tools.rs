//! Typed tools (`mcp-tools`): arguments and results are Rust types, the
//! input and output JSON Schemas are generated from them (schemars), and
//! each revision gets what it defines — `structuredContent` and
//! `outputSchema` from 2025-06-18, 2020-12 schemas from 2025-11-25, bad
//! arguments as `-32602` before 2025-11-25 and as a tool error
//! (`isError: true`) from it on. A typed prompt (its arguments listed from
//! the type) and a resource (not found as each revision says) sit in the
//! same registry. Served in every Streamable HTTP revision.
//!
//! ```sh
//! cargo run -p mcp-examples --bin typed_tools            # 127.0.0.1, a free port
//! cargo run -p mcp-compat -- call http://127.0.0.1:PORT/mcp --tool divide --args '{"a":7,"b":2}'
//! ```

use std::sync::Arc;
use std::time::Duration;

use mcp_examples::serve_until_signal;
use mcp_negotiate::server::{MultiConfig, MultiServer};
use mcp_tools::{Elicitation, Json, NoArgs, Resource, Tool, ToolContext, ToolError, Tools};
use mcp_transport_core::handler::Execution;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Two numbers to divide.
#[derive(Deserialize, JsonSchema)]
struct DivideArgs {
    /// The dividend.
    a: f64,
    /// The divisor (not zero).
    b: f64,
}

/// The quotient and the remainder.
#[derive(Serialize, JsonSchema)]
struct Division {
    quotient: f64,
    remainder: f64,
}

/// How long to work.
#[derive(Deserialize, JsonSchema)]
struct WorkArgs {
    /// Steps of 100 ms (at most 100).
    steps: u32,
}

/// What the `review` prompt takes (prompt arguments are strings).
#[derive(Deserialize, JsonSchema)]
struct ReviewArgs {
    /// The code to review.
    code: String,
}

/// What `greet` asks the user.
#[derive(Deserialize, JsonSchema)]
struct Person {
    name: String,
}

fn tools() -> Tools {
    Tools::new()
        .tool(
            "divide",
            "Divides a by b; answers the quotient and the remainder.",
            |args: DivideArgs, _cx| async move {
                if args.b == 0.0 {
                    // A value out of range: reported as each revision says.
                    return Err(ToolError::invalid_arguments("b must not be zero"));
                }
                Ok(Json(Division {
                    quotient: (args.a / args.b).trunc(),
                    remainder: args.a % args.b,
                }))
            },
        )
        .tool(
            "greet",
            "Asks the user's name (elicitation), then greets.",
            |_: NoArgs, cx: ToolContext| async move {
                Ok::<_, ToolError>(match cx.elicit::<Person>("person", "Who are you?")? {
                    Elicitation::Accept(p) => format!("Hello, {}!", p.name),
                    Elicitation::Refused(action) => format!("No greeting ({action})."),
                })
            },
        )
        .register(
            Tool::new(
                "work",
                "Works in steps of 100 ms, reporting progress; a task for clients that declare tasks.",
                |args: WorkArgs, cx: ToolContext| async move {
                    if args.steps > 100 {
                        return Err(ToolError::invalid_arguments("steps must be <= 100"));
                    }
                    for i in 1..=args.steps {
                        cx.sleep(Duration::from_millis(100)).await?;
                        let _ = cx.progress(i.into(), Some(args.steps.into()), None).await;
                    }
                    Ok(format!("worked {} steps", args.steps))
                },
            )
            .execution(Execution::MayBeLong),
        )
        .prompt(
            "review",
            "Asks for a review of some code.",
            |args: ReviewArgs, _cx| async move { format!("Please review this code:\n{}", args.code) },
        )
        .resource(
            Resource::text("example://motd", "motd", |_cx| async {
                Ok("Divide wisely.".to_owned())
            })
            .mime_type("text/plain"),
        )
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let bind = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".into());
    let server = MultiServer::new(Arc::new(tools()), MultiConfig::all());
    let listener = tokio::net::TcpListener::bind(&bind).await?;
    serve_until_signal(listener, server.route("/mcp"), server).await
}
