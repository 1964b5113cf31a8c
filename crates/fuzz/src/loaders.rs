//! The rules crate's data loaders on arbitrary text, and a walk over whatever they accept.

use rules::maps;
use rules::tiles;
use rules::{Pos, Side};

/// Parses one tile data file; see [`crate::catalogue`].
pub fn catalogue(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let cat = match tiles::parse(&[("fuzz.toml", text)]) {
        Ok(cat) => cat,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    for &idx in cat.in_id_order() {
        let design = cat.get(idx);
        assert_eq!(cat.find(&design.id), Some(idx), "find({})", design.id);
        let _ = (
            design.village_roads(),
            design.is_crossroads(),
            design.has_monastery(),
        );
        let _ = cat.set(&design.set).count();
    }
}

/// Parses one map file; see [`crate::map`].
pub fn map(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let map = match maps::parse("fuzz", text) {
        Ok(map) => map,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let bounds = map.bounds();
    assert_eq!(map.placeable().count(), map.placeable_count());
    // Every square of the outline and a ring around it.
    for y in bounds.min.y - 1..=bounds.max.y + 1 {
        for x in bounds.min.x - 1..=bounds.max.x + 1 {
            let p = Pos::new(x, y);
            let _ = (
                map.is_placeable(p),
                map.town_at(p),
                map.sale_abroad_sides(p).count(),
            );
            if let Some(city) = map.city_at(p) {
                let _ = map.city(city);
            }
            for side in Side::ALL {
                let _ = map.across(p, side);
            }
        }
    }
    for start in map.starts() {
        assert!(
            map.start_named(&start.name).is_some(),
            "start {}",
            start.name
        );
    }
    let _ = (map.info(), map.shared_info(), map.open_edge_squares());
    let _ = (
        map.cities().len(),
        map.towns().len(),
        map.border_prints().len(),
    );
}
