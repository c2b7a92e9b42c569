//! Compiling JSON Schemas that come from a model (a question's form) safely.
//!
//! A hostile schema must not hang or exhaust the server: its size and nesting are bounded
//! before it is compiled ([`SchemaLimits`]), and `pattern`s run on the `regex` crate
//! (linear time, bounded compiled size) instead of a backtracking engine. Remote `$ref`s
//! cannot be fetched: the HTTP and file resolvers are not built in.

use jsonschema::{PatternOptions, Validator};
use serde_json::Value;

/// Largest compiled regular expression a schema may carry, in bytes.
const MAX_REGEX_BYTES: usize = 256 * 1024;

/// How big and how deep a model-supplied schema may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaLimits {
    pub max_bytes: usize,
    pub max_depth: usize,
}

impl Default for SchemaLimits {
    fn default() -> Self {
        Self {
            max_bytes: 16 * 1024,
            max_depth: 12,
        }
    }
}

impl SchemaLimits {
    /// Checks a schema's size (as JSON text) and nesting depth.
    pub fn check(&self, schema: &Value) -> Result<(), String> {
        let bytes = schema.to_string().len();
        if bytes > self.max_bytes {
            return Err(format!(
                "the schema is {bytes} bytes; the most is {}",
                self.max_bytes
            ));
        }
        if depth_over(schema, self.max_depth) {
            return Err(format!(
                "the schema nests deeper than {} levels",
                self.max_depth
            ));
        }
        Ok(())
    }
}

/// Whether `value` nests deeper than `limit` (stops looking once it does).
fn depth_over(value: &Value, limit: usize) -> bool {
    let children: Box<dyn Iterator<Item = &Value>> = match value {
        Value::Array(items) => Box::new(items.iter()),
        Value::Object(fields) => Box::new(fields.values()),
        _ => return false,
    };
    if limit == 0 {
        return true;
    }
    children
        .into_iter()
        .any(|child| depth_over(child, limit - 1))
}

/// Compiles a schema with linear-time patterns.
pub fn compile(schema: &Value) -> Result<Validator, String> {
    jsonschema::options()
        .with_pattern_options(PatternOptions::regex().size_limit(MAX_REGEX_BYTES))
        .build(schema)
        .map_err(|e| format!("not a usable JSON Schema: {e}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn deep_or_big_schemas_are_refused_before_compiling() {
        let limits = SchemaLimits {
            max_bytes: 200,
            max_depth: 4,
        };
        assert!(limits
            .check(&json!({"type": "object", "properties": {"a": {"type": "string"}}}))
            .is_ok());
        let mut deep = json!({"type": "string"});
        for _ in 0..5 {
            deep = json!({ "items": deep });
        }
        assert!(limits.check(&deep).unwrap_err().contains("deeper"));
        let big = json!({"enum": vec!["x".repeat(20); 20]});
        assert!(limits.check(&big).unwrap_err().contains("bytes"));
    }

    #[test]
    fn catastrophic_patterns_run_in_linear_time() {
        let validator = compile(&json!({"type": "string", "pattern": "^(a+)+$"})).unwrap();
        let started = std::time::Instant::now();
        let attack = format!("{}!", "a".repeat(50_000));
        assert!(!validator.is_valid(&json!(attack)));
        // A backtracking engine would not finish this in a lifetime; linear time takes ms.
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
        assert!(
            compile(&json!({"pattern": "(?=x)"})).is_err(),
            "no look-around"
        );
        assert!(compile(&json!({"$ref": "https://example.com/s.json"})).is_err());
    }
}
