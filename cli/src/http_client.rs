//! The HTTP client options `call` and `check-server` share: headers sent
//! on every request (authentication) and certificates to trust for https
//! servers (TLS is rustls with the platform's roots).

use std::path::PathBuf;

use clap::Args;
use http::{HeaderMap, HeaderName, HeaderValue};

/// `--header` and `--ca-cert`.
#[derive(Args, Debug, Clone, Default)]
pub struct HttpClientArgs {
    /// A header sent on every request, resumes and DELETE included, as
    /// `NAME:VALUE` (repeatable), e.g. `--header "Authorization: Bearer T"`.
    #[arg(long = "header", value_name = "NAME:VALUE")]
    pub headers: Vec<String>,
    /// A PEM file of certificates to trust besides the platform's roots
    /// (repeatable): an https server with a private CA or a self-signed
    /// certificate.
    #[arg(long = "ca-cert", value_name = "FILE")]
    pub ca_certs: Vec<PathBuf>,
}

/// Parses `NAME:VALUE` (spaces around either part are dropped).
pub fn parse_header(text: &str) -> Result<(HeaderName, HeaderValue), String> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| format!("--header {text:?}: expected NAME:VALUE"))?;
    let name = HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|e| format!("--header {text:?}: bad header name: {e}"))?;
    let value = HeaderValue::from_str(value.trim())
        .map_err(|e| format!("--header {text:?}: bad header value: {e}"))?;
    Ok((name, value))
}

impl HttpClientArgs {
    /// The HTTP client these options mean: `TCP_NODELAY` (SSE events are
    /// small writes), the headers as default headers, the extra roots.
    pub fn client(&self) -> Result<reqwest::Client, String> {
        let mut headers = HeaderMap::new();
        for h in &self.headers {
            let (name, value) = parse_header(h)?;
            headers.append(name, value);
        }
        let mut builder = reqwest::Client::builder()
            .tcp_nodelay(true)
            .default_headers(headers);
        for path in &self.ca_certs {
            let pem =
                std::fs::read(path).map_err(|e| format!("--ca-cert {}: {e}", path.display()))?;
            let certs = reqwest::Certificate::from_pem_bundle(&pem)
                .map_err(|e| format!("--ca-cert {}: not PEM certificates: {e}", path.display()))?;
            if certs.is_empty() {
                return Err(format!(
                    "--ca-cert {}: no certificate in it",
                    path.display()
                ));
            }
            for cert in certs {
                builder = builder.add_root_certificate(cert);
            }
        }
        builder
            .build()
            .map_err(|e| format!("building the HTTP client: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_parsing() {
        let (n, v) = parse_header("Authorization: Bearer a:b").unwrap();
        assert_eq!(n, "authorization");
        assert_eq!(v, "Bearer a:b");
        assert!(parse_header("no-colon").unwrap_err().contains("NAME:VALUE"));
        assert!(
            parse_header("bad name: x")
                .unwrap_err()
                .contains("bad header name")
        );
        assert!(
            parse_header("x: \u{7f}")
                .unwrap_err()
                .contains("bad header value")
        );
    }

    #[test]
    fn a_file_without_certificates_is_refused() {
        let dir = std::env::temp_dir().join(format!("mcp-compat-ca-{}", std::process::id()));
        std::fs::write(&dir, "not a certificate").unwrap();
        let args = HttpClientArgs {
            headers: vec![],
            ca_certs: vec![dir.clone()],
        };
        let err = args.client().unwrap_err();
        let _ = std::fs::remove_file(&dir);
        assert!(err.contains("--ca-cert"), "{err}");
    }
}
