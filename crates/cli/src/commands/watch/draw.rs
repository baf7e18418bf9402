//! Drawing one frame of `watch`: a header with the counts, then the
//! screen (the list of tickets with the slots and the selected ticket's
//! log tail, or one ticket's evidence or log, scrolled), then the footer
//! of the screen's keys.

use super::{keys, printable, state_color, App, Extent, Screen};
use planwright_engine::agent::ActivityKind;
use planwright_engine::TicketState;
use planwright_view::{duration_text, AttemptOutcome, RunView, TicketView};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, List, ListItem, ListState, Paragraph, Wrap};
use ratatui::Frame;
use unicode_width::UnicodeWidthChar;

/// Draws the whole view; `now` (ms since the epoch) times what still runs.
pub(crate) fn draw(f: &mut Frame, app: &App, now: i64) {
    let footer = footer_lines(&keys::footer(app.keys()), f.area().width as usize);
    let [head, main, keys_area] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Min(4),
        Constraint::Length(footer.len() as u16),
    ])
    .areas(f.area());
    f.render_widget(Paragraph::new(header(&app.view)), head);
    match app.screen {
        Screen::List => list_screen(f, app, main, now),
        Screen::Evidence | Screen::Log => ticket_screen(f, app, main, now),
    }
    let footer: Vec<Line> = footer.into_iter().map(Line::raw).collect();
    f.render_widget(
        Paragraph::new(footer).style(Style::new().fg(Color::DarkGray)),
        keys_area,
    );
}

/// The footer's entries on as few lines as fit `width`, never splitting
/// an entry, so every key shows however narrow the terminal.
fn footer_lines(entries: &[String], width: usize) -> Vec<String> {
    let mut lines: Vec<String> = vec![];
    for e in entries {
        match lines.last_mut() {
            Some(l) if text_width(l) + 3 + text_width(e) <= width => {
                l.push_str(" · ");
                l.push_str(e);
            }
            _ => lines.push(e.clone()),
        }
    }
    lines
}

fn text_width(s: &str) -> usize {
    s.chars().map(|c| c.width().unwrap_or(0)).sum()
}

fn header(view: &RunView) -> Vec<Line<'static>> {
    let c = view.counts();
    let r = &view.run;
    let title = Line::from(vec![
        Span::styled("planwright ", Style::new().add_modifier(Modifier::BOLD)),
        Span::raw(format!("run {} ({}) onto {}", r.id, r.status, r.base)),
    ]);
    let mut parts: Vec<Span> = (c.shown(r.status).into_iter())
        .map(|(name, n)| Span::styled(format!("{n} {name} "), Style::new().fg(count_color(name))))
        .collect();
    let (usage, cost) = view.usage();
    if let Some(u) = usage {
        parts.push(Span::raw(format!(
            "· {} ",
            planwright_plan::words::count(u.total() as usize, "token")
        )));
    }
    if let Some(c) = cost {
        parts.push(Span::raw(format!("· ${c:.2} ")));
    }
    for (pool, p) in &view.paused {
        parts.push(Span::styled(
            format!("· {pool} paused ({}) ", p.reason),
            Style::new().fg(Color::Yellow),
        ));
    }
    if let Some(line) = view.queue_line() {
        parts.push(Span::raw(format!("· {line} ")));
    }
    if let Some(note) = view.graph_note() {
        parts.push(Span::styled(
            format!("· {note} "),
            Style::new().fg(Color::Yellow),
        ));
    }
    vec![title, Line::from(parts)]
}

fn count_color(name: &str) -> Color {
    match name {
        "merged" => Color::Green,
        "failed" => Color::Red,
        "blocked" => Color::Yellow,
        "running" => Color::Cyan,
        "interrupted" => Color::Magenta,
        _ => Color::Gray,
    }
}

fn list_screen(f: &mut Frame, app: &App, area: Rect, now: i64) {
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(area);
    tickets(f, app, left, now);
    let slots_height = app.view.slot_count().max(1) as u16 + 2;
    let [slots_area, log_area] =
        Layout::vertical([Constraint::Length(slots_height), Constraint::Min(3)]).areas(right);
    f.render_widget(slots(&app.view, now), slots_area);
    log_preview(f, app, log_area);
}

