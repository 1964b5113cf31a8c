//! The France map (P6) and the Map Chips of France setup (P2, P7), checked against the loaded
//! data: every P6 constraint, every P7 constraint over 10,000 seeds per pair of start squares, the
//! P2 start choice, the queries the engine will call, and the text rendering.

use carcassonne_rules::geometry::{Pos, Side};
use carcassonne_rules::maps::{
    self, Across, Chip, Grape, Map, MapSetupError, Print, StartChoice, chip_squares, choose_starts,
    lay_chips, render,
};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use std::collections::{BTreeMap, BTreeSet};

fn france() -> &'static Map {
    match maps::map("france") {
        Some(m) => m,
        None => panic!("the france map is not built in"),
    }
}

/// Where `p` lies in the bounding box, as fractions from the west and from the south (0..=1).
fn frac(map: &Map, p: Pos) -> (f64, f64) {
    let b = map.bounds();
    (
        f64::from(p.x - b.min.x) / f64::from(b.width() - 1),
        f64::from(p.y - b.min.y) / f64::from(b.height() - 1),
    )
}

fn orth(a: Pos, b: Pos) -> bool {
    (a.x - b.x).abs() + (a.y - b.y).abs() == 1
}

#[test]
fn p6_outline_is_one_piece_shaped_like_france_for_110_to_120_tiles() {
    let map = france();
    let n = map.placeable_count();
    // 110-120 tiles should fill most of the map but not all of it.
    assert!((135..=170).contains(&n), "{n} placeable squares");
    let b = map.bounds();
    assert_eq!(b.min, Pos::new(0, 0));
    let ratio = f64::from(b.width()) / f64::from(b.height());
    assert!(
        (0.85..=1.2).contains(&ratio),
        "France is about as wide as tall: {ratio}"
    );
    // One piece: every placeable square reaches every other through placeable squares.
    let all: BTreeSet<Pos> = map.placeable().collect();
    assert_eq!(all.len(), n);
    let first = *all.iter().next().unwrap_or(&Pos::new(0, 0));
    let mut seen = BTreeSet::from([first]);
    let mut todo = vec![first];
    while let Some(p) = todo.pop() {
        for s in Side::ALL {
            if let Across::Square(q) = map.across(p, s) {
                assert!(all.contains(&q));
                if seen.insert(q) {
                    todo.push(q);
                }
            }
        }
    }
    assert_eq!(seen.len(), n, "the map falls apart");
    // The hexagon: the west (Brittany) reaches further out than the south-west (Atlantic) coast,
    // and the north tip (Dunkirk) is narrow.
    let row = |y: i32| map.placeable().filter(|p| p.y == y).count();
    assert!(
        row(b.max.y) <= 3 && row(b.min.y) <= 4,
        "narrow north tip and Roussillon"
    );
    let west_of = |y: i32| map.placeable().filter(|p| p.y == y).map(|p| p.x).min();
    let brittany = (8..=11).filter_map(west_of).min().unwrap_or(99);
    let aquitaine = (2..=6).filter_map(west_of).min().unwrap_or(0);
    assert!(
        brittany + 3 <= aquitaine,
        "Brittany sticks out west: {brittany} vs {aquitaine}"
    );
}

#[test]
fn p2_p6_start_squares_near_nancy_le_mans_limoges() {
    let map = france();
    let names: Vec<&str> = map.starts().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["Nancy", "Le Mans", "Limoges"]);
    let at = |name: &str| {
        let i = map.start_named(name).unwrap_or(usize::MAX);
        frac(map, map.starts()[i].pos)
    };
    let (x, y) = at("Nancy");
    assert!(x > 0.65 && y > 0.55, "Nancy north-east: {x} {y}");
    let (x, y) = at("Le Mans");
    assert!(x < 0.45 && y > 0.5, "Le Mans north-west: {x} {y}");
    let (x, y) = at("Limoges");
    assert!(
        x < 0.5 && (0.25..0.6).contains(&y),
        "Limoges centre-west: {x} {y}"
    );
    for s in map.starts() {
        assert!(map.is_placeable(s.pos));
        assert!(
            map.town_at(s.pos).is_none(),
            "P2: a start square is not a town"
        );
        for side in Side::ALL {
            assert!(
                matches!(
                    map.across(s.pos, side),
                    Across::Square(_) | Across::Border(Print::Neutral)
                ),
                "{} {side}",
                s.name
            );
        }
    }
}

