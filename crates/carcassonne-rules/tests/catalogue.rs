//! Checks the tile data files against the rules: B1 (the 72 base tiles), B2 (the field pictures
//! and the DECISION that places them), T1 (the 10 Tollkeepers tiles and its DECISION) and R1–R3
//! (the 24 Traders & Builders tiles, their goods and the R2 table of the reference).

use carcassonne_rules::catalogue;
use carcassonne_rules::geometry::{Half, Side};
use carcassonne_rules::tiles::{
    Edge, FeatureKind, Goods, PictureKind, RoadEnd, Segment, TileDesign,
};
use std::collections::{BTreeMap, BTreeSet};

/// One row of the B1 table: letter, count, edges N E S W, coats of arms on the tile, monastery,
/// village.
struct Kind {
    letter: &'static str,
    count: u32,
    edges: &'static str,
    coat: bool,
    monastery: bool,
    village: bool,
}

const fn k(letter: &'static str, count: u32, edges: &'static str) -> Kind {
    Kind {
        letter,
        count,
        edges,
        coat: false,
        monastery: false,
        village: false,
    }
}

const fn coat(mut kind: Kind) -> Kind {
    kind.coat = true;
    kind
}

const fn monastery(mut kind: Kind) -> Kind {
    kind.monastery = true;
    kind
}

const fn village(mut kind: Kind) -> Kind {
    kind.village = true;
    kind
}

/// The B1 table.
const B1: [Kind; 24] = [
    monastery(k("A", 2, "FFRF")),
    monastery(k("B", 4, "FFFF")),
    coat(k("C", 1, "CCCC")),
    k("D", 4, "CRFR"),
    k("E", 5, "CFFF"),
    coat(k("F", 2, "FCFC")),
    k("G", 1, "FCFC"),
    k("H", 3, "CFCF"),
    k("I", 2, "CFFC"),
    k("J", 3, "CRRF"),
    k("K", 3, "CFRR"),
    village(k("L", 3, "CRRR")),
    coat(k("M", 2, "CFFC")),
    k("N", 3, "CFFC"),
    coat(k("O", 2, "CRRC")),
    k("P", 3, "CRRC"),
    coat(k("Q", 1, "CCFC")),
    k("R", 3, "CCFC"),
    coat(k("S", 2, "CCRC")),
    k("T", 1, "CCRC"),
    k("U", 8, "FRFR"),
    k("V", 9, "FFRR"),
    village(k("W", 4, "FRRR")),
    village(k("X", 1, "RRRR")),
];

fn edge_letters(t: &TileDesign) -> String {
    t.edges
        .iter()
        .map(|e| match e {
            Edge::Field => 'F',
            Edge::Road => 'R',
            Edge::City => 'C',
        })
        .collect()
}

fn base() -> Vec<&'static TileDesign> {
    catalogue().set("base").map(|(_, t)| t).collect()
}

fn tollkeepers() -> Vec<&'static TileDesign> {
    catalogue().set("tollkeepers").map(|(_, t)| t).collect()
}

fn has_coat(t: &TileDesign) -> bool {
    t.segments
        .iter()
        .any(|s| s.kind == FeatureKind::City && s.coat)
}

fn kind_name(kind: PictureKind) -> &'static str {
    match kind {
        PictureKind::Farmhouse => "farmhouse",
        PictureKind::Cowshed => "cowshed",
        PictureKind::Pigsty => "pigsty",
        PictureKind::DonkeyStable => "donkey-stable",
        PictureKind::Garden => "garden",
        PictureKind::Highwaymen => "highwaymen",
        PictureKind::WaterTower => "water-tower",
        PictureKind::Travellers => "travellers",
    }
}

/// Copies of base tiles showing a picture of `kind` (each base copy shows at most one, B2).
fn base_copies_with(pred: impl Fn(PictureKind) -> bool) -> u32 {
    base()
        .iter()
        .map(|t| t.count * t.pictures.iter().filter(|p| pred(p.kind)).count() as u32)
        .sum()
}

