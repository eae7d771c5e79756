"""``python -m caplib``: the ``caplib`` command line (caplib.cli)."""

from caplib.cli import main

raise SystemExit(main())
