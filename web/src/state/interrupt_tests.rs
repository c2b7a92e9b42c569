//! Tests of the interrupt helpers: controls, form fields, and payloads.
use super::*;

fn interrupt(metadata: Value) -> Interrupt {
    Interrupt {
        id: "i".into(),
        reason: "input_required".into(),
        message: Some("?".into()),
        tool_call_id: Some("c".into()),
        response_schema: None,
        expires_at: None,
        metadata: Some(metadata),
    }
}

fn signup_fields() -> Vec<FormField> {
    form_fields(&json!({
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "title": "Your name"},
            "age": {"type": "integer"},
            "height": {"type": "number"},
            "plan": {"enum": ["free", "pro"]},
            "newsletter": {"type": "boolean"}
        }
    }))
}

#[test]
fn metadata_picks_the_control() {
    let choice = interrupt(json!({"kind": "choice", "choices": ["Lisbon", "Kyoto"]}));
    assert_eq!(
        Control::of(&choice),
        Control::Choice(vec!["Lisbon".into(), "Kyoto".into()])
    );
    assert_eq!(
        Control::of(&interrupt(json!({"kind": "confirm"}))),
        Control::Confirm
    );
    assert_eq!(
        Control::of(&interrupt(json!({"kind": "odd"}))),
        Control::Text
    );
    assert_eq!(Control::of(&interrupt(Value::Null)).kind_name(), "text");
}

#[test]
fn tool_approval_metadata_names_the_tool_and_its_arguments() {
    let approval = interrupt(json!({
        "kind": "tool_approval", "toolName": "write_file",
        "arguments": {"path": "notes.txt", "content": "hi"},
        "argumentsSchema": {"type": "object"}
    }));
    let control = Control::of(&approval);
    assert_eq!(
        control,
        Control::ToolApproval {
            tool_name: "write_file".into(),
            arguments: json!({"path": "notes.txt", "content": "hi"})
        }
    );
    assert_eq!(control.kind_name(), "tool_approval");
    let bare = Control::of(&interrupt(json!({"kind": "tool_approval"})));
    assert_eq!(
        bare,
        Control::ToolApproval {
            tool_name: String::new(),
            arguments: Value::Null
        }
    );
    assert_eq!(Control::of(&interrupt(json!({"kind": 7}))), Control::Text);
}

#[test]
fn form_fields_keep_the_agents_order_and_read_titles_types_and_required() {
    let fields = signup_fields();
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["name", "age", "height", "plan", "newsletter"]);
    let name = fields.iter().find(|f| f.name == "name").unwrap();
    assert_eq!(name.label, "Your name");
    assert!(name.required);
    let age = fields.iter().find(|f| f.name == "age").unwrap();
    assert_eq!(
        (age.kind.clone(), age.required),
        (FieldKind::Integer, false)
    );
    let plan = fields.iter().find(|f| f.name == "plan").unwrap();
    assert_eq!(
        plan.kind,
        FieldKind::Enum(vec![json!("free"), json!("pro")])
    );
}

#[test]
fn form_payload_types_values_and_skips_empty_optionals() {
    let fields = signup_fields();
    let values: Vec<FieldValue> = fields
        .iter()
        .map(|f| match f.name.as_str() {
            "name" => FieldValue::Text(" Ada ".into()),
            "age" => FieldValue::Text("36".into()),
            "height" => FieldValue::Text(String::new()),
            "newsletter" => FieldValue::Checked(true),
            _ => FieldValue::Text("1".into()),
        })
        .collect();
    assert_eq!(
        form_payload(&fields, &values).unwrap(),
        json!({"name": "Ada", "age": 36, "newsletter": true, "plan": "pro"})
    );
}

#[test]
fn form_payload_rejects_missing_required_and_bad_numbers() {
    let fields = signup_fields();
    let empty: Vec<FieldValue> = fields.iter().map(|_| FieldValue::Text("".into())).collect();
    assert_eq!(
        form_payload(&fields, &empty).unwrap_err(),
        "Your name is required"
    );
    let bad: Vec<FieldValue> = fields
        .iter()
        .map(|_| FieldValue::Text("x".into()))
        .collect();
    assert!(form_payload(&fields, &bad)
        .unwrap_err()
        .contains("whole number"));
}

#[test]
fn confirm_payload_omits_an_empty_comment() {
    assert_eq!(confirm_payload(true, "  "), json!({"approved": true}));
    assert_eq!(
        confirm_payload(false, "no"),
        json!({"approved": false, "comment": "no"})
    );
}

#[test]
fn number_fields_read_what_a_number_input_gives() {
    let fields = vec![FormField {
        name: "height".into(),
        label: "Height".into(),
        kind: FieldKind::Number,
        required: true,
    }];
    let read = |text: &str| form_payload(&fields, &[FieldValue::Text(text.into())]);
    for (text, number) in [
        ("1.82", 1.82),
        (".5", 0.5),
        ("-.5", -0.5),
        ("007", 7.0),
        ("00.25", 0.25),
        ("0", 0.0),
        ("-1.5e3", -1500.0),
        ("2E-2", 0.02),
    ] {
        assert_eq!(read(text).unwrap(), json!({"height": number}), "{text}");
    }
    for text in [
        "-", ".", "1.", "+1", "e5", "x", "inf", "NaN", "1e999", "1.2.3",
    ] {
        assert_eq!(read(text).unwrap_err(), "Height must be a number", "{text}");
    }
}

#[test]
fn typed_decimals_read_exactly_as_rust_reads_them() {
    // serde_json's parser is exact where a decimal fits 2^53 and a power of ten it holds
    // exactly; what a person types in a number field does. A sweep of such values:
    for whole in (0..1_000_000u64).step_by(7) {
        for places in 0..=6 {
            let digits = whole.to_string();
            let text = match places {
                0 => digits,
                _ if digits.len() > places => {
                    let (int, fraction) = digits.split_at(digits.len() - places);
                    format!("{int}.{fraction}")
                }
                _ => format!("0.{digits:0>places$}"),
            };
            let ours = json_number(&text).and_then(|n| n.as_f64());
            assert_eq!(ours, text.parse::<f64>().ok(), "{text}");
        }
    }
}
