"""``python -m caplib.offline_nli fetch|build|evaluate`` (:func:`caplib.offline_nli.cli.main`)."""

from caplib.offline_nli.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
