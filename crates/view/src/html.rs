//! The HTML report of a run: one self-contained page (no network, no
//! external assets, readable from `file://`), light and dark, phone and
//! desktop. `report --format html` writes it; `serve` sends it with a small
//! script that swaps in each new rendering it receives over server-sent
//! events. Everything taken from the run is escaped.

mod svg;

use crate::report;
use crate::view::{AttemptOutcome, AttemptView, CheckResult, RunView, TicketView};
use planwright_engine::{clock, RunStatus, TicketState};
use std::fmt::Write;
use std::path::PathBuf;

/// How links and liveness are rendered.
#[derive(Debug, Clone, Default)]
pub struct HtmlOptions {
    /// The run's folder: a log is linked only when its file is there (a
    /// blocked ticket has no log); None links no log.
    pub run_dir: Option<PathBuf>,
    /// Put before `<ticket>/<file>` in links to a ticket's logs.
    pub log_prefix: String,
    /// Put after it (`serve` adds its token here).
    pub log_suffix: String,
    /// The server-sent-events URL of a live page; None for a static report.
    pub live: Option<String>,
}

/// Escapes text for HTML content and attribute values.
pub(crate) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The whole page.
pub fn html_page(view: &RunView, opts: &HtmlOptions) -> String {
    let mut s = String::with_capacity(16 * 1024);
    let _ = write!(
        s,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"color-scheme\" content=\"light dark\">\
         <link rel=\"icon\" href=\"data:,\">\
         <title>planwright run {}</title><style>{CSS}</style></head><body>\
         <main id=\"report\">",
        esc(&view.run.id)
    );
    s.push_str(&html_body(view, opts));
    s.push_str("</main>");
    if let Some(url) = &opts.live {
        let _ = write!(
            s,
            "<script>const PLANWRIGHT_EVENTS = \"{}\";\n{LIVE_JS}</script>",
            js_string(url)
        );
    }
    s.push_str("</body></html>\n");
    s
}

/// The content of `<main>`: what a live page replaces on each update.
pub fn html_body(view: &RunView, opts: &HtmlOptions) -> String {
    let mut s = String::new();
    header(&mut s, view, opts);
    summary(&mut s, view);
    s.push_str("<section id=\"dag\"><h2>Tickets by wave</h2><div class=\"scroll\">");
    s.push_str(&svg::dag(view));
    s.push_str(
        "</div></section><section id=\"timeline\"><h2>Attempts per slot</h2><div class=\"scroll\">",
    );
    s.push_str(&svg::gantt(view));
    s.push_str("</div></section><section id=\"tickets\"><h2>Tickets</h2>");
    ticket_table(&mut s, view);
    for t in &view.tickets {
        ticket_details(&mut s, view, t, opts);
    }
    s.push_str("</section>");
    s
}

fn header(s: &mut String, view: &RunView, opts: &HtmlOptions) {
    let r = &view.run;
    // Once the run is over nothing more will come: no `live` beside `finished`.
    let live = if opts.live.is_some() && r.status == RunStatus::Running {
        "<span id=\"live\" class=\"badge\">live</span>"
    } else {
        ""
    };
    let _ = write!(
        s,
        "<header><h1>planwright run <code>{}</code> <span class=\"badge st-{st}\">{st}</span>{live}</h1>\
         <p class=\"meta\">plan <code>{}</code> onto <code>{}</code> · started {} · finished {}</p></header>",
        esc(&r.id),
        esc(&r.plan_path),
        esc(&r.base),
        time(r.started_ms),
        time(r.finished_ms),
        st = r.status.as_str(),
    );
    if let Some(note) = view.graph_note() {
        let _ = write!(s, "<p class=\"meta\">{}</p>", esc(note));
    }
    if let Some(line) = view.queue_line() {
        let _ = write!(s, "<p class=\"meta\">{}</p>", esc(&line));
    }
}

