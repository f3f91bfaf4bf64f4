//! The `tower::Service` glue of the engines.
//!
//! Every engine (the session engine's `LegacyServer`, the stateless
//! `ModernServer`, the dispatching `MultiServer`) is a cheap-to-clone
//! handle with an inherent `async fn handle(&self, http::Request<Body>) ->
//! http::Response<Body>`. [`impl_engine_service!`](crate::impl_engine_service)
//! makes such a handle a `tower::Service<http::Request<B>>` for any
//! axum-compatible body `B`, with `Response = http::Response<Body>` and
//! `Error = Infallible`: every failure is an HTTP answer. So an engine can
//! be driven in memory (`tower::ServiceExt::oneshot`), wrapped in tower
//! middleware, boxed (`tower::util::BoxCloneSyncService`), or mounted with
//! [`router`].
//!
//! Nothing in the engines needs connection extensions (such as axum's
//! `ConnectInfo`): a request built in memory is served like one from a
//! socket, as long as it names its `Host` (the DNS-rebinding check of
//! [`OriginPolicy`](crate::config::OriginPolicy) refuses a request that
//! names none, in memory as on the wire).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;

use axum::body::{Body, HttpBody};
use axum::{BoxError, Router};
use bytes::Bytes;
use http::Request;
use tower::Service;

use super::HttpResponse;

/// The future of an engine's `Service::call`.
pub type ResponseFuture = Pin<Box<dyn Future<Output = Result<HttpResponse, Infallible>> + Send>>;

/// The `Service::call` future of an engine: `answer`, which cannot fail.
///
/// `answer` is mapped, not awaited in an `async` block: such a block keeps
/// the future it moves in twice (as its capture and as the future it
/// awaits), which doubled the box every request allocates and copies
/// (7.7 KB for the 2026-07-28 engine's).
pub fn respond<F>(answer: F) -> ResponseFuture
where
    F: Future<Output = HttpResponse> + Send + 'static,
{
    Box::pin(futures_util::FutureExt::map(answer, Ok))
}

/// A request with any axum-compatible body, as the engines read it.
pub fn into_axum<B>(req: Request<B>) -> Request<Body>
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    req.map(Body::new)
}

/// An axum router serving `engine` at `path` (which must start with `/`),
/// for every HTTP method; the engine answers the methods it does not serve
/// itself (405).
pub fn router<S>(path: &str, engine: S) -> Router
where
    S: Service<Request<Body>, Response = HttpResponse, Error = Infallible>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send + 'static,
{
    Router::new().route_service(path, engine)
}

/// Implements `tower::Service<http::Request<B>>` (for any axum-compatible
/// body `B`; `Response = http::Response<axum::body::Body>`,
/// `Error = Infallible`, always ready) for an engine handle: a `Clone` type
/// with an inherent `async fn handle(&self, http::Request<axum::body::Body>)
/// -> http::Response<axum::body::Body>`. `call` clones the handle and
/// serves the request with `handle`.
#[macro_export]
macro_rules! impl_engine_service {
    ($engine:ty) => {
        impl<B> $crate::__private::Service<$crate::__private::Request<B>> for $engine
        where
            B: $crate::__private::HttpBody<Data = $crate::__private::Bytes>
                + ::std::marker::Send
                + 'static,
            B::Error: ::std::convert::Into<$crate::__private::BoxError>,
        {
            type Response = $crate::server::HttpResponse;
            type Error = ::std::convert::Infallible;
            type Future = $crate::server::service::ResponseFuture;

            fn poll_ready(
                &mut self,
                _cx: &mut ::std::task::Context<'_>,
            ) -> ::std::task::Poll<::std::result::Result<(), Self::Error>> {
                ::std::task::Poll::Ready(::std::result::Result::Ok(()))
            }

            fn call(&mut self, req: $crate::__private::Request<B>) -> Self::Future {
                let engine = ::std::clone::Clone::clone(self);
                let req = $crate::server::service::into_axum(req);
                $crate::server::service::respond(async move { engine.handle(req).await })
            }
        }
    };
}

