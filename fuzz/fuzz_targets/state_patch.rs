//! A shared state and a JSON Patch from outside (a person's `PATCH`, the model's
//! `update_state`, an AG-UI client's state): checking never panics, a refused change names
//! an operation or a path, and an accepted one is an object within the size limit that
//! the page's fold (`shared::state`) reproduces from the same delta; the page's own patch
//! code (`apply_light`) agrees with the `json-patch` crate on every patch.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use shared::state::SharedState;
use shared::EventBody;
use tandem::agent::shared_state::StateRules;

const MAX_BYTES: usize = 512;

fuzz_target!(|data: &[u8]| {
    // The input is two JSON texts, one per line: the state, then the patch.
    let text = String::from_utf8_lossy(data);
    let (state, patch) = text.split_once('\n').unwrap_or(("{}", &text));
    let (Ok(state), Ok(Value::Array(patch))) = (
        serde_json::from_str::<Value>(state),
        serde_json::from_str::<Value>(patch),
    ) else {
        return;
    };
    // The page's own patch (`apply_light`) makes what the crate makes, or fails too.
    match (
        shared::state::apply(&state, &patch),
        shared::state::apply_light(&state, &patch),
    ) {
        (Ok(made), Ok(light)) => assert_eq!(made, light, "the page's patch differs"),
        (Err(_), Err(_)) => {}
        (made, light) => panic!("the crate: {made:?}, the page: {light:?}"),
    }
    let rules = StateRules::new(None, MAX_BYTES).expect("no schema");
    if rules.check(&state).is_err() {
        return;
    }
    match rules.change(&state, &patch) {
        Ok(changed) => {
            assert!(changed.is_object());
            assert!(serde_json::to_string(&changed).unwrap().len() <= MAX_BYTES);
            let mut folded = SharedState::default();
            folded.observe(1, &EventBody::StateSnapshot { snapshot: state });
            folded.observe(2, &EventBody::StateDelta { delta: patch });
            assert_eq!(
                folded.document(),
                &changed,
                "the page folds what the server checked"
            );
        }
        Err(problem) => assert!(!problem.message.is_empty()),
    }
});
