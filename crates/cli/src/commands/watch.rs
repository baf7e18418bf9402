//! `planwright watch --repo DIR`: a live terminal view of a run, drawn with
//! ratatui from the run's event log. It only reads (the state store once,
//! then the growing event log and the ticket logs), so it can attach to a
//! run started elsewhere and never slows it.

use super::observe::open_view;
use super::observe::RunArgs;
use crate::error::{exit, CliError, CliResult};
use crate::Global;
use planwright_engine::TicketState;
use planwright_view::{RunFiles, RunView, Tail, TicketView};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::crossterm::terminal;
use ratatui::style::Color;
use std::io::{Read, Seek, SeekFrom};
use std::time::Duration;

/// Watch a run live in the terminal: tickets by wave with state, phase and
/// attempt; what each slot is doing; paused pools; tokens and cost; the
/// tail of the selected ticket's log. Keys: ↑/↓ (or k/j) move, Enter (or
/// e) shows the selected ticket's evidence, q quits.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub run: RunArgs,
    /// How often to look for new events, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 500)]
    pub interval: u64,
    /// Print one frame as text (COLSxROWS, e.g. `100x30`) and exit, instead
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

/// What the view shows besides the run.
pub struct App {
    view: RunView,
    files: RunFiles,
    tail: Tail,
    /// Ticket indices in wave order (the list's rows).
    order: Vec<usize>,
    selected: usize,
    evidence: bool,
    log: Vec<String>,
}

impl App {
    /// An app on `view`, reading the rest of the log from `files`.
    pub fn new(view: RunView, files: RunFiles) -> App {
        let tail = Tail::new(files.events.clone());
        let mut app = App {
            view,
            files,
            tail,
            order: vec![],
            selected: 0,
            evidence: false,
            log: vec![],
        };
        app.reorder();
        app
    }

    fn reorder(&mut self) {
        self.order = self.view.waves.iter().flatten().copied().collect();
        self.selected = self.selected.min(self.order.len().saturating_sub(1));
    }

    /// Folds new events and rereads the selected ticket's log tail.
    pub fn refresh(&mut self) -> Result<(), CliError> {
        if self
            .tail
            .poll(&mut self.view)
            .map_err(super::run::engine_error)?
        {
            planwright_view::read_gate_logs(&mut self.view, &self.files.dir);
            self.reorder();
        }
        self.log = self
            .selected_ticket()
            .map_or(vec![], |t| log_tail(&self.files, t, 200));
        Ok(())
    }

    fn selected_ticket(&self) -> Option<&TicketView> {
        self.order
            .get(self.selected)
            .map(|&i| &self.view.tickets[i])
    }

    /// Handles one key; false when it asks to quit.
    pub fn key(&mut self, code: KeyCode, mods: KeyModifiers) -> bool {
        match code {
            KeyCode::Char('q') | KeyCode::Esc => return false,
            KeyCode::Char('c') if mods.contains(KeyModifiers::CONTROL) => return false,
            KeyCode::Down | KeyCode::Char('j') => {
                self.selected = (self.selected + 1).min(self.order.len().saturating_sub(1));
            }
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::Home | KeyCode::Char('g') => self.selected = 0,
            KeyCode::End | KeyCode::Char('G') => self.selected = self.order.len().saturating_sub(1),
            KeyCode::Enter | KeyCode::Char('e') => self.evidence = !self.evidence,
            _ => {}
        }
        self.log = self
            .selected_ticket()
            .map_or(vec![], |t| log_tail(&self.files, t, 200));
        true
    }
}

/// The last `max` lines of the ticket's newest log (its last attempt's
/// agent log or its gate log, whichever changed last), without control
/// characters, which would move the cursor of the watching terminal.
fn log_tail(files: &RunFiles, t: &TicketView, max: usize) -> Vec<String> {
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
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(32 * 1024)));
    let _ = f.take(32 * 1024).read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            l.chars()
                .filter(|c| !c.is_control() || *c == '\t')
                .collect()
        })
        .collect();
    lines[lines.len().saturating_sub(max)..].to_vec()
}

fn state_color(state: TicketState) -> Color {
    match state {
        TicketState::Merged | TicketState::Changed => Color::Green,
        TicketState::Failed => Color::Red,
        TicketState::Blocked => Color::Yellow,
        TicketState::Running => Color::Cyan,
        TicketState::Verified | TicketState::Merging => Color::Blue,
        TicketState::Pending => Color::Gray,
    }
}

mod draw;
pub use draw::draw;

/// Runs the command.
pub fn run(args: Args, _global: &Global) -> CliResult {
    let (view, files) = open_view(&args.run.repo, args.run.id.as_deref())?;
    let mut app = App::new(view, files);
    app.refresh()?;
    if let Some((w, h)) = args.once {
        print!("{}", draw::to_text(&app, w, h, now_ms()));
        return Ok(exit::OK);
    }
    live(&mut app, Duration::from_millis(args.interval.max(50)))?;
    Ok(exit::OK)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
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
        let now = now_ms();
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
