//! `planwright watch --repo DIR`: a live terminal view of a run, drawn with
//! ratatui from the run's event log. It only reads (the state store once,
//! then the growing event log and the ticket logs), so it can attach to a
//! run started elsewhere and never slows it.

use super::observe::open_view;
use super::observe::RunArgs;
use crate::error::{exit, CliError, CliResult};
use crate::Global;
use planwright_engine::TicketState;
use planwright_view::{RunFiles, RunView, ShownState, Tail, TicketView};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::crossterm::terminal;
use ratatui::style::Color;
use std::cell::Cell;
use std::io::{Read, Seek, SeekFrom};
use std::time::Duration;

/// Watch a run live in the terminal: tickets by wave with state, phase,
/// attempt, time and rejections; what each slot is doing; paused pools;
/// tokens and cost; the tail of the selected ticket's log. Enter opens a
/// ticket's evidence and log, to scroll; the footer lists the keys of
/// each screen.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    pub run: RunArgs,
    /// How often to look for new events, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 500)]
    pub interval: u64,
    /// Print one frame of the list as text (COLSxROWS, e.g. `100x30`) and exit, instead
    /// of taking over the terminal.
    #[arg(long, value_name = "COLSxROWS", value_parser = parse_size)]
    pub once: Option<(u16, u16)>,
}

fn parse_size(s: &str) -> Result<(u16, u16), String> {
    let (w, h) = s.split_once('x').ok_or("expected COLSxROWS, e.g. 100x30")?;
    let n = |t: &str| t.trim().parse::<u16>().map_err(|e| format!("`{t}`: {e}"));
    let (w, h) = (n(w)?, n(h)?);
    if w < 40 || h < 10 {
        return Err("at least 40x10".into());
    }
    Ok((w, h))
}

/// Which screen `watch` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Screen {
    /// The tickets by wave, the slots and the selected ticket's log tail.
    List,
    /// The selected ticket's evidence: every attempt, gate and failure.
    Evidence,
    /// The selected ticket's newest log.
    Log,
}

/// The rows of the scrolled pane, and how many of them show at once, as
/// the last frame drew them: the keys scroll by what is on the screen.
#[derive(Debug, Clone, Copy, Default)]
struct Extent {
    rows: usize,
    page: usize,
}

impl Extent {
    fn last_top(self) -> usize {
        self.rows.saturating_sub(self.page)
    }
}

/// What the view shows besides the run.
pub(crate) struct App {
    view: RunView,
    files: RunFiles,
    tail: Tail,
    /// Ticket indices in wave order (the list's rows).
    order: Vec<usize>,
    selected: usize,
    screen: Screen,
    /// The ticket screen's first row shown; None: the end, following a
    /// growing log.
    top: Option<usize>,
    log: Vec<String>,
    extent: Cell<Extent>,
}

impl App {
    /// An app on `view`, reading the rest of the log from `files`.
    pub(crate) fn new(view: RunView, files: RunFiles) -> App {
        let tail = Tail::of(&files);
        let mut app = App {
            view,
            files,
            tail,
            order: vec![],
            selected: 0,
            screen: Screen::List,
            top: None,
            log: vec![],
            extent: Cell::new(Extent::default()),
        };
        app.reorder();
        app
    }

    fn reorder(&mut self) {
        self.order = self.view.waves.iter().flatten().copied().collect();
        // Then what the plan no longer has, under a heading of its own.
        self.order.extend(draw::removed_rows(&self.view));
        self.selected = self.selected.min(self.order.len().saturating_sub(1));
    }

    /// Folds new events and rereads the selected ticket's log tail.
    pub(crate) fn refresh(&mut self) -> Result<(), CliError> {
        if self
            .tail
            .poll(&mut self.view)
            .map_err(super::run::engine_error)?
        {
            planwright_view::read_gate_logs(&mut self.view, &self.files.dir);
            self.reorder();
        }
        self.reread_log();
        Ok(())
    }

    fn reread_log(&mut self) {
        self.log = self
            .selected_ticket()
            .map_or(vec![], |t| log_tail(&self.files, t, LOG_LINES));
    }

    fn selected_ticket(&self) -> Option<&TicketView> {
        self.order
            .get(self.selected)
            .map(|&i| &self.view.tickets[i])
    }

    /// The keys of the screen shown.
    pub(crate) fn keys(&self) -> &'static [keys::Binding] {
        match self.screen {
            Screen::List => keys::LIST,
            Screen::Evidence | Screen::Log => keys::TICKET,
        }
    }

    /// Handles one key; false when it asks to quit. A key the screen's
    /// table does not have does nothing.
    pub(crate) fn key(&mut self, code: KeyCode, mods: KeyModifiers) -> bool {
        match keys::action(self.keys(), code, mods) {
            Some(keys::Action::Quit) => false,
            Some(action) => {
                match self.screen {
                    Screen::List => self.on_list(action),
                    Screen::Evidence | Screen::Log => self.on_ticket(action),
                }
                true
            }
            None => true,
        }
    }

    fn on_list(&mut self, action: keys::Action) {
        use keys::Action as A;
        let last = self.order.len().saturating_sub(1);
        let page = self.extent.get().page.max(1);
        self.selected = match action {
            A::Up => self.selected.saturating_sub(1),
            A::Down => (self.selected + 1).min(last),
            A::PageUp => self.selected.saturating_sub(page),
            A::PageDown => (self.selected + page).min(last),
            A::First => 0,
            A::Last => last,
            A::Open => {
                if self.selected_ticket().is_some() {
                    self.show(Screen::Evidence);
                }
                self.selected
            }
            A::Switch | A::Back | A::Quit => self.selected,
        };
        self.reread_log();
    }

    fn on_ticket(&mut self, action: keys::Action) {
        use keys::Action as A;
        let extent = self.extent.get();
        let top = self.top.unwrap_or(extent.last_top()).min(extent.last_top());
        let page = extent.page.max(1);
        let moved = match action {
            A::Up => top.saturating_sub(1),
            A::Down => top + 1,
            A::PageUp => top.saturating_sub(page),
            A::PageDown => top + page,
            A::First => 0,
            A::Last => usize::MAX,
            A::Switch => {
                let other = match self.screen {
                    Screen::Log => Screen::Evidence,
                    _ => Screen::Log,
                };
                return self.show(other);
            }
            A::Back => return self.show(Screen::List),
            A::Open | A::Quit => top,
        };
        // Past the last page is the end, which follows a growing log.
        self.top = (moved < extent.last_top()).then_some(moved);
    }

    /// Shows `screen` from its start: evidence from the top, a log from
    /// its end.
    fn show(&mut self, screen: Screen) {
        self.screen = screen;
        self.top = (screen == Screen::Evidence).then_some(0);
    }
}

