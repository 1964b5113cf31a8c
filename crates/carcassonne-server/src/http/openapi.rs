//! The OpenAPI 3.1 document of the REST API, served at `GET /api/openapi.json` and checked in as
//! `proto/openapi.json`.
//!
//! One registration makes both the routes and the document: every API route is a handler with a
//! `#[utoipa::path]` annotation, added with `routes!(handler)` to a [`Routes`], which has no way
//! to add an undocumented route. The bodies are not described twice: the annotations name a
//! protocol type through a stand-in of [`bodies!`] (a `$ref` by the type's schemars name), and
//! [`document`] fills `components.schemas` with the schemas schemars generates from the protocol
//! types, the same ones as in `proto/*.schema.json` (JSON Schema 2020-12, which OpenAPI 3.1 uses).

use crate::state::Shared;
use axum::Router;
use schemars::generate::SchemaSettings;
use serde_json::{Value, json};
use std::borrow::Cow;
use std::sync::{Arc, OnceLock};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ObjectBuilder, RefOr, Schema};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouter};

/// The API's routes and their documentation, built together. Only [`Routes::routes`] adds a
/// route, from a `routes!(handler)` of annotated handlers (all of one path), so no route can be
/// served without being in the document.
pub struct Routes(OpenApiRouter<Arc<Shared>>);

impl std::fmt::Debug for Routes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routes")
            .field("paths", &self.0.get_openapi().paths.paths.keys())
            .finish()
    }
}

impl Default for Routes {
    fn default() -> Self {
        Self::new()
    }
}

impl Routes {
    pub fn new() -> Self {
        Routes(OpenApiRouter::new())
    }

    /// The handlers of one path (`routes!(a, b)` serves them all on each path they name).
    pub fn routes(self, handlers: UtoipaMethodRouter<Arc<Shared>>) -> Self {
        Routes(self.0.routes(handlers))
    }

    pub fn nest(self, prefix: &str, other: Routes) -> Self {
        Routes(self.0.nest(prefix, other.0))
    }

    pub fn merge(self, other: Routes) -> Self {
        Routes(self.0.merge(other.0))
    }

    /// The axum router and the document (before [`document`] completes it).
    pub fn split(self) -> (Router<Arc<Shared>>, utoipa::openapi::OpenApi) {
        OpenApiRouter::with_openapi(ApiDoc::openapi())
            .merge(self.0)
            .split_for_parts()
    }
}

/// A stand-in type per protocol type, for `body = …` in the annotations: its schema is a
/// `$ref` to the component named as schemars names the type, which [`document`] fills.
macro_rules! bodies {
    ($($doc:ident = $ty:ty),* $(,)?) => {
        $(
            #[doc = concat!("`", stringify!($ty), "` in the OpenAPI document.")]
            #[derive(Debug)]
            pub struct $doc;

            impl utoipa::PartialSchema for $doc {
                fn schema() -> RefOr<Schema> {
                    // Replaced by the schemars schema in `document`.
                    ObjectBuilder::new().into()
                }
            }

            impl utoipa::ToSchema for $doc {
                fn name() -> Cow<'static, str> {
                    <$ty as schemars::JsonSchema>::schema_name()
                }
            }
        )*

        /// The schemas of every body type, and of the types they use, as components.
        fn body_schemas() -> serde_json::Map<String, Value> {
            let mut generator = SchemaSettings::draft2020_12()
                .with(|s| s.definitions_path = "/components/schemas".into())
                .into_generator();
            $( generator.subschema_for::<$ty>(); )*
            generator.take_definitions(true)
        }
    };
}

