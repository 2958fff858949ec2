"""The documentation site: built offline, every page loaded in headless Chromium, every internal link resolved,
every notebook page titled. A screenshot of the index page is saved as _build/index.png."""
import re, shutil, subprocess, sys
from html.parser import HTMLParser
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

@pytest.fixture(scope='module')
def site(tmp_path_factory):
    if not CHROMIUM: pytest.fail('chromium is not installed: apt-get install chromium (.ci/run does)')
    subprocess.run([sys.executable, str(ROOT/'tools'/'docs.py'), 'site'], cwd=ROOT, check=True)
    return ROOT/'docs', tmp_path_factory.mktemp('chromium')

def render(url, profile):
    "The DOM of `url` after Chromium has run its scripts."
    r = subprocess.run([CHROMIUM, *FLAGS, f'--user-data-dir={profile}', '--virtual-time-budget=3000', '--dump-dom', url],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and '<html' in r.stdout, r.stderr[-2000:]
    return r.stdout

def test_every_page_loads_links_resolve_and_notebooks_have_titles(site):
    docs, profile = site
    pages = sorted(p for p in docs.glob('*.html') if p.name != '404.html')
    assert {p.stem for p in pages} >= set(NOTEBOOK_PAGES) | {'api'}
    doms = {p.name: Page(render(p.as_uri(), profile)) for p in pages}
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
    docs, profile = site
    assert 'class="katex"' in render((docs/'core.html').as_uri(), profile)

def test_hidden_cells_and_directives_are_not_shown(site):
    docs, _ = site
    html = (docs/'core.html').read_text()
    assert '#| export' not in html and '#| hide' not in html and 'nbdev_export()' not in html
    assert 'show_doc(' not in html      # echo: false cells show their output only

def test_screenshot_of_index(site):
    docs, profile = site
    shot = ROOT/'_build'/'index.png'
    shot.unlink(missing_ok=True)
    subprocess.run([CHROMIUM, *FLAGS, f'--user-data-dir={profile}', '--window-size=1280,1000', f'--screenshot={shot}',
                    (docs/'index.html').as_uri()], capture_output=True, timeout=120, check=True)
    assert shot.stat().st_size > 10_000
