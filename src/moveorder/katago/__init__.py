"""The judge: KataGo installed from the katrain wheel (``install``), its analysis engine driven
over JSON (``engine``), the loss of a move (``loss``) and the scoring of actual and inferred
sequences (``scoring``). Imports the stages below it (:mod:`moveorder.search` for result files)."""
