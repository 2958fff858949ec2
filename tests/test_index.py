"""The landing page fits on a screen: no table cell of nbs/index.ipynb, or of README.md, is long.

A landing row gives each cell under about 120 characters (`method_row`); a cell over 150, as the
old reproduction table's 364 to 903, fails here."""

import json
import re
from conftest import ROOT

MAX_CELL = 150  # characters of a table cell's Markdown
DELIMITER = re.compile(r'^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$')


def table_cells(md):
    "The cells of the Markdown tables in `md`, outside fenced code: header rows and body rows."
    md = re.sub(r'^(```|~~~).*?^\1', '', md, flags=re.M | re.S)
    lines, cells, in_table = md.splitlines(), [], False
    for i, line in enumerate(lines):
        starts = i + 1 < len(lines) and '|' in line and DELIMITER.match(lines[i + 1])
        in_table = bool(starts or (in_table and '|' in line))
        if in_table and not DELIMITER.match(line):
            # a `\|` inside a cell is a pipe of its text, not a column
            cells += [c.strip() for c in re.split(r'(?<!\\)\|', line.strip().strip('|'))]
    return cells


def notebook_markdown(path):
    "The Markdown of a notebook's Markdown cells and of its Markdown outputs."
    out = []
    for c in json.loads(path.read_text())['cells']:
        if c['cell_type'] == 'markdown':
            out.append(''.join(c['source']))
        for o in c.get('outputs', []):
            if 'text/markdown' in o.get('data', {}):
                out.append(''.join(o['data']['text/markdown']))
    return '\n\n'.join(out)


def long_cells(md):
    return [c for c in table_cells(md) if len(c) > MAX_CELL]


def test_table_cells_are_found():
    md = '| a | b |\n|---|---|\n| `x \\| y` | 2 |\n\ntext | not a table\n\n```\n| c |\n|---|\n```'
    assert table_cells(md) == ['a', 'b', '`x \\| y`', '2']


def test_a_long_cell_fails():
    row = '| ' + 'w' * (MAX_CELL + 1) + ' | short |'
    assert long_cells(f'| a | b |\n|---|---|\n{row}') == ['w' * (MAX_CELL + 1)]


def test_the_index_has_no_long_table_cell():
    md = notebook_markdown(ROOT / 'nbs' / 'index.ipynb')
    assert len(table_cells(md)) >= 5 * 4  # the method table: a header and a row per method
    assert long_cells(md) == []


def test_the_readme_has_no_long_table_cell():
    md = (ROOT / 'README.md').read_text()
    assert table_cells(md) and long_cells(md) == []
