//! The two steps every entry of the registry shares: a request's params
//! parsed into a typed struct and the entry they name looked up
//! ([`lookup`]: `tools/call`, `prompts/get`, `resources/read`), and a
//! typed user function behind an untyped one ([`typed_fn`]: a tool's
//! arguments, a prompt's).

use std::future::Future;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use mcp_transport_core::jsonrpc::ErrorObject;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::ToolContext;

/// Parses `params` (absent: `{}`) into `P` — a failure is `-32602`
/// (*Tools*, *Prompts*, *Resources*: params that fail the request's schema
/// are invalid params) — and finds the entry they name with `find`, or
/// answers `missing(&params)`.
pub(crate) fn lookup<'a, P, E>(
    params: Option<&str>,
    find: impl FnOnce(&P) -> Option<&'a E>,
    missing: impl FnOnce(&P) -> ErrorObject,
) -> Result<(P, &'a E), ErrorObject>
where
    P: DeserializeOwned,
{
    let p =
        serde_json::from_str::<P>(params.unwrap_or("{}")).map_err(ErrorObject::invalid_params)?;
    match find(&p) {
        Some(entry) => Ok((p, entry)),
        None => Err(missing(&p)),
    }
}

/// A call's JSON arguments: parsed already, or the request's own text
/// (read straight into the typed struct, with no JSON tree in between).
#[derive(Debug)]
pub(crate) enum Args<'a> {
    /// An object built or parsed by the caller.
    Value(Value),
    /// The JSON text of an object, as the request sent it.
    Text(&'a str),
}

impl Args<'_> {
    fn into_typed<A: DeserializeOwned>(self) -> Result<A, serde_json::Error> {
        match self {
            Args::Value(v) => serde_json::from_value(v),
            Args::Text(t) => serde_json::from_str(t),
        }
    }
}

/// `f`, taking its arguments as `A`, as a function of JSON arguments:
/// arguments that do not deserialize are answered `invalid(error, cx)`
/// without calling `f`; what `f` returns is turned into `T` by the
/// function `finish(cx)` gives (read from the context before `f` takes
/// it: the revision's rules, say). The one boxed future is `f`'s, its
/// ending included, so a caller can hand it on as it is.
pub(crate) fn typed_fn<A, R, T, F, Fut, Fin>(
    f: F,
    finish: impl Fn(&ToolContext) -> Fin + Send + Sync + 'static,
    invalid: impl Fn(serde_json::Error, &ToolContext) -> T + Send + Sync + 'static,
) -> impl Fn(Args<'_>, ToolContext) -> BoxFuture<'static, T> + Send + Sync + 'static
where
    A: DeserializeOwned + Send + 'static,
    R: Send + 'static,
    T: Send + 'static,
    F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    Fin: FnOnce(R) -> T + Send + 'static,
{
    move |args: Args<'_>, cx: ToolContext| match args.into_typed::<A>() {
        Ok(a) => {
            let fin = finish(&cx);
            f(a, cx).map(fin).boxed()
        }
        Err(e) => {
            let answer = invalid(e, &cx);
            std::future::ready(answer).boxed()
        }
    }
}