/// What a ticket's row of the list says, column by column.
struct Cells {
    state: String,
    attempt: String,
    time: String,
    rejected: String,
}

impl Cells {
    fn of(view: &RunView, t: &TicketView, now: i64) -> Cells {
        let state = match (&t.phase, t.state) {
            _ if t.removed => "removed".to_string(),
            (Some(p), TicketState::Running) => format!("{} {p}", t.state),
            _ => view.shown_state(t).as_str().to_string(),
        };
        let attempt = match t.attempts.len() {
            0 => String::new(),
            n => format!("#{n}"),
        };
        let rejected = match rejections(t) {
            0 => String::new(),
            n => format!("✗{n}"),
        };
        Cells {
            state,
            attempt,
            time: ticket_time(t, now).map_or(String::new(), duration_text),
            rejected,
        }
    }
}

/// The widths of the list's columns, so that its rows line up.
struct Widths {
    id: usize,
    state: usize,
    attempt: usize,
    time: usize,
    rejected: usize,
}

fn tickets(f: &mut Frame, app: &App, area: Rect, now: i64) {
    let cells: Vec<Cells> = (app.view.tickets.iter())
        .map(|t| Cells::of(&app.view, t, now))
        .collect();
    let widest = |cell: fn(&Cells) -> &str| {
        let shown = app.order.iter().map(|&i| text_width(cell(&cells[i])));
        shown.max().unwrap_or(0)
    };
    let widths = Widths {
        id: (app.order.iter())
            .map(|&i| text_width(&app.view.tickets[i].id))
            .max()
            .unwrap_or(0),
        state: widest(|c| &c.state),
        attempt: widest(|c| &c.attempt),
        time: widest(|c| &c.time),
        rejected: widest(|c| &c.rejected),
    };
    let mut items = Vec::new();
    let mut rows = Vec::new(); // list row of each ticket in `order`
    let removed = removed_rows(&app.view);
    let groups = (app.view.waves.iter().enumerate())
        .map(|(w, wave)| (format!("wave {}", w + 1), wave.clone()))
        .chain((!removed.is_empty()).then(|| ("removed from the plan".to_string(), removed)));
    for (heading, wave) in groups {
        items.push(ListItem::new(Line::styled(
            heading,
            Style::new()
                .fg(Color::DarkGray)
                .add_modifier(Modifier::BOLD),
        )));
        for i in wave {
            rows.push(items.len());
            let t = &app.view.tickets[i];
            let color = state_color(app.view.shown_state(t));
            items.push(ListItem::new(ticket_line(t, color, &cells[i], &widths)));
        }
    }
    app.extent.set(Extent {
        rows: items.len(),
        page: area.height.saturating_sub(2) as usize,
    });
    let mut state = ListState::default();
    state.select(rows.get(app.selected).copied());
    let list = List::new(items)
        .block(Block::bordered().title(" tickets "))
        .highlight_style(Style::new().add_modifier(Modifier::REVERSED))
        .highlight_symbol("› ");
    f.render_stateful_widget(list, area, &mut state);
}

/// The tickets the plan no longer has that no wave holds (a run's view
/// laid out after they left the plan), listed after the waves.
pub(super) fn removed_rows(view: &RunView) -> Vec<usize> {
    let placed: std::collections::HashSet<usize> = view.waves.iter().flatten().copied().collect();
    (0..view.tickets.len())
        .filter(|i| view.tickets[*i].removed && !placed.contains(i))
        .collect()
}

/// From its first attempt's start to its last one's end, or to `now`
/// while that one runs; None before it starts or when the log has no times.
fn ticket_time(t: &TicketView, now: i64) -> Option<i64> {
    let start = t.attempts.iter().find_map(|a| a.started_ms)?;
    let last = t.attempts.last()?;
    let end = match last.outcome {
        AttemptOutcome::Running => now,
        _ => last.ended_ms?,
    };
    Some((end - start).max(0))
}

fn rejections(t: &TicketView) -> usize {
    (t.attempts.iter())
        .filter(|a| a.outcome == AttemptOutcome::Rejected)
        .count()
}

