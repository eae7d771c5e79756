"""``python -m caplib.calibration offline|show`` (:func:`caplib.calibration.shipped.main`)."""

from caplib.calibration.shipped import main

if __name__ == "__main__":
    raise SystemExit(main())
