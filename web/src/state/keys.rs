//! What a key pressed on the page means: a shortcut, a character for the message box, or
//! nothing of the page's (the focused element's own).
//!
//! The rule, as ChatGPT and Claude have it: every shortcut needs a modifier, so no
//! character is ever taken from what a person types; a printable key typed while the focus
//! is on nothing editable goes to the message box, whole. Space on a focused control
//! (a button, a checkbox, a menu item) still presses it, as the keyboard's users expect.
//! Pure: the DOM is read by [`crate::components::shortcuts`], which passes what it saw.

/// A key as the browser reported it (`KeyboardEvent`'s fields).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyPress {
    /// `key`: the character typed (`"a"`, `"?"`, `" "`), or the key's name (`"Enter"`).
    pub key: String,
    /// `code`: the physical key (`"KeyW"`, `"Slash"`), whatever the layout types with it.
    pub code: String,
    pub ctrl: bool,
    pub meta: bool,
    pub alt: bool,
    pub shift: bool,
    /// An input method is composing text.
    pub composing: bool,
}

/// What has the focus when the key is pressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// A field that takes text (a text input, a textarea, a select, contenteditable).
    Editable,
    /// A control that Space presses (a button, a link, a checkbox, a menu item).
    Control,
    /// The page itself, the transcript or anything else that takes no keys.
    Page,
    /// Inside an open modal dialog: its keys are its own.
    Dialog,
}

/// A shortcut of the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shortcut {
    /// Start a new conversation.
    NewConversation,
    /// Put the focus in the message box.
    WriteMessage,
    /// Jump to the question waiting for the person.
    JumpToQuestion,
    /// Show or hide the session list (small screens).
    ToggleSessions,
    /// Show or hide the list of shortcuts.
    Help,
    /// Close the open dialog or the session list.
    Close,
}

/// What a key press does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A shortcut: the page does it and the browser does nothing else with the key.
    Shortcut(Shortcut),
    /// A character for the message box: the box takes the focus before the character
    /// lands, so it lands there.
    Type,
    /// Not the page's: the focused element (or the browser) handles it.
    Pass,
}

/// The shortcuts as the help dialog lists them: the keys (on a Mac, ⌘ for Ctrl) and what
/// they do.
pub fn listed(mac: bool) -> [(String, &'static str); 8] {
    let primary = if mac { "⌘" } else { "Ctrl" };
    let alt = if mac { "⌥" } else { "Alt" };
    [
        (format!("{primary}+Shift+O"), "Start a new conversation"),
        ("Shift+Esc".into(), "Write a message"),
        (format!("{alt}+W"), "Jump to the question waiting for you"),
        (
            format!("{primary}+Shift+S"),
            "Show or hide the session list (small screens)",
        ),
        (format!("{primary}+/"), "Show these shortcuts"),
        ("Esc".into(), "Close this list or the session list"),
        (
            "Enter · Shift+Enter".into(),
            "In a text box: Enter sends or saves, Shift+Enter starts a new line",
        ),
        (
            format!("{primary}+Enter"),
            "In a long text box (instructions, JSON): saves; Enter starts a new line there",
        ),
    ]
}

/// The two kinds of text box, for what Enter does in them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextBox {
    /// Words: a message, an edit, a comment, an answer. Enter sends or saves; Shift+Enter
    /// starts a new line.
    Prose,
    /// A long text (instructions, JSON: a tool call's arguments, the shared state):
    /// Enter starts a new line; Ctrl+Enter (⌘+Enter) saves.
    Long,
}

/// Whether `press` in a text box of `kind` sends or saves what it holds (else the key is
/// the box's own: a new line, or nothing). Ctrl+Enter saves in either kind.
pub fn submits(press: &KeyPress, kind: TextBox) -> bool {
    if press.composing || press.key != "Enter" {
        return false;
    }
    let primary = press.ctrl || press.meta;
    match kind {
        TextBox::Prose => primary || !(press.shift || press.alt),
        TextBox::Long => primary,
    }
}

