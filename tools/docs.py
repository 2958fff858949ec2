"""Build the README and the documentation site offline, from nbdev's processing of the notebooks.

    python tools/docs.py readme   # README.md from nbs/index.ipynb
    python tools/docs.py site     # the site in docs/ (mkdocs-material + mkdocs-jupyter; KaTeX from npm for math)

Quarto, which `nbdev_docs` uses, cannot be installed on our machines, so nbdev's own processing
(`nbdev.serve.proc_nbs`: show_doc rendered, exports hidden, links added) feeds a renderer from PyPI instead.
"""
import importlib, json, re, shutil, subprocess, sys, tarfile
from pathlib import Path
import yaml
from nbdev.config import get_config
from nbdev.serve import proc_nbs

ROOT = Path(__file__).resolve().parent.parent
BUILD, SRC = ROOT/'_build', ROOT/'_build'/'src'
KATEX = 'katex@0.16.22'


# Prompts hidden at any width (mkdocs-jupyter's own rule is more specific than a plain class selector); code and outputs
# wrap at spaces, and inside a word only where a word alone is wider than the page, so that no page scrolls sideways.
SITE_CSS = """.jp-Cell .jp-InputPrompt, .jp-Cell .jp-OutputPrompt, .jp-InputArea .jp-InputPrompt, .jp-OutputArea .jp-OutputPrompt { display: none !important; }
.jp-Cell pre, .md-typeset pre > code { white-space: pre-wrap; overflow-wrap: break-word; }
"""

def _front(nb):
    "The YAML front matter nbdev puts in a raw first cell, and the notebook without it."
    c = nb['cells'][0]
    if c['cell_type'] == 'raw' and ''.join(c['source']).startswith('---'):
        return yaml.safe_load(''.join(c['source']).strip().strip('-')) or {}, nb['cells'][1:]
    return {}, nb['cells']

def _directives(src):
    "Split `#| key: value` lines from the rest of a code cell."
    d, rest = {}, []
    for l in src.splitlines():
        m = re.match(r'^#\|\s*([\w-]+)(?::\s*(.*))?$', l)
        if m: d[m.group(1)] = (m.group(2) or 'true').strip()
        else: rest.append(l)
    return d, '\n'.join(rest).strip('\n')

def _cell(c, links):
    "A processed cell for rendering, or None to drop it."
    src = ''.join(c['source'])
    if c['cell_type'] == 'markdown': return c | {'source': links(src)}
    if c['cell_type'] != 'code': return None
    d, src = _directives(src)
    if d.get('include') == 'false' or 'hide' in d: return None
    for o in c.get('outputs', []):
        for k, v in o.get('data', {}).items():
            if k == 'text/markdown': o['data'][k] = links(''.join(v))
    tags = ['remove_input'] if d.get('echo') == 'false' or not src else []
    if tags and not c.get('outputs'): return None
    return c | {'source': src, 'metadata': {'tags': tags}}

def pages():
    "Process the notebooks into `_build/src/<page>.ipynb`; returns [(notebook name, page name, title)]."
    cfg = get_config()
    proc = proc_nbs(n_workers=0, force=True)   # also redo unchanged notebooks: doc links depend on every module
    fronts = {p.name: _front(json.loads(p.read_text()))[0] for p in sorted(proc.glob('*.ipynb'))}
    names = {nb: f.get('output-file', nb).replace('.html', '') for nb, f in fronts.items()}
    host = f"{cfg.doc_host}{cfg.doc_baseurl}".rstrip('/') + '/'
    def links(s):
        s = re.sub(r'^\[source\]\(.*\)\{.*\}\n', '', s.replace(host, ''), flags=re.M)  # quarto-only source links
        return re.sub(r'(\]\(|href=")([\w.-]+)\.ipynb', lambda m: m.group(1) + names.get(m.group(2) + '.ipynb', m.group(2)) + '.html', s)
    if SRC.exists(): shutil.rmtree(SRC)
    SRC.mkdir(parents=True)
    out = []
    for nb_name, front in fronts.items():
        nb = json.loads((proc/nb_name).read_text())
        _, cells = _front(nb)
        title = front.get('title', nb_name).lstrip('# ')
        head = f"# {title}\n\n" + (f"> {front['description']}" if front.get('description') else '')
        cells = [{'cell_type': 'markdown', 'metadata': {}, 'source': head}] + [c for c in (_cell(c, links) for c in cells) if c]
        (SRC/f'{names[nb_name]}.ipynb').write_text(json.dumps(nb | {'cells': cells}, indent=1))
        out.append((nb_name, names[nb_name], title))
    for d in (ROOT/cfg.nbs_path).iterdir():
        if d.is_dir() and not d.name.startswith(('.', '_')): shutil.copytree(d, SRC/d.name, ignore=shutil.ignore_patterns('*.pt'))
    return out

