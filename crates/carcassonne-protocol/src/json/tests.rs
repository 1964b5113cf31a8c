//! The writer against the `Value` route, byte for byte.

use super::decision::push_integer;
use super::*;
use serde::ser;
use std::collections::{BTreeMap, HashMap};

fn same<T: Serialize>(v: &T) {
    let via_value =
        serde_json::to_string(&serde_json::to_value(v).expect("to_value")).expect("to_string");
    let mut out = Vec::new();
    write_value(&mut out, v).expect("write_value");
    assert_eq!(String::from_utf8(out).expect("UTF-8"), via_value);
}

#[derive(Serialize)]
struct Unsorted {
    zeta: u8,
    alpha: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<u8>,
    mid: Vec<Inner>,
    #[serde(flatten)]
    flat: Inner,
}

#[derive(Serialize)]
struct Inner {
    y: i64,
    x: f32,
    b: bool,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Tagged {
    Place { player: u8, at: (i32, i32) },
    Other { zz: char, aa: () },
}

#[derive(Serialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Key {
    Beta,
    Alpha,
}

#[derive(Serialize)]
enum External {
    Unit,
    New(Inner),
    Tuple(u8, String),
    Struct { q: u8, p: u8 },
}

/// A map that repeats a key: a `Value` keeps the last value.
struct Repeats;
impl Serialize for Repeats {
    fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use ser::SerializeMap as _;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("b", &1)?;
        m.serialize_entry("a", &2)?;
        m.serialize_entry("b", &3)?;
        m.end()
    }
}

#[test]
fn objects_come_out_as_their_values_do() {
    let inner = |y| Inner {
        y,
        x: 0.1,
        b: y > 0,
    };
    same(&Unsorted {
        zeta: 1,
        alpha: Some("a\"b\\c\n\u{1}é😀".into()),
        skipped: None,
        mid: vec![inner(-3), inner(4)],
        flat: inner(7),
    });
    same(&vec![
        Tagged::Place {
            player: 2,
            at: (-1, 0),
        },
        Tagged::Other { zz: 'é', aa: () },
    ]);
    same(&vec![
        External::Unit,
        External::New(inner(1)),
        External::Tuple(3, "t".into()),
        External::Struct { q: 1, p: 2 },
    ]);
    // Keys that sort differently as numbers and as strings, and non-string keys.
    same(&BTreeMap::from([
        (9u32, "nine"),
        (10, "ten"),
        (100, "hundred"),
    ]));
    same(&BTreeMap::from([(-1i8, 1), (2, 2)]));
    same(&HashMap::from([(Key::Beta, 1), (Key::Alpha, 2)]));
    same(&BTreeMap::from([('b', 1), ('a', 2)]));
    same(&BTreeMap::from([
        ("~/\"".to_owned(), 1),
        ("\u{7f}".to_owned(), 2),
    ]));
    same(&Repeats);
    same(&(
        f64::NAN,
        f32::INFINITY,
        1e300,
        -0.0f64,
        1.5f32,
        u64::MAX,
        i64::MIN,
    ));
    same(&(u128::from(u64::MAX), i128::from(i64::MIN)));
    same(&serde_json::json!({"z": [1, {"b": null, "a": "x"}], "a": {}}));
    same(&Vec::<u8>::new());
    same(&());
}

/// The decisions written field by field are the bytes of the generic route, over random
/// games with and without every module (every kind of decision, tollhouse targets or none).
#[test]
fn decisions_come_out_as_their_values_do() -> Result<(), Box<dyn std::error::Error>> {
    use rules::{Colour, Game, Modules, Setup, bot};
    let mut kinds = std::collections::BTreeSet::new();
    for seed in 0..8u64 {
        let modules = if seed % 2 == 1 {
            Modules::all()
        } else {
            Modules::default()
        };
        let setup =
            Setup::new(Colour::ALL[..2 + seed as usize % 3].to_vec(), seed).modules(modules);
        let (mut game, _) = Game::start(setup)?;
        let mut rng = seed;
        let mut w = ValueWriter::default();
        loop {
            let decisions = game.decisions();
            let (mut fast, mut all) = (Vec::new(), Vec::new());
            w.write_decisions(&mut fast, &decisions)?;
            write_value(&mut all, &decisions)?;
            assert_eq!(String::from_utf8(fast)?, String::from_utf8(all)?);
            for d in &decisions {
                let (mut one, mut generic) = (Vec::new(), Vec::new());
                w.write_decision(&mut one, d)?;
                write_value(&mut generic, d)?;
                assert_eq!(one, generic);
                kinds.insert(serde_json::to_value(d)?["type"].to_string());
            }
            let Some((player, cmd)) = bot::random_move(&game, || bot::splitmix64(&mut rng)) else {
                break;
            };
            game.apply(player, cmd)?;
        }
    }
    assert!(kinds.len() >= 4, "{kinds:?}");
    Ok(())
}

#[test]
fn integers_are_serde_jsons() -> Result<(), Error> {
    for v in [
        0,
        1,
        -1,
        9,
        10,
        -10,
        270,
        12_345,
        i64::from(i32::MIN),
        i64::MAX,
        i64::MIN,
    ] {
        let mut out = Vec::new();
        push_integer(&mut out, v)?;
        assert_eq!(out, serde_json::to_vec(&v)?);
    }
    Ok(())
}

#[test]
fn refusals_are_the_values_refusals() {
    let mut out = Vec::new();
    assert!(write_value(&mut out, &u128::MAX).is_err());
    assert!(serde_json::to_value(u128::MAX).is_err());
    let vec_key = BTreeMap::from([(vec![1u8], 1)]);
    assert!(write_value(&mut out, &vec_key).is_err());
    assert!(serde_json::to_value(&vec_key).is_err());
}
