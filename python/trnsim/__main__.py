"""python3 -m trnsim run|profile FILE.py:FUNCTION ... (trnsim/cli.py)."""

from trnsim.cli import main

raise SystemExit(main())
