/**
 * The judgments review queue page (`rankgate judge review export`): the blind review's frame and script kit
 * (src/report/html/page-kit.ts: no network, localStorage per export and reviewer, the compact sticky header, download),
 * listing, query by query, the documents whose labels nobody reviewed. A person grades each 0-3; the grade a model or a
 * log gave is not on the page (blind assessment: src/review/queue.ts). An ungraded document stays pending; the
 * download holds the graded ones, each with the time it was graded. Rendering only.
 */
import { GRADE_NAMES, type QueuePageData } from '../../review/queue.ts';
import { KIT_JS, renderPage } from './page-kit.ts';

const CSS = `
section.query{margin:18px 0 6px}
section.query>.q{font-size:18px}
.doc .t{font-weight:600}
.doc .h{color:#4a5262;font-size:13px}
.doc .x{font-size:14px;white-space:pre-wrap;overflow-wrap:anywhere;margin-top:4px}
.doc fieldset label{display:inline-block;margin:2px 12px 2px 0}
.scale{color:#4a5262;font-size:14px;margin:6px 0 0}
`;

const SCRIPT = `
(function () {
  'use strict';
${KIT_JS}  var D = JSON.parse(document.getElementById('review-data').textContent);
  var NAMES = ${JSON.stringify(GRADE_NAMES)};
  var nameEl = document.getElementById('reviewer');
  var store = reviewerStore('rankgate-judgments-queue:' + D.exportId, 'grades');
  var st = store.load(store.last());
  function decided(it) { var g = st.grades[it.item]; return !!g && g.grade >= 0 && g.grade <= 3; }
  function progress() {
    var n = D.items.filter(decided).length;
    document.getElementById('progress').textContent = norm(st.reviewer) ? n + ' of ' + D.items.length + ' documents graded' : 'enter your name to start';
    D.items.forEach(function (it) { document.getElementById('item-' + it.item).classList.toggle('done', decided(it)); });
    return n;
  }
  function paint() {
    var named = !!norm(st.reviewer);
    D.items.forEach(function (it) {
      var g = st.grades[it.item];
      document.getElementById('fs-' + it.item).disabled = !named;
      for (var v = 0; v <= 3; v++) document.querySelector('[data-testid="grade-' + it.item + '-' + v + '"]').checked = !!g && g.grade === v;
    });
    progress();
  }
  var main = document.querySelector('main');
  var group = null;
  var last = null;
  var queries = 0;
  D.items.forEach(function (it) {
    if (it.query !== last) {
      last = it.query;
      queries++;
      group = el('section', { 'class': 'query' });
      group.appendChild(el('div', { 'class': 'n' }, 'Query ' + queries));
      group.appendChild(el('p', { 'class': 'q' }, it.queryText));
      main.appendChild(group);
    }
    var sec = el('section', { 'class': 'item doc', id: 'item-' + it.item, 'data-item': String(it.item) });
    sec.appendChild(el('div', { 'class': 't' }, it.title));
    if (it.heading) sec.appendChild(el('div', { 'class': 'h' }, it.heading));
    sec.appendChild(el('div', { 'class': 'x' }, it.text));
    var fs = el('fieldset', { id: 'fs-' + it.item });
    fs.appendChild(el('legend', {}, 'How relevant is this to the query?'));
    for (var v = 0; v <= 3; v++) {
      var lab = el('label');
      var inp = el('input', { type: 'radio', name: 'grade-' + it.item, value: String(v), 'data-testid': 'grade-' + it.item + '-' + v });
      inp.addEventListener('change', function (ev) {
        st.grades[it.item] = { grade: Number(ev.target.value), time: new Date().toISOString() };
        store.save(st);
        progress();
      });
      lab.appendChild(inp);
      lab.appendChild(document.createTextNode(' ' + v + ' ' + NAMES[v]));
      fs.appendChild(lab);
    }
    sec.appendChild(fs);
    group.appendChild(sec);
  });
  nameEl.value = st.reviewer;
  nameEl.addEventListener('input', function () {
    if (norm(nameEl.value) !== norm(st.reviewer)) { st = store.load(nameEl.value); say(''); paint(); }
    st.reviewer = nameEl.value;
    store.save(st);
  });
  paint();
  document.getElementById('download').addEventListener('click', function () {
    if (!norm(st.reviewer)) { say('Enter your name first.', 'bad'); nameEl.focus(); return; }
    var done = D.items.filter(decided);
    if (!done.length) { say('Grade at least one document first.', 'bad'); return; }
    var doc = {
      kind: 'rankgate-judgments-decisions', version: D.version, exportId: D.exportId,
      reviewer: st.reviewer.trim(), created: new Date().toISOString(),
      decisions: done.map(function (it) { var g = st.grades[it.item]; return { item: it.item, query: it.query, doc: it.doc, grade: g.grade, time: g.time }; })
    };
    var name = downloadJson(doc, 'decisions-' + fileSafe(st.reviewer) + '-' + D.exportId.slice(0, 8) + '.json');
    say('Downloaded ' + name + ' (' + done.length + ' of ' + D.items.length + ' graded): send it to whoever runs rankgate judge review import. Your grades stay in this browser; the rest can be graded later.', 'good');
  });
})();
`;

export function renderQueuePage(d: QueuePageData): string {
  const n = d.items.length;
  const queries = new Set(d.items.map((i) => i.query)).size;
  return renderPage({
    title: `Relevance review: ${n} documents`,
    bar: 'Relevance review',
    downloadLabel: 'Download grades',
    css: CSS,
    data: d,
    script: SCRIPT,
    intro: `<h1>Relevance review: ${n} documents for ${queries} queries</h1>
<p class="help">Enter your name, then read each query and grade each document under it by how well it serves the person
who asked. The grade anyone or anything gave it before is not shown: judge the text on its own. Texts are cut at
${d.chars} characters. Grade what you can; leave a document ungraded when you cannot tell. Your grades are kept in this
browser under your name as you go (closing the tab loses nothing); download them when you stop and send the file back.</p>
<p class="scale">3 direct answer · 2 strong supporting context · 1 related · 0 irrelevant</p>
`,
  });
}
