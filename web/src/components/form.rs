//! The form control of an interrupt card: one input per property of the schema the agent
//! gave, typed on submit (numbers as numbers, checkboxes as booleans, selects as the enum
//! value), with required fields checked before anything is sent.

use leptos::prelude::*;

use super::responder::Responder;
use super::text_box::submit_keys;
use crate::state::interrupt::{display_value, form_payload, FieldKind, FieldValue, FormField};
use crate::state::keys::TextBox;

/// What one field holds while the person fills it in.
#[derive(Clone, Copy)]
struct FieldInput {
    text: RwSignal<String>,
    checked: RwSignal<bool>,
}

impl FieldInput {
    fn for_field(field: &FormField) -> Self {
        // A required select starts on its first option, which the browser shows selected.
        let start = match &field.kind {
            FieldKind::Enum(_) if field.required => "0",
            _ => "",
        };
        Self {
            text: RwSignal::new(start.to_string()),
            checked: RwSignal::new(false),
        }
    }

    fn value(self, field: &FormField) -> FieldValue {
        match field.kind {
            FieldKind::Boolean => FieldValue::Checked(self.checked.get_untracked()),
            _ => FieldValue::Text(self.text.get_untracked()),
        }
    }
}

/// The inputs of a form question and its Submit button.
#[component]
pub fn FormControl(fields: Vec<FormField>, responder: Responder) -> impl IntoView {
    let inputs: Vec<FieldInput> = fields.iter().map(FieldInput::for_field).collect();
    let error = RwSignal::new(None::<String>);
    let model = StoredValue::new((fields, inputs));
    let submit = move || {
        let payload = model.with_value(|(fields, inputs)| {
            let values: Vec<FieldValue> =
                fields.iter().zip(inputs).map(|(f, i)| i.value(f)).collect();
            form_payload(fields, &values)
        });
        match payload {
            Ok(payload) => {
                error.set(None);
                responder.resolve(payload);
            }
            Err(message) => error.set(Some(message)),
        }
    };
    let rows = model.with_value(|(fields, inputs)| {
        fields
            .iter()
            .zip(inputs)
            .map(|(field, input)| field_row(field, *input, responder, submit))
            .collect_view()
    });
    view! {
        <div class="form-fields">{rows}</div>
        {move || error.get().map(|message| view! { <p class="form-error">{message}</p> })}
        <button
            class="btn btn-primary"
            data-testid="interrupt-submit"
            disabled=move || responder.locked()
            on:click=move |_| submit()
        >
            "Submit"
        </button>
    }
}

fn field_row(
    field: &FormField,
    input: FieldInput,
    responder: Responder,
    submit: impl Fn() + Copy + Send + Sync + 'static,
) -> AnyView {
    let name = field.name.clone();
    let required = field.required;
    let label = view! {
        <span class="field-label">
            {field.label.clone()}
            {required.then(|| view! { <span class="required" title="required">" *"</span> })}
        </span>
    };
    let disabled = move || responder.locked();
    match &field.kind {
        FieldKind::Boolean => view! {
            <label class="field field-check">
                <input type="checkbox" data-testid="form-field" name=name
                    bind:checked=input.checked disabled=disabled />
                {label}
            </label>
        }
        .into_any(),
        FieldKind::Enum(options) => {
            let placeholder = (!required).then(|| view! { <option value="">"—"</option> });
            let options = options
                .iter()
                .enumerate()
                .map(|(at, option)| view! { <option value=at.to_string()>{display_value(option)}</option> })
                .collect_view();
            view! {
                <label class="field">
                    {label}
                    <select class="input" data-testid="form-field" name=name required=required
                        disabled=disabled
                        on:change=move |ev| input.text.set(event_target_value(&ev))>
                        {placeholder}
                        {options}
                    </select>
                </label>
            }
            .into_any()
        }
        kind => {
            let (kind, step) = match kind {
                FieldKind::Number => ("number", Some("any")),
                FieldKind::Integer => ("number", Some("1")),
                _ => ("text", None),
            };
            view! {
                <label class="field">
                    {label}
                    <input type=kind step=step class="input" data-testid="form-field" name=name
                        required=required bind:value=input.text disabled=disabled
                        on:keydown=submit_keys(TextBox::Prose, submit) />
                </label>
            }
            .into_any()
        }
    }
}