/// Copies of base tiles showing a picture of a kind matching `pred` beside a road.
fn base_copies_beside_road(pred: impl Fn(PictureKind) -> bool) -> u32 {
    base()
        .iter()
        .map(|t| {
            t.count
                * t.pictures
                    .iter()
                    .filter(|p| pred(p.kind) && p.road.is_some())
                    .count() as u32
        })
        .sum()
}

/// The half-edges a field can reach beside a road segment: both halves of every side the road
/// reaches.
fn halves_beside(road: &Segment) -> u8 {
    Side::ALL
        .iter()
        .filter(|s| road.sides & (1 << s.index()) != 0)
        .flat_map(|s| s.halves())
        .fold(0u8, |m, h| m | (1 << h.index()))
}

/// The city segments whose wall a field borders at a corner of the tile: a field half next to a
/// half of a city side, going round the border. On every tile of the data files the walls of a
/// city run from corner to corner, so this is exactly the set of cities the field touches.
fn cities_at_corners(t: &TileDesign, field: &Segment) -> BTreeSet<u8> {
    let mut out = BTreeSet::new();
    // A field that reaches no side (I2, tile H) lies among all the tile's cities.
    if field.halves == 0 {
        return (0..t.segments.len() as u8)
            .filter(|&i| t.segments[i as usize].kind == FeatureKind::City)
            .collect();
    }
    for h in Half::ALL {
        if field.halves & (1 << h.index()) == 0 {
            continue;
        }
        for next in [
            Half::ALL[(h.index() + 1) % 8],
            Half::ALL[(h.index() + 7) % 8],
        ] {
            for (i, s) in t.segments.iter().enumerate() {
                if s.kind == FeatureKind::City && s.sides & (1 << next.side().index()) != 0 {
                    out.insert(i as u8);
                }
            }
        }
    }
    out
}

/// One segment without the pictures' `beside` counts: kind, sides, halves, coat, end, touches.
type SegmentShape = (FeatureKind, u8, u8, bool, Option<RoadEnd>, Vec<u8>);

/// Every segment but the pictures' `beside` counts, to compare copies of one letter.
fn layout(t: &TileDesign) -> Vec<SegmentShape> {
    t.segments
        .iter()
        .map(|s| (s.kind, s.sides, s.halves, s.coat, s.end, s.touches.clone()))
        .collect()
}

#[test]
fn b1_seventy_two_base_tiles_as_in_the_table() {
    let tiles = base();
    let total: u32 = tiles.iter().map(|t| t.count).sum();
    assert_eq!(total, 72, "B1: 72 base tiles");

    let mut per_letter: BTreeMap<&str, u32> = BTreeMap::new();
    for t in &tiles {
        *per_letter.entry(t.letter.as_str()).or_default() += t.count;
    }
    assert_eq!(per_letter.len(), 24, "B1: 24 kinds A-X");
    for kind in &B1 {
        assert_eq!(
            per_letter.get(kind.letter).copied(),
            Some(kind.count),
            "B1: count of kind {}",
            kind.letter
        );
        for t in tiles.iter().filter(|t| t.letter == kind.letter) {
            assert!(t.count >= 1, "{}: a design with no copy", t.id);
            assert_eq!(edge_letters(t), kind.edges, "B1: edges of {}", t.id);
            assert_eq!(has_coat(t), kind.coat, "B1: coat of arms on {}", t.id);
            assert_eq!(
                t.has_monastery(),
                kind.monastery,
                "B1: monastery on {}",
                t.id
            );
            assert_eq!(t.village, kind.village, "B1: village on {}", t.id);
        }
    }
}

