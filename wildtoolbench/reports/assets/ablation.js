// wtb report page, the Ablation view (docs/variants.md §6.7): inlined by wildtoolbench/reports/html.py into
// report.js's closure, where it uses the page's helpers (esc, badge, session, loadDetail, pager, trajectoryHtml ...).
  // ------------------------------------------------------------------ ablation (docs/variants.md §6.7)
  // One decimal as Python's format(x, '.1f'): a tie (x * 10 = k + 1/2 exactly) happens only when x * 4 is an odd
  // integer (power-of-two scaling, exact), and then the even neighbour is taken; otherwise toFixed agrees.
  function fixed1(value) {
    var x = Number(value), quarters = x * 4;
    if (isFinite(x) && Number.isInteger(quarters) && quarters % 2 !== 0) {
      var n = Math.floor(Math.abs(x) * 10);
      if (n % 2 === 1) { n += 1; }
      return (x < 0 ? '-' : '') + (n / 10).toFixed(1);
    }
    return x.toFixed(1);
  }
  window.wtbFixed1 = fixed1;
  function points(v) { var t = fixed1(v); return (t.charAt(0) === '-' ? '' : '+') + t; }
  function span(low, high) { return low === null || low === undefined || high === null || high === undefined ? '<span class="muted">no interval</span>' : '[' + points(low) + ', ' + points(high) + ']'; }
  function pText(p) { return p < 0.001 ? '&lt;0.001' : esc(Number(p.toPrecision(3))); }
  function levelText(level) { return level === null || level === undefined ? '–' : esc(level); }
  function ablationIndex(query) { var a = parseInt(query.a || '0', 10) || 0; return Math.max(0, Math.min(a, D.ablations.length - 1)); }
  function cellRows(rows, bucket) {
    return rows.map(function (e) {
      var small = e.small ? ' small' : '';
      return '<tr class="effect' + small + '" data-factor="' + esc(e.factor) + '" data-level="' + esc(e.level === null ? '' : e.level) + '">' +
        '<td>' + esc(e.factor) + '</td><td>' + levelText(e.level) + '</td>' + (bucket ? '<td>' + esc(e[bucket]) + '</td>' : '') +
        '<td class="num">' + esc(e.pairs) + (e.small ? '<span class="small-mark" title="fewer than 10 pairs or 5 sessions: read the interval, not the point">*</span>' : '') + '</td>' +
        '<td class="num">' + (e.sessions === undefined ? '' : esc(e.sessions)) + '</td>' +
        '<td class="num">' + fixed1(e.origin_accuracy) + '</td><td class="num">' + fixed1(e.variant_accuracy) + '</td>' +
        '<td class="num diff">' + points(e.difference) + '</td><td class="num ci">' + span(e.ci_low, e.ci_high) + '</td><td class="num">' + pText(e.p_value) + '</td>' +
        (bucket ? '' : '<td class="num">' + (e.control ? points(e.control.difference) + ' ' + span(e.control.ci_low, e.control.ci_high) : '<span class="muted">–</span>') + '</td>') + '</tr>';
    }).join('');
  }
  function cellTable(id, rows, bucket, title) {
    return '<div class="scroll"><table class="data" id="' + id + '"><thead><tr><th>factor</th><th>level</th>' + (bucket ? '<th>' + esc(title) + '</th>' : '') +
      '<th class="num">pairs</th><th class="num">sessions</th><th class="num">origin %</th><th class="num">variant %</th><th class="num">difference (points)</th><th class="num">95% interval</th><th class="num">p</th>' +
      (bucket ? '' : '<th class="num">control (paraphrase)</th>') + '</tr></thead><tbody>' + cellRows(rows, bucket) + '</tbody></table></div>';
  }
  function ablation(query) {
    var html = '<h2>Ablation</h2>';
    if (!D.ablations.length) { view.innerHTML = html + '<p class="muted">No ablation in this report: pass an ablation folder (wtb ablate --out) to wtb report.</p>'; return; }
    var a = ablationIndex(query), A = D.ablations[a], run = RUNS[A.run];
    if (D.ablations.length > 1) {
      html += '<div class="filters"><label>ablation <select id="ablation-pick">' + D.ablations.map(function (x, i) {
        return '<option value="' + i + '"' + (i === a ? ' selected' : '') + '>' + esc(x.folder) + ' · ' + esc(x.model) + '</option>';
      }).join('') + '</select></label></div>';
    }
    var controlled = A.effects.some(function (e) { return e.control; });
    html += '<div class="kv" id="ablation-summary"><div>candidate</div><div>' + runName(run) + '</div><div>folder</div><div><code>' + esc(A.folder) + '</code></div>' +
      '<div>pairs</div><div>' + A.pairs.length + ' analysed' + (A.unscored ? ', ' + esc(A.unscored) + ' left out (a side not scored)' : '') + (A.missingPairs ? ', ' + A.missingPairs + ' not in the run' : '') + (A.trials ? ' · ' + esc(A.trials) + ' trial(s)' : '') + '</div>' +
      '<div>statistics</div><div>difference = variant − origin, target-task accuracy in points; ' + esc(A.interval) + '; p: ' + esc(A.test) + '</div>' +
      '<div>control</div><div>' + (controlled ? 'paraphrase control run: its interval is the grey band' : 'paraphrase control not run (<code>--factors ...,paraphrase</code>)') + '</div></div>';
    html += '<h3>Factor effects</h3><div class="plot" id="ablation-forest">' + A.forest + '</div>' + cellTable('ablation-effects', A.effects, null) +
      '<p class="note">* a small cell (fewer than 10 pairs or 5 sessions): read its interval, not its point (docs/variants.md §6.4).</p>';
    if (A.curve.length) {
      html += '<h3>Accuracy against instruction transitions</h3><div class="plot" id="ablation-curve">' + A.curvePlot + '</div>' +
        '<table id="ablation-curve-table"><thead><tr><th class="num">level</th><th class="num">target tasks</th><th class="num">accuracy %</th><th class="num">95% interval</th></tr></thead><tbody>' +
        A.curve.map(function (p) { return '<tr><td class="num">' + (p.level === 0 ? '0 (origins)' : (p.level > 0 ? '+' : '') + esc(p.level)) + '</td><td class="num">' + esc(p.pairs) + '</td><td class="num">' + fixed1(p.accuracy) + '</td><td class="num">' + (p.ci_low === null ? '<span class="muted">no interval</span>' : '[' + fixed1(p.ci_low) + ', ' + fixed1(p.ci_high) + ']') + '</td></tr>'; }).join('') + '</tbody></table>';
    }
    html += '<h3>By task type of the origin task</h3>' + cellTable('ablation-by-type', A.byType, 'task_type', 'task type') +
      '<h3>By turn subtype of the origin task</h3>' + cellTable('ablation-by-subtype', A.bySubtype, 'turn_subtype', 'turn subtype');
    html += ablationPairs(a, A, query);
    view.innerHTML = html;
  }
  function ablationPairs(a, A, query) {
    var cells = [];
    A.effects.forEach(function (e) { cells.push(e.factor + '|' + (e.level === null ? '' : e.level)); });
    var cell = cells.indexOf(query.cell) >= 0 ? query.cell : '', changed = query.changed !== '0';
    var list = [];
    A.pairs.forEach(function (p, i) {
      if (cell && p[1] + '|' + (p[2] === null ? '' : p[2]) !== cell) { return; }
      if (changed && p[7] === p[8]) { return; }
      list.push(i);
    });
    var page = Math.max(0, Math.min(parseInt(query.page || '0', 10) || 0, Math.floor(Math.max(list.length - 1, 0) / PAGE)));
    var base = { a: a || '', cell: cell, changed: changed ? '' : '0' };
    var html = '<h3 id="ablation-pairs-title">Pairs</h3><p class="note">Each pair is an origin task and the same task in its variant; "both trajectories" opens them side by side (first trial).</p>' +
      '<div class="filters"><label>factor and level <select id="ablation-cell"><option value="">all</option>' + cells.map(function (c) {
        return '<option value="' + esc(c) + '"' + (c === cell ? ' selected' : '') + '>' + esc(c.replace('|', ' ')) + '</option>';
      }).join('') + '</select></label><label><input type="checkbox" id="ablation-changed"' + (changed ? ' checked' : '') + '> verdict changed only</label>' +
      pager(list.length, page, 'ablation', base) + '</div>';
    html += '<div class="scroll"><table class="data" id="ablation-pairs"><thead><tr><th>variant</th><th>factor</th><th>level</th><th>origin task</th><th>origin</th><th>variant task</th><th>variant</th><th></th></tr></thead><tbody>';
    list.slice(page * PAGE, page * PAGE + PAGE).forEach(function (i) {
      var p = A.pairs[i], href = hashFor('pair', [a, i]);
      html += '<tr class="clickable" data-href="' + href + '"><td>' + esc(p[0]) + '</td><td>' + esc(p[1]) + '</td><td>' + levelText(p[2]) + '</td>' +
        '<td>' + esc(session(p[3])[0]) + ' · task ' + (p[4] + 1) + '</td><td>' + badge(p[7]) + '</td><td>task ' + (p[6] + 1) + '</td><td>' + badge(p[8]) + '</td>' +
        '<td><a class="pair-link" href="' + href + '">both trajectories ›</a></td></tr>';
    });
    if (!list.length) { html += '<tr><td colspan="8" class="muted">no pair' + (changed ? ' whose verdict changed' : '') + ' here</td></tr>'; }
    return html + '</tbody></table></div>';
  }
  function pairView(a, i) {
    var A = D.ablations[a], p = A && A.pairs[i];
    if (!p) { view.innerHTML = '<p>Unknown pair.</p>'; return; }
    var html = '<div class="crumbs"><a href="' + hashFor('ablation', [], { a: a || '' }) + '">Ablation</a> › ' + esc(p[0]) + '</div>' +
      '<h2 id="pair-title">' + esc(p[1]) + ' ' + (p[2] === null ? '' : esc(p[2])) + ': ' + esc(session(p[3])[0]) + ' task ' + (p[4] + 1) + ' against ' + esc(session(p[5])[0]) + ' task ' + (p[6] + 1) + '</h2>';
    var side = function (name, k, t, ok) {
      var inner = trajectoryHtml(A.run, k, t).replace(/ id="/g, ' id="' + name + '-');  // one page, two viewers: ids kept apart
      return '<div class="pair-side" id="pair-' + name + '"><div class="head"><b>' + name + '</b> ' + badge(ok) + '</div>' + inner + '</div>';
    };
    view.innerHTML = html + '<div class="pair-panel">' + side('origin', p[3], p[4], p[7]) + side('variant', p[5], p[6], p[8]) + '</div>';
  }
  function withSessions(ks, draw) {
    var mine = ++renderCount;
    if (ks.some(function (k) { return !session(k); })) { view.innerHTML = '<p>Unknown session.</p>'; rendered(); return; }
    view.innerHTML = '<p class="muted">Loading…</p>';
    Promise.all(ks.map(loadDetail)).then(function () { if (mine === renderCount) { draw(); window.scrollTo(0, 0); rendered(); } },
      function (error) { view.innerHTML = '<p class="why">Cannot read the data of these sessions: ' + esc(error.message) + '</p>'; });
  }

