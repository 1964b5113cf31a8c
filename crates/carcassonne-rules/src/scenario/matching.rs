//! How a scenario's expectations match what a game produced: partial values (every key given
//! must be equal, others are ignored), lists in order or in any order, and counts.
//!
//! Two operators may stand where a list is expected, for what the rules leave unordered (the
//! decisions of several players opened at once, the sales a wine decision offers):
//! - `{"$any_order": [a, b]}` matches an array of the same length whose elements match `a` and
//!   `b` in some order (each element used once);
//! - `{"$len": n}` matches any array of length `n`.
//!
//! In a list of expected events, `{"$any_order": [a, b]}` is a group: events matching `a` and `b`
//! (two distinct events) occur in any order between the items before and after it.

use crate::event::Event;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `$any_order`: the elements in any order.
const ANY_ORDER: &str = "$any_order";
/// `$len`: the array's length only.
const LEN: &str = "$len";

/// Exactly `count` events (of a step, or of the whole game) match `event`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Count {
    /// A partial event.
    pub event: Value,
    pub count: usize,
}

/// The operand of `key` when `want` is an operator object `{key: operand}`.
fn operator<'a>(want: &'a Value, key: &str) -> Option<&'a Value> {
    match want {
        Value::Object(o) if o.len() == 1 => o.get(key),
        _ => None,
    }
}

/// `want` is contained in `got`: objects by their given keys, arrays of the same length element
/// by element (or as the operators say), everything else equal.
pub(crate) fn subset(want: &Value, got: &Value) -> bool {
    if let Value::Array(g) = got {
        if let Some(Value::Array(w)) = operator(want, ANY_ORDER) {
            return w.len() == g.len() && assign(w, &g.iter().collect::<Vec<_>>()).is_some();
        }
        if let Some(n) = operator(want, LEN) {
            return n.as_u64() == Some(g.len() as u64);
        }
    }
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => w
            .iter()
            .all(|(k, wv)| g.get(k).is_some_and(|gv| subset(wv, gv))),
        (Value::Array(w), Value::Array(g)) => {
            w.len() == g.len() && w.iter().zip(g).all(|(wv, gv)| subset(wv, gv))
        }
        _ => want == got,
    }
}

/// Gives each wanted value its own candidate (by index into `got`), trying in order and
/// backtracking: lists are short (a few decisions, a few sales).
fn assign(want: &[Value], got: &[&Value]) -> Option<Vec<usize>> {
    fn go(want: &[Value], got: &[&Value], used: &mut Vec<bool>, out: &mut Vec<usize>) -> bool {
        let Some((w, rest)) = want.split_first() else {
            return true;
        };
        for (i, g) in got.iter().enumerate() {
            if !used[i] && subset(w, g) {
                used[i] = true;
                out.push(i);
                if go(rest, got, used, out) {
                    return true;
                }
                out.pop();
                used[i] = false;
            }
        }
        false
    }
    let mut used = vec![false; got.len()];
    let mut out = Vec::with_capacity(want.len());
    go(want, got, &mut used, &mut out).then_some(out)
}

fn to_values(events: &[Event]) -> Vec<Value> {
    events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap_or(Value::Null))
        .collect()
}

fn show(events: &[Event]) -> String {
    serde_json::to_string(events).unwrap_or_default()
}

/// Every expected partial event occurs in `events`, in order; an `$any_order` group's events in
/// any order among themselves, after what comes before it.
pub(crate) fn in_order(events: &[Event], expected: &[Value]) -> Result<(), String> {
    let got = to_values(events);
    let mut from = 0;
    for want in expected {
        match operator(want, ANY_ORDER) {
            Some(Value::Array(group)) => {
                let rest: Vec<&Value> = got[from..].iter().collect();
                // The earliest end: try ever longer windows, so later items keep the most room.
                let end = (0..=rest.len()).find_map(|n| assign(group, &rest[..n]).map(|_| n));
                match end {
                    Some(n) => from += n,
                    None => {
                        return Err(format!(
                            "no events matching {want} (any order, after the earlier ones) among {}",
                            show(events)
                        ));
                    }
                }
            }
            _ => match got[from..].iter().position(|g| subset(want, g)) {
                Some(i) => from += i + 1,
                None => {
                    return Err(format!(
                        "no event matching {want} (in order) among {}",
                        show(events)
                    ));
                }
            },
        }
    }
    Ok(())
}

