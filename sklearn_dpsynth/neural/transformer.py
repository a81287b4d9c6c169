"""A small decoder-only transformer whose layers all have per-sample gradients.

Token and learned positional embeddings (``nn.Embedding``), pre-norm blocks
of causal self-attention and a GELU MLP, a final ``nn.LayerNorm`` and the
column-masked output head.  Attention is written from ``nn.Linear`` layers
(queries/keys/values in one projection, an output projection) and the
parameter-free :func:`torch.nn.functional.scaled_dot_product_attention`, so
every parameter belongs to a layer for which Opacus has a per-sample
gradient rule (``nn.Linear``, ``nn.Embedding``, ``nn.LayerNorm``, and
:class:`~sklearn_dpsynth.neural.column_head.ColumnHead`, whose rule is
registered in that module).  No buffers, no batch statistics.

*Copies* (AugMult): an input of ``copies * seq_len`` tokens holds several
presentations of one row side by side; attention stays within each
``seq_len`` segment and positions restart at 0 in each, so every copy is
modelled exactly as if alone, while Opacus sees one sample per row (its
per-sample gradient is the sum over the copies).

Incremental decoding keeps the keys and values of the positions already
fed (a *cache*, one dict per block), so sampling a row costs one pass over
its tokens.

Importing this module imports torch and opacus.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from .column_head import ColumnHead, MaskedFullHead
from .grad_rules import SequenceEmbedding

__all__ = ["CausalSelfAttention", "TabularTransformer", "TransformerBlock"]


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention built from two ``nn.Linear`` layers.

    Parameters
    ----------
    d_model : int
        Model width, divisible by ``n_heads``.
    n_heads : int
        Number of attention heads.
    dropout : float
        Dropout on the attention output projection (training only).
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, cache: dict | None = None,
                segment: int | None = None) -> torch.Tensor:
        """Attend causally over ``x`` (and over the cached earlier positions).

        Parameters
        ----------
        x : Tensor of shape (batch, length, d_model)
        cache : dict, optional
            Keys ``"k"``, ``"v"`` of the positions fed before; updated in place.
        segment : int, optional
            Attend within consecutive segments of this length only
            (``length`` must be a multiple; no cache then).

        Returns
        -------
        Tensor of shape (batch, length, d_model)
        """
        batch, length, width = x.shape
        qkv = self.qkv(x)
        if segment is not None and segment < length:
            qkv = qkv.reshape(batch * (length // segment), segment, 3 * width)
        y = self._attend(qkv, cache)
        return self.dropout(self.out(y.reshape(batch, length, width)))

    def _attend(self, qkv: torch.Tensor, cache: dict | None) -> torch.Tensor:
        batch, length, width = qkv.shape[0], qkv.shape[1], qkv.shape[2] // 3
        q, k, v = qkv.split(width, dim=2)
        q, k, v = (self._heads(t) for t in (q, k, v))
        past = 0
        if cache is not None:
            if "k" in cache:
                past = cache["k"].shape[2]
                k = torch.cat([cache["k"], k], dim=2)
                v = torch.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
        if past == 0:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            visible = (torch.arange(past + length, device=qkv.device)[None, :]
                       <= past + torch.arange(length, device=qkv.device)[:, None])
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=visible)
        return y.transpose(1, 2).reshape(batch, length, width)

    def _heads(self, t: torch.Tensor) -> torch.Tensor:
        batch, length, width = t.shape
        return t.view(batch, length, self.n_heads, width // self.n_heads).transpose(1, 2)


class TransformerBlock(nn.Module):
    """Pre-norm transformer block: ``x + attn(ln(x))`` then ``x + mlp(ln(x))``.

    Parameters
    ----------
    d_model : int
    n_heads : int
    d_ff : int
        Hidden width of the MLP.
    dropout : float
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attention = CausalSelfAttention(d_model, n_heads, dropout)
        self.norm2 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, cache: dict | None = None,
                segment: int | None = None) -> torch.Tensor:
        """Apply the block; arguments as in :meth:`CausalSelfAttention.forward`."""
        x = x + self.attention(self.norm1(x), cache, segment)
        return x + self.dropout(self.fc2(F.gelu(self.fc1(self.norm2(x)))))


def init_weights(model: nn.Module, n_layers: int) -> None:
    """GPT-2 style: N(0, 0.02), residual projections scaled by depth, zero head.

    ``model`` has ``blocks`` (:class:`TransformerBlock`) and a ``head``
    module, whose parameters start at zero.
    """
    for module in model.modules():
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)
            if getattr(module, "bias", None) is not None:
                nn.init.zeros_(module.bias)
    for block in model.blocks:
        for proj in (block.attention.out, block.fc2):
            nn.init.normal_(proj.weight, std=0.02 / math.sqrt(2 * n_layers))
    for parameter in model.head.parameters():
        nn.init.zeros_(parameter)


