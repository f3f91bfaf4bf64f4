//! The configuration parts every engine and client has, embedded in their
//! configs (`ServerConfig`, `ModernConfig`, `ClientConfig`,
//! `ModernClientConfig`, `HttpSseConfig`), whose `with_*` builders delegate
//! here.

use std::fmt;
use std::time::Duration;

use http::header::{HOST, ORIGIN};
use http::request::Parts;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use mcp_transport_core::endpoint::{host_allowed, origin_allowed};
use mcp_transport_core::transport::{ConfigError, TransportError};

use crate::header_scan;
use crate::server::Reject;

/// The default [`ServerHttp::max_body_bytes`]: 4 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// The default [`ClientHttp::request_timeout`]: 5 minutes.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// Which `Origin` and `Host` values a server accepts: the DNS-rebinding
/// protection of *Transports*, "Security Warning" ("Servers MUST validate
/// the Origin header on all incoming connections").
///
/// The default allows only loopback names (`localhost`, `127.0.0.1`,
/// `[::1]`, any port). A server reachable under another name **must** set
/// [`allowed_hosts`](Self::allowed_hosts) (and, for browser clients,
/// [`allowed_origins`](Self::allowed_origins)), or every request gets 403.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OriginPolicy {
    /// Origins allowed in the `Origin` header, compared case-insensitively
    /// as `scheme://host[:port]`. `None` (the default) allows only loopback
    /// origins: `http(s)://localhost`, `127.0.0.1` or `[::1]` with any port.
    /// A request without `Origin` is always allowed; one with a present but
    /// not allowed `Origin` gets 403.
    pub allowed_origins: Option<Vec<String>>,
    /// Names allowed in the `Host` header: `host` (any port) or `host:port`.
    /// `None` (the default) allows only `localhost`, `127.0.0.1` and `[::1]`
    /// with any port; any other `Host` gets 403.
    pub allowed_hosts: Option<Vec<String>>,
}

impl OriginPolicy {
    /// `Origin` then `Host` (*Transports*, "Security Warning": "If the
    /// Origin header is present and invalid, servers MUST respond with HTTP
    /// 403 Forbidden"; the `Host` check is the other half of DNS-rebinding
    /// protection). Without a `Host` header the request URI's authority
    /// counts; a request naming neither is refused.
    ///
    /// Ambiguous requests are refused with 403 too, so that no later reader
    /// can see another value than the one checked: two `Origin` or two
    /// `Host` headers, and an absolute-form target (`POST http://a/mcp`)
    /// whose authority is not itself an allowed host (RFC 9112 §3.2.2: the
    /// target's authority replaces `Host`).
    pub fn check(&self, parts: &Parts) -> Result<(), Reject> {
        let forbidden = |m: String| Reject::invalid(StatusCode::FORBIDDEN, m);
        // Both names found in one pass, with whether each was repeated.
        let [origin, host_header] = header_scan::scan(&parts.headers, [&ORIGIN, &HOST]);
        let Ok(origin) = origin.single() else {
            return Err(forbidden(
                "Forbidden: the request carries more than one Origin header".into(),
            ));
        };
        let Ok(host_header) = host_header.single() else {
            return Err(forbidden(
                "Forbidden: the request carries more than one Host header (DNS rebinding protection)"
                    .into(),
            ));
        };
        if let Some(origin) = origin {
            let ok = origin
                .to_str()
                .is_ok_and(|o| origin_allowed(o, self.allowed_origins.as_deref()));
            if !ok {
                return Err(forbidden(format!(
                    "Forbidden: Origin {:?} is not allowed",
                    String::from_utf8_lossy(origin.as_bytes())
                )));
            }
        }
        if let Some(authority) = parts.uri.authority()
            && !host_allowed(authority.as_str(), self.allowed_hosts.as_deref())
        {
            return Err(forbidden(format!(
                "Forbidden: the request target names host {:?}, which is not allowed (DNS rebinding protection)",
                authority.as_str()
            )));
        }
        let host = match host_header {
            Some(h) => h.to_str().ok(),
            None => parts.uri.authority().map(|a| a.as_str()),
        };
        match host {
            Some(h) if host_allowed(h, self.allowed_hosts.as_deref()) => Ok(()),
            Some(h) => Err(forbidden(format!(
                "Forbidden: Host {h:?} is not allowed (DNS rebinding protection)"
            ))),
            None => Err(forbidden(
                "Forbidden: the request names no Host (DNS rebinding protection)".into(),
            )),
        }
    }
}