#[test]
fn p3_p6_large_cities_near_their_places_with_coats_and_open_edges() {
    let map = france();
    assert!(map.cities().len() >= 4);
    for (i, c) in map.cities().iter().enumerate() {
        assert!(c.coats >= 1, "{} has a printed coat of arms", c.name);
        assert!(!c.open.is_empty(), "{} has open edges", c.name);
        for &p in &c.squares {
            assert!(!map.is_placeable(p), "P3: no tile on {}", c.name);
            assert_eq!(map.city_at(p).map(|id| id.index()), Some(i));
        }
        for &(p, side) in &c.open {
            let q = p.step(side);
            assert!(map.is_placeable(q));
            match map.across(q, side.opposite()) {
                Across::LargeCity { city, square } => {
                    assert_eq!((city.index(), square), (i, p), "{}", c.name)
                }
                other => panic!("{} {p} {side}: {other:?}", c.name),
            }
        }
    }
    let city = |name: &str| {
        let c = map.cities().iter().find(|c| c.name == name);
        let c = c.unwrap_or_else(|| panic!("no large city {name}"));
        let (sx, sy) = c
            .squares
            .iter()
            .map(|&p| frac(map, p))
            .fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
        let n = c.squares.len() as f64;
        (sx / n, sy / n)
    };
    let (x, y) = city("Paris");
    assert!(
        (0.4..0.7).contains(&x) && y > 0.6,
        "Paris north-centre: {x} {y}"
    );
    let (x, y) = city("Lyon");
    assert!(x > 0.6 && (0.25..0.55).contains(&y), "Lyon: {x} {y}");
    let (x, y) = city("Marseille");
    assert!(x > 0.6 && y < 0.2, "Marseille: {x} {y}");
    let (x, y) = city("Bordeaux");
    assert!(x < 0.45 && (0.15..0.4).contains(&y), "Bordeaux: {x} {y}");
    let (x, y) = city("Lille");
    assert!((0.45..0.75).contains(&x) && y > 0.9, "Lille: {x} {y}");
    assert!(
        map.cities()
            .iter()
            .any(|c| c.name == "Paris" && c.squares.len() >= 2)
    );
}

#[test]
fn p5_p6_at_least_twelve_towns_four_per_grape_spread_over_the_map() {
    let map = france();
    let towns = map.towns();
    assert!(towns.len() >= 12, "{} towns", towns.len());
    let starts: Vec<Pos> = map.starts().iter().map(|s| s.pos).collect();
    for t in towns {
        assert!(
            map.is_placeable(t.pos),
            "P5: {} is an ordinary square",
            t.name
        );
        assert!(!starts.contains(&t.pos));
        assert_eq!(map.town_at(t.pos).map(|x| &x.name), Some(&t.name));
    }
    for g in Grape::ALL {
        let of: Vec<(f64, f64)> = towns
            .iter()
            .filter(|t| t.grape == Some(g))
            .map(|t| frac(map, t.pos))
            .collect();
        assert!(of.len() >= 4, "{g:?}: {} towns", of.len());
        // Spread: each colour reaches over at least half the map both ways.
        let span = |f: fn(&(f64, f64)) -> f64| {
            let v: Vec<f64> = of.iter().map(f).collect();
            v.iter().copied().fold(f64::MIN, f64::max) - v.iter().copied().fold(f64::MAX, f64::min)
        };
        assert!(
            span(|p| p.0) >= 0.5 && span(|p| p.1) >= 0.5,
            "{g:?} towns bunch up"
        );
    }
    assert!(
        towns.iter().all(|t| t.grape.is_some()),
        "every French town buys a colour"
    );
    // Every quarter of the map has towns.
    for (west, south) in [(true, true), (true, false), (false, true), (false, false)] {
        let n = towns
            .iter()
            .filter(|t| {
                let (x, y) = frac(map, t.pos);
                (x < 0.5) == west && (y < 0.5) == south
            })
            .count();
        assert!(n >= 2, "quarter west={west} south={south} has {n} towns");
    }
}

