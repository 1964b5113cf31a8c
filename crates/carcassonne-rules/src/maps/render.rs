//! A plain-text picture of a map, for a person at a terminal: squares, start squares, large
//! cities with their open edges, towns with their grape colour, border prints and, optionally,
//! chips. Each square is 3 characters wide; the lines between squares show the sides.
//!
//! ```text
//!  .   placeable square        [1]  start square (legend: its name)
//!  PPP large-city square       (p)  town buying purple (b light blue, o orange)
//!  ?   chip, face down         o2   chip, face up: grape and value
//!  -- | neutral border         r    printed road      c city      C city with coat of arms
//!  :   open edge of a large city
//! ```

use super::{Across, Cell, Chip, Map, Print};
use crate::geometry::{Pos, Side};
use std::fmt::Write;

/// How a chip is shown: `None` is a face-down chip ("a chip lies here"), `Some` a face-up one.
pub type ShownChip = Option<Chip>;

/// The map as text, with a legend. `chips` overlays chips on their squares; pass face-down chips
/// as `None` wherever the viewer may not know them (B9).
pub fn render(map: &Map, chips: &[(Pos, ShownChip)]) -> String {
    render_with(map, |p| {
        let (_, shown) = chips.iter().find(|(q, _)| *q == p)?;
        Some(match shown {
            None => " ? ".into(),
            Some(c) => format!(" {}{}", c.grape.letter(), c.value),
        })
    })
}

/// The map as text, with `overlay` drawing over any square it answers for (3 characters, padded
/// or cut to fit). This is how a game in progress is drawn: the engine passes its tiles, meeples
/// and face-down chips; the map supplies everything else.
pub fn render_with(map: &Map, overlay: impl Fn(Pos) -> Option<String>) -> String {
    let b = map.bounds();
    let mut out = String::new();
    let _ = writeln!(out, "{} ({}), x east, y north", map.name, map.id);
    out.push_str("    ");
    for x in b.min.x..=b.max.x {
        let _ = write!(out, "{x:^3} ");
    }
    out.push('\n');
    for y in (b.min.y..=b.max.y).rev() {
        // The sides north of row y.
        out.push_str("    ");
        for x in b.min.x..=b.max.x {
            out.push(corner(map, Pos::new(x, y + 1)));
            out.push_str(horizontal(map, Pos::new(x, y), Side::N));
        }
        out.push(corner(map, Pos::new(b.max.x + 1, y + 1)));
        out.push('\n');
        // The squares of row y, with the sides between them.
        let _ = write!(out, "{y:>3} ");
        for x in b.min.x..=b.max.x {
            let p = Pos::new(x, y);
            out.push(vertical(map, p, Side::W));
            match overlay(p) {
                Some(text) => {
                    let cut: String = text.chars().chain("   ".chars()).take(3).collect();
                    out.push_str(&cut);
                }
                None => out.push_str(&square(map, p)),
            }
        }
        out.push(vertical(map, Pos::new(b.max.x, y), Side::E));
        out.push('\n');
    }
    out.push_str("    ");
    for x in b.min.x..=b.max.x {
        out.push(corner(map, Pos::new(x, b.min.y)));
        out.push_str(horizontal(map, Pos::new(x, b.min.y), Side::S));
    }
    out.push(corner(map, Pos::new(b.max.x + 1, b.min.y)));
    out.push('\n');
    // No trailing blanks: the picture is easier to diff and paste.
    let mut out: String = out.lines().map(|l| format!("{}\n", l.trim_end())).collect();
    legend(map, &mut out);
    out
}

fn square(map: &Map, p: Pos) -> String {
    match map.cell(p) {
        Cell::Off => "   ".into(),
        Cell::City(id) => map.city(id).mark.to_string().repeat(3),
        Cell::Placeable => {
            if let Some(s) = map.starts().iter().find(|s| s.pos == p) {
                format!("[{}]", s.mark)
            } else if let Some(t) = map.town_at(p) {
                format!("({})", t.grape.map_or('-', |g| g.letter()))
            } else {
                " . ".into()
            }
        }
    }
}

