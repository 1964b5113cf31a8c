//! The browser client, served by the server itself: the page and its ES modules (from `web/`,
//! compiled into the binary so that running the server needs nothing else), the admin console
//! (`/admin`; the page itself holds no secret, its API calls carry the token), and `GET /api/tiles`,
//! the tile catalogue as JSON so the page draws every tile from the rules crate's data. Each file
//! goes out with an `ETag` and compressed as the client accepts (`web_encoding`).

use crate::web_encoding::Encoded;
use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rules::geometry::{Half, Side};
use rules::{Edge, FeatureKind, catalogue};
use serde_json::{Value, json};
use std::sync::{LazyLock, OnceLock};

/// One embedded file of `web/`.
#[derive(Debug)]
pub struct Asset {
    /// Path under `web/`, as served under `/web/`.
    pub path: &'static str,
    pub bytes: &'static [u8],
}

macro_rules! assets {
    ($($path:literal),* $(,)?) => {
        /// Every file the page loads. `tests/web_assets.rs` fails when a file in `web/` (other than
        /// dev tooling) is missing here, so the list cannot drift from the folder.
        pub const ASSETS: &[Asset] = &[
            $(Asset { path: $path, bytes: include_bytes!(concat!("../../../web/", $path)) },)*
        ];
    };
}

assets!(
    "index.html",
    "style.css",
    "admin.html",
    "admin.css",
    "ratings.html",
    "replay.html",
    "records.css",
    "favicon.svg",
    "js/account.js",
    "js/admin.js",
    "js/app.js",
    "js/board.js",
    "js/chat.js",
    "js/clocks.js",
    "js/conn.js",
    "js/end.js",
    "js/figures.js",
    "js/lobby.js",
    "js/log.js",
    "js/map.js",
    "js/messages.js",
    "js/moderation.js",
    "js/notify.js",
    "js/patch.js",
    "js/ratings.js",
    "js/replay.js",
    "js/stepper.js",
    "js/tiles.js",
    "js/words.js",
);

/// The Content-Security-Policy of the pages and their files: scripts, styles and connections
/// only from the server itself (no inline script or `style` attribute, no `eval`), images also as
/// `data:` URLs, never framed (no clickjacking of a seat), no `<base>` rewriting, forms posting
/// only here. The WebSocket is `connect-src 'self'` (CSP 3 lets `'self'` match `ws:`/`wss:` to
/// the page's own host).
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
    style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; \
    base-uri 'none'; form-action 'self'";

/// The pages of the browser client (not part of the API document). Stateless: merged into the
/// main router. Every answer, a 404 of a missing file included, carries [`page_headers`].
pub fn router() -> Router {
    Router::new()
        .route("/", get(index))
        .route("/watch/{id}", get(index))
        // The admin console; the page asks for the admin token and sends it to `/api/admin`.
        .route("/admin", get(admin))
        // The leaderboard and profiles, and a finished match's replay: public pages whose API
        // calls decide what the reader may see.
        .route("/ratings", get(ratings))
        .route("/replay", get(replay))
        .route("/web/{*path}", get(asset))
        .layer(axum::middleware::map_response(page_headers))
}

/// The browser-facing defences of a page or one of its files: the [`CONTENT_SECURITY_POLICY`],
/// no framing for browsers that predate `frame-ancestors` (`X-Frame-Options`), no referrer sent
/// from the pages (a watch link's path names a match), no MIME sniffing.
async fn page_headers(mut res: Response) -> Response {
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    res
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

/// Every file of [`ASSETS`] as served (same order), hashed and compressed at first use.
static ENCODED: LazyLock<Vec<Encoded>> = LazyLock::new(|| {
    ASSETS
        .iter()
        .map(|a| Encoded::new(a.bytes, content_type(a.path)))
        .collect()
});

/// Hashes and compresses every file now (brotli at its best level takes a second or so for the
/// whole client): the server binary calls it on a thread of its own at start, so that no request
/// waits for it.
pub fn warm() {
    LazyLock::force(&ENCODED);
}

fn serve(path: &str, request: &HeaderMap) -> Response {
    match ASSETS.iter().position(|a| a.path == path) {
        Some(i) => ENCODED[i].respond(request),
        None => (StatusCode::NOT_FOUND, "no such file").into_response(),
    }
}

async fn index(request: HeaderMap) -> Response {
    serve("index.html", &request)
}

async fn admin(request: HeaderMap) -> Response {
    serve("admin.html", &request)
}

async fn ratings(request: HeaderMap) -> Response {
    serve("ratings.html", &request)
}

async fn replay(request: HeaderMap) -> Response {
    serve("replay.html", &request)
}

async fn asset(Path(path): Path<String>, request: HeaderMap) -> Response {
    serve(&path, &request)
}

/// The tile catalogue's body in the API's document: a named stand-in for the `TileCatalogue`
/// component, whose schema the document writes by hand.
#[derive(Debug)]
pub struct TileCatalogueDoc;

impl utoipa::PartialSchema for TileCatalogueDoc {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new().into()
    }
}

