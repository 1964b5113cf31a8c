//! The WebSocket handshake (RFC 6455, section 4.2) of `GET /ws`, answered here rather than by
//! axum's extractor: axum's spawns a task of its own for the upgraded connection, which holds
//! the connection's future beside its own state for the connection's life. Here the handler
//! spawns the connection's future itself ([`crate::conn::serve`]), so that one task, sized for
//! the connection's loop, is all an open connection keeps of its upgrade.

use super::error::ApiError;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Version, header};
use axum::response::Response;
use hyper::upgrade::OnUpgrade;
use protocol::ErrorCode;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

/// A valid upgrade request: its key, and the upgrade hyper completes once the 101 is sent.
#[derive(Debug)]
pub struct WsUpgrade {
    key: HeaderValue,
    on_upgrade: OnUpgrade,
}

impl<S: Send + Sync> FromRequestParts<S> for WsUpgrade {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        let refuse = |status, why: &str| {
            ApiError::new(
                status,
                ErrorCode::Malformed,
                format!("not a WebSocket upgrade: {why}"),
            )
        };
        if parts.method != Method::GET {
            return Err(refuse(
                StatusCode::METHOD_NOT_ALLOWED,
                "the upgrade is a GET",
            ));
        }
        if parts.version != Version::HTTP_11 {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                "the upgrade needs HTTP/1.1",
            ));
        }
        let headers = &parts.headers;
        if !has_token(headers, header::CONNECTION, "upgrade") {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                "`Connection` must include `upgrade`",
            ));
        }
        if !has_token(headers, header::UPGRADE, "websocket") {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                "`Upgrade` must be `websocket`",
            ));
        }
        if headers
            .get(header::SEC_WEBSOCKET_VERSION)
            .is_none_or(|v| v.as_bytes() != b"13")
        {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                "`Sec-WebSocket-Version` must be 13",
            ));
        }
        let Some(key) = headers.get(header::SEC_WEBSOCKET_KEY).cloned() else {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                "`Sec-WebSocket-Key` is missing",
            ));
        };
        let Some(on_upgrade) = parts.extensions.remove::<OnUpgrade>() else {
            return Err(refuse(
                StatusCode::UPGRADE_REQUIRED,
                "this connection cannot be upgraded",
            ));
        };
        Ok(WsUpgrade { key, on_upgrade })
    }
}

impl WsUpgrade {
    /// The 101 answer, and the upgrade that completes once hyper has sent it.
    pub fn accept(self) -> (OnUpgrade, Response) {
        let accept = derive_accept_key(self.key.as_bytes());
        let mut response = Response::new(axum::body::Body::empty());
        *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
        let headers = response.headers_mut();
        headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        if let Ok(v) = HeaderValue::from_str(&accept) {
            headers.insert(header::SEC_WEBSOCKET_ACCEPT, v);
        }
        (self.on_upgrade, response)
    }
}

/// Whether one of the header's comma-separated values is `token` (in any case).
fn has_token(headers: &HeaderMap, name: header::HeaderName, token: &str) -> bool {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim().eq_ignore_ascii_case(token))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6455's example key and answer (section 1.3).
    #[test]
    fn the_answer_carries_the_rfc_accept_key() {
        let (_, response) = WsUpgrade {
            key: HeaderValue::from_static("dGhlIHNhbXBsZSBub25jZQ=="),
            on_upgrade: fake_upgrade(),
        }
        .accept();
        assert_eq!(response.status(), StatusCode::SWITCHING_PROTOCOLS);
        assert_eq!(
            response.headers()[header::SEC_WEBSOCKET_ACCEPT],
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }

    #[test]
    fn connection_tokens_are_read_from_lists_in_any_case() {
        let mut h = HeaderMap::new();
        h.append(
            header::CONNECTION,
            HeaderValue::from_static("keep-alive, Upgrade"),
        );
        assert!(has_token(&h, header::CONNECTION, "upgrade"));
        assert!(!has_token(&h, header::CONNECTION, "close"));
    }

    fn fake_upgrade() -> OnUpgrade {
        let mut req = axum::http::Request::new(());
        hyper::upgrade::on(&mut req)
    }
}
