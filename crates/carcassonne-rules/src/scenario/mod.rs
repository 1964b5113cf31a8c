//! Scenario files: a setup with a forced draw order, the commands of a game, and what must come
//! out. The rule tests are written as scenarios (`crates/carcassonne-rules/scenarios/*.json`), and the
//! `scenario` binary runs them. The format is described in `docs/scenarios.md`; how an expectation
//! matches (partial values, any order, counts) is in [`matching`].

pub mod matching;

pub use matching::Count;

use crate::command::Command;
use crate::error::{RuleError, SetupError};
use crate::event::Event;
use crate::game::Game;
use crate::setup::{PlayerId, Setup};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    /// Rule ids this scenario checks (B6, T7, ...).
    #[serde(default)]
    pub rules: Vec<String>,
    #[serde(default)]
    pub description: String,
    pub setup: Setup,
    pub steps: Vec<Step>,
    #[serde(default)]
    pub expect: Expect,
}

/// One command, and optionally the refusal it must get.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Who sends it: any player with an open decision, active or not (M3).
    pub player: PlayerId,
    /// The command; absent when `default` is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Command>,
    /// Send the deterministic default answer of this player's oldest open decision (what the
    /// server sends when a clock runs out, M3) instead of `command`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub default: bool,
    /// After the step, the open decisions must be exactly these (each a partial decision, as
    /// for events): an array in the order they opened, or `{"$any_order": [...]}` where the
    /// rules fix no order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decisions: Option<Value>,
    /// After the step, the public view must contain this partial view (`{"messages": ...}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<Value>,
    /// The command must be refused with this [`RuleError::code`]; the game goes on unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Partial events the command must produce, in order (see [`Expect::events`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<Value>,
    /// Partial events the command must not produce.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub absent: Vec<Value>,
    /// How many of the command's events match each partial event.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counts: Vec<Count>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Scores in seat order after the last step.
    #[serde(default)]
    pub scores: Option<Vec<u32>>,
    /// Whether the game is over after the last step.
    #[serde(default)]
    pub finished: Option<bool>,
    /// Events that must occur over the whole game, in this order (others may come between).
    /// Each is a partial event: every field given must equal the event's field.
    #[serde(default)]
    pub events: Vec<Value>,
    /// Partial events that must not occur at all.
    #[serde(default)]
    pub absent: Vec<Value>,
    /// How many events of the whole game match each partial event.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counts: Vec<Count>,
    /// The public view after the last step must contain this partial view.
    #[serde(default)]
    pub view: Option<Value>,
}

