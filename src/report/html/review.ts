/**
 * The blind review page (`rankgate review export`): one self-contained HTML file, no server, no network (a Content
 * Security Policy forbids every fetch; no font, script or style from elsewhere). It holds the page data of
 * src/gate/review.ts (query texts and the two lists as "X" and "Y": titles, headings and texts only) and a small script
 * that builds the page from it with textContent (no result text is ever parsed as HTML), keeps the reviewer's name,
 * ratings and notes in localStorage under the export's id (a closed tab or a reload loses nothing), and downloads them
 * as the ratings JSON `rankgate review import` reads. Rendering only: what is shown was decided by src/gate/review.ts.
 */
import type { ReviewPageData } from '../../gate/review.ts';

/** JSON safe inside <script>. */
function scriptJson(x: unknown): string {
  return JSON.stringify(x).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

const CSS = `
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#fff;border-bottom:1px solid #dde1e7;padding:12px 20px;position:sticky;top:0;z-index:2}
header h1{font-size:18px;margin:0 0 6px}
header .row{display:flex;flex-wrap:wrap;gap:12px;align-items:center}
main{max-width:1400px;margin:0 auto;padding:12px 20px 60px}
.help{color:#4a5262;margin:6px 0 0;font-size:14px}
section.item{background:#fff;border:1px solid #dde1e7;border-radius:8px;margin:16px 0;padding:12px 16px}
section.item.done{border-left:4px solid #2e7d32}
.q{font-size:17px;font-weight:600;margin:4px 0 10px}
.n{color:#6b7385;font-size:13px}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:16px}
@media (max-width:760px){.pair{grid-template-columns:1fr}}
.list h3{margin:0 0 6px;font-size:16px}
.list ol{margin:0;padding-left:22px}
.list li{margin:0 0 8px}
.list .t{font-weight:600}
.list .h{color:#4a5262;font-size:13px}
.list .x{font-size:14px;white-space:pre-wrap;overflow-wrap:anywhere}
.empty{color:#6b7385;font-style:italic}
fieldset{border:1px solid #dde1e7;border-radius:6px;margin:8px 0 0;padding:6px 10px}
fieldset label{margin-right:10px;white-space:nowrap}
textarea{width:100%;min-height:38px;margin-top:8px;font:inherit}
#status{font-weight:600}
#status.bad{color:#b00020}
#status.good{color:#2e7d32}
button{font:inherit;padding:6px 14px}
`;

const SCRIPT = `
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('review-data').textContent);
  var KEY = 'rankgate-review:' + D.exportId;
  var st = load();
  var statusEl = document.getElementById('status');
  function load() {
    try {
      var s = JSON.parse(localStorage.getItem(KEY) || 'null');
      if (s && typeof s === 'object' && s.ratings && typeof s.ratings === 'object') return { reviewer: String(s.reviewer || ''), ratings: s.ratings };
    } catch (e) {}
    return { reviewer: '', ratings: {} };
  }
  function save() {
    try { localStorage.setItem(KEY, JSON.stringify(st)); }
    catch (e) { say('Could not keep the ratings in this browser (' + e.message + '): download them before closing the page.', 'bad'); }
  }
  function say(text, cls) { statusEl.textContent = text; statusEl.className = cls || ''; }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function entry(id) { return st.ratings[id] || (st.ratings[id] = {}); }
  function complete(id) { var r = st.ratings[id]; return !!r && r.x >= 1 && r.y >= 1; }
  function progress() {
    var n = D.items.filter(function (it) { return complete(it.id); }).length;
    document.getElementById('progress').textContent = n + ' of ' + D.items.length + ' queries rated';
    D.items.forEach(function (it, i) { document.getElementById('item-' + i).classList.toggle('done', complete(it.id)); });
    return n;
  }
  var main = document.querySelector('main');
  D.items.forEach(function (it, i) {
    var sec = el('section', { 'class': 'item', id: 'item-' + i, 'data-item': String(i) });
    sec.appendChild(el('div', { 'class': 'n' }, 'Query ' + (i + 1) + ' of ' + D.items.length));
    sec.appendChild(el('p', { 'class': 'q' }, it.query));
    var pair = el('div', { 'class': 'pair' });
    ['X', 'Y'].forEach(function (side) {
      var box = el('div', { 'class': 'list', 'data-side': side });
      box.appendChild(el('h3', {}, 'List ' + side));
      if (!it[side].length) box.appendChild(el('p', { 'class': 'empty' }, '(no results)'));
      else {
        var ol = el('ol');
        it[side].forEach(function (h) {
          var li = el('li');
          li.appendChild(el('div', { 'class': 't' }, h.title));
          if (h.heading) li.appendChild(el('div', { 'class': 'h' }, h.heading));
          li.appendChild(el('div', { 'class': 'x' }, h.text));
          ol.appendChild(li);
        });
        box.appendChild(ol);
      }
      var fs = el('fieldset');
      fs.appendChild(el('legend', {}, 'Rate list ' + side + ' (1 = useless, 5 = excellent)'));
      for (var v = 1; v <= 5; v++) {
        var lab = el('label');
        var inp = el('input', { type: 'radio', name: 'rate-' + i + '-' + side, value: String(v), 'data-testid': 'rate-' + i + '-' + side + '-' + v });
        var cur = st.ratings[it.id];
        if (cur && cur[side.toLowerCase()] === v) inp.checked = true;
        inp.addEventListener('change', function (ev) {
          var t = ev.target;
          entry(it.id)[t.name.slice(-1).toLowerCase()] = Number(t.value);
          save();
          progress();
        });
        lab.appendChild(inp);
        lab.appendChild(document.createTextNode(' ' + v));
        fs.appendChild(lab);
      }
      box.appendChild(fs);
      pair.appendChild(box);
    });
    sec.appendChild(pair);
    var note = el('textarea', { placeholder: 'Why? (optional)', 'data-testid': 'note-' + i, 'aria-label': 'note for query ' + (i + 1) });
    note.value = (st.ratings[it.id] && st.ratings[it.id].note) || '';
    note.addEventListener('input', function () { entry(it.id).note = note.value; save(); });
    sec.appendChild(note);
    main.appendChild(sec);
  });
  var name = document.getElementById('reviewer');
  name.value = st.reviewer;
  name.addEventListener('input', function () { st.reviewer = name.value; save(); });
  progress();
  document.getElementById('download').addEventListener('click', function () {
    if (!st.reviewer.trim()) { say('Enter your name first.', 'bad'); name.focus(); return; }
    var missing = D.items.map(function (it, i) { return complete(it.id) ? null : i + 1; }).filter(function (x) { return x !== null; });
    if (missing.length) {
      say('Rate both lists of every query first: ' + missing.length + ' left (query ' + missing.slice(0, 10).join(', ') + (missing.length > 10 ? ', ...' : '') + ').', 'bad');
      document.getElementById('item-' + (missing[0] - 1)).scrollIntoView();
      return;
    }
    var doc = {
      kind: 'rankgate-review-ratings', version: 1, exportId: D.exportId, keyDigest: D.keyDigest,
      reviewer: st.reviewer.trim(), rater: 'human', created: new Date().toISOString(),
      ratings: D.items.map(function (it) {
        var r = st.ratings[it.id];
        var o = { query: it.id, x: r.x, y: r.y };
        if (r.note && r.note.trim()) o.note = r.note.trim();
        return o;
      })
    };
    var blob = new Blob([JSON.stringify(doc, null, 2) + '\\n'], { type: 'application/json' });
    var a = el('a', { href: URL.createObjectURL(blob), download: 'ratings-' + (st.reviewer.trim().replace(/[^A-Za-z0-9_-]+/g, '-') || 'reviewer') + '-' + D.exportId.slice(0, 8) + '.json' });
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 5000);
    say('Downloaded ' + a.getAttribute('download') + ': send it to whoever runs rankgate review import. Your ratings stay in this browser until you clear its storage.', 'good');
  });
})();
`;

export function renderReviewPage(d: ReviewPageData): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
<title>Blind review: ${d.items.length} queries</title>
<style>${CSS}</style>
</head>
<body>
<header>
<h1>Blind review: ${d.items.length} queries</h1>
<div class="row">
<label>Your name <input id="reviewer" autocomplete="name" size="24"></label>
<span id="progress"></span>
<button id="download" type="button">Download ratings (JSON)</button>
<span id="status" role="status"></span>
</div>
<p class="help">For each query, read both lists of results and rate each from 1 (useless for this query) to 5 (everything the
person asking needs, in a good order). Which system made list X or list Y is hidden and drawn at random for each query;
rate the lists on their own. Your ratings are kept in this browser as you go (closing the tab loses nothing); when every
query is rated, download them and send the file back.</p>
</header>
<main></main>
<script type="application/json" id="review-data">${scriptJson(d)}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
