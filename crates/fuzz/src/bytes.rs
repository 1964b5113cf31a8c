//! [`Bytes`]: a fuzzer's input read as a stream of choices. Past the end every read gives zero,
//! so any input, however short, decodes to something.

/// A cursor over fuzz input.
#[derive(Debug)]
pub struct Bytes<'a> {
    rest: &'a [u8],
}

impl<'a> Bytes<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Bytes { rest: data }
    }

    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    pub fn u8(&mut self) -> u8 {
        match self.rest.split_first() {
            Some((&b, rest)) => {
                self.rest = rest;
                b
            }
            None => 0,
        }
    }

    pub fn u64(&mut self) -> u64 {
        let mut word = [0u8; 8];
        for b in &mut word {
            *b = self.u8();
        }
        u64::from_le_bytes(word)
    }

    /// A choice in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        usize::from(self.u8()) % n
    }

    pub fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }
}
