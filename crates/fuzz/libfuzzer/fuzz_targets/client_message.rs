//! libFuzzer entry point of `fuzz::client_message` (see that function for what it checks).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz::client_message(data));
