"""Game records in, evaluation sets out: downloads with checksums (``download``), archives unpacked
(``archives``), SGF and Tygem records read and qualified (``records``, ``tygem``), and the
arrangements the search orders, the evaluation games clipped to n moves (``arrangements``).
Imports only :mod:`moveorder.go` and :mod:`moveorder.settings`."""