def readme():
    "README.md from the processed index notebook: markdown as is, code and outputs as fenced blocks."
    notebook_of = {page: name for name, page, _ in pages()}
    nb = json.loads((SRC/'index.ipynb').read_text())
    def fix(s):
        s = re.sub(r'\]\((\w+)\.html', lambda m: f'](nbs/{notebook_of[m.group(1)]}', s)
        return re.sub(r'\]\((?!https?:|#|nbs/)([^)]+)\)', lambda m: f'](nbs/{m.group(1)})', s)
    parts = []
    for c in nb['cells']:
        src = ''.join(c['source'])
        if c['cell_type'] == 'markdown':
            if not src.startswith('<!-- WARNING'): parts.append(fix(src))
            continue
        if 'remove_input' not in c['metadata'].get('tags', []): parts.append(f"```python\n{src}\n```")
        for o in c.get('outputs', []):
            text = ''.join(o.get('text', '') or o.get('data', {}).get('text/markdown', '') or o.get('data', {}).get('text/plain', ''))
            if text: parts.append(text if 'text/markdown' in o.get('data', {}) else f"```\n{text.rstrip()}\n```")
    banner = '<!-- Generated from nbs/index.ipynb by `make export`: edit the notebook, not this file. -->'
    (ROOT/'README.md').write_text(banner + '\n\n' + '\n\n'.join(p.strip('\n') for p in parts) + '\n')

def _katex():
    "KaTeX (from the npm registry; math renders without any CDN), unpacked into the site's assets."
    dest = SRC/'assets'/'katex'
    cache = BUILD/'katex'
    if not (cache/'katex.min.js').exists():
        BUILD.mkdir(exist_ok=True)
        tgz = subprocess.run(['npm', 'pack', KATEX, '--silent'], cwd=BUILD, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
        with tarfile.open(BUILD/tgz) as t: t.extractall(BUILD/'katex-pkg', filter='data')
        shutil.copytree(BUILD/'katex-pkg'/'package'/'dist', cache, dirs_exist_ok=True)
    shutil.copytree(cache, dest)
    (SRC/'assets'/'math.js').write_text('''document.addEventListener("DOMContentLoaded", () => renderMathInElement(document.body, {
  delimiters: [{left: "$$", right: "$$", display: true}, {left: "$", right: "$", display: false},
               {left: "\\\\[", right: "\\\\]", display: true}, {left: "\\\\(", right: "\\\\)", display: false}],
  ignoredTags: ["script", "noscript", "style", "textarea", "pre", "code"], throwOnError: false}));
''')

def site():
    "Render every notebook into `docs/` with mkdocs-material and mkdocs-jupyter, plus an API page."
    cfg = get_config()
    ps = pages()
    _katex()
    from ttc_nb._modidx import d
    api = ['# API', '', 'Every exported symbol, with a link to where its notebook defines and demonstrates it.', '']
    for mod, syms in d['syms'].items():
        if not syms: continue
        public = set(getattr(importlib.import_module(mod), '__all__', ()))   # `#| export`ed: documented, so anchored
        api += [f'## `{mod}`', '']
        for sym, (url, _) in sorted(syms.items()):
            name = sym.removeprefix(mod + '.')
            if name in public: api.append(f"- [`{name}`]({url})")
        api.append('')
    (SRC/'api.md').write_text('\n'.join(api))
    ps = sorted(ps, key=lambda p: p[1] != 'index')
    nav = [{('Home' if page == 'index' else title): f'{page}.ipynb'} for _, page, title in ps] + [{'API': 'api.md'}]
    (SRC/'assets'/'site.css').write_text(SITE_CSS)
    mk = dict(site_name=cfg.title, site_description=cfg.description, docs_dir='src', site_dir=str(ROOT/cfg.doc_path),
              use_directory_urls=False, theme={'name': 'material', 'features': ['navigation.sections']}, nav=nav,
              plugins=[{'search': {}}, {'mkdocs-jupyter': {'execute': False, 'include_source': False, 'ignore_h1_titles': True,
                        'custom_mathjax_url': 'assets/math.js', 'remove_tag_config': {'remove_input_tags': ['remove_input']}}}],
              extra_css=['assets/katex/katex.min.css', 'assets/site.css'], extra_javascript=['assets/katex/katex.min.js',
              'assets/katex/contrib/auto-render.min.js', 'assets/math.js'], markdown_extensions=['tables', 'admonition'])
    (BUILD/'mkdocs.yml').write_text(yaml.safe_dump(mk, sort_keys=False))
    subprocess.run([sys.executable, '-m', 'mkdocs', 'build', '--clean', '--quiet', '-f', str(BUILD/'mkdocs.yml')], check=True)
    return ROOT/cfg.doc_path

if __name__ == '__main__':
    {'readme': readme, 'site': site}[sys.argv[1]]()
