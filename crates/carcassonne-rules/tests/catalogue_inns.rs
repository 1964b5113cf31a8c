//! Checks `data/inns-cathedrals.toml` against I2's table and the I3/I12 DECISIONs: kinds, counts,
//! edges, inns and the road segments they stand beside, cathedrals, coats of arms, monasteries,
//! crossroads, pictures and which cities each field touches.

use carcassonne_rules::catalogue;
use carcassonne_rules::tiles::{Edge, FeatureKind, PictureKind, RoadEnd, Segment, TileDesign};
use std::collections::BTreeMap;

fn tiles() -> Vec<&'static TileDesign> {
    catalogue().set("inns-cathedrals").map(|(_, t)| t).collect()
}

fn tile(letter: &str) -> &'static TileDesign {
    let id = format!("inns-cathedrals/{letter}");
    let cat = catalogue();
    cat.get(cat.find(&id).unwrap_or_else(|| panic!("{id} is defined")))
}

fn edges(t: &TileDesign) -> String {
    t.edges
        .iter()
        .map(|e| match e {
            Edge::Field => 'F',
            Edge::Road => 'R',
            Edge::City => 'C',
        })
        .collect()
}

fn of_kind(t: &TileDesign, kind: FeatureKind) -> Vec<&Segment> {
    t.segments.iter().filter(|s| s.kind == kind).collect()
}

/// I2's table: letter, count, edges N E S W.
const I2: [(&str, u32, &str); 17] = [
    ("A", 1, "FFRR"),
    ("B", 1, "FRFR"),
    ("C", 1, "FRRR"),
    ("D", 1, "FRFR"),
    ("E", 1, "RRRR"),
    ("F", 1, "CRFC"),
    ("G", 1, "FFFC"),
    ("H", 1, "CCCC"),
    ("I", 1, "CRCR"),
    ("J", 1, "CFRF"),
    ("K", 2, "CCCC"),
    ("L", 1, "CRRC"),
    ("M", 1, "CFRR"),
    ("N", 1, "CFRC"),
    ("O", 1, "CCFC"),
    ("P", 1, "CFCC"),
    ("Q", 1, "RCRC"),
];

#[test]
fn i1_i2_eighteen_tiles_of_seventeen_kinds_as_in_the_table() {
    let ts = tiles();
    assert_eq!(ts.len(), 17, "I2: 17 kinds");
    assert_eq!(ts.iter().map(|t| t.count).sum::<u32>(), 18, "I1: 18 tiles");
    let got: BTreeMap<&str, (u32, String)> = ts
        .iter()
        .map(|t| (t.letter.as_str(), (t.count, edges(t))))
        .collect();
    let want: BTreeMap<&str, (u32, String)> = I2
        .iter()
        .map(|&(l, n, e)| (l, (n, e.to_string())))
        .collect();
    assert_eq!(got, want, "I2: counts and edges");
}

#[test]
fn i2_six_inns_two_cathedrals_three_coats_one_monastery() {
    let copies = |pred: &dyn Fn(&TileDesign) -> bool| -> (u32, Vec<&str>) {
        let ts: Vec<&TileDesign> = tiles().into_iter().filter(|t| pred(t)).collect();
        (
            ts.iter().map(|t| t.count).sum(),
            ts.iter().map(|t| t.letter.as_str()).collect(),
        )
    };
    assert_eq!(
        copies(&|t| !t.inns.is_empty()),
        (6, vec!["A", "B", "C", "L", "M", "N"]),
        "I1, I2: 6 inns"
    );
    assert!(tiles().iter().all(|t| t.inns.len() <= 1), "one inn a tile");
    assert_eq!(
        copies(&|t| t.segments.iter().any(|s| s.cathedral)),
        (2, vec!["K"]),
        "I1, I2: 2 cathedrals"
    );
    assert_eq!(
        copies(&|t| t.segments.iter().any(|s| s.coat)),
        (3, vec!["L", "P", "Q"]),
        "I2: 3 coats of arms"
    );
    assert_eq!(
        copies(&|t| t.has_monastery()),
        (1, vec!["D"]),
        "I2: 1 monastery"
    );
}

#[test]
fn i12_crossroads_are_c_and_i_not_d_or_e() {
    let crossroads: Vec<&str> = tiles()
        .into_iter()
        .filter(|t| t.is_crossroads())
        .map(|t| t.letter.as_str())
        .collect();
    assert_eq!(crossroads, ["C", "I"], "I12");
    assert_eq!(tile("C").village_roads(), 3);
    assert_eq!(tile("I").village_roads(), 2);
    // D: both roads end at the monastery; E: two curves that never meet.
    let d = of_kind(tile("D"), FeatureKind::Road);
    assert_eq!(d.len(), 2);
    assert!(d.iter().all(|r| r.end == Some(RoadEnd::Monastery)));
    let e = of_kind(tile("E"), FeatureKind::Road);
    assert_eq!(e.len(), 2);
    assert!(e.iter().all(|r| r.side_count() == 2 && r.end.is_none()));
}

#[test]
fn i3_inns_stand_beside_their_road_segments() {
    // The inn marks exactly the road segments it names, and stands in a field bordering each.
    for t in tiles() {
        for (i, s) in t.segments.iter().enumerate() {
            let named = t.inns.iter().any(|inn| inn.roads.contains(&(i as u8)));
            assert_eq!(s.inn, named, "{} segment {i}", t.id);
            assert!(!s.inn || s.kind == FeatureKind::Road, "{}", t.id);
        }
        for inn in &t.inns {
            assert_eq!(
                t.segments[inn.field as usize].kind,
                FeatureKind::Field,
                "{}",
                t.id
            );
        }
    }
    // C (DECISION): beside the W and E roads, not the S road.
    let c = tile("C");
    let beside: Vec<String> = c.inns[0]
        .roads
        .iter()
        .map(|&r| sides(&c.segments[r as usize]))
        .collect();
    assert_eq!(beside, ["W", "E"], "I3: C's inn");
    let s_road = c
        .segments
        .iter()
        .find(|s| s.kind == FeatureKind::Road && sides(s) == "S");
    assert!(s_road.is_some_and(|s| !s.inn), "I3: not the S road");
}