bodies!(
    ErrorBodyDoc = protocol::ErrorBody,
    CreateMatchDoc = protocol::CreateMatch,
    MatchCreatedDoc = protocol::MatchCreated,
    NewGuestDoc = protocol::NewGuest,
    CredentialsDoc = protocol::Credentials,
    SessionCreatedDoc = protocol::SessionCreated,
    SessionInfoDoc = protocol::SessionInfo,
    AccountDoc = protocol::Account,
    WhoamiDoc = protocol::Whoami,
    MatchLogDoc = protocol::MatchLog,
    MatchChatDoc = protocol::MatchChat,
    MatchReplayDoc = protocol::MatchReplay,
    LeaderboardDoc = protocol::Leaderboard,
    PlayerProfileDoc = protocol::PlayerProfile,
    RecomputeReportDoc = protocol::RecomputeReport,
    SetWebhookDoc = protocol::SetWebhook,
    WebhookCreatedDoc = protocol::WebhookCreated,
    WebhookInfoDoc = protocol::WebhookInfo,
    CreateLobbyDoc = protocol::CreateLobby,
    JoinLobbyDoc = protocol::JoinLobby,
    PickColourDoc = protocol::PickColour,
    SetReadyDoc = protocol::SetReady,
    SeatChoiceDoc = protocol::SeatChoice,
    BotChoiceDoc = protocol::BotChoice,
    LobbyStateDoc = protocol::LobbyState,
    LobbyListDoc = protocol::LobbyList,
    LobbyStartedDoc = protocol::LobbyStarted,
    AdminMatchListDoc = protocol::admin::AdminMatchList,
    AdminMatchSummaryDoc = protocol::admin::AdminMatchSummary,
    AdminMatchLogDoc = protocol::admin::AdminMatchLog,
    AdminMatchChatDoc = protocol::admin::AdminMatchChat,
    AdminMatchStateDoc = protocol::admin::AdminMatchState,
    AdminMatchSecretsDoc = protocol::admin::AdminMatchSecrets,
    AwayRequestDoc = protocol::admin::AwayRequest,
    AdminRoleRequestDoc = protocol::admin::AdminRoleRequest,
    AdminActionListDoc = protocol::admin::AdminActionList,
    ScenarioDoc = rules::scenario::Scenario,
    MyMatchesDoc = protocol::MyMatches,
    PasswordChangeDoc = protocol::PasswordChange,
    AccountDeletionDoc = protocol::AccountDeletion,
    PasswordResetDoc = protocol::PasswordReset,
    AccountExportDoc = protocol::AccountExport,
    NewReportDoc = protocol::NewReport,
    ReportCreatedDoc = protocol::ReportCreated,
    SuspendRequestDoc = protocol::moderation::SuspendRequest,
    AccountStandingDoc = protocol::moderation::AccountStanding,
    ResetLinkDoc = protocol::moderation::ResetLink,
    ReportListDoc = protocol::moderation::ReportList,
    ResolveReportDoc = protocol::moderation::ResolveReport,
    ClientMessageDoc = protocol::ClientMessage,
    ServerMessageDoc = protocol::ServerMessage,
);

/// The components with no protocol type: answers the server builds as JSON by hand.
fn hand_schemas() -> [(&'static str, Value); 3] {
    [
        (
            "TileCatalogue",
            json!({
                "description": "Every tile design at rotation 0 (see proto/README.md, `The tile catalogue`).",
                "type": "object",
                "required": ["start", "tiles"],
                "properties": {
                    "start": {"type": "string", "description": "the start tile's id"},
                    "tiles": {"type": "array", "items": {
                        "type": "object",
                        "required": ["id", "letter", "set", "count", "edges", "segments"],
                        "properties": {
                            "id": {"type": "string"},
                            "letter": {"type": "string"},
                            "set": {"type": "string"},
                            "count": {"type": "integer", "minimum": 0},
                            "edges": {"type": "array", "items": {"enum": ["C", "R", "F"]}, "minItems": 4, "maxItems": 4},
                            "segments": {"type": "array", "items": {"type": "object"}}
                        }
                    }}
                }
            }),
        ),
        (
            "AdminStats",
            json!({
                "description": "What is in memory.",
                "type": "object",
                "required": ["matches_in_memory", "connections", "store"],
                "properties": {
                    "matches_in_memory": {"type": "integer", "minimum": 0},
                    "connections": {"type": "integer", "minimum": 0},
                    "store": {"type": "string", "enum": ["sqlite", "postgres"]}
                }
            }),
        ),
        (
            "OpenApiDocument",
            json!({"description": "An OpenAPI 3.1 document.", "type": "object",
                   "required": ["openapi", "info", "paths"]}),
        ),
    ]
}

macro_rules! hand_bodies {
    ($($doc:ident = $name:literal),* $(,)?) => {$(
        #[doc = concat!("The hand-written component `", $name, "`.")]
        #[derive(Debug)]
        pub struct $doc;

        impl utoipa::PartialSchema for $doc {
            fn schema() -> RefOr<Schema> {
                ObjectBuilder::new().into()
            }
        }

        impl utoipa::ToSchema for $doc {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed($name)
            }
        }
    )*};
}

