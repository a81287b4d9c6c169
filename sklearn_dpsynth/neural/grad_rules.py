"""Per-sample gradient rules (for Opacus) of the transformer's custom layers.

Opacus computes per-sample gradients (``GradSampleModule``, "hooks" mode)
or only their norms (``GradSampleModuleFastGradientClipping``, "ghost"
clipping) layer by layer, from each layer's input activations ``a`` and
the gradient ``g`` of the summed loss with respect to its output.  This
module registers both rules for:

* :class:`~sklearn_dpsynth.neural.column_head.ColumnHead`: the head row of
  value token ``v`` gets ``sum_j g[b, j, v] h[b, j, column(v)]`` from
  element ``b`` (``j`` runs over the copies of the row).  Different columns
  touch disjoint rows, so the squared norm is ``sum_c ||G_c||^2`` with
  ``||G_c||^2 = sum_{j, j'} (g_jc . g_j'c) (h_jc . h_j'c)``.
* :class:`SequenceEmbedding`, an ``nn.Embedding`` whose per-sample gradient
  norm is computed from the Gram matrix of the output gradients of one
  sequence, ``||G||^2 = sum_{s, s'} [id_s == id_s'] g_s . g_s'``: cheaper
  than Opacus's generic embedding norm (which sorts all (row, id) pairs)
  when sequences are short, as rows of a table are.  Its per-sample
  gradients reuse Opacus's ``nn.Embedding`` rule.

Opacus dispatches on the exact layer type, so registering rules for these
classes leaves every other layer's rule unchanged.  Importing this module
imports torch and opacus.
"""

from __future__ import annotations

import torch
from opacus.grad_sample import register_grad_sampler, register_norm_sampler
from opacus.grad_sample.embedding import compute_embedding_grad_sample
from torch import nn

from .column_head import ColumnHead

__all__ = ["SequenceEmbedding", "column_head_grad_sample", "column_head_norm_sample",
           "sequence_embedding_norm_sample"]


class SequenceEmbedding(nn.Embedding):
    """``nn.Embedding`` with a Gram-matrix per-sample gradient norm for ghost clipping."""


register_grad_sampler(SequenceEmbedding)(compute_embedding_grad_sample)


@register_norm_sampler(SequenceEmbedding)
def sequence_embedding_norm_sample(layer: SequenceEmbedding, activations: list,
                                   backprops: torch.Tensor) -> dict:
    """Per-sample gradient norms of an embedding over short sequences.

    Parameters
    ----------
    layer : SequenceEmbedding
    activations : list of Tensor
        ``[ids]`` with ids of shape (batch, length).
    backprops : Tensor of shape (batch, length, dim)

    Returns
    -------
    dict
        ``{weight: norms of shape (batch,)}``.
    """
    ids = activations[0]
    gram = torch.bmm(backprops, backprops.transpose(1, 2))
    same = ids.unsqueeze(2) == ids.unsqueeze(1)
    squared = (gram * same).sum(dim=(1, 2)).clamp(min=0)
    return {layer.weight: squared.sqrt()}


def _head_inputs(layer: ColumnHead, activations: list, backprops: torch.Tensor):
    hidden, positions = activations[0], activations[1]
    selected = layer.selected(hidden.to(backprops.dtype), positions)
    return selected, backprops


@register_grad_sampler(ColumnHead)
def column_head_grad_sample(layer: ColumnHead, activations: list,
                            backprops: torch.Tensor) -> dict:
    """Per-sample gradients of :class:`ColumnHead`.

    Parameters
    ----------
    layer : ColumnHead
    activations : list of Tensor
        The forward inputs ``[hidden, positions]``.
    backprops : Tensor of shape (batch, copies, n_value_tokens)
        Gradient of the summed loss with respect to the head's output.

    Returns
    -------
    dict
        ``{weight: (batch, n_value_tokens, d_model), bias: (batch,
        n_value_tokens)}``, summed over the copies.
    """
    selected, g = _head_inputs(layer, activations, backprops)
    grads = {}
    if layer.weight.requires_grad:
        out = g.new_empty((g.shape[0], *layer.weight.shape))
        for c in range(len(layer.sizes)):
            start, stop = layer.starts[c], layer.starts[c + 1]
            out[:, start:stop] = torch.bmm(g[:, :, start:stop].transpose(1, 2),
                                           selected[:, :, c])
        grads[layer.weight] = out
    if layer.bias.requires_grad:
        grads[layer.bias] = g.sum(dim=1)
    return grads


@register_norm_sampler(ColumnHead)
def column_head_norm_sample(layer: ColumnHead, activations: list,
                            backprops: torch.Tensor) -> dict:
    """Per-sample gradient norms of :class:`ColumnHead`, without the gradients.

    Parameters
    ----------
    layer : ColumnHead
    activations : list of Tensor
        The forward inputs ``[hidden, positions]``.
    backprops : Tensor of shape (batch, copies, n_value_tokens)

    Returns
    -------
    dict
        ``{weight: (batch,), bias: (batch,)}`` norms.
    """
    selected, g = _head_inputs(layer, activations, backprops)
    squared = g.new_zeros(g.shape[0])
    single = g.shape[1] == 1
    for c in range(len(layer.sizes)):
        g_c = g[:, :, layer.starts[c]:layer.starts[c + 1]]
        h_c = selected[:, :, c]
        if single:
            squared += g_c.square().sum(dim=(1, 2)) * h_c.square().sum(dim=(1, 2))
        else:
            gram_g = torch.bmm(g_c, g_c.transpose(1, 2))
            gram_h = torch.bmm(h_c, h_c.transpose(1, 2))
            squared += (gram_g * gram_h).sum(dim=(1, 2))
    norms = {layer.weight: squared.clamp(min=0).sqrt()}
    norms[layer.bias] = g.sum(dim=1).norm(dim=1)
    return norms
