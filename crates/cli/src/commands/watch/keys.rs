//! The keys of each screen of `watch`, one table per screen: the handler
//! looks every key up here and the footer is drawn from here, so the
//! footer lists exactly the keys that work on the screen it is on.

use ratatui::crossterm::event::{KeyCode, KeyModifiers};

/// What a key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// The previous ticket, or one row up.
    Up,
    /// The next ticket, or one row down.
    Down,
    /// A page up.
    PageUp,
    /// A page down.
    PageDown,
    /// The first ticket, or the top.
    First,
    /// The last ticket, or the bottom.
    Last,
    /// Open the selected ticket's screen.
    Open,
    /// Switch the ticket screen between its evidence and its log.
    Switch,
    /// Back to the list.
    Back,
    /// End `watch`.
    Quit,
}

/// A key, with the modifiers it needs (others may be held too: a
/// terminal sends `G` with Shift).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Key(KeyCode, KeyModifiers);

impl Key {
    const fn plain(code: KeyCode) -> Key {
        Key(code, KeyModifiers::NONE)
    }

    const fn char(c: char) -> Key {
        Key::plain(KeyCode::Char(c))
    }

    fn matches(self, code: KeyCode, mods: KeyModifiers) -> bool {
        self.0 == code && mods.contains(self.1)
    }

    /// The key as the footer names it.
    fn name(self) -> String {
        match (self.0, self.1.contains(KeyModifiers::CONTROL)) {
            (KeyCode::Char(c), true) => format!("^{}", c.to_ascii_uppercase()),
            (KeyCode::Char(' '), false) => "Space".into(),
            (KeyCode::Char(c), false) => c.to_string(),
            (KeyCode::Up, _) => "↑".into(),
            (KeyCode::Down, _) => "↓".into(),
            (KeyCode::PageUp, _) => "PgUp".into(),
            (KeyCode::PageDown, _) => "PgDn".into(),
            (code, _) => code.to_string(),
        }
    }
}

/// Keys and what they do on one screen.
#[derive(Debug)]
pub(crate) struct Binding {
    /// The keys.
    pub keys: &'static [Key],
    /// What the footer says they do.
    pub does: &'static str,
    /// What the handler does.
    pub action: Action,
}

const CTRL_C: Key = Key(KeyCode::Char('c'), KeyModifiers::CONTROL);

const fn bind(keys: &'static [Key], does: &'static str, action: Action) -> Binding {
    Binding { keys, does, action }
}

// The moves both screens share.
const UP: Binding = bind(&[Key::plain(KeyCode::Up), Key::char('k')], "up", Action::Up);
const DOWN: Binding = bind(
    &[Key::plain(KeyCode::Down), Key::char('j')],
    "down",
    Action::Down,
);
const PAGE_UP: Binding = bind(&[Key::plain(KeyCode::PageUp)], "page up", Action::PageUp);
const PAGE_DOWN: Binding = bind(
    &[Key::plain(KeyCode::PageDown), Key::char(' ')],
    "page down",
    Action::PageDown,
);

/// The list of tickets.
pub(super) const LIST: &[Binding] = &[
    UP,
    DOWN,
    PAGE_UP,
    PAGE_DOWN,
    bind(
        &[Key::plain(KeyCode::Home), Key::char('g')],
        "first",
        Action::First,
    ),
    bind(
        &[Key::plain(KeyCode::End), Key::char('G')],
        "last",
        Action::Last,
    ),
    bind(
        &[Key::plain(KeyCode::Enter), Key::char('e')],
        "open",
        Action::Open,
    ),
    bind(
        &[Key::char('q'), Key::plain(KeyCode::Esc), CTRL_C],
        "quit",
        Action::Quit,
    ),
];

/// One ticket's evidence or log.
pub(super) const TICKET: &[Binding] = &[
    UP,
    DOWN,
    PAGE_UP,
    PAGE_DOWN,
    bind(
        &[Key::plain(KeyCode::Home), Key::char('g')],
        "top",
        Action::First,
    ),
    bind(
        &[Key::plain(KeyCode::End), Key::char('G')],
        "bottom",
        Action::Last,
    ),
    bind(
        &[Key::plain(KeyCode::Tab), Key::char('e')],
        "evidence/log",
        Action::Switch,
    ),
    bind(
        &[Key::plain(KeyCode::Esc), Key::plain(KeyCode::Backspace)],
        "back",
        Action::Back,
    ),
    bind(&[Key::char('q'), CTRL_C], "quit", Action::Quit),
];

/// What `code` with `mods` does on the screen of `table`, if anything.
pub(super) fn action(table: &[Binding], code: KeyCode, mods: KeyModifiers) -> Option<Action> {
    table
        .iter()
        .find(|b| b.keys.iter().any(|k| k.matches(code, mods)))
        .map(|b| b.action)
}

/// The footer's entries for the screen of `table` (`↑/k up`): every
/// binding, in table order.
pub(super) fn footer(table: &[Binding]) -> Vec<String> {
    table
        .iter()
        .map(|b| {
            let keys: Vec<String> = b.keys.iter().map(|k| k.name()).collect();
            format!("{} {}", keys.join("/"), b.does)
        })
        .collect()
}