#[test]
fn b1_totals_coats_monasteries_villages() {
    let tiles = base();
    let sum = |f: &dyn Fn(&TileDesign) -> bool| -> u32 {
        tiles.iter().filter(|t| f(t)).map(|t| t.count).sum()
    };
    assert_eq!(sum(&has_coat), 10, "B1: 10 tiles with a coat of arms");
    assert_eq!(sum(&|t| t.has_monastery()), 6, "B1: 6 monasteries");
    assert_eq!(sum(&|t| t.village), 8, "B1: 8 villages");
    assert_eq!(sum(&|t| t.is_crossroads()), 8, "B1/T3: 8 crossroads");
    let crossroads: BTreeSet<&str> = tiles
        .iter()
        .filter(|t| t.is_crossroads())
        .map(|t| t.letter.as_str())
        .collect();
    assert_eq!(crossroads, BTreeSet::from(["L", "W", "X"]), "T3: L, W, X");
    for t in &tiles {
        let expected = match t.letter.as_str() {
            "L" | "W" => 3,
            "X" => 4,
            _ => 0,
        };
        assert_eq!(
            t.village_roads(),
            expected,
            "B1: roads ending at the village of {}",
            t.id
        );
    }
}

#[test]
fn b1_copies_of_a_letter_differ_only_in_pictures() {
    let tiles = base();
    for kind in &B1 {
        let copies: Vec<_> = tiles.iter().filter(|t| t.letter == kind.letter).collect();
        let plain = format!("base/{}", kind.letter);
        assert!(
            copies
                .iter()
                .any(|t| t.id == plain && t.pictures.is_empty()),
            "{plain}: every letter keeps a plain design under its bare id"
        );
        for t in &copies {
            assert_eq!(
                layout(t),
                layout(copies[0]),
                "{} differs from {}",
                t.id,
                copies[0].id
            );
        }
    }
}

#[test]
fn b1_road_ends_and_segment_shapes() {
    for t in catalogue().tiles.iter() {
        for s in &t.segments {
            match s.kind {
                FeatureKind::Road => {
                    assert!(s.side_count() == 1 || s.side_count() == 2, "{}", t.id);
                    assert_eq!(s.end.is_some(), s.side_count() == 1, "{}: road end", t.id);
                    match s.end {
                        Some(RoadEnd::Village) => assert!(t.village, "{}", t.id),
                        Some(RoadEnd::Monastery) => assert!(t.has_monastery(), "{}", t.id),
                        Some(RoadEnd::House) => assert_eq!(t.set, "traders-builders"),
                        Some(RoadEnd::City) => assert!(
                            t.segments.iter().any(|c| c.kind == FeatureKind::City),
                            "{}: road ends at a city the tile lacks",
                            t.id
                        ),
                        None => {}
                    }
                }
                FeatureKind::City => assert!(s.side_count() >= 1, "{}", t.id),
                // I2, R3: only a field walled in by cities reaches no side (I&C H; T&B M, N, P,
                // X), and it touches a city.
                FeatureKind::Field => assert!(
                    s.halves != 0
                        || (matches!(t.set.as_str(), "inns-cathedrals" | "traders-builders")
                            && !s.touches.is_empty()),
                    "{}: empty field",
                    t.id
                ),
                FeatureKind::Monastery => {}
            }
        }
        if t.village {
            assert!(
                t.village_roads() >= 2,
                "{}: a village is where roads meet",
                t.id
            );
        }
        // A road that crosses the tile or ends at a village splits the fields at its sides: the
        // two halves of each side it reaches lie in different fields.
        for road in t.segments.iter().filter(|s| {
            s.kind == FeatureKind::Road && (s.end.is_none() || s.end == Some(RoadEnd::Village))
        }) {
            for side in Side::ALL
                .iter()
                .filter(|s| road.sides & (1 << s.index()) != 0)
            {
                let field_of = |h: Half| {
                    t.segments.iter().position(|f| {
                        f.kind == FeatureKind::Field && f.halves & (1 << h.index()) != 0
                    })
                };
                let [a, b] = side.halves();
                assert_ne!(
                    field_of(a),
                    field_of(b),
                    "{}: one field on both sides of a road",
                    t.id
                );
            }
        }
    }
}

