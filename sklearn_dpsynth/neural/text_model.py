"""A small causal language model over word tokens, with per-sample gradients.

The same blocks as :class:`~sklearn_dpsynth.neural.transformer.TabularTransformer`
(token and learned position embeddings, pre-norm causal attention and MLP
blocks, a final layer norm) with a full-vocabulary ``nn.Linear`` output head
at every position: the model of DP-2Stage's rows as text.  Every parameter
belongs to a layer with an Opacus per-sample gradient rule; the embeddings
and head are not tied (tied weights would break per-sample clipping).

Importing this module imports torch and opacus.
"""

from __future__ import annotations

import torch
from torch import nn

from .grad_rules import SequenceEmbedding
from .transformer import TransformerBlock, init_weights

__all__ = ["TextTransformer"]


class TextTransformer(nn.Module):
    """Decoder-only transformer predicting the next token over the whole vocabulary.

    Parameters
    ----------
    n_tokens : int
        Vocabulary size.
    max_length : int
        Longest input (number of learned positions).
    d_model : int, default=64
        Width, divisible by ``n_heads``.
    n_layers : int, default=2
    n_heads : int, default=4
    d_ff : int, optional
        MLP width; ``4 * d_model`` when None.
    dropout : float, default=0.0

    Examples
    --------
    >>> model = TextTransformer(10, 6, d_model=8, n_layers=1, n_heads=2)
    >>> model(torch.tensor([[1, 5, 7]])).shape
    torch.Size([1, 3, 10])
    """

    def __init__(self, n_tokens: int, max_length: int, *, d_model: int = 64,
                 n_layers: int = 2, n_heads: int = 4, d_ff: int | None = None,
                 dropout: float = 0.0) -> None:
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads}).")
        d_ff = 4 * d_model if d_ff is None else d_ff
        self.seq_len = int(max_length)
        self.token_embedding = SequenceEmbedding(n_tokens, d_model)
        self.position_embedding = SequenceEmbedding(self.seq_len, d_model)
        self.dropout = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            [TransformerBlock(d_model, n_heads, d_ff, dropout) for _ in range(n_layers)])
        self.final_norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, n_tokens)
        init_weights(self, n_layers)

    def hidden(self, tokens: torch.Tensor, start: int = 0,
               caches: list | None = None) -> torch.Tensor:
        """Final hidden states of ``tokens`` placed at positions ``start, ...``.

        Parameters
        ----------
        tokens : LongTensor of shape (batch, length)
        start : int, default=0
            Position of the first token (after cached ones when decoding).
        caches : list of dict, optional
            One key/value cache per block (updated in place).

        Returns
        -------
        Tensor of shape (batch, length, d_model)
        """
        batch, length = tokens.shape
        if start + length > self.seq_len:
            raise ValueError(f"inputs longer than the model's {self.seq_len} positions.")
        positions = torch.arange(start, start + length, device=tokens.device)
        x = self.token_embedding(tokens) + self.position_embedding(
            positions.unsqueeze(0).expand(batch, length).contiguous())
        x = self.dropout(x)
        for i, block in enumerate(self.blocks):
            x = block(x, None if caches is None else caches[i])
        return self.final_norm(x)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Next-token logits at every position, shape (batch, length, n_tokens)."""
        return self.head(self.hidden(tokens))

    def new_caches(self) -> list[dict]:
        """Empty key/value caches for incremental decoding."""
        return [{} for _ in self.blocks]