/// No event matches any of `absent`.
pub(crate) fn none_of(events: &[Event], absent: &[Value]) -> Result<(), String> {
    for a in absent {
        if let Some(ev) = events.iter().find(|ev| matches_partial(ev, a)) {
            return Err(format!(
                "event {} matches {a}, which must not occur",
                serde_json::to_string(ev).unwrap_or_default()
            ));
        }
    }
    Ok(())
}

/// Each count holds over `events`.
pub(crate) fn counted(events: &[Event], counts: &[Count]) -> Result<(), String> {
    for c in counts {
        let n = events
            .iter()
            .filter(|ev| matches_partial(ev, &c.event))
            .count();
        if n != c.count {
            return Err(format!(
                "{n} events match {}, expected {}",
                c.event, c.count
            ));
        }
    }
    Ok(())
}

pub(crate) fn matches_partial(ev: &Event, want: &Value) -> bool {
    serde_json::to_value(ev).is_ok_and(|v| subset(want, &v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn any_order_matches_each_element_once() {
        let got = json!([{"p": 1, "k": "a"}, {"p": 0, "k": "b"}]);
        assert!(subset(&json!({"$any_order": [{"p": 0}, {"p": 1}]}), &got));
        assert!(subset(&json!({"$any_order": [{"k": "a"}, {}]}), &got));
        // Both wanted values would take the same element: refused.
        assert!(!subset(&json!({"$any_order": [{"p": 1}, {"p": 1}]}), &got));
        // A different length is refused, as for a plain array.
        assert!(!subset(&json!({"$any_order": [{"p": 1}]}), &got));
        // A plain array keeps its order.
        assert!(!subset(&json!([{"p": 0}, {"p": 1}]), &got));
    }

    #[test]
    fn any_order_backtracks_when_the_first_pick_blocks_a_later_one() {
        let got = json!([{"p": 0, "q": 1}, {"p": 0}]);
        // {"p": 0} first takes element 0, which {"q": 1} needs: it must move to element 1.
        assert!(subset(&json!({"$any_order": [{"p": 0}, {"q": 1}]}), &got));
    }

    #[test]
    fn len_matches_only_the_length() {
        assert!(subset(&json!({"s": {"$len": 2}}), &json!({"s": [1, 5]})));
        assert!(!subset(&json!({"s": {"$len": 3}}), &json!({"s": [1, 5]})));
        // On a value that is not an array, an operator object is a plain partial object.
        assert!(!subset(&json!({"$len": 2}), &json!(2)));
    }

    fn passed(player: u8) -> Event {
        Event::Passed { player }
    }

    #[test]
    fn a_group_in_a_list_of_events_takes_any_order() {
        let events = [passed(0), passed(1), passed(2)];
        let ok = |want: Value| in_order(&events, want.as_array().map_or(&[][..], |a| a)).is_ok();
        assert!(ok(
            json!([{"$any_order": [{"player": 1}, {"player": 0}]}, {"player": 2}])
        ));
        assert!(!ok(json!([{"player": 1}, {"player": 0}])));
        // The group starts after the items before it.
        assert!(!ok(
            json!([{"player": 1}, {"$any_order": [{"player": 0}, {"player": 2}]}])
        ));
    }

    #[test]
    fn counts_and_absent_report_what_they_saw() {
        let events = [passed(0), passed(1), passed(0)];
        let count = |n| Count {
            event: json!({"type": "passed", "player": 0}),
            count: n,
        };
        assert!(counted(&events, &[count(2)]).is_ok());
        let err = counted(&events, &[count(1)]).expect_err("two, not one");
        assert!(err.starts_with("2 events match"), "{err}");
        assert!(none_of(&events, &[json!({"player": 3})]).is_ok());
        assert!(none_of(&events, &[json!({"player": 1})]).is_err());
    }
}
