"""The documentation site: built offline, every page loaded in headless Chromium and checked.

Every page is loaded once in one headless Chromium, at a phone's width (390 pixels), then widened
to a desktop's (1280), and checked at each: the pages are the notebooks' (titled as their
notebooks) and the API page, and nothing else; links resolve; every Markdown table became a
table; no page scrolls sideways; no code block scrolls sideways where it could wrap; no In [ ]: /
Out[ ]: prompts; code uses a phone's whole width; a figure shrunk to fit opens at full size;
nowhere "Call self as a function."; the sidebar groups the pages by family. Each check is shown
to catch a made-up bad page.
Outside CI, one screenshot per page and width goes to _build/screenshots/; wide_figures.txt there
lists the figures wider than 1.5 times the column, which a reader must open to read."""

import ast
import base64
import json
import os
import re
import select
from collections import Counter
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from urllib.parse import urlparse, unquote
import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / 'tools'))
import docs  # noqa: E402

CHROMIUM = shutil.which('chromium') or shutil.which('chromium-browser')
FLAGS = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--disable-quic',
    # Pages of one site (file://) share a renderer process, and a page left is not kept alive for
    # going back: the page loads took about 12% less CPU time (2-core AMD EPYC).
    '--disable-site-isolation-trials',
    '--disable-features=IsolateOrigins,site-per-process,BackForwardCache',
    '--process-per-site',
]
WIDTHS = {'desktop': 1280, 'phone': 390}
SHOTS = ROOT / '_build' / 'screenshots'
MAX_SHOT = 2_000  # pixels of a page's height in its screenshot: its first two screens or so
# Screenshots are for a person to look at. CI keeps no files, so it takes none: the site's 144
# (72 pages, 2 widths) cost Chromium about 95 CPU-s on a 2-core AMD EPYC.
SHOOT = os.environ.get('CI') != 'true'


# nbdev names a page after its notebook without the number (`25_` or `25a_`), titles it by its
# `# Title` cell.
def notebook_pages():
    "{page: title} of the notebooks in nbs/."
    out = {}
    for p in sorted((ROOT / 'nbs').glob('*.ipynb')):
        heads = [
            s.splitlines()[0]
            for c in json.loads(p.read_text())['cells']
            if c['cell_type'] == 'markdown'
            for s in [''.join(c['source']).lstrip()]
            if s.startswith('# ')
        ]
        assert heads, f'{p.name} has no `# Title` cell'
        out[re.sub(r'^\d+[a-zA-Z0-9]*_', '', p.stem)] = re.sub(r'[*`]', '', heads[0][2:]).strip()
    return out


class Page(HTMLParser):
    "Links, element ids and h1 texts of a rendered page."

    def __init__(self, html):
        super().__init__()
        self.links, self.ids, self.h1, self._in_h1 = [], set(), [], False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if 'id' in a:
            self.ids.add(a['id'])
        if 'name' in a and tag == 'a':
            self.ids.add(a['name'])
        if tag == 'a' and a.get('href'):
            self.links.append(a['href'])
        if tag in ('img', 'script') and a.get('src'):
            self.links.append(a['src'])
        if tag == 'link' and a.get('href'):
            self.links.append(a['href'])
        if tag == 'h1':
            self._in_h1 = True
            self.h1.append('')

    def handle_endtag(self, tag):
        if tag == 'h1':
            self._in_h1 = False

    def handle_data(self, d):
        if self._in_h1:
            self.h1[-1] += d


