//! [`Endpoint`]: an engine served at one path, as a `tower::Service`,
//! without axum's `Router`.
//!
//! An MCP server has one endpoint (*Streamable HTTP*: "The server MUST
//! provide a single HTTP endpoint path … that supports both POST and GET
//! methods"); a server that serves nothing else needs no router to find
//! it. `Router::route_service` costs every request a path lookup, an
//! extension map allocated for the (empty) path parameters, and a clone of
//! the boxed service (`BoxCloneSyncService`) whose call boxes a second
//! future around the engine's: ~3,000 instructions a request in process,
//! about a tenth of a
//! stateless 2026-07-28 `tools/call`'s whole cost (docs/PERFORMANCE.md,
//! session 27). [`Endpoint`] compares the path and calls the engine.
//!
//! It answers exactly as `Router::new().route_service(path, engine)` does:
//! a request whose path (the query aside) is `path` byte for byte goes to
//! the engine, whatever its method; any other gets `404 Not Found` with
//! an empty body. Mount an engine in an application that serves other
//! routes with its `route`/`router` methods instead.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use futures_util::future::{Either, Ready, ready};
use http::{Request, Response, StatusCode};
use tower::Service;

/// `engine` at one path; every other path is `404` (see the [module
/// documentation](self)). Cheap to clone when the engine is.
#[derive(Clone, Debug)]
pub struct Endpoint<S> {
    path: Arc<str>,
    engine: S,
}

impl<S> Endpoint<S> {
    /// `engine` served at `path`.
    ///
    /// # Panics
    ///
    /// If `path` does not start with `/`, as `axum::Router::route` does: no
    /// request path could match it.
    pub fn new(path: &str, engine: S) -> Self {
        assert!(
            path.starts_with('/'),
            "an endpoint's path must start with '/', got {path:?}"
        );
        Self {
            path: path.into(),
            engine,
        }
    }

    /// The path served.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The engine.
    pub fn engine(&self) -> &S {
        &self.engine
    }
}

impl<S, B> Service<Request<B>> for Endpoint<S>
where
    S: Service<Request<B>, Response = Response<Body>, Error = Infallible>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Either<S::Future, Ready<Result<Response<Body>, Infallible>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.engine.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        if req.uri().path() == &*self.path {
            return Either::Left(self.engine.call(req));
        }
        let mut not_found = Response::new(Body::empty());
        *not_found.status_mut() = StatusCode::NOT_FOUND;
        Either::Right(ready(Ok(not_found)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use tower::ServiceExt;

    /// An engine that answers 200 with the method and target it saw.
    fn echo() -> axum::routing::MethodRouter {
        axum::routing::any(
            |req: Request<Body>| async move { format!("{} {}", req.method(), req.uri()) },
        )
    }

    async fn answer<S>(svc: S, method: &str, target: &str) -> (StatusCode, String)
    where
        S: Service<Request<Body>, Response = Response<Body>, Error = Infallible>,
    {
        let req = Request::builder()
            .method(method)
            .uri(target)
            .body(Body::empty())
            .unwrap();
        let Ok(resp) = svc.oneshot(req).await;
        let status = resp.status();
        let body = axum::body::to_bytes(resp.into_body(), 1024).await.unwrap();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    /// Targets against which the endpoint and axum's router must agree.
    const TARGETS: &[(&str, &str)] = &[
        ("POST", "/mcp"),
        ("GET", "/mcp"),
        ("DELETE", "/mcp"),
        ("PATCH", "/mcp"),
        ("POST", "/mcp?x=1"),
        ("POST", "/mcp/"),
        ("POST", "/mcpx"),
        ("POST", "/MCP"),
        ("POST", "//mcp"),
        ("POST", "/"),
        ("POST", "/other"),
        ("POST", "/mc%70"),
        ("POST", "http://example.com/mcp"),
        ("POST", "http://example.com/other"),
    ];

    #[tokio::test]
    async fn it_answers_as_axum_route_service_does() {
        for &(method, target) in TARGETS {
            let ours = answer(Endpoint::new("/mcp", echo()), method, target).await;
            let axum = answer(Router::new().route_service("/mcp", echo()), method, target).await;
            assert_eq!(ours, axum, "{method} {target}");
        }
        // And the two outcomes both happen.
        let hit = answer(Endpoint::new("/mcp", echo()), "POST", "/mcp?x=1").await;
        assert_eq!(hit, (StatusCode::OK, "POST /mcp?x=1".to_owned()));
        let miss = answer(Endpoint::new("/mcp", echo()), "POST", "/mcp/").await;
        assert_eq!(miss, (StatusCode::NOT_FOUND, String::new()));
    }

    #[tokio::test]
    async fn the_root_path_is_served_only_at_the_root() {
        let svc = Endpoint::new("/", echo());
        assert_eq!(answer(svc.clone(), "GET", "/").await.0, StatusCode::OK);
        assert_eq!(answer(svc.clone(), "GET", "/?a=b").await.0, StatusCode::OK);
        assert_eq!(answer(svc, "GET", "/mcp").await.0, StatusCode::NOT_FOUND);
        assert_eq!(Endpoint::new("/x", ()).path(), "/x");
    }

    /// An engine that is never ready.
    #[derive(Clone)]
    struct Busy;

    impl Service<Request<Body>> for Busy {
        type Response = Response<Body>;
        type Error = Infallible;
        type Future = Ready<Result<Response<Body>, Infallible>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Pending
        }

        fn call(&mut self, _: Request<Body>) -> Self::Future {
            unreachable!("never ready")
        }
    }

    /// The endpoint is ready when its engine is (tower's backpressure
    /// passes through it).
    #[test]
    fn readiness_is_the_engines() {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut busy = Endpoint::new("/mcp", Busy);
        assert!(Service::<Request<Body>>::poll_ready(&mut busy, &mut cx).is_pending());
        let mut ready = Endpoint::new("/mcp", echo());
        assert!(Service::<Request<Body>>::poll_ready(&mut ready, &mut cx).is_ready());
    }

    #[test]
    #[should_panic(expected = "must start with '/'")]
    fn a_path_without_a_leading_slash_is_refused() {
        let _ = Endpoint::new("mcp", ());
    }
}
