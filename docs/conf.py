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
]
autosummary_generate = True
autodoc_default_options = {
    "members": True,
    "inherited-members": False,
    # scikit-learn's metadata-routing setters carry sklearn-internal cross references
    "exclude-members": ("set_fit_request, set_score_request, set_transform_request, "
                        "set_inverse_transform_request, set_output, set_params, get_params, "
                        "get_metadata_routing, fit_transform"),
}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
templates_path = ["_templates"]
exclude_patterns = ["_build", "examples/*.py"]
html_theme = "alabaster"
html_static_path = []
nitpicky = False
suppress_warnings = ["autosummary.import_cycle"]
