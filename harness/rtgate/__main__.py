# SPDX-License-Identifier: GPL-2.0-or-later
import sys

from rtgate.console import main

sys.exit(main())
