//! The pieces the share-link rules are written with: an object's listed fields, a
//! scalar, a list of strings. They copy only what a rule names; they decide nothing.

use serde_json::{Map, Value};

/// A JSON object.
pub(super) type Object = Map<String, Value>;

/// A copy of a string, number or boolean; `None` for anything else, so a field meant to
/// hold a scalar never carries an object or a list past the rules.
pub(super) fn scalar(value: &Value) -> Option<Value> {
    match value {
        Value::String(_) | Value::Number(_) | Value::Bool(_) => Some(value.clone()),
        _ => None,
    }
}

/// The strings of a list (anything else in it left out); `None` if it is not a list.
pub(super) fn strings(value: &Value) -> Option<Value> {
    let list = value.as_array()?;
    Some(Value::Array(
        list.iter()
            .filter(|item| item.is_string())
            .cloned()
            .collect(),
    ))
}

/// The items of a list as `item` shows them (the ones it hides left out); `None` if it
/// is not a list.
pub(super) fn items(value: &Value, item: impl Fn(&Value) -> Option<Value>) -> Option<Value> {
    let list = value.as_array()?;
    Some(Value::Array(list.iter().filter_map(item).collect()))
}

/// The fields of `object` that `shown` gives a value for, as it gives them, in their
/// order.
pub(super) fn filter(object: &Object, shown: impl Fn(&str, &Value) -> Option<Value>) -> Object {
    object
        .iter()
        .filter_map(|(key, value)| Some((key.clone(), shown(key, value)?)))
        .collect()
}

/// The fields of `object` named in `keys` that hold a scalar.
pub(super) fn scalars(object: &Object, keys: &[&str]) -> Object {
    filter(object, |key, value| {
        keys.contains(&key).then(|| scalar(value)).flatten()
    })
}

/// `object`'s listed scalar fields, as an object value; `None` if it is not an object.
pub(super) fn scalars_of(value: &Value, keys: &[&str]) -> Option<Value> {
    Some(Value::Object(scalars(value.as_object()?, keys)))
}

/// The fields of `object` named in `keys`, whole, whatever they hold: for documents that
/// are shown entire (the shared state), never for fields a rule must look into.
pub(super) fn documents(object: &Object, keys: &[&str]) -> Object {
    filter(object, |key, value| {
        keys.contains(&key).then(|| value.clone())
    })
}