fn summary(s: &mut String, view: &RunView) {
    let c = view.counts();
    s.push_str("<section id=\"summary\"><dl class=\"counts\">");
    let removed = ("removed", c.removed);
    let shown = c.shown(view.run.status);
    for (name, n) in shown.into_iter().chain((c.removed > 0).then_some(removed)) {
        let _ = write!(
            s,
            "<div class=\"count st-{name}\" data-count=\"{name}\"><dt>{name}</dt><dd>{n}</dd></div>"
        );
    }
    s.push_str("</dl><dl class=\"facts\">");
    let end = view.run.finished_ms.or(view.run.last_event_ms);
    let duration = match (view.run.started_ms, end) {
        (Some(a), Some(b)) if b >= a => duration_text(b - a),
        _ => "-".into(),
    };
    let (usage, cost) = view.usage();
    let tokens = usage.map_or("not reported".into(), |u| report::usage_text(&u));
    let cost = cost.map_or("not reported".into(), report::cost_text);
    let commit = |c: &Option<String>| {
        c.as_deref()
            .map_or("-".into(), |c| format!("<code>{}</code>", esc(short(c))))
    };
    let facts = [
        ("duration", duration),
        ("tokens", tokens),
        ("cost", cost),
        ("base before", commit(&view.base_before)),
        ("base after", commit(&view.base_after)),
        ("events", view.events.to_string()),
    ];
    for (k, v) in facts {
        let _ = write!(s, "<div><dt>{k}</dt><dd>{v}</dd></div>");
    }
    s.push_str("</dl>");
    if !view.paused.is_empty() {
        s.push_str("<p class=\"paused\">paused pools: ");
        for (pool, p) in &view.paused {
            let until = p
                .until
                .as_deref()
                .map_or(String::new(), |u| format!(" until {}", esc(u)));
            let _ = write!(s, "<code>{}</code> ({}{until}) ", esc(pool), esc(&p.reason));
        }
        s.push_str("</p>");
    }
    s.push_str("</section>");
}

fn ticket_table(s: &mut String, view: &RunView) {
    s.push_str("<div class=\"scroll\"><table><thead><tr><th>ticket</th><th>title</th><th>state</th><th>attempts</th><th>commit</th><th>failure</th></tr></thead><tbody>");
    for t in &view.tickets {
        let failure = failure_cell(t);
        let _ = write!(
            s,
            "<tr><td><a href=\"#t-{aid}\">{id}</a></td><td>{}</td><td><span class=\"badge st-{st}\">{st}</span></td><td>{}</td><td><code>{}</code></td><td>{failure}</td></tr>",
            esc(&t.title),
            t.attempts.len(),
            esc(t.merged_commit.as_deref().map_or("", short)),
            aid = anchor(&t.id),
            id = esc(&t.id),
            st = shown_state(view, t),
        );
    }
    s.push_str("</tbody></table></div>");
}

/// The state a ticket's badge shows: `removed` for one the plan no longer
/// has (its attempts and commit are still shown).
fn shown_state(view: &RunView, t: &TicketView) -> &'static str {
    if t.removed {
        "removed"
    } else {
        view.shown_state(t).as_str()
    }
}

/// The ticket's last failure; when it is not what the ticket stands at (it
/// was retried), labelled as an earlier attempt's.
fn failure_cell(t: &TicketView) -> String {
    let Some(f) = &t.failure else {
        return String::new();
    };
    let text = format!("<code>{}</code> {}", f.kind, esc(&f.message));
    if matches!(t.state, TicketState::Failed | TicketState::Blocked) {
        return text;
    }
    match t.attempts.iter().rev().find(|a| a.failure.is_some()) {
        Some(a) => format!(
            "<span class=\"previous\">attempt {} failed: {text}</span>",
            a.n
        ),
        None => format!("<span class=\"previous\">earlier: {text}</span>"),
    }
}

