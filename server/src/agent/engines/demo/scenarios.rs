//! The demo's scenarios: which phrases start them and what each step says.

use serde_json::{json, Value};

use super::{ask, turn, Situation};
use crate::agent::engines::Turn;

/// Plays the scenario the message asks for.
pub(super) fn play(s: &Situation<'_>) -> Turn {
    let lower = s.ask.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    if has(&["trip", "travel", "vacation", "holiday"]) {
        trip(s)
    } else if has(&["make a plan", "a checklist", "to-do list", "todo list"]) {
        super::plan::make_plan(s)
    } else if has(&["save a note", "write a note", "take a note", "note that"]) {
        super::notes::save_note(s)
    } else if has(&["delete", "remove", "erase"]) {
        delete(s)
    } else if has(&["sign me up", "sign up", "register", "subscribe"]) {
        sign_up(s)
    } else if has(&["ask me", "question", "quiz"]) {
        ask_name(s)
    } else if has(&["python"]) {
        super::python::run_python(s, arithmetic(s.ask))
    } else if let Some(expression) = arithmetic(s.ask) {
        calculate(s, &expression)
    } else if has(&["time", "date", "clock", "today"]) {
        clock(s)
    } else {
        greeting()
    }
}

/// The reply to anything the demo does not recognise.
pub(super) fn greeting() -> Turn {
    turn(
        "The message doesn't match anything I can act on, so I'll explain what this demo can do.",
        "Hi! I'm Tandem's offline demo model. I can't understand free text, but I can show \
         you how Tandem works. Try one of these:\n\
         • \"what is 12 * (3 + 4)\" — I use the calculator tool\n\
         • \"what time is it\" — I use the clock tool\n\
         • \"compute 2^100 with python\" — I write a program and run it in the sandbox\n\
         • \"plan a trip\" — I ask you to pick a destination, then for approval\n\
         • \"make a plan\" — I keep a checklist beside the conversation and tick it off\n\
         • \"delete my old files\" — I ask for your approval first\n\
         • \"save a note that …\" — I write a file, which needs your approval\n\
         • \"sign me up\" — I ask you to fill in a form\n\
         • \"ask me a question\" — I ask you for some text",
        None,
    )
}

fn trip(s: &Situation<'_>) -> Turn {
    match s.results.len() {
        0 => turn(
            "The person wants to plan a trip. I should check today's date so the dates I \
             suggest make sense, then let them choose where to go: that is their call, not mine.",
            "Happy to help plan a trip! Let me check today's date first.",
            Some(("clock", json!({}))),
        ),
        1 => {
            let date = s.result(0)["date"].as_str().unwrap_or("today").to_string();
            turn(
                &format!("It is {date}. I'll offer a few destinations and let them pick one."),
                &format!("Today is {date}."),
                Some(ask(
                    "Where would you like to go?",
                    "choice",
                    json!({"choices": ["Lisbon", "Kyoto", "Reykjavík", "Mexico City"]}),
                )),
            )
        }
        2 => match s.answer(1).and_then(|a| a["choice"].as_str()) {
            None => declined("Okay, no trip for now. Tell me whenever you want to plan one."),
            Some(place) => turn(
                &format!(
                    "They picked {place}. Before I draft an itinerary I'll confirm they want one."
                ),
                &format!("{place} — great choice!"),
                Some(ask(
                    &format!("Shall I draft a 5-day itinerary for {place}, starting next Friday?"),
                    "confirm",
                    json!({}),
                )),
            ),
        },
        _ => {
            let place = s
                .answer(1)
                .and_then(|a| a["choice"].as_str())
                .unwrap_or("your destination");
            match s.answer(2) {
                Some(a) if a["approved"] == true => itinerary(place),
                _ => declined(&format!(
                    "Understood — no itinerary. {place} will still be there when you're ready.{}",
                    comment_of(s.answer(2))
                )),
            }
        }
    }
}

fn itinerary(place: &str) -> Turn {
    turn(
        &format!("Approved. I'll lay out five days in {place}: arrival, two days of sights, a day trip, departure."),
        &format!(
            "Here's your 5-day plan for {place}:\n\
             Day 1 — arrive, check in, an easy walk through the old town.\n\
             Day 2 — the main sights in the morning, a food market for lunch.\n\
             Day 3 — a museum and a long dinner somewhere local.\n\
             Day 4 — a day trip out of the city.\n\
             Day 5 — a slow breakfast and the trip home.\n\
             Have a wonderful time!"
        ),
        None,
    )
}