class TabularTransformer(nn.Module):
    """Decoder-only transformer over level tokens with a column-masked head.

    Parameters
    ----------
    n_tokens : int
        Input vocabulary size (value and special tokens).
    seq_len : int
        Maximum input length (number of learned positions).
    sizes : sequence of int
        Codes per column (the output head's column ranges).
    d_model : int, default=64
        Width; divisible by ``n_heads``.
    n_layers : int, default=2
        Number of blocks.
    n_heads : int, default=4
        Attention heads per block.
    d_ff : int, optional
        MLP hidden width; ``4 * d_model`` when None.
    dropout : float, default=0.0
        Dropout rate inside the blocks and on the embeddings.
    head : {"column", "full"}, default="column"
        :class:`~sklearn_dpsynth.neural.column_head.ColumnHead` (each
        column's logits at its position only) or the equivalent but costlier
        :class:`~sklearn_dpsynth.neural.column_head.MaskedFullHead`.

    Examples
    --------
    >>> model = TabularTransformer(6, 2, [2, 3], d_model=8, n_layers=1, n_heads=2)
    >>> tokens = torch.tensor([[5, 1]])
    >>> positions = torch.tensor([[0, 1]])
    >>> model(tokens, positions).shape
    torch.Size([1, 1, 5])
    """

    def __init__(self, n_tokens: int, seq_len: int, sizes: Sequence[int], *,
                 d_model: int = 64, n_layers: int = 2, n_heads: int = 4,
                 d_ff: int | None = None, dropout: float = 0.0, head: str = "column") -> None:
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads}).")
        if head not in ("column", "full"):
            raise ValueError(f"head must be 'column' or 'full', got {head!r}.")
        d_ff = 4 * d_model if d_ff is None else d_ff
        self.seq_len = seq_len
        self.token_embedding = SequenceEmbedding(n_tokens, d_model)
        self.position_embedding = SequenceEmbedding(seq_len, d_model)
        self.dropout = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            [TransformerBlock(d_model, n_heads, d_ff, dropout) for _ in range(n_layers)])
        self.final_norm = nn.LayerNorm(d_model)
        self.head = (ColumnHead if head == "column" else MaskedFullHead)(sizes, d_model)
        init_weights(self, n_layers)

    def hidden(self, tokens: torch.Tensor, start: int = 0,
               caches: list | None = None) -> torch.Tensor:
        """Final hidden states of ``tokens`` placed at positions ``start, ...``.

        Parameters
        ----------
        tokens : LongTensor of shape (batch, length)
            With ``length > seq_len`` (a multiple of it), consecutive
            segments of ``seq_len`` tokens are independent copies.
        start : int, default=0
            Position of the first token (after cached ones when decoding).
        caches : list of dict, optional
            One cache per block for incremental decoding (updated in place).

        Returns
        -------
        Tensor of shape (batch, length, d_model)
        """
        batch, length = tokens.shape
        segment = None
        if length > self.seq_len:
            if length % self.seq_len or caches is not None or start:
                raise ValueError(f"an input of {length} tokens must be whole copies of "
                                 f"seq_len={self.seq_len} tokens, without cache.")
            segment = self.seq_len
        positions = torch.arange(start, start + length, device=tokens.device) % self.seq_len
        x = self.token_embedding(tokens) + self.position_embedding(
            positions.unsqueeze(0).expand(batch, length).contiguous())
        x = self.dropout(x)
        for i, block in enumerate(self.blocks):
            x = block(x, None if caches is None else caches[i], segment)
        return self.final_norm(x)

    def forward(self, tokens: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """Column logits of teacher-forced rows.

        Parameters
        ----------
        tokens : LongTensor of shape (batch, copies * seq_len)
            Input tokens of a :class:`~sklearn_dpsynth.neural.layout.RowLayout`,
            copy after copy.
        positions : LongTensor of shape (batch, copies * n_columns)
            Prediction position of every column of every copy (counted from
            the start of the whole input).

        Returns
        -------
        logits : Tensor of shape (batch, copies, n_value_tokens)
            Column ``c``'s (unnormalised) logits in its token range.
        """
        return self.head(self.hidden(tokens), positions)

    def new_caches(self) -> list[dict]:
        """Empty key/value caches for incremental decoding."""
        return [{} for _ in self.blocks]
