"""``python -m benchmarks`` is ``python -m benchmarks.run``."""

from .run import main

raise SystemExit(main())