fn delete(s: &Situation<'_>) -> Turn {
    let target = target_of(s.ask);
    match s.answer(0) {
        None if s.results.is_empty() => turn(
            "Deleting can't be undone, so I must not do it without explicit approval.",
            "",
            Some(ask(
                &format!("Delete {target}? This cannot be undone."),
                "confirm",
                json!({}),
            )),
        ),
        Some(a) if a["approved"] == true => turn(
            "Approved, so I can go ahead.",
            &format!("Done — {target} deleted. (This is the demo: nothing was actually removed.)"),
            None,
        ),
        _ => declined(&format!(
            "Okay, I left {target} untouched.{}",
            comment_of(s.answer(0))
        )),
    }
}

fn sign_up(s: &Situation<'_>) -> Turn {
    match s.answer(0) {
        None if s.results.is_empty() => turn(
            "To sign them up I need a few details only they can give me; a form is quickest.",
            "Sure — I just need a few details.",
            Some(ask(
                "Your details for the sign-up",
                "form",
                json!({"schema": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "title": "Name", "minLength": 1},
                        "email": {"type": "string", "title": "Email", "minLength": 3},
                        "plan": {"type": "string", "title": "Plan", "enum": ["Free", "Pro", "Team"]},
                        "newsletter": {"type": "boolean", "title": "Send me the newsletter"}
                    },
                    "required": ["name", "email", "plan"]
                }}),
            )),
        ),
        Some(form) => {
            let field = |k: &str| form[k].as_str().unwrap_or("?").to_string();
            let news = if form["newsletter"] == true {
                "and the newsletter is on its way"
            } else {
                "without the newsletter"
            };
            turn(
                "The form came back complete; I'll confirm what was registered.",
                &format!(
                    "You're signed up, {}! Plan: {}, confirmation going to {}, {news}.",
                    field("name"),
                    field("plan"),
                    field("email")
                ),
                None,
            )
        }
        None => declined("No problem — I won't sign you up."),
    }
}

fn ask_name(s: &Situation<'_>) -> Turn {
    match s.answer(0) {
        None if s.results.is_empty() => turn(
            "They want me to ask something. A name is a friendly start.",
            "",
            Some(ask("What's your name?", "text", json!({}))),
        ),
        Some(a) => {
            let name = a["text"].as_str().unwrap_or("friend").trim().to_string();
            turn("", &format!("Nice to meet you, {name}! Ask me anything else from the list whenever you like."), None)
        }
        None => declined("That's fine — you don't have to tell me."),
    }
}

fn calculate(s: &Situation<'_>, expression: &str) -> Turn {
    if s.results.is_empty() {
        return turn(
            "This is arithmetic. I'll use the calculator rather than do it in my head.",
            "",
            Some(("calculator", json!({"expression": expression}))),
        );
    }
    let result = s.result(0);
    match result.get("result") {
        Some(value) => turn(
            "",
            &format!("{expression} = {}", format_number(value)),
            None,
        ),
        None => turn(
            "",
            &format!(
                "The calculator couldn't evaluate that: {}.",
                result["error"].as_str().unwrap_or("unknown error")
            ),
            None,
        ),
    }
}

fn clock(s: &Situation<'_>) -> Turn {
    if s.results.is_empty() {
        return turn(
            "They want the time; the clock tool knows it.",
            "",
            Some(("clock", json!({}))),
        );
    }
    let r = s.result(0);
    turn(
        "",
        &format!(
            "It's {} UTC on {}.",
            r["time"].as_str().unwrap_or("?"),
            r["date"].as_str().unwrap_or("?")
        ),
        None,
    )
}

fn declined(text: &str) -> Turn {
    turn("", text, None)
}

fn comment_of(answer: Option<&Value>) -> String {
    match answer
        .and_then(|a| a["comment"].as_str())
        .filter(|c| !c.trim().is_empty())
    {
        Some(comment) => format!(" (Noted: \"{}\")", comment.trim()),
        None => String::new(),
    }
}

fn target_of(ask: &str) -> String {
    let lower = ask.to_lowercase();
    for verb in ["delete", "remove", "erase"] {
        if let Some(at) = lower.find(verb) {
            let rest = ask[at + verb.len()..]
                .trim()
                .trim_end_matches(['.', '!', '?']);
            if !rest.is_empty() {
                return rest.chars().take(80).collect();
            }
        }
    }
    "those files".into()
}

/// The longest run of arithmetic characters containing a digit and an operator.
pub(super) fn arithmetic(text: &str) -> Option<String> {
    let is_part = |c: char| c.is_ascii_digit() || "+-*/^%().×÷ ".contains(c);
    text.split(|c: char| !is_part(c))
        .map(str::trim)
        .filter(|run| run.chars().any(|c| c.is_ascii_digit()))
        .filter(|run| run.chars().any(|c| "+-*/^%×÷".contains(c)))
        .max_by_key(|run| run.len())
        .map(str::to_string)
}

fn format_number(value: &Value) -> String {
    match value.as_f64() {
        Some(n) if n.fract() == 0.0 && n.abs() < 1e15 => format!("{}", n as i64),
        Some(n) => format!("{n}"),
        None => value.to_string(),
    }
}
