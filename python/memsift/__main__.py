"""``python -m memsift`` is the ``memsift`` command (see :mod:`memsift.cli`)."""

from memsift.cli import main

raise SystemExit(main())
