/**
 * The desk dashboard's page. It holds no data: the analyst's desk credential, entered once in the form, is
 * kept in sessionStorage (this tab only) and sent as a bearer header to /v1/desk/telemetry; it never goes into
 * a URL. Served with a CSP that allows only this server's own scripts, styles and API.
 */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Itô Training: pricing desk</title>
<link rel="stylesheet" href="/desk/uplot.css">
<link rel="stylesheet" href="/desk/dashboard.css">
</head>
<body>
<header><h1>Pricing desk</h1><p>Goodput, badput by cause, interruptions and checkpoint bandwidth, from the ledger. Definitions: docs/telemetry.md.</p></header>
<form id="login" autocomplete="off">
  <label for="credential">Desk credential</label>
  <input id="credential" name="credential" type="password" autocomplete="off" spellcheck="false" required>
  <label for="days">Window (days)</label>
  <input id="days" name="days" type="number" min="1" max="366" value="30">
  <button type="submit">Show</button>
  <button type="button" id="forget">Forget credential</button>
</form>
<p id="status" role="alert"></p>
<main id="charts" hidden>
  <section><h2>Goodput over time, badput stacked by cause</h2><div id="chart-goodput" class="chart"></div></section>
  <section><h2>Interruptions per 1,000 node-hours, by region and fabric</h2><div id="chart-interruptions" class="chart"></div></section>
  <section><h2>Checkpoint save bandwidth (GB/s), p50 and p95 by region and fabric</h2><div id="chart-bandwidth" class="chart"></div></section>
  <section><h2>Detection and resume latency p95 against their targets (s)</h2><div id="chart-slo" class="chart"></div></section>
  <section><h2>By region and fabric</h2><table id="groups"></table></section>
  <section id="simulated" hidden><h2>Time-scaled (simulated) runs, on their modelled clock</h2>
    <p class="note">A simulated executor runs hours of modelled training in seconds. Each such run is accounted whole on its own clock and left out of the fleet's figures and prices above.</p>
    <table id="simulated-runs"></table></section>
</main>
<script src="/desk/uplot.js"></script>
<script src="/desk/dashboard.js"></script>
</body>
</html>
`;

export const DASHBOARD_CSS = `[hidden]{display:none!important}
body{font:14px system-ui,sans-serif;margin:1.5rem;color:#1b1f24;background:#fafafa}
header p{color:#555}form{display:flex;gap:.5rem;align-items:center;flex-wrap:wrap;margin-bottom:1rem}
input{padding:.3rem}#status{min-height:1.2em;font-weight:600}#status.error{color:#b00020}
main{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:1rem}
section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.75rem}h2{font-size:15px;margin:.2rem 0 .6rem}
p.note{color:#555;margin:.2rem 0 .6rem}#simulated{grid-column:1/-1}section{overflow-x:auto}table{border-collapse:collapse;width:100%}td{white-space:nowrap}td.empty{color:#555;text-align:left}td,th{padding:.2rem .4rem;border-bottom:1px solid #eee;text-align:right}th:first-child,td:first-child{text-align:left}
`;
