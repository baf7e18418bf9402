//! Drawing one frame of `watch`: a header with the counts, the tickets by
//! wave, the slots, and the selected ticket's log or evidence.

use super::{state_color, App};
use planwright_view::{duration_text, RunView, TicketView};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, List, ListItem, ListState, Paragraph, Wrap};
use ratatui::Frame;

/// Draws the whole view; `now` (ms since the epoch) times running attempts.
pub fn draw(f: &mut Frame, app: &App, now: i64) {
    let [head, main, keys] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Min(4),
        Constraint::Length(1),
    ])
    .areas(f.area());
    f.render_widget(Paragraph::new(header(&app.view)), head);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(main);
    tickets(f, app, left);
    let slots_height = app.view.slot_count().max(1) as u16 + 2;
    let [slots_area, detail] =
        Layout::vertical([Constraint::Length(slots_height), Constraint::Min(3)]).areas(right);
    f.render_widget(slots(&app.view, now), slots_area);
    detail_pane(f, app, detail);
    let help = "↑/↓ move · enter evidence/log · q quit";
    f.render_widget(
        Paragraph::new(help).style(Style::new().fg(Color::DarkGray)),
        keys,
    );
}

fn header(view: &RunView) -> Vec<Line<'static>> {
    let c = view.counts();
    let r = &view.run;
    let title = Line::from(vec![
        Span::styled("planwright ", Style::new().add_modifier(Modifier::BOLD)),
        Span::raw(format!("run {} ({}) onto {}", r.id, r.status, r.base)),
    ]);
    let mut parts = vec![
        count("merged", c.merged, Color::Green),
        count("failed", c.failed, Color::Red),
        count("blocked", c.blocked, Color::Yellow),
        count("running", c.running, Color::Cyan),
        count("pending", c.pending, Color::Gray),
    ];
    let (usage, cost) = view.usage();
    if let Some(u) = usage {
        parts.push(Span::raw(format!("· {} tokens ", u.total())));
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
    if let Some(note) = view.graph_note() {
        parts.push(Span::styled(
            format!("· {note} "),
            Style::new().fg(Color::Yellow),
        ));
    }
    vec![title, Line::from(parts)]
}

fn count(name: &str, n: usize, color: Color) -> Span<'static> {
    Span::styled(format!("{n} {name} "), Style::new().fg(color))
}

fn tickets(f: &mut Frame, app: &App, area: Rect) {
    let mut items = Vec::new();
    let mut rows = Vec::new(); // list row of each ticket in `order`
    for (w, wave) in app.view.waves.iter().enumerate() {
        items.push(ListItem::new(Line::styled(
            format!("wave {}", w + 1),
            Style::new()
                .fg(Color::DarkGray)
                .add_modifier(Modifier::BOLD),
        )));
        for &i in wave {
            rows.push(items.len());
            items.push(ListItem::new(ticket_line(&app.view.tickets[i])));
        }
    }
    let mut state = ListState::default();
    state.select(rows.get(app.selected).copied());
    let list = List::new(items)
        .block(Block::bordered().title(" tickets "))
        .highlight_style(Style::new().add_modifier(Modifier::REVERSED))
        .highlight_symbol("› ");
    f.render_stateful_widget(list, area, &mut state);
}

fn ticket_line(t: &TicketView) -> Line<'static> {
    let phase = match (&t.phase, t.state) {
        (Some(p), planwright_engine::TicketState::Running) => format!(" {p}"),
        _ => String::new(),
    };
    let attempt = match t.attempts.len() {
        0 => String::new(),
        n => format!(" #{n}"),
    };
    Line::from(vec![
        Span::styled("● ", Style::new().fg(state_color(t.state))),
        Span::styled(t.id.clone(), Style::new().add_modifier(Modifier::BOLD)),
        Span::raw(format!(" {}{phase}{attempt}", t.state.as_str())),
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
                format!("{} #{attempt} {phase}{since}", t.id)
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

fn detail_pane(f: &mut Frame, app: &App, area: Rect) {
    let Some(t) = app.selected_ticket() else {
        f.render_widget(Block::bordered().title(" log "), area);
        return;
    };
    let (title, lines): (String, Vec<Line>) = if app.evidence {
        (format!(" {} evidence ", t.id), evidence(t))
    } else {
        let inner = area.height.saturating_sub(2) as usize;
        let tail = &app.log[app.log.len().saturating_sub(inner)..];
        let lines = if tail.is_empty() {
            vec![Line::raw("(no log yet)")]
        } else {
            tail.iter().map(|l| Line::raw(l.clone())).collect()
        };
        (format!(" {} log ", t.id), lines)
    };
    let para = Paragraph::new(lines)
        .block(Block::bordered().title(title))
        .wrap(Wrap { trim: false });
    f.render_widget(para, area);
}

fn evidence(t: &TicketView) -> Vec<Line<'static>> {
    let mut lines = vec![Line::raw(format!("{}: {}", t.id, t.title))];
    if let Some(by) = &t.blocked_by {
        lines.push(Line::raw(format!("blocked: {by} failed")));
    }
    if let Some(c) = &t.merged_commit {
        lines.push(Line::raw(format!("merged as {c}")));
    }
    for a in &t.attempts {
        let what = a
            .failure
            .as_ref()
            .map_or(String::new(), |f| format!(": {}: {}", f.kind, f.message));
        lines.push(Line::raw(format!(
            "attempt {} {}{what}",
            a.n,
            a.outcome.as_str()
        )));
        for g in &a.gates {
            let mark = if g.passed == Some(false) {
                "✗"
            } else {
                "✓"
            };
            lines.push(Line::raw(format!("  {mark} {} ({})", g.name, g.detail)));
        }
        if let Some(f) = &a.failure {
            for l in f.evidence.lines().take(40) {
                lines.push(Line::styled(
                    format!("  {l}"),
                    Style::new().fg(Color::DarkGray),
                ));
            }
        }
    }
    if t.attempts.is_empty() {
        lines.push(Line::raw("no attempt yet"));
    }
    lines
}

/// One frame as plain text, `width` x `height` (`watch --once`, tests).
pub fn to_text(app: &App, width: u16, height: u16, now: i64) -> String {
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
