//! libFuzzer entry point of `fuzz::map` (see that function for what it checks).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz::map(data));