#[test]
fn b1_d_fields_north_touches_city_south_does_not() {
    let cat = catalogue();
    let d = cat.get(cat.start);
    assert_eq!(d.id, "base/D", "B1: the start tile is a D");
    assert!(d.pictures.is_empty(), "the start tile is a plain D");
    let fields: Vec<&Segment> = d
        .segments
        .iter()
        .filter(|s| s.kind == FeatureKind::Field)
        .collect();
    assert_eq!(fields.len(), 2);
    let north = fields
        .iter()
        .find(|f| f.halves & (1 << Half::Wn.index()) != 0)
        .expect("a field on Wn");
    let south = fields
        .iter()
        .find(|f| f.halves & (1 << Half::Ws.index()) != 0)
        .expect("a field on Ws");
    assert_eq!(north.touches.len(), 1);
    assert!(south.touches.is_empty());
}

#[test]
fn b1_fields_touch_exactly_the_cities_they_border() {
    // The Traders & Builders tiles are left to `r2_...`: on O, U, I and W a field between roads
    // that end at the city touches its wall though no city side is next to it (R2's table).
    for t in catalogue()
        .tiles
        .iter()
        .filter(|t| t.set != "traders-builders")
    {
        for (i, s) in t.segments.iter().enumerate() {
            if s.kind != FeatureKind::Field {
                continue;
            }
            let declared: BTreeSet<u8> = s.touches.iter().copied().collect();
            let at_corners = cities_at_corners(t, s);
            // I2: O's field reaches the north city's wall in the middle of the tile, not at a
            // corner (its cities W, N, E are separate): it touches all three.
            if t.id == "inns-cathedrals/O" {
                assert!(declared.is_superset(&at_corners) && declared.len() == 3);
                continue;
            }
            assert_eq!(
                declared, at_corners,
                "B7: cities touched by field segment {i} of {}",
                t.id
            );
        }
    }
}

#[test]
fn b2_eight_of_each_picture_kind_sheds_split_2_4_2() {
    let count = |k: PictureKind| base_copies_with(|p| p == k);
    assert_eq!(count(PictureKind::Farmhouse), 8, "B2: farmhouses");
    assert_eq!(base_copies_with(PictureKind::is_shed), 8, "B2: sheds");
    assert_eq!(count(PictureKind::Cowshed), 2, "B2: cowsheds");
    assert_eq!(count(PictureKind::Pigsty), 4, "B2: pigsties");
    assert_eq!(count(PictureKind::DonkeyStable), 2, "B2: donkey stables");
    assert_eq!(count(PictureKind::Garden), 8, "B2: gardens");
    assert_eq!(count(PictureKind::Highwaymen), 8, "B2: highwaymen");
    assert_eq!(count(PictureKind::WaterTower), 8, "B2: water towers");
    assert_eq!(
        count(PictureKind::Travellers),
        0,
        "T1: travellers only on Tollkeepers tiles"
    );
}

#[test]
fn b2_forty_distinct_tiles_show_one_picture_each() {
    let tiles = base();
    for t in &tiles {
        assert!(
            t.pictures.len() <= 1,
            "B2: {} shows more than one picture",
            t.id
        );
        match t.pictures.first() {
            Some(p) => {
                assert_eq!(
                    t.id,
                    format!("base/{}+{}", t.letter, kind_name(p.kind)),
                    "id"
                );
                assert!(p.field.is_some(), "B2: {} picture stands in a field", t.id);
            }
            None => assert_eq!(t.id, format!("base/{}", t.letter), "id of a plain design"),
        }
    }
    let with: u32 = tiles
        .iter()
        .filter(|t| !t.pictures.is_empty())
        .map(|t| t.count)
        .sum();
    assert_eq!(with, 40, "B2: 40 distinct tiles with a picture");
}

