//! What the human-pace load plays: the mix of table sizes, which tables have every module on,
//! think times, and when a connection drops to reconnect. Pure functions of a seeded generator,
//! so a run is reproducible and the sampling is unit-tested.

use rules::bot::splitmix64;
use std::time::Duration;

/// Table sizes and their weights, from `2:40,3:30,4:20,5:10`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mix(Vec<(usize, u32)>);

impl Mix {
    pub(crate) fn parse(s: &str) -> Result<Mix, String> {
        let mut out = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (players, weight) = part
                .split_once(':')
                .ok_or_else(|| format!("`{part}`: write players:weight, such as 3:30"))?;
            let players: usize = players
                .trim()
                .parse()
                .map_err(|e| format!("`{part}`: players: {e}"))?;
            let weight: u32 = weight
                .trim()
                .parse()
                .map_err(|e| format!("`{part}`: weight: {e}"))?;
            if !(2..=6).contains(&players) {
                return Err(format!("`{part}`: a table has 2 to 6 players"));
            }
            out.push((players, weight));
        }
        if out.iter().all(|&(_, w)| w == 0) {
            return Err("the mix needs a table size with a weight above 0".into());
        }
        Ok(Mix(out))
    }

    /// A table size drawn by weight.
    pub(crate) fn pick(&self, rng: &mut u64) -> usize {
        let total: u64 = self.0.iter().map(|&(_, w)| u64::from(w)).sum();
        let mut k = splitmix64(rng) % total;
        for &(players, w) in &self.0 {
            if k < u64::from(w) {
                return players;
            }
            k -= u64::from(w);
        }
        self.0[0].0
    }
}

/// A uniform draw in [0, 1) from 53 random bits.
pub(crate) fn unit(rng: &mut u64) -> f64 {
    (splitmix64(rng) >> 11) as f64 / (1u64 << 53) as f64
}

/// How long a player thinks before answering a decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Think {
    /// Exponentially distributed with this mean: most answers are quick, a few take long, as
    /// players at a table do.
    Exponential(Duration),
    /// Always this long.
    Fixed(Duration),
}

impl Think {
    pub(crate) fn sample(self, rng: &mut u64) -> Duration {
        match self {
            Think::Fixed(d) => d,
            Think::Exponential(mean) => exponential(mean, rng),
        }
    }
}

/// An exponentially distributed duration of mean `mean` (`-mean · ln(1 - u)`), capped at 20
/// means so that one draw cannot stall a short run.
pub(crate) fn exponential(mean: Duration, rng: &mut u64) -> Duration {
    let u = unit(rng);
    let factor = (-(1.0 - u).ln()).min(20.0);
    mean.mul_f64(factor)
}

/// When a connection next drops and reconnects with `since`: `None` without reconnects.
pub(crate) fn next_reconnect(mean: Option<Duration>, rng: &mut u64) -> Option<Duration> {
    mean.map(|m| exponential(m, rng))
}

/// The loopback address the `i`-th connection opens from: `127.0.0.2` and up when `sources`
/// is above 1 (so that no address runs out of ephemeral ports), else the system's choice.
pub(crate) fn source(i: usize, sources: usize) -> Option<std::net::IpAddr> {
    if sources <= 1 {
        return None;
    }
    let k = 2 + (i % sources) as u32;
    let ip = std::net::Ipv4Addr::from(u32::from(std::net::Ipv4Addr::new(127, 0, 0, 0)) + k);
    Some(std::net::IpAddr::V4(ip))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mix_parses_and_is_drawn_by_weight() {
        let mix = Mix::parse("2:3, 5:1").expect("a mix");
        let mut rng = 7;
        let draws: Vec<usize> = (0..4000).map(|_| mix.pick(&mut rng)).collect();
        let fives = draws.iter().filter(|&&p| p == 5).count();
        assert!(draws.iter().all(|&p| p == 2 || p == 5));
        // A quarter, give or take what 4,000 draws allow (the bound is 6 standard deviations).
        assert!(
            (1000i64 - fives as i64).abs() < 165,
            "{fives} fives of 4000"
        );
        assert!(Mix::parse("7:1").is_err());
        assert!(Mix::parse("2:0").is_err());
        assert!(Mix::parse("2").is_err());
        assert!(Mix::parse("2:x").is_err());
    }

    #[test]
    fn exponential_think_times_have_the_mean_and_spread() {
        let mean = Duration::from_secs(20);
        let mut rng = 1;
        let draws: Vec<f64> = (0..20_000)
            .map(|_| Think::Exponential(mean).sample(&mut rng).as_secs_f64())
            .collect();
        let avg = draws.iter().sum::<f64>() / draws.len() as f64;
        // The mean of 20,000 draws is within 3 % of 20 s (its standard error is 0.7 %).
        assert!((avg - 20.0).abs() < 0.6, "mean {avg}");
        // An exponential's median is ln 2 of its mean.
        let mut sorted = draws.clone();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        assert!(
            (median - 20.0 * std::f64::consts::LN_2).abs() < 0.6,
            "median {median}"
        );
        assert!(sorted[sorted.len() - 1] <= 400.0);
        // The same seed gives the same draws.
        let mut again = 1;
        assert_eq!(
            Think::Exponential(mean).sample(&mut again).as_secs_f64(),
            draws[0]
        );
        assert_eq!(Think::Fixed(mean).sample(&mut rng), mean);
    }

    #[test]
    fn connections_spread_over_loopback_addresses() {
        assert_eq!(source(5, 1), None);
        assert_eq!(source(0, 3), Some("127.0.0.2".parse().expect("ip")));
        assert_eq!(source(4, 3), Some("127.0.0.3".parse().expect("ip")));
        assert_eq!(next_reconnect(None, &mut 1), None);
        assert!(next_reconnect(Some(Duration::from_secs(1)), &mut 1).is_some());
    }
}
