//! The match's random generator at rest: a ChaCha8 stream kept as its seed, stream and position
//! (56 bytes), where a live `ChaCha8Rng` carries a buffer of 64 words (≈ 320 bytes) that every
//! match held in memory would keep for nothing: the rules draw from it only while a match starts.

use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A ChaCha8 generator's state without its buffer. Serialized exactly as the generator is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedRng {
    seed: [u8; 32],
    stream: u64,
    /// The position in the stream in 32-bit words (`ChaCha8Rng::get_word_pos`), as two halves
    /// (low first), so that the state needs no 16-byte alignment.
    word_pos: [u64; 2],
}

impl SavedRng {
    /// The state of `rng`, to go on from later with [`SavedRng::restore`].
    pub fn save(rng: &ChaCha8Rng) -> SavedRng {
        let pos = rng.get_word_pos();
        SavedRng {
            seed: rng.get_seed(),
            stream: rng.get_stream(),
            word_pos: [pos as u64, (pos >> 64) as u64],
        }
    }

    /// The generator as it was saved: it draws what the saved one would have drawn next.
    pub fn restore(&self) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::from_seed(self.seed);
        rng.set_stream(self.stream);
        rng.set_word_pos(u128::from(self.word_pos[0]) | (u128::from(self.word_pos[1]) << 64));
        rng
    }
}

impl Serialize for SavedRng {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.restore().serialize(s)
    }
}

impl<'de> Deserialize<'de> for SavedRng {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SavedRng, D::Error> {
        ChaCha8Rng::deserialize(d).map(|rng| SavedRng::save(&rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::RngCore;

    /// Saved mid-block, the generator goes on with the same draws, and serializes as the
    /// generator itself does (both ways).
    #[test]
    fn a_saved_generator_goes_on_and_serializes_as_the_generator() {
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        rng.set_stream(3);
        for _ in 0..37 {
            rng.next_u32();
        }
        let saved = SavedRng::save(&rng);
        let text = serde_json::to_string(&saved).expect("serializes");
        assert_eq!(text, serde_json::to_string(&rng).expect("serializes"));
        let back: SavedRng = serde_json::from_str(&text).expect("deserializes");
        assert_eq!(back, saved);
        let mut restored = saved.restore();
        for _ in 0..100 {
            assert_eq!(restored.next_u64(), rng.next_u64());
        }
        assert!(std::mem::size_of::<SavedRng>() <= 56);
    }
}
