//! The matches of one table of the human-pace run, one after another: each created over HTTP,
//! played by one connection per seat and watched by a spectator on every `--spectator-every`-th
//! table, and replaced by a new match when it ends.

use super::PaceCtx;
use super::conn::{self, Role};
use super::meter::{Meter, short};
use super::plan::unit;
use super::table::Table;
use protocol::CreateMatch;
use rules::{Colour, Modules};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::watch;

/// The match a table plays next: its size from the mix, every module on in a share of them.
pub(crate) fn next_request(ctx: &PaceCtx, rng: &mut u64) -> CreateMatch {
    let players = ctx.mix.pick(rng);
    let all = unit(rng) < ctx.all_modules;
    CreateMatch {
        players: Colour::ALL[..players].to_vec(),
        modules: if all {
            Modules::all()
        } else {
            Modules::default()
        },
        meeples: None,
        draw_order: None,
        clock: ctx.clock,
    }
}

/// Plays matches at table `index`, one after another, until `stop`.
pub(crate) async fn run(ctx: Arc<PaceCtx>, index: usize, mut stop: watch::Receiver<bool>) {
    let mut rng = ctx.seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let spectator = ctx.spectator_every > 0 && index.is_multiple_of(ctx.spectator_every);
    while !*stop.borrow() {
        let request = next_request(&ctx, &mut rng);
        let created = match client::create_match(&ctx.http, &request).await {
            Ok(c) => c,
            Err(e) => {
                ctx.meter
                    .error(&format!("create: {}", short(&e.to_string())));
                tokio::select! {
                    _ = stop.changed() => return,
                    () = tokio::time::sleep(Duration::from_secs(1)) => continue,
                }
            }
        };
        let table = Arc::new(Table::new(created.match_id));
        Meter::gauge(&ctx.meter.live_matches, 1);
        let mut roles: Vec<Role> = created
            .seats
            .iter()
            .map(|s| Role::Player {
                seat: s.seat,
                token: s.token.clone(),
            })
            .collect();
        if spectator {
            roles.push(Role::Spectator);
        }
        let tasks: Vec<_> = roles
            .into_iter()
            .map(|role| {
                let seed = rules::bot::splitmix64(&mut rng);
                tokio::spawn(conn::run(
                    ctx.clone(),
                    table.clone(),
                    role,
                    seed,
                    stop.clone(),
                ))
            })
            .collect();
        for t in tasks {
            if t.await.is_err() {
                ctx.meter.error("task");
            }
        }
        Meter::gauge(&ctx.meter.live_matches, -1);
        if table.finished.load(Ordering::Relaxed) {
            ctx.meter.matches_finished.fetch_add(1, Ordering::Relaxed);
        }
    }
}
