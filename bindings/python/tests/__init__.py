# SPDX-License-Identifier: MIT
"""libloop's twin suite. The library is opened up front: test classes read
what was chosen when it opened (the C side's _hotpath.ENABLED) as they are
defined. That importing libloop opens nothing is checked in a child
process (test_fork.py)."""

import libloop._loader

libloop._loader.load()
