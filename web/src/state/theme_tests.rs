//! The theme's choices, and the stylesheet's side of the theme convention: colours live
//! only in custom properties, every colour has a dark value, and the two dark blocks (a
//! picked dark theme, and the system's dark preference) say the same.

use std::collections::BTreeMap;

use super::*;

const STYLE: &str = include_str!("../../style.css");

#[test]
fn stored_values_round_trip_and_unknown_ones_follow_the_system() {
    for theme in Theme::ALL {
        assert_eq!(Theme::parse(Some(theme.as_str())), theme);
    }
    assert_eq!(Theme::parse(None), Theme::System);
    assert_eq!(Theme::parse(Some("DARK")), Theme::System);
    assert_eq!(Theme::parse(Some("solarized")), Theme::System);
}

#[test]
fn only_a_picked_theme_sets_the_attribute() {
    assert_eq!(Theme::System.attribute(), None);
    assert_eq!(Theme::Light.attribute(), Some("light"));
    assert_eq!(Theme::Dark.attribute(), Some("dark"));
}

/// One rule of the stylesheet: the `@media` it sits in (empty if none), its selector and
/// its declarations.
#[derive(Debug)]
struct Rule {
    media: String,
    selector: String,
    body: String,
}

/// The rules of a stylesheet without comments, one level of `@media` deep (all Tandem's
/// stylesheet uses).
fn rules(css: &str) -> Vec<Rule> {
    let mut text = String::new();
    let mut rest = css;
    while let Some(start) = rest.find("/*") {
        text.push_str(&rest[..start]);
        let end = rest[start..].find("*/").expect("a closed comment") + start + 2;
        rest = &rest[end..];
    }
    text.push_str(rest);
    let mut found = Vec::new();
    collect(&text, "", &mut found);
    found
}

fn collect(text: &str, media: &str, found: &mut Vec<Rule>) {
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let selector = rest[..open].trim().to_string();
        let mut depth = 0;
        let mut close = open;
        for (at, c) in rest[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                close = open + at;
                break;
            }
        }
        let body = &rest[open + 1..close];
        if selector.starts_with("@media") {
            collect(body, &selector, found);
        } else {
            found.push(Rule {
                media: media.to_string(),
                selector,
                body: body.to_string(),
            });
        }
        rest = &rest[close + 1..];
    }
}

/// The declarations of a rule body, by property.
fn declarations(body: &str) -> BTreeMap<String, String> {
    body.split(';')
        .filter_map(|part| part.split_once(':'))
        .map(|(name, value)| (name.trim().to_string(), value.trim().to_string()))
        .collect()
}

/// Whether a declared value names a colour itself (rather than through a variable).
fn names_a_colour(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    lower.contains('#')
        || ["rgb(", "rgba(", "hsl(", "hsla(", "color-mix("]
            .iter()
            .any(|f| lower.contains(f))
        || lower
            .split(|c: char| !c.is_ascii_alphabetic() && c != '-')
            .any(|word| {
                matches!(
                    word,
                    "white" | "black" | "red" | "green" | "blue" | "gray" | "grey"
                )
            })
}

/// The declarations of every rule matching `selector` in `media`, merged (items may add
/// their own blocks at the end of the file).
fn block(all: &[Rule], media: &str, selector: &str) -> BTreeMap<String, String> {
    all.iter()
        .filter(|rule| rule.selector == selector && rule.media.contains(media))
        .flat_map(|rule| declarations(&rule.body))
        .collect()
}

const DARK: &str = r#":root[data-theme="dark"]"#;
const SYSTEM_DARK: &str = r#":root:not([data-theme="light"])"#;

#[test]
fn every_colour_has_a_dark_value_and_both_dark_blocks_agree() {
    let all = rules(STYLE);
    let light = block(&all, "", ":root");
    let dark = block(&all, "", DARK);
    let system_dark = block(&all, "prefers-color-scheme: dark", SYSTEM_DARK);
    assert!(!dark.is_empty(), "a {DARK} block");
    assert_eq!(
        dark, system_dark,
        "the picked and the system's dark themes differ"
    );
    for (name, value) in &light {
        if names_a_colour(value) {
            assert!(dark.contains_key(name), "{name} has no dark value");
        }
    }
    for name in dark.keys() {
        assert!(
            light.contains_key(name),
            "{name} is dark only: give it a light value in :root"
        );
    }
}

#[test]
fn rules_use_the_variables_and_name_no_colour_of_their_own() {
    let themes = [":root", DARK, SYSTEM_DARK];
    for rule in rules(STYLE) {
        if themes.contains(&rule.selector.as_str()) {
            continue;
        }
        for (property, value) in declarations(&rule.body) {
            assert!(
                !names_a_colour(&value),
                "`{} {{ {property}: {value} }}` names a colour: use a variable (see the top of web/style.css)",
                rule.selector
            );
        }
    }
}

#[test]
fn the_scanner_sees_colours_and_skips_comments() {
    assert!(names_a_colour("1px solid #f1b4b4"));
    assert!(names_a_colour("0 1px 2px rgba(0, 0, 0, 0.3)"));
    assert!(names_a_colour("white"));
    assert!(!names_a_colour("var(--panel)"));
    assert!(!names_a_colour("pre-wrap"));
    let found = rules("/* a { color: #fff } */ @media (x) { b { color: red; } } c { d: e }");
    assert_eq!(found.len(), 2);
    assert_eq!(
        (found[0].media.as_str(), found[0].selector.as_str()),
        ("@media (x)", "b")
    );
    assert_eq!(found[1].selector, "c");
}
