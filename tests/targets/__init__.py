"""The lab's switch targets: each module stands for one NOS's management plane (see its docstring).

A regular package, imported as ``targets`` with tests/ first on sys.path (pytest puts it there; the lab's
launchers and ``python tests/lab.py`` do too). tests/ itself is not a package, and must not be named in an
import: a namespace package loses to any regular ``tests`` package a dependency installs (textfsm 2.1.1 ships
one), wherever that sits on sys.path.
"""
