//! TLS for `wss://` and `https://`: rustls with the ring provider, trusting the Mozilla roots
//! (`webpki-roots`) and any extra certificate authority the caller names. No OpenSSL.

use crate::ClientError;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use std::sync::Arc;

/// Which servers a client trusts over TLS.
///
/// [`Tls::default`] trusts the Mozilla root store: what a server with a certificate from a
/// public authority needs. A server with a certificate of its own authority (a test, a LAN
/// party) needs that authority too: [`Tls::with_ca_pem`].
///
/// ```
/// use carcassonne_client::Tls;
/// let tls = Tls::default();
/// // Or, for a server whose certificate comes from a private authority:
/// let pem = b"-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n";
/// assert!(Tls::with_ca_pem(pem).is_err());
/// # drop(tls);
/// ```
#[derive(Debug, Clone)]
pub struct Tls {
    config: Arc<rustls::ClientConfig>,
}

impl Default for Tls {
    fn default() -> Self {
        Tls::from_roots(webpki_roots())
    }
}

impl Tls {
    /// The Mozilla roots and every certificate in `pem` (one or more `BEGIN CERTIFICATE`
    /// blocks). Fails with [`ClientError::TlsSetup`] when `pem` holds no certificate or one that
    /// does not parse.
    pub fn with_ca_pem(pem: &[u8]) -> Result<Tls, ClientError> {
        let mut roots = webpki_roots();
        let mut added = 0;
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| ClientError::TlsSetup(e.to_string()))?;
            roots
                .add(cert)
                .map_err(|e| ClientError::TlsSetup(e.to_string()))?;
            added += 1;
        }
        if added == 0 {
            return Err(ClientError::TlsSetup("no certificate in the PEM".into()));
        }
        Ok(Tls::from_roots(roots))
    }

    /// A rustls configuration built elsewhere (client certificates, other roots).
    ///
    /// ```
    /// use carcassonne_client::Tls;
    /// // The default configuration, with ALPN set, say.
    /// let mut config = (*Tls::default().config()).clone();
    /// config.alpn_protocols = vec![b"http/1.1".to_vec()];
    /// let tls = Tls::from_config(std::sync::Arc::new(config));
    /// assert_eq!(tls.config().alpn_protocols.len(), 1);
    /// ```
    pub fn from_config(config: Arc<rustls::ClientConfig>) -> Tls {
        Tls { config }
    }

    /// The rustls configuration (for a connector of one's own).
    pub fn config(&self) -> Arc<rustls::ClientConfig> {
        Arc::clone(&self.config)
    }

    // ring, as sqlx's TLS: no C toolchain for aws-lc in the build. rustls marks ring's provider
    // deprecated for its lack of post-quantum key exchange; the classic groups stay secure.
    #[allow(deprecated)]
    fn from_roots(roots: rustls::RootCertStore) -> Tls {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        // The ring provider supports the safe default versions, so this cannot fail; should it,
        // the process-wide default (also ring: the only provider compiled in) takes over.
        let config = match rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
        {
            Ok(b) => b.with_root_certificates(roots).with_no_client_auth(),
            Err(_) => rustls::ClientConfig::builder()
                .with_root_certificates(roots)
                .with_no_client_auth(),
        };
        Tls {
            config: Arc::new(config),
        }
    }

    /// One [`Tls::default`] for the whole process (the root store is built once).
    pub(crate) fn shared_default() -> &'static Tls {
        static DEFAULT: std::sync::OnceLock<Tls> = std::sync::OnceLock::new();
        DEFAULT.get_or_init(Tls::default)
    }

    pub(crate) fn connector(&self) -> tokio_tungstenite::Connector {
        tokio_tungstenite::Connector::Rustls(self.config())
    }

    /// Opens TLS over `tcp` to `host` (the name the certificate must carry).
    pub(crate) async fn wrap(
        &self,
        host: &str,
        tcp: tokio::net::TcpStream,
    ) -> Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>, ClientError> {
        let name = rustls::pki_types::ServerName::try_from(host.to_owned())
            .map_err(|e| ClientError::TlsSetup(format!("`{host}`: {e}")))?;
        tokio_rustls::TlsConnector::from(self.config())
            .connect(name, tcp)
            .await
            .map_err(ClientError::Connect)
    }
}

fn webpki_roots() -> rustls::RootCertStore {
    rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    }
}
