"""`python -m dice_engine` is the `dice` command."""
import sys

from .cli import main

sys.exit(main())
