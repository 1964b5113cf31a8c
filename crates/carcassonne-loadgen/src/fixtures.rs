//! Frames of a real server, for the tests: a snapshot of a new base game and its first two diffs.

use protocol::ServerMessage;

pub(crate) const MATCH: &str = "a1d55016-11f7-4018-8588-a0978823d7ed";

/// A real server's snapshot of a new base game and its first two diffs.
pub(crate) fn snapshot() -> ServerMessage {
    let text = r#"{"type":"snapshot","match_id":"MATCH","seq":0,"view":{"modules":{"tollkeepers":false},"players":[{"colour":"red","score":0,"meeples":7},{"colour":"blue","score":0,"meeples":7}],"board":{"0,0":{"tile":"base/D","rotation":0}},"meeples":{},"pile":{"base/U":3,"base/W":2},"pile_size":70,"discarded":[],"turn":1,"active":0,"drawn":"base/W+highwaymen","decisions":[{"type":"place_tile","player":0,"tile":"base/W+highwaymen","placements":[{"pos":{"x":-1,"y":0},"rotations":[0,180,270]},{"pos":{"x":0,"y":-1},"rotations":[0]}]}],"finished":false}}"#;
    serde_json::from_str(&text.replace("MATCH", MATCH)).expect("a snapshot")
}

pub(crate) fn diff_1() -> String {
    r#"{"type":"diff","match_id":"MATCH","seq":1,"events":[{"type":"tile_placed","player":0,"tile":"base/W+highwaymen","pos":{"x":-1,"y":0},"rotation":0}],"patch":[{"op":"add","path":"/board/-1,0","value":{"rotation":0,"tile":"base/W+highwaymen"}},{"op":"replace","path":"/drawn","value":null},{"op":"replace","path":"/decisions/0","value":{"meeple_targets":["road:E","field:Nw"],"player":0,"pos":{"x":-1,"y":0},"type":"place_follower"}}]}"#.replace("MATCH", MATCH)
}

pub(crate) fn diff_2() -> String {
    r#"{"type":"diff","match_id":"MATCH","seq":2,"events":[],"patch":[{"op":"replace","path":"/pile/base~1U","value":2},{"op":"replace","path":"/active","value":1}]}"#.replace("MATCH", MATCH)
}
