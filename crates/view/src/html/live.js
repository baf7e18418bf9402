// The live page of `planwright serve`: each server-sent event carries the
// report's new <main> content; open <details> stay open across updates.
(function () {
  const main = document.getElementById("report");
  let updates = 0;
  const source = new EventSource(PLANWRIGHT_EVENTS);
  source.addEventListener("report", function (e) {
    const open = Array.from(main.querySelectorAll("details[open]")).map(function (d) { return d.id; });
    main.innerHTML = e.data;
    open.forEach(function (id) {
      const d = document.getElementById(id);
      if (d) { d.open = true; }
    });
    updates += 1;
    document.body.dataset.updates = String(updates);
  });
  source.onerror = function () {
    const badge = document.getElementById("live");
    if (badge) { badge.textContent = "reconnecting"; badge.className = "badge off"; }
  };
})();
