"""Build the README and the documentation site offline, from nbdev's processing of the notebooks.

    python tools/docs.py readme   # README.md from nbs/index.ipynb
    python tools/docs.py site     # the site in docs/ (mkdocs-material + mkdocs-jupyter;
                                  # KaTeX from npm for math)

Quarto, which `nbdev_docs` uses, cannot be installed on our machines, so nbdev's own processing
(`nbdev.serve.proc_nbs`: show_doc rendered, exports hidden, links added) feeds a renderer from PyPI
instead.
"""

import ast
import contextlib
import dataclasses
import functools
import html
import importlib
import inspect
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
import jinja2
import yaml
import fastcore.docments
from nbdev.config import get_config
from nbdev.processors import FilterDefaults
from nbdev.serve import proc_nbs
import nbdev.serve_drv

ROOT = Path(__file__).resolve().parent.parent
BUILD, SRC = ROOT / '_build', ROOT / '_build' / 'src'
KATEX = 'katex@0.16.22'
NOT_PAGES = [
    '*.md',
    '*.markdown',
    '*.ipynb',
    '*.py',
]  # files of data folders and vendored packages that would become pages

# mkdocs-jupyter inlines its own CSS in every page, after ours: its rules win unless ours are more
# specific or !important.
SITE_CSS = """/* No In [ ]: / Out[ ]: prompts, at any width. */
.jupyter-wrapper .jp-InputPrompt, .jupyter-wrapper .jp-OutputPrompt { display: none !important; }
/* Cells take the column's width: prose, code and outputs line up with the page's headings. */
.jupyter-wrapper .jp-Notebook, .jupyter-wrapper .jp-Cell, .jupyter-wrapper .jp-RenderedHTMLCommon {
  padding-left: 0 !important; padding-right: 0 !important; }
.jupyter-wrapper .jp-OutputArea-output { min-width: 0; overflow-x: auto; }
/* Code and outputs wrap at spaces, never inside a word (mkdocs-jupyter's outputs break anywhere:
   "u pdates"); a single token wider than its box scrolls inside the box. */
.jupyter-wrapper pre, .md-typeset pre > code {
  white-space: pre-wrap !important; word-break: normal !important;
  overflow-wrap: normal !important; }
.jupyter-wrapper pre, .md-typeset pre { overflow-x: auto; }
/* Tables and display equations wider than the column scroll in their own box, not the page. */
/* KaTeX's hidden MathML is positioned absolutely: anchored to its formula, it stays inside a
   scrolling table's box. */
.md-typeset .katex { position: relative; }
.md-typeset table:not([class]) { display: block; max-width: 100%; overflow-x: auto; }
.md-typeset .katex-display { overflow-x: auto; overflow-y: hidden; padding: .2em 0; }
/* Figures: at most their natural width, at most the column's; one shrunk to fit opens at full size
   on a click (figures.js) and then scrolls in its own box. */
.md-typeset img { max-width: 100%; height: auto; }
.jupyter-wrapper .jp-RenderedImage, .md-typeset p:has(> img) { overflow-x: auto; }
.md-typeset img.zoomable { cursor: zoom-in; }
.md-typeset img.zoomable.zoomed { max-width: none; cursor: zoom-out; }
/* The API page: one entry per name, its signature wrapping between parameters. */
.md-typeset dl.api dt {
  font-family: var(--md-code-font-family); font-size: .75rem; font-weight: normal;
  margin-top: 1em; }
.md-typeset dl.api dt .kind { color: var(--md-default-fg-color--light); }
.md-typeset dl.api dd { margin: .2em 0 0 1.2em; }
/* Phones: code uses the full width of the screen, as mkdocs-material's own code blocks do. */
@media screen and (max-width: 44.984375em) {
  /* the notebook and a cell's input area would clip the code boxes' negative margins */
  .md-content__inner .jupyter-wrapper .jp-Notebook,
  .md-content__inner .jupyter-wrapper .jp-InputArea { overflow: visible; }
  .md-content__inner .jupyter-wrapper .jp-InputArea-editor,
  .md-content__inner .jupyter-wrapper .jp-RenderedMarkdown > pre {
    margin-left: -.8rem; margin-right: -.8rem; border-left: 0; border-right: 0; border-radius: 0; }
}
"""