/// What the side between `p` and its neighbour across `side` looks like, seen from a placeable
/// square when there is one.
fn side_kind(map: &Map, p: Pos, side: Side) -> SideKind {
    let q = p.step(side);
    let (a, b) = (map.cell(p), map.cell(q));
    let from = |p: Pos, s: Side| match map.across(p, s) {
        Across::Border(print) => SideKind::Border(print),
        Across::LargeCity { .. } => SideKind::Open,
        Across::Square(_) | Across::OffMap => SideKind::Inside,
    };
    match (a, b) {
        (Cell::Placeable, _) => from(p, side),
        (_, Cell::Placeable) => from(q, side.opposite()),
        (Cell::Off, Cell::Off) => SideKind::Outside,
        (Cell::City(x), Cell::City(y)) if x == y => SideKind::Inside,
        _ => SideKind::Wall,
    }
}

enum SideKind {
    Outside,
    Inside,
    Open,
    Wall,
    Border(Print),
}

fn horizontal(map: &Map, p: Pos, side: Side) -> &'static str {
    match side_kind(map, p, side) {
        SideKind::Outside | SideKind::Inside => "   ",
        SideKind::Open => " : ",
        SideKind::Wall | SideKind::Border(Print::Neutral) => "---",
        SideKind::Border(Print::Road) => "-r-",
        SideKind::Border(Print::City { coat: false }) => "-c-",
        SideKind::Border(Print::City { coat: true }) => "-C-",
    }
}

fn vertical(map: &Map, p: Pos, side: Side) -> char {
    match side_kind(map, p, side) {
        SideKind::Outside | SideKind::Inside => ' ',
        SideKind::Open => ':',
        SideKind::Wall | SideKind::Border(Print::Neutral) => '|',
        SideKind::Border(Print::Road) => 'r',
        SideKind::Border(Print::City { coat: false }) => 'c',
        SideKind::Border(Print::City { coat: true }) => 'C',
    }
}

/// The corner at the south-west of square `p`: `+` where drawn sides meet or turn, `|` or `-`
/// where a side runs straight on.
fn corner(map: &Map, p: Pos) -> char {
    let drawn = |a: Pos, side: Side| {
        !matches!(
            side_kind(map, a, side),
            SideKind::Outside | SideKind::Inside
        )
    };
    let (ne, sw) = (p, Pos::new(p.x - 1, p.y - 1));
    let vertical = drawn(ne, Side::W) || drawn(sw, Side::E);
    let horizontal = drawn(ne, Side::S) || drawn(sw, Side::N);
    match (vertical, horizontal) {
        (false, false) => ' ',
        (true, false) => '|',
        (false, true) => '-',
        (true, true) => '+',
    }
}

fn legend(map: &Map, out: &mut String) {
    for s in map.starts() {
        let _ = writeln!(out, "[{}] start square {} at {}", s.mark, s.name, s.pos);
    }
    for c in map.cities() {
        let m = c.mark;
        let open: Vec<String> = c.open.iter().map(|(p, s)| format!("{p} {s}")).collect();
        let _ = writeln!(
            out,
            "{m}{m}{m} large city {}: {} square(s), {} coat(s) of arms, open edges {}",
            c.name,
            c.squares.len(),
            c.coats,
            open.join(", ")
        );
    }
    for t in map.towns() {
        let g = t.grape.map_or("no grape".into(), |g| format!("{g:?}"));
        let _ = writeln!(
            out,
            "({}) town {} at {}: {g}",
            t.grape.map_or('-', |g| g.letter()),
            t.name,
            t.pos
        );
    }
    for b in map.border_prints() {
        let what = match b.print {
            Print::Neutral => "neutral",
            Print::Road => "road",
            Print::City { coat: false } => "city",
            Print::City { coat: true } => "city with coat of arms",
        };
        let to = b
            .country
            .as_deref()
            .map_or(String::new(), |c| format!(" to {c}"));
        let _ = writeln!(out, "border {} {}: {what}{to}", b.pos, b.side);
    }
}
