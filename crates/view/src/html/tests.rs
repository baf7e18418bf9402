use super::*;
use planwright_engine::RunRow;

fn view(title: &str) -> RunView {
    let run = RunRow::running("r<1>", "plan\".json", "main", "2026-11-29T22:00:00Z");
    let tickets = vec![
        ("A".to_string(), title.to_string()),
        ("B/1 & <b>".to_string(), "two".to_string()),
    ];
    let mut v = RunView::new(&run, &tickets);
    v.fold_text(concat!(
        "{\"event\":\"run_started\",\"run\":\"r<1>\",\"base\":\"main\",\"ticket_count\":2,\"continued\":false,\"at\":\"2026-11-29T22:00:00Z\"}\n",
        "{\"event\":\"attempt_started\",\"ticket\":\"A\",\"attempt\":1,\"base_commit\":\"0123456789abc\",\"at\":\"2026-11-29T22:00:01Z\"}\n",
        "{\"event\":\"attempt_rejected\",\"ticket\":\"A\",\"attempt\":1,\"retrying\":true,\"at\":\"2026-11-29T22:00:05Z\",",
        "\"failure\":{\"kind\":\"gate_failure\",\"message\":\"gate `t` failed\",\"evidence\":\"<img src=x onerror=alert(1)>\"}}\n",
        "{\"event\":\"attempt_started\",\"ticket\":\"B/1 & <b>\",\"attempt\":1,\"base_commit\":\"0123456789abc\",\"at\":\"2026-11-29T22:00:02Z\"}\n",
    ));
    v
}

#[test]
fn everything_from_the_run_is_escaped() {
    let page = html_page(
        &view("<script>alert('x')</script>"),
        &HtmlOptions::default(),
    );
    assert!(!page.contains("<script>alert"), "{page}");
    assert!(page.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
    assert!(!page.contains("<img src=x"));
    assert!(!page.contains("<b>"));
    assert!(page.contains("B/1 &amp; &lt;b&gt;"));
    assert!(page.contains("plan&quot;.json"));
    // A static report runs no script at all.
    assert!(!page.contains("<script"));
}

#[test]
fn the_page_has_lang_viewport_and_both_pictures() {
    let v = view("one");
    let page = html_page(&v, &HtmlOptions::default());
    assert!(page.starts_with("<!doctype html>\n<html lang=\"en\">"));
    assert!(page.contains("name=\"viewport\""));
    assert!(page.contains("prefers-color-scheme:dark"));
    assert_eq!(page.matches("<g class=\"node ").count(), 2);
    assert_eq!(page.matches("<g class=\"bar ").count(), 2);
    assert!(page.contains("data-count=\"running\"><dt>running</dt><dd>1</dd>"));
    assert!(page.contains("data-count=\"pending\"><dt>pending</dt><dd>1</dd>"));
    // Nothing is fetched: no URL but the page's own anchors and log links.
    for needle in [
        "http://",
        "https://",
        " src=\"",
        "<link rel=\"stylesheet",
        "@import",
        "url(h",
        "url(/",
    ] {
        let outside_svg_ns = page.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
        assert!(!outside_svg_ns.contains(needle), "{needle}");
    }
}

#[test]
fn log_links_are_relative_encoded_and_only_to_files_that_exist() {
    let dir = tempfile::tempdir().unwrap();
    for file in ["A/attempt-1.agent.log", "B/1 & <b>/ticket.log"] {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "log").unwrap();
    }
    let opts = HtmlOptions {
        run_dir: Some(dir.path().to_path_buf()),
        log_prefix: ".planwright/runs/r1/".into(),
        log_suffix: "?token=t".into(),
        live: None,
    };
    let page = html_page(&view("one"), &opts);
    assert!(page.contains("href=\".planwright/runs/r1/A/attempt-1.agent.log?token=t\""));
    assert!(page.contains("href=\".planwright/runs/r1/B%2F1%20%26%20%3Cb%3E/ticket.log?token=t\""));
    // The files that are not there are not linked.
    assert!(!page.contains("A/ticket.log"), "{page}");
    assert!(!page.contains("prompt.md"), "{page}");
    assert!(!page.contains("B%2F1%20%26%20%3Cb%3E/attempt-1"), "{page}");
    assert_eq!(page.matches(" href=\".planwright").count(), 2);
}