# mkdocs-material's sidebar: a `nav.md-nav--primary` whose sections are `nav`s of level 1, each
# labelled by the `label` its `aria-labelledby` names.
class Sidebar(HTMLParser):
    "The sidebar of a rendered page: [(its group's label, or None at the top, the page's link)]."

    def __init__(self, html):
        super().__init__()
        self.items, self.labels, self.groups = [], {}, []
        self.navs, self.label = 0, None  # <nav>s open inside the sidebar; the label being read
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'nav' and (self.navs or 'md-nav--primary' in (a.get('class') or '')):
            self.navs += 1
            self.groups.append(a.get('aria-labelledby') if a.get('data-md-level') == '1' else None)
        elif self.navs and tag == 'label' and a.get('id'):
            self.label = a['id']
            self.labels[self.label] = ''
        elif self.navs and tag == 'a' and 'md-nav__link' in (a.get('class') or ''):
            group = next((g for g in reversed(self.groups) if g), None)
            if not a['href'].startswith('#'):  # not the table of contents of the page
                self.items.append((group, a['href']))

    def handle_endtag(self, tag):
        if tag == 'label':
            self.label = None
        elif tag == 'nav' and self.navs:
            self.navs -= 1
            self.groups.pop()

    def handle_data(self, d):
        if self.label:
            self.labels[self.label] += d

    def grouped(self):
        "[(group label or None, [page links])], in the sidebar's order."
        out = []
        for group, href in self.items:
            label = ' '.join(self.labels[group].split()) if group else None
            if not out or out[-1][0] != label or label is None:
                out.append((label, []))
            out[-1][1].append(href)
        return out


# What a page shows once loaded and its scripts have run (KaTeX at DOMContentLoaded, mkdocs-material
# and figures.js at load).
PROBE = r"""(async () => {
  await new Promise(r => setTimeout(r, 100));
  const root = document.documentElement, vw = root.clientWidth;
  const visible = e =>
    e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
  const label = e => ((e && e.textContent) || '').trim().replace(/\s+/g, ' ').slice(0, 60);
  const prompts = [...document.querySelectorAll('[class*="Prompt"]')].filter(visible).map(label);
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n; (n = walk.nextNode());)
    if (/^(In|Out)\s*\[[\d\s]*\]:?$/.test(n.textContent.trim()) && visible(n.parentElement))
      prompts.push(n.textContent.trim());
  // code that scrolls sideways although each of its words would fit: it does not wrap
  const stiff = [];
  for (const p of document.querySelectorAll('pre')) {
    if (!visible(p) || p.scrollWidth <= p.clientWidth + 1) continue;
    const s = getComputedStyle(p);
    const room = p.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
    const words = new Set(p.textContent.split(/\s+/)), ruler = document.createElement('span');
    ruler.style.whiteSpace = 'pre'; (p.querySelector('code') || p).appendChild(ruler);
    let widest = 0;
    for (const w of words) {
      ruler.textContent = w;
      widest = Math.max(widest, ruler.getBoundingClientRect().width);
    }
    ruler.remove();
    if (widest <= room + 1) stiff.push(label(p));
  }
  const boxes = '.jupyter-wrapper .jp-InputArea-editor, '
    + '.jupyter-wrapper .jp-RenderedMarkdown > pre, .md-content__inner > pre';
  const narrow = [...document.querySelectorAll(boxes)].filter(visible)
    .filter(b => {
      const r = b.getBoundingClientRect();
      if (r.left > 1 || r.right < vw - 1) return true;
      // or an ancestor clips it to less
      for (let a = b.parentElement; a; a = a.parentElement) {
        const ra = a.getBoundingClientRect();
        if (getComputedStyle(a).overflowX !== 'visible' && (ra.left > 1 || ra.right < vw - 1))
          return true;
      }
      return false;
    })
    .map(label);
  const heads = [...document.querySelectorAll('.md-content h1, .md-content h2, .md-content h3')];
  const imgs = [...document.querySelectorAll('.md-content img')].filter(visible);
  const shrunk = imgs.filter(i => i.naturalWidth > i.clientWidth + 1);
  const figures = imgs.map(i => [
    label(heads.filter(h => h.compareDocumentPosition(i) & Node.DOCUMENT_POSITION_FOLLOWING).pop()),
    i.src.startsWith('data:') ? '' : i.getAttribute('src'), i.naturalWidth, i.naturalHeight]);
  // each opened at full size: it scrolls in its own box, not the page
  shrunk.forEach(i => i.click());
  const zoomed = root.scrollWidth;  // (reading it lays the page out again)
  shrunk.forEach(i => i.click());
  return {href: location.href, page: [Math.max(root.scrollWidth, zoomed), vw],
          prompts, stiff, narrow,
          unzoomable: shrunk.filter(i => !i.classList.contains('zoomable'))
                            .map(i => i.getAttribute('src').slice(0, 60)),
          figures, column: (document.querySelector('.md-content__inner') || root).clientWidth,
          tables: document.querySelectorAll('table').length,
          call_self: root.outerHTML.includes('Call self as a function.'),
          height: root.scrollHeight};
})()"""

