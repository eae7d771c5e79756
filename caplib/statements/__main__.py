"""``python -m caplib.statements train|evaluate``."""

from caplib.statements.cli import main

raise SystemExit(main())
