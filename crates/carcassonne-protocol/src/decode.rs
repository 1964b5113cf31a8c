//! Reading a client's text frame: [`decode_client_message`], strict about squares, and
//! [`Malformed`], its refusal with the command id recovered when the frame has one.

use crate::ClientMessage;
use serde::Deserialize;

/// Why a text frame is not a client message: `malformed`, with the command's `id` when one can
/// be read from the frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    pub id: Option<String>,
    pub message: String,
}

/// Reads a client message strictly, as `proto/README.md` promises: besides what the types refuse
/// (unknown `type`, missing or unknown fields), a square (`pos`) must be an object with exactly
/// `x` and `y`, never an array or an object with more fields. On failure the command's `id` is
/// recovered whenever the frame is JSON with a string `id`, even if some number in it is out of
/// range.
pub fn decode_client_message(text: &str) -> Result<ClientMessage, Malformed> {
    // The common case, a well-formed message, read straight into the types and its squares
    // checked by a second pass that allocates nothing; anything else takes the route below,
    // whose answer (and error message) is the reference. This path only ever says yes, and only
    // to what that route accepts: a `serde_json::Value` tree for every command would cost about
    // a third of the connection's CPU per move.
    if let Ok(msg) = serde_json::from_str::<ClientMessage>(text)
        && serde_json::from_str::<SquaresProbe>(text).is_ok()
    {
        return Ok(msg);
    }
    decode_client_message_checked(text)
}

/// [`decode_client_message`] by way of a `serde_json::Value`: the reference, with the error
/// messages clients see.
fn decode_client_message_checked(text: &str) -> Result<ClientMessage, Malformed> {
    let fail = |message: String| Malformed {
        id: recover_id(text),
        message,
    };
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| fail(format!("not a client message: {e}")))?;
    if let Some(command) = value.get("command") {
        check_squares(command).map_err(|m| fail(format!("not a client message: {m}")))?;
    }
    serde_json::from_value(value).map_err(|e| fail(format!("not a client message: {e}")))
}

/// The `id` of a frame that is JSON, skipping the other fields without interpreting them (so that
/// `1e400` elsewhere does not hide it).
fn recover_id(text: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct IdOnly {
        #[serde(default)]
        id: Option<String>,
    }
    serde_json::from_str::<IdOnly>(text).ok().and_then(|m| m.id)
}

/// The part of a message that [`check_squares`] looks at, read without building a tree: the
/// command's `pos`, if any, must be a map of `x` and `y` only. Other fields are skipped
/// unread; the message's own types have checked them.
#[derive(Deserialize)]
struct SquaresProbe {
    #[serde(default, rename = "command")]
    _command: Option<CommandSquares>,
}

#[derive(Deserialize)]
struct CommandSquares {
    #[serde(default, rename = "pos")]
    _pos: Option<StrictSquare>,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum SquareKey {
    X,
    Y,
}

/// A `pos` that is a JSON object whose keys are `x` and `y` only (a derived struct would also
/// take an array, or skip other keys).
struct StrictSquare;

impl<'de> Deserialize<'de> for StrictSquare {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = StrictSquare;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object with x and y")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                // A key other than `x` or `y` fails to read as a `SquareKey`.
                while map.next_key::<SquareKey>()?.is_some() {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
                Ok(StrictSquare)
            }
        }
        d.deserialize_map(Visitor)
    }
}

