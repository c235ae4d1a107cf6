"""Figures and tables: LGM and slope metrics (``metrics``), the paper's plots (``plots``), the
summary and paper comparison (``summary``), the ablation sweeps (``sweeps``) and the cross-level
tables of networks evaluated on each other's levels (``cross_level``), the board of an order
(``diagram``), the player's answer (``answer``), and the calibration of how sure answers are, fitted
and checked (``calibration``). Imported by the page (:mod:`moveorder.serve`) and the command line."""
