/**
 * The blind review page (`rankgate review export`): one self-contained HTML file, no server, no network (a Content
 * Security Policy forbids every fetch; no font, script or style from elsewhere). It holds the page data of src/review
 * (query texts and the two lists as "X" and "Y": titles, headings and texts, every hit cut by the same rule; a neutral
 * item number, never a query id) and a small script that builds the page from it with textContent (no result text is
 * ever parsed as HTML). A reviewer's name starts that reviewer's own set of ratings: they are kept in localStorage under
 * the export's id and the name normalised as import compares names (src/review/names.ts), so a second reviewer in the
 * same browser starts empty and switching back shows the first one's ratings; a closed tab or a reload loses nothing.
 * The ratings download as the JSON `rankgate review import` reads. Every hit of both lists has the same markup. The
 * sticky header is one compact bar (a narrow phone keeps most of its height for the lists); the instructions scroll
 * away with the page and messages appear in a bar at the bottom. Rendering only: what is shown was decided by src/review.
 */
import type { ReviewPageData } from '../../review/types.ts';
import { KIT_JS, esc, renderPage } from './page-kit.ts';

const CSS = `
.same{color:#4a5262;margin:6px 0 0;font-size:14px;font-weight:600}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:16px}
@media (max-width:760px){.pair{grid-template-columns:1fr}}
.list h3{margin:0 0 6px;font-size:16px}
.list ol{margin:0;padding-left:22px}
.list li{margin:0 0 8px}
.list .t{font-weight:600}
.list .h{color:#4a5262;font-size:13px}
.list .x{font-size:14px;white-space:pre-wrap;overflow-wrap:anywhere}
.empty{color:#6b7385;font-style:italic}
textarea{width:100%;min-height:38px;margin-top:8px;font:inherit}
`;

