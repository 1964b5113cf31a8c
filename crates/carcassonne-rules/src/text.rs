//! A game position as plain text, for a person at a terminal (the `scenario` binary): drawn from
//! the public view only, so it can never show a secret (B9). On a map (P1–P10) the map is drawn
//! around the tiles; on an open table, the rectangle around the placed tiles.
//!
//! Each square is 3 characters: the tile's letter (B1), its rotation in quarter turns clockwise
//! (0–3), and the initial of the colour of a meeple on it (`r g b y k p`; upper case for a large
//! meeple, I4) or a blank; `?` is a face-down chip (P7). Below the picture: scores, meeples, and on a map each player's chips.

use crate::geometry::Pos;
use crate::maps;
use crate::setup::Colour;
use crate::tiles::catalogue;
use crate::view::View;
use std::fmt::Write;

fn initial(c: Colour) -> char {
    match c {
        Colour::Red => 'r',
        Colour::Green => 'g',
        Colour::Blue => 'b',
        Colour::Yellow => 'y',
        Colour::Black => 'k',
        Colour::Pink => 'p',
    }
}

/// The 3-character picture of square `pos` in `view`, if anything lies there.
fn square(view: &View, pos: Pos) -> Option<String> {
    if let Some(t) = view.board.get(&pos.key()) {
        let cat = catalogue();
        let letter = cat
            .find(&t.tile)
            .map_or("?".to_string(), |i| cat.get(i).letter.clone());
        let meeple = view
            .meeples
            .values()
            .find(|m| m.pos == pos)
            .and_then(|m| Some((view.players.get(m.player as usize)?, m.figure)))
            .map_or(' ', |(p, figure)| match figure {
                crate::command::Figure::LargeMeeple => initial(p.colour).to_ascii_uppercase(),
                _ => initial(p.colour),
            });
        return Some(format!("{letter}{}{meeple}", t.rotation.quarters()));
    }
    let map = view.map.as_ref()?;
    map.chips.contains(&pos).then(|| " ? ".to_string())
}

/// The position in `view` as text.
pub fn board(view: &View) -> String {
    let mut out = match view.map.as_ref().and_then(|m| maps::map(&m.info.id)) {
        Some(map) => maps::render::render_with(map, |p| square(view, p)),
        None => open_table(view),
    };
    for (i, p) in view.players.iter().enumerate() {
        let _ = write!(
            out,
            "{:?} ({}): {} points, {} meeples",
            p.colour,
            initial(p.colour),
            p.score,
            p.meeples
        );
        if let Some(large) = p.large_meeples {
            let _ = write!(out, ", {large} large meeple");
        }
        if let Some(hand) = view.map.as_ref().and_then(|m| m.hands.get(i)) {
            let chips: Vec<String> = hand
                .iter()
                .map(|c| format!("{}{}", c.grape.letter(), c.value))
                .collect();
            let _ = write!(out, ", chips [{}]", chips.join(" "));
        }
        out.push('\n');
    }
    out
}

/// An open table: the rectangle around the placed tiles, one blank square around it.
fn open_table(view: &View) -> String {
    let cells: Vec<Pos> = view
        .board
        .keys()
        .filter_map(|k| {
            let (x, y) = k.split_once(',')?;
            Some(Pos::new(x.parse().ok()?, y.parse().ok()?))
        })
        .collect();
    let (Some(x0), Some(x1), Some(y0), Some(y1)) = (
        cells.iter().map(|p| p.x).min(),
        cells.iter().map(|p| p.x).max(),
        cells.iter().map(|p| p.y).min(),
        cells.iter().map(|p| p.y).max(),
    ) else {
        return String::from("(no tiles)\n");
    };
    let mut out = String::from("open table, x east, y north\n    ");
    for x in x0 - 1..=x1 + 1 {
        let _ = write!(out, "{x:^3} ");
    }
    out.push('\n');
    for y in (y0 - 1..=y1 + 1).rev() {
        let _ = write!(out, "{y:>3} ");
        for x in x0 - 1..=x1 + 1 {
            let s = square(view, Pos::new(x, y)).unwrap_or_else(|| " . ".into());
            let _ = write!(out, "{s} ");
        }
        out.push('\n');
    }
    out
}