FIGURES_JS = """\
// A figure shrunk to fit the column opens at its natural width on a click, scrolling in its own
// box: marked when the page loads and again when the window narrows (a phone turned, a window
// made smaller).
function zoomable(img) {
  const shrunk = img.naturalWidth > img.clientWidth + 1;
  if (shrunk || img.classList.contains('zoomed')) {
    img.classList.add('zoomable');
    img.title = 'Click to see it at full size';
  }
}
const markFigures = () => document.querySelectorAll('.md-content img').forEach(zoomable);
window.addEventListener('load', markFigures);
window.addEventListener('resize', markFigures);
document.addEventListener('click', e => {
  const img = e.target.closest('img.zoomable');
  if (img) img.classList.toggle('zoomed');
});
"""


# show_doc takes a docstring from fastcore's `docstring`, which falls back on
# `type(sym).__call__`'s: a function without a docstring reads "Call self as a function.", a class
# without one "Initialize self.  See help(type(self))...", a `functools.partial` the docstring of
# `partial` itself, and a dataclass its generated `Name(field: type = ...)`.
#
# For a partial, its function's; for a callable object, its class's or its `__call__`'s.
def docstring(sym):
    "The docstring written for `sym`, else ''."
    if isinstance(sym, str):
        return sym
    if isinstance(sym, functools.partial):
        return docstring(sym.func)
    own = lambda f: inspect.isfunction(getattr(f, '__func__', f)) and inspect.getdoc(f) or ''
    if inspect.isclass(sym):
        doc = sym.__dict__.get('__doc__')  # its own: inspect.getdoc would inherit a base class's
        doc = doc if isinstance(doc, str) else ''
        if dataclasses.is_dataclass(sym) and doc.startswith(sym.__name__ + '('):
            doc = ''  # the generated one
        return inspect.cleandoc(doc) or own(sym.__init__)
    if inspect.isfunction(sym) or inspect.ismethod(sym):
        return inspect.getdoc(sym) or ''
    if callable(sym):
        return docstring(type(sym)) or own(sym.__call__)
    return inspect.getdoc(sym) or ''


_code_span = re.compile(r'(`+)(.+?)\1')


def _escape_md(s):
    "`s` with the characters Markdown reads as emphasis escaped, outside code spans."
    parts = _code_span.split(s)  # text, ticks, code, text, ticks, code, ..., text
    return ''.join(
        re.sub(r'([\\*_])', r'\\\1', p)
        if i % 3 == 0
        else f'{parts[i - 1]}{p}{parts[i - 1]}'
        if i % 3 == 2
        else ''
        for i, p in enumerate(parts)
    )


# Unescaped, `n*n digits` would end the italics.
def _ital_first(s):
    "show_doc's first docstring line in italics, with its `*` and `_` escaped."
    return re.sub(r'^(\s*)(.+)', lambda m: f'{m.group(1)}*{_escape_md(m.group(2))}*', s, count=1)


_doc_text = fastcore.docments.DocmentText.__str__


# show_doc names a partial `f[partial: b=2]`.
def _signature_text(self):
    "show_doc's signature, a partial named as show_doc names it rather than `partial.__call__`."
    s = _doc_text(self)
    return (
        s.replace('partial.__call__(', fastcore.docments.qual_name(self.obj) + '(', 1)
        if isinstance(self.obj, functools.partial)
        else s
    )


def _patch_show_doc():
    fastcore.docments.docstring, fastcore.docments._ital_first = docstring, _ital_first
    fastcore.docments.DocmentText.__str__ = fastcore.docments.DocmentText.__repr__ = _signature_text