pub use crate::web::TileCatalogueDoc;

hand_bodies!(
    AdminStatsDoc = "AdminStats",
    OpenApiDocumentDoc = "OpenApiDocument",
);

/// Who may call what: an account session (bearer or cookie) or the admin token.
#[derive(Debug)]
struct Security;

impl Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "session_bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "An account session token (`token` of a `SessionCreated`): native clients.",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "session_cookie",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                "session",
                "The same session token as the HttpOnly, SameSite=Strict cookie the server sets: browsers.",
            ))),
        );
        components.add_security_scheme(
            "admin_token",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "The admin token the server was started with (`--admin-token`); without one the admin API answers 404.",
                    ))
                    .build(),
            ),
        );
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Carcassonne server",
        description = "The REST API of the authoritative Carcassonne server. Matches are played over the WebSocket `GET /ws`, whose messages are `ClientMessage` and `ServerMessage` (proto/client-message.schema.json, proto/server-message.schema.json; proto/README.md describes the protocol). Every refusal has the JSON body `ErrorBody`; switch on its `code`.",
        license(name = "MIT OR Apache-2.0"),
    ),
    modifiers(&Security),
    tags(
        (name = "server", description = "Health, metrics, this document, the tile catalogue"),
        (name = "matches", description = "Matches created directly, with seat tokens"),
        (name = "accounts", description = "Guest and registered accounts, sessions"),
        (name = "lobbies", description = "Lobbies: find players, choose the options, start a match"),
        (name = "ratings", description = "Ratings: the leaderboards and player profiles"),
        (name = "admin", description = "The admin API: match logs, state, secrets, actions (audited)"),
        (name = "websocket", description = "The WebSocket upgrade; the messages are in proto/*.schema.json"),
    )
)]
struct ApiDoc;

/// The complete document: the routes' paths with the protocol's schemas as components.
pub fn document() -> Value {
    let (_, openapi) = super::api_routes().split();
    complete(openapi)
}

fn complete(openapi: utoipa::openapi::OpenApi) -> Value {
    let mut doc = serde_json::to_value(&openapi).unwrap_or_else(|_| json!({}));
    let mut schemas = body_schemas();
    for (name, schema) in hand_schemas() {
        schemas.insert(name.to_string(), schema);
    }
    // Every stand-in is replaced; a name without a schema stays a placeholder, and the
    // document's test (every `$ref` resolves to a real schema) catches it.
    if let Some(components) = doc.get_mut("components").and_then(Value::as_object_mut) {
        let placeholders = components
            .remove("schemas")
            .and_then(|s| s.as_object().cloned())
            .unwrap_or_default();
        for (name, placeholder) in placeholders {
            schemas.entry(name).or_insert(placeholder);
        }
        components.insert("schemas".into(), Value::Object(schemas));
    }
    rate_limited_answers(&mut doc);
    body_answers(&mut doc);
    doc
}

