//! How deep JSON nests, and the one limit on it for everything a client or a model puts
//! in the log as JSON (the shared state and its patches, AG-UI input, answers, a tool's
//! arguments). serde_json refuses to read JSON nested deeper than 128 levels, here and in
//! the page; a value close to that, once wrapped in its event and its socket frame, could
//! be written and then never read back. [`MAX_DEPTH`] leaves ample room for the wrapping.

use serde_json::Value;

/// The deepest a value may nest: `{}` and `[]` are 1 deep, `{"a": []}` is 2, a string 0.
pub const MAX_DEPTH: usize = 64;

/// How deep `value` nests (see [`MAX_DEPTH`]); walked without recursion, so a value of
/// any depth is measured without using up the stack.
pub fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut waiting = vec![(value, 0)];
    while let Some((value, above)) = waiting.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(fields) => Box::new(fields.values()),
            _ => continue,
        };
        let here = above + 1;
        deepest = deepest.max(here);
        waiting.extend(children.map(|child| (child, here)));
    }
    deepest
}

/// Why `value` is refused, naming it as `what`, if it nests deeper than [`MAX_DEPTH`].
pub fn too_deep(what: &str, value: &Value) -> Option<String> {
    let depth = depth(value);
    (depth > MAX_DEPTH)
        .then(|| format!("{what} nests {depth} levels deep; at most {MAX_DEPTH} are accepted"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn depth_counts_arrays_and_objects() {
        assert_eq!(depth(&json!("text")), 0);
        assert_eq!(depth(&json!({})), 1);
        assert_eq!(depth(&json!({"a": [1, {"b": []}], "c": 2})), 4);
        let deep = (0..1000).fold(json!(1), |inner, _| json!([inner]));
        assert_eq!(depth(&deep), 1000);
    }

    #[test]
    fn only_values_past_the_limit_are_refused() {
        let at = |levels: usize| (0..levels).fold(json!(1), |inner, _| json!({ "n": inner }));
        assert_eq!(too_deep("the state", &at(MAX_DEPTH)), None);
        let refused = too_deep("the state", &at(MAX_DEPTH + 1)).unwrap();
        assert_eq!(
            refused,
            "the state nests 65 levels deep; at most 64 are accepted"
        );
    }
}