/// What every server engine checks at the HTTP edge: who may call it and
/// how large a POST body may be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerHttp {
    /// The `Origin`/`Host` allowlists (loopback only by default).
    pub origins: OriginPolicy,
    /// The largest POST body accepted; larger is 413. Default 4 MiB.
    pub max_body_bytes: usize,
    /// Injected bugs, for the matrix's self-test only (none by default).
    #[doc(hidden)]
    pub faults: crate::faults::Faults,
}

impl Default for ServerHttp {
    fn default() -> Self {
        ServerHttp {
            origins: OriginPolicy::default(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            faults: crate::faults::Faults::NONE,
        }
    }
}

impl ServerHttp {
    /// Sets [`OriginPolicy::allowed_origins`].
    pub fn with_allowed_origins(mut self, origins: Option<Vec<String>>) -> Self {
        self.origins.allowed_origins = origins;
        self
    }

    /// Sets [`OriginPolicy::allowed_hosts`].
    pub fn with_allowed_hosts(mut self, hosts: Option<Vec<String>>) -> Self {
        self.origins.allowed_hosts = hosts;
        self
    }

    /// Sets [`max_body_bytes`](Self::max_body_bytes).
    pub fn with_max_body_bytes(mut self, n: usize) -> Self {
        self.max_body_bytes = n;
        self
    }
}

/// What every client (the two Streamable HTTP clients and the HTTP+SSE one)
/// needs to reach its server: where, with which HTTP client, how long to
/// wait.
#[derive(Clone)]
pub struct ClientHttp {
    /// The URL the client was given (the MCP endpoint; for HTTP+SSE, the
    /// SSE URL).
    pub url: String,
    /// The default deadline of a request (what exactly it bounds is the
    /// client's: see its config), overridden per request by
    /// `RequestOptions::timeout`; `None` waits as long as the server keeps
    /// the stream alive. Default 5 minutes.
    pub request_timeout: Option<Duration>,
    /// A custom HTTP client (proxies, TLS roots, client certificates,
    /// default headers). It must not have an overall request timeout, which
    /// would cut SSE streams. `None` builds one with `TCP_NODELAY`, TLS
    /// (rustls, the platform's roots) and [`headers`](Self::headers).
    pub http_client: Option<reqwest::Client>,
    /// Headers sent on every request of the client — POSTs, GET streams,
    /// resumes, DELETE — such as `Authorization`. They are the built
    /// client's default headers, so with a custom
    /// [`http_client`](Self::http_client) they go on that client instead
    /// (`reqwest::ClientBuilder::default_headers`); setting both is a
    /// configuration error. A header the protocol sets on a request
    /// (`Accept`, `MCP-Session-Id`, …) replaces a default of the same name.
    pub headers: HeaderMap,
    /// Injected bugs, for the matrix's self-test only (none by default).
    #[doc(hidden)]
    pub faults: crate::faults::Faults,
}

impl ClientHttp {
    /// The settings for `url`, every other at its default.
    pub fn new(url: impl Into<String>) -> Self {
        ClientHttp {
            url: url.into(),
            request_timeout: Some(DEFAULT_REQUEST_TIMEOUT),
            http_client: None,
            headers: HeaderMap::new(),
            faults: crate::faults::Faults::NONE,
        }
    }

    /// Sets [`request_timeout`](Self::request_timeout).
    pub fn with_request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Sets [`http_client`](Self::http_client).
    pub fn with_http_client(mut self, client: reqwest::Client) -> Self {
        self.http_client = Some(client);
        self
    }

    /// Adds a header to [`headers`](Self::headers) (another value of the
    /// same name is kept: both are sent).
    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.append(name, value);
        self
    }

    /// [`url`](Self::url) parsed, or the configuration error naming it as
    /// `what` (`"MCP endpoint URL"`, `"SSE URL"`): one that does not parse,
    /// or whose scheme is not `http` or `https`. Nothing is sent either way.
    pub fn parse_url(&self, what: &'static str) -> Result<reqwest::Url, TransportError> {
        let invalid = |reason: String| {
            TransportError::Config(ConfigError::InvalidUrl {
                what,
                url: self.url.clone(),
                reason,
            })
        };
        let url = reqwest::Url::parse(&self.url).map_err(|e| invalid(e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid("not an http(s) URL".into()));
        }
        Ok(url)
    }