const SCRIPT = `
(function () {
  'use strict';
${KIT_JS}  var D = JSON.parse(document.getElementById('review-data').textContent);
  var BASE = 'rankgate-review:' + D.exportId;
  var nameEl = document.getElementById('reviewer');
  var store = reviewerStore(BASE, 'ratings');
  var load = store.load;
  function save() { store.save(st); }
  var st = load(store.last());
  function entry(n) { return st.ratings[n] || (st.ratings[n] = {}); }
  function complete(n) { var r = st.ratings[n]; return !!r && r.x >= 1 && r.y >= 1; }
  function progress() {
    var n = D.items.filter(function (it) { return complete(it.item); }).length;
    document.getElementById('progress').textContent = norm(st.reviewer) ? n + ' of ' + D.items.length + ' queries rated' : 'enter your name to start';
    D.items.forEach(function (it) { document.getElementById('item-' + it.item).classList.toggle('done', complete(it.item)); });
    return n;
  }
  /** The page shows the current reviewer's own ratings and notes; nothing can be rated without a name. */
  function paint() {
    var named = !!norm(st.reviewer);
    D.items.forEach(function (it) {
      var r = st.ratings[it.item] || {};
      ['X', 'Y'].forEach(function (side) {
        document.getElementById('fs-' + it.item + '-' + side).disabled = !named;
        for (var v = 1; v <= 5; v++) document.querySelector('[data-testid="rate-' + (it.item - 1) + '-' + side + '-' + v + '"]').checked = r[side.toLowerCase()] === v;
      });
      var note = document.querySelector('[data-testid="note-' + (it.item - 1) + '"]');
      note.disabled = !named;
      note.value = r.note || '';
    });
    progress();
  }
  var main = document.querySelector('main');
  D.items.forEach(function (it) {
    var i = it.item - 1;
    var sec = el('section', { 'class': 'item', id: 'item-' + it.item, 'data-item': String(it.item) });
    sec.appendChild(el('div', { 'class': 'n' }, 'Query ' + it.item + ' of ' + D.items.length));
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
      var fs = el('fieldset', { id: 'fs-' + it.item + '-' + side });
      fs.appendChild(el('legend', {}, 'Rate list ' + side + ' (1 = useless, 5 = excellent)'));
      for (var v = 1; v <= 5; v++) {
        var lab = el('label');
        var inp = el('input', { type: 'radio', name: 'rate-' + i + '-' + side, value: String(v), 'data-testid': 'rate-' + i + '-' + side + '-' + v });
        inp.addEventListener('change', function (ev) {
          var t = ev.target;
          entry(it.item)[t.name.slice(-1).toLowerCase()] = Number(t.value);
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
    var note = el('textarea', { placeholder: 'Why? (optional)', 'data-testid': 'note-' + i, 'aria-label': 'note for query ' + it.item });
    note.addEventListener('input', function () { entry(it.item).note = note.value; save(); });
    sec.appendChild(note);
    main.appendChild(sec);
  });
  nameEl.value = st.reviewer;
  nameEl.addEventListener('input', function () {
    // another name: that reviewer's own ratings (empty for a new name); the same name differently typed: the same set
    if (norm(nameEl.value) !== norm(st.reviewer)) { st = load(nameEl.value); say(''); paint(); }
    st.reviewer = nameEl.value;
    save();
  });
  paint();
  document.getElementById('download').addEventListener('click', function () {
    if (!norm(st.reviewer)) { say('Enter your name first.', 'bad'); nameEl.focus(); return; }
    var missing = D.items.filter(function (it) { return !complete(it.item); }).map(function (it) { return it.item; });
    if (missing.length) {
      say('Rate both lists of every query first: ' + missing.length + ' left (query ' + missing.slice(0, 10).join(', ') + (missing.length > 10 ? ', ...' : '') + ').', 'bad');
      document.getElementById('item-' + missing[0]).scrollIntoView();
      return;
    }
    var doc = {
      kind: 'rankgate-review-ratings', version: D.version, exportId: D.exportId, keyDigest: D.keyDigest,
      reviewer: st.reviewer.trim(), rater: 'human', created: new Date().toISOString(),
      ratings: D.items.map(function (it) {
        var r = st.ratings[it.item];
        var o = { item: it.item, x: r.x, y: r.y };
        if (r.note && r.note.trim()) o.note = r.note.trim();
        return o;
      })
    };
    var name = downloadJson(doc, 'ratings-' + fileSafe(st.reviewer) + '-' + D.exportId.slice(0, 8) + '.json');
    say('Downloaded ' + name + ': send it to whoever runs rankgate review import. Your ratings stay in this browser until you clear its storage.', 'good');
  });
})();
`;

/** The line about identical pairs: the review cannot tell their columns apart. */
function identicalLine(d: ReviewPageData): string {
  const { count, of, skipped } = d.identical;
  if (!count) return '';
  return skipped
    ? `${count} of the ${of} sampled pairs were the same list on both sides and are left out of this page.`
    : `${count} of ${of} pairs are the same list: the review can measure at most ${of - count}. Rate such a pair's two lists alike.`;
}

export function renderReviewPage(d: ReviewPageData): string {
  const same = identicalLine(d);
  return renderPage({
    title: `Blind review: ${d.items.length} queries`,
    bar: 'Blind review',
    downloadLabel: 'Download ratings',
    css: CSS,
    data: d,
    script: SCRIPT,
    intro: `<h1>Blind review: ${d.items.length} queries</h1>
<p class="help">Enter your name, then for each query read both lists of results and rate each from 1 (useless for this
query) to 5 (everything the person asking needs, in a good order). Which system made list X or list Y is hidden and
drawn at random for each query; rate the lists on their own. Every result's text is cut the same way (at most
${d.chars} characters). Your ratings are kept in this browser under your name as you go (closing the tab loses nothing;
another name starts its own ratings); when every query is rated, download them and send the file back.</p>
${same ? `<p class="same" id="identical">${esc(same)}</p>\n` : ''}`,
  });
}