#[test]
fn b2_gardens_on_one_copy_each_of_e_h_i_m_n_r_u_v() {
    let mut per_letter: BTreeMap<&str, u32> = BTreeMap::new();
    for t in base() {
        let n = t
            .pictures
            .iter()
            .filter(|p| p.kind == PictureKind::Garden)
            .count() as u32;
        if n > 0 {
            *per_letter.entry(t.letter.as_str()).or_default() += n * t.count;
        }
    }
    let expected: BTreeMap<&str, u32> = ["E", "H", "I", "M", "N", "R", "U", "V"]
        .into_iter()
        .map(|l| (l, 1))
        .collect();
    assert_eq!(per_letter, expected, "B2: gardens");
}

#[test]
fn b2_decision_at_least_five_farmhouses_sheds_highwaymen_beside_roads() {
    assert!(base_copies_beside_road(|k| k == PictureKind::Farmhouse) >= 5);
    assert!(base_copies_beside_road(PictureKind::is_shed) >= 5);
    assert!(base_copies_beside_road(|k| k == PictureKind::Highwaymen) >= 5);
}

#[test]
fn b2_t7_pictures_stand_in_a_field_that_borders_their_road() {
    // Not tile C of Traders & Builders: its road 2 crosses a bridge into the field of its
    // farmhouse, which reaches none of the road's sides (R3, checked there).
    for t in catalogue()
        .tiles
        .iter()
        .filter(|t| t.id != "traders-builders/C")
    {
        for p in &t.pictures {
            if let Some(f) = p.field {
                assert_eq!(t.segments[f as usize].kind, FeatureKind::Field, "{}", t.id);
            }
            let Some(f) = p.field else {
                continue;
            };
            assert_eq!(p.road, p.roads.first().copied(), "{}", t.id);
            for &r in &p.roads {
                let road = &t.segments[r as usize];
                assert_eq!(
                    road.kind,
                    FeatureKind::Road,
                    "{}: picture beside a non-road",
                    t.id
                );
                let field = &t.segments[f as usize];
                assert!(
                    field.halves & halves_beside(road) != 0,
                    "{}: the {:?} stands in field segment {f}, which does not border road {r}",
                    t.id,
                    p.kind
                );
            }
        }
    }
}

#[test]
fn t7_beside_counts_agree_with_pictures() {
    for t in catalogue().tiles.iter() {
        for (i, s) in t.segments.iter().enumerate() {
            for kind in PictureKind::ALL {
                let n = t
                    .pictures
                    .iter()
                    .filter(|p| p.kind == kind && p.roads.contains(&(i as u8)))
                    .count();
                assert_eq!(
                    usize::from(s.beside[kind as usize]),
                    n,
                    "{} segment {i}",
                    t.id
                );
            }
        }
    }
}

#[test]
fn t1_ten_tollkeepers_tiles() {
    let tiles = tollkeepers();
    assert_eq!(tiles.len(), 10, "T1: 10 designs");
    let ids: Vec<&str> = tiles.iter().map(|t| t.id.as_str()).collect();
    let expected: Vec<String> = ('A'..='J').map(|c| format!("tollkeepers/{c}")).collect();
    assert_eq!(ids, expected, "T1: ids A..J");
    for t in &tiles {
        assert_eq!(t.count, 1, "T1: one copy of {}", t.id);
        assert_eq!(Some(t.letter.as_str()), t.id.strip_prefix("tollkeepers/"));
    }
}

#[test]
fn t1_eight_tiles_with_one_traveller_group_beside_a_road() {
    let tiles = tollkeepers();
    let mut with = 0;
    for t in &tiles {
        let groups: Vec<_> = t
            .pictures
            .iter()
            .filter(|p| p.kind == PictureKind::Travellers)
            .collect();
        assert!(groups.len() <= 1, "T1: {} shows more than one group", t.id);
        if let Some(g) = groups.first() {
            with += 1;
            let r = g.road.expect("T1: travellers stand beside a road");
            assert_eq!(t.segments[r as usize].kind, FeatureKind::Road);
            assert!(g.field.is_some(), "{}: travellers stand in a field", t.id);
        }
    }
    assert_eq!(with, 8, "T1: 8 tiles with travellers");
}