    /// The HTTP client to use: the custom one, or a new one with
    /// `TCP_NODELAY` (SSE events are small writes) and
    /// [`headers`](Self::headers) as its default headers.
    pub fn client(&self) -> Result<reqwest::Client, TransportError> {
        match &self.http_client {
            Some(_) if !self.headers.is_empty() => {
                Err(TransportError::Config(ConfigError::Conflict {
                    settings: "ClientHttp::http_client and ClientHttp::headers",
                    advice: "put the headers on the custom client (reqwest::ClientBuilder::default_headers)",
                }))
            }
            Some(client) => Ok(client.clone()),
            None => reqwest::Client::builder()
                .tcp_nodelay(true)
                .default_headers(self.headers.clone())
                .build()
                .map_err(|e| TransportError::Connection(format!("building the HTTP client: {e}"))),
        }
    }
}

impl fmt::Debug for ClientHttp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientHttp")
            .field("url", &self.url)
            .field("request_timeout", &self.request_timeout)
            .field("custom_http_client", &self.http_client.is_some())
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Default for ClientHttp {
    fn default() -> Self {
        ClientHttp::new(String::new())
    }
}

/// Gives a server configuration the setters of the edge settings every
/// engine's configuration shares, once: `with_http`, `with_max_body_bytes`,
/// `with_allowed_origins` and `with_allowed_hosts` (the edge's
/// [`ServerHttp`]). The type needs the field `http: ServerHttp`, documented
/// on the type (the setters link to it). The bound on running work has its
/// setters from `mcp_transport_core::impl_running_setters!`.
#[macro_export]
macro_rules! impl_server_setters {
    ($config:ty) => {
        impl $config {
            /// Sets [`http`](Self::http) (the edge settings) whole.
            pub fn with_http(mut self, http: $crate::config::ServerHttp) -> Self {
                self.http = http;
                self
            }

            /// Sets the POST body limit
            /// ([`ServerHttp::max_body_bytes`]($crate::config::ServerHttp::max_body_bytes)).
            pub fn with_max_body_bytes(mut self, n: usize) -> Self {
                self.http = self.http.with_max_body_bytes(n);
                self
            }

            /// Sets the allowed `Origin`s
            /// ([`OriginPolicy::allowed_origins`]($crate::config::OriginPolicy::allowed_origins)).
            pub fn with_allowed_origins(
                mut self,
                origins: ::std::option::Option<::std::vec::Vec<::std::string::String>>,
            ) -> Self {
                self.http = self.http.with_allowed_origins(origins);
                self
            }

            /// Sets the allowed `Host`s
            /// ([`OriginPolicy::allowed_hosts`]($crate::config::OriginPolicy::allowed_hosts)).
            pub fn with_allowed_hosts(
                mut self,
                hosts: ::std::option::Option<::std::vec::Vec<::std::string::String>>,
            ) -> Self {
                self.http = self.http.with_allowed_hosts(hosts);
                self
            }
        }
    };
}

