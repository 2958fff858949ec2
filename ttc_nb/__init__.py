"""Test-time compute, literately: models that get better the more they think, reproduced."""

__version__ = '0.0.1'

# The names a user starts with, imported from their modules when first used, so that
# `import ttc_nb` stays light (`ttc rasp` runs without PyTorch).
_STARTERS = {
    'Recurrent': 'ttc_nb.core.protocol',
    'Thoughts': 'ttc_nb.core.protocol',
    'compute_curve': 'ttc_nb.core.protocol',
    'TrainConfig': 'ttc_nb.train.fit',
    'Setup': 'ttc_nb.train.fit',
    'fit': 'ttc_nb.train.fit',
    'get_experiment': 'ttc_nb.runs.registry',
    'run_experiment': 'ttc_nb.runs.registry',
    'ensure_run': 'ttc_nb.runs.registry',
    'load_run': 'ttc_nb.runs.registry',
}
__all__ = ['__version__', *_STARTERS]


def __getattr__(name):
    "A starter name of `_STARTERS`, imported from its module on first use."
    if name not in _STARTERS:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    import importlib

    return getattr(importlib.import_module(_STARTERS[name]), name)
