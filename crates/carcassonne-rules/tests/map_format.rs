//! The map file format (P1–P5): a small valid map parses into the expected board, and every kind
//! of mistake a file can hold is refused with its own `MapError`.

use carcassonne_rules::geometry::{Pos, Side};
use carcassonne_rules::maps::{self, Across, CityId, Grape, MapError, Print, parse};

/// A 5×4 map: one start (1), a one-square large city (A), a town (a), one printed road.
///
/// ```text
/// 3 | . . . . .
/// 2 | . # A # .
/// 1 | . 1 # a .
/// 0 | . . . . .
/// ```
const VALID: &str = r#"
name = "Test"
outline = """
3 | . . . . .
2 | . # A # .
1 | . 1 # a .
0 | . . . . .
"""
border = [ { side = "1,2 N", print = "road", country = "Nowhere" } ]

[[start]]
mark = "1"
name = "Start"

[[city]]
mark = "A"
name = "Ayville"
coats = 2
open = ["2,2 W", "2,2 E", "2,2 S"]

[[town]]
mark = "a"
name = "Town"
grape = "light_blue"
"#;

fn with(from: &str, to: &str) -> String {
    assert!(VALID.contains(from), "test fixture has no `{from}`");
    VALID.replacen(from, to, 1)
}

fn err(text: &str) -> MapError {
    match parse("test", text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

#[test]
fn a_valid_file_parses_into_the_board_it_draws() {
    let map = match parse("test", VALID) {
        Ok(m) => m,
        Err(e) => panic!("{e}"),
    };
    assert_eq!((map.id.as_str(), map.name.as_str()), ("test", "Test"));
    assert_eq!(map.bounds().max, Pos::new(4, 3));
    let placeable: Vec<Pos> = map.placeable().collect();
    let expect = [(1, 1), (2, 1), (3, 1), (1, 2), (3, 2)].map(|(x, y)| Pos::new(x, y));
    assert_eq!(placeable, expect);
    assert_eq!(map.starts()[0].pos, Pos::new(1, 1));
    assert_eq!(map.towns()[0].pos, Pos::new(3, 1));
    assert_eq!(map.towns()[0].grape, Some(Grape::LightBlue));
    let city = &map.cities()[0];
    assert_eq!(
        (city.squares.as_slice(), city.coats),
        ([Pos::new(2, 2)].as_slice(), 2)
    );
    assert_eq!(
        map.across(Pos::new(2, 1), Side::N),
        Across::LargeCity {
            city: CityId(0),
            square: Pos::new(2, 2)
        }
    );
    assert_eq!(
        map.across(Pos::new(1, 2), Side::N),
        Across::Border(Print::Road)
    );
    assert_eq!(
        map.across(Pos::new(1, 2), Side::W),
        Across::Border(Print::Neutral)
    );
    assert_eq!(
        map.across(Pos::new(1, 1), Side::E),
        Across::Square(Pos::new(2, 1))
    );
    assert_eq!(
        map.open_edge_squares(),
        [(1, 2), (2, 1), (3, 2)].map(|(x, y)| Pos::new(x, y))
    );
    assert_eq!(map.border_prints()[0].country.as_deref(), Some("Nowhere"));
}

#[test]
fn toml_and_unknown_keys_are_refused() {
    assert!(matches!(err("name = "), MapError::Toml { .. }));
    assert!(matches!(
        err(&with("coats = 2", "coats = 2\nwalls = 1")),
        MapError::Toml { .. }
    ));
    assert!(matches!(
        err(&with("light_blue", "green")),
        MapError::Toml { .. }
    ));
    assert!(matches!(
        err(&with("\"road\"", "\"bridge\"")),
        MapError::Toml { .. }
    ));
}

#[test]
fn outline_rows_are_labelled_even_and_one_character_per_cell() {
    assert_eq!(
        err(&with("2 | . # A # .", "7 | . # A # .")),
        MapError::RowLabel {
            line: 2,
            expected: 2,
            found: "7 | . # A # .".into()
        }
    );
    assert!(matches!(
        err(&with("0 | . . . . .", ". . . . .")),
        MapError::RowLabel { .. }
    ));
    assert_eq!(
        err(&with("0 | . . . . .", "0 | . . . .")),
        MapError::RaggedRow {
            y: 0,
            found: 4,
            expected: 5
        }
    );
    assert!(matches!(
        err(&with("0 | . . . . .", "0 | . .. . . .")),
        MapError::BadCell { .. }
    ));
    let empty = VALID.replace(
        "3 | . . . . .\n2 | . # A # .\n1 | . 1 # a .\n0 | . . . . .\n",
        "",
    );
    assert_eq!(err(&empty), MapError::EmptyOutline);
}

#[test]
fn marks_are_declared_once_used_and_in_their_class() {
    assert_eq!(
        err(&with("0 | . . . . .", "0 | . . x . .")),
        MapError::UnknownMark {
            at: Pos::new(2, 0),
            mark: 'x'
        }
    );
    assert!(matches!(
        err(&with("mark = \"1\"", "mark = \"S\"")),
        MapError::MarkClass { what: "start", .. }
    ));
    assert!(matches!(
        err(&with("mark = \"A\"", "mark = \"a\"")),
        MapError::MarkClass { what: "city", .. }
    ));
    assert!(matches!(
        err(&with("mark = \"a\"", "mark = \"ab\"")),
        MapError::MarkClass { what: "town", .. }
    ));
    let twice = format!("{VALID}\n[[town]]\nmark = \"a\"\nname = \"Other\"\n");
    assert_eq!(err(&twice), MapError::MarkDeclaredTwice { mark: 'a' });
    let unused = format!("{VALID}\n[[town]]\nmark = \"b\"\nname = \"Other\"\n");
    assert_eq!(
        err(&unused),
        MapError::MarkUnused {
            mark: 'b',
            name: "Other".into()
        }
    );
    assert_eq!(
        err(&with("2 | . # A # .", "2 | . a A # .")),
        MapError::MarkOnSeveralSquares {
            mark: 'a',
            name: "Town".into(),
            count: 2
        }
    );
    assert_eq!(
        err(&with("name = \"Town\"", "name = \"Start\"")),
        MapError::NameTwice("Start".into())
    );
    assert_eq!(
        err(&with("name = \"Town\"", "name = \" \"")),
        MapError::EmptyName
    );
}

#[test]
fn a_map_needs_squares_and_a_start() {
    let no_start = with("[[start]]\nmark = \"1\"\nname = \"Start\"\n", "")
        .replace("1 | . 1 # a .", "1 | . # # a .");
    assert_eq!(err(&no_start), MapError::NoStart);
    let nothing = "name = \"Sea\"\noutline = \"\"\"\n0 | . .\n\"\"\"\n";
    assert_eq!(err(nothing), MapError::NoPlaceableSquare);
}

#[test]
fn p3_large_city_edges_are_exactly_the_sides_facing_placeable_squares() {
    let missing = with(
        "open = [\"2,2 W\", \"2,2 E\", \"2,2 S\"]",
        "open = [\"2,2 W\", \"2,2 E\"]",
    );
    assert_eq!(
        err(&missing),
        MapError::CitySideNotOpen {
            city: "Ayville".into(),
            at: Pos::new(2, 2),
            side: Side::S
        }
    );
    let to_sea = with("\"2,2 S\"]", "\"2,2 S\", \"2,2 N\"]");
    assert!(matches!(
        err(&to_sea),
        MapError::OpenEdgeFacesNoSquare { side: Side::N, .. }
    ));
    let elsewhere = with("\"2,2 S\"]", "\"2,2 S\", \"1,1 E\"]");
    assert!(matches!(
        err(&elsewhere),
        MapError::OpenEdgeNotOnCity { .. }
    ));
    let twice = with("\"2,2 S\"]", "\"2,2 S\", \"2,2 W\"]");
    assert!(matches!(
        err(&twice),
        MapError::OpenEdgeTwice { side: Side::W, .. }
    ));
    assert!(matches!(
        err(&with("\"2,2 S\"]", "\"2,2 down\"]")),
        MapError::BadSideRef { .. }
    ));
    // A city split in two, and two cities touching.
    let split = with("0 | . . . . .", "0 | . . . . A");
    assert!(matches!(err(&split), MapError::CitySquaresApart { .. }));
    let touching = format!(
        "{}\n[[city]]\nmark = \"B\"\nname = \"Bee\"\nopen = [\"3,3 S\"]\n",
        with("3 | . . . . .", "3 | . . B B .")
    );
    assert!(matches!(err(&touching), MapError::CitiesTouch { .. }));
    // A city with no land around it could never be joined.
    let shut = format!(
        "{}\n[[city]]\nmark = \"C\"\nname = \"Sea City\"\n",
        with("3 | . . . . .", "3 | . . . . C")
    );
    assert_eq!(
        err(&shut),
        MapError::CityUnreachable {
            city: "Sea City".into()
        }
    );
}

#[test]
fn p4_border_prints_only_on_real_border_sides_once() {
    let at = |side: &str| with("side = \"1,2 N\"", &format!("side = \"{side}\""));
    assert!(matches!(err(&at("0,2 N")), MapError::BorderOffMap { .. }));
    assert!(matches!(
        err(&at("1,2 S")),
        MapError::NotABorderSide {
            across: "a placeable square",
            ..
        }
    ));
    assert!(matches!(
        err(&at("1,2 E")),
        MapError::NotABorderSide {
            across: "a large city",
            ..
        }
    ));
    let twice = with(
        "border = [",
        "border = [ { side = \"1,2 N\", print = \"city\" },",
    );
    assert!(matches!(err(&twice), MapError::BorderTwice { .. }));
    let neutral = with("print = \"road\"", "print = \"neutral\"");
    assert!(matches!(err(&neutral), MapError::NeutralListed { .. }));
    let coat = with("print = \"road\"", "print = \"city-coat\"");
    let map = parse("test", &coat).map_err(|e| e.to_string());
    assert_eq!(
        map.map(|m| m.across(Pos::new(1, 2), Side::N)),
        Ok(Across::Border(Print::City { coat: true }))
    );
}

#[test]
fn p2_a_start_square_demands_no_edge_of_its_random_tile() {
    let printed = with("side = \"1,2 N\"", "side = \"1,1 W\"");
    assert_eq!(
        err(&printed),
        MapError::StartOnPrintedBorder {
            start: "Start".into(),
            side: Side::W
        }
    );
    // Move the start under the large city's open edge.
    let under_city = with("1 | . 1 # a .", "1 | . # 1 a .");
    assert_eq!(
        err(&under_city),
        MapError::StartNextToCity {
            start: "Start".into(),
            city: "Ayville".into()
        }
    );
}

#[test]
fn border_prints_may_also_be_written_as_tables() {
    let tables = format!(
        "{}\n[[border]]\nside = \"1,2 N\"\nprint = \"road\"\ncountry = \"Nowhere\"\n",
        with(
            "border = [ { side = \"1,2 N\", print = \"road\", country = \"Nowhere\" } ]",
            ""
        )
    );
    let (a, b) = (parse("test", VALID), parse("test", &tables));
    let prints =
        |m: Result<carcassonne_rules::maps::Map, MapError>| m.map(|m| m.border_prints().to_vec());
    assert_eq!(prints(a), prints(b));
}

/// A map a setup gives as text is kept under its name: the same text again gives the same map, a
/// built-in map's name or a second text under one name is refused, and a game finds it by name.
#[test]
fn a_map_given_as_text_is_kept_by_name() {
    let text = "name = \"Strip\"\noutline = \"\"\"\n 0 | 1 # #\n\"\"\"\n\n[[start]]\nmark = \"1\"\nname = \"West\"\n";
    let first = maps::register("strip-test", text).expect("a valid map");
    let again = maps::register("strip-test", text).expect("the same map again");
    assert!(std::ptr::eq(first, again));
    assert!(std::ptr::eq(
        maps::map("strip-test").expect("found by name"),
        first
    ));
    let other = text.replace("# #", "# # #");
    assert!(matches!(
        maps::register("strip-test", &other),
        Err(MapError::NameTaken { .. })
    ));
    assert!(matches!(
        maps::register("france", text),
        Err(MapError::NameTaken { .. })
    ));
}