#[test]
fn a_live_page_carries_its_event_url_as_a_safe_string() {
    let opts = HtmlOptions {
        live: Some("/events?token=a\"</script>".into()),
        ..Default::default()
    };
    let page = html_page(&view("one"), &opts);
    assert!(
        page.contains("const PLANWRIGHT_EVENTS = \"/events?token=a\\u0022\\u003c/script\\u003e\";")
    );
    assert_eq!(page.matches("</script>").count(), 1);
}

#[test]
fn durations_read_well() {
    assert_eq!(duration_text(4200), "4.2s");
    assert_eq!(duration_text(185_000), "3m 05s");
    assert_eq!(duration_text(3_720_000), "1h 02m");
}

#[test]
fn the_timeline_uses_event_order_when_times_are_too_coarse() {
    // Whole seconds over a five-second run: the order of events is drawn.
    let coarse = html_page(&view("one"), &HtmlOptions::default());
    assert!(coarse.contains("data-axis=\"events\""));
    let mut fine = view("one");
    fine.fold_text(
        "{\"event\":\"phase\",\"ticket\":\"A\",\"attempt\":1,\"phase\":\"x\",\"at_ms\":1796076007250}\n",
    );
    let fine = html_page(&fine, &HtmlOptions::default());
    assert!(fine.contains("data-axis=\"time\""));
}

/// An attempt on a worker says where, escaped, beside its slot.
#[test]
fn an_attempt_on_a_worker_names_its_machine_and_slot() {
    let mut v = view("one");
    v.fold_text(concat!(
        "{\"event\":\"attempt_started\",\"ticket\":\"A\",\"attempt\":2,\"base_commit\":\"0123456789abc\",\"at\":\"2026-11-29T22:00:06Z\",",
        "\"place\":{\"executor\":\"ssh\",\"worker\":\"ssh <b>build-1\",\"slot\":3}}\n",
    ));
    let page = html_page(&v, &HtmlOptions::default());
    assert!(
        page.contains("slot 3 on <code>ssh &lt;b&gt;build-1</code> · started"),
        "{page}"
    );
}

#[test]
fn an_attempt_shows_running_usage_then_its_report_and_counterfactual_output() {
    let mut v = view("one");
    v.fold_text(concat!(
        "{\"event\":\"attempt_started\",\"ticket\":\"A\",\"attempt\":2,\"base_commit\":\"0123456789abc\",\"at\":\"2026-11-29T22:00:06Z\"}\n",
        "{\"event\":\"agent_usage\",\"ticket\":\"A\",\"attempt\":2,\"model\":\"m-1\",\"usage\":{\"input_tokens\":1,\"output_tokens\":2,\"cache_read_tokens\":3,\"cache_write_tokens\":4}}\n",
    ));
    let running = html_page(&v, &HtmlOptions::default());
    assert!(
        running.contains("10 tokens (1 in, 2 out, 3 cache read, 4 cache write)"),
        "{running}"
    );
    v.fold_text(concat!(
        "{\"event\":\"agent_reported\",\"ticket\":\"A\",\"attempt\":2,\"outcome\":\"finished\",\"model\":\"m-1\",\"usage\":{\"input_tokens\":10,\"output_tokens\":20,\"cache_read_tokens\":0,\"cache_write_tokens\":0},\"cost_usd\":0.5,\"cost_source\":\"computed\"}\n",
        "{\"event\":\"counterfactual\",\"ticket\":\"A\",\"attempt\":2,\"control_path\":\"calc.sh\",\"test\":\"sh t.sh\",\"outcome\":\"red\",\"passed\":true,\"message\":\"red\",\"output_excerpt\":\"FAIL <calc>\"}\n",
    ));
    let page = html_page(&v, &HtmlOptions::default());
    for needle in [
        "agent finished",
        "30 tokens (10 in, 20 out, 0 cache read, 0 cache write)",
        "$0.5000 (computed)",
        "<pre class=\"evidence\">FAIL &lt;calc&gt;</pre></li>",
        "total: 30 tokens",
    ] {
        assert!(page.contains(needle), "{needle}: {page}");
    }
}

