"""moveorder: infer the order in which the stones of a Go position were played.

Reproduces Hsueh & Ikeda, "Can We Infer Move Sequences in Go from Stone
Arrangements?" (ACG 2023): a human-move policy network gives the likelihood of
a sequence, and simulated annealing searches the orders of the given stones.
"""

__version__ = "0.1.0"