fn ticket_details(s: &mut String, view: &RunView, t: &TicketView, opts: &HtmlOptions) {
    let deps: Vec<String> = view
        .edges
        .iter()
        .filter(|(_, to)| view.tickets[*to].id == t.id)
        .map(|(from, _)| {
            format!(
                "<a href=\"#t-{}\">{}</a>",
                anchor(&view.tickets[*from].id),
                esc(&view.tickets[*from].id)
            )
        })
        .collect();
    let _ = write!(
        s,
        "<details class=\"ticket\" id=\"t-{}\"{open}><summary><span class=\"badge st-{st}\">{st}</span> <strong>{}</strong> {}</summary><div class=\"body\">",
        anchor(&t.id),
        esc(&t.id),
        esc(&t.title),
        open = if t.failure.is_some() { " open" } else { "" },
        st = view.shown_state(t).as_str(),
    );
    let _ = write!(s, "<p>wave {}", t.wave + 1);
    let _ = write!(s, " · {}", esc(&report::totals_text(&t.totals())));
    if !deps.is_empty() {
        let _ = write!(s, " · after {}", deps.join(", "));
    }
    if let Some(by) = &t.blocked_by {
        let _ = write!(
            s,
            " · blocked because <a href=\"#t-{}\">{}</a> failed",
            anchor(by),
            esc(by)
        );
    }
    if let Some(c) = &t.merged_commit {
        let _ = write!(s, " · merged as <code>{}</code>", esc(c));
    }
    if let Some(href) = link(opts, &t.id, "ticket.log") {
        let _ = write!(s, " · <a href=\"{}\">ticket log</a>", esc(&href));
    }
    s.push_str("</p>");
    if t.attempts.is_empty() {
        s.push_str("<p class=\"muted\">no attempt yet</p>");
    }
    for a in &t.attempts {
        attempt(s, t, a, opts);
    }
    s.push_str("</div></details>");
}

fn attempt(s: &mut String, t: &TicketView, a: &AttemptView, opts: &HtmlOptions) {
    let took = match (a.started_ms, a.ended_ms) {
        (Some(x), Some(y)) if y >= x => duration_text(y - x),
        _ => "-".into(),
    };
    let _ = write!(
        s,
        "<div class=\"attempt\"><h4>attempt {} <span class=\"badge out-{o}\">{o}</span></h4><p>slot {} · started {} · took {took} · last phase {}",
        a.n,
        slot_text(a),
        time(a.started_ms),
        a.phase,
        o = a.outcome.as_str(),
    );
    if let Some(m) = &a.model {
        let _ = write!(s, " · model <code>{}</code>", esc(m));
    }
    if let Some(o) = a.agent_outcome {
        let _ = write!(s, " · agent {o}");
    }
    if let Some(u) = &a.usage {
        let _ = write!(s, " · {}", report::usage_text(u));
    }
    if let Some(c) = a.cost_usd {
        let source = a
            .cost_source
            .map_or(String::new(), |x| format!(" ({})", x.as_str()));
        let _ = write!(s, " · {}{source}", report::cost_text(c));
    }
    if let Some(b) = &a.base_commit {
        let _ = write!(s, " · from <code>{}</code>", esc(short(b)));
    }
    s.push_str("</p>");
    if let Some(f) = &a.failure {
        let _ = write!(
            s,
            "<p class=\"failure\"><code>{}</code> {}</p>",
            f.kind,
            esc(&f.message)
        );
        if !f.evidence.is_empty() {
            let _ = write!(
                s,
                "<pre class=\"evidence\">{}</pre>",
                esc(&excerpt(&f.evidence))
            );
        }
    }
    checks(s, "gates", &a.gates);
    checks(s, "review", &a.reviews);
    checks(s, "counterfactuals", &a.counterfactuals);
    activity(s, t, a);
    let links: Vec<String> = [("agent log", "agent.log"), ("charter", "prompt.md")]
        .iter()
        .filter_map(|(name, ext)| {
            let href = link(opts, &t.id, &format!("attempt-{}.{ext}", a.n))?;
            Some(format!("<a href=\"{}\">{name}</a>", esc(&href)))
        })
        .collect();
    if !links.is_empty() {
        let _ = write!(s, "<p class=\"links\">{}</p>", links.join(" · "));
    }
    s.push_str("</div>");
}

