import sys

from implicitbias.cli import main

sys.exit(main())