/// Every route that takes a request body reads it through the shared extractors
/// (`http/extract.rs`), so every one answers 413 and 415 alike: written here once.
fn body_answers(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    let refusal = |description: &str| {
        json!({
            "description": description,
            "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/ErrorBody"}
            }}
        })
    };
    for item in paths.values_mut().filter_map(Value::as_object_mut) {
        for op in item.values_mut() {
            if op.get("requestBody").is_none() {
                continue;
            }
            if let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) {
                responses.insert("413".into(), refusal("`too_large`: a body over 64 KiB"));
                responses.insert(
                    "415".into(),
                    refusal("`unsupported_media_type`: a body whose `Content-Type` is not `application/json` (or a `+json` type)"),
                );
            }
        }
    }
}

/// The routes the HTTP rate limits cover ([`super::limit_kind`]) answer 429 as well.
fn rate_limited_answers(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, op) in item.iter_mut() {
            let Ok(m) = axum::http::Method::from_bytes(method.to_uppercase().as_bytes()) else {
                continue;
            };
            if super::limit_kind(&m, path).is_none() {
                continue;
            }
            if let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) {
                responses.insert(
                    "429".into(),
                    json!({
                        "description": "`rate_limited`: too many requests from this address; retry after `Retry-After` seconds (`retry_after_ms` in the body)",
                        "headers": {"Retry-After": {
                            "description": "Seconds to wait before trying again",
                            "schema": {"type": "integer", "minimum": 0}
                        }},
                        "content": {"application/json": {
                            "schema": {"$ref": "#/components/schemas/ErrorBody"}
                        }}
                    }),
                );
            }
        }
    }
}

/// The document as served and checked in: pretty JSON with a final newline.
pub fn document_text() -> String {
    let mut text = serde_json::to_string_pretty(&document()).unwrap_or_default();
    text.push('\n');
    text
}

/// `GET /api/openapi.json`.
#[utoipa::path(
    get, path = "/api/openapi.json", tag = "server",
    responses((status = 200, description = "This document (OpenAPI 3.1)", body = OpenApiDocumentDoc)),
)]
pub(crate) async fn openapi_json() -> ([(axum::http::HeaderName, &'static str); 1], String) {
    static TEXT: OnceLock<String> = OnceLock::new();
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        TEXT.get_or_init(document_text).clone(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve<'a>(doc: &'a Value, reference: &str) -> Option<&'a Value> {
        doc.pointer(reference.strip_prefix('#')?)
    }

    fn refs<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
        match v {
            Value::Object(o) => {
                if let Some(Value::String(r)) = o.get("$ref") {
                    out.push(r);
                }
                o.values().for_each(|v| refs(v, out));
            }
            Value::Array(a) => a.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }

    /// Every `$ref` names a component that exists and is a real schema, not a stand-in.
    #[test]
    fn every_ref_resolves_to_a_schema() {
        let doc = document();
        let stand_in = serde_json::to_value(<ErrorBodyDoc as utoipa::PartialSchema>::schema())
            .expect("a schema serializes");
        let mut all = Vec::new();
        refs(&doc, &mut all);
        assert!(all.len() > 20, "{} refs", all.len());
        for r in all {
            let target = resolve(&doc, r).unwrap_or_else(|| panic!("{r} does not resolve"));
            assert_ne!(target, &stand_in, "{r} is a stand-in, with no schema");
        }
    }

    /// `proto/openapi.json` is the document the code makes. `UPDATE_OPENAPI=1` rewrites it.
    #[test]
    fn checked_in_document_matches_the_code() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../proto/openapi.json");
        let fresh = document_text();
        if std::env::var_os("UPDATE_OPENAPI").is_some() {
            std::fs::write(path, &fresh).expect("writes proto/openapi.json");
        }
        let on_disk = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            on_disk == fresh,
            "proto/openapi.json is stale: run `UPDATE_OPENAPI=1 cargo test -p carcassonne-server --lib openapi` and commit it"
        );
    }
}
