"""CI's check of the main job's output: report.md has a row for every claim and no `error` row.

    python .ci/check_report.py REPORT_MD

Reads the claims table (the first Markdown table after "## Claims"), finds its `claim` and
`verdict` columns by their headers, and compares the claim ids with the package's registry.
"""

import re
import sys
from pathlib import Path

from implicitbias.claims import registry


def cells(line: str) -> list[str]:
    """The cells of a Markdown table row (a ``\\|`` inside a cell is text, not a border)."""
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip()[1:-1])]


def claims_table(text: str) -> list[dict[str, str]]:
    lines = text[text.index("## Claims"):].splitlines()
    rows = lines[next(i for i, line in enumerate(lines) if line.startswith("|")):]
    rows = rows[: next((i for i, line in enumerate(rows) if not line.startswith("|")), len(rows))]
    header = cells(rows[0])
    return [dict(zip(header, cells(row))) for row in rows[2:]]


def main(path: str) -> int:
    rows = claims_table(Path(path).read_text())
    names = [row["claim"] for row in rows]  # a claim judged on several data sets is "ID (label)"
    missing = [i for i in registry() if not any(n == i or n.startswith(f"{i} (") for n in names)]
    errors = [row["claim"] for row in rows if row["verdict"] == "error"]
    print(f"{path}: {len(rows)} rows for {len(registry()) - len(missing)} of {len(registry())} claims; "
          f"verdicts: {', '.join(sorted({row['verdict'] for row in rows}))}")
    if missing or errors:
        print(f"missing claims: {missing or 'none'}; error rows: {errors or 'none'}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
