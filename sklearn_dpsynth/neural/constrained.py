"""Trie-constrained decoding: every generated row is valid, likelihoods normalised over rows.

:class:`RowAutomaton` is the deterministic automaton of the template of a
:class:`~sklearn_dpsynth.neural.text.RowText`: after ``<bos>``, for each
column in the order, the key's tokens and `` is `` (each *forced*: the only
allowed token), then a trie over the token sequences of the column's values,
each ending with the field terminator (``, `` or ``<eos>``).  The value
sequences of a column are distinct and never contain a template token, so
the terminated sequences are prefix-free: every path from the start to the
final state spells exactly one row of codes, and every row of codes has
exactly one path.

Decoding renormalises the language model's next-token distribution over the
tokens allowed in the current state.  The probability of a row is then the
product of these renormalised factors along its path, forced steps
contributing 1, and these probabilities sum to 1 over all rows of the
encoded domain (a finite tree of normalised choices).  Hence sampling never
produces an invalid or incomplete row (nothing is rejected or repaired, as
the paper had to), and :func:`token_log_probs` with ``constrained=True``
gives an exact log-likelihood over rows, comparable with the other
synthesizers' ``score_samples``.

Importing this module imports torch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from .text import RowText

__all__ = ["RowAutomaton", "draw_allowed", "sample_token_rows", "token_log_probs"]

#: Rows per forward pass when scoring or sampling.
TEXT_BATCH = 1024


class RowAutomaton:
    """The template's deterministic automaton over token ids.

    Parameters
    ----------
    text : RowText

    Attributes
    ----------
    next_state : ndarray of shape (n_states, n_tokens), int32
        Target of every transition, ``-1`` where the token is not allowed.
    emit_code : ndarray of shape (n_states, n_tokens), int32
        Code completed by a terminator transition, else ``-1``.
    state_column : ndarray of shape (n_states,), int64
        Column being written in every state.
    start, final : int
        State after ``<bos>``, state after ``<eos>``.
    """

    def __init__(self, text: RowText) -> None:
        self.n_columns = text.n_columns
        self._transitions: dict[tuple[int, int], int] = {}
        self._emits: dict[tuple[int, int], int] = {}
        self._columns: list[int] = []
        self.start = self._new_state(text.order[0])
        state = self.start
        vocab = text.vocabulary
        for slot, column in enumerate(text.order):
            last = slot == text.n_columns - 1
            for token in text.key_tokens[column] + [vocab.special("<is>")]:
                state = self._forced(state, token, column)
            state = self._value_trie(state, text.value_tokens[column],
                                     vocab.special("<eos>" if last else "<sep>"), column,
                                     text.order[slot + 1] if not last else column)
        self.final = state
        self._to_arrays(vocab.n_tokens)

    def _new_state(self, column: int) -> int:
        self._columns.append(column)
        return len(self._columns) - 1

    def _forced(self, state: int, token: int, column: int) -> int:
        nxt = self._new_state(column)
        self._transitions[(state, token)] = nxt
        return nxt

    def _value_trie(self, root: int, sequences: Sequence[Sequence[int]], terminator: int,
                    column: int, next_column: int) -> int:
        end = self._new_state(next_column)
        for code, sequence in enumerate(sequences):
            state = root
            for token in sequence:
                if (state, token) not in self._transitions:
                    self._transitions[(state, token)] = self._new_state(column)
                state = self._transitions[(state, token)]
            self._transitions[(state, terminator)] = end
            self._emits[(state, terminator)] = code
        return end

    def _to_arrays(self, n_tokens: int) -> None:
        n_states = len(self._columns)
        self.next_state = np.full((n_states, n_tokens), -1, dtype=np.int32)
        self.emit_code = np.full((n_states, n_tokens), -1, dtype=np.int32)
        for (state, token), target in self._transitions.items():
            self.next_state[state, token] = target
        for (state, token), code in self._emits.items():
            self.emit_code[state, token] = code
        self.state_column = np.array(self._columns, dtype=np.int64)
        self.allowed = self.next_state >= 0
        del self._transitions, self._emits, self._columns

    @property
    def n_states(self) -> int:
        """Number of states."""
        return len(self.state_column)

    def walk(self, tokens: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """States before every predicted token of teacher-forced rows.

        Parameters
        ----------
        tokens : ndarray of shape (n_rows, length), int
            Rows starting with ``<bos>``.
        lengths : ndarray of shape (n_rows,), int

        Returns
        -------
        states : ndarray of shape (n_rows, length - 1), int64
            ``states[r, t]``: the state in which ``tokens[r, t + 1]`` is
            chosen (the final state past the end of a row).

        Raises
        ------
        ValueError
            If a row leaves the template.
        """
        n, length = tokens.shape
        states = np.empty((n, max(length - 1, 0)), dtype=np.int64)
        state = np.full(n, self.start, dtype=np.int64)
        for t in range(length - 1):
            states[:, t] = state
            active = t + 1 < lengths
            nxt = self.next_state[state, tokens[:, t + 1]]
            if np.any(active & (nxt < 0)):
                raise ValueError("a token sequence leaves the template.")
            state = np.where(active, nxt, state)
        return states

    def prompt_state(self, prompt: Sequence[int]) -> tuple[int, dict[int, int]]:
        """State after a prompt (``<bos>`` and whole fields) and the codes it fixes."""
        state, codes = self.start, {}
        for token in list(prompt)[1:]:
            code = int(self.emit_code[state, token])
            if code >= 0:
                codes[int(self.state_column[state])] = code
            state = int(self.next_state[state, token])
            if state < 0:
                raise ValueError("the prompt leaves the template.")
        return state, codes


def token_log_probs(model: torch.nn.Module, automaton: RowAutomaton | None,
                    tokens: np.ndarray, lengths: np.ndarray, device: torch.device,
                    ) -> np.ndarray:
    """Log-probability of every predicted token of teacher-forced rows.

    Parameters
    ----------
    model : TextTransformer
    automaton : RowAutomaton or None
        Renormalise over the allowed tokens (constrained decoding), or use
        the model's full-vocabulary softmax when None (the paper's
        perplexities).
    tokens : ndarray of shape (n_rows, length), int
    lengths : ndarray of shape (n_rows,), int
    device : torch.device

    Returns
    -------
    log_probs : ndarray of shape (n_rows, length - 1), float64
        ``log_probs[r, t]`` is that of ``tokens[r, t + 1]``; 0 past the end.
    """
    model.eval()
    tokens = np.asarray(tokens, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    out = np.zeros((len(tokens), max(tokens.shape[1] - 1, 0)))
    with torch.no_grad():
        for lo in range(0, len(tokens), TEXT_BATCH):
            part, part_lengths = tokens[lo:lo + TEXT_BATCH], lengths[lo:lo + TEXT_BATCH]
            width = int(part_lengths.max()) if len(part) else 1
            out[lo:lo + len(part), :width - 1] = _chunk_log_probs(
                model, automaton, part[:, :width], part_lengths, device)
    return out


def _chunk_log_probs(model, automaton, tokens, lengths, device) -> np.ndarray:
    inputs = torch.as_tensor(tokens[:, :-1], device=device)
    logits = model(inputs).double()
    if automaton is not None:
        states = automaton.walk(tokens, lengths)
        allowed = torch.as_tensor(automaton.allowed[states], device=device)
        logits = logits.masked_fill(~allowed, float("-inf"))
    targets = torch.as_tensor(tokens[:, 1:], device=device).unsqueeze(-1)
    picked = torch.log_softmax(logits, dim=-1).gather(-1, targets).squeeze(-1).cpu().numpy()
    inside = np.arange(tokens.shape[1] - 1)[None, :] + 1 < lengths[:, None]
    return np.where(inside, picked, 0.0)


def draw_allowed(logits: torch.Tensor, allowed: np.ndarray,
                 rng: np.random.Generator) -> np.ndarray:
    """One draw per row from the softmax of ``logits`` restricted to ``allowed``.

    Parameters
    ----------
    logits : Tensor of shape (n_rows, n_tokens)
    allowed : ndarray of shape (n_rows, n_tokens), bool
        At least one token allowed per row.
    rng : numpy.random.Generator

    Returns
    -------
    tokens : ndarray of shape (n_rows,), int64
        Always an allowed token.
    """
    masked = logits.double().masked_fill(
        ~torch.as_tensor(allowed, device=logits.device), float("-inf"))
    probs = torch.softmax(masked, dim=-1).cpu().numpy()
    cumulative = np.cumsum(probs, axis=1)
    u = rng.random(len(probs)) * cumulative[:, -1]
    draws = (cumulative <= u[:, None]).sum(axis=1)
    last_allowed = allowed.shape[1] - 1 - np.argmax(allowed[:, ::-1], axis=1)
    draws = np.minimum(draws, last_allowed)
    bad = ~allowed[np.arange(len(draws)), draws]
    if bad.any():  # a rounding edge: fall back to the most likely allowed token
        draws[bad] = np.argmax(np.where(allowed[bad], probs[bad], -1.0), axis=1)
    return draws.astype(np.int64)


@torch.no_grad()
def sample_token_rows(model: torch.nn.Module, automaton: RowAutomaton, n_samples: int,
                      rng: np.random.Generator, *, prompt: Sequence[int],
                      device: torch.device) -> np.ndarray:
    """Generate rows of codes with trie-constrained decoding.

    Parameters
    ----------
    model : TextTransformer
    automaton : RowAutomaton
    n_samples : int
    rng : numpy.random.Generator
        Source of every draw (reproducible).
    prompt : sequence of int
        ``<bos>`` followed by whole fields (conditioned columns, teacher-forced).
    device : torch.device

    Returns
    -------
    codes : ndarray of shape (n_samples, n_columns), int64
        In the table's column order.
    """
    model.eval()
    out = np.empty((n_samples, automaton.n_columns), dtype=np.int64)
    for lo in range(0, n_samples, TEXT_BATCH):
        rows = min(TEXT_BATCH, n_samples - lo)
        out[lo:lo + rows] = _sample_batch(model, automaton, rows, rng, list(prompt), device)
    return out


def _sample_batch(model, automaton, rows, rng, prompt, device) -> np.ndarray:
    state0, fixed = automaton.prompt_state(prompt)
    codes = np.full((rows, automaton.n_columns), -1, dtype=np.int64)
    for column, code in fixed.items():
        codes[:, column] = code
    states = np.full(rows, state0, dtype=np.int64)
    caches = model.new_caches()
    inputs = torch.as_tensor(np.tile(np.asarray(prompt, np.int64), (rows, 1)), device=device)
    hidden = model.hidden(inputs, 0, caches)[:, -1]
    position = len(prompt)
    while np.any(states != automaton.final):
        done = states == automaton.final
        allowed = automaton.allowed[states]
        allowed[done, 0] = True  # finished rows feed <pad>, ignored
        tokens = draw_allowed(model.head(hidden), allowed, rng)
        emitted = np.where(done, -1, automaton.emit_code[states, tokens])
        hit = emitted >= 0
        codes[hit, automaton.state_column[states[hit]]] = emitted[hit]
        states = np.where(done, states, automaton.next_state[states, tokens])
        if np.all(states == automaton.final):
            break
        hidden = model.hidden(torch.as_tensor(tokens[:, None], device=device), position,
                              caches)[:, -1]
        position += 1
    return codes
