"""The Python API blocks as the tests run them (one extraction, shared by the script test and the
notebook test): the README's short example, and the longer tour that moved with the reference to
the documentation page *What you can run* (``docs/running.md``)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
RUNNING = ROOT / "docs" / "running.md"


def api_block(path: Path = README) -> str:
    """The first ```python block after the heading "## Python API" of ``path``."""
    text = path.read_text()
    section = text.split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```python\n(.*?)^```$", section, flags=re.S | re.M)
    assert blocks, f"the Python API section of {path.name} has no python block"
    return blocks[0]
