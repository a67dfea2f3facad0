"""matplotlib helpers for notebooks: the figures people look at first.

Each takes an :class:`ulpscope.Output` (from ``ulpscope.check``) or an
elements DataFrame (from ``Results.elements``), draws into ``ax`` (a new
figure's when None) and returns the axes.  matplotlib is imported when a
helper is first called, so ``import ulpscope`` does not need it.
"""
from __future__ import annotations

from typing import Any, Union

import numpy as np
import pandas as pd

from ._check import CLASS_NAMES, Output

Data = Union[Output, pd.DataFrame]


def _axes(ax: Any) -> Any:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt
    _, ax = plt.subplots()
    return ax


def _column(data: Data, name: str) -> tuple[np.ndarray, tuple[int, ...]]:
    """One per-element figure, flat, and the output's shape."""
    if isinstance(data, pd.DataFrame):
        if name not in data:
            raise KeyError(f"the elements table has no {name!r} column")
        col = data[name]
        values = (col.cat.codes.to_numpy() if name == "class"
                  else col.to_numpy())
        return values, tuple(data.attrs.get("shape", (len(data),)))
    attr = {"class": "classes"}.get(name, name)
    values = getattr(data, attr)
    if values is None:
        raise ValueError(f"the output holds no {name!r} figures (a streamed "
                         "check, or no profile)")
    return np.asarray(values).reshape(-1), data.shape


def _grid(values: np.ndarray, shape: tuple[int, ...],
          max_side: int) -> np.ndarray:
    """A 2-D view: the last dimension across, the others down, reduced by
    the maximum to at most max_side cells a side (so one bad element in a
    large tensor still shows)."""
    cols = shape[-1] if len(shape) >= 1 and shape[-1] > 0 else 1
    grid = values.reshape(-1, cols).astype(np.float64)
    for axis in (0, 1):
        n = grid.shape[axis]
        if n > max_side:
            step = -(-n // max_side)
            pad = step * (-(-n // step)) - n
            widths = [(0, 0), (0, 0)]
            widths[axis] = (0, pad)
            g = np.pad(grid, widths, constant_values=np.nan)
            if axis == 0:
                g = g.reshape(-1, step, g.shape[1])
                grid = np.nanmax(g, axis=1) if np.isfinite(g).any() else g[:, 0]
            else:
                g = g.reshape(g.shape[0], -1, step)
                grid = np.nanmax(g, axis=2) if np.isfinite(g).any() else g[:, :, 0]
    return grid


def plot_error_histogram(data: Data, ax: Any = None, bins: int = 60) -> Any:
    """|ULP error| against the oracle and the reference, on log axes."""
    ax = _axes(ax)
    series = []
    for name, label in (("ulp_oracle", "vs oracle"),
                        ("ulp_reference", "vs reference")):
        v, _ = _column(data, name)
        v = np.abs(v[np.isfinite(v)])
        series.append((v, label))
    positive = np.concatenate([v[v > 0] for v, _ in series] + [np.array([1.0])])
    lo = max(positive.min(), 1e-6)
    hi = max(positive.max(), lo * 10)
    edges = np.logspace(np.log10(lo), np.log10(hi), bins)
    for v, label in series:
        ax.hist(np.clip(v, lo, None), bins=edges, histtype="step", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("|error| (ulp)")
    ax.set_ylabel("elements")
    ax.legend()
    return ax


def plot_error_map(data: Data, ax: Any = None, against: str = "oracle",
                   max_side: int = 512) -> Any:
    """|ULP error| over the elements as a heat map (large tensors: maxima)."""
    ax = _axes(ax)
    v, shape = _column(data, f"ulp_{against}")
    grid = _grid(np.abs(v), shape, max_side)
    im = ax.imshow(grid, aspect="auto", interpolation="nearest", cmap="magma")
    ax.figure.colorbar(im, ax=ax, label=f"|error| vs {against} (ulp)")
    ax.set_xlabel("last dimension")
    ax.set_ylabel("other dimensions, flattened")
    return ax


def plot_classes(data: Data, ax: Any = None, max_side: int = 512) -> Any:
    """The class of every element as a map (large tensors: the worst class)."""
    import matplotlib.colors as mcolors
    ax = _axes(ax)
    v, shape = _column(data, "class")
    grid = _grid(v.astype(np.float64), shape, max_side)
    colors = ["#f0f0f0", "#a6d96a", "#1a9641", "#fdae61", "#d7191c",
              "#7b3294", "#c2a5cf", "#2c7bb6", "#999999"]
    cmap = mcolors.ListedColormap(colors[:len(CLASS_NAMES)])
    im = ax.imshow(grid, aspect="auto", interpolation="nearest", cmap=cmap,
                   vmin=-0.5, vmax=len(CLASS_NAMES) - 0.5)
    bar = ax.figure.colorbar(im, ax=ax, ticks=range(len(CLASS_NAMES)))
    bar.ax.set_yticklabels(CLASS_NAMES)
    ax.set_xlabel("last dimension")
    ax.set_ylabel("other dimensions, flattened")
    return ax


def plot_budget(budget: pd.DataFrame, ax: Any = None, top: int = 12) -> Any:
    """The op error budget (``Results.budget``) as horizontal bars."""
    ax = _axes(ax)
    b = budget.head(top).iloc[::-1]
    labels = [f"{n} ({f}:{line})" if f else str(n)
              for n, f, line in zip(b["name"], b["source_file"], b["source_line"])]
    ax.barh(labels, 100.0 * b["share"].astype(float))
    ax.set_xlabel("share of the reference error (%)")
    return ax