/// Every `pos` in a command is `{"x": …, "y": …}` and nothing else. (`rules::Pos` alone would
/// read `[x, y]` and ignore other fields.)
fn check_squares(command: &serde_json::Value) -> Result<(), String> {
    let Some(pos) = command.get("pos") else {
        return Ok(());
    };
    match pos.as_object() {
        Some(o) if o.keys().all(|k| k == "x" || k == "y") => Ok(()),
        Some(o) => {
            let extra: Vec<&str> = o
                .keys()
                .map(String::as_str)
                .filter(|k| *k != "x" && *k != "y")
                .collect();
            Err(format!("unknown field in pos: {}", extra.join(", ")))
        }
        None => Err("pos is an object {\"x\": …, \"y\": …}".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::{Colour, Modules};

    fn malformed(text: &str) -> Malformed {
        match decode_client_message(text) {
            Err(m) => m,
            Ok(msg) => panic!("{text} was read as {msg:?}"),
        }
    }

    #[test]
    fn squares_are_objects_with_x_and_y_only() {
        let ok = r#"{"type":"command","id":"a","command":{"type":"place_tile","pos":{"x":1,"y":0},"rotation":90}}"#;
        assert!(decode_client_message(ok).is_ok());
        for bad in [
            r#"{"type":"command","id":"a","command":{"type":"place_tile","pos":{"x":1,"y":0,"z":1},"rotation":90}}"#,
            r#"{"type":"command","id":"a","command":{"type":"place_tile","pos":[1,0],"rotation":90}}"#,
            r#"{"type":"command","id":"a","command":{"type":"place_tollhouse","pos":{"x":1,"y":0,"q":0}}}"#,
        ] {
            assert_eq!(malformed(bad).id.as_deref(), Some("a"), "{bad}");
        }
    }

    /// The fast path of `decode_client_message` answers exactly as the checked route does: on
    /// every command of random games (every module) and on variants of them that the route
    /// refuses or reads differently.
    #[test]
    fn the_fast_decode_answers_as_the_checked_route() {
        use rules::{Game, Setup, bot};
        let mut texts: Vec<String> = vec![
            r#"{"type":"auth","token":"t"}"#.into(),
            r#"{"type":"auth","token":"t","token":"u"}"#.into(),
            r#"{"type":"auth","token":"t","extra":1}"#.into(),
            r#"{"type":"subscribe","match_id":"00000000-0000-0000-0000-000000000001","since":3}"#.into(),
            r#"{"type":"subscribe","match_id":"nope"}"#.into(),
            r#"{"type":"nope"}"#.into(),
            r#"{"id":"a","type":"command","command":{"type":"place_tile","pos":{"\u0078":1,"y":0},"rotation":90}}"#.into(),
            r#"{"type":"command","id":"a","command":{"type":"place_tile","pos":{"x":1,"x":2,"y":0},"rotation":90}}"#.into(),
            r#"{"type":"command","id":"a","command":{"type":"place_tile","pos":{"x":1,"y":0},"rotation":90},"command":{}}"#.into(),
            r#"{"type":"command","id":"a","command":{"type":"place_tile","pos":{"y":0},"rotation":90}}"#.into(),
            r#"{"type":"command","id":"a","command":{"type":"place_tile","pos":null,"rotation":90}}"#.into(),
            "{not json".into(),
            "[]".into(),
        ];
        for (seed, modules) in [
            (1, Modules::default()),
            (2, Modules::all()),
            (3, Modules::all()),
        ] {
            let setup = Setup::new(Colour::ALL[..3].to_vec(), seed).modules(modules);
            let (mut game, _) = Game::start(setup).expect("a game");
            let mut rng = seed;
            while let Some((player, cmd)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) {
                let msg = ClientMessage::Command {
                    id: format!("c{}", texts.len()),
                    command: cmd.clone(),
                };
                let text = serde_json::to_string(&msg).expect("json");
                texts.push(text.replace(r#""y":"#, r#""z":0,"y":"#));
                texts.push(text.replace(r#""pos":{"x":"#, r#""pos":{"y":0,"x":"#));
                texts.push(text.replacen('{', r#"{"extra":true,"#, 1));
                texts.push(text.replace(r#"}}"#, r#"},"command":null}"#));
                texts.push(text);
                game.apply(player, cmd).expect("a legal move");
            }
        }
        let mut accepted = 0;
        for text in &texts {
            let fast = decode_client_message(text);
            assert_eq!(fast, decode_client_message_checked(text), "{text}");
            accepted += usize::from(fast.is_ok());
        }
        // Both answers occur: the comparison covers the fast path's yes and its fall-back.
        assert!(
            accepted > 100 && accepted < texts.len() - 100,
            "{accepted} of {}",
            texts.len()
        );
    }

    /// The rules `proto/README.md` states for odd JSON, the same on both routes: a key given
    /// twice in a frame, the last one wins; `-0` (or any number with a fraction or an exponent)
    /// where a square's coordinate or another integer is expected is `malformed`.
    #[test]
    fn a_repeated_key_takes_the_last_value_and_minus_zero_is_no_integer() {
        use rules::{Command, Pos};
        let both = |text: &str| {
            let fast = decode_client_message(text);
            assert_eq!(fast, decode_client_message_checked(text), "{text}");
            fast
        };
        assert_eq!(
            both(r#"{"type":"auth","token":"t","token":"u"}"#),
            Ok(ClientMessage::Auth { token: "u".into() })
        );
        match both(
            r#"{"type":"command","id":"a","command":{"type":"place_tile","pos":{"x":1,"x":2,"y":0},"rotation":90}}"#,
        ) {
            Ok(ClientMessage::Command {
                command: Command::PlaceTile { pos, .. },
                ..
            }) => assert_eq!(pos, Pos { x: 2, y: 0 }),
            other => panic!("{other:?}"),
        }
        for bad in [
            r#"{"type":"command","id":"z","command":{"type":"place_tile","pos":{"x":-0,"y":0},"rotation":90}}"#,
            r#"{"type":"command","id":"z","command":{"type":"place_tile","pos":{"x":0,"y":-0},"rotation":90}}"#,
            r#"{"type":"command","id":"z","command":{"type":"place_tile","pos":{"x":1.0,"y":0},"rotation":90}}"#,
            r#"{"type":"command","id":"z","command":{"type":"place_tile","pos":{"x":1e0,"y":0},"rotation":90}}"#,
        ] {
            let refused = both(bad).expect_err("refused");
            assert_eq!(refused.id.as_deref(), Some("z"), "{bad}");
        }
    }

    #[test]
    fn the_id_survives_a_number_out_of_range() {
        let text = r#"{"type":"command","id":"big","command":{"type":"place_tile","pos":{"x":1e400,"y":0},"rotation":90}}"#;
        assert_eq!(malformed(text).id.as_deref(), Some("big"));
        assert_eq!(malformed("{not json").id, None);
        assert_eq!(
            malformed(r#"{"type":"nope","id":"n"}"#).id.as_deref(),
            Some("n")
        );
    }
}
