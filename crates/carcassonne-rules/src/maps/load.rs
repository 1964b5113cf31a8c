//! The map file format and its checks. The format is documented at the top of
//! `data/maps/france.toml` and in `docs/maps.md`; every mistake a file can hold has its own
//! [`MapError`], so a wrong file fails the build's tests with a message that names the square.

use super::{Across, BorderPrint, Cell, CityId, Grape, LargeCity, Map, Print, StartSquare, Town};
use crate::geometry::{Pos, Side};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};

/// What is wrong with a map file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MapError {
    #[error("map `{id}` is a built-in map's name or another map's already: give this one its own")]
    NameTaken { id: String },
    #[error("this process already keeps {most} maps given as text: no more are taken")]
    TooManyGiven { most: usize },
    #[error("{file}: not a valid map file: {message}")]
    Toml { file: String, message: String },
    #[error("the outline has no rows")]
    EmptyOutline,
    #[error("outline line {line}: expected `{expected} | cells`, found `{found}`")]
    RowLabel {
        line: usize,
        expected: i32,
        found: String,
    },
    #[error("outline row y={y} has {found} cells, the first row has {expected}")]
    RaggedRow {
        y: i32,
        found: usize,
        expected: usize,
    },
    #[error("outline cell {at}: `{token}` is not one character")]
    BadCell { at: Pos, token: String },
    #[error("outline cell {at}: mark `{mark}` is not declared by a start, city or town")]
    UnknownMark { at: Pos, mark: char },
    #[error("mark `{mark}` ({what}) must be {expected}")]
    MarkClass {
        mark: String,
        what: &'static str,
        expected: &'static str,
    },
    #[error("mark `{mark}` is declared twice")]
    MarkDeclaredTwice { mark: char },
    #[error("mark `{mark}` ({name}) does not appear in the outline")]
    MarkUnused { mark: char, name: String },
    #[error("mark `{mark}` ({name}) marks {count} squares; a start or town is one square")]
    MarkOnSeveralSquares {
        mark: char,
        name: String,
        count: usize,
    },
    #[error("the name `{0}` is used twice")]
    NameTwice(String),
    #[error("an entry has an empty name")]
    EmptyName,
    #[error("the map has no placeable square")]
    NoPlaceableSquare,
    #[error("the map has no start square (P2)")]
    NoStart,
    #[error("`{text}` is not a side reference like `3,4 N`")]
    BadSideRef { text: String },
    #[error("large city {city}: its squares are not all joined side to side")]
    CitySquaresApart { city: String },
    #[error("large city {city}: open edge {at} {side} is not a side of one of its squares")]
    OpenEdgeNotOnCity { city: String, at: Pos, side: Side },
    #[error("large city {city}: open edge {at} {side} does not face a placeable square")]
    OpenEdgeFacesNoSquare { city: String, at: Pos, side: Side },
    #[error("large city {city}: open edge {at} {side} is listed twice")]
    OpenEdgeTwice { city: String, at: Pos, side: Side },
    #[error(
        "large city {city}: side {at} {side} faces a placeable square but is not listed as open (P3)"
    )]
    CitySideNotOpen { city: String, at: Pos, side: Side },
    #[error("large cities {a} and {b} touch; draw them as one city or apart")]
    CitiesTouch { a: String, b: String },
    #[error("large city {city} has no open edge: no tile could ever join it")]
    CityUnreachable { city: String },
    #[error("border print {at} {side}: {at} is not a placeable square")]
    BorderOffMap { at: Pos, side: Side },
    #[error("border print {at} {side}: that side faces {across}, not the border (P4)")]
    NotABorderSide {
        at: Pos,
        side: Side,
        across: &'static str,
    },
    #[error("border print {at} {side} is listed twice")]
    BorderTwice { at: Pos, side: Side },
    #[error("border print {at} {side}: `neutral` is the default; list only printed sides")]
    NeutralListed { at: Pos, side: Side },
    #[error(
        "start square {start} has a printed border side {side}: the random start tile might not fit"
    )]
    StartOnPrintedBorder { start: String, side: Side },
    #[error("start square {start} lies across an open edge of large city {city}")]
    StartNextToCity { start: String, city: String },
}

