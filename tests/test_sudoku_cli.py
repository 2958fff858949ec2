"""`ttc sudoku` as a user meets it: solutions on stdout, exit codes, one-line errors.

Exit code 1 when there is no solution; one-line errors with exit code 2."""

import pytest
from conftest import ttc
from ttc_nb.sudoku.puzzles import parse_board, count_solutions

INKALA = '8..........36......7..9.2...5...7.......457.....1...3...1....68..85...1..9....4..'
INKALA_SOLUTION = (
    '812753649943682175675491283154237896369845721287169534521974368438526917796318452'
)


def one_line(r, code, *needles):
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and 'Traceback' not in r.stderr, r.stderr
    for n in needles:
        assert n in lines[0], lines[0]


def test_solve_prints_the_solution():
    r = ttc('sudoku', 'solve', INKALA)
    assert r.returncode == 0, r.stderr
    assert r.stdout == INKALA_SOLUTION + '\n'


def test_solve_grid_and_zeros_for_blanks():
    r = ttc('sudoku', 'solve', INKALA.replace('.', '0'), '--grid')
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == '8 1 2 | 7 5 3 | 6 4 9'


def test_unsolvable_exits_1_with_one_line():
    r = ttc(
        'sudoku', 'solve', '12345678.' + '........9' + '.' * 63
    )  # no digit repeated, but no place for 9 in row 1
    one_line(r, 1, 'no solution')
    assert r.stdout == ''


@pytest.mark.parametrize(
    'puzzle,needles',
    [
        (INKALA[:-1], ['expected 81 cells for a 9x9 board, got 80']),
        (INKALA[:5] + 'x' + INKALA[6:], ["bad character 'x' at row 1, column 6"]),
        ('88' + INKALA[2:], ['digit 8 is repeated in row 1', '(1, 1), (1, 2)']),
        (
            '8' + INKALA[1:9] + '8' + INKALA[10:],
            ['digit 8 is repeated in column 1', '(1, 1), (2, 1)'],
        ),
    ],
)
def test_invalid_puzzle_exits_2_with_one_line(puzzle, needles):
    r = ttc('sudoku', 'solve', puzzle)
    one_line(r, 2, 'ttc: error:', *needles)
    assert r.stdout == ''


def test_bad_box_and_givens_exit_2():
    one_line(ttc('sudoku', 'solve', INKALA, '--box', '3by3'), 2, "'3by3' is not a box shape")
    one_line(ttc('sudoku', 'generate', '--givens', '82'), 2, 'givens must be 0 to 81')
    one_line(ttc('sudoku'), 2, 'required')


def test_generate_is_unique_and_deterministic():
    r = ttc('sudoku', 'generate', '--givens', '30', '--seed', '1')
    assert r.returncode == 0, r.stderr
    p = r.stdout.strip()
    assert len(p) == 81 and sum(ch != '0' for ch in p) == 30
    assert count_solutions(parse_board(p)) == 1
    assert ttc('sudoku', 'generate', '--givens', '30', '--seed', '1').stdout.strip() == p
    assert ttc('sudoku', 'generate', '--givens', '30', '--seed', '2').stdout.strip() != p


def test_box_2x2():
    r = ttc('sudoku', 'generate', '--givens', '6', '--seed', '0', '--box', '2x2')
    assert r.returncode == 0, r.stderr
    p = r.stdout.strip()
    assert len(p) == 16 and sum(ch != '0' for ch in p) == 6
    s = ttc('sudoku', 'solve', p, '--box', '2x2')
    assert s.returncode == 0, s.stderr
    solution = s.stdout.strip()
    assert sorted(solution[:4]) == ['1', '2', '3', '4'] and all(
        a in '0' + b for a, b in zip(p, solution)
    )
    assert count_solutions(parse_board(p, (2, 2)), box=(2, 2)) == 1


# `ttc run sudoku-trm --set data=DIR` on Sudoku-Extreme's files: trains, or stops at a damaged row.
def extreme_files(d, damage=None):
    "train.csv and test.csv in `d`, in Sudoku-Extreme's format, with `damage` done to test.csv."
    row = f'ours,{INKALA},{INKALA_SOLUTION},83'
    (d / 'train.csv').write_text('source,question,answer,rating\n' + '\n'.join([row] * 4) + '\n')
    test = ['source,question,answer,rating', row, row]
    if damage:
        test[2] = damage(row)
    (d / 'test.csv').write_text('\n'.join(test) + '\n')
    return d


TINY_TRM = [
    *('--set', 'd_model=16', '--set', 'n=1', '--set', 'cycles=1', '--set', 'prefix=1'),
    *('--set', 'multiple=8', '--set', 'train_size=2', '--set', 'valid_size=2'),
    *('--set', 'test_size=2', '--set', 'batch_size=2', '--set', 'eval_batch=2'),
    *('--set', 'updates=2', '--set', 'train_steps=1', '--set', 'test_steps=1,2'),
]


def train_tiny_trm(data, out):
    "`ttc run sudoku-trm` of a TRM of width 16 for 2 updates on the Sudoku-Extreme files in `data`."
    return ttc(
        'run',
        'sudoku-trm',
        '--preset',
        'ci',
        '--set',
        'box=3,3',
        '--set',
        f'data={data}',
        *TINY_TRM,
        '--out',
        out,
    )


def test_trm_trains_on_sudoku_extreme_files(tmp_path):
    data = extreme_files(tmp_path)
    r = train_tiny_trm(data, tmp_path / 'run')
    assert r.returncode == 0, r.stderr
    assert 'rating-64+' in r.stdout or 'rating-16+' in r.stdout, r.stdout


@pytest.mark.parametrize(
    'damage,needles',
    [
        (lambda row: row.replace(',83', ',8x'), ['test.csv, line 3, column', "rating '8x'"]),
        (lambda row: row.replace('8..', '8x.', 1), ['test.csv, line 3, column 7', "'x'"]),
        (
            lambda row: row.replace(INKALA_SOLUTION, INKALA_SOLUTION[1:]),
            ['line 3, column 88', 'not 81'],
        ),
    ],
)
def test_a_damaged_row_exits_2_with_its_line(tmp_path, damage, needles):
    data = extreme_files(tmp_path, damage)
    r = train_tiny_trm(data, tmp_path / 'run')
    one_line(r, 2, *needles)
