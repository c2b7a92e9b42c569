//! The sizes of an AG-UI input's free-form fields (`context`, `state`, `forwardedProps`,
//! `tools`): each is measured as the JSON it serialises to and checked against a limit
//! of its own (`--max-agui-*-bytes`) before anything is read or written, so a body under
//! the 8 MiB limit cannot carry megabytes into the log, a viewer's socket or a prompt.
//! Every field may nest at most [`shared::nesting::MAX_DEPTH`] deep, as all JSON that is
//! logged: deeper, it could be written and never read back.

use std::io;

use serde_json::{Map, Value};

use crate::error::ApiError;

/// The largest each free-form field may be, in bytes of JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldLimits {
    pub context: usize,
    pub state: usize,
    pub forwarded_props: usize,
    /// All tool definitions together.
    pub tools: usize,
}

impl FieldLimits {
    /// Refuses an input (as it arrived) with a field over its limit: 422
    /// `invalid_message` naming the field, its size and the flag that sets the limit (or
    /// how deep it nests).
    pub fn check(&self, raw: &Map<String, Value>) -> Result<(), ApiError> {
        for (field, value) in raw {
            if let Some(why) = shared::nesting::too_deep(&format!("`{field}`"), value) {
                return Err(ApiError::InvalidMessage(why));
            }
        }
        let fields = [
            ("context", self.context, "--max-agui-context-bytes"),
            ("state", self.state, "--max-agui-state-bytes"),
            (
                "forwardedProps",
                self.forwarded_props,
                "--max-agui-forwarded-props-bytes",
            ),
            ("tools", self.tools, "--max-agui-tools-bytes"),
        ];
        for (field, max, flag) in fields {
            let Some(value) = raw.get(field) else {
                continue;
            };
            let size = json_size(value);
            if size > max {
                return Err(ApiError::InvalidMessage(format!(
                    "`{field}` is {size} bytes of JSON; at most {max} are accepted ({flag})"
                )));
            }
        }
        Ok(())
    }
}

/// The length of `value` serialised as compact JSON, counted without building it.
pub fn json_size(value: &Value) -> usize {
    let mut counter = Counter(0);
    serde_json::to_writer(&mut counter, value).expect("counting cannot fail");
    counter.0
}

/// A writer that only counts.
struct Counter(usize);

impl io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn sizes_are_the_bytes_of_compact_json() {
        let value = json!({"a": [1, "é"], "b": null});
        assert_eq!(json_size(&value), value.to_string().len());
    }

    #[test]
    fn a_field_over_its_limit_is_refused_naming_the_field_its_size_and_the_flag() {
        let limits = FieldLimits {
            context: 100,
            state: 100,
            forwarded_props: 100,
            tools: 100,
        };
        let within = json!({"context": [{"description": "d", "value": "v"}], "state": {},
                            "forwardedProps": {"model": "m"}, "tools": []});
        assert!(limits.check(within.as_object().unwrap()).is_ok());
        let state = json!({"state": {"big": "x".repeat(200)}});
        let refused = limits.check(state.as_object().unwrap()).unwrap_err();
        let message = refused.to_string();
        assert_eq!(refused.code(), "invalid_message");
        assert!(message.contains("`state` is 210 bytes"), "{message}");
        assert!(message.contains("--max-agui-state-bytes"), "{message}");
        let tools = json!({"tools": [{"name": "a", "description": "x".repeat(120)}]});
        let message = limits.check(tools.as_object().unwrap()).unwrap_err();
        assert!(message.to_string().contains("--max-agui-tools-bytes"));
    }

    #[test]
    fn a_field_nested_past_the_limit_is_refused_whatever_its_size() {
        let limits = FieldLimits {
            context: 10_000,
            state: 10_000,
            forwarded_props: 10_000,
            tools: 10_000,
        };
        let deep = (0..70).fold(json!(1), |inner, _| json!([inner]));
        for field in ["tools", "messages", "resume", "state"] {
            let input = json!({ field: deep });
            let refused = limits.check(input.as_object().unwrap()).unwrap_err();
            assert_eq!(refused.code(), "invalid_message");
            let message = refused.to_string();
            assert!(
                message.contains(&format!("`{field}` nests 70 levels")),
                "{message}"
            );
        }
    }
}
