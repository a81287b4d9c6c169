"""PMW-pub reweighting: non-negative weights on public records fitting noisy marginals.

Given public records ``x_1..x_n`` and noisy answers ``y_i`` of marginals
``M_i`` (noise ``sigma_i``), the weights solve the non-negative least-squares
problem

    w* = argmin_{w >= 0}  sum_i || (Q_i w - y_i) / sigma_i ||_2^2,

where ``(Q_i w)_c = sum_{x : M_i(x) = c} w_x`` is the (weighted) count of
cell ``c`` of marginal ``i`` over the public records.  Rows are then drawn
from the records with probabilities ``w* / sum(w*)``.  Everything here is
post-processing of the noisy answers and of the public records.
"""

from __future__ import annotations

from typing import Sequence

import warnings

import numpy as np
import scipy.sparse as sp

from .._marginals import project_to_simplex

__all__ = ["query_matrix", "reweight_records", "one_way_estimates", "MISFIT_WARNING_TVD"]

#: ``reweight_records`` warns when the reweighted records' marginals stay this
#: far (mean total variation, beyond the noise) from the noisy answers.
MISFIT_WARNING_TVD = 0.1

Marginal = tuple[int, ...]


def query_matrix(records: np.ndarray, sizes: Sequence[int],
                 marginals: Sequence[Marginal]) -> sp.csr_matrix:
    """Stacked 0/1 matrices ``Q_i`` mapping record weights to marginal counts.

    Parameters
    ----------
    records : ndarray of int, shape (n_records, n_columns)
        Encoded records.
    sizes : sequence of int
        Number of codes of every column.
    marginals : sequence of tuple of int
        Column positions of every marginal.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (sum of the marginals' cells, n_records)
        Row ``offset_i + c`` has a 1 for every record in cell ``c``
        (C-order flattened) of marginal ``i``.
    """
    n_records = records.shape[0]
    rows, offset = [], 0
    for marginal in marginals:
        shape = tuple(int(sizes[j]) for j in marginal)
        cells = np.ravel_multi_index(tuple(records[:, j] for j in marginal), shape)
        rows.append(cells + offset)
        offset += int(np.prod(shape))
    row_index = np.concatenate(rows) if rows else np.empty(0, dtype=np.int64)
    col_index = np.tile(np.arange(n_records), len(marginals))
    data = np.ones(row_index.size)
    return sp.csr_matrix((data, (row_index, col_index)), shape=(offset, n_records))


def reweight_records(
    records: np.ndarray,
    sizes: Sequence[int],
    marginals: Sequence[Marginal],
    answers: Sequence[np.ndarray],
    sigmas: Sequence[float],
    *,
    tol: float = 1e-7,
    max_iter: int = 3000,
) -> tuple[np.ndarray, dict]:
    """Non-negative record weights minimising the whitened squared error.

    Accelerated projected gradient (FISTA with adaptive restart) on
    ``f(w) = 0.5 * ||A w - b||^2`` over ``w >= 0``, with ``A`` the whitened
    ``query_matrix`` and step ``1 / L``, ``L`` an upper estimate of
    ``||A||_2^2`` from power iteration.  Each step costs two sparse products
    with ``n_records * len(marginals)`` non-zeros.

    Parameters
    ----------
    records : ndarray of int, shape (n_records, n_columns)
        Public records (encoded).
    sizes : sequence of int
        Number of codes of every column.
    marginals : sequence of tuple of int
        Measured marginals (column positions).
    answers : sequence of ndarray
        Noisy counts of every marginal (any shape; C-order flattened).
    sigmas : sequence of float
        Noise standard deviation of every marginal (``> 0``); the
        residuals are divided by it (generalised least squares).
    tol : float, default=1e-7
        Stop when a step changes ``w`` by at most ``tol`` times its norm.
    max_iter : int, default=3000
        Largest number of gradient steps.

    Returns
    -------
    weights : ndarray of shape (n_records,)
        ``w* >= 0``.
    info : dict
        ``cost`` (``f`` at the result), ``iterations``, ``converged`` and
        ``excess_misfit`` (see Warns).

    Warns
    -----
    UserWarning
        When the records cannot reproduce the measured marginals: their
        reweighted marginals stay more than ``MISFIT_WARNING_TVD`` (0.1) (mean
        total variation) from the noisy answers beyond what the noise
        explains -- e.g. uniform records for a table with strong
        dependences.  Computed from noisy answers only: no budget.
    """
    if not marginals:
        raise ValueError("reweighting needs at least one measured marginal.")
    matrix, target = _whitened_system(records, sizes, marginals, answers, sigmas)
    lipschitz = _lipschitz(matrix)
    start = np.full(matrix.shape[1], max(float(np.sum(answers[0])), 1.0) / matrix.shape[1])
    weights, iterations, converged = _fista(matrix, target, start, 1.0 / lipschitz, tol,
                                            max_iter)
    residual = matrix @ weights - target
    misfit = _excess_misfit(residual, answers, sigmas)
    if misfit > MISFIT_WARNING_TVD:
        warnings.warn(
            f"the records cannot reproduce the measured marginals: after reweighting, their "
            f"marginals are {misfit:.2f} (mean total variation) away from the noisy answers, "
            "beyond what the noise explains, so the synthetic rows will not follow the data. "
            "Give records that cover the data's joint distribution (a public sample of the "
            "same population), or use a method that does not need them (MST, AIM).",
            UserWarning, stacklevel=3)
    return weights, {"cost": 0.5 * float(residual @ residual), "iterations": iterations,
                     "converged": converged, "excess_misfit": misfit}


