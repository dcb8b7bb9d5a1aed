import sys

from rtgate.cli import main

sys.exit(main())
