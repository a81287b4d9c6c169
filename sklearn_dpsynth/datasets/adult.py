"""The UCI Adult (census income) table with a public domain.

A copy of the table ships with the package (``data/adult.csv.gz``, 30,162
rows: the UCI training file ``adult.data`` without the rows that have
missing values, with a header line), so :func:`load_adult` works offline.
Source: Becker, B. and Kohavi, R. (1996), *Adult*, UCI Machine Learning
Repository, https://doi.org/10.24432/C5XW20, licensed under Creative
Commons Attribution 4.0 (CC BY 4.0); see ``data/README``.
"""

from __future__ import annotations

import os
from importlib import resources
from typing import Any

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

__all__ = ["load_adult", "ADULT_DOMAIN", "bundled_adult_path"]

_COLUMNS = ["age", "type_employer", "fnlwgt", "education", "education_num", "marital",
            "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
            "hr_per_week", "country", "income"]

_OPENML_NAMES = {"workclass": "type_employer", "education-num": "education_num",
                 "marital-status": "marital", "capital-gain": "capital_gain",
                 "capital-loss": "capital_loss", "hours-per-week": "hr_per_week",
                 "native-country": "country", "class": "income"}

#: Public domain of Adult: bounds and category lists from the UCI
#: documentation (``adult.names``), not from the data.
ADULT_DOMAIN: dict[str, Any] = {
    "age": (17, 90),
    "type_employer": ["Federal-gov", "Local-gov", "Never-worked", "Private", "Self-emp-inc",
                      "Self-emp-not-inc", "State-gov", "Without-pay"],
    "fnlwgt": (10_000, 1_500_000),
    "education": ["10th", "11th", "12th", "1st-4th", "5th-6th", "7th-8th", "9th",
                  "Assoc-acdm", "Assoc-voc", "Bachelors", "Doctorate", "HS-grad",
                  "Masters", "Preschool", "Prof-school", "Some-college"],
    "education_num": (1, 16),
    "marital": ["Divorced", "Married-AF-spouse", "Married-civ-spouse",
                "Married-spouse-absent", "Never-married", "Separated", "Widowed"],
    "occupation": ["Adm-clerical", "Armed-Forces", "Craft-repair", "Exec-managerial",
                   "Farming-fishing", "Handlers-cleaners", "Machine-op-inspct",
                   "Other-service", "Priv-house-serv", "Prof-specialty", "Protective-serv",
                   "Sales", "Tech-support", "Transport-moving"],
    "relationship": ["Husband", "Not-in-family", "Other-relative", "Own-child",
                     "Unmarried", "Wife"],
    "race": ["Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White"],
    "sex": ["Female", "Male"],
    # most people have no capital gain or loss: 0 is an exact point mass
    "capital_gain": {"bounds": (0, 100_000), "points": [0]},
    "capital_loss": {"bounds": (0, 4_500), "points": [0]},
    "hr_per_week": (1, 99),
    "country": ["Cambodia", "Canada", "China", "Columbia", "Cuba", "Dominican-Republic",
                "Ecuador", "El-Salvador", "England", "France", "Germany", "Greece",
                "Guatemala", "Haiti", "Holand-Netherlands", "Honduras", "Hong", "Hungary",
                "India", "Iran", "Ireland", "Italy", "Jamaica", "Japan", "Laos", "Mexico",
                "Nicaragua", "Outlying-US(Guam-USVI-etc)", "Peru", "Philippines", "Poland",
                "Portugal", "Puerto-Rico", "Scotland", "South", "Taiwan", "Thailand",
                "Trinadad&Tobago", "United-States", "Vietnam", "Yugoslavia"],
    "income": ["<=50K", ">50K"],
}

#: Columns the UCI documentation lists with unknown values (``?``): with
#: ``missing="keep"`` their domain has a missing code, whatever rows are read.
_DOCUMENTED_MISSING = ("type_employer", "occupation", "country")

_INTEGER_COLUMNS = ["age", "fnlwgt", "education_num", "capital_gain", "capital_loss",
                    "hr_per_week"]