/// Lines of a log `watch` keeps (from its end) to show and scroll.
const LOG_LINES: usize = 2000;

/// The last `max` lines of the ticket's newest log (its last attempt's
/// agent log or its gate log, whichever changed last), read from its last
/// 256 KB, each made [`printable`].
fn log_tail(files: &RunFiles, t: &TicketView, max: usize) -> Vec<String> {
    const TAIL_BYTES: u64 = 256 * 1024;
    let dir = files.dir.join(&t.id);
    let mut candidates = vec![dir.join("ticket.log")];
    if let Some(a) = t.attempts.last() {
        candidates.push(dir.join(format!("attempt-{}.agent.log", a.n)));
    }
    let newest = candidates
        .into_iter()
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max_by_key(|(m, _)| *m);
    let Some((_, path)) = newest else {
        return vec![];
    };
    let Ok(mut f) = std::fs::File::open(&path) else {
        return vec![];
    };
    let len = f.metadata().map_or(0, |m| m.len());
    let mut bytes = Vec::new();
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(TAIL_BYTES)));
    let _ = f.take(TAIL_BYTES).read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<String> = text.lines().map(printable).collect();
    lines[lines.len().saturating_sub(max)..].to_vec()
}

/// `line` as `watch` shows it: what agents and gates wrote is shown, never
/// obeyed. Colour and other escape sequences (CSI) are dropped, a tab is
/// four spaces, and no other control character or bidirectional override
/// is left to move the terminal's cursor or reorder what it shows.
fn printable(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' if chars.peek() == Some(&'[') => {
                // Parameters and intermediates, up to the final byte.
                chars.next();
                for c in chars.by_ref() {
                    if ('\u{40}'..='\u{7e}').contains(&c) {
                        break;
                    }
                }
            }
            '\t' => out.push_str("    "),
            c if c.is_control() => {}
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {}
            c => out.push(c),
        }
    }
    out
}

fn state_color(state: ShownState) -> Color {
    match state {
        ShownState::Recorded(TicketState::Merged | TicketState::Changed) => Color::Green,
        ShownState::Recorded(TicketState::Failed) => Color::Red,
        ShownState::Recorded(TicketState::Blocked) => Color::Yellow,
        ShownState::Recorded(TicketState::Running) => Color::Cyan,
        ShownState::Recorded(TicketState::Verified | TicketState::Merging) => Color::Blue,
        ShownState::Recorded(TicketState::Pending) => Color::Gray,
        ShownState::Interrupted => Color::Magenta,
    }
}

mod draw;
mod keys;
pub(crate) use draw::draw;

/// Runs the command.
pub(crate) fn run(args: Args, _global: &Global) -> CliResult {
    let (view, files) = open_view(&args.run.repo, args.run.id.as_deref())?;
    let mut app = App::new(view, files);
    app.refresh()?;
    if let Some((w, h)) = args.once {
        print!("{}", draw::to_text(&app, w, h, crate::progress::now_ms()));
        return Ok(exit::OK);
    }
    live(&mut app, Duration::from_millis(args.interval.max(50)))?;
    Ok(exit::OK)
}

/// Restores the terminal however the view ends.
struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = terminal::disable_raw_mode();
        let _ = ratatui::crossterm::execute!(std::io::stdout(), terminal::LeaveAlternateScreen);
    }
}

fn live(app: &mut App, interval: Duration) -> Result<(), CliError> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(CliError::usage(
            "`watch` takes over a terminal, and its input or output is not one",
        )
        .hint(
            "`watch --once 100x30` prints one frame as text; `status` and `serve` show the run too",
        ));
    }
    let io = |e: std::io::Error| CliError::usage(format!("cannot draw on the terminal: {e}"));
    terminal::enable_raw_mode().map_err(io)?;
    let _restore = Restore;
    ratatui::crossterm::execute!(std::io::stdout(), terminal::EnterAlternateScreen).map_err(io)?;
    let backend = ratatui::backend::CrosstermBackend::new(std::io::stdout());
    let mut term = ratatui::Terminal::new(backend).map_err(io)?;
    loop {
        app.refresh()?;
        let now = crate::progress::now_ms();
        term.draw(|f| draw(f, app, now)).map_err(io)?;
        if !event::poll(interval).map_err(io)? {
            continue;
        }
        if let Event::Key(k) = event::read().map_err(io)? {
            if k.kind == KeyEventKind::Press && !app.key(k.code, k.modifiers) {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests;
