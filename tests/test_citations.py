"""Each source is cited in one form on every page, and no page puts a cited year in parentheses.

The in-text form is `Surname YEAR`, `Surname and Surname YEAR` or `Surname et al. YEAR`; a title
follows in double quotes (`Ahegbebu 2021, "Wrapping Up"`). A page's list of its sources may name
every author before the title (`Bai, Kolter and Koltun 2019, "Deep Equilibrium Models"`); anywhere
else a source of three or more authors is `First et al. YEAR`. The checks read the Markdown cells
and stored outputs of every notebook, and README.md, as JSON and text: they take about a second."""

import json
import re
from collections import defaultdict
from conftest import ROOT

YEAR = r'(?:19|20)\d\d'
NAME = r'(?:van )?[A-Z][\w-]*'  # a surname: Giró-i-Nieto, Jolicoeur-Martineau, van Hoof
# a year in parentheses after a name or a title: Graves (2016), Yang et al. (2024, Figure 2),
# "Wrapping Up" (2021); or after a comma: Nanda and Bloom, 2022
PARENTHESISED = re.compile(rf'(?:\b[A-Z][\w-]*|\bet al\.|")\s\({YEAR}\b|\b[A-Z][\w-]*, {YEAR}\b')
CITATION = re.compile(
    rf'\b(?P<authors>{NAME}(?:(?:, {NAME})* and {NAME}| et al\.)?) (?P<year>{YEAR})\b(?![.,]\d)'
    r'(?P<title>,? \(?"(?P<name>[^"\n]+)")?'
)
NOT_AUTHORS = {'NeurIPS', 'ICML', 'ICLR', 'CVPR'}  # a venue and its year


def page_texts() -> dict:
    "Each notebook's Markdown cells and stored outputs as one text, by name; and README.md."
    pages = {'README.md': (ROOT / 'README.md').read_text()}
    for path in sorted((ROOT / 'nbs').glob('*.ipynb')):
        out = []
        for c in json.loads(path.read_text())['cells']:
            if c['cell_type'] == 'markdown':
                out.append(''.join(c['source']))
            for o in c.get('outputs', []):
                data = o.get('data', {})
                text = data.get('text/markdown') or data.get('text/plain') or o.get('text', [])
                out.append(''.join(text))
        pages[path.name] = '\n\n'.join(out)
    return pages


def parenthesised(text: str) -> list:
    "The citations of `text` that put their year in parentheses or after a comma."
    return [m.group(0) for m in PARENTHESISED.finditer(text)]


def form_problems(pages: dict) -> list:
    "What breaks one form per source across `pages` (name: text): each problem in words."
    short, full, titles, problems = defaultdict(set), defaultdict(set), set(), []
    for page, text in pages.items():
        for m in CITATION.finditer(text):
            authors, year = m['authors'], m['year']
            first = authors.split(',')[0].split(' et al.')[0].split(' and ')[0]
            if first in NOT_AUTHORS:
                continue
            if m['title']:
                titles.add(m['name'])
            if ', ' not in authors:
                short[first, year].add(authors)
                continue
            full[first, year].add(authors)  # three or more authors named
            if not m['title']:
                problems.append(f'{page}: "{authors} {year}" names every author, not a title\'s')
    either = lambda forms: ' and as '.join(sorted(forms))
    for (first, year), forms in sorted(short.items()):
        if len(forms) > 1:
            problems.append(f'{first} {year} is cited as {either(forms)}')
        if full.get((first, year)) and forms != {f'{first} et al.'}:
            problems.append(
                f'{first} {year}, of three or more authors, is cited as {either(forms)}'
            )
    for (first, year), forms in sorted(full.items()):
        if len(forms) > 1:
            problems.append(f'{first} {year} names its authors as {either(forms)}')
    for page, text in pages.items():
        problems += [f"{page}: '{t}' in single quotes" for t in sorted(titles) if f"'{t}'" in text]
    return problems


def test_no_page_puts_a_cited_year_in_parentheses():
    found = {page: parenthesised(text) for page, text in page_texts().items()}
    assert {page: f for page, f in found.items() if f} == {}


def test_each_source_has_one_form():
    pages = page_texts()
    assert sum(len(CITATION.findall(text)) for text in pages.values()) > 200  # the pages are read
    assert form_problems(pages) == []


def test_the_checks_catch_made_up_citations():
    bad = 'As Graves (2016) and Yang et al. (2024, Figure 2) show, and "Wrapping Up" (2021) and '
    assert parenthesised(bad + '(Nanda and Bloom, 2022)') == [
        'Graves (2016',
        'et al. (2024',
        '" (2021',
        'Bloom, 2022',
    ]
    assert parenthesised('Graves 2016 and Yang et al. 2024 (Figure 2); NeurIPS 2019') == []
    sources = 'Bai, Kolter and Koltun 2019, "Deep Equilibrium Models"; Ahegbebu 2021, "Wrapping Up"'
    good = {'a.ipynb': sources, 'b.ipynb': 'As Bai et al. 2019 and Ahegbebu 2021 find, in 2019.'}
    assert form_problems(good) == []
    bad = "Bai and Kolter 2019 and Palm, Paquet and Winther 2018; Ahegbebu 2021, 'Wrapping Up'"
    assert form_problems(good | {'c.ipynb': bad}) == [
        'c.ipynb: "Palm, Paquet and Winther 2018" names every author, not a title\'s',
        'Bai 2019 is cited as Bai and Kolter and as Bai et al.',
        'Bai 2019, of three or more authors, is cited as Bai and Kolter and as Bai et al.',
        "c.ipynb: 'Wrapping Up' in single quotes",
    ]
