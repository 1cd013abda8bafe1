"""``python -m memsift`` is the ``memsift`` command (see :mod:`memsift.tools.cli`)."""

from memsift.tools.cli import main

raise SystemExit(main())
