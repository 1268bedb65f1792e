"""The results store: SQLite, keyed by a stable hash of a cell's or run's canonical config.

What it guarantees, and where each guarantee is kept:

- **A record per config, of the code that made it.**  A record is identified by ``(kind, config)``;
  its key is the SHA-256 of the canonical JSON of both, so a rerun returns the stored record
  instead of recomputing it (``records``).  Beside it the row keeps the fingerprint of the code
  that computed it (``implicitbias.fingerprint``); a record is served only to a caller whose code
  has the same fingerprint, so a record made by older code counts as missing and is recomputed
  (``facade``).
- **Nothing completed lost or repeated.**  Each write is its own committed transaction (WAL
  journal), and a sweep stores each cell the moment it completes, so a sweep killed at any point
  resumes where it stopped (``scheduler``).
- **No cell computed twice at once.**  A cell is computed only under its lease, renewed by a
  heartbeat; a dead holder's cells are taken over, at once when it was a process of this host that
  no longer exists (``leases``).
- **Files as users leave them.**  A folder, a file that is not SQLite, a truncated or corrupt file
  and another program's database are refused in one line and left untouched; a store of this
  package carries a schema marker, and one from before markers is upgraded in one transaction;
  what a full disk leaves is recovered; a read-only store serves what it holds (``paths``,
  ``files``, ``schema``).
- **Damaged records never served.**  A record that is not the JSON written (its digest no longer
  matches) or whose config is not the one its key was made from counts as missing (``records``).

Modules: ``paths`` (where the file is), ``files`` (the file before SQLite, the connection),
``schema`` (tables, marker, upgrades), ``records`` (keys, canonical JSON, digests), ``leases``,
``scheduler`` (``Store.map``'s steps), ``inspection`` (tables of what a store holds, pruning),
``errors``, and ``facade`` (``Store``, which ties them together).  Only the client process writes
(workers return records, the client stores them).
"""

from implicitbias.store.errors import CellError, Interrupted, StoreError
from implicitbias.store.facade import Store
from implicitbias.store.inspection import EXPORT_FORMATS, StoredRecord, StoreInspection
from implicitbias.store.paths import MAX_PATH_BYTES, check_creatable, check_store_path, default_store_path
from implicitbias.store.records import canonical_json, config_key
from implicitbias.store.schema import APPLICATION_ID, SCHEMA_VERSION

__all__ = ["Store", "StoreError", "CellError", "Interrupted", "config_key", "default_store_path", "canonical_json",
           "check_creatable", "check_store_path", "MAX_PATH_BYTES", "APPLICATION_ID", "SCHEMA_VERSION",
           "StoreInspection", "StoredRecord", "EXPORT_FORMATS"]
