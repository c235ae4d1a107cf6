"""The order of play: the paper's simulated annealing (``anneal``), the ranked beam (``beam``), the
exact solver (``exact``), the capture-aware beam (``captures``), how sure an answer is
(``confidence``), and the inference of whole sets and of one position (``inference``). Imports
:mod:`moveorder.go`, :mod:`moveorder.data` and :mod:`moveorder.nets`."""
