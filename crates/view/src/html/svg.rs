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
/// until its slot was freed, coloured by outcome, each with its label.
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
        .map_or(1, |m| m + 1);
    let plot = GANTT_W - LABEL_W - PAD - 20;
    let x_of = |v: i64| LABEL_W + (v - axis.start) * plot / axis.len;
    let bars: Vec<Bar> = view
        .tickets
        .iter()
        .flat_map(|t| t.attempts.iter().map(move |a| (t.id.as_str(), a)))
        .filter_map(|(id, a)| {
            let (start, end) = axis.range(a, view)?;
            let x = x_of(start);
            let label = format!("{id} #{}", a.n);
            Some(Bar {
                id,
                a,
                slot: a.slot?,
                label,
                x,
                w: (x_of(end) - x).max(3),
            })
        })
        .collect();
    let labels = place_labels(&bars, slots);
    // Each row is as tall as its bars and the lanes of labels below them.
    let mut tops = Vec::with_capacity(slots);
    let mut bottom = 0;
    for slot in 0..slots {
        tops.push(bottom);
        let lanes = (labels.iter().zip(&bars))
            .filter(|(l, b)| b.slot == slot && matches!(l, Label::Below(_)))
            .map(|(l, _)| match l {
                Label::Below(lane) => lane + 1,
                _ => 0,
            })
            .max()
            .unwrap_or(0);
        bottom += ROW_H + lanes as i64 * LANE_H;
    }
    let height = 24 + bottom;
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
    for (slot, top) in tops.iter().enumerate() {
        let _ = write!(
            s,
            "<text class=\"slot-label\" x=\"4\" y=\"{}\">slot {}</text>",
            top + 19,
            slot + 1
        );
    }
    for (b, label) in bars.iter().zip(&labels) {
        bar(&mut s, b, tops[b.slot] + 4, label);
    }
    s.push_str("</svg>");
    s
}

/// The height of a lane of labels below a row.
const LANE_H: i64 = 16;

/// One attempt's bar: its ticket, its label, where it starts and how wide
/// it is.
struct Bar<'v> {
    id: &'v str,
    a: &'v AttemptView,
    slot: usize,
    label: String,
    x: i64,
    w: i64,
}

/// Where a bar's label goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Label {
    /// Inside the bar, clipped to this many characters.
    Inside(usize),
    /// After the bar, in the free stretch of its row.
    Right,
    /// Before the bar, in the free stretch of its row.
    Left,
    /// Below its row, in this lane (0 first), under a line to the bar: a
    /// bar too short for its label between bars too close for it beside.
    Below(usize),
}

/// About 7 px a character of the chart's 12 px bold text.
fn chars(px: i64) -> usize {
    (px / 7).max(0) as usize
}

fn text_px(label: &str) -> i64 {
    label.chars().count() as i64 * 7
}

/// Every bar's label: inside where it fits (a long bar shows at least 8
/// characters), else the whole label beside the bar where no bar and no
/// other label of its row is, else below the row (see [`lanes_below`]).
fn place_labels(bars: &[Bar], slots: usize) -> Vec<Label> {
    let mut beside: Vec<Vec<(i64, i64)>> = vec![vec![]; slots];
    let mut placed = Vec::with_capacity(bars.len());
    for b in bars {
        let inside = chars(b.w - 5);
        if inside >= b.label.chars().count().min(8) {
            placed.push(Label::Inside(inside));
            continue;
        }
        let px = text_px(&b.label);
        let right = (b.x + b.w + 4, b.x + b.w + 4 + px);
        let left = (b.x - 4 - px, b.x - 4);
        let clear = |span: (i64, i64), labels: &[(i64, i64)]| {
            let row = bars
                .iter()
                .filter(|o| o.slot == b.slot)
                .map(|o| (o.x, o.x + o.w));
            span.0 >= LABEL_W
                && span.1 <= GANTT_W
                && !row.chain(labels.iter().copied()).any(|o| overlaps(span, o))
        };
        let label = if clear(right, &beside[b.slot]) {
            beside[b.slot].push(right);
            Label::Right
        } else if clear(left, &beside[b.slot]) {
            beside[b.slot].push(left);
            Label::Left
        } else {
            Label::Below(0)
        };
        placed.push(label);
    }
    for slot in 0..slots {
        lanes_below(bars, &mut placed, slot);
    }
    placed
}

