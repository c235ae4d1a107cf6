"""Figures and tables: LGM and slope metrics (``metrics``), the paper's plots (``plots``), the
summary and paper comparison (``summary``), the ablation sweeps (``sweeps``) and the cross-level
tables of networks evaluated on each other's levels (``cross_level``). The top stage: nothing but
the command line imports it."""