/// What a scenario produced.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub name: String,
    pub events: Vec<Event>,
    pub scores: Vec<u32>,
    pub finished: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("the setup is refused: {0}")]
    Setup(#[from] SetupError),
    #[error("step {index} ({command}) by player {player} is illegal: {error} [{}: {}]", error.rule(), error.code())]
    Illegal {
        index: usize,
        player: PlayerId,
        command: String,
        error: RuleError,
    },
    #[error("step {index} ({command}) was accepted, but should be refused with `{expected}`")]
    Accepted {
        index: usize,
        command: String,
        expected: String,
    },
    #[error("step {index} ({command}) was refused with `{got}`, not `{expected}`")]
    WrongError {
        index: usize,
        command: String,
        expected: String,
        got: String,
    },
    #[error("expectation failed: {0}")]
    Expectation(String),
    #[error("cannot export this match without revealing its secrets: {0}")]
    Secret(&'static str),
}

fn show(c: &Command) -> String {
    serde_json::to_string(c).unwrap_or_else(|_| format!("{c:?}"))
}

/// Plays the scenario's steps; refusals other than the expected ones stop it.
pub fn play(s: &Scenario) -> Result<Outcome, ScenarioError> {
    play_game(s).map(|(out, _)| out)
}

/// [`play`], also returning the game in its final position (to draw it, [`crate::text`]).
pub fn play_game(s: &Scenario) -> Result<(Outcome, Game), ScenarioError> {
    let (mut game, mut events) = Game::start(s.setup.clone())?;
    for (index, step) in s.steps.iter().enumerate() {
        let command = match (&step.command, step.default) {
            (Some(c), false) => c.clone(),
            (None, true) => {
                let id = game
                    .open_decisions()
                    .into_iter()
                    .find(|(_, d)| d.player() == step.player)
                    .map(|(id, _)| id);
                match id.and_then(|id| game.default_command(id)) {
                    Some((_, c)) => c,
                    None => {
                        return Err(ScenarioError::Expectation(format!(
                            "step {index}: player {} has no open decision to default",
                            step.player
                        )));
                    }
                }
            }
            _ => {
                return Err(ScenarioError::Expectation(format!(
                    "step {index}: give either `command` or `\"default\": true`"
                )));
            }
        };
        let result = game.apply(step.player, command.clone());
        match (result, &step.error) {
            (Ok(evs), None) => {
                let checked = matching::in_order(&evs, &step.events)
                    .and_then(|()| matching::none_of(&evs, &step.absent))
                    .and_then(|()| matching::counted(&evs, &step.counts));
                if let Err(m) = checked {
                    return Err(ScenarioError::Expectation(format!("step {index}: {m}")));
                }
                if let Some(want) = &step.decisions {
                    let open = serde_json::to_value(game.decisions()).unwrap_or_default();
                    if !matching::subset(want, &open) {
                        return Err(ScenarioError::Expectation(format!(
                            "step {index}: open decisions are {open}, expected {want}"
                        )));
                    }
                }
                if let Some(want) = &step.view {
                    check_view(&game, want)
                        .map_err(|m| ScenarioError::Expectation(format!("step {index}: {m}")))?;
                }
                events.extend(evs);
            }
            (Ok(_), Some(expected)) => {
                return Err(ScenarioError::Accepted {
                    index,
                    command: show(&command),
                    expected: expected.clone(),
                });
            }
            (Err(error), None) => {
                return Err(ScenarioError::Illegal {
                    index,
                    player: step.player,
                    command: show(&command),
                    error,
                });
            }
            (Err(error), Some(expected)) => {
                if error.code() != expected {
                    return Err(ScenarioError::WrongError {
                        index,
                        command: show(&command),
                        expected: expected.clone(),
                        got: error.code().to_string(),
                    });
                }
            }
        }
    }
    if let Some(want) = &s.expect.view {
        check_view(&game, want).map_err(ScenarioError::Expectation)?;
    }
    let out = Outcome {
        name: s.name.clone(),
        events,
        scores: game.scores(),
        finished: game.is_finished(),
    };
    Ok((out, game))
}

/// Writes a played match down as a scenario that replays to the same events and scores: its
/// setup, every command as a step, and as expectations every event (the opening's included),
/// the scores and whether it is over.
///
/// With `reveal` the setup is the match's own, seed included. Without it nothing secret is
/// written (B9), so that a match still being played can be exported: the pile becomes the tiles
/// drawn so far followed by the rest in tile-id order, the dispatch stack the dispatches drawn so
/// far followed by the rest in number order, and the seed 0. Those replay the same history; only
/// the future differs. A match on a map is refused then: its start tile's turn and its chips
/// come from the seed itself.
pub fn record(
    name: &str,
    setup: &Setup,
    log: impl IntoIterator<Item = (PlayerId, Command)>,
    reveal: bool,
) -> Result<Scenario, ScenarioError> {
    let (mut game, mut events) = Game::start(setup.clone())?;
    let mut steps = Vec::new();
    for (index, (player, command)) in log.into_iter().enumerate() {
        match game.apply(player, command.clone()) {
            Ok(evs) => events.extend(evs),
            Err(error) => {
                return Err(ScenarioError::Illegal {
                    index,
                    player,
                    command: show(&command),
                    error,
                });
            }
        }
        steps.push(Step {
            player,
            command: Some(command),
            default: false,
            decisions: None,
            view: None,
            error: None,
            events: Vec::new(),
            absent: Vec::new(),
            counts: Vec::new(),
        });
    }
    let setup = match reveal {
        true => setup.clone(),
        false => public_setup(setup, &game, &events)?,
    };
    let expect = Expect {
        scores: Some(game.scores()),
        finished: Some(game.is_finished()),
        events: events
            .iter()
            .map(serde_json::to_value)
            .collect::<Result<_, _>>()
            .map_err(|e| ScenarioError::Expectation(e.to_string()))?,
        absent: Vec::new(),
        counts: Vec::new(),
        view: None,
    };
    Ok(Scenario {
        name: name.to_string(),
        rules: Vec::new(),
        description: String::new(),
        setup,
        steps,
        expect,
    })
}

/// The setup with its secrets replaced by what the events made public (see [`record`]).
fn public_setup(setup: &Setup, game: &Game, events: &[Event]) -> Result<Setup, ScenarioError> {
    if setup.modules.map.is_some() {
        return Err(ScenarioError::Secret(
            "on a map the start tile's turn and the chips come from the seed",
        ));
    }
    let mut pile: Vec<String> = Vec::new();
    let mut dispatches: Vec<u8> = Vec::new();
    for ev in events {
        match ev {
            Event::TileDrawn { tile, .. } => pile.push(tile.clone()),
            // A resolved dispatch goes under the stack (M7): the first eight drawn are the stack.
            Event::DispatchDrawn { dispatch, .. } if !dispatches.contains(dispatch) => {
                dispatches.push(*dispatch);
            }
            _ => {}
        }
    }
    for (tile, &count) in &game.view().pile {
        pile.extend(std::iter::repeat_n(tile.to_string(), count as usize));
    }
    let mut out = setup.clone();
    out.seed = 0;
    out.draw_order = Some(pile);
    if setup.modules.messages {
        for d in 1..=crate::modules::messages::DISPATCHES {
            if !dispatches.contains(&d) {
                dispatches.push(d);
            }
        }
        out.dispatch_order = Some(dispatches);
    }
    Ok(out)
}

/// The view contains the partial view `want`.
fn check_view(game: &Game, want: &Value) -> Result<(), String> {
    let view = serde_json::to_value(game.view()).map_err(|e| e.to_string())?;
    match matching::subset(want, &view) {
        true => Ok(()),
        false => Err(format!("the view does not contain {want}: {view}")),
    }
}

/// Plays the scenario and checks its expectations.
pub fn run(s: &Scenario) -> Result<Outcome, ScenarioError> {
    run_game(s).map(|(out, _)| out)
}

/// [`run`], also returning the game in its final position.
pub fn run_game(s: &Scenario) -> Result<(Outcome, Game), ScenarioError> {
    let (out, game) = play_game(s)?;
    let e = &s.expect;
    if let Some(scores) = &e.scores
        && *scores != out.scores
    {
        return Err(ScenarioError::Expectation(format!(
            "scores are {:?}, expected {:?}",
            out.scores, scores
        )));
    }
    if let Some(f) = e.finished
        && f != out.finished
    {
        return Err(ScenarioError::Expectation(format!(
            "finished is {}, expected {f}",
            out.finished
        )));
    }
    matching::in_order(&out.events, &e.events)
        .and_then(|()| matching::none_of(&out.events, &e.absent))
        .and_then(|()| matching::counted(&out.events, &e.counts))
        .map_err(ScenarioError::Expectation)?;
    Ok((out, game))
}