def _front(nb):
    "The YAML front matter nbdev puts in a raw first cell, and the notebook without it."
    c = nb['cells'][0]
    if c['cell_type'] == 'raw' and ''.join(c['source']).startswith('---'):
        return yaml.safe_load(''.join(c['source']).strip().strip('-')) or {}, nb['cells'][1:]
    return {}, nb['cells']


def _directives(src):
    "Split `#| key: value` lines from the rest of a code cell."
    d, rest = {}, []
    for line in src.splitlines():
        m = re.match(
            r'^#\|\s*([\w-]+)(?::?\s+(.*)|:)?$', line
        )  # `#| echo: false`, `#| default_exp train.files`, `#| hide`
        if m:
            d[m.group(1)] = (m.group(2) or 'true').strip()
        else:
            rest.append(line)
    return d, '\n'.join(rest).strip('\n')


_delim = re.compile(r'^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$')


# GitHub reads `\|` inside a code span of a table as a `|` of the code; the site's renderer
# (mistune) shows the backslash: such spans become HTML code with the pipe as an entity, which every
# renderer reads the same.
def _table_pipes(md):
    "`md` with each table code span holding `\\|` as HTML code, the pipe as an entity."
    lines, fence, in_table = md.split('\n'), False, False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(('```', '~~~')):
            fence = not fence
        if fence:
            continue
        if not line.strip():
            in_table = False
        elif (
            i + 1 < len(lines)
            and '|' in line
            and _delim.match(lines[i + 1])
            and '-' in lines[i + 1]
        ):
            in_table = True
        if in_table and '\\|' in line:
            lines[i] = _code_span.sub(
                lambda m: (
                    m.group(0)
                    if '\\|' not in m.group(2)
                    else '<code>'
                    + html.escape(m.group(2).replace('\\|', '|')).replace('|', '&#124;')
                    + '</code>'
                ),
                line,
            )
    return '\n'.join(lines)


def _cell(c, md):
    "A processed cell for rendering (`md` applied to its Markdown), or None to drop it."
    src = ''.join(c['source'])
    if c['cell_type'] == 'markdown':
        return c | {'source': md(src)}
    if c['cell_type'] != 'code':
        return None
    d, src = _directives(src)
    if d.get('include') == 'false' or 'hide' in d:
        return None
    for o in c.get('outputs', []):
        for k, v in o.get('data', {}).items():
            if k == 'text/markdown':
                o['data'][k] = md(''.join(v))
    tags = ['remove_input'] if d.get('echo') == 'false' or not src else []
    if tags and not c.get('outputs'):
        return None
    return c | {'source': src, 'metadata': {'tags': tags}}


def page_name(notebook: str) -> str:
    "The page nbdev makes of `notebook`: its name without its number (`12a_`) or suffix."
    return re.sub(r'^\d+[a-zA-Z0-9]*_', '', Path(notebook).stem.lower())


def processed(notebooks) -> Path:
    "Run nbdev's doc processors on `notebooks` (names in nbs/) alone; the folder they go to."
    cfg = get_config()
    proc = BUILD / 'proc'
    if proc.exists():
        shutil.rmtree(proc)
    proc.mkdir(parents=True)
    for name in notebooks:
        nbdev.serve_drv.main((ROOT / cfg.nbs_path / name, proc / name, FilterDefaults))
    return proc