def load_adult(path: str | os.PathLike | None = None, *, missing: str = "keep") -> Bunch:
    """Load the UCI Adult table with its public domain.

    Parameters
    ----------
    path : str or path-like, optional
        A comma-separated file in the raw UCI format with a header line
        (columns as in ``adult_raw/adult.data``: age, type_employer, fnlwgt,
        education, education_num, marital, occupation, relationship, race,
        sex, capital_gain, capital_loss, hr_per_week, country, income).
        When omitted, the copy shipped with the package is read (30,162
        rows, no missing values; UCI Adult, CC BY 4.0).  ``"openml"``
        fetches the full table (48,842 rows) from OpenML instead (needs a
        network) and renames its columns to these.
    missing : {"keep", "drop"}, default="keep"
        Rows with missing values (``?`` in the UCI files): kept as missing
        values or dropped.  With ``"keep"`` the domain reserves a missing
        code for the three columns that the UCI documentation lists with
        unknown values (``type_employer``, ``occupation``, ``country``),
        whether or not the rows read contain one, so that the domain never
        depends on the data.

    Returns
    -------
    data : sklearn.utils.Bunch
        ``frame`` (DataFrame: integer columns as int64, or Int64 when
        missing values are kept; categories as strings), ``domain`` (the
        public domain, a dict usable as ``domain=``), ``target_name``
        (``"income"``) and ``DESCR``.

    Examples
    --------
    >>> data = load_adult()
    >>> data.frame.shape
    (30162, 15)
    >>> data.domain["sex"]
    ['Female', 'Male']
    """
    if missing not in ("keep", "drop"):
        raise ValueError(f"missing must be 'keep' or 'drop', got {missing!r}.")
    if path is None:
        frame = _read_raw(bundled_adult_path())
    elif isinstance(path, str) and path == "openml":
        frame = _fetch_openml()
    else:
        frame = _read_raw(path)
    frame = _tidy(frame)
    if missing == "drop":
        frame = frame.dropna().reset_index(drop=True)
    frame = _cast_integers(frame)
    # the missing codes come from the UCI documentation, not from the rows read
    documented = _DOCUMENTED_MISSING if missing == "keep" else ()
    domain = {c: _with_missing(ADULT_DOMAIN[c], c in documented) for c in _COLUMNS}
    return Bunch(frame=frame, domain=domain, target_name="income",
                 DESCR="UCI Adult census income table (Kohavi 1996); public domain from "
                       "the UCI documentation.")


def bundled_adult_path() -> os.PathLike:
    """Path of the Adult table shipped with the package (gzip-compressed CSV).

    Returns
    -------
    path : path-like
        ``sklearn_dpsynth/datasets/data/adult.csv.gz``.
    """
    return resources.files(__package__).joinpath("data", "adult.csv.gz")


def _read_raw(path) -> pd.DataFrame:
    frame = pd.read_csv(path, skipinitialspace=True, na_values=["?"])
    missing = [c for c in _COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{os.fspath(path)!r} lacks the Adult columns {missing}.")
    return frame[_COLUMNS]


def _fetch_openml() -> pd.DataFrame:
    from sklearn.datasets import fetch_openml
    bunch = fetch_openml("adult", version=2, as_frame=True)
    frame = bunch.frame.rename(columns=_OPENML_NAMES)
    return frame[_COLUMNS]


def _tidy(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    for column in _COLUMNS:
        if column in _INTEGER_COLUMNS:
            continue
        values = frame[column].astype(object)
        values = values.map(lambda v: v.strip().rstrip(".") if isinstance(v, str) else v)
        frame[column] = values.where(values.notna() & (values != "?"), np.nan).astype(object)
    return frame


def _cast_integers(frame: pd.DataFrame) -> pd.DataFrame:
    for column in _INTEGER_COLUMNS:
        values = pd.to_numeric(frame[column])
        frame[column] = values.astype("Int64" if values.isna().any() else "int64")
    for column in _COLUMNS:
        if column not in _INTEGER_COLUMNS:
            frame[column] = frame[column].astype("str" if not frame[column].isna().any()
                                                 else object)
    return frame


def _with_missing(entry: Any, has_missing: bool) -> Any:
    if not has_missing:
        return entry
    if isinstance(entry, list):
        return entry + [None]
    return {"bounds": entry, "missing": True}