impl utoipa::ToSchema for TileCatalogueDoc {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("TileCatalogue")
    }
}

/// `GET /api/tiles`, registered with the API's routes (`http::api_routes`) so it is documented.
#[utoipa::path(
    get, path = "/api/tiles", tag = "server",
    responses((status = 200, description = "The tile catalogue", body = TileCatalogueDoc)),
)]
pub(crate) async fn tiles() -> Response {
    static JSON: OnceLock<String> = OnceLock::new();
    let body = JSON.get_or_init(|| tiles_json().to_string());
    ([(header::CONTENT_TYPE, "application/json")], body.as_str()).into_response()
}

fn edge_letter(e: Edge) -> &'static str {
    match e {
        Edge::Field => "F",
        Edge::Road => "R",
        Edge::City => "C",
    }
}

fn sides(bits: u8) -> Vec<String> {
    Side::ALL
        .iter()
        .filter(|s| bits & (1 << s.index()) != 0)
        .map(|s| format!("{s:?}"))
        .collect()
}

fn halves(bits: u8) -> Vec<String> {
    Half::ALL
        .iter()
        .filter(|h| bits & (1 << h.index()) != 0)
        .map(|h| format!("{h:?}"))
        .collect()
}

fn to_json<T: serde::Serialize>(v: T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// The catalogue as the page needs it: every design at rotation 0 with its edges, segments (sides
/// for roads and cities, halves for fields, in the wire's names; a road's `inn`, a city's
/// `cathedral` and `goods` when it shows them), pictures (`roads` when one stands beside two road
/// segments) and inns (`field`, `roads`; left out when none). Built from the public `rules` API so
/// that the rules crate stays the one source of tile data.
pub fn tiles_json() -> Value {
    let cat = catalogue();
    let tiles: Vec<Value> = cat
        .tiles
        .iter()
        .map(|t| {
            let segments: Vec<Value> = t
                .segments
                .iter()
                .map(|s| {
                    let mut o = json!({ "kind": to_json(s.kind) });
                    match s.kind {
                        FeatureKind::Road => {
                            o["sides"] = json!(sides(s.sides));
                            if let Some(end) = s.end {
                                o["end"] = to_json(end);
                            }
                            if s.inn {
                                o["inn"] = json!(true);
                            }
                        }
                        FeatureKind::City => {
                            o["sides"] = json!(sides(s.sides));
                            o["coat"] = json!(s.coat);
                            if s.cathedral {
                                o["cathedral"] = json!(true);
                            }
                            if let Some(goods) = s.goods {
                                o["goods"] = to_json(goods);
                            }
                        }
                        FeatureKind::Field => {
                            o["halves"] = json!(halves(s.halves));
                            o["touches"] = json!(s.touches);
                        }
                        FeatureKind::Monastery => {}
                    }
                    o
                })
                .collect();
            let pictures: Vec<Value> = t
                .pictures
                .iter()
                .map(|p| {
                    let mut o =
                        json!({ "kind": to_json(p.kind), "field": p.field, "road": p.road });
                    // A picture beside two road segments of its tile (I3, R3) names both.
                    if p.roads.len() > 1 {
                        o["roads"] = json!(p.roads);
                    }
                    o
                })
                .collect();
            let inns: Vec<Value> = t
                .inns
                .iter()
                .map(|i| json!({ "field": i.field, "roads": i.roads }))
                .collect();
            let mut o = json!({
                "id": t.id,
                "letter": t.letter,
                "set": t.set,
                "count": t.count,
                "edges": t.edges.iter().map(|e| edge_letter(*e)).collect::<Vec<_>>(),
                "village": t.village,
                "crossroads": t.is_crossroads(),
                "segments": segments,
                "pictures": pictures,
            });
            if !inns.is_empty() {
                o["inns"] = json!(inns);
            }
            o
        })
        .collect();
    json!({ "start": cat.get(cat.start).id, "tiles": tiles })
}
