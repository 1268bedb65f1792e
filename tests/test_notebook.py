"""The package in Jupyter, as a user meets it: a notebook that runs the Python API tour (docs/running.md)
and a tiny sweep in a real kernel (nbclient + ipykernel, ``%matplotlib inline`` as Jupyter sets it).

Asserted on the executed notebook's outputs, not on the package's own objects: every result cell
shows as a table or an equation (text/html or text/latex beside text/plain), every plot cell
shows an image (image/png), the kernel's backend is still the inline one after the package
plotted, and the user's next ``plt.plot`` draws into a figure of their own (one Axes, one line,
no image of the package's in it).  With ``matplotlib.use("Agg")`` at the package's import (the
old ``implicitbias.figures``) the images and the user's figure are what fails.  A second, fresh kernel
runs no ``%matplotlib inline`` and never touches pyplot, as a user who only imports the package does:
there no formatter for ``Figure`` is registered, and a plot must still show as one image (a plain
``matplotlib.figure.Figure`` showed as the text ``<Figure size ...>`` there).
"""

import json

import nbformat
import pytest
from nbclient import NotebookClient
from readme_blocks import RUNNING, api_block
from spec_b_records import TINY

# (cell source, what it shows): each result cell's last expression is the object shown
RESULTS = [
    "diagram",
    "cell",
    "result",
    'ib.claims()["theorem-3.1"]',
    "flow",
    "clocks",
    "ode",
    "ib.nc_metrics(features, labels)",
    "run",
    "analysis",
]
PLOTS = [
    "diagram.plot()",  # a Figure as the cell's value: IPython's PNG formatter shows it
    "fig, axes = plt.subplots(1, 3, figsize=(12, 3))\ndiagram.plot(ax=axes)\nplt.show()",  # the user's own axes
    'fig, ax = plt.subplots()\ndiagram.plot(ax=ax, panels=["rank"]);',
]
USER = """\
import json
lines = plt.plot([1, 2])
print(json.dumps({
    "backend": [backend, matplotlib.get_backend()],
    "axes": len(plt.gcf().axes),
    "lines": len(plt.gca().lines),
    "images": len(plt.gca().images),
    "own_line": plt.gca().lines[-1] is lines[0],
}))"""


def notebook() -> nbformat.NotebookNode:
    cells = [
        "%matplotlib inline\nimport matplotlib\nimport matplotlib.pyplot as plt\nbackend = matplotlib.get_backend()",
        api_block(RUNNING),
        f"run = ib.sweep({TINY!r})\nanalysis = ib.analyse(run)",
        *RESULTS,
        *PLOTS,
        USER,
    ]
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("notebook")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("MPLBACKEND", raising=False)  # the kernel starts as Jupyter's does, not as the tests' Agg
        mp.delenv("IMPLICITBIAS_STORE", raising=False)
        mp.setenv("TMPDIR", str(folder))  # the session store's temporary folder
        nb = notebook()
        NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    return {c.source: c for c in nb.cells}


def _types(cell) -> set[str]:
    return {kind for out in cell.outputs if out.output_type in ("execute_result", "display_data") for kind in out.data}


@pytest.mark.parametrize("source", RESULTS)
def test_every_result_shows_as_a_table_or_an_equation(executed, source):
    shown = _types(executed[source])
    assert "text/plain" in shown and shown & {"text/html", "text/latex"}, (source, shown)


@pytest.mark.parametrize("source", PLOTS)
def test_every_plot_shows_inline(executed, source):
    assert "image/png" in _types(executed[source]), source


def test_the_users_next_plot_is_their_own(executed):
    state = json.loads(next(o.text for o in executed[USER].outputs if o.output_type == "stream"))
    before, after = state.pop("backend")
    assert "inline" in before and after == before  # the package never changed the kernel's backend
    assert state == {"axes": 1, "lines": 1, "images": 0, "own_line": True}


def test_a_plot_shows_in_a_kernel_that_never_set_up_matplotlib(tmp_path):
    cells = ["import implicitbias as ib\ndiagram = ib.phase_diagram(K=[5, 6], L=[1, 2])", "diagram.plot()"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("MPLBACKEND", raising=False)
        mp.delenv("IMPLICITBIAS_STORE", raising=False)
        mp.setenv("TMPDIR", str(tmp_path))
        NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    shown = [out for out in nb.cells[1].outputs if out.output_type in ("execute_result", "display_data")]
    assert len(shown) == 1 and "image/png" in shown[0].data
