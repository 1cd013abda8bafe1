"""``python -m memsift`` runs the demo (see :mod:`memsift.demo`)."""

from memsift.demo import main

raise SystemExit(main())
