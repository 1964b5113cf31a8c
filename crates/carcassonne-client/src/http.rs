//! The HTTP side of the server: one HTTP/1.1 exchange per call over `http://` or `https://`
//! (rustls), with the account session as a bearer token; `POST /api/matches` and plain GETs such
//! as `/healthz`.

use crate::{ClientError, Tls};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::{AUTHORIZATION, CONNECTION, CONTENT_TYPE, HOST};
use hyper::{Method, Request, Uri};
use hyper_util::rt::TokioIo;
use protocol::{CreateMatch, ErrorBody, MatchCreated};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Creates a match on the server at `base_http_url` (for example `http://127.0.0.1:8080`) and
/// returns its id and one token per seat.
///
/// ```no_run
/// # async fn f() -> Result<(), carcassonne_client::ClientError> {
/// use carcassonne_client::{protocol::CreateMatch, rules::Colour};
/// let request = CreateMatch {
///     players: vec![Colour::Red, Colour::Blue],
///     modules: Default::default(),
///     meeples: None,
///     draw_order: None,
///     clock: None,
/// };
/// let created = carcassonne_client::create_match("http://127.0.0.1:8080", &request).await?;
/// println!("match {} with {} seat tokens", created.match_id, created.seats.len());
/// # Ok(()) }
/// ```
pub async fn create_match(
    base_http_url: &str,
    request: &CreateMatch,
) -> Result<MatchCreated, ClientError> {
    let call = Call {
        base: base_http_url,
        tls: &Tls::default(),
        bearer: None,
    };
    call.json(Method::POST, "/api/matches", Some(request)).await
}

/// `GET url`, returning the status and the body as text whatever the status (for `/healthz` and
/// tests of error statuses).
///
/// ```no_run
/// # async fn f() -> Result<(), carcassonne_client::ClientError> {
/// let (status, body) = carcassonne_client::http_get("http://127.0.0.1:8080/healthz").await?;
/// assert_eq!((status, body.as_str()), (200, "ok"));
/// # Ok(()) }
/// ```
pub async fn http_get(url: &str) -> Result<(u16, String), ClientError> {
    let (status, bytes) = exchange(&Tls::default(), Method::GET, url, None, None).await?;
    Ok((status, String::from_utf8_lossy(&bytes).into_owned()))
}

/// One server's REST API, as one caller: the base URL, whom to trust, and the session.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Call<'a> {
    pub base: &'a str,
    pub tls: &'a Tls,
    pub bearer: Option<&'a str>,
}

impl Call<'_> {
    /// Sends `body` as JSON (none: an empty body) and decodes a 2xx answer as `T`. A refusal
    /// with the server's error body is [`ClientError::Api`]; any other is
    /// [`ClientError::HttpStatus`].
    pub async fn json<T: DeserializeOwned>(
        self,
        method: Method,
        path: &str,
        body: Option<&(impl Serialize + ?Sized)>,
    ) -> Result<T, ClientError> {
        let bytes = self.call(method, path, body).await?;
        serde_json::from_slice(&bytes).map_err(|source| ClientError::Decode {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            source,
        })
    }

    /// Like [`Call::json`], for an answer whose body does not matter; returns it raw (empty for
    /// a 204).
    pub async fn call(
        self,
        method: Method,
        path: &str,
        body: Option<&(impl Serialize + ?Sized)>,
    ) -> Result<Bytes, ClientError> {
        let body = body
            .map(serde_json::to_vec)
            .transpose()
            .map_err(ClientError::Encode)?;
        let url = format!("{}{path}", self.base.trim_end_matches('/'));
        let (status, bytes) = exchange(self.tls, method, &url, self.bearer, body).await?;
        if (200..300).contains(&status) {
            return Ok(bytes);
        }
        Err(match serde_json::from_slice::<ErrorBody>(&bytes) {
            Ok(error) => ClientError::Api {
                status,
                error: Box::new(error),
            },
            Err(_) => ClientError::HttpStatus {
                status,
                body: String::from_utf8_lossy(&bytes).into_owned(),
            },
        })
    }
}

/// One request on a connection of its own (`Connection: close`): calls are rare next to the
/// WebSocket traffic, and no pool outlives them.
async fn exchange(
    tls: &Tls,
    method: Method,
    url: &str,
    bearer: Option<&str>,
    body: Option<Vec<u8>>,
) -> Result<(u16, Bytes), ClientError> {
    let uri: Uri = url.parse().map_err(|e| bad_url(url, e))?;
    let secure = match uri.scheme_str() {
        Some("http") => false,
        Some("https") => true,
        _ => return Err(bad_url(url, "not an http:// or https:// URL")),
    };
    let authority = uri
        .authority()
        .ok_or_else(|| bad_url(url, "no host"))?
        .clone();
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']');
    let port = authority
        .port_u16()
        .unwrap_or(if secure { 443 } else { 80 });
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header(HOST, authority.as_str())
        .header(CONNECTION, "close");
    if body.is_some() {
        req = req.header(CONTENT_TYPE, "application/json");
    }
    if let Some(token) = bearer {
        req = req.header(AUTHORIZATION, format!("Bearer {token}"));
    }
    let req = req
        .body(Full::new(Bytes::from(body.unwrap_or_default())))
        .map_err(|e| bad_url(url, e))?;
    let tcp = tokio::net::TcpStream::connect((host, port))
        .await
        .map_err(ClientError::Connect)?;
    tcp.set_nodelay(true).map_err(ClientError::Connect)?;
    if secure {
        let stream = tls.wrap(host, tcp).await?;
        send(TokioIo::new(stream), req).await
    } else {
        send(TokioIo::new(tcp), req).await
    }
}

async fn send<IO>(io: IO, req: Request<Full<Bytes>>) -> Result<(u16, Bytes), ClientError>
where
    IO: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(ClientError::Http)?;
    // The connection is driven beside the request; it ends with the response or the drop.
    let driver = tokio::spawn(conn);
    let result = async {
        let response = sender.send_request(req).await.map_err(ClientError::Http)?;
        let status = response.status().as_u16();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(ClientError::HttpBody)?
            .to_bytes();
        Ok((status, bytes))
    }
    .await;
    driver.abort();
    result
}

pub(crate) fn bad_url(url: &str, e: impl std::fmt::Display) -> ClientError {
    ClientError::BadUrl {
        url: url.to_owned(),
        reason: e.to_string(),
    }
}
