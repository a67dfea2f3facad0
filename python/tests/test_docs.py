"""docs/python.md's examples run: every ```python block of the page, in
order, in one namespace, from the checkout's root (the paths they name)."""
from __future__ import annotations

import os
import re

import matplotlib.pyplot as plt

import ulpscope  # noqa: F401  (loaded before the chdir below)


def test_python_md_examples_run(root, capsys):
    text = (root / "docs" / "python.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    assert len(blocks) >= 5
    here = os.getcwd()
    os.chdir(root)
    try:
        namespace: dict = {"__name__": "docs_python_md"}
        for i, code in enumerate(blocks):
            exec(compile(code, f"docs/python.md block {i + 1}", "exec"), namespace)
    finally:
        os.chdir(here)
        plt.close("all")
    printed = capsys.readouterr().out
    assert "defect" in printed and "legit" in printed
