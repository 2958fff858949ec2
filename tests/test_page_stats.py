"""tools/page_stats.py counts what a reader reads: prose, long sentences, the first figure."""

import json
import sys
from conftest import ROOT

sys.path.insert(0, str(ROOT / 'tools'))
import page_stats as P


def notebook(tmp_path, cells):
    path = tmp_path / 'page.ipynb'
    path.write_text(json.dumps({'cells': cells}))
    return path


def md(text):
    return {'cell_type': 'markdown', 'source': [text]}


def code(outputs=()):
    return {'cell_type': 'code', 'source': ['x = 1'], 'outputs': list(outputs)}


def test_prose_sentences_and_the_first_figure(tmp_path):
    long = ' '.join(['word'] * 61) + '.'
    path = notebook(
        tmp_path,
        [
            md('# Title\n\n> A summary that is not prose'),
            md('One sentence, e.g. this one. Another (et al. 2021) ends here.\n\n| a |\n|---|'),
            code(),
            md(f'- an item without a stop\n- {long}\n\n$$x = 1$$'),
            code([{'data': {'image/png': 'iVBOR'}}]),
        ],
    )
    s = P.page_stats(path)
    assert s['sentences'] == 5  # the title, two sentences, two list items
    assert (s['over_60'], s['longest']) == (1, 61)
    assert s['words'] == 1 + 11 + 5 + 61  # no table, summary, display maths or list marker
    assert (s['first_figure'], s['first_figure_at'], s['cells']) == (4, 0.8, 5)


def test_fenced_code_is_not_prose(tmp_path):
    fence = '```\nttc run ' + ' '.join(['--set x=1'] * 40) + '\n```'
    s = P.page_stats(notebook(tmp_path, [md(f'Before it.\n\n{fence}\n\nAfter it.')]))
    assert (s['sentences'], s['words'], s['longest']) == (2, 4, 2)


def test_a_page_without_a_figure(tmp_path):
    s = P.page_stats(notebook(tmp_path, [md('Only words here.')]))
    assert (s['first_figure'], s['first_figure_at'], s['words']) == (None, None, 3)
