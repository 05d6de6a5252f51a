from fabricgen.cli import run

run()
