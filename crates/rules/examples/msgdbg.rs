use rules::{Colour, Event, Game, Setup, bot};
fn main() {
    let s = Setup::new(Colour::ALL[..2].to_vec(), 11).messages(std::env::args().count() > 1);
    let (mut g, _) = Game::start(s).unwrap();
    let mut rng = 5;
    while let Some((p, c)) = bot::random_move(&g, || bot::splitmix64(&mut rng)) {
        for e in g.apply(p, c.clone()).unwrap() {
            if !matches!(
                e,
                Event::TileDrawn { .. }
                    | Event::TilePlaced { .. }
                    | Event::Passed { .. }
                    | Event::MeeplePlaced { .. }
            ) {
                println!("{p} {:?} -> {}", c, serde_json::to_string(&e).unwrap());
            }
        }
    }
}