/// Where each neighbour country lies on the map, and which sides face it (P6).
fn country_fits(country: &str, (x, y): (f64, f64), side: Side) -> bool {
    match country {
        "Belgium" => y > 0.75 && x > 0.45 && matches!(side, Side::N | Side::E),
        "Luxembourg" => y > 0.65 && x > 0.6 && matches!(side, Side::N | Side::E),
        "Germany" => y > 0.5 && x > 0.75 && matches!(side, Side::N | Side::E),
        "Switzerland" => (0.3..0.7).contains(&y) && x > 0.7 && matches!(side, Side::E | Side::S),
        "Italy" => y < 0.45 && x > 0.75 && side == Side::E,
        "Spain" => y < 0.2 && (0.15..0.7).contains(&x) && matches!(side, Side::S | Side::W),
        _ => false,
    }
}

#[test]
fn p4_p6_border_prints_on_land_borders_only_roads_and_cities_with_coats() {
    let map = france();
    let prints = map.border_prints();
    assert!(
        prints.len() >= 8,
        "{} printed border connections",
        prints.len()
    );
    let roads = prints.iter().filter(|b| b.print == Print::Road).count();
    let coats = prints
        .iter()
        .filter(|b| b.print == Print::City { coat: true })
        .count();
    assert!(
        roads >= 2 && coats >= 2,
        "{roads} roads, {coats} cities with a coat"
    );
    let mut countries = BTreeSet::new();
    for b in prints {
        let country = b.country.as_deref().unwrap_or("?");
        // Sea coasts stay neutral: every print faces a land neighbour, from the right place.
        assert!(
            country_fits(country, frac(map, b.pos), b.side),
            "print {} {} towards {country} is not on that land border",
            b.pos,
            b.side
        );
        countries.insert(country);
        assert_eq!(map.across(b.pos, b.side), Across::Border(b.print));
        assert!(!map.is_placeable(b.pos.step(b.side)));
    }
    for c in ["Belgium", "Germany", "Switzerland", "Italy", "Spain"] {
        assert!(countries.contains(c), "no print towards {c}");
    }
}

#[test]
fn queries_the_engine_calls_answer_each_kind_of_side() {
    let map = france();
    assert_eq!(map.bounds().max, Pos::new(16, 15));
    // P1: a placeable square next to another.
    assert_eq!(
        map.across(Pos::new(6, 5), Side::E),
        Across::Square(Pos::new(7, 5))
    );
    // P3: a square below Paris faces its open edge; Paris itself is not placeable.
    let paris = map.cities().iter().position(|c| c.name == "Paris");
    match map.across(Pos::new(9, 10), Side::N) {
        Across::LargeCity { city, square } => {
            assert_eq!((Some(city.index()), square), (paris, Pos::new(9, 11)))
        }
        other => panic!("{other:?}"),
    }
    assert!(!map.is_placeable(Pos::new(9, 11)));
    assert_eq!(map.across(Pos::new(9, 11), Side::N), Across::OffMap);
    assert_eq!(map.across(Pos::new(-1, 3), Side::E), Across::OffMap);
    assert_eq!(map.across(Pos::new(0, 0), Side::E), Across::OffMap);
    // P4: Brest faces the Atlantic (neutral); Le Perthus prints a road.
    assert_eq!(
        map.across(Pos::new(0, 10), Side::W),
        Across::Border(Print::Neutral)
    );
    assert_eq!(
        map.across(Pos::new(0, 10), Side::N),
        Across::Border(Print::Neutral)
    );
    assert_eq!(
        map.across(Pos::new(9, 0), Side::S),
        Across::Border(Print::Road)
    );
    // P9: sale abroad sides: a road, a city with coat; not a city without coat.
    let sides = |x, y| map.sale_abroad_sides(Pos::new(x, y)).collect::<Vec<_>>();
    assert_eq!(sides(9, 0), [(Side::S, Print::Road)]);
    assert_eq!(
        sides(15, 9),
        [
            (Side::E, Print::Road),
            (Side::S, Print::City { coat: true })
        ]
    );
    assert_eq!(
        sides(8, 0),
        [],
        "P9 DECISION: a city without a coat sells nothing"
    );
    assert_eq!(sides(0, 10), []);
    assert_eq!(
        map.town_at(Pos::new(11, 12)).map(|t| t.grape),
        Some(Some(Grape::Purple))
    );
    assert!(
        map.town_at(Pos::new(14, 11)).is_none(),
        "Nancy is a start square, not a town"
    );
    // Every side of every placeable square is answered consistently from both sides.
    for p in map.placeable() {
        for s in Side::ALL {
            match map.across(p, s) {
                Across::Square(q) => assert_eq!(map.across(q, s.opposite()), Across::Square(p)),
                Across::LargeCity { square, .. } => assert_eq!(p.step(s), square),
                Across::Border(_) => assert!(!map.is_placeable(p.step(s))),
                Across::OffMap => panic!("{p} is placeable"),
            }
        }
    }
    assert_eq!(maps::ids().collect::<Vec<_>>(), ["france"]);
    assert!(maps::map("atlantis").is_none());
}

