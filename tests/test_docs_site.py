"""The documentation site: built offline, every page loaded in headless Chromium, every internal link resolved,
every notebook page titled. A screenshot of the index page is saved as _build/index.png."""
import base64, json, os, re, select, shutil, subprocess, sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlparse, unquote
import pytest
from conftest import ROOT

CHROMIUM = shutil.which('chromium') or shutil.which('chromium-browser')
FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
         '--disable-sync', '--no-first-run', '--disable-quic']
NOTEBOOK_PAGES = {'index': 'ttc_nb', 'protocol': 'The protocol: models that can think longer', 'losses': 'Losses: making every iteration count',
                  'files': 'Files that survive a kill', 'plots': 'Plots', 'processes': 'Processes: stopping on time, and training in many',
                  'train': 'Training: one loop for every experiment', 'runs': 'Runs: experiments, presets and run directories',
                  'tables': 'Tables: results read from their runs',
                  'prefix_parity': 'Prefix parity: thinking longer on longer strings', 'cli': 'The ttc command line',
                  'act': 'Adaptive Computation Time', 'sudoku': 'Sudoku: puzzles, an exact solver and the constraint graph', 'sudoku_task': 'The Sudoku task',
                  'rrn': 'Recurrent relational networks', 'deq': 'Deep equilibrium GNN',
                  'rasp': 'RASP: Thinking Like Transformers', 'rasp_grammar': 'The RASP grammar', 'rasp_lang': 'The RASP language',
                  'rasp_analysis': 'How many layers and heads', 'transformer': 'Transformer blocks',
                  'rasp_train': 'Transformers that follow RASP programs', 'looped': 'Looped transformers',
                  'pgadj': 'Learned adjacencies'}

class Page(HTMLParser):
    "Links, element ids and h1 texts of a rendered page."
    def __init__(self, html):
        super().__init__(); self.links, self.ids, self.h1, self._in_h1 = [], set(), [], False
        self.feed(html)
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if 'id' in a: self.ids.add(a['id'])
        if 'name' in a and tag == 'a': self.ids.add(a['name'])
        if tag == 'a' and a.get('href'): self.links.append(a['href'])
        if tag in ('img', 'script') and a.get('src'): self.links.append(a['src'])
        if tag == 'link' and a.get('href'): self.links.append(a['href'])
        if tag == 'h1': self._in_h1 = True; self.h1.append('')
    def handle_endtag(self, tag):
        if tag == 'h1': self._in_h1 = False
    def handle_data(self, d):
        if self._in_h1: self.h1[-1] += d

class Browser:
    "One headless Chromium driven over its DevTools pipe: every page loads in it, without a browser process each."
    def __init__(self, profile):
        to_chrome, self.w = os.pipe()
        self.r, from_chrome = os.pipe()
        def fds():                                   # Chromium reads commands on fd 3 and writes replies and events on fd 4
            a, b = os.dup(to_chrome), os.dup(from_chrome)
            os.dup2(a, 3); os.dup2(b, 4); os.set_inheritable(3, True); os.set_inheritable(4, True)
        self.p = subprocess.Popen([CHROMIUM, *FLAGS, f'--user-data-dir={profile}', '--remote-debugging-pipe', 'about:blank'],
                                  preexec_fn=fds, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome); os.close(from_chrome)
        self.buf, self.n, self.loads = b'', 0, []

    def _next(self):
        "The next message from Chromium."
        while b'\0' not in self.buf:
            assert select.select([self.r], [], [], 120)[0], 'Chromium sent nothing for 120 s'
            chunk = os.read(self.r, 1 << 20)
            assert chunk, 'Chromium closed its DevTools pipe'
            self.buf += chunk
        msg, self.buf = self.buf.split(b'\0', 1)
        return json.loads(msg)

    def send(self, method, session=None, **params):
        "Send one DevTools command and return its result; the pages' load events that arrive meanwhile are kept."
        self.n += 1
        os.write(self.w, json.dumps(dict(id=self.n, method=method, params=params) | ({'sessionId': session} if session else {})).encode() + b'\0')
        while (m := self._next()).get('id') != self.n:
            if m.get('method') == 'Page.loadEventFired': self.loads.append(m['sessionId'])
        assert 'error' not in m, (method, params, m['error'])
        return m['result']

    def loaded(self):
        "The session of the next page that has fired its load event."
        while not self.loads:
            m = self._next()
            if m.get('method') == 'Page.loadEventFired': self.loads.append(m['sessionId'])
        return self.loads.pop(0)

    def open(self, url, **metrics):
        "Start loading `url` in a new tab (with `metrics`, the window's size, if given); its session and target ids."
        target = self.send('Target.createTarget', url='about:blank')['targetId']
        session = self.send('Target.attachToTarget', targetId=target, flatten=True)['sessionId']
        if metrics: self.send('Emulation.setDeviceMetricsOverride', session, deviceScaleFactor=1, mobile=False, **metrics)
        self.send('Page.enable', session)
        r = self.send('Page.navigate', session, url=url)
        assert 'errorText' not in r, (url, r['errorText'])
        return session, target

    def doms(self, urls, k=2):
        "The DOM of each of `urls` once it has loaded and its scripts have run, `k` pages loading at a time."
        out, todo, loading = {}, list(urls), {}
        while todo or loading:
            while todo and len(loading) < k:
                url = todo.pop(0); session, target = self.open(url); loading[session] = url, target
            session = self.loaded()
            url, target = loading.pop(session)
            href, out[url] = self.send('Runtime.evaluate', session, awaitPromise=True, returnByValue=True, expression=SETTLED)['result']['value']
            assert href == url, (href, url)
            self.send('Target.closeTarget', targetId=target)
        return out

    def screenshot(self, url, path):
        "Save a PNG of `url` as a 1280 x 1000 window shows it."
        session, target = self.open(url, width=1280, height=1000)
        while self.loaded() != session: pass
        self.send('Runtime.evaluate', session, awaitPromise=True, expression=SETTLED)
        path.write_bytes(base64.b64decode(self.send('Page.captureScreenshot', session, format='png')['data']))
        self.send('Target.closeTarget', targetId=target)

    def close(self):
        self.send('Browser.close')
        self.p.wait(timeout=60)

