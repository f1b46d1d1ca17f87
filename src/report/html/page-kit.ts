/**
 * What rankgate's pages for people share (the blind review, src/report/html/review.ts; the judgments review queue,
 * src/report/html/queue.ts): one self-contained HTML file under a Content Security Policy that forbids every fetch, the
 * page data as JSON in a script tag, a compact sticky header (name, progress, download) that leaves a 390 px phone most
 * of its height, a message bar at the bottom, and a script kit: reviewer names normalised as import compares them
 * (src/review/names.ts), each reviewer's own state in localStorage under the export's id and the name, elements built
 * with textContent only (no text of a result is ever parsed as HTML), and the download of a JSON document.
 */

/** JSON safe inside <script>. */
export function scriptJson(x: unknown): string {
  return JSON.stringify(x).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

export const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export const CSP = `default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'`;

/** The frame: body, the sticky header bar, the main column, the intro, the message bar, the narrow-screen layout. */
export const BASE_CSS = `
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#fff;border-bottom:1px solid #dde1e7;padding:8px 20px;position:sticky;top:0;z-index:2}
header .row{display:flex;flex-wrap:wrap;gap:6px 14px;align-items:center}
header .title{font-weight:700;font-size:16px}
header label{white-space:nowrap}
#reviewer{width:12em;font:inherit}
#progress{color:#4a5262;font-size:14px}
main{max-width:1400px;margin:0 auto;padding:12px 20px 80px}
.intro h1{font-size:20px;margin:8px 0 6px}
.help{color:#4a5262;margin:6px 0 0;font-size:14px}
section.item{background:#fff;border:1px solid #dde1e7;border-radius:8px;margin:16px 0;padding:12px 16px}
section.item.done{border-left:4px solid #2e7d32}
.q{font-size:17px;font-weight:600;margin:4px 0 10px}
.n{color:#6b7385;font-size:13px}
fieldset{border:1px solid #dde1e7;border-radius:6px;margin:8px 0 0;padding:6px 10px}
fieldset:disabled{opacity:.55}
fieldset label{margin-right:10px;white-space:nowrap}
#status{position:fixed;left:0;right:0;bottom:0;z-index:3;margin:0;padding:8px 20px;background:#fff;border-top:1px solid #dde1e7;font-weight:600;font-size:14px}
#status:empty{display:none}
#status.bad{color:#b00020}
#status.good{color:#2e7d32}
button{font:inherit;padding:4px 12px}
@media (max-width:600px){header{padding:6px 10px}header .title{display:none}#reviewer{width:9.5em}main{padding:8px 10px 80px}#progress{font-size:13px}}
`;

/**
 * The script kit, inlined at the top of a page's script (inside its own function scope): `norm(name)`, `el(tag, attrs,
 * text)`, `say(text, cls)`, `reviewerStore(base, field)` -> {load(name), save(state)} keeping each reviewer's state
 * `{reviewer, [field]: {...}}` under `<base>:reviewer:<norm(name)>` (and the last name under `<base>:last`), and
 * `downloadJson(doc, filename)`.
 */
export const KIT_JS = `
  var statusEl = document.getElementById('status');
  // a reviewer's name as import compares it (src/review/names.ts): NFKC, invisible characters removed, case folded, spaces collapsed
  function norm(s) {
    return String(s || '').normalize('NFKC').replace(/[\\p{Cf}\\p{Cc}\\p{Default_Ignorable_Code_Point}]/gu, '')
      .toUpperCase().toLowerCase().normalize('NFKC').replace(/\\s+/g, ' ').trim();
  }
  function say(text, cls) { statusEl.textContent = text; statusEl.className = cls || ''; }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function reviewerStore(base, field) {
    function storeKey(name) { return base + ':reviewer:' + norm(name); }
    return {
      last: function () { return localStorage.getItem(base + ':last') || ''; },
      load: function (name) {
        var empty = { reviewer: name };
        empty[field] = {};
        if (!norm(name)) return empty;
        try {
          var s = JSON.parse(localStorage.getItem(storeKey(name)) || 'null');
          if (s && typeof s === 'object' && s[field] && typeof s[field] === 'object') { var o = { reviewer: name }; o[field] = s[field]; return o; }
        } catch (e) {}
        return empty;
      },
      save: function (st) {
        if (!norm(st.reviewer)) return;
        try {
          // a name typed letter by letter leaves no empty sets behind: a set is kept once it holds something
          if (Object.keys(st[field]).length) localStorage.setItem(storeKey(st.reviewer), JSON.stringify(st));
          localStorage.setItem(base + ':last', st.reviewer);
        } catch (e) { say('Could not keep your work in this browser (' + e.message + '): download it before closing the page.', 'bad'); }
      }
    };
  }
  function downloadJson(doc, filename) {
    var blob = new Blob([JSON.stringify(doc, null, 2) + '\\n'], { type: 'application/json' });
    var a = el('a', { href: URL.createObjectURL(blob), download: filename });
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 5000);
    return filename;
  }
  function fileSafe(s) { return s.trim().replace(/[^A-Za-z0-9_-]+/g, '-') || 'reviewer'; }
`;

export interface PageShell {
  title: string;
  /** the header bar's short title */
  bar: string;
  /** HTML of the intro (already escaped) */
  intro: string;
  downloadLabel: string;
  css: string;
  data: unknown;
  script: string;
}

/** The whole page: head (CSP, viewport), the header bar, main with the intro, the message bar, the data, the script. */
export function renderPage(p: PageShell): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<title>${esc(p.title)}</title>
<style>${BASE_CSS}${p.css}</style>
</head>
<body>
<header>
<div class="row">
<span class="title">${esc(p.bar)}</span>
<label>Your name <input id="reviewer" autocomplete="name"></label>
<span id="progress"></span>
<button id="download" type="button">${esc(p.downloadLabel)}</button>
</div>
</header>
<main>
<div class="intro">
${p.intro}</div>
</main>
<p id="status" role="status"></p>
<script type="application/json" id="review-data">${scriptJson(p.data)}</script>
<script>${p.script}</script>
</body>
</html>
`;
}
