"""The engine's domain: attribute names and their numbers of codes.

:class:`ModelDomain` is the one form in which the graphical-model engine
receives a domain.  It is validated once, when it is built; the junction
tree, the model, estimation, measurements and sampling take it as it is.
Attribute order is meaningful: data columns, tie-breaking in the
triangulation and the canonical axis order all follow it.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from functools import cached_property
from typing import Iterable, Iterator, Mapping

__all__ = ["ModelDomain", "require_model_domain"]


def _sizes(shape: Iterable[int]) -> tuple[int, ...]:
    """``shape`` as a tuple of positive ints; ValueError otherwise."""
    if isinstance(shape, (str, bytes)):
        raise ValueError("shape must be a sequence of positive ints")
    out = []
    for size in shape:
        try:
            value = -1 if isinstance(size, bool) else operator.index(size)
        except TypeError:
            value = -1
        if value < 1:
            raise ValueError(f"shape must hold positive ints, got {size!r}")
        out.append(value)
    return tuple(out)


@dataclass(frozen=True)
class ModelDomain:
    """Ordered attribute names and sizes of a graphical model.

    Parameters
    ----------
    attributes : tuple of str
        Distinct attribute names, in column order (at least one).
    shape : tuple of int
        Number of codes of every attribute (each at least 1), parallel to
        ``attributes``.

    Examples
    --------
    >>> dom = ModelDomain(("a", "b", "c"), (2, 3, 4))
    >>> dom["b"], dom.size(("a", "c")), dom.axes(("c", "a"))
    (3, 8, (2, 0))
    >>> dom.project(("c", "a"))
    ModelDomain(attributes=('c', 'a'), shape=(4, 2))
    """

    attributes: tuple[str, ...]
    shape: tuple[int, ...]

    def __post_init__(self) -> None:
        if isinstance(self.attributes, str):
            raise ValueError("attributes must be a sequence of names, not a str")
        attributes = tuple(self.attributes)
        shape = _sizes(self.shape)
        if not attributes:
            raise ValueError("a model domain needs at least one attribute")
        if not all(isinstance(a, str) for a in attributes):
            raise ValueError("attributes must be str names")
        if len(set(attributes)) != len(attributes):
            raise ValueError("attributes must be distinct names")
        if len(shape) != len(attributes):
            raise ValueError(f"shape has {len(shape)} sizes for {len(attributes)} attributes")
        object.__setattr__(self, "attributes", attributes)
        object.__setattr__(self, "shape", shape)

    @cached_property
    def _position(self) -> dict[str, int]:
        """Attribute name -> position."""
        return {a: k for k, a in enumerate(self.attributes)}

    @classmethod
    def from_mapping(cls, sizes: Mapping[str, int]) -> "ModelDomain":
        """Domain from ``{attribute: number of codes}`` (in the mapping's order).

        Parameters
        ----------
        sizes : mapping of str to int
            Attribute name -> number of codes.

        Returns
        -------
        domain : ModelDomain
        """
        if not isinstance(sizes, Mapping):
            raise ValueError("sizes must be a mapping of attribute -> number of codes")
        return cls(tuple(sizes), tuple(sizes.values()))

    # ------------------------------------------------------------ queries
    def __len__(self) -> int:
        return len(self.attributes)

    def __iter__(self) -> Iterator[str]:
        return iter(self.attributes)

    def __contains__(self, attribute: object) -> bool:
        return attribute in self._position

    def __getitem__(self, attribute: str) -> int:
        """Number of codes of one attribute."""
        try:
            return self.shape[self._position[attribute]]
        except KeyError:
            raise KeyError(f"attribute {attribute!r} is not in the domain") from None

    def axes(self, attrs: Iterable[str]) -> tuple[int, ...]:
        """Positions of some attributes in the domain.

        Parameters
        ----------
        attrs : iterable of str
            Attributes of the domain.

        Returns
        -------
        axes : tuple of int
            In the order of ``attrs``.
        """
        return tuple(self._position[a] for a in self._known(attrs))

    def size(self, attrs: Iterable[str] | None = None) -> int:
        """Number of cells of the table over some attributes (exact int).

        Parameters
        ----------
        attrs : iterable of str, default=None
            Attributes of the domain; all of them when None.

        Returns
        -------
        cells : int
            Product of their sizes (1 for no attribute).
        """
        if attrs is None:
            return math.prod(self.shape)
        return math.prod(self.shape[k] for k in self.axes(attrs))

    def project(self, attrs: Iterable[str]) -> "ModelDomain":
        """The domain of some attributes, in the given order.

        Parameters
        ----------
        attrs : iterable of str
            Distinct attributes of the domain (at least one).

        Returns
        -------
        domain : ModelDomain
        """
        attrs = tuple(self._known(attrs))
        return ModelDomain(attrs, tuple(self[a] for a in attrs))

    def _known(self, attrs: Iterable[str]) -> list[str]:
        """``attrs`` as a list; ValueError naming any unknown attribute."""
        if isinstance(attrs, str):
            raise ValueError("attrs must be a sequence of attribute names, not a str")
        attrs = list(attrs)
        unknown = [a for a in attrs if a not in self._position]
        if unknown:
            raise ValueError(f"attributes {unknown} are not in the domain")
        return attrs


def require_model_domain(domain: object, name: str = "domain") -> ModelDomain:
    """Check that an engine entry point received a :class:`ModelDomain`.

    Parameters
    ----------
    domain : object
        The argument.
    name : str, default="domain"
        Parameter name used in the error message.

    Returns
    -------
    domain : ModelDomain
        ``domain`` itself (already validated when it was built).
    """
    if not isinstance(domain, ModelDomain):
        raise TypeError(f"{name} must be a ModelDomain (see ModelDomain.from_mapping), "
                        f"got {type(domain).__name__}")
    return domain