# After the load event: the scripts' next task (KaTeX renders at DOMContentLoaded, mkdocs-material at load), then the DOM.
SETTLED = "new Promise(r => setTimeout(() => r([location.href, document.documentElement.outerHTML]), 100))"

@pytest.fixture(scope='module')
def site(tmp_path_factory):
    "The site, built once; the DOM of each of its pages as headless Chromium rendered it; the browser, for a screenshot."
    if not CHROMIUM: pytest.fail('chromium is not installed: apt-get install chromium (.ci/run does)')
    subprocess.run([sys.executable, str(ROOT/'tools'/'docs.py'), 'site'], cwd=ROOT, check=True)
    docs = ROOT/'docs'
    pages = sorted(p for p in docs.glob('*.html') if p.name != '404.html')
    browser = Browser(tmp_path_factory.mktemp('chromium'))
    doms = browser.doms([p.as_uri() for p in pages])
    yield docs, {p.name: doms[p.as_uri()] for p in pages}, browser
    browser.close()

def test_every_page_loads_links_resolve_and_notebooks_have_titles(site):
    docs, rendered, _ = site
    assert {Path(name).stem for name in rendered} >= set(NOTEBOOK_PAGES) | {'api'}
    doms = {name: Page(html) for name, html in rendered.items()}
    broken = []
    for name, page in doms.items():
        for href in page.links:
            u = urlparse(href)
            if u.scheme or href.startswith('//'): continue       # external
            target = (docs/name).parent/unquote(u.path) if u.path else docs/name
            if target.is_dir(): target = target/'index.html'
            if not target.exists(): broken.append(f'{name}: {href} (no such file)'); continue
            if u.fragment and target.suffix == '.html' and u.fragment not in doms.get(target.name, Page(target.read_text())).ids:
                broken.append(f'{name}: {href} (no such anchor)')
    assert not broken, '\n'.join(broken)
    for stem, title in NOTEBOOK_PAGES.items():
        h1 = [re.sub(r'\s+', ' ', t).strip(' ¶') for t in doms[f'{stem}.html'].h1]
        assert title in h1, (stem, h1)

def test_math_is_rendered(site):
    _, rendered, _ = site
    assert 'class="katex"' in rendered['act.html']            # "The halting arithmetic": the paper's equations

def test_hidden_cells_and_directives_are_not_shown(site):
    docs, rendered, _ = site
    for name in rendered:
        html = (docs/name).read_text()
        assert '#| export' not in html and '#| hide' not in html and 'nbdev_export()' not in html, name
        assert 'show_doc(' not in html, name      # echo: false cells show their output only

def test_screenshot_of_index(site):
    docs, _, browser = site
    shot = ROOT/'_build'/'index.png'
    shot.unlink(missing_ok=True)
    browser.screenshot((docs/'index.html').as_uri(), shot)
    assert shot.stat().st_size > 10_000

# At a 1280-pixel window: the width of the page against the window's, and the code blocks wider than their box.
WIDTHS = ("new Promise(r => setTimeout(() => r([document.documentElement.scrollWidth, window.innerWidth, "
          "[...document.querySelectorAll('.jp-Cell pre, .md-typeset pre')].filter(p => p.scrollWidth > p.clientWidth + 1)"
          ".map(p => p.textContent.slice(0, 60))]), 100))")

def sideways(browser, url):
    "What scrolls sideways on `url` at 1280 pixels: the page itself (its width, if wider than the window) and its code blocks."
    session, target = browser.open(url, width=1280, height=1000)
    while browser.loaded() != session: pass
    page, window, code = browser.send('Runtime.evaluate', session, awaitPromise=True, returnByValue=True, expression=WIDTHS)['result']['value']
    browser.send('Target.closeTarget', targetId=target)
    return ([page] if page > window else []) + code

def test_no_page_or_code_scrolls_sideways(site, tmp_path):
    docs, rendered, browser = site
    wide = tmp_path/'wide.html'                      # the check itself: a line of code wider than the page, in a cell that does not wrap
    wide.write_text('<div class="jp-Cell"><pre style="white-space: pre">' + 'x = 1  ' * 300 + '</pre></div>')
    assert sideways(browser, wide.as_uri())
    assert {name: s for name in rendered if (s := sideways(browser, (docs/name).as_uri()))} == {}
