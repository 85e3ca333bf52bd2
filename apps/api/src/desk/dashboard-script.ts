/** The dashboard's browser script (plain ES2020, no build step), served as /desk/dashboard.js. */
export const DASHBOARD_JS = String.raw`(() => {
  'use strict';
  const KEY = 'ito.desk.credential';
  const CAUSES = ['program_startup', 'data_prep', 'checkpoint_save_stall', 'checkpoint_restore', 'wasted_progress', 'infrastructure_recovery', 'awaiting_operator', 'idle', 'other'];
  const COLOURS = ['#8e6c8a', '#c9a227', '#e07b39', '#d1495b', '#b5179e', '#6a4c93', '#1982c4', '#c4c4c4', '#8d99ae'];
  const $ = (id) => document.getElementById(id);
  const status = (text, error) => { $('status').textContent = text; $('status').className = error ? 'error' : ''; };
  const charts = [];
  const width = (el) => Math.max(360, el.clientWidth - 8);

  function label(g) { return [g.group.region, g.group.fabric].filter(Boolean).join(' / ') || 'all'; }

  // Figures for people: dollars with a sign and separators, counts with separators, at most the digits that matter.
  const usd = (v) => (v === null || v === undefined ? '-' : '$' + v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 }));
  const num = (v, digits) => (v === null || v === undefined ? '-' : v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }));
  // A mostly idle booking's goodput is a fraction of a percent: say how small, not "0.0%" beside a price.
  const pct = (v) => (v === null || v === undefined ? '-' : v > 0 && v < 0.0001 ? '<0.01%' : (v * 100).toFixed(v > 0 && v < 0.01 ? 2 : 1) + '%');
  const secs = (ms) => (ms === null || ms === undefined ? '-' : num(ms / 1000, 1) + ' s');
  /** Tick labels a person can tell apart: as many decimals as the tick spacing needs, thousands separated. */
  function ticks(values) {
    const step = values.length > 1 ? Math.abs(values[1] - values[0]) : 1;
    const digits = step >= 1 || step === 0 ? 0 : Math.min(6, Math.ceil(-Math.log10(step)));
    return values.map((v) => v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }));
  }
  /** An axis' tick labels, also kept on its chart's element (data-y-ticks / data-x-ticks): what the page drew, in the DOM. */
  function recorded(el, name, format) {
    return (u, values) => { const out = format(values); el.dataset[name] = JSON.stringify(out); return out; };
  }
  // No live legend: values appear only under the cursor, so at rest every entry read "--".
  const legend = { live: false };

  function draw(data) {
    for (const c of charts.splice(0)) c.destroy();
    const buckets = data.series.buckets;
    const xs = buckets.map((b) => Date.parse(b.start) / 1000);
    const frac = (b, v) => (b.booked_node_ms > 0 ? v / b.booked_node_ms : null);
    // Stacked by hand: each band is the running total, drawn from the top down so lower bands paint over.
    const stacks = [];
    let running = buckets.map((b) => frac(b, b.productive_node_ms));
    stacks.push({ name: 'productive (goodput)', values: running, colour: '#2a9d8f' });
    CAUSES.forEach((c, i) => {
      running = running.map((v, j) => (v === null ? null : v + frac(buckets[j], buckets[j].badput_by_cause_node_ms[c])));
      stacks.push({ name: c.replace(/_/g, ' '), values: running, colour: COLOURS[i] });
    });
    const ordered = stacks.slice().reverse();
    const el1 = $('chart-goodput');
    charts.push(new uPlot({ width: width(el1), height: 280, legend, scales: { y: { range: [0, 1] } },
      axes: [{}, { values: recorded(el1, 'yTicks', (t) => t.map((v) => Math.round(v * 100) + '%')) }],
      series: [{}, ...ordered.map((s) => ({ label: s.name, stroke: s.colour, fill: s.colour, width: 1 }))] },
      [xs, ...ordered.map((s) => s.values)], el1));

    const groups = data.groups;
    const xi = groups.map((_, i) => i);
    const names = groups.map(label);
    const bars = uPlot.paths.bars({ size: [0.6, 60] });
    // A y range that never collapses: with nothing to show, the axis still reads 0 to 1, not 0 0 0 0 0 0.
    const yRange = (floor) => (u, min, max) => [0, Math.max(floor, max || 0) * 1.1];
    const categorical = (el, series, values, yLabel, floor) => {
      charts.push(new uPlot({ width: width(el), height: 240, legend, scales: { x: { time: false, range: [-0.5, Math.max(0.5, groups.length - 0.5)] }, y: { range: yRange(floor) } },
        axes: [{ values: recorded(el, 'xTicks', (t) => t.map((v) => names[v] ?? '')), splits: () => xi }, { label: yLabel, values: recorded(el, 'yTicks', ticks) }],
        series: [{}, ...series] }, [xi, ...values], el));
    };
    categorical($('chart-interruptions'), [{ label: 'interruptions / 1,000 node-h', stroke: '#d1495b', fill: '#d1495b88', paths: bars }],
      [groups.map((g) => (g.interruption_rate_per_1k_node_hours ? g.interruption_rate_per_1k_node_hours.total : null))], 'per 1,000 node-h', 1);
    const gb = (v) => (v === null || v === undefined ? null : v / 1e9);
    categorical($('chart-bandwidth'), [
      { label: 'p50', stroke: '#1982c4', fill: '#1982c488', paths: uPlot.paths.bars({ size: [0.3, 40], align: -1 }) },
      { label: 'p95', stroke: '#6a4c93', fill: '#6a4c9388', paths: uPlot.paths.bars({ size: [0.3, 40], align: 1 }) },
    ], [groups.map((g) => gb(g.checkpoint_save_bandwidth_bytes_per_s.p50)), groups.map((g) => gb(g.checkpoint_save_bandwidth_bytes_per_s.p95))], 'GB/s', 0.1);

    const t = data.totals || { detection_latency_ms: {}, resume_latency_ms: {} };
    const s = (v) => (v === null || v === undefined ? null : v / 1000);
    const el4 = $('chart-slo');
    const sloNames = ['detection p95', 'resume p95'];
    const targets = [data.slo_targets_ms.detection_p95 / 1000, data.slo_targets_ms.resume_p95 / 1000];
    // Each target is its own mark over its own bar: two objectives, not one series, so no line joins them.
    charts.push(new uPlot({ width: width(el4), height: 240, legend, scales: { x: { time: false, range: [-0.5, 1.5] }, y: { range: yRange(1) } },
      axes: [{ values: recorded(el4, 'xTicks', (ticks) => ticks.map((v) => sloNames[v] ?? '')), splits: () => [0, 1] }, { label: 'seconds', values: recorded(el4, 'yTicks', ticks) }],
      series: [{}, { label: 'measured p95', stroke: '#e07b39', fill: '#e07b3988', paths: uPlot.paths.bars({ size: [0.5, 80] }) },
        { label: 'detection target (' + num(targets[0], 0) + ' s)', stroke: '#1b1f24', width: 0, paths: () => null, points: { show: true, size: 12, width: 3, fill: '#ffffff' } },
        { label: 'resume target (' + num(targets[1], 0) + ' s)', stroke: '#6a4c93', width: 0, paths: () => null, points: { show: true, size: 12, width: 3, fill: '#ffffff' } }] },
      [[0, 1], [s(t.detection_latency_ms.p95), s(t.resume_latency_ms.p95)], [targets[0], null], [null, targets[1]]], el4));

    fillTable($('groups'), ['group', 'node-hours', 'goodput', 'interruptions / 1,000 node-h', 'USD / productive GPU-hour'],
      groups.map((g) => [label(g), num(g.booked_node_ms / 3.6e6, 1), pct(g.goodput),
        g.interruption_rate_per_1k_node_hours ? num(g.interruption_rate_per_1k_node_hours.total, 1) : '-', usd(g.effective_usd_per_productive_gpu_hour)]));
    const simulated = data.time_scaled_runs || [];
    $('simulated').hidden = simulated.length === 0;
    fillTable($('simulated-runs'), ['run', 'modelled node-hours', 'wall time', 'goodput', 'interruptions', 'detection p95', 'USD / productive GPU-hour'],
      simulated.map((r) => [r.group.run, num(r.booked_node_ms / 3.6e6, 1), secs(r.wall_ms), pct(r.goodput), num(r.interruptions.total, 0), secs(r.detection_latency_ms.p95), usd(r.effective_usd_per_productive_gpu_hour)]));
  }

  function fillTable(table, headings, rows) {
    table.replaceChildren();
    const head = table.insertRow();
    for (const h of headings) { const th = document.createElement('th'); th.textContent = h; head.appendChild(th); }
    for (const values of rows) { const row = table.insertRow(); for (const v of values) row.insertCell().textContent = v; }
    if (rows.length === 0) { const cell = table.insertRow().insertCell(); cell.colSpan = headings.length; cell.className = 'empty'; cell.textContent = 'none in the window'; }
  }

  async function load() {
    const credential = sessionStorage.getItem(KEY);
    if (!credential) { $('charts').hidden = true; status('Enter a desk credential to see the figures.', false); return; }
    const days = Math.min(366, Math.max(1, Number($('days').value) || 30));
    const until = new Date();
    const since = new Date(until.getTime() - days * 86400000);
    const query = new URLSearchParams({ group_by: 'region,fabric', since: since.toISOString(), until: until.toISOString(), buckets: '30' });
    status('Loading…', false);
    let answer;
    try {
      const r = await fetch('/v1/desk/telemetry?' + query, { headers: { authorization: 'Bearer ' + credential }, cache: 'no-store' });
      answer = await r.json();
    } catch (err) { status('The desk API did not answer.', true); return; }
    if (!answer.ok) {
      $('charts').hidden = true;
      const code = answer.error && answer.error.code;
      status(code === 'unauthenticated' || code === 'credential_revoked' ? 'That credential was refused: check it and enter it again.'
        : code === 'forbidden' ? 'That credential may not read the desk telemetry (it needs the desk:read scope).'
        : 'The desk API refused the request (' + String(code) + ').', true);
      return;
    }
    $('charts').hidden = false;
    draw(answer.data);
    const d = answer.data;
    const apart = d.groups.length === 0 && (d.time_scaled_runs || []).length > 0 ? ' No fleet bookings in the window: the simulated runs are shown apart, below.' : '';
    status('Figures ' + d.window.since + ' to ' + d.window.until + (d.caught_up ? '' : ' (still catching up)') + '.' + apart, false);
    document.body.dataset.rendered = 'true';
  }

  $('login').addEventListener('submit', (e) => {
    e.preventDefault();
    const value = $('credential').value.trim();
    $('credential').value = '';
    if (value) sessionStorage.setItem(KEY, value);
    load();
  });
  $('forget').addEventListener('click', () => { sessionStorage.removeItem(KEY); load(); });
  load();
})();
`;
