//! The HTTP side of the server: `POST /api/matches` and plain GETs such as `/healthz`.

use crate::ClientError;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::CONTENT_TYPE;
use hyper::{Request, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use protocol::{CreateMatch, MatchCreated};

/// Creates a match on the server at `base_http_url` (for example `http://127.0.0.1:8080`) and
/// returns its id and one token per seat.
pub async fn create_match(
    base_http_url: &str,
    request: &CreateMatch,
) -> Result<MatchCreated, ClientError> {
    let body = serde_json::to_vec(request).map_err(ClientError::Encode)?;
    let uri = endpoint(base_http_url, "/api/matches")?;
    let req = Request::post(uri.clone())
        .header(CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| bad_url(&uri.to_string(), e))?;
    let (status, bytes) = send(req).await?;
    if !(200..300).contains(&status) {
        return Err(ClientError::HttpStatus {
            status,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        });
    }
    serde_json::from_slice(&bytes).map_err(|source| ClientError::Decode {
        text: String::from_utf8_lossy(&bytes).into_owned(),
        source,
    })
}

/// `GET url`, returning the status and the body as text whatever the status (for `/healthz` and
/// tests of error statuses).
pub async fn http_get(url: &str) -> Result<(u16, String), ClientError> {
    let uri: Uri = url.parse().map_err(|e| bad_url(url, e))?;
    let req = Request::get(uri)
        .body(Full::new(Bytes::new()))
        .map_err(|e| bad_url(url, e))?;
    let (status, bytes) = send(req).await?;
    Ok((status, String::from_utf8_lossy(&bytes).into_owned()))
}

fn endpoint(base: &str, path: &str) -> Result<Uri, ClientError> {
    let url = format!("{}{path}", base.trim_end_matches('/'));
    url.parse().map_err(|e| bad_url(&url, e))
}

fn bad_url(url: &str, e: impl std::fmt::Display) -> ClientError {
    ClientError::BadUrl {
        url: url.to_owned(),
        reason: e.to_string(),
    }
}

async fn send(req: Request<Full<Bytes>>) -> Result<(u16, Bytes), ClientError> {
    // One client per call: matches are created rarely, and no pool outlives the call.
    let client = Client::builder(TokioExecutor::new()).build_http();
    let response = client.request(req).await.map_err(ClientError::Http)?;
    let status = response.status().as_u16();
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(ClientError::HttpBody)?
        .to_bytes();
    Ok((status, bytes))
}
