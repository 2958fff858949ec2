"""How long each page is to read: words of prose, long sentences, and where its first figure is.

    tools/page_stats.py nbs/*.ipynb            a table, one row per page
    tools/page_stats.py --json nbs/*.ipynb     the same rows as one JSON list

Prose is the text of the Markdown cells without their tables, display maths, fenced code, HTML
comments and the title's `> summary` line; a word is a run of characters between spaces. A sentence
ends at '.', '!' or '?' followed by a space and a capital letter, a digit or a bracket, and at the
end of a paragraph, a heading or a list item; the abbreviations the pages use ('e.g.', 'et al.',
'Fig.') end none. The first figure is the first cell that shows
an image: a PNG or SVG output, or a Markdown image; its place is the cell's index over the
page's cells, so 0.25 is a quarter of the way down.
"""

import argparse
import json
import re
import sys
from pathlib import Path

ABBREVIATIONS = ('e.g.', 'i.e.', 'et al.', 'Fig.', 'Figs.', 'vs.', 'cf.', 'resp.', 'approx.')
SENTENCE_END = re.compile(r'(?<=[.!?])\s+(?=[A-Z0-9(\[`*"])')
LONG = 60  # words: the limit for a sentence on a main page


def prose(markdown: str) -> str:
    "The prose of one Markdown cell: no tables, display maths, code, comments or `> summary` lines."
    text = re.sub(r'<!--.*?-->', ' ', markdown, flags=re.S)
    text = re.sub(r'\$\$.*?\$\$', ' ', text, flags=re.S)
    text = re.sub(r'^\s*```.*?^\s*```[^\n]*', ' ', text, flags=re.S | re.M)  # fenced code
    lines = [
        line
        for line in text.splitlines()
        if not line.lstrip().startswith(('|', '> ', '#|')) and line.strip() != '>'
    ]
    return '\n'.join(lines)


def words(text: str) -> list:
    "The words of `text`, without list markers and heading marks."
    return [w for w in text.split() if not re.fullmatch(r'[-*+#]+|\d+\.', w)]


def sentences(text: str) -> list:
    "The sentences of `text`, its abbreviations kept inside them."
    masked = text
    for a in ABBREVIATIONS:
        masked = masked.replace(a, a.replace('.', '\0'))
    return [s.replace('\0', '.') for s in SENTENCE_END.split(' '.join(masked.split())) if s]


def parts(text: str) -> list:
    "The paragraphs, headings and list items of `text`: no sentence runs from one to the next."
    return [p for p in re.split(r'\n\s*\n|\n(?=\s*(?:[-*+]|\d+\.|#+)\s)', text) if p.strip()]


def shows_image(cell) -> bool:
    "Whether a cell shows a figure: an image output, or a Markdown image."
    if cell['cell_type'] == 'markdown':
        return bool(re.search(r'!\[[^\]]*\]\(', ''.join(cell['source'])))
    return any(
        {'image/png', 'image/svg+xml', 'image/jpeg'} & set(o.get('data', {}))
        for o in cell.get('outputs', [])
    )


def page_stats(path) -> dict:
    "Words of prose, sentences, those over `LONG` words, and the first figure's place of a page."
    cells = json.loads(Path(path).read_text())['cells']
    text = '\n\n'.join(prose(''.join(c['source'])) for c in cells if c['cell_type'] == 'markdown')
    said = [s for part in parts(text) for s in sentences(part)]
    lengths = [len(words(s)) for s in said]
    first = next((i for i, c in enumerate(cells) if shows_image(c)), None)
    return dict(
        page=Path(path).stem,
        words=len(words(text)),
        sentences=len(said),
        over_60=sum(n > LONG for n in lengths),
        longest=max(lengths, default=0),
        cells=len(cells),
        first_figure=first,
        first_figure_at=None if first is None else round(first / len(cells), 2),
    )


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('notebooks', nargs='+')
    p.add_argument('--json', action='store_true', help='print the rows as one JSON list')
    args = p.parse_args(argv)
    rows = [page_stats(n) for n in args.notebooks]
    if args.json:
        print(json.dumps(rows))
        return
    keys = list(rows[0])
    print(' | '.join(keys))
    for r in rows:
        print(' | '.join('' if r[k] is None else str(r[k]) for k in keys))


if __name__ == '__main__':
    sys.exit(main())
