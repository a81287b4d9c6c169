"""Parameter documentation shared by the synthesizers, written once.

A class docstring names a shared entry by a placeholder line ``%(name)s``
standing alone on its line, indented as the text it stands for; the
:func:`fill_doc` class decorator replaces it at import time, so that
``help()`` and Sphinx show the full text.  An entry whose type line says
``{default}`` takes the default of the class's own ``__init__`` (so that the
rendered default cannot drift from the code).

>>> @fill_doc
... class Example:
...     '''An example.
...
...     Parameters
...     ----------
...     %(max_categories)s
...     '''
...     def __init__(self, max_categories=99):
...         self.max_categories = max_categories
>>> print(Example.__doc__.splitlines()[4])
    max_categories : int, default=99

Placeholders fill only whole lines, so the rest of a docstring (braces,
percent signs) is left as written.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from typing import TypeVar

__all__ = ["SHARED_DOCS", "fill_doc"]

_T = TypeVar("_T", bound=type)

#: A placeholder line: indentation, then ``%(name)s`` alone.
_PLACEHOLDER = re.compile(r"^(?P<indent>[ \t]*)%\((?P<name>\w+)\)s[ \t]*$", re.MULTILINE)

#: Where an entry's type line takes the signature's default.
_DEFAULT_MARK = "{default}"

_SEED_WARNING = """\
``None`` (the default, and the only choice for a release) draws
fresh operating-system entropy on every fit.  A fixed seed is for
research reproducibility only: **the seed is the noise**, so whoever
knows it can re-run the fit on two neighbouring tables and tell them
apart; it is kept in ``get_params()`` and in a pickle of the model
(:func:`~sklearn_dpsynth.save` drops it unless ``keep_random_state=True``).
Keep it secret and never publish it with a release."""

#: The shared entries, by placeholder name.  A full parameter entry starts
#: with its ``name : type`` line; a fragment (``seed_warning``) is text that
#: goes inside an entry written in the class.
SHARED_DOCS: dict[str, str] = {
    # -- every synthesizer: the public domain and how the rest is learned
    "domain": """\
domain : dict, list, int or None, default={default}
    Public domain: ``{column: entry}`` where an entry is an int ``k``
    (codes ``0..k-1``), a list of categories, a ``(low, high)`` tuple
    (numeric, ``n_bins`` uniform bins) or a dict; a list of entries
    aligned with the columns; or one int for all columns.  Undeclared
    columns are learned as ``preprocessing`` says.""",
    "n_bins": """\
n_bins : int, default={default}
    Uniform bins of numeric columns; an integer column whose bounds hold at most
    ``INTEGER_RESOLUTION_MAX`` (100) integers gets one code per integer
    instead (see :func:`~sklearn_dpsynth.domain.numeric_edges`).""",
    "preprocessing": """\
preprocessing : {"private", "private-lenient", "non-private"}, default={default}
    How undeclared columns' bounds and categories are learned: with a
    ``preprocessing_budget`` share of the budget, or read from the data
    with a :class:`~sklearn_dpsynth.exceptions.PrivacyWarning`.""",
    "preprocessing_budget": """\
preprocessing_budget : float in (0, 1), default={default}
    Share of the zCDP budget (and of ``delta``) spent learning
    undeclared columns; nothing is spent when all are declared.""",
    "max_categories": """\
max_categories : int, default={default}
    Categories kept per learned categorical column (rest -> "other").""",
    "bin_value": """\
bin_value : {"uniform", "midpoint"}, default={default}
    Where a sampled numeric value is placed in its bin: a uniform draw
    within the bin (among its integers for an integer column), or the
    bin's midpoint.  Per-integer codes and declared ``points`` decode
    exactly either way.  Post-processing: it costs no budget.""",
    "seed_warning": _SEED_WARNING,
    # -- the graphical-model methods' renamed iteration caps (AIM, JAM)
    "max_iters_deprecated": """\
max_iters, final_max_iters : int, default="deprecated"
    Deprecated old names of ``max_iter`` and ``final_max_iter``; set,
    they are used and ``fit`` warns (FutureWarning).  They will be
    removed in the next release.""",
    # -- the transformer methods (DP-TBART, SynLM, DP-2Stage)
    "d_model": """\
d_model : int, default={default}
    Transformer width (divisible by ``n_heads``).""",
    "n_layers": """\
n_layers : int, default={default}
    Number of transformer blocks.""",
    "n_heads": """\
n_heads : int, default={default}
    Attention heads.""",
    "d_ff": """\
d_ff : int or None, default={default}
    MLP width; ``4 * d_model`` when None.""",
    "n_threads": """\
n_threads : int or None, default={default}
    torch intra-op CPU threads during fit, sample and score (restored
    afterwards); None leaves torch's setting.  One thread is the default
    because these models are small: on a busy machine, OpenMP threads
    spin-waiting for cores made training several times *slower*
    (measured 6x on a shared 2-core machine).""",
    "verbose_dpsgd": """\
