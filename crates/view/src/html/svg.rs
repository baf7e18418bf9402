//! The two pictures of the report, drawn as inline SVG by planwright (no
//! Graphviz, no script): the DAG laid out in columns by wave, and a Gantt
//! chart of attempts per job slot.

use super::{anchor, duration_text, esc};
use crate::view::{AttemptView, RunView};
use planwright_engine::TicketState;
use std::fmt::Write;

const NODE_W: i64 = 168;
const NODE_H: i64 = 44;
const COL_GAP: i64 = 56;
const ROW_GAP: i64 = 14;
const PAD: i64 = 12;

/// Where each ticket's box is: (x, y) by ticket index.
fn layout(view: &RunView) -> Vec<Option<(i64, i64)>> {
    let mut at = vec![None; view.tickets.len()];
    for (w, wave) in view.waves.iter().enumerate() {
        for (row, &i) in wave.iter().enumerate() {
            let x = PAD + w as i64 * (NODE_W + COL_GAP);
            let y = PAD + 20 + row as i64 * (NODE_H + ROW_GAP);
            if let Some(slot) = at.get_mut(i) {
                *slot = Some((x, y));
            }
        }
    }
    at
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max - 1).collect();
    format!("{head}…")
}

/// The characters of a box's second line that fit inside it (11 px text,
/// at most 6.5 px a character, 10 px in from each side).
pub(crate) const SUB_CHARS: usize = ((NODE_W - 20) * 10 / 65) as usize;

/// A box's second line: the whole state, then as much of the rest as fits.
fn sub_label(state: &str, rest: &str) -> String {
    let room = SUB_CHARS.saturating_sub(state.chars().count());
    if rest.is_empty() || room < 4 {
        return state.to_string();
    }
    format!("{state}{}", clip(rest, room))
}

/// The control points of the edge from the box at `from` to the box at
/// `to`. Between neighbouring waves, a curve inside the gap between their
/// columns (its four points hold it). An edge that skips a wave would cross
/// that wave's boxes: it runs in the gaps instead, along the gap beside its
/// source column, the row gap nearest the middle of its ends and the gap
/// beside its target column, which no box reaches.
fn edge_points(from: (i64, i64), to: (i64, i64), rows: i64) -> Vec<(i64, i64)> {
    let (sx, sy, ex, ey) = (
        from.0 + NODE_W,
        from.1 + NODE_H / 2,
        to.0,
        to.1 + NODE_H / 2,
    );
    if ex - sx <= COL_GAP {
        let mid = (sx + ex) / 2;
        return vec![(sx, sy), (mid, sy), (mid, ey), (ex, ey)];
    }
    let pitch = NODE_H + ROW_GAP;
    let top = PAD + 20 - ROW_GAP / 2;
    let k = (((sy + ey) / 2 - top + pitch / 2) / pitch).clamp(0, rows);
    let cy = top + k * pitch;
    let (gx1, gx2) = (sx + COL_GAP / 2, ex - COL_GAP / 2);
    vec![
        (sx, sy),
        (gx1, sy),
        (gx1, cy),
        (gx2, cy),
        (gx2, ey),
        (ex, ey),
    ]
}

/// SVG path data for `edge_points`: four points a curve, more a polyline.
fn edge_path(p: &[(i64, i64)]) -> String {
    let mut d = format!("M{},{}", p[0].0, p[0].1);
    if p.len() == 4 {
        let _ = write!(
            d,
            " C{},{} {},{} {},{}",
            p[1].0, p[1].1, p[2].0, p[2].1, p[3].0, p[3].1
        );
    } else {
        for (x, y) in &p[1..] {
            let _ = write!(d, " L{x},{y}");
        }
    }
    d
}

