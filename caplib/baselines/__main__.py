"""``python -m caplib.baselines``: provision WordNet, fetch checkpoints, print signatures."""

import sys

from caplib.baselines import main

sys.exit(main())
