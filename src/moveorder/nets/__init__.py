"""The likelihood of an order of play: input planes (``features``), Leela Zero's network shape and
weights format (``networks``), P(move | position) batched and cached (``likelihood``), the device
and precision choices (``devices``), training (``train``, ``packed``) and the networks shipped with
the package (``shipped/``). Imports :mod:`moveorder.go` and :mod:`moveorder.data`."""