CHECKS = {
    'the page scrolls sideways': lambda r: (
        [f'{r["page"][0]} px wide in a {r["page"][1]} px window']
        if r['page'][0] > r['page'][1]
        else []
    ),
    'In/Out prompts are shown': lambda r: r['prompts'],
    'code scrolls sideways where it could wrap': lambda r: r['stiff'],
    "code does not use a phone's whole width": lambda r: r['narrow'] if r['width'] < 600 else [],
    'a figure shrunk to fit cannot be opened at full size': lambda r: r['unzoomable'],
    'a docstring reads "Call self as a function."': lambda r: (
        ['in the page'] if r['call_self'] else []
    ),
}


def problems(r):
    "{check: what fails it} for a probed page."
    return {check: found for check, f in CHECKS.items() if (found := f(r))}


# Markdown tables: a header row then a delimiter row
# (`|---|:-:|`), outside fenced code; HTML tables: `<table`.
DELIMITER = re.compile(r'^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$')


def tables_in_markdown(md):
    md = re.sub(r'^(```|~~~).*?^\1', '', md, flags=re.M | re.S)
    lines = md.splitlines()
    return sum(
        1 for a, b in zip(lines, lines[1:]) if '|' in a and '-' in b and DELIMITER.match(b)
    ) + md.count('<table')


# A notebook asks for tables in its Markdown cells, its Markdown outputs and its HTML outputs.
def tables_in_source(nb):
    "The tables a processed notebook asks for."
    n = 0
    for c in nb['cells']:
        if c['cell_type'] == 'markdown':
            n += tables_in_markdown(''.join(c['source']))
        for o in c.get('outputs', []):
            d = o.get('data', {})
            if 'text/markdown' in d:
                n += tables_in_markdown(''.join(d['text/markdown']))
            elif 'text/html' in d:
                n += ''.join(d['text/html']).count('<table')
    return n


# Chromium shows or hides a phone's scrollbars (Emulation.setScrollbarsHidden) in a page loaded
# after, or once the page's scrollbars are made again: here, by taking them away for a moment. Then
# two frames drawn: the page's resize listeners and media queries run at its next frame
# (mkdocs-material's and figures.js), and what they change is drawn at the one after. (A box that
# scrolls sideways keeps the scrollbar it had at a phone's width: none, 15 pixels of the page's
# height that no check reads. A page loaded in a tab in the background has drawn no frame: its
# sidebars, which mkdocs-material fits to the window at a frame, reach as far down as their links.)
SETTLE = """(async () => {
  const root = document.documentElement, style = root.getAttribute('style');
  root.style.overflow = 'hidden';
  root.offsetWidth;  // (reading it lays the page out without scrollbars)
  if (style === null) root.removeAttribute('style'); else root.setAttribute('style', style);
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
})()"""