/// What `press` does with the focus on `focus`.
pub fn action(press: &KeyPress, focus: Focus) -> Action {
    if press.composing {
        return Action::Pass;
    }
    if let Some(shortcut) = shortcut(press) {
        // Escape closes a dialog from inside it too; the others are the page's outside.
        return match (shortcut, focus) {
            (Shortcut::Close, _) => Action::Shortcut(Shortcut::Close),
            (_, Focus::Dialog) => Action::Pass,
            (shortcut, _) => Action::Shortcut(shortcut),
        };
    }
    let space = press.key == " ";
    match focus {
        Focus::Page if printable(press) => Action::Type,
        Focus::Control if printable(press) && !space => Action::Type,
        _ => Action::Pass,
    }
}

/// The shortcut `press` is, if any. Each needs a modifier, except Escape, which no text
/// holds.
fn shortcut(press: &KeyPress) -> Option<Shortcut> {
    // Ctrl, or ⌘ on a Mac; Ctrl with Alt is AltGr on Windows, which types characters.
    let primary = (press.ctrl || press.meta) && !press.alt;
    let code = press.code.as_str();
    match press.key.as_str() {
        "Escape" if press.shift && !primary && !press.alt => return Some(Shortcut::WriteMessage),
        "Escape" if !press.shift && !primary && !press.alt => return Some(Shortcut::Close),
        _ => {}
    }
    if primary && press.shift && code == "KeyO" {
        return Some(Shortcut::NewConversation);
    }
    if primary && press.shift && code == "KeyS" {
        return Some(Shortcut::ToggleSessions);
    }
    // `/` is Shift+7 on some layouts: the key typed counts as much as the physical one.
    if primary && (code == "Slash" || press.key == "/" || press.key == "?") {
        return Some(Shortcut::Help);
    }
    // Alt alone (⌥ on a Mac, which would type "∑": the physical key is what counts).
    let alt_only = press.alt && !press.ctrl && !press.meta && !press.shift;
    if alt_only && code == "KeyW" {
        return Some(Shortcut::JumpToQuestion);
    }
    None
}