/// The DAG: one column per wave, a box per ticket coloured by state, an
/// arrow per dependency; each box links to the ticket's section.
pub(crate) fn dag(view: &RunView) -> String {
    let at = layout(view);
    let cols = view.waves.len().max(1) as i64;
    let rows = view.waves.iter().map(Vec::len).max().unwrap_or(0).max(1) as i64;
    let width = 2 * PAD + cols * NODE_W + (cols - 1) * COL_GAP;
    let height = 2 * PAD + 20 + rows * (NODE_H + ROW_GAP);
    let mut s = format!(
        "<svg class=\"dag\" role=\"img\" aria-label=\"ticket graph by wave\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" xmlns=\"http://www.w3.org/2000/svg\">\
         <defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" class=\"arrowhead\"/></marker></defs>"
    );
    for w in 0..view.waves.len() {
        let x = PAD + w as i64 * (NODE_W + COL_GAP);
        let _ = write!(
            s,
            "<text class=\"wave-label\" x=\"{x}\" y=\"{}\">wave {}</text>",
            PAD + 10,
            w + 1
        );
    }
    for &(from, to) in &view.edges {
        let (Some(Some((x1, y1))), Some(Some((x2, y2)))) = (at.get(from), at.get(to)) else {
            continue;
        };
        let _ = write!(
            s,
            "<path class=\"edge\" d=\"{}\" marker-end=\"url(#arrow)\"/>",
            edge_path(&edge_points((*x1, *y1), (*x2, *y2), rows))
        );
    }
    for (i, t) in view.tickets.iter().enumerate() {
        let Some((x, y)) = at[i] else { continue };
        let attempts = match t.attempts.len() {
            0 => String::new(),
            n => format!(" · {}", planwright_plan::words::count(n, "attempt")),
        };
        let phase = match (&t.phase, t.state) {
            (Some(p), TicketState::Running) => format!(" · {p}"),
            _ => String::new(),
        };
        let st = view.shown_state(t).as_str();
        let _ = write!(
            s,
            "<a href=\"#t-{anchor}\"><g class=\"node st-{st}\" data-ticket=\"{id}\"><title>{id}: {title}</title>\
             <rect x=\"{x}\" y=\"{y}\" width=\"{NODE_W}\" height=\"{NODE_H}\" rx=\"7\"/>\
             <text x=\"{tx}\" y=\"{ty1}\" class=\"id\">{label}</text><text x=\"{tx}\" y=\"{ty2}\" class=\"sub\">{sub}</text></g></a>",
            anchor = anchor(&t.id),
            id = esc(&t.id),
            title = esc(&t.title),
            label = esc(&clip(&t.id, 20)),
            sub = esc(&sub_label(st, &format!("{phase}{attempts}"))),
            tx = x + 10,
            ty1 = y + 18,
            ty2 = y + 35,
        );
    }
    s.push_str("</svg>");
    s
}

const GANTT_W: i64 = 900;
const LABEL_W: i64 = 64;
const ROW_H: i64 = 30;

/// What the chart's x axis measures: time, or (when times are whole
/// seconds and the run took a few seconds, as the demo does) the position
/// of events in the log, which still shows the order and overlap.
struct Axis {
    by_events: bool,
    start: i64,
    len: i64,
}

impl Axis {
    fn of(view: &RunView) -> Option<Axis> {
        let attempts = view.tickets.iter().flat_map(|t| &t.attempts);
        let first_event = attempts.clone().map(|a| a.started_event).min()? as i64;
        let start = attempts.clone().filter_map(|a| a.started_ms).min();
        let end = attempts
            .filter_map(|a| a.ended_ms.or(view.run.last_event_ms))
            .chain(view.run.finished_ms)
            .max();
        if let (Some(s), Some(e)) = (start, end) {
            if view.subsecond_times || e - s >= 10_000 {
                return Some(Axis {
                    by_events: false,
                    start: s,
                    // A sub-second run fills the chart too, drawn in ms.
                    len: (e - s).max(100),
                });
            }
        }
        let len = (view.events as i64 - first_event).max(1);
        Some(Axis {
            by_events: true,
            start: first_event,
            len,
        })
    }