# With `site`, the notebooks are processed for the site's renderer; with `only`, only those
# notebooks are (the README needs the index alone: the whole site's processing takes a minute).
def pages(site=False, only=None):
    "Process the notebooks into `_build/src/<page>.ipynb`; [(notebook name, page name, title)]."
    cfg = get_config()
    _patch_show_doc()
    if only:
        proc = processed(only)
    else:  # also redo unchanged notebooks: doc links depend on every module
        proc = proc_nbs(n_workers=0, force=True)
    fronts = {p.name: _front(json.loads(p.read_text()))[0] for p in sorted(proc.glob('*.ipynb'))}
    names = {p.name: page_name(p.name) for p in (ROOT / cfg.nbs_path).glob('*.ipynb')} | {
        nb: f['output-file'].replace('.html', '') for nb, f in fronts.items() if 'output-file' in f
    }
    host = f'{cfg.doc_host}{cfg.doc_baseurl}'.rstrip('/') + '/'

    def links(s):
        s = re.sub(
            r'^\[source\]\(.*\)\{.*\}\n', '', s.replace(host, ''), flags=re.M
        )  # quarto-only source links
        # nbdev links every name of _modidx that a page writes in backticks, private ones too; a
        # private name has no entry on its page (show_doc renders public names only): plain code
        s = re.sub(r'\[(`_\w+`)\]\([\w.-]+\.html#_\w+\)', r'\1', s)
        return re.sub(
            r'(\]\(|href=")([\w.-]+)\.ipynb',
            lambda m: m.group(1) + names.get(m.group(2) + '.ipynb', m.group(2)) + '.html',
            s,
        )

    md = (lambda s: _table_pipes(links(s))) if site else links
    if SRC.exists():
        shutil.rmtree(SRC)
    SRC.mkdir(parents=True)
    out = []
    for nb_name, front in fronts.items():
        nb = json.loads((proc / nb_name).read_text())
        _, cells = _front(nb)
        title = front.get('title', nb_name).lstrip('# ')
        head = f'# {title}\n\n' + (f'> {front["description"]}' if front.get('description') else '')
        cells = [{'cell_type': 'markdown', 'metadata': {}, 'source': head}] + [
            c for c in (_cell(c, md) for c in cells) if c
        ]
        (SRC / f'{names[nb_name]}.ipynb').write_text(json.dumps(nb | {'cells': cells}, indent=1))
        out.append((nb_name, names[nb_name], title))
    for d in (ROOT / cfg.nbs_path).iterdir():
        if d.is_dir() and not d.name.startswith(('.', '_')):
            shutil.copytree(d, SRC / d.name, ignore=shutil.ignore_patterns('*.pt', *NOT_PAGES))
    return out


# Its Markdown, and its Markdown outputs, with links to the notebooks; its code and other outputs as
# fenced blocks.
def readme():
    "README.md from the processed index notebook."
    pages(only=['index.ipynb'])
    notebook_of = {
        page_name(p.name): p.name for p in (ROOT / get_config().nbs_path).glob('*.ipynb')
    }
    nb = json.loads((SRC / 'index.ipynb').read_text())

    def fix(s):
        s = re.sub(r'\]\(([\w.]+)\.html', lambda m: f'](nbs/{notebook_of[m.group(1)]}', s)
        return re.sub(r'\]\((?!https?:|#|nbs/)([^)]+)\)', lambda m: f'](nbs/{m.group(1)})', s)

    parts = []
    for c in nb['cells']:
        src = ''.join(c['source'])
        if c['cell_type'] == 'markdown':
            if not src.startswith('<!-- WARNING'):
                parts.append(fix(src))
            continue
        if 'remove_input' not in c['metadata'].get('tags', []):
            parts.append(f'```python\n{src}\n```')
        for o in c.get('outputs', []):
            text = ''.join(
                o.get('text', '')
                or o.get('data', {}).get('text/markdown', '')
                or o.get('data', {}).get('text/plain', '')
            )
            if text:
                parts.append(
                    fix(text)
                    if 'text/markdown' in o.get('data', {})
                    else f'```\n{text.rstrip()}\n```'
                )
    banner = (
        '<!-- Generated from nbs/index.ipynb by `make export`: '
        'edit the notebook, not this file. -->'
    )
    (ROOT / 'README.md').write_text(
        banner + '\n\n' + '\n\n'.join(p.strip('\n') for p in parts) + '\n'
    )


