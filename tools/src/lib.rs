//! Typed MCP tools (and prompts and resources) over the era-independent
//! [`Handler`](mcp_transport_core::handler::Handler): arguments and results
//! are Rust types (serde), their JSON Schemas are generated (schemars), and
//! `tools/list` and `tools/call` follow the rules of the revision each
//! request is served at ([`ToolRules`]):
//!
//! | | 2025-03-26 | 2025-06-18 | 2025-11-25 | 2026-07-28 |
//! | --- | --- | --- | --- | --- |
//! | schema dialect | draft-07 | draft-07 | 2020-12 | 2020-12 |
//! | [`Json`] result | text | `structuredContent` (an object) + text, `outputSchema` | same | any JSON value + text |
//! | arguments that fail the type | `-32602` | `-32602` | `isError: true` | `isError: true` |
//! | unknown tool, `arguments` not an object | `-32602` | `-32602` | `-32602` | `-32602` |
//!
//! Prompts ([`Tools::prompt`]: typed arguments, listed from the type's
//! schema) and fixed text resources ([`Tools::resource`], not found as
//! [`resource_not_found`] says per revision) go in the same registry; the
//! rest (templates, subscriptions, completion) in a
//! [`fallback`](Tools::fallback) handler.
//!
//! ```
//! use mcp_tools::{Json, NoArgs, ToolError, Tools};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! /// Two numbers.
//! #[derive(Deserialize, JsonSchema)]
//! struct AddArgs {
//!     /// The first.
//!     a: f64,
//!     /// The second.
//!     b: f64,
//! }
//!
//! #[derive(Serialize, JsonSchema)]
//! struct Sum {
//!     sum: f64,
//! }
//!
//! let tools = Tools::new()
//!     .tool("add", "Adds two numbers", |args: AddArgs, _cx| async move {
//!         Json(Sum { sum: args.a + args.b })
//!     })
//!     .tool("fail", "Always fails", |_: NoArgs, _cx| async move {
//!         Err::<String, _>(ToolError::failed("it failed"))
//!     });
//! // `tools` is a `Handler`: serve it with any revision's server.
//! # let _ = tools;
//! ```

mod context;
mod output;
mod prompts;
mod registry;
mod resources;
mod revision;
mod schema;
mod typed;

pub use context::{Elicitation, ToolContext};
pub use output::{
    CallToolResult, IntoToolResult, Json, REQUEST_CANCELLED, Reply, ToolError, text_block,
};
pub use prompts::{GetPromptResult, IntoPrompt, Prompt, PromptMessage, Role};
pub use registry::{Tool, Tools};
pub use resources::{Resource, resource_not_found};
pub use revision::{Dialect, ToolRules};
pub use schema::Schemas;

/// The schemars this crate generates schemas with (derive `JsonSchema` on
/// argument and result types; depend on `schemars` 1.x yourself for the
/// derive's paths, or add `#[schemars(crate = "mcp_tools::schemars")]`).
pub use schemars;

/// Arguments of a tool that takes none: any object (extra members are
/// ignored), listed as `{"type": "object", "properties": {}}`.
#[derive(Clone, Copy, Debug, Default, serde::Deserialize, schemars::JsonSchema)]
pub struct NoArgs {}