# Every page loads in it, without a browser process each.
class Browser:
    "One headless Chromium driven over its DevTools pipe."

    def __init__(self, profile):
        to_chrome, self.w = os.pipe()
        self.r, from_chrome = os.pipe()

        def fds():  # Chromium reads commands on fd 3 and writes replies and events on fd 4
            a, b = os.dup(to_chrome), os.dup(from_chrome)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.p = subprocess.Popen(
            [
                CHROMIUM,
                *FLAGS,
                f'--user-data-dir={profile}',
                '--remote-debugging-pipe',
                'about:blank',
            ],
            preexec_fn=fds,
            close_fds=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome)
        os.close(from_chrome)
        self.buf, self.n, self.loads, self.width = b'', 0, [], {}

    def _next(self):
        "The next message from Chromium."
        while b'\0' not in self.buf:
            assert select.select([self.r], [], [], 120)[0], 'Chromium sent nothing for 120 s'
            chunk = os.read(self.r, 1 << 20)
            assert chunk, 'Chromium closed its DevTools pipe'
            self.buf += chunk
        msg, self.buf = self.buf.split(b'\0', 1)
        return json.loads(msg)

    # The pages' load events that arrive meanwhile are kept.
    def send(self, method, session=None, **params):
        "Send one DevTools command and return its result."
        self.n += 1
        os.write(
            self.w,
            json.dumps(
                dict(id=self.n, method=method, params=params)
                | ({'sessionId': session} if session else {})
            ).encode()
            + b'\0',
        )
        while (m := self._next()).get('id') != self.n:
            if m.get('method') == 'Page.loadEventFired':
                self.loads.append(m['sessionId'])
        assert 'error' not in m, (method, params, m['error'])
        return m['result']

    def loaded(self):
        "The session of the next page that has fired its load event."
        while not self.loads:
            m = self._next()
            if m.get('method') == 'Page.loadEventFired':
                self.loads.append(m['sessionId'])
        return self.loads.pop(0)

    # A phone's scrollbars take no room of the tab's width.
    def resize(self, session, width):
        "Make the tab of `session` `width` pixels wide, as a window of that width."
        self.send(
            'Emulation.setDeviceMetricsOverride',
            session,
            width=width,
            height=900,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.send('Emulation.setScrollbarsHidden', session, hidden=width < 600)
        self.width[session] = width

    def tab(self, width):
        "A new tab `width` pixels wide, its page events on; its session and target ids."
        target = self.send('Target.createTarget', url='about:blank')['targetId']
        session = self.send('Target.attachToTarget', targetId=target, flatten=True)['sessionId']
        self.resize(session, width)
        self.send('Page.enable', session)
        return session, target

    def go(self, session, url):
        "Start loading `url` in the tab of `session`."
        r = self.send('Page.navigate', session, url=url)
        assert 'errorText' not in r, (url, r['errorText'])

    def probe(self, session, url, width, shot):
        "What PROBE finds in the loaded page of `session`, `width` pixels wide; its screenshot."
        r = self.send(
            'Runtime.evaluate', session, awaitPromise=True, returnByValue=True, expression=PROBE
        )
        assert 'exceptionDetails' not in r, (url, r['exceptionDetails'])
        r = r['result']['value']
        assert r['href'] == url, (r['href'], url)
        if width == WIDTHS['desktop']:
            r['html'] = self.send(
                'Runtime.evaluate',
                session,
                returnByValue=True,
                expression='document.documentElement.outerHTML',
            )['result']['value']
        if shot:
            clip = dict(x=0, y=0, width=width, height=min(r['height'], MAX_SHOT), scale=1)
            self.send('Page.bringToFront', session)  # a tab in the background paints nothing
            data = self.send(
                'Page.captureScreenshot',
                session,
                format='jpeg',
                quality=70,
                clip=clip,
                captureBeyondViewport=True,
            )['data']
            shot.write_bytes(base64.b64decode(data))
        return r | {'width': width}

    # Resizing a loaded page takes the CPU time of a frame or two, loading it again that of a load:
    # 6 pages seen at both widths took 13 CPU-s loaded once each, 21 loaded at each width; the whole
    # file took 288 CPU-s instead of 306 (2-core AMD EPYC shared with other work: one run each).
    def reshape(self, session, width):
        "Resize the loaded page of `session` to `width` and wait for it to settle there."
        self.send('Page.bringToFront', session)  # a tab in the background draws no frames
        self.resize(session, width)
        self.send('Runtime.evaluate', session, awaitPromise=True, expression=SETTLE)

    # {(url, width): what PROBE found, plus the page's HTML at desktop width}; a screenshot of the
    # page, down to MAX_SHOT pixels, saved as `shot` if given. Each page loads once, at the
    # narrowest of its widths, then is widened to the others in turn (see SETTLE). Each tab loads
    # page after page: a new tab is a new renderer process, 0.5 CPU-s each.
    def visit(self, jobs, k=2):
        "What PROBE found for each `(url, width, shot)` of `jobs`, `k` tabs loading at once."
        pages = {}
        for url, width, shot in sorted(jobs, key=lambda job: job[1]):
            pages.setdefault(url, []).append((width, shot))
        out, todo, loading, free, made = {}, list(pages), {}, [], []
        while todo or loading:
            if todo and (free or len(made) < k):
                url = todo.pop(0)
                narrowest = pages[url][0][0]
                if not free:
                    made.append(self.tab(narrowest))
                    free.append(made[-1][0])
                session = free.pop()
                if self.width[session] != narrowest:
                    self.resize(session, narrowest)
                self.go(session, url)
                loading[session] = url
                continue
            session = self.loaded()
            url = loading.pop(session)
            for i, (width, shot) in enumerate(pages[url]):
                if i:
                    self.reshape(session, width)
                out[url, width] = self.probe(session, url, width, shot)
            free.append(session)
        for _, target in made:
            self.send('Target.closeTarget', targetId=target)
        return out

    def close(self):
        self.send('Browser.close')
        self.p.wait(timeout=60)


# The browser is for the made-up bad pages.
@pytest.fixture(scope='module')
def site(tmp_path_factory):
    "The site, built once; each page as headless Chromium showed it at each width; the browser."
    if not CHROMIUM:
        pytest.fail('chromium is not installed: apt-get install chromium (.ci/run does)')
    subprocess.run([sys.executable, str(ROOT / 'tools' / 'docs.py'), 'site'], cwd=ROOT, check=True)
    docs = ROOT / 'docs'
    pages = sorted(p for p in docs.glob('*.html') if p.name != '404.html')
    if SHOTS.exists():
        shutil.rmtree(SHOTS)
    SHOTS.mkdir(parents=True)
    browser = Browser(tmp_path_factory.mktemp('chromium'))
    seen = browser.visit(
        [
            (p.as_uri(), w, SHOTS / f'{p.stem}-{name}.jpg' if SHOOT else None)
            for p in pages
            for name, w in WIDTHS.items()
        ]
    )
    shown = {p.name: {name: seen[p.as_uri(), w] for name, w in WIDTHS.items()} for p in pages}
    yield docs, shown, browser
    browser.close()


def test_only_our_pages_each_titled_as_its_notebook(site):
    docs, shown, _ = site
    expected = notebook_pages()
    assert {str(p.relative_to(docs)) for p in docs.rglob('*.html')} == {
        f'{page}.html' for page in expected
    } | {'api.html', '404.html'}
    for page, title in expected.items():
        h1 = [
            re.sub(r'\s+', ' ', t).strip(' ¶')
            for t in Page(shown[f'{page}.html']['desktop']['html']).h1
        ]
        assert title in h1, (page, h1)


def test_links_resolve(site):
    docs, shown, _ = site
    doms = {name: Page(r['desktop']['html']) for name, r in shown.items()}
    broken = []
    for name, page in doms.items():
        for href in page.links:
            u = urlparse(href)
            if u.scheme or href.startswith('//'):
                continue  # external
            target = (docs / name).parent / unquote(u.path) if u.path else docs / name
            if target.is_dir():
                target = target / 'index.html'
            if not target.exists():
                broken.append(f'{name}: {href} (no such file)')
                continue
            if u.fragment and target.suffix == '.html':
                ids = doms[target.name].ids if target.name in doms else Page(target.read_text()).ids
                if u.fragment not in ids:
                    broken.append(f'{name}: {href} (no such anchor)')
    assert not broken, '\n'.join(broken)


def test_every_markdown_table_is_rendered(site, tmp_path):
    docs, shown, browser = site
    # The check: a row whose code span holds a bare `|` has a column too many, and the renderer
    # drops the whole table.
    bad = tmp_path / 'bad.ipynb'
    bad.write_text(
        json.dumps(
            {
                'cells': [
                    {
                        'cell_type': 'markdown',
                        'id': 'bad',
                        'metadata': {},
                        'source': (
                            '| target | what |\n|---|---|\n| `make slow` | runs `#| slow` cells |'
                        ),
                    }
                ],
                'metadata': {},
                'nbformat': 4,
                'nbformat_minor': 5,
            }
        )
    )
    from mkdocs_jupyter.convert import nb2html

    page = tmp_path / 'bad.html'
    page.write_text(nb2html(str(bad)))
    r = browser.visit([(page.as_uri(), WIDTHS['desktop'], None)])[page.as_uri(), WIDTHS['desktop']]
    assert (tables_in_source(json.loads(bad.read_text())), r['tables']) == (1, 0)
    src = ROOT / '_build' / 'src'
    missing = {
        name: (want, got)
        for name, r in shown.items()
        if (s := src / name.replace('.html', '.ipynb')).exists()
        and (want := tables_in_source(json.loads(s.read_text()))) != (got := r['desktop']['tables'])
    }
    assert not missing, f'(tables in the source, tables in the page): {missing}'


def test_math_is_rendered(site):
    _, shown, _ = site
    assert (
        'class="katex"' in shown['act.model.html']['desktop']['html']
    )  # "The halting arithmetic": the paper's equations


def test_hidden_cells_and_directives_are_not_shown(site):
    docs, shown, _ = site
    for name in shown:
        html = (docs / name).read_text()
        assert '#| export' not in html and '#| hide' not in html and 'nbdev_export()' not in html, (
            name
        )
        assert 'show_doc(' not in html, name  # echo: false cells show their output only


# Each check is tried at both widths where it applies: the bad page is loaded at a phone's width,
# then widened, as the site's pages are.
def test_checks_catch_a_bad_page(site, tmp_path):
    "Each check of `CHECKS` finds what it looks for on a page made to have it."
    docs, _, browser = site
    img = next(p for p in (docs / 'results').rglob('*.png'))
    bad = tmp_path / 'bad.html'
    bad.write_text(f'''<!doctype html><html>
      <head><meta name="viewport" content="width=device-width"></head>
      <body><div class="md-content">
      <article class="md-content__inner md-typeset" style="margin: 0 16px">
      <div class="jupyter-wrapper">
        <div class="jp-Cell"><div class="jp-InputPrompt">In [1]:</div>
          <div class="jp-InputArea-editor"><pre>x = 1</pre></div></div>
        <pre style="white-space: pre">{'x = 1  ' * 300}</pre>
        <img src="{img.as_uri()}" style="max-width: 100px">
        <div style="width: 2000px">wide</div><p>Call self as a function.</p>
      </div></article></div></body></html>''')
    seen = browser.visit([(bad.as_uri(), w, None) for w in WIDTHS.values()])
    assert set(problems(seen[bad.as_uri(), WIDTHS['phone']])) == set(CHECKS)
    assert set(problems(seen[bad.as_uri(), WIDTHS['desktop']])) == set(CHECKS) - {
        "code does not use a phone's whole width"
    }
    # A code box that reaches both edges of a phone's
    # screen but sits in a box that clips it to the column.
    clipped = tmp_path / 'clipped.html'
    clipped.write_text("""<!doctype html><html><body style="margin: 0">
      <article style="margin: 0 16px"><div class="jupyter-wrapper">
      <div style="overflow: auto">
        <div class="jp-InputArea-editor" style="margin: 0 -16px"><pre>x = 1</pre></div></div>
      </div></article></body></html>""")
    seen = browser.visit([(clipped.as_uri(), WIDTHS['phone'], None)])
    assert set(problems(seen[clipped.as_uri(), WIDTHS['phone']])) == {
        "code does not use a phone's whole width"
    }


def test_every_page_at_both_widths(site):
    _, shown, _ = site
    failed = {
        f'{name} at {WIDTHS[width]} px': p
        for name, rs in shown.items()
        for width, r in rs.items()
        if (p := problems(r))
    }
    assert not failed, json.dumps(failed, indent=1)


# The figures wider than 1.5 times the column are listed for their notebooks' owners.
def test_screenshots_and_wide_figures(site):
    "A screenshot of every page at each width, and a list of the figures too wide for the column."
    _, shown, _ = site
    for name in shown if SHOOT else ():
        for width in WIDTHS:
            assert (SHOTS / f'{name.removesuffix(".html")}-{width}.jpg').stat().st_size > 5_000, (
                name,
                width,
            )
    wide = [
        f'{name}: {w} x {h} px ({w / r["column"]:.1f} '
        f"times the {r['column']} px column), under '{head}'" + (f' ({src})' if src else '')
        for name, rs in shown.items()
        for r in [rs['desktop']]
        for head, src, w, h in r['figures']
        if w > 1.5 * r['column']
    ]
    (SHOTS / 'wide_figures.txt').write_text(''.join(line + '\n' for line in wide))
    print('\n'.join(['figures wider than 1.5 times the column:'] + wide))


# The families in the order of the packages (issue 59): foundations (core, errors, train, runs),
# examples, ACT, RASP, looped transformers, Sudoku, recurrence, the reports and the atlas, the CLI.
FAMILY_ORDER = [
    'Foundations',
    'Examples',
    'ACT',
    'RASP',
    'Looped transformers',
    'Sudoku',
    'Recurrence',
    'Reports and the atlas',
    'Command line',
]
MAIN_FIRST = {
    'ACT': 'act.model',
    'RASP': 'rasp.ops',
    'Looped transformers': 'looped.model',
    'Sudoku': 'sudoku.rrn',
    'Recurrence': 'recurrence.model',
    'Reports and the atlas': 'report.atlas',
}


def check_groups(grouped, pages):
    "What is wrong with a sidebar's `grouped` links, given the site's `pages` (names)."
    wrong = []
    groups = [label for label, _ in grouped if label]
    if groups != FAMILY_ORDER:
        wrong.append(f'groups {groups}, not {FAMILY_ORDER}')
    seen = [href.removesuffix('.html') for _, hrefs in grouped for href in hrefs]
    if sorted(seen) != sorted(pages):
        odd = (Counter(seen) - Counter(pages)) + (Counter(pages) - Counter(seen))
        wrong.append(f'pages not once each: {sorted(odd)}')
    for label, hrefs in grouped:
        names = [h.removesuffix('.html') for h in hrefs]
        if label is None:
            wrong += [f'{n} is not in its family' for n in names if docs.package(n)]
            continue
        wrong += [
            f'{n} is under {label}'
            for n in names
            if docs.FAMILIES.get(n.split('.')[0], n.split('.')[0]) != label
        ]
        if label in MAIN_FIRST and names[0] != MAIN_FIRST[label]:
            wrong.append(f'{label} opens with {names[0]}, not {MAIN_FIRST[label]}')
        tried = [n.split('.')[-1] == 'tried' for n in names]
        if tried != sorted(tried):
            wrong.append(f'an appendix of {label} is not last: {names}')
    return wrong


def test_nav_places_new_pages():
    "Pages of a notebook yet to come fall into their family: main page first, appendix last."
    ps = [
        ('index.ipynb', 'index', 'ttc_nb'),
        ('04_errors.ipynb', 'errors', 'Errors'),
        ('00_core.protocol.ipynb', 'core.protocol', 'The protocol'),
        ('11_act.tasks.ipynb', 'act.tasks', 'Tasks'),
        ('12_act.model.ipynb', 'act.model', 'ACT'),
        ('12a_act.tried.ipynb', 'act.tried', 'ACT: what we tried'),
        ('41_sudoku.task.ipynb', 'sudoku.task', 'The task'),
        ('42_sudoku.rrn.ipynb', 'sudoku.rrn', 'RRN'),
        ('42a_sudoku.rrn.tried.ipynb', 'sudoku.rrn.tried', 'RRN: what we tried'),
        ('43_sudoku.deq.ipynb', 'sudoku.deq', 'DEQ'),
        ('99_new.thing.ipynb', 'new.thing', 'A new package'),
    ]
    got = [
        (k, [next(iter(p.values())) for p in v] if isinstance(v, list) else v)
        for d in docs.nav(ps)
        for k, v in d.items()
    ]
    assert got == [
        ('Home', 'index.ipynb'),
        ('Foundations', ['core.protocol.ipynb', 'errors.ipynb']),
        ('ACT', ['act.model.ipynb', 'act.tasks.ipynb', 'act.tried.ipynb']),
        (
            'Sudoku',
            ['sudoku.rrn.ipynb', 'sudoku.deq.ipynb', 'sudoku.task.ipynb', 'sudoku.rrn.tried.ipynb'],
        ),
        ('new', ['new.thing.ipynb']),
        ('API', 'api.md'),
    ]


def test_sidebar_groups_pages_by_family(site):
    _, shown, _ = site
    pages = [*notebook_pages(), 'api']
    for name in ('index.html', 'act.model.html'):  # the home page, and a page of a group
        grouped = Sidebar(shown[name]['desktop']['html']).grouped()
        assert check_groups(grouped, pages) == [], name
    # the check, on a sidebar with an appendix before its main page and a page out of its family
    bad = [(label, list(hrefs)) for label, hrefs in grouped]
    act = next(hrefs for label, hrefs in bad if label == 'ACT')
    act.insert(0, act.pop())
    bad[0][1].append('rasp.ops.html')
    assert [w.split(':')[0] for w in check_groups(bad, pages)] == [
        'pages not once each',
        'rasp.ops is not in its family',
        'ACT opens with act.tried, not act.model',
        'an appendix of ACT is not last',
    ]


# nbdev's doc processing executes every cell of a notebook with exports that holds an import and
# other code (nbdev.processors.exec_show_docs), from the repository's root and without the cells
# before it: a page's code fails there, or a `#| cuda` cell trains. Its imports go in the page's
# imports cell instead. Allowed: show_doc cells, and the tracr page's cells that import its table
# from tests/ (for its box and its samples).
RUN_BY_THE_BUILD = {'06_train.files.ipynb': 'show_doc(', '29_rasp.tracr.ipynb': 'tracr_record'}


def cells_the_build_runs(nbs=ROOT / 'nbs'):
    "[(notebook, cell index)] of the cells nbdev's doc processing runs that hold more than imports."
    out = []
    for p in sorted(nbs.glob('*.ipynb')):
        cells = json.loads(p.read_text())['cells']
        srcs = [''.join(c['source']) if c['cell_type'] == 'code' else '' for c in cells]
        if not any(re.search(r'^#\|\s*export', s, re.M) or 'show_doc' in s for s in srcs):
            continue  # nbdev processes a notebook's cells only if it documents something
        for i, s in enumerate(srcs):
            if 'nbdev_export()' in s or re.search(
                r'^#\|\s*(export\w*|exec_doc|eval:\s*false)', s, re.M
            ):
                continue
            code = '\n'.join(
                line for line in s.splitlines() if not line.lstrip().startswith(('%', '!'))
            )
            nodes = list(ast.walk(ast.parse(code)))
            imports = any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in nodes)
            if imports and any(isinstance(n, (ast.Expr, ast.Assign)) for n in nodes):
                if RUN_BY_THE_BUILD.get(p.name, '\0') not in s:
                    out.append((p.name, i))
    return out


def test_the_docs_build_runs_no_page_code(tmp_path):
    assert cells_the_build_runs() == []
    export = dict(cell_type='code', source=['#| export\n', 'import os\n', 'x = 1'])
    page = dict(
        cell_type='code', source=['from pathlib import Path\n', "Path('results').iterdir()"]
    )
    (tmp_path / 'n.ipynb').write_text(json.dumps(dict(cells=[export, page])))
    assert cells_the_build_runs(tmp_path) == [('n.ipynb', 1)]