/// Every P7 constraint on one layout, checked from the map alone.
fn check_layout(map: &Map, starts: StartChoice, chips: &[(Pos, Chip)]) {
    let used = starts.squares(map);
    assert_eq!(chips.len(), 30);
    let mut per: BTreeMap<(Grape, u8), usize> = BTreeMap::new();
    for &(_, c) in chips {
        *per.entry((c.grape, c.value)).or_default() += 1;
    }
    for g in Grape::ALL {
        assert_eq!(
            (per.get(&(g, 1)), per.get(&(g, 2))),
            (Some(&6), Some(&4)),
            "{g:?}"
        );
    }
    let squares: BTreeSet<Pos> = chips.iter().map(|c| c.0).collect();
    assert_eq!(squares.len(), 30, "one chip per square");
    let open = map.open_edge_squares();
    for &p in &squares {
        assert!(map.is_placeable(p), "{p} is not a placeable square");
        assert!(map.city_at(p).is_none());
        assert!(map.town_at(p).is_none(), "chip on town {p}");
        assert!(
            map.starts().iter().all(|s| s.pos != p),
            "chip on start square {p}"
        );
        assert!(
            used.iter().all(|&u| !orth(u, p)),
            "chip {p} next to a used start"
        );
        assert!(!open.contains(&p), "chip {p} next to an open city edge");
        for side in Side::ALL {
            assert!(!matches!(map.across(p, side), Across::LargeCity { .. }));
            assert!(
                !squares.contains(&p.step(side)),
                "chips {p} and {} touch",
                p.step(side)
            );
        }
    }
}

/// Squared distance from `p` to the nearest chip.
fn gap2(p: Pos, chips: &[(Pos, Chip)]) -> i32 {
    chips
        .iter()
        .map(|(q, _)| (q.x - p.x).pow(2) + (q.y - p.y).pow(2))
        .min()
        .unwrap_or(i32::MAX)
}

#[test]
fn p7_chip_setup_succeeds_with_every_constraint_over_10000_seeds_per_start_pair() {
    let map = france();
    // Which of the two takes the start tile does not change where chips may lie (P7).
    for (a, b) in [(0, 1), (0, 2), (1, 2)] {
        let starts = StartChoice {
            start_tile: a,
            random_tile: b,
        };
        let eligible = chip_squares(map, starts);
        let mut close = 0;
        let mut layouts = BTreeSet::new();
        for seed in 0..10_000u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let chips = match lay_chips(map, starts, &mut rng) {
                Ok(c) => c,
                Err(e) => panic!("starts {a},{b} seed {seed}: {e}"),
            };
            check_layout(map, starts, &chips);
            // Spread evenly: no free square far from every chip, and in almost every layout
            // every free square is within a knight's move of a chip. (A layout of uniformly
            // random squares fails both: about half its layouts leave gaps of 3 or more.)
            let worst = eligible.iter().map(|&p| gap2(p, &chips)).max().unwrap_or(0);
            assert!(
                worst <= 13,
                "starts {a},{b} seed {seed}: a gap of {worst} (squared)"
            );
            close += usize::from(worst <= 5);
            if seed < 100 {
                layouts.insert(chips);
            }
        }
        assert!(
            close >= 9_500,
            "starts {a},{b}: only {close} of 10000 layouts are even"
        );
        assert!(layouts.len() >= 99, "the seed decides the layout");
    }
}