/// `● B  running agent  #2  44.0s  ✗1  lexer <fast>`: state, attempt,
/// time, attempts rejected (blank when none), title; a column no ticket
/// fills takes no room.
fn ticket_line(t: &TicketView, color: Color, c: &Cells, w: &Widths) -> Line<'static> {
    let column = |text: &str, width: usize, right: bool| match (width, right) {
        (0, _) => String::new(),
        (_, true) => format!("  {text:>width$}"),
        (_, false) => format!("  {text:width$}"),
    };
    Line::from(vec![
        Span::styled("● ", Style::new().fg(color)),
        Span::styled(
            format!("{:w$}", t.id, w = w.id),
            Style::new().add_modifier(Modifier::BOLD),
        ),
        Span::raw(column(&c.state, w.state, false)),
        Span::raw(column(&c.attempt, w.attempt, true)),
        Span::raw(column(&c.time, w.time, true)),
        Span::styled(
            column(&c.rejected, w.rejected, false),
            Style::new().fg(Color::Red),
        ),
        Span::raw(format!("  {}", t.title)),
    ])
}

fn slots(view: &RunView, now: i64) -> Paragraph<'static> {
    let mut lines = Vec::new();
    for (n, holder) in view.slot_holders().iter().enumerate() {
        let what = match holder {
            Some((i, attempt)) => {
                let t = &view.tickets[*i];
                let a = t.attempts.iter().find(|a| a.n == *attempt);
                let since = a.and_then(|a| a.started_ms).map_or(String::new(), |s| {
                    format!(" {}", duration_text((now - s).max(0)))
                });
                let phase = a.map_or("", |a| a.phase.as_str());
                // On a worker, its machine: `on ssh build-1`.
                let on = (a.and_then(|a| a.ran_at.as_ref()?.worker.as_deref()))
                    .map_or(String::new(), |w| format!(" on {w}"));
                format!("{} #{attempt} {phase}{since}{on}", t.id)
            }
            None => "idle".into(),
        };
        lines.push(Line::raw(format!("slot {}: {what}", n + 1)));
    }
    if lines.is_empty() {
        lines.push(Line::raw("no attempt has started yet"));
    }
    Paragraph::new(lines).block(Block::bordered().title(" slots "))
}

/// The end of the selected ticket's log, on the list screen.
fn log_preview(f: &mut Frame, app: &App, area: Rect) {
    let Some(t) = app.selected_ticket() else {
        f.render_widget(Block::bordered().title(" log "), area);
        return;
    };
    let inner = area.height.saturating_sub(2) as usize;
    let tail = &app.log[app.log.len().saturating_sub(inner)..];
    let lines = if tail.is_empty() {
        vec![Line::raw("(no log yet)")]
    } else {
        tail.iter().map(|l| Line::raw(l.clone())).collect()
    };
    let para = Paragraph::new(lines)
        .block(Block::bordered().title(format!(" {} log ", t.id)))
        .wrap(Wrap { trim: false });
    f.render_widget(para, area);
}

/// The selected ticket's evidence or log, wrapped to the pane and scrolled
/// to the app's row (the end when it follows).
fn ticket_screen(f: &mut Frame, app: &App, area: Rect, now: i64) {
    let Some(t) = app.selected_ticket() else {
        f.render_widget(Block::bordered().title(" ticket "), area);
        return;
    };
    let (what, lines) = match app.screen {
        Screen::Log if app.log.is_empty() => ("log", vec![plain("(no log yet)")]),
        Screen::Log => ("log", app.log.iter().map(|l| plain(l)).collect()),
        _ => ("evidence", evidence(t, now)),
    };
    let rows = wrap(&lines, area.width.saturating_sub(2) as usize);
    let extent = Extent {
        rows: rows.len(),
        page: area.height.saturating_sub(2) as usize,
    };
    app.extent.set(extent);
    let top = app
        .top
        .map_or(extent.last_top(), |t| t.min(extent.last_top()));
    let end = (top + extent.page).min(rows.len());
    let position = format!(" {}-{end} of {} ", top + 1, rows.len());
    let block = Block::bordered()
        .title(format!(" {} {what}: {} ", t.id, t.title))
        .title(Line::raw(position).right_aligned());
    let shown: Vec<Line> = rows[top..end].to_vec();
    f.render_widget(Paragraph::new(shown).block(block), area);
}