/// Gives an engine handle (a `Clone` type that is a `tower::Service` of
/// `http::Request<axum::body::Body>`, see
/// [`impl_engine_service!`](crate::impl_engine_service)) its two axum
/// mounting methods, `router()` (the endpoint at `/`, to mount with
/// `Router::nest_service`) and `route(path)`, and `endpoint(path)`, the
/// same without a `Router` ([`Endpoint`](crate::server::Endpoint)).
#[macro_export]
macro_rules! impl_engine_router {
    ($engine:ty) => {
        impl $engine {
            /// A router serving the MCP endpoint at `/`; mount it with
            /// `Router::new().nest_service("/mcp", server.router())`.
            pub fn router(&self) -> $crate::__private::Router {
                self.route("/")
            }

            /// A router serving the MCP endpoint at `path` (which must start
            /// with `/`, as for `axum::Router::route`). Every HTTP method
            /// reaches the engine, which answers those it does not serve
            /// with 405.
            pub fn route(&self, path: &str) -> $crate::__private::Router {
                $crate::server::service::router(path, ::std::clone::Clone::clone(self))
            }

            /// The MCP endpoint at `path` as a `tower::Service` of its own,
            /// without an axum `Router` (every other path gets 404): for a
            /// server that serves nothing else (see
            /// `mcp_http_edge::server::Endpoint`).
            ///
            /// # Panics
            ///
            /// If `path` does not start with `/`.
            pub fn endpoint(&self, path: &str) -> $crate::server::Endpoint<Self> {
                $crate::server::Endpoint::new(path, ::std::clone::Clone::clone(self))
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use http::StatusCode;
    use tower::ServiceExt;

    use super::*;

    /// An engine handle that answers with what it read of the request.
    #[derive(Clone)]
    struct Echo;

    impl Echo {
        async fn handle(&self, req: Request<Body>) -> HttpResponse {
            let (head, body) = req.into_parts();
            let body = axum::body::to_bytes(body, 1024).await.unwrap();
            let host = head
                .headers
                .get("host")
                .map(|h| h.to_str().unwrap().to_owned());
            let text = format!(
                "{} {} {:?} {}",
                head.method,
                head.uri,
                host,
                String::from_utf8_lossy(&body)
            );
            http::Response::new(Body::from(text))
        }
    }

    crate::impl_engine_service!(Echo);
    crate::impl_engine_router!(Echo);

    async fn answer<S>(svc: S, req: Request<String>) -> (StatusCode, String)
    where
        S: Service<Request<String>, Response = HttpResponse, Error = Infallible>,
    {
        let Ok(resp) = svc.oneshot(req).await;
        let status = resp.status();
        let body = axum::body::to_bytes(resp.into_body(), 1024).await.unwrap();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    fn post(target: &str) -> Request<String> {
        Request::post(target)
            .header("host", "localhost")
            .body("hello".to_owned())
            .unwrap()
    }

    /// The engine reads the request as it was sent: method, target,
    /// headers and body, whatever the body type.
    #[tokio::test]
    async fn an_engine_serves_any_body_type_as_sent() {
        let (status, text) = answer(Echo, post("/mcp?a=1")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(text, r#"POST /mcp?a=1 Some("localhost") hello"#);
    }

    /// `route` serves the engine at its path only; `router` at `/`.
    #[tokio::test]
    async fn routers_serve_the_engine_at_their_path() {
        let (status, text) = answer(Echo.route("/mcp"), post("/mcp")).await;
        assert_eq!(
            (status, text.as_str()),
            (StatusCode::OK, r#"POST /mcp Some("localhost") hello"#)
        );
        assert_eq!(
            answer(Echo.route("/mcp"), post("/other")).await.0,
            StatusCode::NOT_FOUND
        );
        assert_eq!(answer(Echo.router(), post("/")).await.0, StatusCode::OK);
        assert_eq!(
            answer(Echo.router(), post("/mcp")).await.0,
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            answer(Echo.endpoint("/e"), post("/e")).await.0,
            StatusCode::OK
        );
        assert_eq!(
            answer(Echo.endpoint("/e"), post("/f")).await.0,
            StatusCode::NOT_FOUND
        );
    }
}