// ---------------------------------------------------------------------------------------------
// The file, as written.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDef {
    name: String,
    outline: String,
    #[serde(default)]
    start: Vec<StartDef>,
    #[serde(default)]
    city: Vec<CityDef>,
    #[serde(default)]
    town: Vec<TownDef>,
    #[serde(default)]
    border: Vec<BorderDef>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StartDef {
    mark: String,
    name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CityDef {
    mark: String,
    name: String,
    #[serde(default)]
    coats: u8,
    #[serde(default)]
    open: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TownDef {
    mark: String,
    name: String,
    grape: Option<Grape>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BorderDef {
    side: String,
    print: PrintDef,
    country: Option<String>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
enum PrintDef {
    Neutral,
    Road,
    City,
    CityCoat,
}

/// A side reference `"x,y S"`: a square and one of its sides.
fn side_ref(text: &str) -> Result<(Pos, Side), MapError> {
    let bad = || MapError::BadSideRef { text: text.into() };
    let (xy, side) = text.trim().split_once(' ').ok_or_else(bad)?;
    let (x, y) = xy.split_once(',').ok_or_else(bad)?;
    let x = x.trim().parse().map_err(|_| bad())?;
    let y = y.trim().parse().map_err(|_| bad())?;
    let side = side.trim().parse().map_err(|_| bad())?;
    Ok((Pos::new(x, y), side))
}

/// Which declaration a mark belongs to.
#[derive(Clone, Copy)]
enum Owner {
    Start,
    City(usize),
    Town,
}

fn check_mark(mark: &str, what: &'static str) -> Result<char, MapError> {
    let (ok, expected): (fn(char) -> bool, _) = match what {
        "start" => (|c| c.is_ascii_digit(), "one digit 0-9"),
        "city" => (|c| c.is_ascii_uppercase(), "one upper-case letter A-Z"),
        _ => (|c| c.is_ascii_lowercase(), "one lower-case letter a-z"),
    };
    let mut chars = mark.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if ok(c) => Ok(c),
        _ => Err(MapError::MarkClass {
            mark: mark.into(),
            what,
            expected,
        }),
    }
}

/// Parses and checks one map file. `id` is the map's stable id (its file name without `.toml`).
pub fn parse(id: &str, text: &str) -> Result<Map, MapError> {
    let file: FileDef = toml::from_str(text).map_err(|e| MapError::Toml {
        file: format!("{id}.toml"),
        message: e.to_string(),
    })?;

    // Names: non-empty and unique over starts, cities and towns (setups name start squares).
    let mut names = BTreeSet::new();
    let all_names = file
        .start
        .iter()
        .map(|s| &s.name)
        .chain(file.city.iter().map(|c| &c.name))
        .chain(file.town.iter().map(|t| &t.name));
    for n in all_names {
        if n.trim().is_empty() {
            return Err(MapError::EmptyName);
        }
        if !names.insert(n.as_str()) {
            return Err(MapError::NameTwice(n.clone()));
        }
    }

    // Marks: each declared once, in its class.
    let mut owners: BTreeMap<char, Owner> = BTreeMap::new();
    let mut declare = |mark: &str, what, owner| -> Result<(), MapError> {
        let c = check_mark(mark, what)?;
        match owners.insert(c, owner) {
            Some(_) => Err(MapError::MarkDeclaredTwice { mark: c }),
            None => Ok(()),
        }
    };
    for s in &file.start {
        declare(&s.mark, "start", Owner::Start)?;
    }
    for (i, c) in file.city.iter().enumerate() {
        declare(&c.mark, "city", Owner::City(i))?;
    }
    for t in &file.town {
        declare(&t.mark, "town", Owner::Town)?;
    }

    // The outline: rows north to south, each `y | c c c`, the last row y = 0.
    let rows: Vec<&str> = file
        .outline
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect();
    if rows.is_empty() {
        return Err(MapError::EmptyOutline);
    }
    let height = rows.len() as i32;
    let mut width = 0usize;
    let mut grid: Vec<Vec<char>> = vec![Vec::new(); rows.len()];
    for (line, row) in rows.iter().enumerate() {
        let y = height - 1 - line as i32;
        let label_err = || MapError::RowLabel {
            line: line + 1,
            expected: y,
            found: row.trim().to_string(),
        };
        let (label, cells) = row.split_once('|').ok_or_else(label_err)?;
        if label.trim().parse::<i32>().ok() != Some(y) {
            return Err(label_err());
        }
        let tokens: Vec<&str> = cells.split_whitespace().collect();
        if line == 0 {
            width = tokens.len();
        } else if tokens.len() != width {
            return Err(MapError::RaggedRow {
                y,
                found: tokens.len(),
                expected: width,
            });
        }
        let g = &mut grid[y as usize];
        for (x, tok) in tokens.iter().enumerate() {
            let mut cs = tok.chars();
            match (cs.next(), cs.next()) {
                (Some(c), None) => g.push(c),
                _ => {
                    return Err(MapError::BadCell {
                        at: Pos::new(x as i32, y),
                        token: (*tok).to_string(),
                    });
                }
            }
        }
    }
    let width = width as i32;

    // Cells, and the squares of each mark.
    let mut cells = vec![Cell::Off; (width * height) as usize];
    let mut marked: BTreeMap<char, Vec<Pos>> = BTreeMap::new();
    for y in 0..height {
        for x in 0..width {
            let at = Pos::new(x, y);
            let c = grid[y as usize][x as usize];
            let cell = match c {
                '.' => Cell::Off,
                '#' => Cell::Placeable,
                _ => match owners.get(&c) {
                    Some(Owner::City(i)) => Cell::City(CityId(*i as u8)),
                    Some(_) => Cell::Placeable,
                    None => return Err(MapError::UnknownMark { at, mark: c }),
                },
            };
            if !matches!(c, '.' | '#') {
                marked.entry(c).or_default().push(at);
            }
            cells[(y * width + x) as usize] = cell;
        }
    }
    if !cells.contains(&Cell::Placeable) {
        return Err(MapError::NoPlaceableSquare);
    }
    let one_square = |mark: &str, name: &str| -> Result<Pos, MapError> {
        let c = mark.chars().next().unwrap_or(' ');
        match marked.get(&c).map(Vec::as_slice) {
            None | Some([]) => Err(MapError::MarkUnused {
                mark: c,
                name: name.into(),
            }),
            Some([p]) => Ok(*p),
            Some(ps) => Err(MapError::MarkOnSeveralSquares {
                mark: c,
                name: name.into(),
                count: ps.len(),
            }),
        }
    };

    let mut map = Map {
        id: id.to_string(),
        name: file.name,
        width,
        height,
        cells,
        across: Vec::new(),
        starts: Vec::new(),
        cities: Vec::new(),
        towns: Vec::new(),
        borders: Vec::new(),
        shared_info: std::sync::OnceLock::new(),
    };

    // P2 start squares and P5 towns: one placeable square each (placeable by construction).
    for s in &file.start {
        let pos = one_square(&s.mark, &s.name)?;
        map.starts.push(StartSquare {
            name: s.name.clone(),
            mark: s.mark.chars().next().unwrap_or(' '),
            pos,
        });
    }
    if map.starts.is_empty() {
        return Err(MapError::NoStart);
    }
    for t in &file.town {
        let pos = one_square(&t.mark, &t.name)?;
        map.towns.push(Town {
            name: t.name.clone(),
            mark: t.mark.chars().next().unwrap_or(' '),
            pos,
            grape: t.grape,
        });
    }

    // P3 large cities: joined squares; the open edges are exactly the sides facing the land.
    for (i, c) in file.city.iter().enumerate() {
        let id = CityId(i as u8);
        let mark = c.mark.chars().next().unwrap_or(' ');
        let mut squares = marked.get(&mark).cloned().unwrap_or_default();
        if squares.is_empty() {
            return Err(MapError::MarkUnused {
                mark,
                name: c.name.clone(),
            });
        }
        squares.sort();
        if !joined(&squares) {
            return Err(MapError::CitySquaresApart {
                city: c.name.clone(),
            });
        }
        let mut open = BTreeSet::new();
        for text in &c.open {
            let (at, side) = side_ref(text)?;
            let err_ctx = (c.name.clone(), at, side);
            if map.cell(at) != Cell::City(id) {
                let (city, at, side) = err_ctx;
                return Err(MapError::OpenEdgeNotOnCity { city, at, side });
            }
            if map.cell(at.step(side)) != Cell::Placeable {
                let (city, at, side) = err_ctx;
                return Err(MapError::OpenEdgeFacesNoSquare { city, at, side });
            }
            if !open.insert((at, side)) {
                let (city, at, side) = err_ctx;
                return Err(MapError::OpenEdgeTwice { city, at, side });
            }
        }
        for &at in &squares {
            for side in Side::ALL {
                match map.cell(at.step(side)) {
                    Cell::Placeable if !open.contains(&(at, side)) => {
                        return Err(MapError::CitySideNotOpen {
                            city: c.name.clone(),
                            at,
                            side,
                        });
                    }
                    Cell::City(other) if other != id => {
                        return Err(MapError::CitiesTouch {
                            a: c.name.clone(),
                            b: file.city[other.index()].name.clone(),
                        });
                    }
                    _ => {}
                }
            }
        }
        if open.is_empty() {
            return Err(MapError::CityUnreachable {
                city: c.name.clone(),
            });
        }
        map.cities.push(LargeCity {
            name: c.name.clone(),
            mark,
            squares,
            coats: c.coats,
            open: open.into_iter().collect(),
        });
    }

    // What lies across every side, before border prints.
    map.across = (0..width * height)
        .map(|i| {
            let p = Pos::new(i % width, i / width);
            Side::ALL.map(|s| base_across(&map, p, s))
        })
        .collect();

    // P4 border prints: only on real border sides of placeable squares, once each.
    let mut seen = BTreeSet::new();
    for b in &file.border {
        let (at, side) = side_ref(&b.side)?;
        if !map.is_placeable(at) {
            return Err(MapError::BorderOffMap { at, side });
        }
        match map.across(at, side) {
            Across::Border(_) => {}
            Across::Square(_) => {
                return Err(MapError::NotABorderSide {
                    at,
                    side,
                    across: "a placeable square",
                });
            }
            Across::LargeCity { .. } | Across::OffMap => {
                return Err(MapError::NotABorderSide {
                    at,
                    side,
                    across: "a large city",
                });
            }
        }
        if !seen.insert((at, side)) {
            return Err(MapError::BorderTwice { at, side });
        }
        let print = match b.print {
            PrintDef::Neutral => return Err(MapError::NeutralListed { at, side }),
            PrintDef::Road => Print::Road,
            PrintDef::City => Print::City { coat: false },
            PrintDef::CityCoat => Print::City { coat: true },
        };
        if let Some(i) = map.index(at) {
            map.across[i][side.index()] = Across::Border(print);
        }
        map.borders.push(BorderPrint {
            pos: at,
            side,
            print,
            country: b.country.clone(),
        });
    }
    map.borders.sort_by_key(|b| (b.pos, b.side));

    // A start square takes a tile that nobody chose (P2): no side may demand an edge of it.
    for s in &map.starts {
        for side in Side::ALL {
            match map.across(s.pos, side) {
                Across::Border(Print::Neutral) | Across::Square(_) => {}
                Across::Border(_) => {
                    return Err(MapError::StartOnPrintedBorder {
                        start: s.name.clone(),
                        side,
                    });
                }
                Across::LargeCity { city, .. } => {
                    return Err(MapError::StartNextToCity {
                        start: s.name.clone(),
                        city: map.city(city).name.clone(),
                    });
                }
                Across::OffMap => {}
            }
        }
    }
    Ok(map)
}

/// What lies across `side` of `p` from the outline alone (every border neutral).
fn base_across(map: &Map, p: Pos, side: Side) -> Across {
    if map.cell(p) != Cell::Placeable {
        return Across::OffMap;
    }
    let q = p.step(side);
    match map.cell(q) {
        Cell::Placeable => Across::Square(q),
        Cell::City(city) => Across::LargeCity { city, square: q },
        Cell::Off => Across::Border(Print::Neutral),
    }
}

/// Are the squares one orthogonally connected group?
fn joined(squares: &[Pos]) -> bool {
    let Some(&first) = squares.first() else {
        return false;
    };
    let mut seen = BTreeSet::from([first]);
    let mut todo = vec![first];
    while let Some(p) = todo.pop() {
        for s in Side::ALL {
            let q = p.step(s);
            if squares.contains(&q) && seen.insert(q) {
                todo.push(q);
            }
        }
    }
    seen.len() == squares.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn side_refs_parse_and_refuse_garbage() {
        assert_eq!(side_ref("3,-4 W"), Ok((Pos::new(3, -4), Side::W)));
        assert_eq!(side_ref(" 10,2  N "), Ok((Pos::new(10, 2), Side::N)));
        for bad in ["3,4", "3 4 N", "x,4 N", "3,4 Q", ""] {
            assert!(side_ref(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn joined_squares() {
        assert!(joined(&[Pos::new(0, 0), Pos::new(1, 0), Pos::new(1, 1)]));
        assert!(!joined(&[Pos::new(0, 0), Pos::new(1, 1)]));
    }
}