fn plain(text: &str) -> (String, Style) {
    (text.to_string(), Style::new())
}

/// Each line [`printable`], cut into rows of at most `width` columns, at
/// the last space that fits when there is one.
fn wrap(lines: &[(String, Style)], width: usize) -> Vec<Line<'static>> {
    let width = width.max(1);
    let mut rows = Vec::new();
    for (text, style) in lines {
        let mut rest = printable(text);
        while text_width(&rest) > width {
            let mut used = 0;
            let mut cut = 0; // byte index of the first character that does not fit
            for (i, c) in rest.char_indices() {
                used += c.width().unwrap_or(0);
                if used > width {
                    cut = i;
                    break;
                }
            }
            let cut = cut.max(rest.chars().next().map_or(1, char::len_utf8));
            let space = if rest[cut..].starts_with(' ') {
                Some(cut)
            } else {
                rest[..cut].rfind(' ').filter(|&i| i > 0)
            };
            let (row, next) = match space {
                Some(i) => (&rest[..i], &rest[i + 1..]),
                None => (&rest[..cut], &rest[cut..]),
            };
            rows.push(Line::styled(row.to_string(), *style));
            rest = next.to_string();
        }
        rows.push(Line::styled(rest, *style));
    }
    rows
}

/// Every attempt's outcome and time, its agent's activity (as `acp`
/// streams it), its gate results and its failure's whole evidence.
fn evidence(t: &TicketView, now: i64) -> Vec<(String, Style)> {
    let dim = Style::new().fg(Color::DarkGray);
    let mut lines = vec![plain(&format!("{}: {}", t.id, t.title))];
    if let Some(by) = &t.blocked_by {
        lines.push(plain(&format!("blocked: {by} failed")));
    }
    if let Some(c) = &t.merged_commit {
        lines.push(plain(&format!("merged as {c}")));
    }
    for a in &t.attempts {
        let took = match (a.started_ms, a.ended_ms, a.outcome) {
            (Some(s), _, AttemptOutcome::Running) => {
                format!(" ({})", duration_text((now - s).max(0)))
            }
            (Some(s), Some(e), _) => format!(" ({})", duration_text((e - s).max(0))),
            _ => String::new(),
        };
        let what = a
            .failure
            .as_ref()
            .map_or(String::new(), |f| format!(": {}: {}", f.kind, f.message));
        lines.push(plain(&format!(
            "attempt {} {}{took}{what}",
            a.n,
            a.outcome.as_str()
        )));
        for x in &a.activity {
            let status = x
                .status
                .as_ref()
                .map_or(String::new(), |s| format!(" ({s})"));
            let style = match x.kind {
                ActivityKind::Message => Style::new(),
                _ => dim,
            };
            lines.push((format!("  · {} {}{status}", x.kind.as_str(), x.text), style));
        }
        for g in &a.gates {
            let mark = if g.passed == Some(false) {
                "✗"
            } else {
                "✓"
            };
            lines.push(plain(&format!("  {mark} {} ({})", g.name, g.detail)));
        }
        if let Some(f) = &a.failure {
            for l in f.evidence.lines() {
                lines.push((format!("  {l}"), dim));
            }
        }
    }
    if t.attempts.is_empty() {
        lines.push(plain("no attempt yet"));
    }
    lines
}

/// One frame as plain text, `width` x `height` (`watch --once`, tests).
pub(super) fn to_text(app: &App, width: u16, height: u16, now: i64) -> String {
    let backend = ratatui::backend::TestBackend::new(width, height);
    let mut term = ratatui::Terminal::new(backend).expect("a test backend never fails");
    term.draw(|f| draw(f, app, now))
        .expect("a test backend never fails");
    let buf = term.backend().buffer();
    let mut out = String::new();
    for y in 0..height {
        let line: String = (0..width).map(|x| buf[(x, y)].symbol()).collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