/// The agent's activity is listed under its attempt, escaped, open while
/// the attempt runs and closed once it ended.
#[test]
fn an_attempt_lists_its_agents_activity_escaped() {
    let mut v = view("one");
    v.fold_text(concat!(
        "{\"event\":\"attempt_started\",\"ticket\":\"A\",\"attempt\":2,\"base_commit\":\"0123456789abc\",\"at\":\"2026-11-29T22:00:06Z\"}\n",
        "{\"event\":\"agent_activity\",\"ticket\":\"A\",\"attempt\":2,\"kind\":\"tool_call\",\"text\":\"Write <b>a.txt</b>\",\"status\":\"completed\"}\n",
        "{\"event\":\"agent_activity\",\"ticket\":\"A\",\"attempt\":2,\"kind\":\"message\",\"text\":\"done & dusted\"}\n",
    ));
    let running = html_page(&v, &HtmlOptions::default());
    for needle in [
        "<details class=\"activity\" id=\"activity-A-2\" open><summary>agent activity (2)</summary><ol>",
        "<li class=\"tool_call\"><span class=\"kind\">tool_call</span> Write &lt;b&gt;a.txt&lt;/b&gt; <span class=\"status\">completed</span></li>",
        "<li class=\"message\"><span class=\"kind\">message</span> done &amp; dusted</li></ol></details>",
    ] {
        assert!(running.contains(needle), "{needle}: {running}");
    }
    v.fold_text("{\"event\":\"merging\",\"ticket\":\"A\",\"at\":\"2026-11-29T22:00:09Z\"}\n");
    let ended = html_page(&v, &HtmlOptions::default());
    assert!(
        ended.contains("<details class=\"activity\" id=\"activity-A-2\"><summary>"),
        "{ended}"
    );
}

#[test]
fn the_live_badge_goes_once_the_run_finished() {
    let opts = HtmlOptions {
        live: Some("events".into()),
        ..Default::default()
    };
    let mut v = view("one");
    assert!(html_body(&v, &opts).contains("id=\"live\""));
    v.run.status = planwright_engine::RunStatus::Finished;
    let page = html_body(&v, &opts);
    assert!(!page.contains("id=\"live\""), "{page}");
    assert!(
        page.contains("st-finished\">finished</span></h1>"),
        "{page}"
    );
}

#[test]
fn a_retried_tickets_failure_is_labelled_as_its_earlier_attempts() {
    let mut v = view("one");
    v.fold_text(
        "{\"event\":\"attempt_started\",\"ticket\":\"A\",\"attempt\":2,\"base_commit\":\"0123456789abc\",\"at\":\"2026-11-29T22:00:06Z\"}\n",
    );
    assert_eq!(v.tickets[0].state, TicketState::Running);
    let page = html_body(&v, &HtmlOptions::default());
    assert!(
        page.contains("<td><span class=\"previous\">attempt 1 failed: <code>gate_failure</code> gate `t` failed</span></td>"),
        "{page}"
    );
}

#[test]
fn a_dag_box_shows_its_whole_state() {
    let mut v = view("one");
    v.fold_text(concat!(
        "{\"event\":\"attempt_started\",\"ticket\":\"A\",\"attempt\":2,\"base_commit\":\"0123456789abc\",\"at\":\"2026-11-29T22:00:06Z\"}\n",
        "{\"event\":\"phase\",\"ticket\":\"A\",\"attempt\":2,\"phase\":\"a very long phase name indeed\",\"at\":\"2026-11-29T22:00:07Z\"}\n",
    ));
    let dag = svg::dag(&v);
    let subs: Vec<&str> = dag
        .split("class=\"sub\">")
        .skip(1)
        .map(|rest| rest.split("</text>").next().unwrap())
        .collect();
    assert_eq!(subs.len(), 2, "{dag}");
    for sub in subs {
        assert!(sub.starts_with("running · "), "{sub}");
        assert!(
            sub.chars().count() <= svg::SUB_CHARS,
            "{sub} overflows its box"
        );
    }
}