/// The lanes of the labels below `slot`'s row: from the rightmost bar to
/// the leftmost, each label in the first lane where it overlaps no other
/// label, its line from the bar crosses no label above it, and it covers
/// no line to a label below it.
fn lanes_below(bars: &[Bar], placed: &mut [Label], slot: usize) {
    let mut order: Vec<usize> = (0..bars.len())
        .filter(|&i| bars[i].slot == slot && matches!(placed[i], Label::Below(_)))
        .collect();
    order.sort_by_key(|&i| std::cmp::Reverse(bars[i].x + bars[i].w / 2));
    // (lane, leader x, span) of each label placed so far.
    let mut taken: Vec<(usize, i64, (i64, i64))> = vec![];
    for i in order {
        let (cx, span) = (leader_x(&bars[i]), below_span(&bars[i]));
        let fits = |lane: usize| {
            taken.iter().all(|&(l, x, other)| match l.cmp(&lane) {
                std::cmp::Ordering::Equal => !overlaps(span, other),
                std::cmp::Ordering::Less => !overlaps((cx, cx), other),
                std::cmp::Ordering::Greater => !overlaps((x, x), span),
            })
        };
        let deepest = taken.iter().map(|t| t.0 + 1).max().unwrap_or(0);
        let lane = (0..deepest).find(|&l| fits(l)).unwrap_or(deepest);
        taken.push((lane, cx, span));
        placed[i] = Label::Below(lane);
    }
}

/// Whether two stretches overlap, or come closer than a small gap.
fn overlaps(a: (i64, i64), b: (i64, i64)) -> bool {
    a.0 < b.1 + 3 && b.0 < a.1 + 3
}

/// Where the line from a bar down to its label below runs.
fn leader_x(b: &Bar) -> i64 {
    b.x + b.w / 2
}

/// The stretch a label below its bar takes: just right of its line, or
/// ending just left of it when it would run past the chart's edge.
fn below_span(b: &Bar) -> (i64, i64) {
    let (cx, px) = (leader_x(b), text_px(&b.label));
    let x = if cx + 3 + px <= GANTT_W {
        cx + 3
    } else {
        cx - 3 - px
    };
    (x, x + px)
}

/// One attempt's bar, its top at `y`, with its label where `label` says.
fn bar(s: &mut String, b: &Bar, y: i64, label: &Label) {
    let a = b.a;
    let took = match (a.started_ms, a.ended_ms) {
        (Some(s), Some(e)) if e >= s => format!(", {}", duration_text(e - s)),
        _ => String::new(),
    };
    let (x, w, h) = (b.x, b.w, ROW_H - 8);
    let _ = write!(
        s,
        "<a href=\"#t-{anchor}\"><g class=\"bar out-{o}\" data-ticket=\"{eid}\"><title>{elabel}: {o}{took}</title>\
         <rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" rx=\"4\"/>",
        anchor = anchor(b.id),
        o = a.outcome.as_str(),
        eid = esc(b.id),
        elabel = esc(&b.label),
    );
    let text = |s: &mut String, class: &str, tx: i64, ty: i64, end: bool, shown: &str| {
        let side = if end { "end" } else { "start" };
        let _ = write!(
            s,
            "<text class=\"{class}\" x=\"{tx}\" y=\"{ty}\" text-anchor=\"{side}\">{}</text>",
            esc(shown)
        );
    };
    match *label {
        Label::Inside(fits) => text(s, "inside", x + 5, y + 16, false, &clip(&b.label, fits)),
        Label::Right => text(s, "outside", x + w + 4, y + 16, false, &b.label),
        Label::Left => text(s, "outside", x - 4, y + 16, true, &b.label),
        Label::Below(lane) => {
            // The line runs down beside the label, to its middle.
            let ty = y + h + (lane as i64 + 1) * LANE_H;
            let (lx, _) = below_span(b);
            let _ = write!(
                s,
                "<line class=\"leader\" x1=\"{cx}\" y1=\"{}\" x2=\"{cx}\" y2=\"{}\"/>",
                y + h,
                ty - 4,
                cx = leader_x(b)
            );
            text(s, "below", lx, ty, false, &b.label);
        }
    }
    s.push_str("</g></a>");
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