    /// An attempt's start and end on this axis.
    fn range(&self, a: &AttemptView, view: &RunView) -> Option<(i64, i64)> {
        if self.by_events {
            let end = a.ended_event.unwrap_or(view.events);
            return Some((a.started_event as i64, end.max(a.started_event) as i64));
        }
        let start = a.started_ms?;
        let end = a.ended_ms.or(view.run.last_event_ms).unwrap_or(start);
        Some((start, end.max(start)))
    }

    fn label(&self, offset: i64) -> String {
        if self.by_events {
            format!("event {}", self.start + offset)
        } else if self.len < 2000 {
            format!("{offset}ms")
        } else {
            duration_text(offset)
        }
    }
}

/// The Gantt chart: a row per job slot, a bar per attempt from its start
/// until its slot was freed, coloured by outcome.
pub(crate) fn gantt(view: &RunView) -> String {
    let Some(axis) = Axis::of(view) else {
        return "<p class=\"muted\" id=\"no-attempts\">no attempt has started yet</p>".into();
    };
    let slots = view
        .tickets
        .iter()
        .flat_map(|t| &t.attempts)
        .filter_map(|a| a.slot)
        .max()
        .map_or(1, |m| m + 1) as i64;
    let height = 24 + slots * ROW_H;
    let plot = GANTT_W - LABEL_W - PAD - 20;
    let x_of = |v: i64| LABEL_W + (v - axis.start) * plot / axis.len;
    let mut s = format!(
        "<svg class=\"gantt\" role=\"img\" aria-label=\"attempts per slot\" data-axis=\"{}\" viewBox=\"0 0 {GANTT_W} {height}\" width=\"100%\" preserveAspectRatio=\"xMinYMin meet\" xmlns=\"http://www.w3.org/2000/svg\">",
        if axis.by_events { "events" } else { "time" }
    );
    for k in 0..=4 {
        let x = LABEL_W + k * plot / 4;
        let _ = write!(
            s,
            "<line class=\"tick\" x1=\"{x}\" y1=\"0\" x2=\"{x}\" y2=\"{}\"/><text class=\"axis\" x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            height - 14,
            height - 2,
            axis.label(k * axis.len / 4)
        );
    }
    for slot in 0..slots {
        let _ = write!(
            s,
            "<text class=\"slot-label\" x=\"4\" y=\"{}\">slot {}</text>",
            slot * ROW_H + 19,
            slot + 1
        );
    }
    let bars: Vec<(&str, &AttemptView, i64, i64)> = view
        .tickets
        .iter()
        .flat_map(|t| t.attempts.iter().map(move |a| (t.id.as_str(), a)))
        .filter_map(|(id, a)| {
            let (start, end) = axis.range(a, view)?;
            let x = x_of(start);
            Some((id, a, x, (x_of(end) - x).max(3)))
        })
        .collect();
    for &(id, a, x, w) in &bars {
        let room = room(&bars, a.slot, x, w);
        bar(&mut s, id, a, (x, w), room);
    }
    s.push_str("</svg>");
    s
}

/// The free stretch of the bar at `x`, `w` wide, in `slot`'s row: from the
/// end of the bar before it to the start of the bar after it (the chart's
/// edges where there is none).
fn room(
    bars: &[(&str, &AttemptView, i64, i64)],
    slot: Option<usize>,
    x: i64,
    w: i64,
) -> (i64, i64) {
    let row = bars.iter().filter(|b| b.1.slot == slot);
    let before = row.clone().map(|b| b.2 + b.3).filter(|&e| e <= x).max();
    let after = row.map(|b| b.2).filter(|&b| b >= x + w).min();
    (before.unwrap_or(LABEL_W), after.unwrap_or(GANTT_W))
}