#[test]
fn p7_chips_are_spread_over_the_quarters_of_the_map() {
    let map = france();
    let starts = StartChoice {
        start_tile: 0,
        random_tile: 2,
    };
    let eligible = chip_squares(map, starts);
    let quarter = |p: &Pos| (p.x >= 8, p.y >= 8);
    for seed in 0..2_000u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let chips = lay_chips(map, starts, &mut rng).unwrap_or_default();
        for q in [(false, false), (false, true), (true, false), (true, true)] {
            let room = eligible.iter().filter(|p| quarter(p) == q).count() as f64;
            let fair = 30.0 * room / eligible.len() as f64;
            let got = chips.iter().filter(|(p, _)| quarter(p) == q).count() as f64;
            assert!(
                (got - fair).abs() <= 5.0,
                "seed {seed} quarter {q:?}: {got} vs {fair}"
            );
        }
    }
}

#[test]
fn p7_the_same_seed_lays_the_same_chips() {
    let map = france();
    let lay = |seed| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let starts = choose_starts(map, None, &mut rng);
        starts.and_then(|s| lay_chips(map, s, &mut rng))
    };
    assert_eq!(lay(7), lay(7));
    assert_ne!(lay(7), lay(8));
}

#[test]
fn p2_decision_two_of_three_start_squares_from_the_seed_all_pairs_alike() {
    let map = france();
    let mut count: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for seed in 0..12_000u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let c = choose_starts(map, None, &mut rng).unwrap_or(StartChoice {
            start_tile: 9,
            random_tile: 9,
        });
        assert_ne!(c.start_tile, c.random_tile);
        assert!(c.start_tile < 3 && c.random_tile < 3);
        *count.entry((c.start_tile, c.random_tile)).or_default() += 1;
    }
    assert_eq!(count.len(), 6, "every ordered pair occurs: {count:?}");
    for (pair, n) in count {
        assert!(
            (1_800..=2_200).contains(&n),
            "{pair:?} drawn {n} times of 12000"
        );
    }
}

#[test]
fn p2_start_squares_named_in_the_setup_draw_nothing() {
    let map = france();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let c = choose_starts(map, Some(["Limoges", "Nancy"]), &mut rng);
    assert_eq!(
        c,
        Ok(StartChoice {
            start_tile: 2,
            random_tile: 0
        })
    );
    let mut fresh = ChaCha8Rng::seed_from_u64(1);
    assert_eq!(rng.next_u64(), fresh.next_u64(), "no draw was used");
    assert_eq!(
        c.map(|c| c.squares(map)),
        Ok([Pos::new(7, 6), Pos::new(14, 11)])
    );
    assert!(matches!(
        choose_starts(map, Some(["Nancy", "Paris"]), &mut rng),
        Err(MapSetupError::UnknownStart { .. })
    ));
    assert_eq!(
        choose_starts(map, Some(["Nancy", "Nancy"]), &mut rng),
        Err(MapSetupError::SameStartTwice("Nancy".into()))
    );
}

/// The 3 characters that show square `p` in a rendering.
fn cell_text(text: &str, p: Pos, map: &Map) -> String {
    let rows: Vec<&str> = text.lines().collect();
    // Line 0 is the title, line 1 the x ruler; then a side line and a square line per row.
    let line = 2 + 2 * (map.bounds().max.y - p.y) as usize + 1;
    let col = 4 + 4 * p.x as usize + 1;
    rows.get(line)
        .and_then(|r| r.get(col..col + 3))
        .unwrap_or("")
        .to_string()
}

