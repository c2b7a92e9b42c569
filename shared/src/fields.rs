//! Reading a JSON object field by field, for the wire types whose `Deserialize` is written
//! by hand: the internally tagged ones ([`crate::agui::Event`], [`crate::agui::Outcome`],
//! [`crate::envelope::ServerFrame`], [`crate::api::SessionListEvent`]) and those with a
//! flattened field ([`crate::api::SessionDetail`], [`crate::api::BranchStarted`],
//! [`crate::sharing::CreatedShare`]).
//!
//! serde's derive reads an internally tagged enum (`"type": "RUN_STARTED", …`) or a
//! flattened field by buffering the whole object in its private `Content` tree first, and
//! then reads every variant again from that tree, once for each kind of input it is read
//! from: for the page, the largest single function of its WASM. Reading the object into a
//! [`serde_json::Map`] once and taking the fields out of it by name does the same work
//! with one copy of the code. The rules are serde's: a missing or `null` optional field
//! is `None`, a missing required one is an error, unknown fields are ignored.

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

/// Reads an object from `deserializer` with `read`, which takes its fields out by name.
pub(crate) fn read_object<'de, D, T>(
    deserializer: D,
    read: impl FnOnce(&mut Fields) -> Result<T, String>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    let mut fields = Fields::of(Value::deserialize(deserializer)?).map_err(D::Error::custom)?;
    read(&mut fields).map_err(D::Error::custom)
}

/// serde's error for a tag naming none of an enum's variants, in serde's own words.
pub(crate) fn unknown_variant(found: &str, expected: &'static [&'static str]) -> String {
    serde::de::value::Error::unknown_variant(found, expected).to_string()
}

/// A JSON object whose fields are taken out one by one.
pub(crate) struct Fields(Map<String, Value>);

impl Fields {
    /// The fields of `value`, which must be an object.
    pub(crate) fn of(value: Value) -> Result<Self, String> {
        match value {
            Value::Object(object) => Ok(Self(object)),
            other => Err(format!(
                "invalid type: {}, expected an object",
                kind(&other)
            )),
        }
    }

    /// A required string.
    pub(crate) fn string(&mut self, key: &'static str) -> Result<String, String> {
        match self.0.remove(key) {
            Some(Value::String(text)) => Ok(text),
            Some(other) => Err(wrong(key, &other, "a string")),
            None => Err(missing(key)),
        }
    }

    /// An optional string: absent or `null` is `None`.
    pub(crate) fn optional_string(&mut self, key: &'static str) -> Result<Option<String>, String> {
        match self.0.remove(key) {
            Some(Value::String(text)) => Ok(Some(text)),
            Some(Value::Null) | None => Ok(None),
            Some(other) => Err(wrong(key, &other, "a string")),
        }
    }

    /// A required value of any JSON type (`null` included).
    pub(crate) fn value(&mut self, key: &'static str) -> Result<Value, String> {
        self.0.remove(key).ok_or_else(|| missing(key))
    }

    /// An optional value of any JSON type: absent or `null` is `None`.
    pub(crate) fn optional_value(&mut self, key: &'static str) -> Option<Value> {
        self.0.remove(key).filter(|value| !value.is_null())
    }

    /// A required field read as `T`.
    pub(crate) fn typed<T: DeserializeOwned>(&mut self, key: &'static str) -> Result<T, String> {
        read(key, self.value(key)?)
    }

    /// An optional field read as `T`: absent or `null` is `None`.
    pub(crate) fn optional<T: DeserializeOwned>(
        &mut self,
        key: &'static str,
    ) -> Result<Option<T>, String> {
        self.optional_value(key)
            .map(|value| read(key, value))
            .transpose()
    }

    /// Every field not taken yet, read as `T`: what `#[serde(flatten)]` gives a field.
    pub(crate) fn rest<T: DeserializeOwned>(&mut self) -> Result<T, String> {
        let rest = Value::Object(std::mem::take(&mut self.0));
        serde_json::from_value(rest).map_err(|error| error.to_string())
    }
}

/// Field `key`'s `value` read as `T`, an error naming the field.
fn read<T: DeserializeOwned>(key: &str, value: Value) -> Result<T, String> {
    serde_json::from_value(value).map_err(|error| format!("field `{key}`: {error}"))
}

fn missing(key: &str) -> String {
    format!("missing field `{key}`")
}

fn wrong(key: &str, found: &Value, expected: &str) -> String {
    format!(
        "field `{key}`: invalid type: {}, expected {expected}",
        kind(found)
    )
}

