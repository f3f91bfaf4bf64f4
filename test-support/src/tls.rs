//! [`TlsServer`]: any axum router served over HTTPS on 127.0.0.1:0, with a
//! self-signed certificate for `127.0.0.1` and `localhost` made when it
//! starts (rcgen), for the clients' and the binary's TLS tests.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::crypto::aws_lc_rs;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// An HTTPS server; stopped on drop.
pub struct TlsServer {
    addr: SocketAddr,
    /// The self-signed certificate, PEM: the one root a client must trust.
    pub cert_pem: String,
    task: JoinHandle<()>,
}

impl TlsServer {
    /// Serves `app` over TLS (HTTP/1.1) on 127.0.0.1:0.
    pub async fn serve(app: Router) -> TlsServer {
        let made = rcgen::generate_simple_self_signed(vec![
            "127.0.0.1".to_owned(),
            "localhost".to_owned(),
        ])
        .expect("a self-signed certificate");
        let cert = CertificateDer::from(made.cert.der().to_vec());
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(made.signing_key.serialize_der()));
        let mut config =
            ServerConfig::builder_with_provider(Arc::new(aws_lc_rs::default_provider()))
                .with_safe_default_protocol_versions()
                .expect("TLS versions")
                .with_no_client_auth()
                .with_single_cert(vec![cert], key)
                .expect("the certificate and key");
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                let app = app.clone();
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tls), TowerToHyperService::new(app))
                        .await;
                });
            }
        });
        TlsServer {
            addr,
            cert_pem: made.cert.pem(),
            task,
        }
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `https://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.addr)
    }

    /// A reqwest client that trusts this server's certificate (and only
    /// the platform's roots besides).
    pub fn client(&self) -> reqwest::Client {
        self.client_builder().build().expect("a reqwest client")
    }

    /// A reqwest builder that trusts this server's certificate, to add
    /// more (default headers, …) before building.
    pub fn client_builder(&self) -> reqwest::ClientBuilder {
        let root = reqwest::Certificate::from_pem(self.cert_pem.as_bytes()).expect("PEM");
        reqwest::Client::builder().add_root_certificate(root)
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}