/// What the agent did while it ran, open while it runs (an id of its
/// own keeps it as the reader left it across a live page's updates).
fn activity(s: &mut String, t: &TicketView, a: &AttemptView) {
    if a.activity.is_empty() {
        return;
    }
    let _ = write!(
        s,
        "<details class=\"activity\" id=\"activity-{}-{}\"{open}><summary>agent activity ({})</summary><ol>",
        anchor(&t.id),
        a.n,
        a.activity.len(),
        open = if a.outcome == AttemptOutcome::Running { " open" } else { "" },
    );
    for x in &a.activity {
        let status = x.status.as_ref().map_or(String::new(), |st| {
            format!(" <span class=\"status\">{}</span>", esc(st))
        });
        let _ = write!(
            s,
            "<li class=\"{k}\"><span class=\"kind\">{k}</span> {}{status}</li>",
            esc(&x.text),
            k = x.kind.as_str(),
        );
    }
    s.push_str("</ol></details>");
}

fn checks(s: &mut String, title: &str, list: &[CheckResult]) {
    if list.is_empty() {
        return;
    }
    let _ = write!(s, "<ul class=\"checks\" aria-label=\"{title}\">");
    for c in list {
        let class = match c.passed {
            Some(true) => "pass",
            Some(false) => "fail",
            None => "info",
        };
        let _ = write!(
            s,
            "<li class=\"{class}\"><span class=\"mark\">{}</span> {title}: <code>{}</code> {}",
            match c.passed {
                Some(true) => "✓",
                Some(false) => "✗",
                None => "•",
            },
            esc(&c.name),
            esc(&c.detail)
        );
        if let Some(out) = c.output_excerpt.as_deref().filter(|o| !o.is_empty()) {
            let _ = write!(s, "<pre class=\"evidence\">{}</pre>", esc(out));
        }
        s.push_str("</li>");
    }
    s.push_str("</ul>");
}

/// The link to a ticket's log `file`, None when the run's folder has no
/// such file.
fn link(opts: &HtmlOptions, ticket: &str, file: &str) -> Option<String> {
    let dir = opts.run_dir.as_ref()?;
    dir.join(ticket).join(file).is_file().then(|| {
        format!(
            "{}{}/{}{}",
            opts.log_prefix,
            url_part(ticket),
            file,
            opts.log_suffix
        )
    })
}

/// Percent-encodes what is not safe in one URL path segment.
fn url_part(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// An id usable in `id="..."` and `#...`: ids may hold any character.
pub(crate) fn anchor(id: &str) -> String {
    url_part(id).replace('%', "_")
}

/// The end of the evidence: at most 40 lines and 4 KB.
fn excerpt(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(40)..].join("\n");
    if tail.len() <= 4096 {
        return tail;
    }
    let mut cut = tail.len() - 4096;
    while !tail.is_char_boundary(cut) {
        cut += 1;
    }
    format!("…{}", &tail[cut..])
}

fn short(c: &str) -> &str {
    c.get(..10).unwrap_or(c)
}

fn time(ms: Option<i64>) -> String {
    ms.map_or("-".into(), |ms| {
        clock::format_unix((ms.max(0) / 1000) as u64)
    })
}

/// `1h 02m`, `3m 05s`, `4.2s`.
pub fn duration_text(ms: i64) -> String {
    let secs = ms / 1000;
    if secs >= 3600 {
        format!("{}h {:02}m", secs / 3600, secs % 3600 / 60)
    } else if secs >= 60 {
        format!("{}m {:02}s", secs / 60, secs % 60)
    } else {
        format!("{:.1}s", ms as f64 / 1000.0)
    }
}

/// Escapes text for a double-quoted JavaScript string inside `<script>`.
fn js_string(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '"' | '\\' | '<' | '>' | '&' | '\'' => format!("\\u{:04x}", c as u32),
            c if (c as u32) < 0x20 => format!("\\u{:04x}", c as u32),
            c => c.to_string(),
        })
        .collect()
}

const CSS: &str = include_str!("html/report.css");
const LIVE_JS: &str = include_str!("html/live.js");

/// `2`, or `2 on <code>ssh build-1</code>` for an attempt on a worker.
fn slot_text(a: &crate::view::AttemptView) -> String {
    let slot = (a.ran_at.as_ref().map(|p| p.slot))
        .or(a.slot.map(|x| x + 1))
        .map_or("-".into(), |x| x.to_string());
    match a.ran_at.as_ref().and_then(|p| p.worker.as_deref()) {
        Some(w) => format!("{slot} on <code>{}</code>", esc(w)),
        None => slot,
    }
}

#[cfg(test)]
mod tests;
