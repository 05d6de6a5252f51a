"""`python -m fabricgen`: the same command line as the `fabricgen` script."""

from fabricgen.cli import run

run()
