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
    charts.push(new uPlot({ width: width(el1), height: 280, scales: { y: { range: [0, 1] } },
      axes: [{}, { values: (u, t) => t.map((v) => Math.round(v * 100) + '%') }],
      series: [{}, ...ordered.map((s) => ({ label: s.name, stroke: s.colour, fill: s.colour, width: 1 }))] },
      [xs, ...ordered.map((s) => s.values)], el1));

    const groups = data.groups;
    const xi = groups.map((_, i) => i);
    const names = groups.map(label);
    const bars = uPlot.paths.bars({ size: [0.6, 60] });
    const categorical = (el, series, values, yLabel) => {
      charts.push(new uPlot({ width: width(el), height: 240, scales: { x: { time: false, range: [-0.5, Math.max(0.5, groups.length - 0.5)] }, y: { range: (u, min, max) => [0, Math.max(1e-9, max) * 1.1] } },
        axes: [{ values: (u, t) => t.map((v) => names[v] ?? ''), splits: () => xi }, { label: yLabel }],
        series: [{}, ...series] }, [xi, ...values], el));
    };
    categorical($('chart-interruptions'), [{ label: 'interruptions / 1k node-h', stroke: '#d1495b', fill: '#d1495b88', paths: bars }],
      [groups.map((g) => (g.interruption_rate_per_1k_node_hours ? g.interruption_rate_per_1k_node_hours.total : null))], 'per 1,000 node-h');
    const gb = (v) => (v === null || v === undefined ? null : v / 1e9);
    categorical($('chart-bandwidth'), [
      { label: 'p50', stroke: '#1982c4', fill: '#1982c488', paths: uPlot.paths.bars({ size: [0.3, 40], align: -1 }) },
      { label: 'p95', stroke: '#6a4c93', fill: '#6a4c9388', paths: uPlot.paths.bars({ size: [0.3, 40], align: 1 }) },
    ], [groups.map((g) => gb(g.checkpoint_save_bandwidth_bytes_per_s.p50)), groups.map((g) => gb(g.checkpoint_save_bandwidth_bytes_per_s.p95))], 'GB/s');

    const t = data.totals || { detection_latency_ms: {}, resume_latency_ms: {} };
    const s = (v) => (v === null || v === undefined ? null : v / 1000);
    const el4 = $('chart-slo');
    const sloNames = ['detection p95', 'resume p95'];
    charts.push(new uPlot({ width: width(el4), height: 240, scales: { x: { time: false, range: [-0.5, 1.5] }, y: { range: (u, min, max) => [0, Math.max(1, max) * 1.1] } },
      axes: [{ values: (u, ticks) => ticks.map((v) => sloNames[v] ?? ''), splits: () => [0, 1] }, { label: 'seconds' }],
      series: [{}, { label: 'measured', stroke: '#e07b39', fill: '#e07b3988', paths: uPlot.paths.bars({ size: [0.5, 80] }) },
        { label: 'target', stroke: '#1b1f24', width: 2, dash: [6, 4], points: { show: true, size: 8 } }] },
      [[0, 1], [s(t.detection_latency_ms.p95), s(t.resume_latency_ms.p95)], [data.slo_targets_ms.detection_p95 / 1000, data.slo_targets_ms.resume_p95 / 1000]], el4));

    const table = $('groups');
    table.replaceChildren();
    const head = table.insertRow();
    for (const h of ['group', 'node-hours', 'goodput', 'interruptions / 1k node-h', 'USD / productive GPU-h']) { const th = document.createElement('th'); th.textContent = h; head.appendChild(th); }
    for (const g of groups) {
      const row = table.insertRow();
      for (const v of [label(g), (g.booked_node_ms / 3.6e6).toFixed(1), g.goodput === null ? '-' : (g.goodput * 100).toFixed(1) + '%',
        g.interruption_rate_per_1k_node_hours ? g.interruption_rate_per_1k_node_hours.total.toFixed(1) : '-',
        g.effective_usd_per_productive_gpu_hour === null ? '-' : g.effective_usd_per_productive_gpu_hour.toFixed(2)]) row.insertCell().textContent = v;
    }
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
    status('Figures ' + answer.data.window.since + ' to ' + answer.data.window.until + (answer.data.caught_up ? '' : ' (still catching up)') + '.', false);
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
