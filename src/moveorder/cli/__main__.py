import sys

from moveorder.cli import main

sys.exit(main())