/// How serde names a JSON value's type in its errors.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "sequence",
        Value::Object(_) => "map",
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Debug;

    use serde::Serialize;
    use serde_json::json;

    use crate::agui::{Interrupt, Outcome};
    use crate::api::{
        BranchStarted, SessionDetail, SessionListEvent, SessionStatus, SessionSummary,
    };
    use crate::sharing::{CreatedShare, Share};

    /// `value` written, then read back through a string, a byte slice and a `Value`.
    fn reads_back<T>(value: &T)
    where
        T: Serialize + serde::de::DeserializeOwned + PartialEq + Debug,
    {
        let text = serde_json::to_string(value).unwrap();
        let read: T = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(&read, value, "{text}");
        assert_eq!(
            &serde_json::from_slice::<T>(text.as_bytes()).unwrap(),
            value
        );
        let tree = serde_json::to_value(value).unwrap();
        assert_eq!(&serde_json::from_value::<T>(tree).unwrap(), value);
    }

    fn summary(branch: bool) -> SessionSummary {
        SessionSummary {
            id: "s2".into(),
            title: "A line".into(),
            status: SessionStatus::AwaitingInput,
            last_seq: 12,
            created_at: 1,
            updated_at: 2,
            parent_id: branch.then(|| "s1".into()),
            fork_seq: branch.then_some(7),
            conversation_id: "s1".into(),
            snippet: branch.then(|| "…a match…".into()),
        }
    }

    fn interrupt() -> Interrupt {
        Interrupt {
            id: "i".into(),
            reason: "input_required".into(),
            message: Some("Which?".into()),
            tool_call_id: None,
            response_schema: None,
            expires_at: None,
            metadata: Some(json!({"kind": "choice"})),
        }
    }

    #[test]
    fn every_hand_read_type_reads_back_what_it_writes() {
        for outcome in [
            Outcome::Success {
                pending_tool_call_ids: None,
            },
            Outcome::Success {
                pending_tool_call_ids: Some(vec!["c1".into()]),
            },
            Outcome::Interrupt {
                interrupts: vec![interrupt()],
            },
            Outcome::Cancelled,
        ] {
            reads_back(&outcome);
        }
        for branch in [false, true] {
            reads_back(&SessionListEvent::Changed {
                session: summary(branch),
            });
            reads_back(&SessionDetail {
                summary: summary(branch),
                pending_interrupts: vec![interrupt()],
            });
            reads_back(&BranchStarted {
                session: summary(branch),
                run_id: "r".into(),
            });
        }
        reads_back(&SessionListEvent::Snapshot {
            sessions: vec![summary(false), summary(true)],
        });
        reads_back(&SessionListEvent::Removed { id: "s2".into() });
        reads_back(&CreatedShare {
            share: Share {
                id: "sh".into(),
                hide_reasoning: true,
                hide_tool_arguments: false,
                attachments: true,
                state: false,
                instructions: true,
                created_at: 3,
            },
            token: "secret".into(),
            path: "/#/shared/secret".into(),
        });
    }

    #[test]
    fn hand_read_types_keep_serdes_rules() {
        // Optional fields absent or null, unknown fields ignored, the flattened part too.
        let read: Outcome =
            serde_json::from_value(json!({"type": "success", "pendingToolCallIds": null, "x": 1}))
                .unwrap();
        assert_eq!(
            read,
            Outcome::Success {
                pending_tool_call_ids: None
            }
        );
        let mut detail = serde_json::to_value(SessionDetail {
            summary: summary(false),
            pending_interrupts: vec![],
        })
        .unwrap();
        detail["newField"] = json!(true);
        assert_eq!(
            serde_json::from_value::<SessionDetail>(detail)
                .unwrap()
                .summary,
            summary(false)
        );
        // Refusals name what is wrong, as serde's derive did.
        let refused = |result: Result<Outcome, serde_json::Error>| result.unwrap_err().to_string();
        assert_eq!(
            refused(serde_json::from_value(json!({"type": "paused"}))),
            "unknown variant `paused`, expected one of `success`, `interrupt`, `cancelled`"
        );
        assert!(
            refused(serde_json::from_value(json!({"type": "interrupt"})))
                .contains("missing field `interrupts`")
        );
        assert!(refused(serde_json::from_value(json!({"interrupts": []})))
            .contains("missing field `type`"));
        let refused = serde_json::from_value::<BranchStarted>(json!({"runId": "r", "id": "s"}));
        assert!(refused
            .unwrap_err()
            .to_string()
            .contains("missing field `title`"));
        let refused = serde_json::from_value::<SessionListEvent>(json!({"type": "renamed"}));
        assert!(refused
            .unwrap_err()
            .to_string()
            .contains("unknown variant `renamed`"));
    }
}