/// Whether `press` types a character: a one-character key without Ctrl or ⌘ (AltGr, which
/// browsers report as Ctrl+Alt, and ⌥ on a Mac type characters too).
fn printable(press: &KeyPress) -> bool {
    let ctrl_alone = press.ctrl && !press.alt;
    press.key.chars().count() == 1 && !ctrl_alone && !press.meta
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(key: &str, code: &str) -> KeyPress {
        KeyPress {
            key: key.into(),
            code: code.into(),
            ..KeyPress::default()
        }
    }

    fn with(mut press: KeyPress, modifiers: &str) -> KeyPress {
        press.ctrl = modifiers.contains('c');
        press.meta = modifiers.contains('m');
        press.alt = modifiers.contains('a');
        press.shift = modifiers.contains('s');
        press
    }

    /// Every class of printable key: letters that were shortcuts, other letters, digits,
    /// punctuation, symbols, accented and non-Latin letters, emoji-free text.
    const PRINTABLE: [(&str, &str); 14] = [
        ("n", "KeyN"),
        ("w", "KeyW"),
        ("?", "Slash"),
        ("/", "Slash"),
        ("[", "BracketLeft"),
        ("N", "KeyN"),
        ("a", "KeyA"),
        ("7", "Digit7"),
        ("-", "Minus"),
        ("@", "KeyQ"),
        ("é", "Digit2"),
        ("ж", "Semicolon"),
        ("€", "KeyE"),
        ("'", "Quote"),
    ];

    #[test]
    fn every_printable_key_on_the_bare_page_is_typed_into_the_message_box() {
        for (typed, code) in PRINTABLE {
            for focus in [Focus::Page, Focus::Control] {
                assert_eq!(
                    action(&key(typed, code), focus),
                    Action::Type,
                    "{typed} on {focus:?}"
                );
            }
            assert_eq!(
                action(&key(typed, code), Focus::Editable),
                Action::Pass,
                "{typed}"
            );
            assert_eq!(
                action(&key(typed, code), Focus::Dialog),
                Action::Pass,
                "{typed}"
            );
        }
        // AltGr (Ctrl+Alt) and ⌥ type characters too.
        assert_eq!(
            action(&with(key("@", "KeyQ"), "ca"), Focus::Page),
            Action::Type
        );
        assert_eq!(
            action(&with(key("å", "KeyA"), "a"), Focus::Page),
            Action::Type
        );
        assert_eq!(
            action(&with(key("A", "KeyA"), "s"), Focus::Page),
            Action::Type
        );
    }

    #[test]
    fn space_types_on_the_page_and_presses_a_focused_control() {
        assert_eq!(action(&key(" ", "Space"), Focus::Page), Action::Type);
        assert_eq!(action(&key(" ", "Space"), Focus::Control), Action::Pass);
    }

    #[test]
    fn keys_that_type_nothing_are_left_alone() {
        for (name, code) in [
            ("Enter", "Enter"),
            ("Tab", "Tab"),
            ("ArrowDown", "ArrowDown"),
            ("Shift", "ShiftLeft"),
            ("Dead", "Quote"),
            ("F5", "F5"),
            ("Backspace", "Backspace"),
        ] {
            assert_eq!(
                action(&key(name, code), Focus::Page),
                Action::Pass,
                "{name}"
            );
        }
        // Ctrl or ⌘ with a letter is the browser's (copy, find, reload…).
        for modifiers in ["c", "m", "cs", "ms"] {
            let press = with(key("c", "KeyC"), modifiers);
            assert_eq!(action(&press, Focus::Page), Action::Pass, "{modifiers}");
        }
        let mut composing = key("n", "KeyN");
        composing.composing = true;
        assert_eq!(action(&composing, Focus::Page), Action::Pass);
    }

    #[test]
    fn each_shortcut_needs_a_modifier_and_works_with_ctrl_or_cmd() {
        let cases = [
            (key("O", "KeyO"), "cs", Shortcut::NewConversation),
            (key("O", "KeyO"), "ms", Shortcut::NewConversation),
            (key("S", "KeyS"), "cs", Shortcut::ToggleSessions),
            (key("/", "Slash"), "c", Shortcut::Help),
            (key("/", "Slash"), "m", Shortcut::Help),
            (key("?", "Slash"), "cs", Shortcut::Help),
            (key("/", "Digit7"), "cs", Shortcut::Help),
            (key("w", "KeyW"), "a", Shortcut::JumpToQuestion),
            (key("∑", "KeyW"), "a", Shortcut::JumpToQuestion),
            (key("Escape", "Escape"), "s", Shortcut::WriteMessage),
            (key("Escape", "Escape"), "", Shortcut::Close),
        ];
        for (press, modifiers, shortcut) in cases {
            let press = with(press, modifiers);
            for focus in [Focus::Page, Focus::Control, Focus::Editable] {
                assert_eq!(
                    action(&press, focus),
                    Action::Shortcut(shortcut),
                    "{press:?} on {focus:?}"
                );
            }
        }
        // In a modal dialog only Escape is the page's.
        let help = with(key("/", "Slash"), "c");
        assert_eq!(action(&help, Focus::Dialog), Action::Pass);
        let close = key("Escape", "Escape");
        assert_eq!(
            action(&close, Focus::Dialog),
            Action::Shortcut(Shortcut::Close)
        );
    }

    #[test]
    fn enter_sends_prose_and_starts_a_line_in_json_and_ctrl_enter_saves_both() {
        let enter = key("Enter", "Enter");
        assert!(submits(&enter, TextBox::Prose));
        assert!(!submits(&with(enter.clone(), "s"), TextBox::Prose));
        assert!(!submits(&with(enter.clone(), "a"), TextBox::Prose));
        assert!(!submits(&enter, TextBox::Long));
        for modifiers in ["c", "m", "cs"] {
            assert!(submits(&with(enter.clone(), modifiers), TextBox::Prose));
            assert!(submits(&with(enter.clone(), modifiers), TextBox::Long));
        }
        let mut composing = enter.clone();
        composing.composing = true;
        assert!(
            !submits(&composing, TextBox::Prose),
            "an input method's Enter is its own"
        );
        assert!(!submits(&key("a", "KeyA"), TextBox::Prose));
    }

    #[test]
    fn the_list_names_the_keys_of_the_platform() {
        assert!(listed(true).iter().any(|(keys, _)| keys == "⌘+Shift+O"));
        assert!(listed(false).iter().any(|(keys, _)| keys == "Ctrl+Shift+O"));
        assert!(listed(false).iter().any(|(keys, _)| keys == "Alt+W"));
    }
}
