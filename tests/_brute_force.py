"""Brute-force references for the Private-PGM engine's tests: whole joints by enumeration."""

import numpy as np
from scipy.special import logsumexp

from sklearn_dpsynth.pgm import Factor


def random_potentials(domain, cliques, seed, scale=1.5):
    """Gaussian log-potentials ``{clique: Factor}`` with a fixed seed."""
    rng = np.random.default_rng(seed)
    return {c: Factor(c, rng.normal(scale=scale, size=[domain[a] for a in c]))
            for c in cliques}


def brute_log_joint(domain, potentials):
    """The unnormalised log-joint over every attribute of ``domain``, in its order."""
    names = list(domain)
    total = Factor.zeros(names, domain)
    for factor in potentials.values():
        total = total + factor
    return total.transpose(names).values


def brute_marginal(domain, log_joint, attrs):
    """The normalised marginal of ``attrs`` (axes in that order) of a log-joint."""
    names = list(domain)
    axes = tuple(k for k, a in enumerate(names) if a not in attrs)
    p = np.exp(log_joint - logsumexp(log_joint)).sum(axis=axes)
    kept = [a for a in names if a in attrs]
    return np.transpose(p, [kept.index(a) for a in attrs])