#[test]
fn render_shows_starts_cities_towns_prints_and_hides_face_down_chips() {
    let map = france();
    let text = render::render(map, &[]);
    for s in map.starts() {
        assert_eq!(
            cell_text(&text, s.pos, map),
            format!("[{}]", s.mark),
            "{}",
            s.name
        );
    }
    for t in map.towns() {
        let g = t.grape.map_or('-', |g| g.letter());
        assert_eq!(cell_text(&text, t.pos, map), format!("({g})"), "{}", t.name);
    }
    for c in map.cities() {
        for &p in &c.squares {
            assert_eq!(cell_text(&text, p, map), c.mark.to_string().repeat(3));
        }
    }
    assert_eq!(cell_text(&text, Pos::new(6, 5), map), " . ");
    assert_eq!(cell_text(&text, Pos::new(0, 0), map), "   ");
    // The road to Spain below Le Perthus (9,0): the side line under row 0.
    let under = text.lines().nth(2 + 2 * 16).unwrap_or("");
    assert_eq!(
        under.get(4 + 4 * 9 + 1..4 + 4 * 9 + 4),
        Some("-r-"),
        "{under}"
    );
    assert_eq!(text.matches("border ").count(), map.border_prints().len());

    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let starts = choose_starts(map, None, &mut rng);
    let chips = starts
        .and_then(|s| lay_chips(map, s, &mut rng))
        .unwrap_or_default();
    let hidden: Vec<(Pos, Option<Chip>)> = chips.iter().map(|&(p, _)| (p, None)).collect();
    let text = render::render(map, &hidden);
    for &(p, c) in &chips {
        assert_eq!(cell_text(&text, p, map), " ? ");
        let face_up = format!("{}{}", c.grape.letter(), c.value);
        assert!(!text.contains(&face_up), "a face-down chip shows {face_up}");
    }
    let shown: Vec<(Pos, Option<Chip>)> = chips.iter().map(|&(p, c)| (p, Some(c))).collect();
    let text = render::render(map, &shown);
    for &(p, c) in &chips {
        assert_eq!(
            cell_text(&text, p, map),
            format!(" {}{}", c.grape.letter(), c.value)
        );
    }
}

/// The P7 checker above must catch each kind of wrong layout, or the 10,000-seed test proves
/// nothing: break a good layout one way at a time and expect a failure every time.
#[test]
fn p7_the_layout_checker_catches_each_broken_constraint() {
    let map = france();
    let starts = StartChoice {
        start_tile: 0,
        random_tile: 1,
    };
    let [nancy, le_mans] = starts.squares(map);
    // Find a layout where chip 1 can be moved into each wrong place without touching the other
    // chips, so that each broken layout breaks exactly one constraint.
    let places = |good: &[(Pos, Chip)]| {
        let free = |p: Pos| {
            good[2..]
                .iter()
                .chain(&good[..1])
                .all(|(q, _)| *q != p && !orth(*q, p))
        };
        let town = map.towns().iter().map(|t| t.pos).find(|&p| free(p));
        let beside_start = Side::ALL
            .iter()
            .map(|&s| le_mans.step(s))
            .find(|&p| free(p));
        let beside_city = map.open_edge_squares().into_iter().find(|&p| free(p));
        let beside_chip = Side::ALL
            .iter()
            .map(|&s| good[0].0.step(s))
            .find(|&p| map.is_placeable(p) && good.iter().all(|(q, _)| *q != p));
        Some((town?, beside_start?, beside_city?, beside_chip?))
    };
    let (good, (town, beside_start, beside_city, beside_chip)) = (0..100u64)
        .find_map(|seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let good = lay_chips(map, starts, &mut rng).ok()?;
            let p = places(&good)?;
            Some((good, p))
        })
        .unwrap_or_else(|| panic!("no layout leaves room to break"));
    check_layout(map, starts, &good);
    let limoges = map.starts()[2].pos;
    let mut broken: Vec<(&str, Vec<(Pos, Chip)>)> = Vec::new();
    let mut moved = |what, to: Pos| {
        let mut v = good.clone();
        v[1].0 = to;
        broken.push((what, v));
    };
    moved("on a town", town);
    moved("on a used start", nancy);
    moved("on the unused start", limoges);
    moved("next to a used start", beside_start);
    moved("next to an open city edge", beside_city);
    moved("on a large city", Pos::new(9, 11));
    moved("off the map", Pos::new(0, 0));
    moved("next to another chip", beside_chip);
    let mut v = good.clone();
    v[0].1.value = 3 - v[0].1.value;
    broken.push(("a wrong value", v));
    let mut v = good.clone();
    v.pop();
    broken.push(("29 chips", v));
    for (what, layout) in broken {
        let caught = std::panic::catch_unwind(|| check_layout(map, starts, &layout)).is_err();
        assert!(caught, "the checker let a chip {what} pass");
    }
}