# Math renders without any CDN.
def _katex():
    "KaTeX from the npm registry, unpacked into the site's assets: its code, not its README."
    dest = SRC / 'assets' / 'katex'
    cache = BUILD / 'katex'
    if not (cache / 'katex.min.js').exists():
        BUILD.mkdir(exist_ok=True)
        tgz = (
            subprocess.run(
                ['npm', 'pack', KATEX, '--silent'],
                cwd=BUILD,
                capture_output=True,
                text=True,
                check=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        with tarfile.open(BUILD / tgz) as t:
            t.extractall(BUILD / 'katex-pkg', filter='data')
        shutil.copytree(BUILD / 'katex-pkg' / 'package' / 'dist', cache, dirs_exist_ok=True)
    shutil.copytree(cache, dest, ignore=shutil.ignore_patterns(*NOT_PAGES))
    # mkdocs-jupyter loads it too, as its MathJax: a notebook's page runs it twice, renders once.
    math_js = """\
if (!window.mathOnLoad) {
  window.mathOnLoad = true;
  document.addEventListener("DOMContentLoaded", () => renderMathInElement(document.body, {
    delimiters: [{left: "$$", right: "$$", display: true}, {left: "$", right: "$", display: false},
                 {left: "\\\\[", right: "\\\\]", display: true},
                 {left: "\\\\(", right: "\\\\)", display: false}],
    ignoredTags: ["script", "noscript", "style", "textarea", "pre", "code"], throwOnError: false}));
}
"""
    (SRC / 'assets' / 'math.js').write_text(math_js)


# The API page: every public name, module by module in the notebooks' order, with its signature, the
# first paragraph of its docstring and a link to where its notebook explains it (its show_doc, or
# for a constant the section defining it).


# For example `ACTConfig`, not `ttc_nb.act.experiments.ACTConfig`.
def _anno(a):
    "An annotation as short as it reads in the notebooks."
    s = (
        a
        if isinstance(a, str)
        else a.__qualname__
        if isinstance(a, type)
        else inspect.formatannotation(a)
    )
    return re.sub(r'\b(?:[a-z_]\w*\.)+(?=[A-Za-z_])', '', s).replace(' ', '')


def _default(v):
    if (inspect.isfunction(v) or inspect.isclass(v)) and hasattr(v, '__name__'):
        return v.__name__
    r = repr(v)
    return f'<{type(v).__name__}>' if ' at 0x' in r else r


# show_doc writes `lr:float=0.001`.
def _params(params):
    "Parameters as show_doc writes them, with `*` and `/` where Python's signature has them."
    out, star = [], False
    for i, p in enumerate(params):
        if p.kind == p.KEYWORD_ONLY and not star:
            out.append('*')
        star = star or p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL)
        s = {p.VAR_POSITIONAL: '*', p.VAR_KEYWORD: '**'}.get(p.kind, '') + p.name
        if p.annotation is not p.empty:
            s += ':' + _anno(p.annotation)
        if p.default is not p.empty:
            s += '=' + _default(p.default)
        out.append(s)
        if p.kind == p.POSITIONAL_ONLY and (
            i + 1 == len(params) or params[i + 1].kind != p.POSITIONAL_ONLY
        ):
            out.append('/')
    return out


def _same(a, b):
    try:
        return bool(a == b)
    except Exception:
        return a is b


# A dataclass that extends another shows its own fields.
def _signature(obj):
    "(kind, the parameters as strings, the return annotation) of a callable."
    try:
        sig = inspect.signature(obj, eval_str=True)
    except Exception:
        try:
            sig = inspect.signature(obj)
        except (TypeError, ValueError):
            return None
    params, base = list(sig.parameters.values()), None
    if inspect.isclass(obj) and dataclasses.is_dataclass(obj):
        base = next((b for b in obj.__mro__[1:] if dataclasses.is_dataclass(b)), None)
        if base:
            inherited = {f.name: f.default for f in dataclasses.fields(base)}
            params = [
                p
                for p in params
                if p.name not in inherited or not _same(p.default, inherited[p.name])
            ]
    ret = (
        ''
        if inspect.isclass(obj) or sig.return_annotation is sig.empty
        else '->' + _anno(sig.return_annotation)
    )
    return base, _params(params), ret


# A code span naming a public name (not one of `params`) is linked to its entry.
def _prose(s, anchors, params=()):
    "Docstring text as HTML: escaped, code spans as code, one naming a public name linked."
    parts = _code_span.split(s)
    out = []
    for i, p in enumerate(parts):
        if i % 3 == 0:
            out.append(html.escape(p))
        elif i % 3 == 2:
            code = f'<code>{html.escape(p)}</code>'
            out.append(
                f'<a href="#{anchors[p]}">{code}</a>' if p in anchors and p not in params else code
            )
    return ''.join(out)


def _first_paragraph(doc):
    return ' '.join(doc.split('\n\n')[0].split())


# The constants are those that export cells of `nbs` define.
def _constant_sections(nbs):
    "{(module, name): section heading text} of the public constants defined in `nbs`."
    out = {}
    for p in nbs:
        nb = json.loads(p.read_text())
        module, heading = None, None
        for c in nb['cells']:
            src = ''.join(c['source'])
            if c['cell_type'] == 'markdown':
                hs = re.findall(r'^(#{2,6})\s+(.+?)\s*$', src, flags=re.M)
                if hs:
                    heading = hs[-1][1]
                continue
            d, code = _directives(src)
            if 'default_exp' in d:
                module = d['default_exp']
            exp = next((d[k] for k in ('export', 'exports') if k in d), None)
            if exp is None or module is None:
                continue
            mod = f'ttc_nb.{module if exp == "true" else exp}'
            try:
                tree = ast.parse(code)
            except SyntaxError:
                continue
            for node in tree.body:
                targets = (
                    node.targets
                    if isinstance(node, ast.Assign)
                    else [node.target]
                    if isinstance(node, ast.AnnAssign)
                    else []
                )
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            out.setdefault((mod, n.id), heading)
    return out


# The id nbconvert's renderer gives, as mkdocs-jupyter patches it.
def _heading_id(text):
    "The id mkdocs-jupyter gives a Markdown heading."
    import mkdocs_jupyter.convert  # noqa: F401  (patches the renderer's headings)
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    return re.search(r'id="([^"]*)"', markdown2html_mistune(f'## {text}')).group(1)


# nbdev's index says where each name is documented.
def api_page(ps):
    "The Markdown of the API page, from the modules' `__all__` and nbdev's index."
    cfg = get_config()
    from ttc_nb._modidx import d

    nbs = sorted((ROOT / cfg.nbs_path).glob('*.ipynb'))
    page_of = {name: page for name, page, _ in ps}
    title_of = {page: title for _, page, title in ps}
    order = {}  # module -> its notebook, for the notebooks' order
    for p in nbs:
        m = re.search(r'"#\|\s*default_exp\s+([\w.]+)', p.read_text())
        if m:
            order[f'ttc_nb.{m.group(1)}'] = p.name
    sections = _constant_sections(nbs)
    mods = sorted(
        (m for m in d['syms'] if getattr(importlib.import_module(m), '__all__', None)),
        key=lambda m: (order.get(m, '~'), m),
    )
    anchors = {}
    for mod in mods:
        for name in importlib.import_module(mod).__all__:
            anchors.setdefault(name, f'{mod}.{name}')
    out = [
        '# API',
        '',
        f'Every public name of `{cfg.lib_name}`, module by module in the order '
        'the notebooks explain them: its signature, the first paragraph of its '
        'docstring, and a link (its name) to where its notebook explains it.',
        '',
    ]
    for mod in mods:
        m = importlib.import_module(mod)
        urls = {k.removeprefix(mod + '.'): url for k, (url, _) in d['syms'][mod].items()}
        page = page_of.get(order.get(mod)) or next(iter(urls.values()), '').split('#')[
            0
        ].removesuffix('.html')
        out += [
            f'## {mod}',
            '',
            f'<p>{_prose(_first_paragraph(m.__doc__ or ""), anchors)} '
            f'<a href="{page}.html">{html.escape(title_of.get(page, page))}</a></p>',
            '',
            '<dl class="api">',
        ]
        for name in m.__all__:
            obj = getattr(m, name)
            url = urls.get(name) or f'{page}.html' + (
                f'#{_heading_id(h)}' if (h := sections.get((mod, name))) else ''
            )
            link = f'<a href="{url}">{html.escape(name)}</a>'
            sig = _signature(obj) if callable(obj) else None
            try:
                params = set(inspect.signature(obj).parameters)
            except (TypeError, ValueError):
                params = set()
            if inspect.isclass(obj) and not sig:
                bases = ', '.join(_prose(f'`{b.__name__}`', anchors) for b in obj.__bases__)
                dt = f'<span class="kind">class </span>{link}({bases})'
            elif sig:
                base, params, ret = sig
                items = (
                    [f'<i>{_prose(f"`{base.__name__}`", anchors)}’s fields</i>'] if base else []
                ) + [html.escape(p) for p in params]
                kind = '<span class="kind">class </span>' if inspect.isclass(obj) else ''
                dt = f'{kind}{link}({", ".join(items)}){html.escape(ret)}'
            else:
                r = repr(obj)
                value = (
                    f' = {html.escape(r)}'
                    if len(r) <= 60 and ' at 0x' not in r
                    else f': {type(obj).__name__}'
                    + (f' of {len(obj)}' if hasattr(obj, '__len__') else '')
                )
                dt = f'{link}{value}'
            doc = _first_paragraph(docstring(obj)) if callable(obj) or inspect.ismodule(obj) else ''
            out += [
                f'<dt id="{mod}.{name}">{dt}</dt>',
                f'<dd>{_prose(doc, anchors, params)}</dd>' if doc else '<dd></dd>',
            ]
        out += ['</dl>', '']
    return '\n'.join(out)


# The sidebar groups the pages by family, the families in the order of the packages. A page's
# package is the first part of its name (`act` of `act.model`, from `12_act.model.ipynb`), so a new
# notebook of a package falls into its family. In a family its main pages come first, in the order
# of `MAIN`, then the others in the notebooks' order, and its appendices (`*.tried`) last. Pages of
# no package (the home page, `95_reproductions`, `96_developing`) stand alone, first; a package
# without a family gets a group of its own name, after the others.
FAMILIES = {
    'core': 'Foundations',
    'errors': 'Foundations',
    'train': 'Foundations',
    'runs': 'Foundations',
    'examples': 'Examples',
    'act': 'ACT',
    'rasp': 'RASP',
    'looped': 'Looped transformers',
    'sudoku': 'Sudoku',
    'recurrence': 'Recurrence',
    'report': 'Reports and the atlas',
    'cli': 'Command line',
}
MAIN = (
    'act.model',
    'rasp.ops',
    'looped.model',
    'sudoku.rrn',
    'sudoku.deq',
    'sudoku.pgadj',
    'sudoku.trm',
    'recurrence.model',
    'report.atlas',
)


def package(page):
    "The package of a page named after its module (`act` of `act.tried`); None for other pages."
    first = page.split('.')[0]
    return first if first in FAMILIES or '.' in page else None


def nav(ps):
    "mkdocs's nav of the pages `ps`, [(notebook, page, title)], grouped by family."
    packages = list(dict.fromkeys([*FAMILIES, *sorted({package(p) for _, p, _ in ps} - {None})]))
    families = list(dict.fromkeys(FAMILIES.get(k, k) for k in packages))

    def order(p):
        nb, page, _ = p
        k = package(page)
        appendix = page.split('.')[-1] == 'tried'
        main = MAIN.index(page) if page in MAIN else len(MAIN)
        return families.index(FAMILIES.get(k, k)), appendix, main, packages.index(k), nb

    alone = sorted((p for p in ps if package(p[1]) is None), key=lambda p: (p[1] != 'index', p[0]))
    out = [{('Home' if page == 'index' else title): f'{page}.ipynb'} for _, page, title in alone]
    grouped = {}
    for nb, page, title in sorted((p for p in ps if package(p[1])), key=order):
        k = package(page)
        grouped.setdefault(FAMILIES.get(k, k), []).append({title: f'{page}.ipynb'})
    return out + [{family: items} for family, items in grouped.items()] + [{'API': 'api.md'}]


class CompiledTemplates(jinja2.BytecodeCache):
    "Jinja's compiled code of each template, in memory, for every environment that shares it."

    def __init__(self):
        self.code = {}

    def load_bytecode(self, bucket):
        bucket.code = self.code.get((bucket.key, bucket.checksum))

    def dump_bytecode(self, bucket):
        self.code[bucket.key, bucket.checksum] = bucket.code


@contextlib.contextmanager
def templates_compiled_once():
    "Within it, every nbconvert exporter's Jinja environment shares one `CompiledTemplates`."
    from nbconvert.exporters.templateexporter import TemplateExporter

    create, cache = TemplateExporter._create_environment, CompiledTemplates()

    def environment(exporter):
        env = create(exporter)
        env.bytecode_cache = cache
        return env

    TemplateExporter._create_environment = environment
    try:
        yield cache
    finally:
        TemplateExporter._create_environment = create


# mkdocs-jupyter makes two nbconvert exporters for every notebook (its page and, in Markdown, its
# table of contents), and each builds its own Jinja environment, which compiles the same templates
# again, page after page: about a third of the build's time where mkdocs-jupyter's page cache is
# empty (a fresh clone). They share the compiled code instead, so the build runs in this process.
def build_site(config):
    "`mkdocs build --clean --quiet -f config`, with nbconvert's templates compiled once."
    os.environ['NO_MKDOCS_2_WARNING'] = '1'
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    logging.getLogger('mkdocs').setLevel(logging.ERROR)
    with templates_compiled_once():
        build(load_config(str(config)))


def site():
    "Render every notebook into `docs/` with mkdocs-material and mkdocs-jupyter, plus an API page."
    cfg = get_config()
    ps = pages(site=True)
    _katex()
    (SRC / 'api.md').write_text(api_page(ps))
    (SRC / 'assets' / 'site.css').write_text(SITE_CSS)
    (SRC / 'assets' / 'figures.js').write_text(FIGURES_JS)
    mk = dict(
        site_name=cfg.title,
        site_description=cfg.description,
        docs_dir='src',
        site_dir=str(ROOT / cfg.doc_path),
        use_directory_urls=False,
        theme={'name': 'material', 'features': ['navigation.sections']},
        nav=nav(ps),
        plugins=[
            {'search': {}},
            {
                'mkdocs-jupyter': {
                    'execute': False,
                    'include_source': False,
                    'ignore_h1_titles': True,
                    'include': ['*.ipynb'],
                    'custom_mathjax_url': 'assets/math.js',
                    'remove_tag_config': {'remove_input_tags': ['remove_input']},
                }
            },
        ],
        extra_css=['assets/katex/katex.min.css', 'assets/site.css'],
        extra_javascript=[
            'assets/katex/katex.min.js',
            'assets/katex/contrib/auto-render.min.js',
            'assets/math.js',
            'assets/figures.js',
        ],
        markdown_extensions=['tables', 'admonition'],
    )
    (BUILD / 'mkdocs.yml').write_text(yaml.safe_dump(mk, sort_keys=False))
    build_site(BUILD / 'mkdocs.yml')
    return ROOT / cfg.doc_path


if __name__ == '__main__':
    {'readme': readme, 'site': site}[sys.argv[1]]()
