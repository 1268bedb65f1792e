"""The README's code blocks as the tests run them (one extraction, shared by the script test and
the notebook test)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def api_block() -> str:
    """The first ```python block after the heading "## Python API"."""
    text = README.read_text()
    section = text.split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```python\n(.*?)^```$", section, flags=re.S | re.M)
    assert blocks, "the Python API section has no python block"
    return blocks[0]
