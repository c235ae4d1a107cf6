"""The page: ``moveorder serve``, a local web page over the one-position tool and a results folder.

jobs: the searches, one at a time in a worker thread, with their queue, progress and cancelling;
runs: a results folder's inference runs and their tables, read only from that folder;
app: the FastAPI application (the API and the page's files, ``static/``), which ``moveorder serve``
runs on uvicorn.
"""
