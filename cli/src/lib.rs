//! # mcp-compat
//!
//! The reference MCP Streamable HTTP server and client of this workspace, as
//! a library (so the integration tests and the matrix drive the very code the
//! binary runs) and as the `mcp-compat` binary:
//!
//! * `mcp-compat serve`: the reference server ([`reference::ReferenceHandler`]).
//! * `mcp-compat call`: one request from the negotiating client.
//! * `mcp-compat matrix`: the compatibility matrix ([`matrix`]).
//! * `mcp-compat bench`: the load benchmark ([`mod@bench`]).
//! * `mcp-compat conformance-client URL`: the client the official
//!   conformance suite drives ([`conformance_client`]).

pub mod bench;
pub mod call;
pub mod check;
pub mod check_client_cmd;
pub mod conformance_client;
pub mod fixtures;
pub mod http_client;
pub mod logging;
pub mod matrix;
pub mod matrix_cmd;
pub mod peer_client;
pub mod reference;
pub mod revisions;
pub mod serve;
pub mod table;
