"""Every exported name and every public method of an exported class has a docstring of its own.

Its own as show_doc shows it, in plain words: no LaTeX, no stray Markdown emphasis."""

import importlib
import inspect
import re
import sys
from conftest import ROOT

sys.path.insert(0, str(ROOT / 'tools'))
from docs import docstring
from ttc_nb._modidx import d

LATEX = ['\\', '_{', '^{', 'prod_', 'sum_']  # what a formula copied from LaTeX leaves behind
_code_span = re.compile(r'(`+).+?\1')
_emphasis = re.compile(r'(?:^|[\s(\[{])\*+(?=[^\s*])')  # a `*` that opens Markdown emphasis


# The entry may be a method, static or class method, or a property's getter.
def own(v):
    "The function behind a class's `__dict__` entry `v`, or None."
    v = getattr(v, '__func__', None) or getattr(v, 'fget', None) or v
    return v if inspect.isfunction(v) else None


# Each as (`module.Name[.method]`, its own docstring).
def documented():
    "Each exported callable and each public method of an exported class, with its own docstring."
    out = []
    for mod in sorted(d['syms']):
        m = importlib.import_module(mod)
        for name in getattr(m, '__all__', []):
            sym = getattr(m, name)
            if not callable(sym):
                continue
            out.append((f'{mod}.{name}', docstring(sym)))
            if inspect.isclass(sym):
                out += [
                    (f'{mod}.{name}.{k}', inspect.cleandoc(f.__doc__ or ''))
                    for k, v in vars(sym).items()
                    if not k.startswith('_') and (f := own(v))
                ]
    return out


DOCS = documented()


def test_every_name_has_its_own_docstring():
    missing = [n for n, doc in DOCS if not doc]
    assert not missing, 'no docstring of their own:\n' + '\n'.join(missing)


def test_no_latex_in_docstrings():
    bad = [f'{n}: {doc}' for n, doc in DOCS if any(s in doc for s in LATEX)]
    assert not bad, 'LaTeX in docstrings:\n' + '\n'.join(bad)


# A `*` that opens emphasis (after a space or bracket, before
# a word) is residue; `n*n`, `a * b` and z* are maths.
def test_no_markdown_emphasis():
    "show_doc prints a docstring's `*` as it is: none may open emphasis."
    bad = [f'{n}: {doc}' for n, doc in DOCS if _emphasis.search(_code_span.sub('', doc))]
    assert not bad, 'Markdown emphasis in docstrings:\n' + '\n'.join(bad)


def test_the_checks_see_what_they_look_for():
    def f(x):
        return x

    class C:
        "A class."

        def m(self):
            return 1

    assert docstring(f) == '' and own(vars(C)['m']).__doc__ is None
    assert [
        bool(_emphasis.search(_code_span.sub('', s)))
        for s in [
            'shape (B, *out_shape)',
            'see *a heading*',
            'shape `(B, *out_shape)`',
            'n*n digits',
            'a * b',
            'f(z*)',
        ]
    ] == [True] * 2 + [False] * 4
