//! Resources with fixed URIs: [`Resource`] (a URI, its metadata and the
//! function that reads it) and the per-revision "not found" error.
//!
//! *Resources*: `resources/list` lists `Resource`s (`uri`, `name`,
//! `title`, `description`, `mimeType`); `resources/read` returns
//! `contents` (`TextResourceContents` here). "Error Handling" differs by
//! revision ([`resource_not_found`]).

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use mcp_transport_core::ProtocolVersion;
use mcp_transport_core::jsonrpc::{ErrorObject, INVALID_PARAMS, RESOURCE_NOT_FOUND};
use serde_json::{Value, json};

use crate::context::ToolContext;

type ReadFn = dyn Fn(ToolContext) -> BoxFuture<'static, Result<String, ErrorObject>> + Send + Sync;

/// The error for a `resources/read` of a URI the server does not have, on
/// `revision`'s terms, with `data: {"uri": ...}`:
///
/// - 2026-07-28 *Resources*, "Error Handling": "servers **MUST** return a
///   JSON-RPC error with code `-32602` (Invalid Params)" (SEP-2164);
/// - 2025-03-26 to 2025-11-25: "Resource not found: `-32002`".
pub fn resource_not_found(uri: &str, revision: &ProtocolVersion) -> ErrorObject {
    let code = if revision.is_modern() {
        INVALID_PARAMS
    } else {
        RESOURCE_NOT_FOUND
    };
    ErrorObject::new(code, "Resource not found").with_data(&json!({ "uri": uri }))
}

/// A resource with a fixed URI whose contents are text.
pub struct Resource {
    uri: String,
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
    read: Arc<ReadFn>,
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resource")
            .field("uri", &self.uri)
            .finish_non_exhaustive()
    }
}

impl Resource {
    /// A text resource at `uri` named `name`, read by `f` (its text, or a
    /// JSON-RPC error to answer instead).
    pub fn text<F, Fut>(uri: impl Into<String>, name: impl Into<String>, f: F) -> Resource
    where
        F: Fn(ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, ErrorObject>> + Send + 'static,
    {
        Resource {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            read: Arc::new(move |cx| f(cx).boxed()),
        }
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Sets the display `title`.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the `description`.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the `mimeType` (listed, and given with the contents).
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// The `Resource` definition `resources/list` lists.
    pub fn definition(&self) -> Value {
        let mut r = json!({ "uri": self.uri, "name": self.name });
        for (key, value) in [
            ("title", &self.title),
            ("description", &self.description),
            ("mimeType", &self.mime_type),
        ] {
            if let Some(v) = value {
                r[key] = v.as_str().into();
            }
        }
        r
    }

    /// Reads it: the `ReadResourceResult`.
    pub async fn read(&self, cx: ToolContext) -> Result<Value, ErrorObject> {
        let text = (self.read)(cx).await?;
        let mut contents = json!({ "uri": self.uri, "text": text });
        if let Some(m) = &self.mime_type {
            contents["mimeType"] = m.as_str().into();
        }
        Ok(json!({ "contents": [contents] }))
    }
}