/// One attempt's bar at `x`, `w` wide; `free` is the stretch of its row
/// no other bar takes (for a label that does not fit inside).
fn bar(s: &mut String, id: &str, a: &AttemptView, (x, w): (i64, i64), free: (i64, i64)) {
    let Some(slot) = a.slot else { return };
    let y = slot as i64 * ROW_H + 4;
    let label = format!("{id} #{}", a.n);
    let took = match (a.started_ms, a.ended_ms) {
        (Some(s), Some(e)) if e >= s => format!(", {}", duration_text(e - s)),
        _ => String::new(),
    };
    let _ = write!(
        s,
        "<a href=\"#t-{anchor}\"><g class=\"bar out-{o}\" data-ticket=\"{eid}\"><title>{elabel}: {o}{took}</title>\
         <rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" rx=\"4\"/>",
        anchor = anchor(id),
        o = a.outcome.as_str(),
        eid = esc(id),
        elabel = esc(&label),
        h = ROW_H - 8,
    );
    // The label inside the bar where it fits (about 7 px a character); a
    // short bar's beside it, after it or (at the chart's end) before it.
    let chars = |px: i64| (px / 7).max(0) as usize;
    let (inside, right, left) = (
        chars(w - 5),
        chars(free.1 - x - w - 4),
        chars(x - 4 - free.0),
    );
    let whole = label.chars().count();
    let (tx, anchor, class, fits) = if inside >= whole.min(8) {
        (x + 5, "start", "inside", inside)
    } else if right >= whole || right >= left {
        (x + w + 4, "start", "outside", right)
    } else {
        (x - 4, "end", "outside", left)
    };
    if fits < 4 {
        // No room for a readable label: the bar's title still names it.
        s.push_str("</g></a>");
        return;
    }
    let shown = clip(&label, fits);
    let _ = write!(
        s,
        "<text class=\"{class}\" x=\"{tx}\" y=\"{}\" text-anchor=\"{anchor}\">{}</text></g></a>",
        y + 16,
        esc(&shown)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the segment from `a` to `b` enters the inside of the box at
    /// `(x, y)` (touching its edge is not entering).
    fn crosses((a, b): ((i64, i64), (i64, i64)), (x, y): (i64, i64)) -> bool {
        // Sampled finely: a segment is straight, a box far wider than a step.
        (0..=200).any(|i| {
            let px = a.0 as f64 + (b.0 - a.0) as f64 * i as f64 / 200.0;
            let py = a.1 as f64 + (b.1 - a.1) as f64 * i as f64 / 200.0;
            px > x as f64 && px < (x + NODE_W) as f64 && py > y as f64 && py < (y + NODE_H) as f64
        })
    }

    #[test]
    fn no_edge_crosses_a_box_but_its_two_ends() {
        // Four waves of three rows, every box linked to every box of every
        // later wave: edges skip one and two waves, up, down and straight.
        let rows = 3;
        let boxes: Vec<(i64, i64)> = (0..4)
            .flat_map(|w| {
                (0..rows).map(move |r| {
                    (
                        PAD + w * (NODE_W + COL_GAP),
                        PAD + 20 + r * (NODE_H + ROW_GAP),
                    )
                })
            })
            .collect();
        let mut skipping = 0;
        for (i, &from) in boxes.iter().enumerate() {
            for (j, &to) in boxes.iter().enumerate() {
                if to.0 <= from.0 {
                    continue;
                }
                let points = edge_points(from, to, rows);
                skipping += usize::from(points.len() > 4);
                assert_eq!(
                    points.first(),
                    Some(&(from.0 + NODE_W, from.1 + NODE_H / 2))
                );
                assert_eq!(points.last(), Some(&(to.0, to.1 + NODE_H / 2)));
                for segment in points.windows(2) {
                    for (k, &other) in boxes.iter().enumerate() {
                        assert!(
                            k == i || k == j || !crosses((segment[0], segment[1]), other),
                            "edge {i}->{j} {points:?} crosses box {k} at {other:?}"
                        );
                    }
                }
            }
        }
        assert!(skipping > 0);
    }
}