#[test]
fn t1_crossroads_two_road_and_four_road_villages() {
    let tiles = tollkeepers();
    let crossroads: Vec<_> = tiles.iter().filter(|t| t.is_crossroads()).collect();
    assert!(crossroads.len() >= 3, "T1: at least 3 crossroads");
    assert!(
        tiles.iter().any(|t| t.village_roads() == 2),
        "T1: a 2-road village"
    );
    assert!(
        tiles.iter().any(|t| t.village_roads() == 4),
        "T1: a 4-road village"
    );
    // T3: a monastery or a city where roads end is not a crossroads.
    for t in &tiles {
        if !t.village {
            assert!(!t.is_crossroads(), "{}", t.id);
        }
    }
    // T7: on some crossroads tile a picture stands beside one road segment and not another.
    assert!(
        crossroads.iter().any(|t| {
            let roads: Vec<_> = t
                .segments
                .iter()
                .filter(|s| s.kind == FeatureKind::Road)
                .collect();
            roads.iter().any(|s| s.beside.iter().any(|&n| n > 0))
                && roads.iter().any(|s| s.beside.iter().all(|&n| n == 0))
        }),
        "T7: a crossroads tile with a picture beside only one of its roads"
    );
}

#[test]
fn t1_mix_of_tiles_and_field_pictures_beside_roads() {
    let tiles = tollkeepers();
    let has_city = |t: &TileDesign| t.segments.iter().any(|s| s.kind == FeatureKind::City);
    let road_only = tiles
        .iter()
        .filter(|t| !has_city(t) && !t.has_monastery())
        .count();
    assert!(road_only >= 1, "T1: road-only tiles");
    assert!(tiles.iter().any(|t| has_city(t)), "T1: a tile with a city");
    assert!(
        tiles.iter().any(|t| t.has_monastery()),
        "T1: a tile with a monastery"
    );
    for t in &tiles {
        assert!(
            t.segments.iter().any(|s| s.kind == FeatureKind::Road),
            "{}: every Tollkeepers tile has a road",
            t.id
        );
    }
    let field_pictures = tiles
        .iter()
        .flat_map(|t| &t.pictures)
        .filter(|p| {
            p.road.is_some()
                && (p.kind.is_shed()
                    || matches!(
                        p.kind,
                        PictureKind::Farmhouse | PictureKind::Garden | PictureKind::Highwaymen
                    ))
        })
        .count();
    assert!(field_pictures >= 2, "T1: a few field pictures beside roads");
}

fn traders_builders() -> Vec<&'static TileDesign> {
    catalogue()
        .set("traders-builders")
        .map(|(_, t)| t)
        .collect()
}

/// The goods symbol a tile shows, if any (R2: at most one, always on a city).
fn goods_of(t: &TileDesign) -> Option<Goods> {
    let shown: Vec<Goods> = t.segments.iter().filter_map(|s| s.goods).collect();
    assert!(
        shown.len() <= 1,
        "R2: {} shows {} goods symbols",
        t.id,
        shown.len()
    );
    for s in &t.segments {
        if s.goods.is_some() {
            assert_eq!(s.kind, FeatureKind::City, "R2: goods on a city ({})", t.id);
        }
    }
    shown.first().copied()
}

