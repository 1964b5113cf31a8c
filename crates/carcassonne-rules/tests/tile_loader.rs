//! The tile loader (`tiles::parse`): a well-formed tile loads, and malformed tile data is refused
//! with the reason (B1, B2; I2 and R3: enclosed fields, one a tile).

use carcassonne_rules::tiles::{Catalogue, DataError, parse};

fn one(tile: &str) -> Result<Catalogue, DataError> {
    let text = format!("start = \"base/X\"\n[[tile]]\n{tile}");
    parse(&[("test.toml", &text)])
}

const X: &str = "id = \"base/X\"\nletter = \"X\"\ncount = 1\nvillage = true\n\
    road = [{ sides = \"N\", end = \"village\" }, { sides = \"E\", end = \"village\" }, \
    { sides = \"S\", end = \"village\" }, { sides = \"W\", end = \"village\" }]\n\
    field = [{ halves = \"Ne En\" }, { halves = \"Es Se\" }, { halves = \"Sw Ws\" }, { halves = \"Wn Nw\" }]\n";

#[test]
fn a_well_formed_tile_loads() {
    let cat = one(&format!("edges = \"R R R R\"\n{X}"));
    let Ok(cat) = cat else {
        panic!("{:?}", cat.err());
    };
    assert!(cat.get(0).is_crossroads());
    assert_eq!(cat.get(0).village_roads(), 4);
}

#[test]
fn malformed_tiles_are_refused_with_the_reason() {
    // A typo in the edges, a side that disagrees with the segments, a letter that does not
    // match the id, a road ending at a monastery that is not there.
    let cases = [
        (format!("edges = \"RR R R R\"\n{X}"), "must name 4 sides"),
        (format!("edges = \"R R R F\"\n{X}"), "side W is Field"),
        (
            format!(
                "edges = \"RRRR\"\n{}",
                X.replace("letter = \"X\"", "letter = \"W\"")
            ),
            "does not match",
        ),
        (
            format!(
                "edges = \"RRRR\"\n{}",
                X.replacen("end = \"village\"", "end = \"monastery\"", 1)
            ),
            "does not show",
        ),
        // I2, R3: an enclosed field (no halves) lies between cities.
        (
            "id = \"base/X\"\nletter = \"X\"\ncount = 1\nedges = \"CCCC\"\n\
             city = [{ sides = \"N E S W\" }]\nfield = [{ halves = \"\" }]\n"
                .to_string(),
            "enclosed field",
        ),
        // One enclosed field a tile at most: `field:inner` names it without a half.
        (
            "id = \"base/X\"\nletter = \"X\"\ncount = 1\nedges = \"CCCC\"\n\
             city = [{ sides = \"N E S W\" }]\n\
             field = [{ halves = \"\", cities = [0] }, { halves = \"\", cities = [0] }]\n"
                .to_string(),
            "one a tile",
        ),
    ];
    for (text, why) in cases {
        match one(&text) {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => assert!(e.0.contains(why), "{e} should say {why}"),
        }
    }
}
