"""Compiled and trained RASP models as TransformerLens's `HookedTransformer`.

Its logits equal ours on 200 random inputs of every library program, a trained encoder's equal its
own, `ttc rasp --compile --lens OUT` writes a file that loads back (with this library or with
TransformerLens alone), and without the optional extra the user gets one line naming the command
that installs it. The tests that need TransformerLens are skipped, with that reason, without it."""

import subprocess
import sys
from importlib.util import find_spec
import numpy as np
import pytest
import torch
from conftest import ttc, one_line_error
from ttc_nb.errors import UsageError
from ttc_nb.core.transformer import TransformerConfig
from ttc_nb.rasp.interpreter import library
from ttc_nb.rasp.programs import PROGRAMS
from ttc_nb.rasp.train import RASPTransformer, sample_inputs
from ttc_nb.rasp.compiler.assemble import compile_rasp, library_vocab
from ttc_nb.rasp.compiler.lens import (
    INSTALL,
    lens_tokens,
    lens_values,
    load_lens,
    our_logits,
    save_lens,
    to_hooked_transformer,
)

needs_lens = pytest.mark.skipif(
    find_spec('transformer_lens') is None,
    reason=f'TransformerLens is not installed (the optional extra: {INSTALL})',
)
MAX_LEN, INPUTS, TOL = 8, 200, 1e-5


@needs_lens
@pytest.mark.parametrize('name', list(PROGRAMS))
def test_logits_equal_ours_for_every_library_program(name):
    p = library(name)
    m = compile_rasp(p, library_vocab(name), MAX_LEN)
    lens = to_hooked_transformer(m)
    xs = sample_inputs(
        name, INPUTS, 4, 1, MAX_LEN - name.endswith('_bos'), np.random.default_rng(1)
    )
    assert len({len(x) for x in xs}) > 1  # one padded batch: the pads are masked as ours are
    real = m.encode(xs)[1]
    with torch.no_grad():
        theirs = lens(lens_tokens(m, xs))
    assert (theirs - our_logits(m, xs))[real].abs().max().item() < TOL
    out = next(k for k, v in p.sops.items() if v is p.output)
    assert [v.tolist() for v in lens_values(lens, m, xs)] == [p(x, out)[out] for x in xs]


@needs_lens
@pytest.mark.parametrize('name', ['hist2_bos', 'sort'])
def test_the_mapping_is_exact_for_any_weights(name):
    "Weights moved off the construction: attention no longer hard, so scale and pads show."
    torch.manual_seed(0)
    m = compile_rasp(library(name), library_vocab(name), 6)
    with torch.no_grad():
        for q in m.parameters():
            q.add_(0.3 * torch.randn_like(q))
    lens = to_hooked_transformer(m)
    xs = sample_inputs(name, 50, 4, 1, 6 - name.endswith('_bos'), np.random.default_rng(2))
    real = m.encode(xs)[1]
    ours = our_logits(m, xs)[real]
    with torch.no_grad():
        theirs = lens(lens_tokens(m, xs))[real]
    assert ((theirs - ours).abs().max() / ours.abs().max()).item() < TOL


@needs_lens
@pytest.mark.parametrize(
    'kw',
    [
        dict(),
        dict(gelu='tanh', positions='sinusoidal'),
        dict(relu=True, positions='none', bias=False),
        dict(causal=True, n_heads=2),
    ],
)
def test_a_trained_encoders_logits_equal_its_own(kw):
    torch.manual_seed(0)
    cfg = TransformerConfig(**(dict(d_model=32, n_heads=4, n_layers=2, max_len=9) | kw))
    model = RASPTransformer(cfg, 7, 5).eval()
    with torch.no_grad():
        for p in model.parameters():  # LayerNorms and biases away from 1 and 0, too
            p.add_(0.1 * torch.randn_like(p))
    lens = to_hooked_transformer(model)
    x = torch.randint(1, 7, (16, 9))  # no pads
    with torch.no_grad():
        assert (lens(x) - model(x).final).abs().max().item() < TOL


@needs_lens
def test_cli_lens_file_loads_back(tmp_path):
    r = ttc('rasp', 'lib:hist2_bos', '--compile', '--lens', tmp_path / 'h.pt', '--max-len', '6')
    assert r.returncode == 0 and r.stdout.startswith(f'{tmp_path / "h.pt"}: HookedTransformer'), (
        r.stderr
    )
    m = compile_rasp(library('hist2_bos'), library_vocab('hist2_bos'), 6)
    xs = ['§abca', '§b', '§ddddd', '§abc']
    real = m.encode(xs)[1]
    lens, meta = load_lens(tmp_path / 'h.pt')
    assert meta['vocab'] == list(library_vocab('hist2_bos')) and meta['pad'] == len(m.vocab) + 1
    # TransformerLens alone, as the page documents
    from transformer_lens import HookedTransformer, HookedTransformerConfig

    f = torch.load(tmp_path / 'h.pt', weights_only=True)
    plain = HookedTransformer(HookedTransformerConfig(**f['config']))
    plain.load_state_dict(plain.state_dict() | f['weights'])
    with torch.no_grad():
        for model in (lens, plain):
            assert (model(lens_tokens(m, xs)) - our_logits(m, xs))[real].abs().max() < TOL


def test_missing_extra_is_one_clear_line(tmp_path, monkeypatch):
    m = compile_rasp(library('reverse'), 'abcd', 4)
    save_lens(m, tmp_path / 'r.pt')  # writing needs PyTorch alone
    monkeypatch.setitem(sys.modules, 'transformer_lens', None)  # as if it were not installed
    for f in (lambda: to_hooked_transformer(m), lambda: load_lens(tmp_path / 'r.pt')):
        with pytest.raises(UsageError) as e:
            f()
        assert str(e.value) == f'TransformerLens is not installed; to install it: {INSTALL}'


def test_cli_lens_errors_exit_2_with_one_line(tmp_path):
    one_line_error(
        ttc('rasp', 'lib:sort', '--lens', tmp_path / 'x.pt'),
        line='ttc: error: --lens goes with --compile',
    )
    one_line_error(
        ttc('rasp', 'lib:sort', '--compile', '--lens', tmp_path / 'x.pt', '--input', 'ab'),
        line='ttc: error: --lens writes the model: it does not go with --analyse or --input',
    )


def imports(module: str, *argv) -> bool:
    "Whether `ttc ARGV` imports `module`, run in a fresh Python."
    code = (
        f'import sys\nfrom ttc_nb.cli import main\nmain({list(map(str, argv))!r})\n'
        f'print({module!r} in sys.modules, file=sys.stderr)'
    )
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stderr.splitlines()[-1] == 'True'


def test_transformer_lens_is_imported_only_when_asked_for(tmp_path):
    assert not imports('transformer_lens', 'rasp', 'lib:sort', '--input', 'abc')
    assert not imports('transformer_lens', 'rasp', 'lib:sort', '--input', 'abc', '--compile')
    assert not imports(
        'transformer_lens', 'rasp', 'lib:sort', '--compile', '--lens', tmp_path / 's.pt'
    )