#[test]
fn render_with_draws_an_overlay_over_any_square_cut_to_three_characters() {
    let map = france();
    let text = render::render_with(map, |p| match (p.x, p.y) {
        (6, 10) => Some("D90".into()), // a tile on the Le Mans start square
        (5, 5) => Some("X".into()),    // padded
        (7, 5) => Some("long".into()), // cut
        _ => None,
    });
    assert_eq!(cell_text(&text, Pos::new(6, 10), map), "D90");
    assert_eq!(cell_text(&text, Pos::new(5, 5), map), "X  ");
    assert_eq!(cell_text(&text, Pos::new(7, 5), map), "lon");
    assert_eq!(
        cell_text(&text, Pos::new(14, 11), map),
        "[1]",
        "the rest is the map"
    );
}

#[test]
fn the_public_map_info_round_trips_and_matches_the_board() {
    let map = france();
    let info = map.info();
    let json = serde_json::to_string(&info).unwrap_or_default();
    assert!(
        json.len() < 8_000,
        "the map is small enough to send once: {} bytes",
        json.len()
    );
    assert!(
        json.contains(r#""print":{"kind":"city","coat":true}"#),
        "{json}"
    );
    let back: Result<maps::MapInfo, _> = serde_json::from_str(&json);
    assert_eq!(back.as_ref().ok(), Some(&info));
    let b = map.bounds();
    assert_eq!(info.outline.len(), b.height() as usize);
    for (row, line) in info.outline.iter().enumerate() {
        let y = b.max.y - row as i32;
        assert_eq!(line.chars().count(), b.width() as usize);
        for (x, c) in line.chars().enumerate() {
            let p = Pos::new(x as i32, y);
            assert_eq!(c == '#', map.is_placeable(p), "{p}");
            let city = map.city_at(p).map(|id| map.city(id).mark);
            assert_eq!(c.is_ascii_uppercase().then_some(c), city, "{p}");
        }
    }
    assert_eq!((info.starts.len(), info.towns.len()), (3, 15));
    assert_eq!(info.borders.as_slice(), map.border_prints());
}

#[test]
fn every_view_shares_the_maps_one_public_description() {
    let map = france();
    assert_eq!(*map.shared_info(), map.info());
    assert!(std::sync::Arc::ptr_eq(
        &map.shared_info(),
        &map.shared_info()
    ));
    // Two matches on the map: their views hold the same description (the differ relies on it to
    // skip comparing the printed map on every move).
    let view = |seed| {
        let setup =
            carcassonne_rules::Setup::new(carcassonne_rules::Colour::ALL[..2].to_vec(), seed)
                .map("france");
        carcassonne_rules::Game::start(setup).map(|(g, _)| g.view())
    };
    let (a, b) = (view(1), view(2));
    let info = |v: &Result<carcassonne_rules::View, _>| {
        v.as_ref()
            .ok()
            .and_then(|v| v.map.as_ref())
            .map(|m| m.info.clone())
    };
    match (info(&a), info(&b)) {
        (Some(x), Some(y)) => assert!(std::sync::Arc::ptr_eq(&x, &y)),
        other => panic!("no map in the views: {other:?}"),
    }
}