verbose : int, default={default}
    ``1``: one line per epoch on stderr with the step and the epsilon
    spent so far (the ledger's entries before training and the DP-SGD
    steps done), public quantities only.  ``2`` or more also prints the
    mean training loss of the epoch (nats per row), computed on the
    private batches *without noise*, and raises a
    :class:`~sklearn_dpsynth.exceptions.PrivacyWarning` once per fit:
    such a log must stay private.  Pre-training (``pretrain_epochs``)
    prints about ten lines with its loss on the public rows.""",
    "pretrain": """\
pretrain_epochs : float, default=0.0
    Epochs of non-private pre-training on ``fit(..., public_data=P)``
    before the DP-SGD run (0: none).  The public table is public: this
    costs no budget, and the DP-SGD run starts from the pre-trained
    weights.  Requires ``public_data`` when positive, and vice versa.
pretrain_lr : float, default=3e-3
    Peak learning rate of the pre-training.""",
    # -- the reweighting methods on public rows (PMW-pub, MST+public)
    "smoothing_records": """\
smoothing : float in [0, 1), default={default}
    ``lam``, the weight of the independent base measure in the model
    (see Likelihood): ``sample`` draws that share of rows from it.
    ``0`` keeps the records alone (rows outside them score ``-inf``).""",
}

#: Entries that every synthesizer lists together, in this order, after
#: ``domain`` and ``n_bins``: one placeholder ``%(domain_learning)s``.
DOMAIN_LEARNING = ("preprocessing", "preprocessing_budget", "max_categories", "bin_value")
SHARED_DOCS["domain_learning"] = "\n".join(SHARED_DOCS[key] for key in DOMAIN_LEARNING)

#: The parameters of every synthesizer, in the order they open its
#: Parameters: one placeholder ``%(common_parameters)s`` (a class with its own
#: ``n_bins`` text writes ``%(domain)s``, its entry, ``%(domain_learning)s``).
COMMON_PARAMETERS = ("domain", "n_bins") + DOMAIN_LEARNING
SHARED_DOCS["common_parameters"] = "\n".join(SHARED_DOCS[key] for key in COMMON_PARAMETERS)


def fill_doc(cls: _T) -> _T:
    """Class decorator: replace the ``%(name)s`` lines of ``cls.__doc__``.

    Each placeholder becomes the entry ``SHARED_DOCS[name]`` indented as
    the placeholder; ``{default}`` in a parameter's ``name : type`` line
    becomes the default of that parameter in ``cls.__init__``.

    Parameters
    ----------
    cls : type
        The class whose docstring holds placeholders.

    Returns
    -------
    type
        ``cls``, its ``__doc__`` filled in.

    Raises
    ------
    KeyError
        A placeholder names no shared entry.
    ValueError
        A ``{default}`` entry documents a parameter ``cls.__init__`` lacks
        or gives no default.
    """
    if cls.__doc__:
        defaults = _init_defaults(cls)
        cls.__doc__ = _PLACEHOLDER.sub(
            lambda match: _render(match["name"], match["indent"], defaults, cls.__name__),
            cls.__doc__)
    return cls


def _init_defaults(cls: type) -> dict[str, object]:
    """``{parameter: default}`` of ``cls.__init__`` (parameters with one)."""
    parameters = inspect.signature(cls.__init__).parameters
    return {name: p.default for name, p in parameters.items()
            if p.default is not inspect.Parameter.empty}


def _render(name: str, indent: str, defaults: dict[str, object], owner: str) -> str:
    """The entry ``name`` with its default filled in, indented by ``indent``."""
    if name not in SHARED_DOCS:
        raise KeyError(f"{owner}: docstring placeholder %({name})s names no shared entry.")
    lines = SHARED_DOCS[name].split("\n")
    for i, line in enumerate(lines):
        if _DEFAULT_MARK in line and not line[:1].isspace():
            lines[i] = line.replace(_DEFAULT_MARK, _default_of(line, defaults, name, owner))
    text = "\n".join(lines)
    return textwrap.indent(text, indent, lambda line: bool(line.strip()))


def _default_of(header: str, defaults: dict[str, object], name: str, owner: str) -> str:
    """The default, as written in docs, of the parameter an entry's ``header`` names."""
    parameter = header.partition(" : ")[0]
    if parameter not in defaults:
        raise ValueError(f"{owner}: the shared entry {name!r} documents {parameter!r}, "
                         "which its __init__ does not take with a default.")
    return _format_default(defaults[parameter])


def _format_default(value: object) -> str:
    """A default as numpydoc type lines write it: strings in double quotes."""
    return f'"{value}"' if isinstance(value, str) else repr(value)