#[test]
fn r1_r2_twenty_four_tiles_goods_9_wine_6_grain_5_cloth() {
    let tiles = traders_builders();
    let ids: Vec<&str> = tiles.iter().map(|t| t.id.as_str()).collect();
    let expected: Vec<String> = ('A'..='X')
        .map(|c| format!("traders-builders/{c}"))
        .collect();
    assert_eq!(ids, expected, "R2: 24 designs A..X");
    let mut by_goods: BTreeMap<Option<Goods>, String> = BTreeMap::new();
    for t in &tiles {
        assert_eq!(t.count, 1, "R2: one copy of {}", t.id);
        by_goods.entry(goods_of(t)).or_default().push_str(&t.letter);
        assert!(!has_coat(t), "R2: no coat of arms on {}", t.id);
        assert!(!t.is_crossroads(), "R3: no crossroads on {}", t.id);
    }
    assert_eq!(by_goods[&Some(Goods::Wine)], "PQRSTUVWX", "R1: 9 wine");
    assert_eq!(by_goods[&Some(Goods::Grain)], "DEFGHI", "R1: 6 grain");
    assert_eq!(by_goods[&Some(Goods::Cloth)], "KLMNO", "R1: 5 cloth");
    assert_eq!(by_goods[&None], "ABCJ", "R1: 4 without goods");
    let monasteries: Vec<&str> = tiles
        .iter()
        .filter(|t| t.has_monastery())
        .map(|t| t.letter.as_str())
        .collect();
    assert_eq!(monasteries, ["J"], "R2: one monastery");
}

#[test]
fn r3_bridges_join_nothing_and_pictures_between_two_roads() {
    let tile = |l: &str| {
        let cat = catalogue();
        cat.get(cat.find(&format!("traders-builders/{l}")).expect("defined"))
    };
    // B: two roads that each cross the tile, four separate corner fields.
    let b = tile("B");
    let roads: Vec<u8> = b
        .segments
        .iter()
        .filter(|s| s.kind == FeatureKind::Road)
        .map(|s| s.sides)
        .collect();
    assert_eq!(roads.len(), 2, "R3: two roads on B");
    assert!(roads.iter().all(|&m| m.count_ones() == 2));
    let fields = b.segments.iter().filter(|s| s.kind == FeatureKind::Field);
    assert_eq!(fields.count(), 4, "R3: four fields under the bridge");
    // C: road 2 ends at its farmhouse (no village: no crossroads, T3), which stands beside it.
    let c = tile("C");
    assert_eq!(c.segments[1].end, Some(RoadEnd::House));
    assert!(!c.village && !c.is_crossroads());
    assert_eq!(c.pictures[0].road, Some(1));
    // B and U: the picture between two roads stands beside both (T7 counts it for each).
    for l in ["B", "U"] {
        let t = tile(l);
        let p = &t.pictures[0];
        assert_eq!(p.roads.len(), 2, "R3: {l}");
        assert_eq!(p.road, p.roads.first().copied(), "R3: {l}");
        for &r in &p.roads {
            assert_eq!(t.segments[r as usize].beside[p.kind as usize], 1, "{l}");
        }
    }
}

/// The R2 table of `docs/reference/traders-builders.md` is the tile data: per letter the count,
/// the edges at rotation 0 and the goods symbol.
#[test]
fn r2_table_is_the_tile_data() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/reference/traders-builders.md"
    );
    let doc = std::fs::read_to_string(path).expect("the reference's T&B file");
    let mut rows = 0;
    for line in doc.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | kind | count | N E S W | what is on it | goods | pictures |
        if cells.len() != 8 || cells[1].len() != 1 || !cells[1].starts_with(char::is_uppercase) {
            continue;
        }
        let cat = catalogue();
        let t = cat.get(
            cat.find(&format!("traders-builders/{}", cells[1]))
                .expect("a row names a tile of the data"),
        );
        assert_eq!(cells[2].parse::<u32>().ok(), Some(t.count), "{}", t.id);
        assert_eq!(cells[3].replace(' ', ""), edge_letters(t), "{}", t.id);
        let goods = cells[5].split_whitespace().next().unwrap_or("");
        let data = match goods_of(t) {
            Some(Goods::Wine) => "wine",
            Some(Goods::Grain) => "grain",
            Some(Goods::Cloth) => "cloth",
            None => "",
        };
        assert_eq!(goods, data, "{}", t.id);
        rows += 1;
    }
    assert_eq!(rows, 24, "R2: the table has a row per tile");
}
