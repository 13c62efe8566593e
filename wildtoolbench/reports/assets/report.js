// wtb report page: renders the embedded report data (no network, works from file://).
// Summary data is parsed at load; each session's details (gold data and trajectories, gzip + base64 in their
// own inert script block) are decompressed and parsed the first time that session is opened.
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('wtb-data').textContent);
  var view = document.getElementById('view');
  var cache = {};
  var RUNS = {};
  D.runs.forEach(function (r, i) { r.index = i; RUNS[r.key] = r; });
  var CAT = {}; D.categories.forEach(function (c, i) { CAT[c[0]] = { index: i, label: c[1], kind: c[2] }; });
  var PAGE = 50;

  function esc(value) {
    return String(value === null || value === undefined ? '' : value)
      .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
  }
  // The project's rounding rule (docs/metrics.md §9): Python's format(x, '.2f'), i.e. the binary value rounded to
  // the nearest, ties to even. toFixed rounds exact ties away from zero; a tie at two decimals happens only when
  // x is an odd multiple of 1/8 (x * 100 = k + 1/2 exactly), and then the even neighbour is taken.
  function fixed2(value) {
    var x = Number(value), eighths = x * 8;
    if (isFinite(x) && Number.isInteger(eighths) && eighths % 2 !== 0) {
      var n = Math.floor(Math.abs(x) * 100);
      if (n % 2 === 1) { n += 1; }
      var digits = String(n);
      while (digits.length < 3) { digits = '0' + digits; }
      return (x < 0 ? '-' : '') + digits.slice(0, -2) + '.' + digits.slice(-2);
    }
    return x.toFixed(2);
  }
  window.wtbFixed2 = fixed2;
  function pct(v) { return v === null || v === undefined ? '' : fixed2(v); }
  function ratio(v) { return v === null || v === undefined ? '' : fixed2(v * 100) + '%'; }
  function ci(c) { return ratio(c[0]) + ' <span class="muted">[' + fixed2(c[1] * 100) + ', ' + fixed2(c[2] * 100) + ']</span>'; }
  function signed(v) { var t = fixed2(v * 100); return (t.charAt(0) === '-' ? '' : '+') + t; }
  var MARKS = { circle: '●', square: '■', triangle: '▲', diamond: '◆', 'triangle down': '▼', plus: '✚', cross: '✖', star: '★', hexagon: '⬢', 'triangle left': '◀' };
  function chip(run) { return '<span class="chip" style="color:' + run.color + '" title="' + esc(run.marker) + '" data-m="' + (MARKS[run.marker] || '●') + '" aria-hidden="true"></span>'; }
  var SIDE_NAMES = { en: 'EN', zh: '中文' };
  function sideBadge(lang) { return '<span class="badge b-side"' + (lang === 'zh' ? ' lang="zh"' : '') + ' title="' + (lang === 'zh' ? 'Chinese side (--lang zh)' : 'English side') + '">' + esc(SIDE_NAMES[lang] || lang) + '</span>'; }
  function modeBadge(run) { return run.scoring === 'reference' ? '' : ' <span class="badge b-warn" title="--scoring fixed: corrected scoring, not comparable with the paper">' + esc(run.scoring) + ' scoring</span>'; }
  function rankText(run) {
    if (run.rank) { return run.rank + ' of ' + (D.paperModels + 1); }
    return '<span class="badge b-unranked" title="' + esc('Only reference scoring of the English side on all official sessions is ranked among the paper\'s models') + '">unranked: ' + esc(run.unranked.join(', ')) + '</span>';
  }
  function shortSpec(spec) {
    var m = /^([a-z_-]+:)(.*)$/i.exec(spec);
    if (!m || m[2].length <= 28) { return spec; }
    var tail = m[2].split('/').pop();
    return m[1] + (tail.length > 34 ? tail.slice(0, 33) + '…' : '…/' + tail);
  }
  function runName(run) { return chip(run) + esc(run.label) + ' ' + sideBadge(run.lang) + modeBadge(run); }
  function textAttr(lang) { return lang === 'zh' ? ' lang="zh"' : ''; }
  function badge(ok, yes, no) { return ok ? '<span class="badge b-ok">' + esc(yes || 'correct') + '</span>' : '<span class="badge b-bad">' + esc(no || 'error') + '</span>'; }
  function unpack(id) {  // a gzip + base64 block, parsed
    var block = document.getElementById(id);
    if (!block) { return Promise.reject(new Error('no block ' + id)); }
    var raw = atob(block.textContent.trim());
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) { bytes[i] = raw.charCodeAt(i); }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Response(stream).text().then(JSON.parse);
  }
  function loadDetail(k) {
    if (cache[k]) { return Promise.resolve(cache[k]); }
    if (!document.getElementById('s-' + k)) { return Promise.reject(new Error('no data for session ' + k)); }
    return unpack('s-' + k).then(function (found) { cache[k] = found; return found; });
  }
  var FLIPPED = null;  // the Diff view's flipped tasks, one list per D.diffs entry, read when the view first opens
  function loadFlipped() {
    if (FLIPPED || !D.diffs.length) { return Promise.resolve(FLIPPED); }
    return unpack('diffs').then(function (found) { FLIPPED = found; return found; });
  }
  function detail(k) { return cache[k]; }  // only after loadDetail(k) resolved
  function session(k) { return D.sessions[k]; }
  function hashFor(name, args, query) {
    var h = '#' + [name].concat(args || []).join('/');
    var q = Object.keys(query || {}).filter(function (k) { return query[k] !== '' && query[k] !== undefined && query[k] !== null; })
      .map(function (k) { return encodeURIComponent(k) + '=' + encodeURIComponent(query[k]); });
    return q.length ? h + '?' + q.join('&') : h;
  }
  function parseHash() {
    var raw = location.hash.replace(/^#/, '') || 'overview';
    var parts = raw.split('?');
    var path = parts[0].split('/').map(decodeURIComponent);
    var query = {};
    (parts[1] || '').split('&').forEach(function (pair) {
      if (!pair) { return; }
      var kv = pair.split('=');
      query[decodeURIComponent(kv[0])] = decodeURIComponent(kv[1] || '');
    });
    return { name: path[0], args: path.slice(1), query: query };
  }

  // ------------------------------------------------------------------ tables (leaderboard, orchestration, errors)
  var sortState = {};
  function renderTable(id, spec) {
    var t = D.tables[id];
    var state = sortState[id] || { col: null, dir: -1, group: '' };
    sortState[id] = state;
    var rows = t.rows.slice();
    if (state.group) { rows = rows.filter(function (r) { return r.group === state.group; }); }
    if (state.col !== null) {
      rows.sort(function (a, b) {
        var x = state.col === 'model' ? a.model : a.values[state.col];
        var y = state.col === 'model' ? b.model : b.values[state.col];
        if (x === null || x === undefined) { return 1; }
        if (y === null || y === undefined) { return -1; }
        if (x < y) { return -state.dir; }
        if (x > y) { return state.dir; }
        return 0;
      });
    }
    var groups = [];
    t.rows.forEach(function (r) { if (groups.indexOf(r.group) < 0) { groups.push(r.group); } });
    var html = '<div class="filters"><label>group <select data-group="' + id + '"><option value="">all</option>' +
      groups.map(function (g) { return '<option' + (g === state.group ? ' selected' : '') + '>' + esc(g) + '</option>'; }).join('') +
      '</select></label><span class="muted">' + rows.length + ' rows; click a column to sort' + (spec.hint ? '; ' + spec.hint : '') + '</span></div>';
    html += '<div class="scroll"><table class="data" id="table-' + id + '"><thead><tr>';
    if (t.ranked) { html += '<th class="num" title="1 + the paper\'s models strictly better (docs/metrics.md §10)">rank</th>'; }
    html += sortHead(id, state, 'model', 'model', '', 'model name') + '<th>group</th>';
    t.keys.forEach(function (k) { html += sortHead(id, state, k, t.short[k] || k, 'num', t.labels[k]); });
    if (spec.extraHead) { html += spec.extraHead; }
    html += '</tr></thead><tbody>';
    rows.forEach(function (r) {
      var run = r.run ? RUNS[r.run] : null;
      html += '<tr class="' + (run ? 'ours clickable' : '') + '"' + (run ? ' data-href="' + spec.link(run) + '" data-run="' + run.key + '"' : '') + '>';
      if (t.ranked) { html += '<td class="num rank">' + (r.rank || (run ? '–' : '')) + '</td>'; }
      html += '<td class="name">' + (run ? chip(run) + '<a href="' + spec.link(run) + '">' + esc(r.model) + '</a> <span class="badge b-ours">ours</span> ' + sideBadge(run.lang) + modeBadge(run) +
        (t.ranked && r.unranked && r.unranked.length ? ' ' + rankText(run) : '') : esc(r.model)) + '</td>';
      html += '<td class="muted group">' + esc(r.group) + '</td>';
      t.keys.forEach(function (k) {
        var top = !run && t.ranked && r.values[k] !== null && r.values[k] === best(t, r.group, k);
        html += '<td class="num' + (top ? ' best' : '') + '">' + (spec.cell ? spec.cell(r, k, run) : pct(r.values[k])) + '</td>';
      });
      if (spec.extraCells) { html += spec.extraCells(r, run); }
      html += '</tr>';
    });
    return html + '</tbody></table></div>';
  }
  var bestCache = {};
  function best(t, group, k) {
    var key = t.keys.join(',') + '|' + group + '|' + k;
    if (!(key in bestCache)) {
      var values = t.rows.filter(function (r) { return !r.run && r.group === group && r.values[k] !== null && r.values[k] !== undefined; }).map(function (r) { return r.values[k]; });
      bestCache[key] = values.length ? Math.max.apply(null, values) : null;
    }
    return bestCache[key];
  }
  function sortHead(id, state, col, text, cls, title) {
    var sorted = state.col === col ? (state.dir < 0 ? 'descending' : 'ascending') : 'none';
    return '<th class="sortable ' + cls + '" data-sort="' + id + '" data-col="' + esc(col) + '" aria-sort="' + sorted + '" title="' + esc(title) + '">' +
      '<button type="button" class="sort" data-sort="' + id + '" data-col="' + esc(col) + '">' + esc(text) + arrow(state, col) + '</button></th>';
  }
  function arrow(state, col) { return state.col === col ? ' <span class="arrow">' + (state.dir < 0 ? '▼' : '▲') + '</span>' : ''; }

  // ------------------------------------------------------------------ views
  function scoringsText(r) {
    // task and session accuracy under every scoring the run folder holds (docs/semantic-mode.md §4)
    if (!r.scorings || r.scorings.length < 2) return '';
    return '<br><span class="muted">' + r.scorings.map(function (e) {
      return esc(e.scoring) + ': task ' + (e.task_accuracy === null ? '-' : fixed2(e.task_accuracy * 100) + '%') +
        ', session ' + (e.session_accuracy === null ? '-' : fixed2(e.session_accuracy * 100) + '%');
    }).join('<br>') + '</span>';
  }
  function overview() {
    var html = '<h2>' + esc(D.title) + '</h2>' + (D.comparability ? '<p class="note warn"><b>' + esc(D.comparability) + '</b></p>' : '') +
      (D.scoringComparability && !D.comparability ? '<p class="note warn"><b>' + esc(D.scoringComparability) + '</b></p>' : '');
    html += '<h3 id="runs-title">Runs</h3><div class="scroll"><table class="data runs" id="runs-table"><thead><tr><th>run</th><th>model spec · side · scoring</th><th>dataset</th><th>date (UTC) · harness · settings</th>' +
      '<th class="num">task accuracy<br>[95% CI]</th><th class="num">session accuracy<br>[95% CI]</th><th class="num" title="optimal path rate">OP</th><th class="num" title="accomplish progress rate">AP</th><th>top error categories</th><th>rank among the paper\'s ' + D.paperModels + '</th></tr></thead><tbody>';
    D.runs.forEach(function (r) {
      var settings = Object.keys(r.settings).map(function (k) { return esc(k) + ' = ' + esc(r.settings[k]); }).join('<br>');
      var errors = r.topErrors.map(function (e) { return '<a href="' + hashFor('tasks', [], { run: r.key, status: 'error', cat: e[0] }) + '">' + esc(CAT[e[0]].label) + '</a> ' + e[1]; }).join('<br>') || 'none';
      html += '<tr data-run="' + r.key + '"><td class="name"><b>' + chip(r) + esc(r.label) + '</b><br><a href="' + hashFor('tasks', [], { run: r.key, status: 'error' }) + '">' + r.failed + ' failed</a> of ' + r.tasks + ' tasks' +
        (r.rawResults ? '' : '<br><span class="muted" title="No result.jsonl: trajectories come from score.jsonl (calls in the scorer\'s sorted order)">scored log only</span>') + '</td>' +
        '<td><code title="' + esc(r.spec || r.model) + '">' + esc(shortSpec(r.spec || r.model)) + '</code><br>' + sideBadge(r.lang) + ' <span class="badge ' + (r.scoring === 'reference' ? 'b-info' : 'b-warn') + '">' + esc(r.scoring) + ' scoring</span>' + scoringsText(r) + '</td>' +
        '<td class="dataset"><span title="' + esc(r.datasetPath) + '">' + esc(r.datasetName) + '</span>' + (r.official ? ' <span class="badge b-ok">official</span>' : '') + '<br><span class="muted">' + r.sessions + ' of ' + r.datasetSessions + ' sessions<br><span title="sha256 ' + esc(r.datasetSha) + '">sha256 ' + esc(r.datasetSha.slice(0, 8)) + '…</span></span></td>' +
        '<td>' + esc(r.date.slice(0, 10)) + '<br>' + esc(r.date.slice(11, 19)) + '<br><span class="muted">wtb ' + esc(r.version || '?') + '</span>' +
        (settings ? '<details class="settings"><summary>settings</summary><div class="muted">' + settings + '</div></details>' : '') + '</td>' +
        '<td class="num">' + ratio(r.task[0]) + '<br><span class="muted">[' + fixed2(r.task[1] * 100) + ', ' + fixed2(r.task[2] * 100) + ']</span></td>' +
        '<td class="num">' + ratio(r.session[0]) + '<br><span class="muted">[' + fixed2(r.session[1] * 100) + ', ' + fixed2(r.session[2] * 100) + ']</span></td>' +
        '<td class="num">' + (r.op === null ? 'n/a' : pct(r.op)) + '</td><td class="num">' + (r.ap === null ? 'n/a' : pct(r.ap)) + '</td>' +
        '<td>' + errors + '</td><td class="rank">' + rankText(r) + '</td></tr>';
    });
    html += '</tbody></table></div><p class="note">Brackets: 95% Wilson score intervals (docs/metrics.md §10). Session accuracy: on the sessions. Task accuracy: on the effective number of tasks, because the tasks of a session share tools and history (sessions are the clusters). An interval is the range of accuracies the same model could plausibly get on another draw of sessions like these. ' +
      'Requests and tokens: ' + D.runs.map(function (r) { return esc(r.label) + ' ' + esc(r.requests === null ? 'n/a' : r.requests) + ' requests, ' + esc(r.tokens) + ' tokens in / out'; }).join('; ') + '.</p>';
    if (D.comparisons.length) {
      html += '<h3>Paired differences</h3><table><thead><tr><th>A</th><th>B</th><th class="num">shared sessions</th><th class="num">task acc. A − B (pp)</th><th class="num">95% CI</th><th class="num">session acc. A − B (pp)</th><th class="num">95% CI</th><th>verdict</th></tr></thead><tbody>';
      D.comparisons.forEach(function (c) {
        var a = RUNS[c.a], b = RUNS[c.b];
        html += '<tr><td>' + runName(a) + '</td><td>' + runName(b) + '</td><td class="num">' + c.sessions + '</td>' +
          '<td class="num">' + signed(c.task[0]) + '</td><td class="num">[' + signed(c.task[1]) + ', ' + signed(c.task[2]) + ']</td>' +
          '<td class="num">' + signed(c.session[0]) + '</td><td class="num">[' + signed(c.session[1]) + ', ' + signed(c.session[2]) + ']</td>' +
          '<td>' + esc(c.verdict) + '</td></tr>';
      });
      html += '</tbody></table><p class="note">Paired bootstrap (' + D.resamples + ' resamples, seed ' + D.seed + '): each resample draws the same sessions for both runs, so the difficulty of a session counts for both. An interval that holds 0 means the difference is within noise.</p>';
    }
    if (D.refused.length) {
      html += '<p class="note warn" id="not-compared"><b>Not compared</b> (same sessions, but a difference would mix what it measures): ' +
        D.refused.map(function (x) { return esc(RUNS[x.a].label) + ' and ' + esc(RUNS[x.b].label) + ': ' + esc(x.why); }).join('; ') + '.</p>';
    }
    if (D.scoring && D.scoring.length) {
      html += '<h3 id="scoring">Reference and fixed scoring</h3><p class="note">Fixed mode corrects eight quirks of the published evaluation (docs/fixed-mode.md); its numbers are not comparable with the paper\'s. "rescored": the same trajectories scored with fixes 5-8; a fixed run also applies the inference fixes 1-4.</p>' +
        '<table><thead><tr><th>reference run</th><th>fixed</th><th class="num">tasks</th><th class="num">task acc. reference</th><th class="num">task acc. fixed</th><th class="num">flips</th><th>flips by fix</th></tr></thead><tbody>';
      D.scoring.forEach(function (e) {
        var a = RUNS[e.reference], b = e.fixed ? RUNS[e.fixed] : null, n = Math.max(e.tasks, 1);
        var byFix = Object.keys(e.by_fix).map(function (k) { return 'fix ' + k + ': ' + e.by_fix[k]; }).join(', ') || 'none';
        html += '<tr><td>' + chip(a) + esc(a.label) + '</td><td>' + (b ? chip(b) + esc(b.label) : 'rescored') + '</td><td class="num">' + e.tasks + '</td>' +
          '<td class="num">' + ratio(e.reference_correct / n) + '</td><td class="num">' + ratio(e.fixed_correct / n) + '</td>' +
          '<td class="num">' + e.flips.length + '</td><td>' + esc(byFix) + '</td></tr>';
      });
      html += '</tbody></table>';
      D.scoring.forEach(function (e) {
        if (!e.flips.length) return;
        var a = RUNS[e.reference];
        html += '<h4>Label flips: ' + esc(a.label) + ' → ' + esc(e.fixed ? RUNS[e.fixed].label : 'rescored') + '</h4><table class="flips"><thead><tr><th>session</th><th class="num">task</th><th>reference</th><th>fixed</th><th>fixes</th><th>why</th></tr></thead><tbody>';
        e.flips.slice(0, 500).forEach(function (f) {
          html += '<tr><td>' + esc(f[0]) + '</td><td class="num">' + (f[1] + 1) + '</td><td>' + esc(f[2]) + '</td><td>' + esc(f[3]) + '</td><td>' + esc(f[4].join(', ')) + '</td><td>' + esc(f[5]) + '</td></tr>';
        });
        html += '</tbody></table>';
      });
    }
    html += '<h3>Task accuracy against session accuracy</h3>' + legend() + '<div class="plot">' + D.plots.scatter + '</div>';
    view.innerHTML = html;
  }

  function leaderboard() {
    view.innerHTML = '<h2>Leaderboard</h2>' + (D.comparability ? '<p class="note warn"><b>' + esc(D.comparability) + '</b></p>' : '') + '<p class="note">Rows ordered by session accuracy, then task accuracy (the paper\'s order). A rank is 1 + the number of the paper\'s ' + D.paperModels +
      ' models strictly better, the same in every view (docs/metrics.md §10); only runs in reference scoring of the English side on all official sessions are ranked, others stand at their place with a badge saying why. Percentages; empty where the run has no task of that kind; <b>bold</b>: best value of the paper\'s models in its group. Click a run to list its tasks. ' + esc(D.paperScoring || '') + ' Paper figures: ' + esc(D.paperSource) + '</p>' +
      renderTable('main', { link: function (run) { return hashFor('tasks', [], { run: run.key }); }, hint: 'hover a header for its meaning' });
  }

  function orchestration() {
    view.innerHTML = '<h2>Tool orchestration</h2><p class="note">Multi-tool tasks: accuracy by topology (parallel, sequential, mixed), accomplish progress rate (AP: steps taken over gold nodes, Sequential and Mixed tasks) and optimal path rate (OP: correct in the fewest steps, Parallel and Mixed tasks), as in docs/metrics.md. Ranked by multi-tool accuracy.</p>' +
      renderTable('orchestration', { link: function (run) { return hashFor('tasks', [], { run: run.key, type: 'multi' }); } });
  }

  function errors() {
    var t = D.tables.errors;
    var html = '<h2>Error analysis</h2><p class="note">Each failed task gets one category from its first failing step (rules below). Runs show count and share of their failed tasks; the paper\'s rows are its published shares. Click a count to list those tasks.</p>';
    html += renderTable('errors', {
      link: function (run) { return hashFor('tasks', [], { run: run.key, status: 'error' }); },
      cell: function (r, k, run) {
        if (!run) { return r.values[k] === null || r.values[k] === undefined ? '' : pct(r.values[k]) + '%'; }
        var n = r.extra[k + '_count'];
        var share = r.values[k] === null ? '' : '<br><span class="muted">' + pct(r.values[k]) + '%</span>';
        return n ? '<a href="' + hashFor('tasks', [], { run: run.key, status: 'error', cat: k }) + '">' + n + '</a>' + share : '0' + share;
      },
      extraHead: '<th class="num">failed tasks</th>',
      extraCells: function (r) { return '<td class="num">' + (r.extra.failed_tasks === undefined ? '' : r.extra.failed_tasks) + '</td>'; }
    });
    html += '<h3>Distribution</h3><div class="plot">' + D.plots.errors + '</div>';
    html += '<h3>How a category is assigned</h3><div class="note">' + D.rulesHtml + '</div>';
    view.innerHTML = html;
  }

  function groupTable(id, title, keys, names, field) {
    var html = '<div class="scroll"><table class="data groups" id="' + id + '"><thead><tr><th>run</th>' + keys.map(function (k, i) { return '<th class="num">' + esc(names[i]) + '</th>'; }).join('') + '</tr></thead><tbody>';
    D.runs.forEach(function (r) {
      html += '<tr><td class="name">' + runName(r) + '</td>' + keys.map(function (k) {
        var g = r[field][k];
        if (!g) { return '<td class="num muted">n/a</td>'; }
        return '<td class="num">' + ratio(g[0] / g[1]) + ' <span class="muted">n=' + g[1] + '</span><br><span class="muted">[' + fixed2(g[2] * 100) + ', ' + fixed2(g[3] * 100) + ']</span></td>';
      }).join('') + '</tr>';
    });
    return '<h4>' + esc(title) + '</h4>' + html + '</tbody></table></div>';
  }
  function legend() {
    return '<p class="legend" id="plot-legend">' + D.runs.map(function (r) { return '<span class="item">' + chip(r) + esc(r.label) + ' <span class="muted">(' + esc(r.marker) + ')</span></span>'; }).join(' ') +
      ' <span class="muted">· hover a point or bar for its value and n</span></p>';
  }
  function plots() {
    view.innerHTML = '<h2>Plots</h2>' + legend() +
      '<h3>Accuracy by task position</h3><div class="plot" id="plot-order">' + D.plots.order + '</div>' +
      groupTable('table-position', 'Task accuracy by position, with n and 95% interval', ['t1', 't2', 't3', 't4'], ['task 1', 'task 2', 'task 3', 'task 4'], 'byPosition') +
      '<h3>Accuracy by task type</h3><div class="plot" id="plot-type">' + D.plots.type + '</div>' +
      groupTable('table-type', 'Task accuracy by type, with n and 95% interval', D.types, D.types, 'byType') +
      '<h3>Accuracy by instruction transitions</h3><p class="note">A transition is a change between a tool task, a clarification task and a chat task from one task of the session to the next (0 to 3 per session).</p><div class="plot" id="plot-transitions">' + D.plots.transitions + '</div>' +
      '<h3>Error distribution</h3><div class="plot" id="plot-errors">' + D.plots.errors + '</div>' +
      '<h3>Task against session accuracy</h3><div class="plot" id="plot-scatter">' + D.plots.scatter + '</div>' +
      (D.plots.passk ? '<h3>pass^k over trials</h3><div class="plot" id="plot-passk">' + D.plots.passk + '</div>' + D.trialsHtml : '');
  }

  function histogramTable(title, counts) {
    var keys = Object.keys(counts);
    return '<table><thead><tr><th>' + esc(title) + '</th><th class="num">count</th></tr></thead><tbody>' +
      keys.map(function (k) { return '<tr><td>' + esc(k) + '</td><td class="num">' + counts[k] + '</td></tr>'; }).join('') + '</tbody></table>';
  }

  function dataset(query) {
    var html = '<h2>Dataset</h2>';
    D.datasets.forEach(function (d) {
      var s = d.stats;
      html += '<h3>' + esc(d.path) + '</h3><p class="muted">' + s.sessions + ' sessions, ' + s.tasks + ' tasks, ' + s.calls + ' gold tool calls, ' + s.ask_nodes + ' clarification questions; sha256 ' + esc(d.sha256.slice(0, 12)) + '…</p>';
      html += '<div class="plot">' + d.plot + '</div><div class="grid2">' +
        '<div>' + histogramTable('task type', s.task_types) + histogramTable('turn subtype (tasks 2-4)', s.turn_subtypes) + '</div>' +
        '<div>' + histogramTable('real calls per task', s.calls_per_task) + histogramTable('calls per DAG layer', s.layer_widths) + '</div>' +
        '<div>' + histogramTable('tools per session', s.tools_per_session) + histogramTable('instruction transitions per session', s.transitions) + '</div></div>';
      if (d.coverage) { html += coverageHtml(d.coverage); }
    });
    var q = (query.q || '').toLowerCase();
    var list = [];
    D.sessions.forEach(function (s, k) { if (!q || s[6].indexOf(q) >= 0) { list.push(k); } });
    var page = Math.max(0, Math.min(parseInt(query.page || '0', 10) || 0, Math.floor((list.length - 1) / PAGE)));
    html += '<h3>Sessions</h3><div class="filters"><label>search <input type="search" id="session-search" value="' + esc(query.q || '') + '" placeholder="session id, task text or tool name"></label>' + pager(list.length, page, 'dataset', query) + '</div>';
    html += '<div class="scroll"><table class="data" id="sessions-table"><thead><tr><th>session</th><th class="num">tools</th><th>task types</th><th class="num">transitions</th>' +
      D.runs.map(function (r) { return '<th class="wrap">' + runName(r) + '</th>'; }).join('') + '</tr></thead><tbody>';
    list.slice(page * PAGE, page * PAGE + PAGE).forEach(function (k) {
      var s = session(k);
      html += '<tr class="clickable" data-href="#session/' + k + '"><td><a href="#session/' + k + '">' + esc(s[0]) + '</a></td><td class="num">' + s[3] + '</td><td>' +
        s[2].map(function (t) { return esc(D.typeShort[t]); }).join(' · ') + '</td><td class="num">' + s[4] + '</td>' +
        D.runs.map(function (r) { return '<td>' + outcomeMarks(r, k) + '</td>'; }).join('') + '</tr>';
    });
    view.innerHTML = html + '</tbody></table></div>';
    var box = document.getElementById('session-search');
    box.addEventListener('change', function () { location.hash = hashFor('dataset', [], { q: box.value }); });
  }

  function num(v, digits) { return v === null || v === undefined ? '–' : (typeof v === 'number' ? v.toFixed(digits) : esc(String(v))); }
  function coverageHtml(c) {  // docs/coverage.md: the set beside the official set's published figures, and its diversity
    var st = c.statistics, m = st.messages, sim = m.self_similarity, a = st.arguments, prev = null;
    var html = '<h3>Coverage against the official set</h3><p class="muted">Official figures as published on the project page (docs/coverage.md §8); tool categories are approximated from tool names and descriptions.</p>' +
      '<div class="scroll"><table class="data" id="coverage-table"><thead><tr><th>figure</th><th>bucket</th><th class="num">this set</th><th class="num">official</th></tr></thead><tbody>' +
      c.comparison.map(function (r) {
        var row = '<tr><td>' + (r.figure === prev ? '' : esc(r.figure)) + '</td><td>' + esc(r.key || '') + '</td><td class="num">' + num(r['this'], r.key === null ? 0 : 1) + '</td><td class="num" title="' + esc(r.source || '') + '">' + num(r.official, r.key === null ? 0 : 1) + '</td></tr>';
        prev = r.figure; return row;
      }).join('') + '</tbody></table></div>';
    var shapes = ['none', 'single', 'parallel', 'sequential', 'mixed'];
    html += '<div class="grid2"><div><table><thead><tr><th>task type</th>' + shapes.map(function (x) { return '<th class="num">' + x + '</th>'; }).join('') + '</tr></thead><tbody>' +
      Object.keys(st.topology.shapes).map(function (t) { return '<tr><td>' + esc(t) + '</td>' + shapes.map(function (x) { return '<td class="num">' + st.topology.shapes[t][x] + '</td>'; }).join('') + '</tr>'; }).join('') + '</tbody></table>' +
      histogramTable('depth (layers with a call)', st.topology.depths) + histogramTable('width (calls in the widest layer)', st.topology.widths) + '</div>' +
      '<div><table id="diversity-table"><tbody>' +
      '<tr><td>tools called / offered</td><td class="num">' + st.tools.called + ' / ' + st.tools.offered + '</td></tr>' +
      '<tr><td>distinct-1 / -2 / -3 of user messages</td><td class="num">' + num(m.distinct_1, 3) + ' / ' + num(m.distinct_2, 3) + ' / ' + num(m.distinct_3, 3) + '</td></tr>' +
      '<tr><td>self-similarity (bigram Jaccard): mean of pairs / mean nearest</td><td class="num">' + num(sim.mean_pairwise, 3) + ' / ' + num(sim.mean_nearest, 3) + '</td></tr>' +
      '<tr><td>gold argument values: distinct / all</td><td class="num">' + a.distinct + ' / ' + a.values + '</td></tr>' +
      '<tr><td>argument value entropy (bits)</td><td class="num">' + num(a.entropy_bits, 2) + '</td></tr>' +
      '<tr><td>distinct values per use of a repeated parameter</td><td class="num">' + num(a.mean_parameter_distinct_ratio, 3) + '</td></tr>' +
      '</tbody></table>' + histogramTable('user turns per session', st.user_turns) + '</div></div>';
    return html;
  }

  function audit() {  // wtb report --audit: findings per kind and severity and per session; errata scores (docs/audit.md)
    var A = D.audit;
    if (!A) { view.innerHTML = '<h2>Audit</h2><p class="muted">No audit in this report: build it with <code>wtb report --audit</code> (or <code>--errata FILE</code>) to see the dataset\'s findings here.</p>'; return; }
    var html = '<h2>Audit</h2>';
    A.datasets.forEach(function (d) {
      var number = D.datasets.findIndex(function (x) { return x.key === d.key; });
      html += '<h3>' + esc(d.path) + '</h3><p class="muted">' + d.sessions_audited + ' sessions audited (' + esc(d.language) + ' side' + (d.runs.length ? '; failed_by_all over ' + d.runs.map(esc).join(', ') : '') + '): ' + d.findings + ' finding(s) in ' + d.sessions.length + ' session(s).</p>';
      var kinds = Object.keys(d.counts);
      if (kinds.length) {
        html += '<table id="audit-counts"><thead><tr><th>kind</th><th class="num">errors</th><th class="num">warnings</th></tr></thead><tbody>' +
          kinds.map(function (k) { return '<tr><td><code>' + esc(k) + '</code></td><td class="num">' + (d.counts[k].error || 0) + '</td><td class="num">' + (d.counts[k].warning || 0) + '</td></tr>'; }).join('') + '</tbody></table>';
      }
      html += '<div class="scroll"><table class="data" id="audit-findings"><thead><tr><th>session</th><th class="num" title="0-based task index, as wtb audit prints it">task index</th><th>kind</th><th>severity</th><th>message</th></tr></thead><tbody>';
      d.sessions.forEach(function (s) {
        var k = number >= 0 && s[1] >= 0 ? D.datasets[number].offset + s[1] : -1;
        s[2].forEach(function (f) {
          html += '<tr><td>' + (k >= 0 ? '<a href="#session/' + k + '">' + esc(s[0]) + '</a>' : esc(s[0])) + '</td><td class="num">' + (f[0] === null ? '–' : f[0]) + '</td><td><code>' + esc(f[1]) + '</code></td><td>' + badge(f[2] !== 'error', f[2], f[2]) + '</td><td class="wrap">' + esc(f[3]) + '</td></tr>';
        });
      });
      if (!d.sessions.length) { html += '<tr><td colspan="5" class="muted">no finding</td></tr>'; }
      html += '</tbody></table></div>';
    });
    if (A.errata) {
      html += '<h3>Scores without and with errata</h3><p class="muted">' + esc(A.errata.path) + '</p>';
      A.errata.runs.forEach(function (e) {
        var run = D.runs.find(function (r) { return r.key === e.key; });
        html += '<h4>' + (run ? runName(run) : esc(e.label)) + '</h4><p class="muted">' + e.excluded + ' task(s) excluded, ' + e.argument_changes + ' gold argument change(s) (' + e.rewritten + ' logged gold call(s) rewritten), ' + e.pending + ' pending, ' + e.other_changes + ' other correction(s) not reflected by rescoring.</p>' +
          '<table class="errata-table"><thead><tr><th>group</th><th>metric</th><th class="num">without</th><th class="num">with errata</th></tr></thead><tbody>' +
          e.rows.map(function (r) { return '<tr><td>' + esc(r[0]) + '</td><td>' + esc(r[1]) + '</td><td class="num">' + esc(r[2]) + ' <span class="muted">(' + esc(r[3]) + ')</span></td><td class="num">' + esc(r[4]) + ' <span class="muted">(' + esc(r[5]) + ')</span></td></tr>'; }).join('') + '</tbody></table>';
      });
      A.errata.skipped.forEach(function (e) { html += '<p class="muted">' + esc(e.label) + ': not rescored (' + esc(e.why) + ').</p>'; });
    }
    view.innerHTML = html;
  }

  var byRunSession = null;
  function taskIndex() {
    if (byRunSession) { return byRunSession; }
    byRunSession = {};
    D.tasks.forEach(function (t, i) { var key = t[0] + ':' + t[1]; (byRunSession[key] = byRunSession[key] || []).push(i); });
    return byRunSession;
  }
  function outcomeMarks(run, k) {
    var rows = taskIndex()[run.index + ':' + k];
    if (!rows) { return '<span class="muted">–</span>'; }
    return rows.map(function (i) {
      var t = D.tasks[i];
      return '<a title="task ' + (t[2] + 1) + ': ' + (t[3] ? 'correct' : esc(t[4] >= 0 ? D.categories[t[4]][1] : 'error')) + '" class="mark ' + (t[3] ? 'ok' : 'bad') + '" href="' + hashFor('traj', [run.key, k, t[2]]) + '">' + (t[3] ? '✓' : '✗') + '</a>';
    }).join(' ');
  }

  function pager(total, page, name, query) {
    var pages = Math.max(1, Math.ceil(total / PAGE));
    var prev = Object.assign({}, query, { page: page - 1 }), next = Object.assign({}, query, { page: page + 1 });
    return '<span class="pager"><button data-href="' + hashFor(name, [], prev) + '"' + (page <= 0 ? ' disabled' : '') + '>‹ prev</button>' +
      '<span>page ' + (page + 1) + ' of ' + pages + ' (' + total + ')</span><button data-href="' + hashFor(name, [], next) + '"' + (page >= pages - 1 ? ' disabled' : '') + '>next ›</button></span>';
  }

  function updateTasksLink() {
    var link = document.querySelector('header nav a[data-view="tasks"]');
    if (link) { link.setAttribute('href', hashFor('tasks', [], Object.assign({}, lastTasks, { page: '' }))); }
  }
  try { lastTasks = JSON.parse(sessionStorage.getItem('wtb-tasks') || '{}') || {}; } catch (e) { lastTasks = {}; }
  function taskMatches(t, query) {
    if (query.run && D.runs[t[0]].key !== query.run) { return false; }
    if (query.status === 'correct' && !t[3]) { return false; }
    if (query.status === 'error' && t[3]) { return false; }
    var s = session(t[1]);
    var type = D.types[s[2][t[2]]];
    if (query.type === 'multi') { if (type.indexOf('Multi-Tool') < 0) { return false; } } else if (query.type && type !== query.type) { return false; }
    if (query.cat && (t[4] < 0 || D.categories[t[4]][0] !== query.cat)) { return false; }
    if (query.q && s[6].indexOf(query.q.toLowerCase()) < 0) { return false; }
    return true;
  }

  var lastTasks = {};
  function tasks(query) {
    lastTasks = Object.assign({}, query);
    try { sessionStorage.setItem('wtb-tasks', JSON.stringify(lastTasks)); } catch (e) { /* storage may be off for file:// */ }
    updateTasksLink();
    var list = [];
    D.tasks.forEach(function (t, i) { if (taskMatches(t, query)) { list.push(i); } });
    var page = Math.max(0, Math.min(parseInt(query.page || '0', 10) || 0, Math.floor((list.length - 1) / PAGE)));
    function select(name, options, label) {
      return '<label>' + label + ' <select data-filter="' + name + '">' + options.map(function (o) {
        return '<option value="' + esc(o[0]) + '"' + ((query[name] || '') === o[0] ? ' selected' : '') + '>' + esc(o[1]) + '</option>';
      }).join('') + '</select></label>';
    }
    var html = '<h2>Tasks and trajectories</h2><div class="filters">' +
      select('run', [['', 'all runs']].concat(D.runs.map(function (r) { return [r.key, r.label]; })), 'run') +
      select('status', [['', 'all'], ['correct', 'correct'], ['error', 'incorrect']], 'result') +
      select('type', [['', 'all types'], ['multi', 'any Multi-Tool']].concat(D.types.map(function (t) { return [t, t]; })), 'task type') +
      select('cat', [['', 'all categories']].concat(D.categories.map(function (c) { return [c[0], c[1]]; })), 'error category') +
      '<label>search <input type="search" id="task-search" value="' + esc(query.q || '') + '" placeholder="session id, task text, tool name"></label>' +
      pager(list.length, page, 'tasks', query) + '</div>';
    html += '<div class="scroll"><table class="data" id="tasks-table"><thead><tr><th>run</th><th>session</th><th class="num">task</th><th>type</th><th>turn</th><th>result</th><th>category</th><th>first failing step: reason</th><th class="num">steps</th></tr></thead><tbody>';
    list.slice(page * PAGE, page * PAGE + PAGE).forEach(function (i) {
      var t = D.tasks[i], run = D.runs[t[0]], s = session(t[1]);
      var href = hashFor('traj', [run.key, t[1], t[2]]);
      html += '<tr class="clickable" data-href="' + href + '"><td class="wrap">' + chip(run) + esc(run.label) + '</td><td><a href="' + href + '">' + esc(s[0]) + '</a></td>' +
        '<td class="num">' + (t[2] + 1) + '</td><td class="wrap">' + esc(D.types[s[2][t[2]]]) + '</td><td class="wrap">' + esc(t[2] === 0 ? 'First Turn' : D.subtypes[s[5][t[2] - 1]]) + '</td>' +
        '<td>' + badge(t[3]) + '</td><td>' + (t[4] >= 0 ? esc(D.categories[t[4]][1]) : '') + '</td>' +
        '<td class="wrap">' + (t[7] >= 0 ? 'step ' + (t[7] + 1) + ': ' : '') + esc(t[8] || '') + '</td><td class="num">' + t[5] + '</td></tr>';
    });
    view.innerHTML = html + '</tbody></table></div>';
    var box = document.getElementById('task-search');
    box.addEventListener('change', function () { location.hash = hashFor('tasks', [], Object.assign({}, query, { q: box.value, page: '' })); });
  }

  // ------------------------------------------------------------------ gold DAG drawing
  var dagCount = 0;
  function dagSvg(nodes) {
    var depth = [], marker = 'arr' + (dagCount++);
    function d(i, seen) {
      if (depth[i] !== undefined) { return depth[i]; }
      if (seen[i]) { return 0; }
      seen[i] = true;
      var deps = nodes[i].dependency_list || [];
      var v = 0;
      deps.forEach(function (j) { if (j >= 0 && j < nodes.length) { v = Math.max(v, d(j, seen) + 1); } });
      depth[i] = v;
      return v;
    }
    nodes.forEach(function (_, i) { d(i, {}); });
    var columns = [];
    nodes.forEach(function (_, i) { (columns[depth[i]] = columns[depth[i]] || []).push(i); });
    var W = 168, H = 30, GX = 46, GY = 12, P = 10;
    var pos = [];
    var rows = 0;
    columns.forEach(function (col, c) { col.forEach(function (i, r) { pos[i] = { x: P + c * (W + GX), y: P + r * (H + GY) }; }); rows = Math.max(rows, col.length); });
    var width = P * 2 + columns.length * W + (columns.length - 1) * GX, height = P * 2 + rows * H + (rows - 1) * GY;
    var svg = '<svg xmlns="http://www.w3.org/2000/svg" width="' + width + '" height="' + height + '" role="img" aria-label="gold DAG">' +
      '<defs><marker id="' + marker + '" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#8a96a3"/></marker></defs>';
    nodes.forEach(function (n, i) {
      (n.dependency_list || []).forEach(function (j) {
        if (!pos[j]) { return; }
        var x1 = pos[j].x + W, y1 = pos[j].y + H / 2, x2 = pos[i].x, y2 = pos[i].y + H / 2, mx = (x1 + x2) / 2;
        svg += '<path d="M' + x1 + ',' + y1 + ' C' + mx + ',' + y1 + ' ' + mx + ',' + y2 + ' ' + (x2 - 1) + ',' + y2 + '" fill="none" stroke="#8a96a3" stroke-width="1.2" marker-end="url(#' + marker + ')"/>';
      });
    });
    nodes.forEach(function (n, i) {
      var name = n.action.name, fill = '#e6eefb', stroke = '#4a78c2';
      if (name === 'ask_user_for_required_parameters') { fill = '#fdf0d5'; stroke = '#b7791f'; name = 'ask user'; }
      if (name === 'prepare_to_answer') { fill = '#dcf3e3'; stroke = '#1b7f3b'; name = 'answer'; }
      var label = i + ': ' + name;
      if (label.length > 24) { label = label.slice(0, 23) + '…'; }
      svg += '<g><title>' + esc(i + ': ' + n.action.name + ' ' + JSON.stringify(n.action.arguments)) + '</title><rect x="' + pos[i].x + '" y="' + pos[i].y + '" width="' + W + '" height="' + H +
        '" rx="5" fill="' + fill + '" stroke="' + stroke + '"/><text x="' + (pos[i].x + 8) + '" y="' + (pos[i].y + H / 2 + 4) + '">' + esc(label) + '</text></g>';
    });
    return svg + '</svg>';
  }

  function pretty(text) {
    if (typeof text !== 'string') { return JSON.stringify(text, null, 1); }
    try { return JSON.stringify(JSON.parse(text), null, 1); } catch (e) { return text; }
  }

  function toolsHtml(tools, lang) {
    return '<ul class="tools"' + textAttr(lang) + '>' + tools.map(function (t) {
      var f = t.function || {}, text = f.description || '', short = text.length > 120 ? text.slice(0, 119) + '…' : text;
      return '<li><details><summary><b lang="en">' + esc(f.name) + '</b> <span class="muted">' + esc(short) + '</span></summary>' +
        (short !== text ? '<div class="text desc">' + esc(text) + '</div>' : '') + '<pre lang="en">' + esc(JSON.stringify(f.parameters, null, 1)) + '</pre></details></li>';
    }).join('') + '</ul>';
  }
  var sideChoice = 'en';
  try { sideChoice = sessionStorage.getItem('wtb-side') || 'en'; } catch (e) { sideChoice = 'en'; }
  function sessionView(k, query) {
    var s = session(k), det = detail(k), lang = query.side === 'zh' || query.side === 'en' ? query.side : sideChoice;
    sideChoice = lang;
    try { sessionStorage.setItem('wtb-side', lang); } catch (e) { /* ignore */ }
    var g = det.s[lang];
    var toggle = '<span class="toggle" role="group" aria-label="language side">' + ['en', 'zh'].map(function (side) {
      return side === lang ? '<b class="on"' + textAttr(side) + ' aria-current="true">' + (side === 'en' ? 'EN' : '中文') + '</b>' :
        '<a id="side-' + side + '" href="' + hashFor('session', [k], { side: side }) + '"' + textAttr(side) + '>' + (side === 'en' ? 'EN' : '中文') + '</a>';
    }).join(' / ') + '</span>';
    var html = '<div class="crumbs"><a href="#dataset">Dataset</a> › ' + esc(s[0]) + '</div><h2>' + esc(s[0]) + ' ' + toggle + '</h2>' +
      '<div class="kv"><div>side</div><div>' + (lang === 'zh' ? 'Chinese (unprefixed fields, what --lang zh runs)' : 'English (english_* fields)') + '</div><div>environment</div><div' + textAttr(lang) + '>' + esc(g.env) + '</div><div>dataset</div><div>' + esc(D.datasets[s[1]].path) + '</div></div>';
    html += '<h3>Tools (' + g.tools.length + ')</h3>' + toolsHtml(g.tools, lang);
    g.tasks.forEach(function (text, t) {
      html += '<h3>Task ' + (t + 1) + ' <span class="badge b-info"' + textAttr(lang) + '>' + esc(g.types[t]) + '</span> <span class="badge b-info"' + textAttr(lang) + '>' + esc(t === 0 ? (lang === 'zh' ? '首轮' : 'First Turn') : g.subtypes[t - 1]) + '</span> ' +
        D.runs.filter(function (r) { return det.r[r.key]; }).map(function (r) { return runTaskBadge(r, k, t); }).join(' ') + '</h3>';
      html += '<div class="msg user"><div class="role">user</div><div class="text"' + textAttr(lang) + '>' + esc(text) + '</div></div>';
      html += '<div class="dag">' + dagSvg(g.answers[t]) + '</div>';
      html += '<details><summary>gold nodes</summary>' + goldNodes(g.answers[t]) + '</details>';
    });
    view.innerHTML = html;
  }

  function runTaskBadge(run, k, t) {
    var tr = detail(k).r[run.key];
    var ok = tr.tasks ? tr.tasks[t].label === 'correct' : false;
    return '<a href="' + hashFor('traj', [run.key, k, t]) + '" title="open the trajectory">' + chip(run) + badge(ok, run.label + ' ✓', run.label + ' ✗') + '</a>';
  }

  function goldNodes(nodes) {
    return '<table><thead><tr><th class="num">#</th><th>action</th><th>arguments</th><th>depends on</th><th>observation / user input</th></tr></thead><tbody>' + nodes.map(function (n, i) {
      var obs = n.observation === undefined ? '' : (typeof n.observation === 'string' ? n.observation : JSON.stringify(n.observation));
      if (n.user_input) { obs += '\nuser: ' + n.user_input; }
      return '<tr><td class="num">' + i + '</td><td><b>' + esc(n.action.name) + '</b></td><td><pre>' + esc(JSON.stringify(n.action.arguments)) + '</pre></td><td>' + esc((n.dependency_list || []).join(', ')) + '</td><td><pre>' + esc(obs.length > 600 ? obs.slice(0, 600) + '…' : obs) + '</pre></td></tr>';
    }).join('') + '</tbody></table>';
  }

  // ------------------------------------------------------------------ trajectory viewer
  function messageHtml(m) {
    var html = '<div class="msg ' + esc(m.role) + '"><div class="role">' + esc(m.role) + (m.tool_call_id ? ' <span class="muted">(' + esc(m.tool_call_id) + ')</span>' : '') + '</div>';
    if (m.reasoning_content) { html += '<details><summary>reasoning</summary><div class="text">' + esc(m.reasoning_content) + '</div></details>'; }
    if (m.content !== null && m.content !== undefined && m.content !== '') { html += '<div class="text">' + esc(typeof m.content === 'string' ? m.content : JSON.stringify(m.content)) + '</div>'; }
    (m.tool_calls || []).forEach(function (c) {
      var f = c.function || {};
      html += '<div class="call"><span class="fn">' + esc(f.name) + '</span> <span class="muted">' + esc(c.id || '') + '</span><pre>' + esc(pretty(f.arguments)) + '</pre></div>';
    });
    return html + '</div>';
  }

  function requestMessages(traj, taskIdx) {
    // Rebuild every step's full message list from the [shared prefix, new messages] pairs, in recording order.
    var out = [], prev = [];
    traj.tasks.forEach(function (task, t) {
      task.steps.forEach(function (step) {
        var full = prev.slice(0, step.m[0]).concat(step.m[1]);
        if (t === taskIdx) { out.push(full); }
        prev = full;
      });
    });
    return out;
  }

  function candidateHtml(c) {
    var html = '<div class="call">' + c.actions.map(function (a) { return '<span class="fn">' + esc(a.name) + '</span> <span class="muted">' + esc(a.args) + '</span>'; }).join('<br>');
    if (c.observation !== undefined) { html += '<div class="muted">gold text: ' + esc(c.observation) + '</div>'; }
    if (c.user_input) { html += '<div class="muted">user reply: ' + esc(c.user_input) + '</div>'; }
    return html + '</div>';
  }

  // A trajectory's HTML (the Tasks view's viewer, and each side of an ablation pair); view.innerHTML is the caller's.
  function trajectoryHtml(runKey, k, t) {
    var run = RUNS[runKey], s = session(k);
    if (!run || !s) { return '<p>Unknown trajectory.</p>'; }
    var det = detail(k), traj = det.r[runKey], lang = run.lang === 'zh' ? 'zh' : 'en', g = det.s[lang];
    var html = '<div class="crumbs"><a href="' + hashFor('tasks', [], Object.keys(lastTasks).length ? lastTasks : { run: runKey }) + '">Tasks</a> › ' + runName(run) + ' › <a href="' + hashFor('session', [k], { side: lang }) + '">' + esc(s[0]) + '</a> › task ' + (t + 1) + '</div>';
    html += '<h2 id="traj-title">' + esc(s[0]) + ', task ' + (t + 1) + ' <span class="muted">(' + esc(run.label) + ')</span> ' + sideBadge(lang) + modeBadge(run) + '</h2>';
    var nav = [];
    for (var i = 0; i < g.tasks.length; i++) {
      nav.push(i === t ? '<b>task ' + (i + 1) + '</b>' : '<a href="' + hashFor('traj', [runKey, k, i]) + '">task ' + (i + 1) + '</a>');
    }
    D.runs.forEach(function (r) { if (r.key !== runKey && det.r[r.key]) { nav.push('<a href="' + hashFor('traj', [r.key, k, t]) + '">' + runName(r) + '</a>'); } });
    var around = failedNeighbours(run, k, t);
    html += '<div class="crumbs">' + nav.join(' · ') + '</div><div class="crumbs prevnext">' +
      (around[0] ? '<a id="prev-failed" href="' + hashFor('traj', [runKey, around[0][1], around[0][2]]) + '">‹ previous failed task</a>' : '<span class="muted">‹ previous failed task</span>') + ' · ' +
      (around[1] ? '<a id="next-failed" href="' + hashFor('traj', [runKey, around[1][1], around[1][2]]) + '">next failed task ›</a>' : '<span class="muted">next failed task ›</span>') +
      ' <span class="muted">(' + esc(run.label) + ': ' + run.failed + ' failed)</span></div>';
    if (!traj) { return html + '<p>This run has no record of the session.</p>'; }
    if (traj.error) {
      return html + '<p class="why" id="traj-error">' + esc(traj.error) + '</p><p class="note">The whole session failed at inference; each of its tasks counts as a call error.</p>';
    }
    var task = traj.tasks[t];
    html += '<div class="kv" id="traj-summary"><div>result</div><div>' + badge(task.label === 'correct') + ' <span class="muted">names ' + esc(task.nameLabel) + (task.argsLabel ? ', arguments ' + esc(task.argsLabel) : '') + (task.optimal ? ', optimal path' : '') + '</span></div>' +
      '<div>task type</div><div' + textAttr(lang) + '>' + esc(g.types[t]) + ' · ' + esc(t === 0 ? (lang === 'zh' ? '首轮' : 'First Turn') : g.subtypes[t - 1]) + '</div>' +
      '<div>side</div><div>' + (lang === 'zh' ? 'Chinese (--lang zh): the task, tools and gold below are the unprefixed fields' : 'English (english_* fields)') + '</div>';
    if (task.err) {
      html += '<div>error category</div><div><span class="badge b-bad" id="traj-category">' + esc(CAT[task.err[0]].label) + '</span> ' +
        (task.err[2] === null ? '' : 'at step ' + (task.err[2] + 1) + ': ') + '<span class="why">' + esc(task.err[1]) + '</span></div>';
    }
    if (task.why) { html += '<div>task note</div><div class="why">' + esc(task.why) + '</div>'; }
    html += '</div>';
    html += quirkNotes(run, s[0], t, task);
    html += '<h3>User message</h3><div class="msg user" id="traj-user"><div class="role">user</div><div class="text"' + textAttr(lang) + '>' + esc(g.tasks[t]) + '</div></div>';
    html += '<details id="traj-tools"><summary>tools offered (' + g.tools.length + ', ' + (lang === 'zh' ? 'Chinese side' : 'English side') + ')</summary>' + toolsHtml(g.tools, lang) + '</details>';
    html += '<details><summary>gold DAG</summary><div class="dag">' + dagSvg(g.answers[t]) + '</div>' + goldNodes(g.answers[t]) + '</details>';
    var requests = requestMessages(traj, t);
    task.steps.forEach(function (step, n) {
      var full = requests[n] || [];
      var fresh = n === 0 ? full.slice(-1) : full.slice(requests[n - 1] ? requests[n - 1].length : 0);
      var failing = task.err && task.err[2] === step.i;
      html += '<div class="step' + (failing ? ' failing' : '') + (step.dropped ? ' dropped' : '') + '" id="step-' + step.i + '"><div class="head"><b>step ' + (step.i + 1) + '</b> ' +
        badge(step.name === 'correct', 'name correct', 'name error') +
        (step.args ? ' ' + badge(step.args === 'correct', 'arguments correct', 'arguments error') : '') +
        (step.dropped ? ' <span class="badge b-warn">removed by the scorer after an argument error</span>' : '') +
        ' <span class="muted">latency ' + (step.lat === null || step.lat === undefined ? 'n/a' : Number(step.lat).toFixed(3) + ' s') +
        ' · tokens in ' + (step.tin === null || step.tin === undefined ? 'n/a' : step.tin) + ' / out ' + (step.tout === null || step.tout === undefined ? 'n/a' : step.tout) + '</span></div><div class="body">';
      html += '<div class="section-label">messages sent (' + full.length + ')</div>';
      if (full.length > fresh.length) {
        html += '<details><summary>' + (full.length - fresh.length) + ' earlier messages (system, gold history, earlier steps)</summary>' + full.slice(0, full.length - fresh.length).map(messageHtml).join('') + '</details>';
      }
      html += fresh.map(messageHtml).join('');
      html += '<div class="section-label">model reply</div>';
      if (step.reasoning) { html += '<details open><summary>reasoning</summary><div class="text">' + esc(step.reasoning) + '</div></details>'; }
      if (step.content) { html += '<div class="text">' + esc(step.content) + '</div>'; }
      step.calls.forEach(function (c) { html += '<div class="call"><span class="fn">' + esc(c.name) + '</span> <span class="muted">' + esc(c.id || '') + '</span><pre>' + esc(pretty(c.args)) + '</pre></div>'; });
      if (!step.content && !step.calls.length) { html += '<div class="muted">(empty reply)</div>'; }
      if (step.why) { html += '<div class="why">' + esc(step.why) + '</div>'; }
      (step.notes || []).forEach(function (note) { html += '<div class="muted">note: ' + esc(note) + '</div>'; });
      if (step.checks && step.checks.length) {
        html += '<div class="section-label">argument check (calls paired in sorted order)</div><table><thead><tr><th>tool</th><th>predicted</th><th>gold</th><th>result</th></tr></thead><tbody>' +
          step.checks.map(function (c) { return '<tr><td><b>' + esc(c[0]) + '</b></td><td><pre>' + esc(c[1]) + '</pre></td><td><pre>' + esc(c[2]) + '</pre></td><td>' + (c[3] === 'correct' ? badge(true) : '<span class="why">' + esc(c[3]) + '</span>') + '</td></tr>'; }).join('') + '</tbody></table>';
      }
      html += '<div class="section-label">gold ' + (step.name === 'correct' ? 'step matched' : 'candidates at this step (' + step.ncand + ')') + '</div>' +
        (step.cand.length ? step.cand.map(candidateHtml).join('') : '<div class="muted">none recorded</div>') +
        (step.ncand > step.cand.length ? '<div class="muted">… ' + (step.ncand - step.cand.length) + ' more</div>' : '');
      html += '</div></div>';
    });
    if (!task.steps.length) { html += '<p class="muted">No step recorded.</p>'; }
    return html;
  }
  function trajectory(runKey, k, t) { view.innerHTML = trajectoryHtml(runKey, k, t); }

  function failedNeighbours(run, k, t) {
    var rows = D.tasks.filter(function (x) { return x[0] === run.index && !x[3]; });
    var before = null, after = null;
    rows.forEach(function (x) {
      var cmp = x[1] !== k ? x[1] - k : x[2] - t;
      if (cmp < 0) { before = x; } else if (cmp > 0 && !after) { after = x; }
    });
    return [before, after];
  }

  var CAVEATS = {
    call_error: 'The category rules look at call names only (docs/errors.md §3.2): a parallel step with one wrong name counts as a call error when a gold candidate has a strict sub- or superset of the names, so this may be a wrong tool name rather than a wrong split or count.',
    param_halluc: 'The published argument check rejects keys of an object parameter whose schema lists no properties, even when the arguments equal the gold ones (docs/fixed-mode.md §8, fix 7): check whether the predicted and gold arguments below are the same.'
  };
  function quirkNotes(run, id, t, task) {
    var notes = [];
    (D.scoring || []).forEach(function (e) {
      var mine = e.reference === run.key ? 'reference' : e.fixed === run.key ? 'fixed' : null;
      if (!mine) { return; }
      e.flips.forEach(function (f) {
        if (f[0] !== id || f[1] !== t) { return; }
        var fixes = f[4].map(function (n) { return 'fix ' + n + ' (' + (D.fixes[String(n)] || '') + ')'; }).join(', ');
        if (mine === 'reference') {
          notes.push('<b>Fixed scoring labels this task ' + esc(f[3]) + '</b> (reference: ' + esc(f[2]) + ')' + (e.fixed ? ' in the fixed run ' + esc(RUNS[e.fixed].label) : ' when the same trajectory is rescored') + ': ' + (f[5].indexOf('fix ') >= 0 ? esc(f[5]) : esc(fixes) + '; ' + esc(f[5])) + '. A known quirk of the published scorer (docs/fixed-mode.md §10), not necessarily a model error.');
        } else {
          notes.push('<b>Reference scoring labels this task ' + esc(f[2]) + '</b> in ' + esc(RUNS[e.reference].label) + '; fixed scoring says ' + esc(f[3]) + ': ' + esc(fixes) + '.');
        }
      });
    });
    if (task.err && CAVEATS[task.err[0]] && !notes.length) {
      var step = task.steps.filter(function (x) { return x.i === task.err[2]; })[0];
      if (task.err[0] !== 'call_error' || (step && step.calls.length > 1)) { notes.push('<b>Category caveat:</b> ' + esc(CAVEATS[task.err[0]])); }
    }
    return notes.length ? '<div class="note quirk" id="traj-quirks">' + notes.map(function (n) { return '<p>' + n + '</p>'; }).join('') + '</div>' : '';
  }

  // ------------------------------------------------------------------ run against run (docs/diff.md)
  var OUTCOME_TEXT = { calls: 'tool calls', ask: 'question to the user', answer: 'final answer', error: 'error', end: 'no step (the log ends)' };
  function argsText(value) { return typeof value === 'string' ? value : JSON.stringify(value); }
  function callKeys(step) { return (step && step.calls || []).map(function (c) { return c.name + '\u0000' + argsText(c.arguments); }); }
  function diffSide(which, run, label, step, other, f) {
    var html = '<div class="diff-side" id="diff-side-' + which.toLowerCase() + '"><div class="head"><b>' + which + '</b> ' + runName(run) + ' ' + badge(label === 'correct', label, label) + '</div>';
    if (!step) { return html + '<p class="muted">no divergent step</p></div>'; }
    html += '<div class="diff-step"><b>step ' + esc(step.step) + '</b> · ' + esc(OUTCOME_TEXT[step.kind] || step.kind) +
      (step.nodes && step.nodes.length ? ' <span class="muted">· gold node' + (step.nodes.length > 1 ? 's ' : ' ') + esc(step.nodes.join(', ')) + '</span>' : '') + '</div>';
    var theirs = callKeys(other);
    if (step.calls && step.calls.length) {
      html += '<table class="diff-calls"><thead><tr><th>tool</th><th>arguments</th><th>gold node and arguments</th><th>verdict</th></tr></thead><tbody>' +
        step.calls.map(function (c, j) {
          var changed = theirs.indexOf(callKeys(step)[j]) < 0;
          return '<tr class="' + (changed ? 'changed' : 'same') + '"><td><span class="fn">' + esc(c.name) + '</span>' + (changed ? ' <span class="badge b-warn" title="the other side has no call with this name and these arguments at its step">differs</span>' : '') + '</td>' +
            '<td><pre>' + esc(pretty(c.arguments)) + '</pre></td>' +
            '<td>' + (c.node === null || c.node === undefined ? '<span class="muted">none</span>' : 'node ' + esc(c.node) + '<pre>' + esc(pretty(c.gold_arguments)) + '</pre>') + '</td>' +
            '<td>' + (c.verdict === 'correct' ? badge(true) : c.verdict === null || c.verdict === undefined ? '<span class="muted">not checked</span>' : '<span class="why">' + esc(c.verdict) + '</span>') + '</td></tr>';
        }).join('') + '</tbody></table>';
    }
    if (step.content) { html += '<div class="section-label">' + (step.kind === 'ask' ? 'question' : step.kind === 'answer' ? 'answer' : 'text') + '</div><div class="text">' + esc(step.content) + '</div>'; }
    if (step.error_reason) { html += '<div class="why">' + esc(step.error_reason) + '</div>'; }
    if (!(step.calls && step.calls.length) && !step.content && !step.error_reason) { html += '<div class="muted">(nothing recorded)</div>'; }
    html += '<p><a class="to-traj" href="' + hashFor('traj', [run.key, f.k, f.task], { step: step.step }) + '">open ' + esc(run.label) + '\'s trajectory at step ' + esc(step.step) + ' ›</a></p>';
    return html + '</div>';
  }
  function diffView(query) {
    var html = '<h2>Run against run</h2>';
    if (!D.diffs.length) {
      view.innerHTML = html + '<p class="note" id="diff-none">' + (D.runs.length < 2 ? 'A diff needs two runs of the same sessions: pass two or more run folders to wtb report.' :
        'No two runs of this report can be paired: a diff needs the same sessions, scoring mode and side.') + '</p>';
      return;
    }
    var p = Math.max(0, Math.min(parseInt(query.pair || '0', 10) || 0, D.diffs.length - 1));
    var d = D.diffs[p], a = RUNS[d.a], b = RUNS[d.b], flipped = FLIPPED[p];
    var kind = query.kind === 'regressed' || query.kind === 'improved' ? query.kind : '';
    var open = query.row === undefined || query.row === '' ? -1 : parseInt(query.row, 10);
    html += '<p class="note">The tasks whose label differs between run A and run B and, for each, the first step where the two trajectories part. Steps are aligned through the gold DAG: a parallel step and the same calls sent one by one count as the same progress (docs/diff.md §3). Click a row for both sides\' calls and arguments at that step.</p>';
    html += '<div class="filters"><label>pair <select id="diff-pair">' + D.diffs.map(function (x, i) {
      return '<option value="' + i + '"' + (i === p ? ' selected' : '') + '>A: ' + esc(RUNS[x.a].label) + ' · B: ' + esc(RUNS[x.b].label) + '</option>';
    }).join('') + '</select></label><span class="kinds" id="diff-kinds">' +
      [['', 'all flips', d.counts.total], ['regressed', 'regressed', d.counts.regressed], ['improved', 'improved', d.counts.improved]].map(function (x) {
        return '<button type="button" data-kind="' + (x[0] || 'all') + '" aria-pressed="' + (kind === x[0]) + '" data-href="' + hashFor('diff', [], { pair: p, kind: x[0] }) + '">' + esc(x[1]) + ' <b>' + x[2] + '</b></button>';
      }).join('') + '</span></div>';
    html += '<div class="kv" id="diff-summary"><div>A</div><div>' + runName(a) + '</div><div>B</div><div>' + runName(b) + '</div><div>compared</div><div>' + d.sessions + ' sessions, ' + d.tasks + ' tasks</div>' +
      '<div>flipped</div><div>' + d.counts.total + ' tasks: ' + d.counts.regressed + ' regressed (correct in A, wrong in B), ' + d.counts.improved + ' improved (wrong in A, correct in B)</div></div>';
    var list = [];
    flipped.forEach(function (f, i) { if (!kind || f.flip === kind) { list.push(i); } });
    var at = list.indexOf(open);
    var page = query.page === undefined || query.page === '' ? Math.max(0, Math.floor(at / PAGE)) : parseInt(query.page, 10) || 0;
    page = Math.max(0, Math.min(page, Math.floor(Math.max(list.length - 1, 0) / PAGE)));
    var base = { pair: p, kind: kind };
    if (list.length > PAGE) { html += '<div class="filters">' + pager(list.length, page, 'diff', base) + '</div>'; }
    html += '<div class="scroll"><table class="data" id="diff-table"><thead><tr><th>session</th><th class="num">task</th><th>flip</th><th>A</th><th>B</th><th>first divergent step</th></tr></thead><tbody>';
    list.slice(page * PAGE, page * PAGE + PAGE).forEach(function (i) {
      var f = flipped[i], s = f.first_divergent_step;
      var href = hashFor('diff', [], Object.assign({}, base, { row: i === open ? '' : i, page: page || '' }));
      html += '<tr class="clickable' + (i === open ? ' open' : '') + '" data-row="' + i + '" data-flip="' + esc(f.flip || '') + '" data-href="' + href + '"><td><a href="' + href + '">' + esc(f.id) + '</a></td><td class="num">' + (f.task + 1) + '</td>' +
        '<td><span class="badge ' + (f.flip === 'regressed' ? 'b-bad' : f.flip === 'improved' ? 'b-ok' : 'b-warn') + '">' + esc(f.flip || 'flipped') + '</span></td>' +
        '<td>' + badge(f.a_label === 'correct', f.a_label, f.a_label) + '</td><td>' + badge(f.b_label === 'correct', f.b_label, f.b_label) + '</td>' +
        '<td>' + (s ? 'A step ' + esc(s.a) + ' · B step ' + esc(s.b) : '<span class="muted">none found</span>') + '</td></tr>';
      if (i === open) {
        html += '<tr class="diff-open"><td colspan="6" class="wrap"><div class="diff-panel" id="diff-panel">' +
          (s ? '' : '<p class="note">No divergent step: both trajectories end alike though their labels differ (docs/diff.md §4).</p>') +
          diffSide('A', a, f.a_label, f.a_step, f.b_step, f) + diffSide('B', b, f.b_label, f.b_step, f.a_step, f) + '</div></td></tr>';
      }
    });
    if (!list.length) { html += '<tr><td colspan="6" class="muted">no flipped task of this kind</td></tr>'; }
    view.innerHTML = html + '</tbody></table></div>';
  }

  // @include ablation.js (the Ablation view: wildtoolbench/reports/assets/ablation.js, inlined here by html.py)
  // ------------------------------------------------------------------ router
  var VIEWS = { overview: overview, leaderboard: leaderboard, orchestration: orchestration, errors: errors, plots: plots, audit: audit };
  var renderCount = 0;
  function focusStep(n) {  // #traj/...?step=N: the step (a diff's divergent step) marked and scrolled to
    var el = n === undefined || n === '' ? null : document.getElementById('step-' + n);
    if (el) { el.classList.add('target'); el.scrollIntoView({ block: 'start' }); }
  }
  function withSession(k, draw, after) {
    var mine = ++renderCount;
    if (!session(k)) { view.innerHTML = '<p>Unknown session.</p>'; return; }
    if (!cache[k]) { view.innerHTML = '<p class="muted">Loading ' + esc(session(k)[0]) + '…</p>'; }
    loadDetail(k).then(function () { if (mine === renderCount) { draw(); window.scrollTo(0, 0); if (after) { after(); } rendered(); } },
      function (error) { view.innerHTML = '<p class="why">Cannot read the data of this session: ' + esc(error.message) + '</p>'; });
  }
  function withFlipped(draw) {
    var mine = ++renderCount;
    if (D.diffs.length && !FLIPPED) { view.innerHTML = '<p class="muted">Loading the diffs…</p>'; }
    loadFlipped().then(function () {
      if (mine !== renderCount) { return; }
      draw();
      window.scrollTo(0, 0);
      var open = view.querySelector('#diff-table tr.open');
      if (open) { open.scrollIntoView({ block: 'nearest' }); }
      rendered();
    }, function (error) { view.innerHTML = '<p class="why">Cannot read the diffs: ' + esc(error.message) + '</p>'; });
  }
  function rendered() { document.body.setAttribute('data-rendered', location.hash || '#overview'); }
  function render() {
    renderCount++;
    document.body.setAttribute('data-rendered', '');
    var route = parseHash();
    var tab = route.name === 'traj' ? 'tasks' : route.name === 'session' ? 'dataset' : route.name === 'pair' ? 'ablation' : route.name;
    Array.prototype.forEach.call(document.querySelectorAll('header nav a'), function (a) { a.classList.toggle('active', a.getAttribute('data-view') === tab); });
    if (VIEWS[route.name]) { VIEWS[route.name](); }
    else if (route.name === 'tasks') { tasks(route.query); }
    else if (route.name === 'dataset') { dataset(route.query); }
    else if (route.name === 'diff') { withFlipped(function () { diffView(route.query); }); }
    else if (route.name === 'ablation') { ablation(route.query); }
    else if (route.name === 'pair') {
      var A = D.ablations[parseInt(route.args[0], 10)], pair = A && A.pairs[parseInt(route.args[1], 10)];
      if (pair) { withSessions([pair[3], pair[5]], function () { pairView(parseInt(route.args[0], 10), parseInt(route.args[1], 10)); }); }
      else { view.innerHTML = '<p>Unknown pair.</p>'; }
    }
    else if (route.name === 'session') {
      var ks = parseInt(route.args[0], 10);
      withSession(ks, function () { sessionView(ks, route.query); });
    } else if (route.name === 'traj') {
      var kt = parseInt(route.args[1], 10);
      withSession(kt, function () { trajectory(route.args[0], kt, parseInt(route.args[2], 10)); }, function () { focusStep(route.query.step); });
    }
    else { overview(); }
    document.body.setAttribute('data-view', route.name);
    window.scrollTo(0, 0);
    if (route.name !== 'session' && route.name !== 'traj' && route.name !== 'diff' && !(route.name === 'pair' && pair)) { rendered(); }
  }
  view.addEventListener('click', function (event) {
    var target = event.target;
    var sortCell = target.closest('th[data-sort]');
    if (sortCell) {
      var id = sortCell.getAttribute('data-sort'), col = sortCell.getAttribute('data-col'), state = sortState[id];
      state.dir = state.col === col ? -state.dir : (col === 'model' ? 1 : -1);
      state.col = col;
      render();
      var again = view.querySelector('button.sort[data-sort="' + id + '"][data-col="' + col + '"]');
      if (again) { again.focus(); }
      return;
    }
    if (target.closest('a')) { return; }
    var row = target.closest('[data-href]');
    if (row && !row.disabled) { location.hash = row.getAttribute('data-href'); }
  });
  view.addEventListener('change', function (event) {
    var target = event.target;
    if (target.id === 'diff-pair') { location.hash = hashFor('diff', [], { pair: target.value }); return; }
    if (target.id === 'ablation-pick') { location.hash = hashFor('ablation', [], { a: target.value === '0' ? '' : target.value }); return; }
    if (target.id === 'ablation-cell' || target.id === 'ablation-changed') {
      var q = parseHash().query;
      q.cell = document.getElementById('ablation-cell').value;
      q.changed = document.getElementById('ablation-changed').checked ? '' : '0';
      q.page = '';
      location.hash = hashFor('ablation', [], q);
      return;
    }
    if (target.hasAttribute('data-group')) { sortState[target.getAttribute('data-group')].group = target.value; render(); }
    if (target.hasAttribute('data-filter')) {
      var query = parseHash().query;
      query[target.getAttribute('data-filter')] = target.value;
      query.page = '';
      location.hash = hashFor('tasks', [], query);
    }
  });
  window.addEventListener('hashchange', render);
  render();
  document.body.setAttribute('data-ready', '1');
})();