#[test]
fn a_sub_second_bar_has_its_whole_label_beside_it() {
    let mut v = view("one");
    v.fold_text(concat!(
        "{\"event\":\"attempt_started\",\"ticket\":\"A\",\"attempt\":2,\"base_commit\":\"0123456789abc\",\"at_ms\":1796076006000}\n",
        "{\"event\":\"attempt_rejected\",\"ticket\":\"A\",\"attempt\":2,\"retrying\":false,\"at_ms\":1796076006120,",
        "\"failure\":{\"kind\":\"gate_failure\",\"message\":\"gate `t` failed\",\"evidence\":\"\"}}\n",
        "{\"event\":\"phase\",\"ticket\":\"B/1 & <b>\",\"attempt\":1,\"phase\":\"x\",\"at_ms\":1796076090000}\n",
    ));
    let gantt = svg::gantt(&v);
    assert!(gantt.contains("data-axis=\"time\""), "{gantt}");
    let bar = gantt
        .split("<g class=\"bar ")
        .find(|b| b.contains("<title>A #2"))
        .unwrap_or_else(|| panic!("no bar of A #2: {gantt}"));
    assert!(
        bar.contains("class=\"outside\"") && bar.contains(">A #2</text>"),
        "{bar}"
    );
}

#[test]
fn a_sub_second_run_fills_the_timeline_with_a_millisecond_axis() {
    let mut v = view("one");
    v.subsecond_times = true;
    for a in v.tickets.iter_mut().flat_map(|t| t.attempts.iter_mut()) {
        a.started_ms = Some(1_000);
        a.ended_ms = Some(1_120);
    }
    v.run.finished_ms = Some(1_200);
    v.run.last_event_ms = Some(1_200);
    let gantt = svg::gantt(&v);
    assert!(
        gantt.contains(">0ms</text>") && gantt.contains(">200ms</text>"),
        "{gantt}"
    );
}

#[test]
fn a_run_whose_process_is_gone_shows_no_ticket_running() {
    let mut v = view("one");
    v.process_gone();
    let page = html_page(&v, &HtmlOptions::default());
    assert!(page.contains("<span class=\"badge st-interrupted\">interrupted</span></h1>"));
    assert!(page.contains("data-count=\"interrupted\"><dt>interrupted</dt><dd>1</dd>"));
    assert!(!page.contains("data-count=\"running\""), "{page}");
    assert!(!page.contains("st-running\""), "{page}");
    assert!(!page.contains("out-running\""), "{page}");
}

/// Two sub-second attempts squeezed between two long ones in one slot
/// (P, Q and R each once, then P again).
fn squeezed() -> RunView {
    let run = RunRow::running("r1", "plan.json", "main", "2026-11-30T22:00:00Z");
    let ids = ["P", "Q", "R"].map(|id| (id.to_string(), id.to_lowercase()));
    let mut v = RunView::new(&run, &ids);
    // The browser tests draw the same log (crates/cli/tests/observe).
    v.fold_text(include_str!("../../tests/data/timeline-squeezed.jsonl"));
    v
}

/// The `<g class="bar ...">` of `label` in `gantt`.
fn bar_of<'g>(gantt: &'g str, label: &str) -> &'g str {
    gantt
        .split("<g class=\"bar ")
        .find(|b| b.contains(&format!("<title>{label}:")))
        .unwrap_or_else(|| panic!("no bar of {label}: {gantt}"))
}

#[test]
fn a_sub_second_bar_with_no_room_beside_it_has_its_label_below_its_row() {
    let gantt = svg::gantt(&squeezed());
    let below_y = |label: &str| {
        let bar = bar_of(&gantt, label);
        assert!(bar.contains("class=\"leader\""), "{bar}");
        let text = bar
            .split("<text class=\"below\"")
            .nth(1)
            .unwrap_or_else(|| panic!("{label} is not labelled below: {bar}"));
        assert!(text.contains(&format!(">{label}</text>")), "{bar}");
        let y = text
            .split("y=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        y.parse::<i64>().unwrap()
    };
    let (q, r) = (below_y("Q #1"), below_y("R #1"));
    assert_ne!(q, r, "the two labels would overlap: {gantt}");
    // The row grows by the lanes of its labels.
    let height: i64 = gantt
        .split("viewBox=\"0 0 900 ")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(height > q.max(r), "{gantt}");
    for long in ["P #1", "P #2"] {
        assert!(bar_of(&gantt, long).contains("class=\"inside\""), "{gantt}");
    }
}
