"""The game of Go itself: coordinates in every convention the package meets (``coords``) and a
board that plays moves with captures and ko (``board``). Nothing here imports torch or any other
stage of the package."""