fn sides(s: &Segment) -> String {
    ["N", "E", "S", "W"]
        .iter()
        .enumerate()
        .filter(|(i, _)| s.sides & (1 << i) != 0)
        .map(|(_, n)| *n)
        .collect()
}

#[test]
fn i2_i3_pictures_and_where_they_stand() {
    let pictures: BTreeMap<&str, Vec<(PictureKind, usize)>> = tiles()
        .iter()
        .filter(|t| !t.pictures.is_empty())
        .map(|t| {
            (
                t.letter.as_str(),
                t.pictures.iter().map(|p| (p.kind, p.roads.len())).collect(),
            )
        })
        .collect();
    let want: BTreeMap<&str, Vec<(PictureKind, usize)>> = [
        ("A", vec![(PictureKind::Highwaymen, 1)]),
        ("B", vec![(PictureKind::Garden, 1)]),
        ("C", vec![(PictureKind::Pigsty, 2)]),
        ("E", vec![(PictureKind::Farmhouse, 2)]),
        ("F", vec![(PictureKind::DonkeyStable, 1)]),
        ("H", vec![(PictureKind::Garden, 0)]),
        ("J", vec![(PictureKind::Highwaymen, 1)]),
        ("O", vec![(PictureKind::Farmhouse, 0)]),
    ]
    .into_iter()
    .collect();
    assert_eq!(
        pictures, want,
        "I2: pictures and how many road segments each stands beside (I3)"
    );
    assert!(
        tiles()
            .iter()
            .flat_map(|t| &t.pictures)
            .all(|p| p.kind != PictureKind::WaterTower && p.kind != PictureKind::Travellers)
    );
}

#[test]
fn i2_field_splits_and_the_cities_they_touch() {
    // Per kind: the number of fields and, per field, how many cities it touches (I2's column).
    let want: [(&str, &[usize]); 17] = [
        ("A", &[0, 0]),
        ("B", &[0, 0]),
        ("C", &[0, 0, 0]),
        ("D", &[0, 0]),
        ("E", &[0, 0, 0]),
        ("F", &[1, 1]),
        ("G", &[1, 1]),
        ("H", &[4]),
        ("I", &[1, 1, 1, 1]),
        ("J", &[1, 1]),
        ("K", &[]),
        ("L", &[0, 1]),
        ("M", &[0, 1]),
        ("N", &[1, 1]),
        ("O", &[3]),
        ("P", &[2]),
        ("Q", &[1, 1, 1, 1]),
    ];
    for (letter, touches) in want {
        let got: Vec<usize> = of_kind(tile(letter), FeatureKind::Field)
            .iter()
            .map(|f| f.touches.len())
            .collect();
        assert_eq!(got, touches, "I2: fields of {letter}");
    }
    // H's field is walled in by its four cities: it reaches no side.
    assert_eq!(of_kind(tile("H"), FeatureKind::Field)[0].halves, 0);
    assert_eq!(of_kind(tile("H"), FeatureKind::City).len(), 4);
    assert_eq!(of_kind(tile("O"), FeatureKind::City).len(), 3);
    assert_eq!(of_kind(tile("P"), FeatureKind::City).len(), 2);
    assert_eq!(of_kind(tile("I"), FeatureKind::City).len(), 2);
}

/// The loader refuses inn and picture data that does not hold together, naming the reason:
/// an inn beside an undefined road or in an undefined field, a road named twice, an inn beside
/// no road.
#[test]
fn i3_malformed_inns_are_refused_with_the_reason() {
    let tile = |extra: &str| {
        format!(
            "start = \"t/B\"\n[[tile]]\nid = \"t/B\"\nletter = \"B\"\ncount = 1\n\
             edges = \"F R F R\"\nroad = [{{ sides = \"E W\" }}]\n\
             field = [{{ halves = \"Wn Nw Ne En\" }}, {{ halves = \"Es Se Sw Ws\" }}]\n{extra}"
        )
    };
    let ok =
        carcassonne_rules::tiles::parse(&[("t.toml", &tile("inns = [{ field = 0, road = 0 }]"))]);
    let Ok(cat) = ok else {
        panic!("a well-formed inn is refused: {:?}", ok.err());
    };
    assert!(cat.get(0).segments[0].inn);
    let cases = [
        (
            "inns = [{ field = 0, road = 1 }]",
            "beside road 1, which is not defined",
        ),
        (
            "inns = [{ field = 2, road = 0 }]",
            "in field 2, which is not defined",
        ),
        (
            "inns = [{ field = 0, road = [0, 0] }]",
            "beside road 0 twice",
        ),
        (
            "inns = [{ field = 0, road = [] }]",
            "an inn stands beside a road",
        ),
        (
            "pictures = [{ kind = \"pigsty\", field = 1, road = [0, 3] }]",
            "beside road 3, which is not defined",
        ),
        ("inns = [{ field = 0 }]", "missing field `road`"),
    ];
    for (extra, why) in cases {
        match carcassonne_rules::tiles::parse(&[("t.toml", &tile(extra))]) {
            Ok(_) => panic!("accepted: {extra}"),
            Err(e) => assert!(e.0.contains(why), "{e} should say {why}"),
        }
    }
}
