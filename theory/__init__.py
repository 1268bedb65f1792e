"""Symbolic layer (sympy in, sympy out, plus lambdified callables). Imports nothing above it."""