/// Gives a client configuration the setters every client of the workspace
/// shares, once: `with_capabilities`, `with_input_handler`,
/// `with_max_event_bytes`, `with_request_timeout` and `with_http_client`.
/// The type needs the fields `http: ClientHttp`, `capabilities:
/// serde_json::Value`, `input_handler: Arc<dyn InputHandler>` and
/// `max_event_bytes: usize`, each documented on the type (the setters link
/// to them).
#[macro_export]
macro_rules! impl_client_setters {
    ($config:ty) => {
        impl $config {
            /// Sets [`capabilities`](Self::capabilities).
            pub fn with_capabilities(mut self, capabilities: $crate::__private::JsonValue) -> Self {
                self.capabilities = capabilities;
                self
            }

            /// Sets [`input_handler`](Self::input_handler).
            pub fn with_input_handler(
                mut self,
                handler: ::std::sync::Arc<dyn $crate::__private::InputHandler>,
            ) -> Self {
                self.input_handler = handler;
                self
            }

            /// Sets [`max_event_bytes`](Self::max_event_bytes).
            pub fn with_max_event_bytes(mut self, bytes: usize) -> Self {
                self.max_event_bytes = bytes;
                self
            }

            /// Sets the default request deadline
            /// ([`ClientHttp::request_timeout`]($crate::config::ClientHttp::request_timeout)).
            pub fn with_request_timeout(
                mut self,
                timeout: ::std::option::Option<::std::time::Duration>,
            ) -> Self {
                self.http = self.http.with_request_timeout(timeout);
                self
            }

            /// Sets a custom HTTP client
            /// ([`ClientHttp::http_client`]($crate::config::ClientHttp::http_client)).
            pub fn with_http_client(mut self, client: $crate::__private::HttpClient) -> Self {
                self.http = self.http.with_http_client(client);
                self
            }

            /// Adds a header sent on every request
            /// ([`ClientHttp::headers`]($crate::config::ClientHttp::headers)).
            pub fn with_header(
                mut self,
                name: $crate::__private::HeaderName,
                value: $crate::__private::HeaderValue,
            ) -> Self {
                self.http = self.http.with_header(name, value);
                self
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(headers: &[(&str, &str)]) -> Parts {
        let mut b = http::Request::builder().uri("/mcp");
        for (n, v) in headers {
            b = b.header(*n, *v);
        }
        b.body(()).unwrap().into_parts().0
    }

    #[test]
    fn origin_then_host() {
        let p = OriginPolicy::default();
        assert!(p.check(&parts(&[("host", "localhost:3000")])).is_ok());
        let e = p.check(&parts(&[])).unwrap_err();
        assert!(e.message.contains("names no Host"), "{}", e.message);
        let e = p.check(&parts(&[("host", "evil.example")])).unwrap_err();
        assert_eq!(e.status, StatusCode::FORBIDDEN);
        assert!(e.message.contains("Host \"evil.example\""), "{}", e.message);
        let e = p
            .check(&parts(&[
                ("host", "localhost"),
                ("origin", "http://evil.example"),
            ]))
            .unwrap_err();
        assert_eq!(e.status, StatusCode::FORBIDDEN);
        assert!(e.message.contains("Origin"), "{}", e.message);
        let mut twice = parts(&[("host", "localhost"), ("host", "evil.example")]);
        let e = p.check(&twice).unwrap_err();
        assert_eq!(e.status, StatusCode::FORBIDDEN);
        assert!(e.message.contains("more than one Host"), "{}", e.message);
        twice = parts(&[
            ("host", "localhost"),
            ("origin", "http://localhost"),
            ("origin", "http://evil.example"),
        ]);
        let e = p.check(&twice).unwrap_err();
        assert!(e.message.contains("more than one Origin"), "{}", e.message);
        let absolute = http::Request::post("http://evil.example/mcp")
            .header("host", "localhost")
            .body(())
            .unwrap()
            .into_parts()
            .0;
        let e = p.check(&absolute).unwrap_err();
        assert!(e.message.contains("evil.example"), "{}", e.message);
        let open = ServerHttp::default().with_allowed_hosts(Some(vec!["mcp.example.com".into()]));
        assert!(
            open.origins
                .check(&parts(&[("host", "mcp.example.com")]))
                .is_ok()
        );
    }

    #[test]
    fn the_defaults_are_4_mib_and_5_minutes() {
        assert_eq!(DEFAULT_MAX_BODY_BYTES, 4_194_304);
        assert_eq!(DEFAULT_REQUEST_TIMEOUT, Duration::from_secs(300));
        assert_eq!(ServerHttp::default().max_body_bytes, DEFAULT_MAX_BODY_BYTES);
        let c = ClientHttp::new("http://127.0.0.1:1/mcp");
        assert_eq!(c.request_timeout, Some(DEFAULT_REQUEST_TIMEOUT));
        assert!(c.http_client.is_none() && c.headers.is_empty());
    }

    /// Each setter sets its own field and keeps the settings made before
    /// it; `with_header` appends (two values of a name are both sent).
    #[test]
    fn each_setter_sets_its_field() {
        let server = ServerHttp::default()
            .with_allowed_hosts(Some(vec!["h".into()]))
            .with_allowed_origins(Some(vec!["https://o".into()]))
            .with_max_body_bytes(10);
        assert_eq!(server.origins.allowed_hosts, Some(vec!["h".to_owned()]));
        assert_eq!(
            server.origins.allowed_origins,
            Some(vec!["https://o".to_owned()])
        );
        assert_eq!(server.max_body_bytes, 10);
        let x = HeaderName::from_static("x-a");
        let client = ClientHttp::new("http://127.0.0.1:1/mcp")
            .with_request_timeout(None)
            .with_header(x.clone(), HeaderValue::from_static("1"))
            .with_header(x.clone(), HeaderValue::from_static("2"));
        assert_eq!(client.url, "http://127.0.0.1:1/mcp");
        assert_eq!(client.request_timeout, None);
        assert_eq!(client.headers.get_all(&x).iter().count(), 2);
        let custom = ClientHttp::new("http://127.0.0.1:1/mcp")
            .with_request_timeout(Some(Duration::from_secs(1)))
            .with_http_client(reqwest::Client::new());
        assert!(custom.http_client.is_some());
        assert_eq!(custom.request_timeout, Some(Duration::from_secs(1)));
    }

    /// The head of one request `client` sends to a loopback listener.
    async fn head_sent_by(client: reqwest::Client) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let (mut conn, _) = listener.accept().await.unwrap();
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = conn.read(&mut buf).await.unwrap();
                assert!(n > 0, "the connection closed before the head ended");
                head.extend_from_slice(&buf[..n]);
            }
            conn.write_all(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n")
                .await
                .unwrap();
            String::from_utf8(head).unwrap().to_ascii_lowercase()
        });
        let response = client.get(url).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::NO_CONTENT);
        server.await.unwrap()
    }

    /// The built client sends `headers` on every request; a custom client
    /// is used as it is (its own default headers sent); both at once is a
    /// configuration error, since the built client's headers would be lost.
    #[tokio::test]
    async fn headers_go_on_the_built_client_or_the_custom_one() {
        let url = "http://127.0.0.1:1/mcp";
        let auth = HeaderValue::from_static("Bearer t-1");
        let built = ClientHttp::new(url)
            .with_header(http::header::AUTHORIZATION, auth.clone())
            .client()
            .unwrap();
        let head = head_sent_by(built).await;
        assert!(head.contains("authorization: bearer t-1"), "{head}");

        let mut defaults = HeaderMap::new();
        defaults.insert("x-custom", HeaderValue::from_static("c-1"));
        let custom = reqwest::Client::builder()
            .default_headers(defaults)
            .build()
            .unwrap();
        let used = ClientHttp::new(url).with_http_client(custom.clone());
        let head = head_sent_by(used.client().unwrap()).await;
        assert!(head.contains("x-custom: c-1"), "{head}");

        let both = used.with_header(http::header::AUTHORIZATION, auth);
        let err = both.client().unwrap_err();
        assert!(
            matches!(
                err,
                TransportError::Config(ConfigError::Conflict {
                    settings: "ClientHttp::http_client and ClientHttp::headers",
                    ..
                })
            ),
            "{err:?}"
        );
    }

    /// `Debug` shows the settings and the header names, never a header's
    /// value (an `Authorization` token).
    #[test]
    fn a_client_config_shows_header_names_not_values() {
        let c = ClientHttp::new("http://127.0.0.1:1/mcp")
            .with_header(
                http::header::AUTHORIZATION,
                HeaderValue::from_static("Bearer secret-token"),
            )
            .with_http_client(reqwest::Client::new());
        let shown = format!("{c:?}");
        for part in [
            "ClientHttp",
            "http://127.0.0.1:1/mcp",
            "request_timeout: Some(300s)",
            "custom_http_client: true",
            "\"authorization\"",
        ] {
            assert!(shown.contains(part), "{part} in {shown}");
        }
        assert!(!shown.contains("secret"), "{shown}");
    }

    #[test]
    fn client_urls_must_parse_and_be_http() {
        let ok = ClientHttp::new("https://mcp.example.com/mcp");
        assert_eq!(
            ok.parse_url("MCP endpoint URL").unwrap().host_str(),
            Some("mcp.example.com")
        );
        for (url, reason) in [
            ("not a url", "relative URL"),
            ("ftp://x/mcp", "not an http(s) URL"),
        ] {
            let err = ClientHttp::new(url)
                .parse_url("MCP endpoint URL")
                .unwrap_err();
            let TransportError::Config(ConfigError::InvalidUrl {
                what,
                url: got,
                reason: why,
            }) = &err
            else {
                panic!("{err:?}");
            };
            assert_eq!((*what, got.as_str()), ("MCP endpoint URL", url));
            assert!(why.contains(reason), "{why}");
        }
    }
}
