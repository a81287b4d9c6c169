"""Sphinx configuration for sklearn-dpsynth."""

import os
import sys

sys.path.insert(0, os.path.abspath(".."))

import sklearn_dpsynth  # noqa: E402

project = "sklearn-dpsynth"
author = "sklearn-dpsynth developers"
copyright = "2026, sklearn-dpsynth developers"
release = sklearn_dpsynth.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]
autosummary_generate = True
autodoc_default_options = {
    "members": True,
    # scikit-learn's metadata-routing setters carry sklearn-internal cross references
    "exclude-members": ("set_fit_request, set_score_request, set_transform_request, "
                        "set_inverse_transform_request, set_output, set_params, get_params, "
                        "get_metadata_routing, fit_transform"),
}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
templates_path = ["_templates"]
exclude_patterns = ["_build", "gallery", "auto_examples/*.ipynb", "auto_examples/**/*.ipynb"]
html_theme = "pydata_sphinx_theme"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_title = f"sklearn-dpsynth {release}"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc", "sourcelink"],
}
html_sidebars = {"index": [], "install": [], "quickstart": []}

# The gallery: every ``docs/gallery/**/plot_*.py`` is executed at build time
# (small settings, the bundled Adult table: no network) and rendered with its
# printed output and figures into ``docs/auto_examples/`` (generated, ignored
# by git).  A failing example fails the build.
os.environ.setdefault("MPLBACKEND", "Agg")
sphinx_gallery_conf = {
    "examples_dirs": "gallery",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "subsection_order": [
        "gallery/start",
        "gallery/marginal",
        "gallery/neural",
        "gallery/public",
    ],
    "within_subsection_order": "FileNameSortKey",
    "plot_gallery": "True",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "remove_config_comments": True,
    "download_all_examples": False,
    "capture_repr": ("_repr_html_", "__repr__"),
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
    "show_memory": False,
    "min_reported_time": 1,
    "write_computation_times": True,
}
# Broken cross-references fail the ``-W`` build.  The build runs offline (no
# intersphinx inventories), so the types of the libraries below have no target;
# they are ignored by name.  Everything of sklearn_dpsynth must resolve.
nitpicky = True
_EXTERNAL_CLASSES = (
    "numpy.ndarray",
    "numpy.dtype",
    "numpy.random._generator.Generator",  # how numpy.random.Generator annotations resolve
    "pandas.DataFrame",
    "pandas.Series",
    "collections.abc.Mapping",
    "collections.abc.Sequence",
    "collections.abc.Iterable",
    "collections.abc.Callable",
    "torch.device",
    "torch.nn.modules.module.Module",  # how torch.nn.Module annotations resolve
    # the training loop's option records: internal, documented in neural/dpsgd.py
    "sklearn_dpsynth.neural.dpsgd.DPSGDConfig",
    "sklearn_dpsynth.neural.dpsgd.PrivacyRecord",
    "sklearn_dpsynth.neural.dpsgd.TrainingConfig",
    "sklearn_dpsynth.neural.dpsgd.TrainingReport",
    "os.PathLike",
    "scipy.sparse._matrix.spmatrix",  # how scipy.sparse.spmatrix annotations resolve
    "sklearn.utils._bunch.Bunch",  # how sklearn.utils.Bunch annotations resolve
)
nitpick_ignore = [("py:class", name) for name in _EXTERNAL_CLASSES] + [
    ("py:func", "scipy.stats.ks_2samp"),
]
suppress_warnings = ["autosummary.import_cycle"]
