//! A REST body, as the handlers read it: the first byte picks the endpoint's body type.
//! Parsing never panics, and what parses survives a round trip.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::{de::DeserializeOwned, Serialize};
use shared::api::{CreateSession, LoginBody, PostMessage, ResumeBody};

fn round_trip<T: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug>(body: &[u8]) {
    if let Ok(parsed) = tandem::routes::parse_json::<T>(body) {
        let text = serde_json::to_vec(&parsed).unwrap();
        let again: T = tandem::routes::parse_json(&text).expect("a parsed body re-parses");
        assert_eq!(again, parsed);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, body)) = data.split_first() else {
        return;
    };
    match which % 4 {
        0 => round_trip::<CreateSession>(body),
        1 => round_trip::<PostMessage>(body),
        2 => round_trip::<ResumeBody>(body),
        _ => round_trip::<LoginBody>(body),
    }
});