def _excess_misfit(residual: np.ndarray, answers: Sequence[np.ndarray],
                   sigmas: Sequence[float]) -> float:
    """Mean total variation between fitted and noisy marginals beyond the noise's own.

    ``residual`` is the whitened ``A w - b``.  For each marginal the L1 misfit
    (in counts) minus the L1 norm the Gaussian noise alone is expected to
    have (``sigma * cells * sqrt(2 / pi)``), over twice the noisy total: a
    post-processing of noisy answers, so it costs no budget.
    """
    total = max(float(np.sum(answers[0])), 1.0)
    excess, start = [], 0
    for answer, sigma in zip(answers, sigmas):
        cells = np.asarray(answer).size
        l1 = float(np.abs(residual[start:start + cells]).sum()) * float(sigma)
        excess.append(max(l1 - float(sigma) * cells * np.sqrt(2.0 / np.pi), 0.0))
        start += cells
    return float(np.mean(excess)) / (2.0 * total)


def _whitened_system(records, sizes, marginals, answers, sigmas):
    """``(A, b)`` with every marginal's rows divided by its noise scale."""
    sigmas = np.asarray(sigmas, dtype=float)
    if sigmas.shape != (len(marginals),) or not np.all(np.isfinite(sigmas) & (sigmas > 0)):
        raise ValueError("sigmas must hold one finite value > 0 per marginal.")
    scale = np.concatenate([np.full(np.asarray(a).size, 1.0 / s)
                            for a, s in zip(answers, sigmas)])
    target = np.concatenate([np.asarray(a, dtype=float).ravel() for a in answers]) * scale
    matrix = query_matrix(records, sizes, marginals)
    if matrix.shape[0] != target.size:
        raise ValueError("answers do not have the marginals' numbers of cells.")
    return (sp.diags(scale) @ matrix).tocsr(), target


def _lipschitz(matrix: sp.csr_matrix, n_iter: int = 50) -> float:
    """Upper estimate of ``||A||_2^2`` (power iteration, with a 5% margin)."""
    vector = np.ones(matrix.shape[1]) / np.sqrt(matrix.shape[1])
    value = 1.0
    for _ in range(n_iter):
        product = matrix.T @ (matrix @ vector)
        value = float(np.linalg.norm(product))
        if value == 0:
            return 1.0
        vector = product / value
    return 1.05 * value


def _fista(matrix, target, start, step, tol, max_iter):
    """FISTA with gradient restart for ``min 0.5||A w - b||^2, w >= 0``.

    The momentum restarts whenever the step goes against the gradient
    (O'Donoghue & Candes 2015); it stops when a step moves ``w`` by at most
    ``tol`` times its norm.
    """
    current = extrapolated = np.maximum(start, 0.0)
    momentum = 1.0
    for iteration in range(1, max_iter + 1):
        gradient = matrix.T @ (matrix @ extrapolated - target)
        following = np.maximum(extrapolated - step * gradient, 0.0)
        move = following - current
        if float(gradient @ (following - extrapolated)) > 0:
            momentum = 1.0
        next_momentum = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * momentum * momentum))
        extrapolated = following + ((momentum - 1.0) / next_momentum) * move
        current, momentum = following, next_momentum
        if np.linalg.norm(move) <= tol * max(np.linalg.norm(current), 1e-12):
            return current, iteration, True
    return current, max_iter, False


def one_way_estimates(marginals, answers, sigmas, sizes, records: np.ndarray,
                      weights: np.ndarray) -> list[np.ndarray]:
    """Every column's 1-way distribution from noisy marginals (post-processing).

    Each measured marginal that holds column ``j`` is projected onto the
    non-negative tables of its own noisy total, normalised and summed down
    to ``j``; the estimates are averaged with
    weights ``1 / (sigma_i^2 * cells_i / k_j)`` (the inverse variance of a
    summed cell).  A column in no measured marginal gets the fitted
    records' 1-way distribution.  Only noisy answers, public records and
    fitted weights are read: no budget.

    Parameters
    ----------
    marginals : sequence of tuple of int
        Column positions of every measured marginal.
    answers : sequence of ndarray
        Their noisy counts (C-order flattened or shaped).
    sigmas : sequence of float
        Their noise standard deviations.
    sizes : sequence of int
        Number of codes of every column.
    records : ndarray of int, shape (n_records, n_columns)
        The records.
    weights : ndarray of shape (n_records,)
        Their fitted non-negative weights.

    Returns
    -------
    list of ndarray
        Per column, a probability vector over its codes.
    """
    sums = [np.zeros(int(k)) for k in sizes]
    precision = np.zeros(len(sizes))
    for marginal, answer, sigma in zip(marginals, answers, sigmas):
        shape = tuple(int(sizes[j]) for j in marginal)
        counts = np.asarray(answer, dtype=float).ravel()
        table = project_to_simplex(counts, max(float(counts.sum()), 1.0)).reshape(shape)
        table = table / table.sum()
        for axis, j in enumerate(marginal):
            others = tuple(a for a in range(len(marginal)) if a != axis)
            weight = sizes[j] / (float(sigma) ** 2 * table.size)
            sums[j] += weight * table.sum(axis=others)
            precision[j] += weight
    out = []
    for j, k in enumerate(sizes):
        if precision[j] > 0:
            out.append(sums[j] / precision[j])
        else:
            fitted = np.bincount(records[:, j], weights=weights, minlength=int(k))
            out.append(fitted / fitted.sum() if fitted.sum() > 0 else np.full(int(k), 1.0 / k))
    return out
